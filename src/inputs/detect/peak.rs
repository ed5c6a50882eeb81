//! The system memory's peak bandwidth: the DIMMs' type, transfer rate and data width from
//! SMBIOS type 17 (Memory Device) records, read from `/sys/firmware/dmi/tables/DMI` when it is
//! readable (root on most systems) or from `dmidecode -t 17`, and a table of processors and
//! SoCs (`specs`). Peak = Σ over populated devices of data width × transfer rate, capped at the
//! processor's channel count when the table knows it; provenance `derived`. A SoC whose name
//! fixes its memory gets the vendor's figure, provenance `spec`. When nothing is readable there
//! is no peak, and the caller keeps only the measured figure.
//!
//! The SMBIOS parser is written here (about 80 lines over the DMTF DSP0134 layout) rather than
//! taking `smbios-lib`: that crate models every structure type and its platform loaders, while
//! this needs seven fields of type 17 (data width 0x0A, size 0x0C / 0x1C, locator 0x10, type
//! 0x12, speed 0x15 / 0x54, configured speed 0x20 / 0x58, the same offsets smbios-lib reads)
//! from bytes already in memory, bounds-checked and tested on fixtures.

use super::specs;
use crate::core::units::Provenance;
use std::time::Duration;

/// DDR generation of a memory device (SMBIOS 3.x "Memory Type").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryType {
    /// DDR3.
    Ddr3,
    /// DDR4.
    Ddr4,
    /// DDR5.
    Ddr5,
    /// LPDDR3.
    Lpddr3,
    /// LPDDR4 / LPDDR4X.
    Lpddr4,
    /// LPDDR5 / LPDDR5X.
    Lpddr5,
    /// HBM / HBM2 / HBM3.
    Hbm,
    /// Any other or unknown type.
    Other,
}

impl MemoryType {
    /// From the SMBIOS type 17 byte at offset 0x12 (DSP0134 7.18.2).
    pub fn from_smbios(code: u8) -> MemoryType {
        match code {
            0x18 => MemoryType::Ddr3,
            0x1A => MemoryType::Ddr4,
            0x1D => MemoryType::Lpddr3,
            0x1E => MemoryType::Lpddr4,
            0x22 => MemoryType::Ddr5,
            0x23 => MemoryType::Lpddr5,
            0x1F..=0x21 => MemoryType::Hbm,
            _ => MemoryType::Other,
        }
    }

    /// From dmidecode's `Type:` text.
    pub fn from_name(s: &str) -> MemoryType {
        match s.trim() {
            "DDR3" => MemoryType::Ddr3,
            "DDR4" => MemoryType::Ddr4,
            "DDR5" => MemoryType::Ddr5,
            "LPDDR3" => MemoryType::Lpddr3,
            "LPDDR4" => MemoryType::Lpddr4,
            "LPDDR5" => MemoryType::Lpddr5,
            "HBM" | "HBM2" | "HBM3" => MemoryType::Hbm,
            _ => MemoryType::Other,
        }
    }

    /// The name vendors print.
    pub fn label(self) -> &'static str {
        match self {
            MemoryType::Ddr3 => "DDR3",
            MemoryType::Ddr4 => "DDR4",
            MemoryType::Ddr5 => "DDR5",
            MemoryType::Lpddr3 => "LPDDR3",
            MemoryType::Lpddr4 => "LPDDR4",
            MemoryType::Lpddr5 => "LPDDR5",
            MemoryType::Hbm => "HBM",
            MemoryType::Other => "memory",
        }
    }
}

/// One populated memory device (a DIMM, or a soldered package or channel).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryDevice {
    /// Size in bytes.
    pub size_bytes: u64,
    /// Type.
    pub memory_type: MemoryType,
    /// Data width in bits (ECC bits excluded), when known.
    pub data_width_bits: Option<u32>,
    /// Rated transfer rate, MT/s, when known.
    pub speed_mts: Option<u32>,
    /// Configured transfer rate, MT/s, when known (the rate it runs at).
    pub configured_mts: Option<u32>,
    /// Device locator ("DIMM_A1").
    pub locator: String,
}

impl MemoryDevice {
    /// The rate it runs at: configured when known, else rated.
    pub fn mts(&self) -> Option<u32> {
        self.configured_mts.or(self.speed_mts).filter(|s| *s > 0)
    }
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// The populated type 17 records of an SMBIOS structure table (the bytes of
/// `/sys/firmware/dmi/tables/DMI`). Stops at type 127 (end of table) or at a structure that
/// runs past the end; never panics on malformed bytes.
pub fn parse_smbios(table: &[u8]) -> Vec<MemoryDevice> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 4 <= table.len() {
        let kind = table[at];
        let len = table[at + 1] as usize;
        if len < 4 || at + len > table.len() {
            break;
        }
        let formatted = &table[at..at + len];
        // The string set: NUL-terminated strings, ended by an extra NUL.
        let mut end = at + len;
        let mut strings = Vec::new();
        loop {
            let Some(rel) = table[end..].iter().position(|b| *b == 0) else {
                return out;
            };
            if rel == 0 {
                end += 1;
                if strings.is_empty() {
                    // An empty string set is two NULs.
                    if table.get(end) == Some(&0) {
                        end += 1;
                    }
                }
                break;
            }
            strings.push(String::from_utf8_lossy(&table[end..end + rel]).into_owned());
            end += rel + 1;
        }
        if kind == 127 {
            break;
        }
        if kind == 17
            && let Some(d) = memory_device(formatted, &strings)
        {
            out.push(d);
        }
        at = end;
    }
    out
}

fn memory_device(f: &[u8], strings: &[String]) -> Option<MemoryDevice> {
    let size_word = le16(f, 0x0C)?;
    let size_bytes = match size_word {
        0 | 0xFFFF => return None, // not installed / unknown
        0x7FFF => u64::from(le32(f, 0x1C)? & 0x7FFF_FFFF) << 20,
        w if w & 0x8000 != 0 => u64::from(w & 0x7FFF) << 10,
        w => u64::from(w) << 20,
    };
    let width = le16(f, 0x0A).filter(|w| *w != 0 && *w != 0xFFFF);
    let speed = match le16(f, 0x15) {
        Some(0xFFFF) => le32(f, 0x54),
        Some(0) | None => None,
        Some(s) => Some(u32::from(s)),
    };
    let configured = match le16(f, 0x20) {
        Some(0xFFFF) => le32(f, 0x58),
        Some(0) | None => None,
        Some(s) => Some(u32::from(s)),
    };
    let string = |i: usize| {
        f.get(i)
            .and_then(|n| (*n as usize).checked_sub(1))
            .and_then(|n| strings.get(n))
            .cloned()
            .unwrap_or_default()
    };
    Some(MemoryDevice {
        size_bytes,
        memory_type: MemoryType::from_smbios(*f.get(0x12)?),
        data_width_bits: width.map(u32::from),
        speed_mts: speed.filter(|s| *s > 0),
        configured_mts: configured.filter(|s| *s > 0),
        locator: string(0x10),
    })
}

fn value_number(v: &str) -> Option<u32> {
    v.split_whitespace().next()?.parse().ok()
}

/// The populated devices of `dmidecode -t 17` output.
pub fn parse_dmidecode(text: &str) -> Vec<MemoryDevice> {
    let mut out = Vec::new();
    for block in text.split("Memory Device").skip(1) {
        let mut d = MemoryDevice {
            size_bytes: 0,
            memory_type: MemoryType::Other,
            data_width_bits: None,
            speed_mts: None,
            configured_mts: None,
            locator: String::new(),
        };
        for line in block.lines() {
            let Some((k, v)) = line.trim().split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k.trim() {
                "Size" => {
                    let n = value_number(v).map(u64::from).unwrap_or(0);
                    d.size_bytes = match v.split_whitespace().nth(1) {
                        Some("kB" | "KB") => n << 10,
                        Some("MB") => n << 20,
                        Some("GB") => n << 30,
                        Some("TB") => n << 40,
                        _ => 0,
                    };
                }
                "Type" => d.memory_type = MemoryType::from_name(v),
                "Data Width" => d.data_width_bits = value_number(v).filter(|w| *w > 0),
                "Speed" => d.speed_mts = value_number(v).filter(|s| *s > 0),
                "Configured Memory Speed" | "Configured Clock Speed" => {
                    d.configured_mts = value_number(v).filter(|s| *s > 0)
                }
                "Locator" => d.locator = v.to_string(),
                _ => {}
            }
        }
        if d.size_bytes > 0 {
            out.push(d);
        }
    }
    out
}

/// A peak bandwidth with its provenance and the reasoning behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakBandwidth {
    /// Bytes/s.
    pub bytes_per_second: f64,
    /// `spec` (a vendor figure for the SoC) or `derived` (from the memory devices).
    pub provenance: Provenance,
    /// The figure with its unit, as written into the profile ("76.8 GB/s").
    pub text: String,
    /// How it was obtained.
    pub source: String,
}

/// The peak of the memory devices: Σ width × rate over populated devices, capped at the
/// processor's channels (64-bit each) at the fastest device's rate when the table knows them.
/// `None` when a device lacks its width or rate.
pub fn derive_peak(
    devices: &[MemoryDevice],
    cpu_model: Option<&str>,
    method: &str,
) -> Option<PeakBandwidth> {
    if devices.is_empty() {
        return None;
    }
    let mut sum = 0f64;
    let mut fastest = 0u32;
    for d in devices {
        let (w, r) = (d.data_width_bits?, d.mts()?);
        sum += f64::from(w) / 8.0 * f64::from(r) * 1e6;
        fastest = fastest.max(r);
    }
    let kinds: Vec<&str> = {
        let mut k: Vec<&str> = devices.iter().map(|d| d.memory_type.label()).collect();
        k.dedup();
        k
    };
    let mut source = format!(
        "{} populated {} device{} ({}): Σ data width × transfer rate = {}",
        devices.len(),
        kinds.join("/"),
        if devices.len() == 1 { "" } else { "s" },
        devices
            .iter()
            .map(|d| format!(
                "{} {}-bit at {} MT/s",
                if d.locator.is_empty() {
                    "?"
                } else {
                    &d.locator
                },
                d.data_width_bits.unwrap_or(0),
                d.mts().unwrap_or(0)
            ))
            .collect::<Vec<_>>()
            .join(", "),
        crate::core::units::fmt_bandwidth(crate::core::units::BytesPerSec(sum))
    );
    if let Some(ch) = cpu_model.and_then(specs::channels_for) {
        let cap = f64::from(ch.channels) * 8.0 * f64::from(fastest) * 1e6;
        if cap < sum {
            source.push_str(&format!(
                "; capped at the processor's {} channels × 8 bytes × {fastest} MT/s ({})",
                ch.channels, ch.source
            ));
            sum = cap;
        }
    } else {
        source.push_str(
            "; one device per channel assumed (an upper bound: two per channel share one)",
        );
    }
    source.push_str(&format!("; read from {method}"));
    Some(PeakBandwidth {
        bytes_per_second: sum,
        provenance: Provenance::Derived,
        text: super::round_up_gb(sum),
        source,
    })
}

/// A SoC whose name fixes its memory: the vendor figure (`specs::SOC`).
pub fn soc_peak(cpu_model: Option<&str>) -> Option<PeakBandwidth> {
    let s = specs::lookup(specs::SOC, cpu_model?)?;
    let bw = crate::core::units::parse_bandwidth(s.bandwidth).ok()?;
    Some(PeakBandwidth {
        bytes_per_second: bw.0,
        provenance: Provenance::Spec,
        text: s.bandwidth.to_string(),
        source: s.source.to_string(),
    })
}

/// The memory devices of this machine and where they were read (empty when neither the DMI
/// table nor dmidecode answers, e.g. without root or in most virtual machines).
pub fn memory_devices() -> (Vec<MemoryDevice>, String) {
    if let Ok(b) = std::fs::read("/sys/firmware/dmi/tables/DMI") {
        let d = parse_smbios(&b);
        if !d.is_empty() {
            return (
                d,
                "SMBIOS type 17 records in /sys/firmware/dmi/tables/DMI".into(),
            );
        }
    }
    if let Some(t) = super::system::run("dmidecode", &["-t", "17"], Duration::from_secs(5)) {
        let d = parse_dmidecode(&t);
        if !d.is_empty() {
            return (d, "dmidecode -t 17".into());
        }
    }
    (Vec::new(), String::new())
}

/// This machine's peak: a SoC's vendor figure, else derived from the memory devices.
pub fn detect_peak(cpu_model: Option<&str>) -> (Option<PeakBandwidth>, String) {
    if let Some(p) = soc_peak(cpu_model) {
        return (Some(p), String::new());
    }
    let (devices, method) = memory_devices();
    if devices.is_empty() {
        return (
            None,
            "the memory's type, speed and channels could not be read (/sys/firmware/dmi/tables/DMI needs root; dmidecode is absent or needs root; virtual machines rarely expose them), so no peak bandwidth is known: a rate above the measured ceiling is reported as such, never as impossible".into(),
        );
    }
    match derive_peak(&devices, cpu_model, &method) {
        Some(p) => (Some(p), String::new()),
        None => (
            None,
            format!(
                "{method} lists {} memory device(s) but not every data width and speed, so no peak bandwidth is derived",
                devices.len()
            ),
        ),
    }
}
