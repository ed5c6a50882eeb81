//! A machine profile of the machine llmbound runs on: total memory and processor from the
//! OS, NVIDIA GPUs from nvidia-smi (with a vendor bandwidth only for names it knows exactly),
//! and a measured sustained read bandwidth of system memory, each figure with its provenance,
//! date and method. Writes a `profile::file::MachineFile`; never touches the terminal.
//!
//! Flow: `detect(Mode, progress)` → `Detected`; `Detected::machine_file(id)` →
//! `MachineFile`; `save(&detected, id, overwrite)` writes it atomically to the user's profile
//! directory (`profile::load::save`).
//! Depends on: core, profile.

pub mod bandwidth;
pub mod peak;
pub mod specs;
pub mod system;

use crate::core::scenario::TierKind;
use crate::core::units::{self, BytesPerSec, GIB, MIB, Provenance};
use crate::profile::ProfileError;
use crate::profile::file::{
    Figure, MachineFile, ProvenanceLabel, RateValue, RawNumber, SizeValue, TierFile, TierKindLabel,
};
use crate::profile::load;
use bandwidth::{BandwidthRun, Plan};
use specs::SpecBandwidth;
use std::path::{Path, PathBuf};
use std::time::Duration;
use system::{CpuFigure, GpuFigure, LoadFigure, MemoryFigure};

/// How long to measure: time traded for confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 256 MiB read 3 times (well under a second on a desktop).
    Quick,
    /// 1 GiB read 5 times (a few seconds at most).
    Normal,
    /// 2 GiB read 10 times.
    Thorough,
}

impl Mode {
    /// `quick`, `normal` or `thorough`.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Quick => "quick",
            Mode::Normal => "normal",
            Mode::Thorough => "thorough",
        }
    }

    /// (bytes read per repetition, repetitions).
    pub fn plan(self) -> (u64, u32) {
        match self {
            Mode::Quick => (256 * MIB, 3),
            Mode::Normal => (GIB, 5),
            Mode::Thorough => (2 * GIB, 10),
        }
    }
}

/// Everything `detect` can be told; `DetectOptions::from(mode)` gives the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectOptions {
    /// The mode (recorded in the method text).
    pub mode: Mode,
    /// Bytes read per repetition over all threads. The mode's size is raised to 8× the
    /// last-level cache when that is larger, and capped at a quarter of the memory.
    pub buffer_bytes: u64,
    /// Timed repetitions per run.
    pub repetitions: u32,
    /// Separate runs (each with its own warm-up, a pause between them); the best repetition
    /// over all runs is kept, so a burst of other work in one run does not set the figure.
    pub runs: u32,
    /// Reading threads (default: every logical CPU).
    pub threads: Option<usize>,
    /// Ask nvidia-smi for GPUs.
    pub query_gpus: bool,
    /// How long to sample other processes' CPU use before measuring.
    pub load_sample: Duration,
    /// Take the buffer size as given (no raising to 8× the cache, no cap): for tests.
    pub exact_buffer: bool,
}

impl From<Mode> for DetectOptions {
    fn from(mode: Mode) -> Self {
        let (buffer_bytes, repetitions) = mode.plan();
        DetectOptions {
            mode,
            buffer_bytes,
            repetitions,
            runs: if mode == Mode::Quick { 2 } else { 3 },
            threads: None,
            query_gpus: true,
            load_sample: Duration::from_millis(250),
            exact_buffer: false,
        }
    }
}

/// The vendor bandwidth found for a named part.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuDetected {
    /// What nvidia-smi reported.
    pub gpu: GpuFigure,
    /// The vendor figure, when the name is in the built-in table.
    pub spec: Option<&'static SpecBandwidth>,
}

/// What `detect` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// Date of the measurement, YYYY-MM-DD (UTC).
    pub date: String,
    /// The options used.
    pub options: DetectOptions,
    /// Total memory.
    pub memory: MemoryFigure,
    /// The processor.
    pub cpu: CpuFigure,
    /// Apple silicon: the system memory is unified, and this is its vendor figure if known.
    pub apple: Option<AppleChip>,
    /// NVIDIA GPUs.
    pub gpus: Vec<GpuDetected>,
    /// Load before measuring.
    pub load: LoadFigure,
    /// Share of all CPU time other processes used while the bandwidth was measured (Linux).
    pub others_during: Option<f64>,
    /// The bandwidth measurement (the best of `options.runs` runs).
    pub bandwidth: BandwidthRun,
    /// The memory's peak bandwidth (a SoC's figure, or derived from the memory devices), when
    /// known: it becomes the host tier's bandwidth and the measurement its measured-bandwidth.
    pub peak: Option<peak::PeakBandwidth>,
    /// Reasons the figure may not be an upper bound (busy machine, debug build, small buffer).
    pub warnings: Vec<String>,
    /// What was not detected, and what to add by hand (see also `all_notes`).
    pub notes: Vec<String>,
}

/// An Apple silicon chip.
#[derive(Debug, Clone, PartialEq)]
pub struct AppleChip {
    /// Brand string ("Apple M4 Pro").
    pub name: String,
    /// Apple's bandwidth, when the name identifies it.
    pub spec: Option<&'static SpecBandwidth>,
}

/// Why no profile could be made.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DetectError {
    /// The total memory could not be read.
    #[error("cannot read the total memory: {0}")]
    Memory(#[from] system::MemoryError),
    /// The bandwidth test failed.
    #[error(transparent)]
    Bandwidth(#[from] bandwidth::BandwidthError),
    /// Saving failed, or the profile did not validate.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// No user profile directory on this platform.
    #[error("no profile directory: set LLMBOUND_CONFIG_DIR")]
    NoProfileDir,
    /// `--save` on a busy machine without `--force`.
    #[error(
        "not saved: the machine was busy ({0}), and a bandwidth measured under contention is not an upper bound; measure again on a quiet machine, or pass --force to save it anyway"
    )]
    Busy(String),
}

/// The id `save` uses when the caller has none.
pub const DEFAULT_ID: &str = "this-machine";

/// (year, month, day) of a Unix time, UTC (civil-from-days, proleptic Gregorian).
pub fn civil_date(unix_seconds: u64) -> (i64, u32, u32) {
    let z = (unix_seconds / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Today's date, YYYY-MM-DD (UTC).
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_date(secs);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Detect this machine with a mode's defaults.
pub fn detect(mode: Mode, progress: &mut dyn FnMut(f64, &str)) -> Result<Detected, DetectError> {
    detect_with(&DetectOptions::from(mode), progress)
}

fn gb(bytes_per_second: f64) -> String {
    units::fmt_bandwidth(BytesPerSec(bytes_per_second))
}

/// Detect this machine. `progress(fraction 0–1, what)` is called as it goes.
pub fn detect_with(
    opts: &DetectOptions,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<Detected, DetectError> {
    let date = today();
    progress(0.0, "reading the total memory");
    let memory = system::memory()?;
    progress(0.02, "reading the processor");
    let cpu = system::cpu();
    let apple = cpu
        .model
        .as_deref()
        .filter(|m| m.starts_with("Apple M"))
        .map(|m| AppleChip {
            name: m.to_string(),
            spec: specs::lookup(specs::APPLE, m),
        });
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    progress(0.04, "looking for NVIDIA GPUs");
    let gpus: Vec<GpuDetected> = if opts.query_gpus {
        system::nvidia_gpus()
            .into_iter()
            .map(|gpu| GpuDetected {
                spec: specs::lookup(specs::NVIDIA, &gpu.name),
                gpu,
            })
            .collect()
    } else {
        Vec::new()
    };
    if opts.query_gpus && gpus.is_empty() {
        notes.push("no NVIDIA GPU answered nvidia-smi; other GPUs (AMD, Intel) are not detected: add them by hand".into());
    }
    progress(0.06, "checking that the machine is quiet");
    let load = system::load(opts.load_sample);
    let busy = load.busy_reasons();
    if !busy.is_empty() {
        warnings.push(format!(
            "the machine was busy ({}): a bandwidth measured under contention is not an upper bound; measure again on a quiet machine",
            busy.join("; ")
        ));
    }
    let threads = opts.threads.unwrap_or(cpu.logical).max(1);
    let mut buffer = opts.buffer_bytes.max(8 * threads as u64 * 8);
    if !opts.exact_buffer {
        if let Some(llc) = cpu.last_level_cache_bytes {
            buffer = buffer.max(llc.saturating_mul(8));
        }
        buffer = buffer
            .min(memory.bytes / 4)
            .max(64 * MIB.min(memory.bytes / 4));
    }
    if let Some(llc) = cpu.last_level_cache_bytes
        && buffer < llc.saturating_mul(4)
    {
        warnings.push(format!(
            "the buffer ({}) is less than 4× the last-level cache ({}): part of it can be served from cache, which inflates the figure",
            units::exact_binary(buffer),
            units::exact_binary(llc)
        ));
    }
    let plan = Plan {
        buffer_bytes: buffer,
        repetitions: opts.repetitions.max(1),
        threads,
    };
    let runs = opts.runs.max(1);
    let before = system::CpuTimes::now();
    let mut all = Vec::with_capacity(runs as usize);
    for k in 0..runs {
        if k > 0 {
            // A pause lets a burst of other work pass before the next run.
            std::thread::sleep(Duration::from_millis(200));
        }
        let (lo, span) = (0.1 + 0.85 * k as f64 / runs as f64, 0.85 / runs as f64);
        let mut sub = |f: f64, what: &str| {
            progress(lo + span * f, &format!("run {} of {runs}: {what}", k + 1))
        };
        all.push(bandwidth::measure(plan, &mut sub)?);
    }
    let during = before.and_then(|b| b.others_since(&system::CpuTimes::now()?));
    let run = bandwidth::best_of(all)
        .ok_or_else(|| bandwidth::BandwidthError::Thread("no run completed".into()))?;
    progress(0.96, "looking for the memory's peak bandwidth");
    let peak = if apple.as_ref().is_some_and(|a| a.spec.is_some()) {
        None
    } else {
        let (p, note) = peak::detect_peak(cpu.model.as_deref());
        if !note.is_empty() {
            notes.push(note);
        }
        p
    };
    if let Some(o) = during
        && o > system::BUSY_FRACTION
    {
        warnings.push(format!(
            "other processes used {:.0}% of the CPU time while the bandwidth was measured: a figure measured under contention is not an upper bound; measure again on a quiet machine",
            o * 100.0
        ));
    }
    if system::virtual_machine() {
        notes.push(
            "this is a virtual machine: other guests on the same host share its memory bandwidth without showing in its load, so measure at several quiet times and keep the highest figure".into(),
        );
    }
    if run.unoptimized_build {
        warnings.push(
            "this is a debug build (debug assertions on): unless it was also built with optimisation, the reading loop is not bandwidth-bound and the figure is far below the memory's bandwidth; use a release build"
                .into(),
        );
    }
    let spread = if run.best > 0.0 {
        (run.best - run.worst) / run.best
    } else {
        0.0
    };
    if spread > 0.15 {
        warnings.push(format!(
            "the repetitions differ by {:.0}% (best {}, worst {}): something else used the memory; the best is kept, but measure again on a quiet machine",
            spread * 100.0,
            gb(run.best),
            gb(run.worst)
        ));
    }
    if peak.is_none() {
        notes.push(format!(
            "the host bandwidth is a measured read rate, which a runtime can exceed only with a better kernel; the DRAM's peak (channels × 8 bytes × transfer rate, provenance \"derived\") can be added as bandwidth and this figure kept as measured-bandwidth (with {threads} threads; other thread counts read at other rates)"
        ));
    }
    progress(1.0, "done");
    Ok(Detected {
        date,
        options: opts.clone(),
        memory,
        cpu,
        apple,
        gpus,
        load,
        others_during: during,
        bandwidth: run,
        peak,
        warnings,
        notes,
    })
}

fn size_figure(
    bytes: u64,
    provenance: Provenance,
    date: Option<&str>,
    method: &str,
    source: &str,
) -> Figure<SizeValue> {
    Figure {
        value: SizeValue {
            value: bytes,
            raw: RawNumber::Int(i64::try_from(bytes).unwrap_or(i64::MAX)),
        },
        provenance: ProvenanceLabel(provenance),
        source: source.into(),
        date: date.map(str::to_string),
        method: (!method.is_empty()).then(|| method.to_string()),
    }
}

fn rate_figure(
    text: &str,
    provenance: Provenance,
    date: Option<&str>,
    method: &str,
    source: &str,
) -> Figure<RateValue> {
    Figure {
        value: RateValue {
            value: units::parse_bandwidth(text).unwrap_or(BytesPerSec(0.0)),
            raw: RawNumber::Text(text.into()),
        },
        provenance: ProvenanceLabel(provenance),
        source: source.into(),
        date: date.map(str::to_string),
        method: (!method.is_empty()).then(|| method.to_string()),
    }
}

/// Round a bandwidth up to 0.01 GB/s (a ceiling input errs high) and write it with its unit.
pub fn round_up_gb(bytes_per_second: f64) -> String {
    let hundredths = (bytes_per_second / 1e7).ceil();
    format!("{:.2} GB/s", hundredths / 100.0)
}

impl Detected {
    /// `notes` plus what the GPUs and the chip found imply: a GPU without a known vendor
    /// bandwidth gets no tier, an Apple chip without one keeps only the CPU read figure.
    pub fn all_notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        for g in self.gpus.iter().filter(|g| g.spec.is_none()) {
            v.push(format!(
                "GPU {} \"{}\" ({} of memory) has no vendor bandwidth in llmbound's table, so it has no tier here: add a [[tier]] with kind = \"accelerator\", its capacity and its datasheet bandwidth (provenance \"spec\") by hand",
                g.gpu.index,
                g.gpu.name,
                units::fmt_both(g.gpu.memory_bytes)
            ));
        }
        if let Some(a) = &self.apple
            && a.spec.is_none()
        {
            v.push(format!(
                "\"{}\" is sold with more than one memory bandwidth (or is not in llmbound's table): the unified tier carries only the CPU read bandwidth measured here; the GPU can read faster, so add Apple's figure for your configuration as bandwidth (provenance \"spec\") before holding a Metal run against a ceiling",
                a.name
            ));
        }
        v.extend(self.notes.iter().cloned());
        v
    }

    /// Why the machine counts as busy (empty when quiet): the load before the measurement, and
    /// other processes' share of the CPU time while it ran.
    pub fn busy_reasons(&self) -> Vec<String> {
        let mut v = self.load.busy_reasons();
        if let Some(o) = self.others_during
            && o > system::BUSY_FRACTION
        {
            v.push(format!(
                "other processes used {:.0}% of the CPU time during the measurement",
                o * 100.0
            ));
        }
        v
    }

    /// `--save` is refused on a busy machine unless forced (`DetectError::Busy` names the flag).
    pub fn check_quiet_for_save(&self, force: bool) -> Result<(), DetectError> {
        let reasons = self.busy_reasons();
        if force || reasons.is_empty() {
            Ok(())
        } else {
            Err(DetectError::Busy(reasons.join("; ")))
        }
    }

    /// The host tier's measured bandwidth as written in the profile (rounded up to 0.01 GB/s).
    pub fn measured_bandwidth_text(&self) -> String {
        round_up_gb(self.bandwidth.best)
    }

    /// How the bandwidth was measured, for the profile's `method`.
    pub fn bandwidth_method(&self) -> String {
        let r = &self.bandwidth;
        let llc = self
            .cpu
            .last_level_cache_bytes
            .map(|c| {
                format!(
                    ", {:.0}× the {} last-level cache",
                    r.bytes_per_repetition as f64 / c as f64,
                    units::exact_binary(c)
                )
            })
            .unwrap_or_default();
        format!(
            "llmbound machine detect ({} mode): read-only wrapping sum of u64 words, {} threads each reading its own buffer ({} in all{llc}), {} timed repetitions after a warm-up pass in each of {} runs, best repetition kept",
            self.options.mode.label(),
            r.threads,
            units::exact_binary(r.bytes_per_repetition),
            r.samples.len(),
            self.options.runs.max(1)
        )
    }

    /// The spread of the repetitions and the load, for the profile's `source`.
    pub fn bandwidth_source(&self) -> String {
        let r = &self.bandwidth;
        let load = match self.load.load_average {
            Some(l) => format!(
                "load average {l:.2} on {} logical CPUs before the run",
                self.load.logical_cpus
            ),
            None => "load average unknown".into(),
        };
        let others = self
            .others_during
            .map(|o| {
                format!(
                    "; other processes used {:.0}% of the CPU time during the run",
                    o * 100.0
                )
            })
            .unwrap_or_default();
        let mut s = format!(
            "best {}, median {}, worst {} over {} repetitions; {load}{others}",
            gb(r.best),
            gb(r.median),
            gb(r.worst),
            r.samples.len()
        );
        if !self.warnings.is_empty() {
            s.push_str("; WARNING: ");
            s.push_str(&self.warnings.join("; "));
        }
        s
    }

    /// The machine profile: a host (or unified) tier with the OS's capacity and the measured
    /// bandwidth, and one accelerator tier per GPU whose vendor bandwidth is known.
    pub fn machine_file(&self, id: &str) -> MachineFile {
        let d = Some(self.date.as_str());
        let measured = self.measured_bandwidth_text();
        let method = self.bandwidth_method();
        let source = self.bandwidth_source();
        let capacity = size_figure(
            self.memory.bytes,
            Provenance::Measured,
            d,
            &self.memory.method,
            "",
        );
        let mut tiers = Vec::new();
        let host = match &self.apple {
            Some(chip) => {
                let (bandwidth, measured_bandwidth) = match chip.spec {
                    Some(s) => (
                        rate_figure(s.bandwidth, Provenance::Spec, None, "", s.source),
                        Some(rate_figure(
                            &measured,
                            Provenance::Measured,
                            d,
                            &method,
                            &source,
                        )),
                    ),
                    None => (
                        rate_figure(&measured, Provenance::Measured, d, &method, &source),
                        None,
                    ),
                };
                TierFile {
                    name: "unified".into(),
                    kind: TierKindLabel(TierKind::Unified),
                    capacity,
                    bandwidth,
                    measured_bandwidth,
                    backend: None,
                    free: None,
                    endpoint: None,
                    max_tensor: None,
                }
            }
            None => match &self.peak {
                Some(p) => TierFile {
                    name: "host".into(),
                    kind: TierKindLabel(TierKind::Host),
                    capacity,
                    bandwidth: rate_figure(&p.text, p.provenance, None, "", &p.source),
                    measured_bandwidth: Some(rate_figure(
                        &measured,
                        Provenance::Measured,
                        d,
                        &method,
                        &source,
                    )),
                    backend: None,
                    free: None,
                    endpoint: None,
                    max_tensor: None,
                },
                None => TierFile {
                    name: "host".into(),
                    kind: TierKindLabel(TierKind::Host),
                    capacity,
                    bandwidth: rate_figure(&measured, Provenance::Measured, d, &method, &source),
                    measured_bandwidth: None,
                    backend: None,
                    free: None,
                    endpoint: None,
                    max_tensor: None,
                },
            },
        };
        tiers.push(host);
        for g in &self.gpus {
            let Some(spec) = g.spec else { continue };
            tiers.push(TierFile {
                name: format!("gpu{}", g.gpu.index),
                kind: TierKindLabel(TierKind::Accelerator),
                capacity: size_figure(
                    g.gpu.memory_bytes,
                    Provenance::Measured,
                    d,
                    "nvidia-smi --query-gpu=memory.total (MiB × 2^20)",
                    &g.gpu.name,
                ),
                bandwidth: rate_figure(spec.bandwidth, Provenance::Spec, None, "", spec.source),
                measured_bandwidth: None,
                backend: None,
                free: None,
                endpoint: None,
                max_tensor: None,
            });
        }
        let cpu = self
            .cpu
            .model
            .clone()
            .unwrap_or_else(|| "unknown CPU".into());
        let mut parts = vec![format!("{cpu} ({} logical CPUs)", self.cpu.logical)];
        for g in self.gpus.iter().filter(|g| g.spec.is_some()) {
            parts.push(g.gpu.name.clone());
        }
        let name = format!(
            "{}, {} — detected {}",
            parts.join(" + "),
            units::fmt_gib(self.memory.bytes),
            self.date
        );
        let mut notes = vec![format!(
            "Written by llmbound machine detect on {} ({} mode). CPU: {cpu}, {} logical CPUs{}; {}.",
            self.date,
            self.options.mode.label(),
            self.cpu.logical,
            self.cpu
                .physical
                .map(|p| format!(", {p} physical cores"))
                .unwrap_or_default(),
            self.cpu.method
        )];
        notes.extend(self.all_notes().iter().map(|n| format!("Note: {n}.")));
        notes.push("No compute rate is detected, so the profile gives no prefill ceiling until one is added as [[compute]].".into());
        MachineFile {
            id: id.into(),
            name,
            notes: notes.join(" "),
            tiers,
            compute: Vec::new(),
            links: Vec::new(),
        }
    }

    /// The comment block written above the profile.
    pub fn header(&self) -> String {
        let mut h = format!(
            "# Machine profile of this machine, written by `llmbound machine detect` on {} ({} mode).\n\
             # Capacity from the OS; host bandwidth measured here: best {}, median {} ({} repetitions).\n\
             # A bandwidth measured while other work shares the memory is not an upper bound.\n",
            self.date,
            self.options.mode.label(),
            gb(self.bandwidth.best),
            gb(self.bandwidth.median),
            self.bandwidth.samples.len()
        );
        match &self.peak {
            Some(p) => h.push_str(&format!(
                "# Peak bandwidth {} ({}): {}.\n",
                p.text,
                p.provenance,
                p.source
            )),
            None => h.push_str(
                "# No peak bandwidth is known: a rate above the measured ceiling is not called impossible.\n",
            ),
        }
        h
    }

    /// The profile as TOML text (header included), checked to load back as a profile.
    pub fn to_toml(&self, id: &str) -> Result<String, DetectError> {
        let m = self.machine_file(id);
        let body = toml::to_string_pretty(&m).map_err(|e| ProfileError::Io {
            path: format!("{id}.toml"),
            message: e.to_string(),
        })?;
        let text = format!("{}{body}", self.header());
        let file = format!("{id}.toml");
        let back: MachineFile = load::parse(&file, &text)?;
        load::check_machine(&file, &text, &back, Some(id))?;
        Ok(text)
    }
}

/// Write the profile as `<dir>/machines/<id>.toml`, atomically, after checking that it loads
/// back; refuses to overwrite an existing profile unless asked.
pub fn save_in(
    d: &Detected,
    dir: &Path,
    id: &str,
    overwrite: bool,
) -> Result<PathBuf, DetectError> {
    d.to_toml(id)?;
    Ok(load::save(
        dir,
        "machines",
        id,
        &d.machine_file(id),
        &d.header(),
        overwrite,
    )?)
}

/// Write the profile to the user's profile directory (`profile::load::user_dir`).
pub fn save(d: &Detected, id: &str, overwrite: bool) -> Result<PathBuf, DetectError> {
    let dir = load::user_dir().ok_or(DetectError::NoProfileDir)?;
    save_in(d, &dir, id, overwrite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        // 2026-11-30T01:23:11Z, the test_time of the CPU runs.
        assert_eq!(civil_date(1_796_001_791), (2026, 11, 30));
        assert_eq!(civil_date(951_782_400), (2000, 2, 29));
        assert_eq!(civil_date(1_709_164_800), (2024, 2, 29));
        assert_eq!(civil_date(1_735_689_599), (2024, 12, 31));
        assert_eq!(today().len(), 10);
    }

    #[test]
    fn rounding_up() {
        assert_eq!(round_up_gb(47.55e9), "47.55 GB/s");
        assert_eq!(round_up_gb(47.551e9), "47.56 GB/s");
        assert_eq!(round_up_gb(64.5e9), "64.50 GB/s");
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::Quick.plan(), (256 * MIB, 3));
        assert_eq!(Mode::Normal.plan(), (GIB, 5));
        assert_eq!(Mode::Thorough.plan(), (2 * GIB, 10));
    }
}
