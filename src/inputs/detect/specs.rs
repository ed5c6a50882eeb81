//! Vendor memory bandwidths of parts whose name the OS reports exactly (nvidia-smi, Apple's
//! `machdep.cpu.brand_string`). Only unambiguous names: a part sold with several memory
//! configurations under one name is left out, and the caller says so instead of guessing.

/// A vendor's peak memory bandwidth for a named part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecBandwidth {
    /// The name as the OS reports it.
    pub name: &'static str,
    /// The figure as the vendor writes it ("1008 GB/s").
    pub bandwidth: &'static str,
    /// The document.
    pub source: &'static str,
}

/// NVIDIA GPUs by their nvidia-smi name.
pub const NVIDIA: &[SpecBandwidth] = &[
    SpecBandwidth {
        name: "NVIDIA GeForce RTX 3090",
        bandwidth: "936 GB/s",
        source: "NVIDIA Ampere GA102 GPU Architecture whitepaper, RTX 3090: 936 GB/sec peak memory bandwidth (19.5 Gbps x 384-bit)",
    },
    SpecBandwidth {
        name: "NVIDIA GeForce RTX 3090 Ti",
        bandwidth: "1008 GB/s",
        source: "NVIDIA GeForce RTX 3090 Ti specifications: 21 Gbps GDDR6X, 384-bit (21e9 x 48 bytes = 1008 GB/s)",
    },
    SpecBandwidth {
        name: "NVIDIA GeForce RTX 4090",
        bandwidth: "1008 GB/s",
        source: "NVIDIA Ada Lovelace GPU Architecture whitepaper, RTX 4090: 21 Gbps GDDR6X on a 384-bit bus, 1008 GB/sec peak memory bandwidth",
    },
    SpecBandwidth {
        name: "NVIDIA GeForce RTX 5090",
        bandwidth: "1792 GB/s",
        source: "NVIDIA GeForce RTX 5090 specifications: 32 GB GDDR7, 512-bit, 28 Gbps: 1792 GB/s (28e9 x 64 bytes)",
    },
    SpecBandwidth {
        name: "NVIDIA H100 80GB HBM3",
        bandwidth: "3.35 TB/s",
        source: "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM GPU memory bandwidth 3.35TB/s",
    },
    SpecBandwidth {
        name: "NVIDIA H100 PCIe",
        bandwidth: "2 TB/s",
        source: "NVIDIA H100 Tensor Core GPU datasheet: H100 PCIe GPU memory bandwidth 2TB/s",
    },
    SpecBandwidth {
        name: "NVIDIA H200",
        bandwidth: "4.8 TB/s",
        source: "NVIDIA H200 Tensor Core GPU datasheet: H200 SXM GPU memory bandwidth 4.8TB/s",
    },
    SpecBandwidth {
        name: "NVIDIA H200 NVL",
        bandwidth: "4.8 TB/s",
        source: "NVIDIA H200 Tensor Core GPU datasheet: H200 NVL GPU memory bandwidth 4.8TB/s",
    },
    SpecBandwidth {
        name: "NVIDIA A100-SXM4-80GB",
        bandwidth: "2039 GB/s",
        source: "NVIDIA A100 Tensor Core GPU datasheet: A100 80GB SXM GPU memory bandwidth 2,039GB/s",
    },
    SpecBandwidth {
        name: "NVIDIA A100-SXM4-40GB",
        bandwidth: "1555 GB/s",
        source: "NVIDIA A100 Tensor Core GPU datasheet: A100 40GB GPU memory bandwidth 1,555GB/s",
    },
    SpecBandwidth {
        name: "NVIDIA A100 80GB PCIe",
        bandwidth: "1935 GB/s",
        source: "NVIDIA A100 Tensor Core GPU datasheet: A100 80GB PCIe GPU memory bandwidth 1,935GB/s",
    },
];

/// Apple silicon by `machdep.cpu.brand_string`. M3 Max and M4 Max are left out: each is sold
/// with two memory bandwidths under the same name.
pub const APPLE: &[SpecBandwidth] = &[
    SpecBandwidth {
        name: "Apple M1",
        bandwidth: "68.25 GB/s",
        source: "Apple, M1 technical specifications: 68.25GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M1 Pro",
        bandwidth: "200 GB/s",
        source: "Apple, M1 Pro: 200GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M1 Max",
        bandwidth: "400 GB/s",
        source: "Apple, M1 Max: 400GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M1 Ultra",
        bandwidth: "800 GB/s",
        source: "Apple, M1 Ultra: 800GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M2",
        bandwidth: "100 GB/s",
        source: "Apple, M2: 100GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M2 Pro",
        bandwidth: "200 GB/s",
        source: "Apple, M2 Pro: 200GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M2 Max",
        bandwidth: "400 GB/s",
        source: "Apple, M2 Max: 400GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M2 Ultra",
        bandwidth: "800 GB/s",
        source: "Apple, Mac Studio (2023) Technical Specifications: M2 Ultra, 800GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M3",
        bandwidth: "100 GB/s",
        source: "Apple, M3: 100GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M3 Pro",
        bandwidth: "150 GB/s",
        source: "Apple, M3 Pro: 150GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M3 Ultra",
        bandwidth: "819 GB/s",
        source: "Apple, Mac Studio (2025) Technical Specifications: M3 Ultra, 819GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M4",
        bandwidth: "120 GB/s",
        source: "Apple, M4: 120GB/s memory bandwidth",
    },
    SpecBandwidth {
        name: "Apple M4 Pro",
        bandwidth: "273 GB/s",
        source: "Apple, MacBook Pro (14-inch, M4 Pro or M4 Max, 2024) - Technical Specifications: M4 Pro, 273GB/s memory bandwidth",
    },
];

/// The table entry whose name equals `name` (trimmed, exact).
pub fn lookup(table: &'static [SpecBandwidth], name: &str) -> Option<&'static SpecBandwidth> {
    let n = name.trim();
    table.iter().find(|s| s.name == n)
}

/// Systems-on-chip whose processor name (/proc/cpuinfo `model name`) fixes the memory bus:
/// the peak follows from the bus width and the only transfer rate sold with it.
pub const SOC: &[SpecBandwidth] = &[
    SpecBandwidth {
        name: "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S",
        bandwidth: "256 GB/s",
        source: "AMD Ryzen AI Max+ 395: LPDDR5X-8000 on a 256-bit bus: 32 bytes x 8000e6 transfers/s = 256 GB/s",
    },
    SpecBandwidth {
        name: "AMD RYZEN AI MAX+ PRO 395 w/ Radeon 8060S",
        bandwidth: "256 GB/s",
        source: "AMD Ryzen AI Max+ PRO 395: LPDDR5X-8000 on a 256-bit bus: 32 bytes x 8000e6 transfers/s = 256 GB/s",
    },
    SpecBandwidth {
        name: "AMD RYZEN AI MAX 390 w/ Radeon 8050S",
        bandwidth: "256 GB/s",
        source: "AMD Ryzen AI Max 390: LPDDR5X-8000 on a 256-bit bus: 32 bytes x 8000e6 transfers/s = 256 GB/s",
    },
];

/// Memory channels (64 bits each) of single-socket processor families, by name prefix. Used
/// only to cap a peak summed over memory devices (two DIMMs on one channel share it); server
/// parts are left out because their sockets multiply the channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuChannels {
    /// Name prefix, compared without case.
    pub prefix: &'static str,
    /// 64-bit memory channels; 0 = varies within the family (no cap).
    pub channels: u32,
    /// Where the count comes from.
    pub source: &'static str,
}

/// Channel counts of processor families.
pub const CPU_CHANNELS: &[CpuChannels] = &[
    CpuChannels {
        prefix: "AMD Ryzen",
        channels: 2,
        source: "AMD Ryzen desktop and mobile processors: dual-channel (128-bit) memory",
    },
    CpuChannels {
        prefix: "AMD Ryzen Threadripper",
        channels: 0,
        source: "Threadripper: 4 or 8 channels by platform",
    },
    CpuChannels {
        prefix: "AMD RYZEN AI MAX",
        channels: 4,
        source: "AMD Ryzen AI Max: 256-bit LPDDR5X bus",
    },
    CpuChannels {
        prefix: "Intel(R) Core(TM)",
        channels: 2,
        source: "Intel Core desktop and mobile processors: dual-channel (128-bit) memory",
    },
];

/// The channel count of a processor's family: the longest matching prefix, `None` when the
/// family is unknown or its count varies.
pub fn channels_for(model: &str) -> Option<&'static CpuChannels> {
    let m = model.trim().to_ascii_lowercase();
    CPU_CHANNELS
        .iter()
        .filter(|c| m.starts_with(&c.prefix.to_ascii_lowercase()))
        .max_by_key(|c| c.prefix.len())
        .filter(|c| c.channels > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::units::parse_bandwidth;

    #[test]
    fn every_figure_parses_and_names_are_unique() {
        for t in [NVIDIA, APPLE, SOC] {
            for s in t {
                assert!(parse_bandwidth(s.bandwidth).is_ok(), "{}", s.name);
                assert_eq!(
                    t.iter().filter(|x| x.name == s.name).count(),
                    1,
                    "{}",
                    s.name
                );
            }
        }
        assert_eq!(
            lookup(NVIDIA, " NVIDIA H200 ").unwrap().bandwidth,
            "4.8 TB/s"
        );
        assert!(lookup(NVIDIA, "NVIDIA H20").is_none());
        assert!(lookup(APPLE, "Apple M4 Max").is_none());
    }

    #[test]
    fn channel_families() {
        let ch = |m: &str| channels_for(m).map(|c| c.channels);
        assert_eq!(ch("AMD Ryzen 9 7950X 16-Core Processor"), Some(2));
        assert_eq!(ch("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S"), Some(4));
        assert_eq!(ch("AMD Ryzen Threadripper PRO 7995WX"), None);
        assert_eq!(ch("13th Gen Intel(R) Core(TM) i9-13900K"), None);
        assert_eq!(ch("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz"), Some(2));
        assert_eq!(ch("AMD EPYC 9B45"), None);
    }
}
