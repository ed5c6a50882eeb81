//! What the operating system says about this machine: total memory, CPU model and cores,
//! last-level cache, NVIDIA GPUs (nvidia-smi), load. Each reader is a pure parser over the
//! text the OS gives, plus a thin function that fetches that text.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Total memory as the OS reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFigure {
    /// Exact bytes.
    pub bytes: u64,
    /// Where the figure was read.
    pub method: String,
}

/// The processor.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuFigure {
    /// Model name ("AMD EPYC 9B45"), when the OS tells.
    pub model: Option<String>,
    /// Logical CPUs the process may use.
    pub logical: usize,
    /// Physical cores, when the OS tells.
    pub physical: Option<usize>,
    /// Last-level cache, bytes, when the OS tells.
    pub last_level_cache_bytes: Option<u64>,
    /// Where the figures were read.
    pub method: String,
}

/// One GPU as nvidia-smi lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFigure {
    /// Index in nvidia-smi's order.
    pub index: usize,
    /// Name ("NVIDIA H200").
    pub name: String,
    /// memory.total in bytes (nvidia-smi reports MiB).
    pub memory_bytes: u64,
}

/// How busy the machine was before the measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFigure {
    /// One-minute load average, when the OS tells.
    pub load_average: Option<f64>,
    /// Fraction of all CPU time spent busy over a short sample (Linux /proc/stat), 0–1.
    pub busy_fraction: Option<f64>,
    /// Logical CPUs.
    pub logical_cpus: usize,
    /// Other runnable tasks at the start (`procs_running` of /proc/stat less this one), Linux.
    pub runnable_others: Option<u32>,
}

/// A load average above this many runnable tasks per logical CPU marks the machine busy.
pub const BUSY_LOAD_PER_CPU: f64 = 0.5;
/// A share of all CPU time used by other processes above this marks the machine busy.
pub const BUSY_FRACTION: f64 = 0.10;

impl LoadFigure {
    /// Reasons the machine looks busy (empty when quiet).
    pub fn busy_reasons(&self) -> Vec<String> {
        let mut v = Vec::new();
        let n = self.logical_cpus.max(1) as f64;
        if let Some(l) = self.load_average
            && l / n > BUSY_LOAD_PER_CPU
        {
            v.push(format!(
                "the 1-minute load average is {l:.2} on {} logical CPUs (above {BUSY_LOAD_PER_CPU} per CPU)",
                self.logical_cpus
            ));
        }
        if let Some(r) = self.runnable_others
            && f64::from(r) / n > BUSY_LOAD_PER_CPU
        {
            v.push(format!(
                "{r} other tasks were runnable on {} logical CPUs (above {BUSY_LOAD_PER_CPU} per CPU)",
                self.logical_cpus
            ));
        }
        if let Some(b) = self.busy_fraction
            && b > BUSY_FRACTION
        {
            v.push(format!(
                "other processes used {:.0}% of the CPU time just before the measurement",
                b * 100.0
            ));
        }
        v
    }
}

/// `MemTotal:  24567890 kB` → bytes (the kernel's kB are 1024 bytes).
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut it = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some("kB") | None => n.checked_mul(1024),
        _ => None,
    }
}

/// Model name, logical CPUs and physical cores from /proc/cpuinfo.
pub fn parse_cpuinfo(text: &str) -> (Option<String>, usize, Option<usize>) {
    let mut model = None;
    let mut logical = 0usize;
    let mut cores = std::collections::HashSet::new();
    let (mut phys, mut core) = (None::<String>, None::<String>);
    let field = |l: &str| l.split_once(':').map(|(_, v)| v.trim().to_string());
    for l in text.lines().chain(std::iter::once("")) {
        if l.trim().is_empty() {
            if let (Some(p), Some(c)) = (phys.take(), core.take()) {
                cores.insert((p, c));
            }
            continue;
        }
        let key = l.split(':').next().unwrap_or("").trim();
        match key {
            "processor" => logical += 1,
            "model name" | "Model Name" | "cpu model" if model.is_none() => {
                model = field(l).filter(|m| !m.is_empty())
            }
            "physical id" => phys = field(l),
            "core id" => core = field(l),
            _ => {}
        }
    }
    (model, logical, (!cores.is_empty()).then_some(cores.len()))
}

/// `Model name:   AMD EPYC` from lscpu's output.
pub fn parse_lscpu_model(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.trim_start().starts_with("Model name:"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty() && v != "-")
}

/// A cache size as sysfs writes it: `32768K`, `2M`, `512`.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// The first field of /proc/loadavg (Linux) or `vm.loadavg` (`{ 1.23 1.10 1.05 }`, macOS).
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace()
        .find(|t| *t != "{")
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0)
}

/// (busy, total) jiffies from the aggregate `cpu` line of /proc/stat (idle and iowait are not busy).
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 4 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest counted in user).
    let total: u64 = v.iter().take(8).sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// `procs_running N` of /proc/stat: tasks runnable at this moment (the reader included).
pub fn parse_procs_running(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|l| l.strip_prefix("procs_running"))
        .and_then(|v| v.trim().parse().ok())
}

/// utime + stime (clock ticks) of `/proc/<pid>/stat`; the command name may hold spaces and
/// parentheses, so fields are counted after the last `)`.
pub fn parse_self_stat(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid(4) ... utime(14) stime(15) → indices 11 and 12.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// CPU time counters at one moment (Linux): all CPUs' busy and total ticks, and this
/// process's own ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    /// Busy ticks over all CPUs.
    pub busy: u64,
    /// All ticks over all CPUs.
    pub total: u64,
    /// This process's user + system ticks.
    pub own: u64,
}

impl CpuTimes {
    /// Read the counters (None where /proc is absent).
    pub fn now() -> Option<CpuTimes> {
        let (busy, total) = parse_proc_stat(&read("/proc/stat")?)?;
        let own = parse_self_stat(&read("/proc/self/stat")?)?;
        Some(CpuTimes { busy, total, own })
    }

    /// Share of all CPU time that other processes used between `self` and `later`, 0–1.
    pub fn others_since(&self, later: &CpuTimes) -> Option<f64> {
        let dt = later.total.checked_sub(self.total).filter(|d| *d > 0)?;
        let busy = later.busy.saturating_sub(self.busy);
        let own = later.own.saturating_sub(self.own);
        Some((busy.saturating_sub(own) as f64 / dt as f64).clamp(0.0, 1.0))
    }
}

/// The CPU runs under a hypervisor (`hypervisor` in /proc/cpuinfo's flags).
pub fn parse_hypervisor(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
}

/// This machine is a virtual machine, as far as the OS tells.
pub fn virtual_machine() -> bool {
    read("/proc/cpuinfo").is_some_and(|t| parse_hypervisor(&t))
}

/// `NVIDIA H200, 143771` lines from
/// `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits` (MiB).
pub fn parse_nvidia_smi(text: &str) -> Vec<GpuFigure> {
    text.lines()
        .filter_map(|l| {
            let (name, mib) = l.rsplit_once(',')?;
            let mib: u64 = mib.trim().parse().ok()?;
            let name = name.trim();
            (!name.is_empty() && mib > 0).then(|| (name.to_string(), mib))
        })
        .enumerate()
        .map(|(index, (name, mib))| GpuFigure {
            index,
            name,
            memory_bytes: mib << 20,
        })
        .collect()
}

/// Run a command with a time limit; its stdout when it exits with success.
pub fn run(cmd: &str, args: &[&str], limit: Duration) -> Option<String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    return None;
                }
                let mut out = String::new();
                let mut stdout = child.stdout.take()?;
                std::io::Read::read_to_string(&mut stdout, &mut out).ok()?;
                return Some(out);
            }
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Why the total memory could not be read from the OS.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// `/proc/meminfo` without a MemTotal line that parses.
    #[error("/proc/meminfo has no readable MemTotal line")]
    NoMemTotal,
    /// `sysctl hw.memsize` gave something that is not a byte count.
    #[error("sysctl hw.memsize gave \"{0}\"")]
    BadMemsize(String),
    /// Neither source exists.
    #[error("neither /proc/meminfo nor sysctl hw.memsize is available on this system")]
    Unavailable,
}

/// Total memory from the OS.
pub fn memory() -> Result<MemoryFigure, MemoryError> {
    if let Some(t) = read("/proc/meminfo") {
        return parse_meminfo_total(&t)
            .map(|bytes| MemoryFigure {
                bytes,
                method: "/proc/meminfo MemTotal (kB of 1024 bytes): the RAM the kernel manages, less than the installed DIMMs by the firmware's and kernel's reservations".into(),
            })
            .ok_or(MemoryError::NoMemTotal);
    }
    if let Some(t) = run("sysctl", &["-n", "hw.memsize"], Duration::from_secs(5)) {
        return t
            .trim()
            .parse::<u64>()
            .map(|bytes| MemoryFigure {
                bytes,
                method: "sysctl -n hw.memsize (bytes)".into(),
            })
            .map_err(|_| MemoryError::BadMemsize(t.trim().to_string()));
    }
    Err(MemoryError::Unavailable)
}

fn last_level_cache() -> Option<u64> {
    let base = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, u64)> = None;
    for i in 0..8 {
        let dir = base.join(format!("index{i}"));
        let (Ok(level), Ok(size)) = (
            std::fs::read_to_string(dir.join("level")),
            std::fs::read_to_string(dir.join("size")),
        ) else {
            continue;
        };
        let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_cache_size(&size)) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, size));
        }
    }
    best.map(|(_, s)| s).or_else(|| {
        run("sysctl", &["-n", "hw.l3cachesize"], Duration::from_secs(5))
            .or_else(|| run("sysctl", &["-n", "hw.l2cachesize"], Duration::from_secs(5)))
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|x| *x > 0)
    })
}

/// The processor: model, logical CPUs, physical cores, last-level cache.
pub fn cpu() -> CpuFigure {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut methods = vec!["std::thread::available_parallelism".to_string()];
    let (mut model, mut physical) = (None, None);
    if let Some(t) = read("/proc/cpuinfo") {
        let (m, _, p) = parse_cpuinfo(&t);
        model = m;
        physical = p;
        methods.push("/proc/cpuinfo".into());
    }
    if model.is_none()
        && let Some(m) =
            run("lscpu", &[], Duration::from_secs(5)).and_then(|t| parse_lscpu_model(&t))
    {
        model = Some(m);
        methods.push("lscpu".into());
    }
    if model.is_none()
        && let Some(m) = run(
            "sysctl",
            &["-n", "machdep.cpu.brand_string"],
            Duration::from_secs(5),
        )
    {
        model = Some(m.trim().to_string()).filter(|m| !m.is_empty());
        physical = run("sysctl", &["-n", "hw.physicalcpu"], Duration::from_secs(5))
            .and_then(|t| t.trim().parse().ok());
        methods.push("sysctl machdep.cpu.brand_string, hw.physicalcpu".into());
    }
    let llc = last_level_cache();
    CpuFigure {
        model,
        logical,
        physical,
        last_level_cache_bytes: llc,
        method: methods.join(", "),
    }
}

/// NVIDIA GPUs, when nvidia-smi is installed and answers.
pub fn nvidia_gpus() -> Vec<GpuFigure> {
    run(
        "nvidia-smi",
        &[
            "--query-gpu=name,memory.total",
            "--format=csv,noheader,nounits",
        ],
        Duration::from_secs(10),
    )
    .map(|t| parse_nvidia_smi(&t))
    .unwrap_or_default()
}

/// The load before measuring: the load average and, on Linux, the busy share of CPU time
/// over `sample` (this process sleeps meanwhile, so the busy time is other processes').
pub fn load(sample: Duration) -> LoadFigure {
    let logical_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load_average = read("/proc/loadavg")
        .or_else(|| run("sysctl", &["-n", "vm.loadavg"], Duration::from_secs(5)))
        .and_then(|t| parse_loadavg(&t));
    let runnable_others = read("/proc/stat")
        .and_then(|t| parse_procs_running(&t))
        .map(|n| n.saturating_sub(1));
    let busy_fraction = CpuTimes::now().and_then(|t0| {
        std::thread::sleep(sample);
        t0.others_since(&CpuTimes::now()?)
    });
    LoadFigure {
        load_average,
        busy_fraction,
        logical_cpus,
        runnable_others,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo() {
        let t = "MemTotal:       24567892 kB\nMemFree:        1000 kB\n";
        assert_eq!(parse_meminfo_total(t), Some(24_567_892 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB"), None);
        assert_eq!(parse_meminfo_total("MemTotal: x kB"), None);
    }

    #[test]
    fn cpuinfo() {
        let t = "processor\t: 0\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t: 0\n\n\
                 processor\t: 1\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t: 1\n\n\
                 processor\t: 2\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t: 1\n";
        assert_eq!(parse_cpuinfo(t), (Some("AMD EPYC".into()), 3, Some(2)));
        assert_eq!(parse_cpuinfo("processor: 0\n"), (None, 1, None));
    }

    #[test]
    fn lscpu_and_cache() {
        assert_eq!(
            parse_lscpu_model("Vendor ID: AuthenticAMD\nModel name:     AMD EPYC\n"),
            Some("AMD EPYC".into())
        );
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("lots"), None);
    }

    #[test]
    fn load_parsers() {
        assert_eq!(parse_loadavg("0.52 0.40 0.31 1/234 5678\n"), Some(0.52));
        assert_eq!(parse_loadavg("{ 1.23 1.10 1.05 }\n"), Some(1.23));
        assert_eq!(
            parse_proc_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1"),
            Some((150, 1000))
        );
        let busy = LoadFigure {
            load_average: Some(1.5),
            busy_fraction: Some(0.6),
            logical_cpus: 2,
            runnable_others: Some(3),
        };
        assert_eq!(busy.busy_reasons().len(), 3);
        assert_eq!(
            parse_procs_running("cpu  1 2 3 4\nprocs_running 4\nprocs_blocked 0\n"),
            Some(4)
        );
        let quiet = LoadFigure {
            load_average: Some(0.2),
            busy_fraction: Some(0.02),
            logical_cpus: 2,
            runnable_others: Some(0),
        };
        assert!(quiet.busy_reasons().is_empty());
    }

    #[test]
    fn nvidia_smi() {
        let g = parse_nvidia_smi("NVIDIA H200, 143771\nNVIDIA GeForce RTX 4090, 24564\n\n");
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name, "NVIDIA H200");
        assert_eq!(g[0].memory_bytes, 150_754_820_096);
        assert_eq!(g[1].index, 1);
        assert!(parse_nvidia_smi("No devices were found\n").is_empty());
    }
}
