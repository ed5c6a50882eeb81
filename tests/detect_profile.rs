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
    assert_eq!(d.bandwidth.samples.len(), 2);
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

/// By hand, on a quiet machine: `cargo test --release --test detect_profile -- --ignored --nocapture`.
#[test]
#[ignore = "measures this machine for seconds; run by hand on a quiet machine"]
fn measure_this_machine() {
    for mode in [Mode::Quick, Mode::Normal, Mode::Thorough] {
        let d = detect::detect(mode, &mut |_, _| {}).unwrap();
        let r = &d.bandwidth;
        eprintln!(
            "{:>8}: {} × {} MiB, {} threads: best {:.2} GB/s, median {:.2} GB/s, worst {:.2} GB/s; load {:?}, busy before {:?}, others during {:?}",
            mode.label(),
            r.samples.len(),
            r.bytes_per_repetition >> 20,
            r.threads,
            r.best / 1e9,
            r.median / 1e9,
            r.worst / 1e9,
            d.load.load_average,
            d.load.busy_fraction,
            d.others_during
        );
        for w in &d.warnings {
            eprintln!("          warning: {w}");
        }
        if mode == Mode::Normal {
            eprintln!("{}", d.to_toml("this-machine").unwrap());
        }
    }
}
