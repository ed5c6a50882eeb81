//! `detect`: the profile of this machine serializes, loads back as a profile, validates and
//! converts to core types. The measured bandwidth itself is never asserted: contention on a
//! shared machine makes it vary.

use llmbound::core::scenario::TierKind;
use llmbound::core::units::{GIB, MIB, Provenance};
use llmbound::detect::bandwidth::BandwidthRun;
use llmbound::detect::system::{CpuFigure, GpuFigure, LoadFigure, MemoryFigure};
use llmbound::detect::{self, AppleChip, DetectOptions, Detected, GpuDetected, Mode, specs};
use llmbound::profile::file::MachineFile;
use llmbound::profile::{Catalog, Origin, ProfileError, load};
use std::time::Duration;

fn small() -> DetectOptions {
    DetectOptions {
        buffer_bytes: 4 * MIB,
        repetitions: 2,
        threads: Some(2),
        load_sample: Duration::from_millis(20),
        exact_buffer: true,
        ..DetectOptions::from(Mode::Quick)
    }
}

#[test]
fn detected_profile_loads_back_and_converts() {
    let mut seen: Vec<f64> = Vec::new();
    let d = detect::detect_with(&small(), &mut |f, what| {
        assert!(!what.is_empty());
        seen.push(f);
    })
    .unwrap();
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "progress goes forward: {seen:?}"
    );
    assert!(seen.iter().all(|f| (0.0..=1.0).contains(f)));
    assert_eq!(seen.last(), Some(&1.0));
    // The best of several runs: every run's repetitions are kept, the best over all.
    assert!(d.options.runs >= 2);
    assert_eq!(d.bandwidth.samples.len(), 2 * d.options.runs as usize);
    assert_eq!(
        d.bandwidth.best,
        d.bandwidth.samples.iter().copied().fold(0.0, f64::max)
    );
    assert_eq!(d.bandwidth.bytes_per_repetition, 4 * MIB);
    assert!(d.memory.bytes > 0);
    eprintln!(
        "detected: {:?}, {} logical CPUs, {} bytes; best {:.2} GB/s, median {:.2} GB/s (4 MiB: cache, not memory)",
        d.cpu.model,
        d.cpu.logical,
        d.memory.bytes,
        d.bandwidth.best / 1e9,
        d.bandwidth.median / 1e9
    );

    let text = d.to_toml("this-machine").unwrap();
    assert!(text.starts_with("# Machine profile of this machine"));
    let m: MachineFile = load::parse("this-machine.toml", &text).unwrap();
    load::check_machine("this-machine.toml", &text, &m, Some("this-machine")).unwrap();
    assert_eq!(m, d.machine_file("this-machine"));
    let host = &m.tiers[0];
    assert_eq!(host.capacity.value.value, d.memory.bytes);
    assert_eq!(host.capacity.provenance.0, Provenance::Measured);
    assert_eq!(host.capacity.date.as_deref(), Some(d.date.as_str()));
    assert!(host.capacity.method.is_some());
    let bw = host.measured_bandwidth.as_ref().unwrap_or(&host.bandwidth);
    assert_eq!(bw.provenance.0, Provenance::Measured);
    assert_eq!(bw.date.as_deref(), Some(d.date.as_str()));
    assert!(bw.method.as_deref().unwrap().contains("read-only"));
    // Rounded up: never below the best repetition.
    assert!(bw.value.value.0 >= d.bandwidth.best);
    assert!(bw.value.value.0 - d.bandwidth.best < 1e7);

    let machine = load::machine(&m);
    assert_eq!(machine.id, "this-machine");
    assert!(matches!(
        machine.tiers[0].kind,
        TierKind::Host | TierKind::Unified
    ));
    assert_eq!(machine.tiers[0].capacity.value, d.memory.bytes);

    // A scenario on the detected machine evaluates.
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("default").unwrap()).unwrap();
    s.machine = machine;
    llmbound::core::evaluate(&s).unwrap();
}

#[test]
fn save_is_atomic_checked_and_refuses_to_overwrite() {
    let d = detect::detect_with(&small(), &mut |_, _| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = detect::save_in(&d, dir.path(), "my-box", false).unwrap();
    assert_eq!(p, dir.path().join("machines").join("my-box.toml"));
    let cat = Catalog::load_with(Some(dir.path().to_path_buf()));
    assert!(cat.errors.is_empty(), "{:?}", cat.errors);
    let e = cat.machines.iter().find(|e| e.id == "my-box").unwrap();
    assert_eq!(e.origin, Origin::File(p.clone()));
    assert_eq!(cat.machine("my-box").unwrap(), d.machine_file("my-box"));
    let again = detect::save_in(&d, dir.path(), "my-box", false).unwrap_err();
    assert!(
        matches!(
            again,
            detect::DetectError::Profile(ProfileError::Exists { .. })
        ),
        "{again}"
    );
    detect::save_in(&d, dir.path(), "my-box", true).unwrap();
    // A bad id is refused before anything is written.
    assert!(detect::save_in(&d, dir.path(), "My Box", false).is_err());
    assert!(!dir.path().join("machines").join("My Box.toml").exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("machines"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

fn synthetic(gpus: Vec<(&str, u64)>, apple: Option<&str>) -> Detected {
    let run = BandwidthRun {
        bytes_per_repetition: GIB,
        threads: 8,
        samples: vec![40.0e9, 41.234e9, 39.5e9],
        best: 41.234e9,
        median: 40.0e9,
        worst: 39.5e9,
        unoptimized_build: false,
    };
    Detected {
        date: "2026-11-30".into(),
        options: DetectOptions::from(Mode::Normal),
        memory: MemoryFigure {
            bytes: 64 * GIB,
            method: "test".into(),
        },
        cpu: CpuFigure {
            model: Some(apple.unwrap_or("AMD Ryzen 9 7950X").into()),
            logical: 8,
            physical: Some(8),
            last_level_cache_bytes: Some(32 * MIB),
            method: "test".into(),
        },
        apple: apple.map(|a| AppleChip {
            name: a.into(),
            spec: specs::lookup(specs::APPLE, a),
        }),
        gpus: gpus
            .into_iter()
            .enumerate()
            .map(|(index, (name, mib))| GpuDetected {
                gpu: GpuFigure {
                    index,
                    name: name.into(),
                    memory_bytes: mib << 20,
                },
                spec: specs::lookup(specs::NVIDIA, name),
            })
            .collect(),
        load: LoadFigure {
            load_average: Some(0.1),
            busy_fraction: Some(0.01),
            logical_cpus: 8,
            runnable_others: Some(0),
        },
        others_during: Some(0.01),
        bandwidth: run,
        peak: None,
        warnings: Vec::new(),
        notes: Vec::new(),
    }
}

#[test]
fn gpus_with_a_known_bandwidth_get_a_tier_others_do_not() {
    let d = synthetic(
        vec![
            ("NVIDIA GeForce RTX 4090", 24_564),
            ("NVIDIA Mystery 9000", 16_384),
        ],
        None,
    );
    let text = d.to_toml("box").unwrap();
    let m: MachineFile = load::parse("box.toml", &text).unwrap();
    assert_eq!(m.tiers.len(), 2);
    assert_eq!(m.tiers[0].name, "host");
    assert_eq!(m.tiers[0].bandwidth.value.value.0, 41.24e9);
    assert_eq!(m.tiers[0].bandwidth.provenance.0, Provenance::Measured);
    let gpu = &m.tiers[1];
    assert_eq!(
        (gpu.name.as_str(), gpu.kind.0),
        ("gpu0", TierKind::Accelerator)
    );
    assert_eq!(gpu.capacity.value.value, 24_564u64 << 20);
    assert_eq!(gpu.capacity.provenance.0, Provenance::Measured);
    assert_eq!(gpu.bandwidth.value.value.0, 1008e9);
    assert_eq!(gpu.bandwidth.provenance.0, Provenance::Spec);
    let machine = load::machine(&m);
    assert_eq!(machine.accelerators(), vec![1]);
    assert!(text.contains("median 40 GB/s"), "{text}");
    assert!(
        m.notes.contains(
            "\"NVIDIA Mystery 9000\" (16.000 GiB (17.180 GB) of memory) has no vendor bandwidth"
        ),
        "{}",
        m.notes
    );
}

#[test]
fn apple_silicon_is_one_unified_tier() {
    let d = synthetic(Vec::new(), Some("Apple M4 Pro"));
    let m: MachineFile = load::parse("mac.toml", &d.to_toml("mac").unwrap()).unwrap();
    assert_eq!(m.tiers.len(), 1);
    let t = &m.tiers[0];
    assert_eq!((t.name.as_str(), t.kind.0), ("unified", TierKind::Unified));
    assert_eq!(t.bandwidth.value.value.0, 273e9);
    assert_eq!(t.bandwidth.provenance.0, Provenance::Spec);
    let mb = t.measured_bandwidth.as_ref().unwrap();
    assert_eq!(mb.provenance.0, Provenance::Measured);
    // M4 Max comes with two bandwidths: only the measured CPU read figure, and a note.
    let d = synthetic(Vec::new(), Some("Apple M4 Max"));
    let m = d.machine_file("mac");
    assert!(
        m.notes
            .contains("\"Apple M4 Max\" is sold with more than one memory bandwidth"),
        "{}",
        m.notes
    );
    assert!(m.tiers[0].measured_bandwidth.is_none());
    assert_eq!(m.tiers[0].bandwidth.provenance.0, Provenance::Measured);
    load::check_machine("mac.toml", &d.to_toml("mac").unwrap(), &m, Some("mac")).unwrap();
}

/// An SMBIOS structure: type, formatted area (after the 4-byte header), strings.
fn smbios_struct(kind: u8, formatted: &[u8], strings: &[&str]) -> Vec<u8> {
    let mut v = vec![kind, (formatted.len() + 4) as u8, 0x10, 0x00];
    v.extend_from_slice(formatted);
    if strings.is_empty() {
        v.extend_from_slice(&[0, 0]);
    } else {
        for s in strings {
            v.extend_from_slice(s.as_bytes());
            v.push(0);
        }
        v.push(0);
    }
    v
}

/// A type 17 record (SMBIOS 3.2 layout, 0x5C bytes): size in MiB, type code, data width,
/// rated and configured MT/s, device locator string 1.
fn dimm(size_mib: u16, kind: u8, width: u16, speed: u16, configured: u16) -> Vec<u8> {
    let mut f = vec![0u8; 0x5C - 4];
    let put16 = |f: &mut Vec<u8>, at: usize, v: u16| {
        f[at - 4..at - 2].copy_from_slice(&v.to_le_bytes());
    };
    put16(&mut f, 0x08, width + 8); // total width (ECC)
    put16(&mut f, 0x0A, width);
    put16(&mut f, 0x0C, size_mib);
    f[0x10 - 4] = 1; // device locator: string 1
    f[0x12 - 4] = kind;
    put16(&mut f, 0x15, speed);
    put16(&mut f, 0x20, configured);
    smbios_struct(17, &f, &["DIMM_A1"])
}

#[test]
fn peak_from_smbios_type_17_records() {
    use llmbound::detect::peak::{self, MemoryType};
    let mut table = smbios_struct(0, &[1, 2, 3, 4], &["BIOS vendor", "1.0"]);
    table.extend(dimm(16384, 0x22, 64, 5600, 4800));
    table.extend(dimm(0, 0x22, 64, 0, 0)); // empty slot
    table.extend(dimm(16384, 0x22, 64, 5600, 4800));
    table.extend(smbios_struct(127, &[], &[]));
    table.extend(dimm(16384, 0x22, 64, 5600, 4800)); // after the end: ignored
    let d = peak::parse_smbios(&table);
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0].size_bytes, 16 << 30);
    assert_eq!(d[0].memory_type, MemoryType::Ddr5);
    assert_eq!(d[0].data_width_bits, Some(64));
    assert_eq!(
        (d[0].speed_mts, d[0].configured_mts),
        (Some(5600), Some(4800))
    );
    assert_eq!(d[0].locator, "DIMM_A1");
    // Two DDR5 DIMMs at 4800 MT/s: 2 × 8 bytes × 4800e6 = 76.8 GB/s, derived.
    let p = peak::derive_peak(&d, Some("AMD Ryzen 9 7950X 16-Core Processor"), "test").unwrap();
    assert_eq!(p.bytes_per_second, 76.8e9);
    assert_eq!(p.provenance, Provenance::Derived);
    assert_eq!(p.text, "76.80 GB/s");
    // Four DIMMs on a dual-channel processor share two channels.
    let four: Vec<_> = d.iter().chain(d.iter()).cloned().collect();
    let p = peak::derive_peak(&four, Some("AMD Ryzen 9 7950X 16-Core Processor"), "t").unwrap();
    assert_eq!(p.bytes_per_second, 76.8e9);
    assert!(
        p.source.contains("capped at the processor's 2 channels"),
        "{}",
        p.source
    );
    // An unknown processor: one device per channel (an upper bound).
    let p = peak::derive_peak(&four, Some("AMD EPYC"), "t").unwrap();
    assert_eq!(p.bytes_per_second, 153.6e9);
    // Truncated or garbage tables never panic.
    for cut in 0..table.len() {
        let _ = peak::parse_smbios(&table[..cut]);
    }
    assert!(peak::parse_smbios(&[17, 2, 0, 0, 0xFF]).is_empty());
}

#[test]
fn peak_from_dmidecode_text() {
    use llmbound::detect::peak;
    let text = "# dmidecode 3.5\nHandle 0x0011, DMI type 17, 92 bytes\nMemory Device\n\
        \tTotal Width: 72 bits\n\tData Width: 64 bits\n\tSize: 32 GB\n\tLocator: DIMM_A1\n\
        \tType: DDR4\n\tSpeed: 3200 MT/s\n\tConfigured Memory Speed: 2933 MT/s\n\n\
        Handle 0x0012, DMI type 17, 92 bytes\nMemory Device\n\tData Width: Unknown\n\
        \tSize: No Module Installed\n\tType: Unknown\n";
    let d = peak::parse_dmidecode(text);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].size_bytes, 32 << 30);
    assert_eq!(d[0].mts(), Some(2933));
    let p = peak::derive_peak(&d, None, "dmidecode -t 17").unwrap();
    assert_eq!(p.bytes_per_second, 8.0 * 2933e6);
    // A device without a speed gives no peak rather than a guess.
    let mut no_speed = d.clone();
    no_speed[0].speed_mts = None;
    no_speed[0].configured_mts = None;
    assert!(peak::derive_peak(&no_speed, None, "t").is_none());
    // A SoC whose name fixes its memory bus.
    let p = peak::soc_peak(Some("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S")).unwrap();
    assert_eq!(p.bytes_per_second, 256e9);
}

#[test]
fn a_known_peak_is_the_bandwidth_and_the_measurement_is_measured_bandwidth() {
    use llmbound::detect::peak::PeakBandwidth;
    let mut d = synthetic(Vec::new(), None);
    d.peak = Some(PeakBandwidth {
        bytes_per_second: 76.8e9,
        provenance: Provenance::Derived,
        text: "76.80 GB/s".into(),
        source: "2 populated DDR5 devices".into(),
    });
    let text = d.to_toml("box").unwrap();
    let m: MachineFile = load::parse("box.toml", &text).unwrap();
    let t = &m.tiers[0];
    assert_eq!(t.bandwidth.value.value.0, 76.8e9);
    assert_eq!(t.bandwidth.provenance.0, Provenance::Derived);
    let mb = t.measured_bandwidth.as_ref().unwrap();
    assert_eq!(mb.value.value.0, 41.24e9);
    assert_eq!(mb.provenance.0, Provenance::Measured);
    assert!(
        text.contains("# Peak bandwidth 76.80 GB/s (derived)"),
        "{text}"
    );
    // Without a peak the profile says a rate above it is not impossible.
    let d = synthetic(Vec::new(), None);
    assert!(
        d.to_toml("box")
            .unwrap()
            .contains("No peak bandwidth is known")
    );
}

#[test]
fn save_refuses_a_busy_machine_without_force() {
    let mut d = synthetic(Vec::new(), None);
    d.check_quiet_for_save(false).unwrap();
    d.load.load_average = Some(13.0);
    d.others_during = Some(0.6);
    let e = d.check_quiet_for_save(false).unwrap_err().to_string();
    assert!(e.contains("--force"), "{e}");
    assert!(e.contains("1-minute load average is 13.00"), "{e}");
    assert!(
        e.contains("60% of the CPU time during the measurement"),
        "{e}"
    );
    d.check_quiet_for_save(true).unwrap();
    // Other runnable processes alone mark it busy.
    let mut d = synthetic(Vec::new(), None);
    d.load.runnable_others = Some(12);
    let e = d.check_quiet_for_save(false).unwrap_err().to_string();
    assert!(e.contains("12 other tasks were runnable"), "{e}");
}

#[test]
fn best_of_several_runs() {
    use llmbound::detect::bandwidth::best_of;
    let run = |s: Vec<f64>| BandwidthRun {
        bytes_per_repetition: GIB,
        threads: 2,
        best: s.iter().copied().fold(0.0, f64::max),
        median: 0.0,
        worst: s.iter().copied().fold(f64::MAX, f64::min),
        samples: s,
        unoptimized_build: false,
    };
    // A first run under load (8.39 GB/s), a quiet second one.
    let r = best_of(vec![run(vec![8.39e9, 8.1e9]), run(vec![45.0e9, 47.55e9])]).unwrap();
    assert_eq!(r.samples.len(), 4);
    assert_eq!((r.best, r.worst), (47.55e9, 8.1e9));
    assert_eq!(r.median, (8.39e9 + 45.0e9) / 2.0);
    assert!(best_of(Vec::new()).is_none());
}
