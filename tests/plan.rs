//! The plan llama.cpp would choose, in the product: devices and their free memory from the
//! machine profiles, the placement flags as scenario edits and CLI flags, the plan in the
//! report (text and JSON), the flags kept by scenario profiles.

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::{self, Edit};
use llmbound::core::placement::{Backend, GpuLayers, SplitMode};
use llmbound::core::plan::PlanOrigin;
use llmbound::core::units::{GIB, MIB, Provenance};
use llmbound::core::{Report, Scenario, evaluate};
use llmbound::profile::{Catalog, load};

fn scenario(o: ScenarioOptions) -> Scenario {
    let cat = Catalog::builtin();
    llmbound::workspace::scenario(&cat, &o).unwrap()
}

fn report(o: ScenarioOptions) -> Report {
    evaluate(&scenario(o)).unwrap()
}

#[test]
fn every_builtin_device_names_its_backend_and_free_memory() {
    let cat = Catalog::builtin();
    for e in &cat.machines {
        let m = load::machine(&e.value);
        for (i, d) in m.devices() {
            let t = &m.tiers[i];
            let spec = t.device.as_ref().unwrap_or_else(|| {
                panic!("{}: tier {} states no backend/free memory", e.id, t.name)
            });
            assert!(spec.free.value > 0 && spec.free.value <= t.capacity.value);
            assert!(!spec.free.source.is_empty(), "{}: free has no source", e.id);
            assert_eq!(d.free.0, spec.free.value);
        }
    }
}

#[test]
fn the_m4_pro_device_is_metals_working_set_not_all_48_gib() {
    let r = report(ScenarioOptions::default());
    let p = r.plan.as_ref().unwrap();
    assert_eq!(p.devices.len(), 1);
    let d = &p.devices[0];
    assert_eq!(d.buffer_name, "MTL0");
    assert_eq!(d.backend, "metal");
    assert_eq!(d.total, 48 * GIB);
    assert_eq!(d.free.value, 36 * GIB);
    assert_eq!(d.free.provenance, Provenance::Derived);
    assert_eq!(d.left, i128::from(36 * GIB) - i128::from(d.memory.total()));
    assert_eq!(d.left_after_margin, d.left - i128::from(1024 * MIB));
}

#[test]
fn the_wired_limit_is_a_user_figure() {
    let s = scenario(ScenarioOptions {
        device_free: Some("40960 MiB".into()),
        ..Default::default()
    });
    let d = s.machine.tiers[0].device.as_ref().unwrap();
    assert_eq!(d.free.value, 40 * GIB);
    assert_eq!(d.free.provenance, Provenance::User);
    assert_eq!(d.backend, Backend::Metal);
    let p = evaluate(&s).unwrap().plan.unwrap();
    assert_eq!(p.devices[0].free.value, 40 * GIB);
    // above the capacity: refused with the reason
    let err = edit::applied(
        &s,
        &[Edit::DeviceFree {
            tier: 0,
            bytes: 48 * GIB + 1,
        }],
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("above tier \"unified\"'s capacity")
    );
}

#[test]
fn a_24_gib_card_keeps_the_margin_and_the_cuda_context() {
    // Qwen3-32B Q4_K_M does not fit a 24 GiB card whole: -fit chooses fewer layers and keeps
    // 1024 MiB free on the device beside what the CUDA context takes.
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        ..Default::default()
    });
    let p = r.plan.as_ref().unwrap();
    let PlanOrigin::Fitted { arguments, .. } = &p.origin else {
        panic!("expected a -fit plan, got {:?}", p.origin);
    };
    assert!(arguments.starts_with("-c "), "{arguments}");
    let d = &p.devices[0];
    assert_eq!(d.buffer_name, "CUDA0");
    assert_eq!(d.free.value, 24_184 * MIB);
    assert!(d.left_after_margin >= 0, "{d:?}");
    assert!(p.gpu_layers < p.n_layer + 1, "{}", p.gpu_layers);
}

#[test]
fn fit_off_places_the_flags_as_given() {
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        fit: Some(false),
        ngl: Some("20".into()),
        ..Default::default()
    });
    let p = r.plan.as_ref().unwrap();
    assert_eq!(p.origin, PlanOrigin::FitOff);
    assert_eq!(p.gpu_layers, 20);
    // -ngl set by the user and fitting already: -fit keeps it
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        ngl: Some("20".into()),
        ..Default::default()
    });
    let p = r.plan.as_ref().unwrap();
    assert!(
        matches!(&p.origin, PlanOrigin::Fitted { arguments, .. } if arguments.ends_with("-ngl 20")),
        "{:?}",
        p.origin
    );
    // -ngl all set by the user and not fitting: -fit gives up with llama.cpp's reason and
    // llama.cpp loads the flags as given
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        ngl: Some("all".into()),
        ..Default::default()
    });
    let p = r.plan.as_ref().unwrap();
    assert!(
        matches!(p.origin, PlanOrigin::FitRefused { .. }),
        "{:?}",
        p.origin
    );
    assert_eq!(p.gpu_layers, p.n_layer + 1);
    assert!(p.devices[0].left < 0);
    assert!(!p.devices_fit);
}

#[test]
fn override_tensor_sends_matches_to_the_host() {
    let base = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        fit: Some(false),
        ngl: Some("all".into()),
        ..Default::default()
    });
    let moved = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        fit: Some(false),
        ngl: Some("all".into()),
        override_tensor: vec![r"blk\.[0-9]\.=CPU".into()],
        ..Default::default()
    });
    let (b, m) = (base.plan.unwrap(), moved.plan.unwrap());
    assert!(m.host.model.0 > b.host.model.0);
    assert_eq!(
        m.host.model.0 + m.devices[0].memory.model.0,
        b.host.model.0 + b.devices[0].memory.model.0
    );
    // an unknown buffer type is llama.cpp's error
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        override_tensor: vec![r"blk\.0\.=CUDA7".into()],
        ..Default::default()
    });
    let e = r.plan.unwrap_err();
    assert!(e.0.contains("unknown buffer type CUDA7"), "{}", e.0);
}

#[test]
fn placement_flags_are_edits_and_checked() {
    let s = scenario(ScenarioOptions::default());
    let t = edit::applied(
        &s,
        &[
            Edit::Ngl(GpuLayers::All),
            Edit::SplitMode(SplitMode::None),
            Edit::MainGpu(0),
            Edit::CpuMoe(true),
            Edit::NCpuMoe(3),
            Edit::NCpuFfn(2),
            Edit::Fit(false),
            Edit::FitTarget(vec![2048]),
            Edit::FitCtx(8192),
        ],
    )
    .unwrap();
    let o = &t.offload;
    assert_eq!(o.ngl(), GpuLayers::All);
    assert_eq!(o.split_mode, SplitMode::None);
    assert!(o.cpu_moe && o.n_cpu_moe == 3 && o.n_cpu_ffn == 2 && !o.fit);
    assert_eq!(o.fit_margins()[0].0, 2048 * MIB);
    assert_eq!(o.fit_min_ctx, 8192);
    assert!(edit::applied(&s, &[Edit::OverrideTensor(vec!["(=CPU".into()])]).is_err());
    assert!(edit::applied(&s, &[Edit::FitCtx(0)]).is_err());
    // --rpc needs as many rpc devices as endpoints
    let e = edit::applied(&s, &[Edit::Rpc(vec!["10.0.0.2:50052".into()])]).unwrap_err();
    assert!(e.to_string().contains("has 0 rpc device(s)"), "{e}");
    // -sm row is refused at the flag with llama.cpp's reason
    let cat = Catalog::builtin();
    let err = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            split_mode: Some("row".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("-sm: row"), "{err}");
}

#[test]
fn scenario_profiles_keep_the_placement_flags() {
    let cat = Catalog::builtin();
    let s = scenario(ScenarioOptions::default());
    let t = edit::applied(
        &s,
        &[
            Edit::Ngl(GpuLayers::All),
            Edit::OverrideTensor(vec![r"blk\.1\.=CPU,blk\.2\.=MTL0".into()]),
            Edit::CpuMoe(true),
            Edit::NCpuMoe(4),
            Edit::NCpuFfn(1),
            Edit::SplitMode(SplitMode::None),
            Edit::MainGpu(0),
            Edit::Fit(false),
            Edit::FitTarget(vec![512, 768]),
            Edit::FitCtx(2048),
        ],
    )
    .unwrap();
    let base = cat.scenario("default").unwrap();
    let file = llmbound::profile::save::scenario_profile(
        &base,
        &t,
        "saved",
        &base.artifact,
        &base.machine,
        &base.model,
    );
    let text = toml::to_string(&file).unwrap();
    let back: llmbound::profile::file::ScenarioFile = load::parse("saved.toml", &text).unwrap();
    load::check_scenario("saved.toml", &text, &back, None).unwrap();
    let again = load::scenario(&cat, &back).unwrap();
    assert_eq!(again.offload, t.offload);
}

#[test]
fn old_profiles_without_device_keys_load_with_derived_defaults() {
    let src = r#"
id = "old"
name = "old"
[[tier]]
name = "gpu0"
kind = "accelerator"
capacity = { value = "16 GiB", provenance = "spec" }
bandwidth = { value = "500 GB/s", provenance = "spec" }
[[tier]]
name = "host"
kind = "host"
capacity = { value = "32 GiB", provenance = "spec" }
bandwidth = { value = "50 GB/s", provenance = "spec" }
"#;
    let f: llmbound::profile::file::MachineFile = load::parse("old.toml", src).unwrap();
    let m = load::machine(&f);
    assert!(m.tiers[0].device.is_none());
    let devs = m.devices();
    assert_eq!(devs.len(), 1);
    assert_eq!(devs[0].1.buffer_name, "CUDA0");
    assert_eq!(devs[0].1.free.0, 16 * GIB);
    let d = m.tiers[0].device_or_default().unwrap();
    assert_eq!(d.free.provenance, Provenance::Derived);
}

#[test]
fn json_and_text_carry_the_plan() {
    let r = report(ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        ..Default::default()
    });
    let j = serde_json::to_value(llmbound::report::json::to_json(&r, "model.gguf")).unwrap();
    let p = &j["placement"];
    assert_eq!(p["origin"], "fit");
    assert!(p["fit_arguments"].as_str().unwrap().starts_with("-c "));
    assert_eq!(p["devices"][0]["name"], "CUDA0");
    assert_eq!(p["devices"][0]["free_bytes"], 24_184 * MIB);
    assert_eq!(p["devices"][0]["margin_bytes"], 1024 * MIB);
    assert_eq!(p["tensor_bytes"], "estimated");
    let lines = llmbound::report::text::placement_lines(&r);
    assert!(
        lines
            .iter()
            .any(|(k, v)| k == "-fit on" && v.contains("-ngl"))
    );
    assert!(lines.iter().any(|(_, v)| v.contains("ESTIMATED per layer")));
}

#[test]
fn the_two_host_rpc_preset_plans_over_both_devices() {
    let id = "rtx-4090-rpc-laptop";
    let s = scenario(ScenarioOptions {
        machine: Some(id.into()),
        rpc: Some(vec!["10.0.0.7:50052".into()]),
        ..Default::default()
    });
    let devs = s.machine.devices();
    let names: Vec<&str> = devs.iter().map(|(_, d)| d.buffer_name.as_str()).collect();
    assert_eq!(names, ["CUDA0", "RPC0[10.0.0.7:50052]"]);
    assert_eq!(devs[1].1.backend, Backend::Rpc);
    let l = &s.machine.links[0];
    assert_eq!(l.name, "10gbe");
    assert_eq!(l.tiers, ["gpu1"]);
    assert_eq!(l.bandwidth.value.0, 1.25e9);
    assert_eq!(l.bandwidth.provenance, Provenance::Spec);
    assert_eq!(l.latency_us.provenance, Provenance::Derived);
    let r = evaluate(&s).unwrap();
    let p = r.plan.as_ref().unwrap();
    assert_eq!(p.devices.len(), 2);
    assert!(p.devices.iter().all(|d| d.left_after_margin >= 0), "{p:?}");
    let lines = llmbound::report::text::inputs(&r);
    assert!(lines.iter().any(|(k, _, _, _)| k == "link 10gbe latency"));
    // --rpc must name every rpc device
    let cat = Catalog::builtin();
    let err = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            machine: Some(id.into()),
            rpc: Some(vec!["10.0.0.7:50052".into(), "10.0.0.8:50052".into()]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("has 1 rpc device(s)"), "{err}");
}

#[test]
fn a_report_left_to_fit_is_evaluated_at_the_plan() {
    // Qwen3-32B at 32k on an RTX 4090 with -ngl left at auto: the bounds are those of the
    // -ngl llama.cpp's -fit chooses, so the verdict and the plan agree.
    let out = assert_cmd::Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", tempfile::tempdir().unwrap().path())
        .args([
            "report",
            "--machine",
            "desktop-rtx-4090",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["capacity"]["fits"], true);
    assert_eq!(j["placement"]["devices_fit"], true);
    let ngl = j["settings"]["gpu_layers"].as_u64().unwrap();
    assert!(ngl < 65, "{ngl}");
    assert_eq!(j["placement"]["gpu_layers"], ngl);
    assert!(
        j["placement"]["fit_arguments"]
            .as_str()
            .unwrap()
            .ends_with(&format!("-ngl {ngl}")),
        "{}",
        j["placement"]
    );
    // -sm row: refused with llama.cpp's reason, non-zero exit, one line
    let out = assert_cmd::Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", tempfile::tempdir().unwrap().path())
        .args(["report", "--machine", "desktop-dual-rtx-3090", "-sm", "row"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-sm: row"), "{err}");
    // llama.cpp's own spellings reach the flags
    let out = assert_cmd::Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", tempfile::tempdir().unwrap().path())
        .args([
            "report",
            "--machine",
            "desktop-rtx-4090",
            "-fit",
            "off",
            "-ngl",
            "20",
            "-ot",
            r"blk\.1[0-9]\.=CPU",
            "-fitt",
            "2048",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["placement"]["origin"], "fit-off");
    assert_eq!(j["placement"]["gpu_layers"], 20);
    assert_eq!(j["placement"]["devices"][0]["margin_bytes"], 2048 * MIB);
}

#[test]
fn a_gguf_is_placed_tensor_by_tensor() {
    use llmbound::gguf::writer::{self, Data, GgufWriter};
    use llmbound::gguf::{GgmlType, Value};
    let dir = tempfile::tempdir().unwrap();
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("Tiny Llama"))
        .kv("llama.block_count", Value::U32(4))
        .kv("llama.embedding_length", Value::U32(128))
        .kv("llama.context_length", Value::U32(8192))
        .kv("llama.attention.head_count", Value::U32(8))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..2000).map(|i| format!("t{i}"))),
        )
        .tensor("token_embd.weight", GgmlType::Q8_0, &[128, 2000])
        .tensor("output_norm.weight", GgmlType::F32, &[128])
        .tensor("output.weight", GgmlType::Q6_K, &[256, 2000]);
    for l in 0..4 {
        for (n, dims) in [
            ("attn_q", [128u64, 128]),
            ("attn_k", [128, 32]),
            ("attn_v", [128, 32]),
            ("attn_output", [128, 128]),
            ("ffn_gate", [128, 512]),
            ("ffn_up", [128, 512]),
            ("ffn_down", [512, 128]),
        ] {
            w = w.tensor(&format!("blk.{l}.{n}.weight"), GgmlType::Q8_0, &dims);
        }
        w = w.tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[128]);
    }
    let p = dir.path().join("tiny-llama.gguf");
    w.write_file(&p, Data::Zeros).unwrap();
    let opts = |ot: Vec<String>| ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        gguf: Some(p.clone()),
        context: Some(4096),
        fit: Some(false),
        override_tensor: ot,
        ..Default::default()
    };
    let base = report(opts(Vec::new()));
    let inv = base.inputs.inventory.as_ref().unwrap();
    assert_eq!(inv.tensors.len(), 3 + 4 * 8);
    let plan = base.plan.as_ref().unwrap();
    assert!(plan.exact_model);
    let j = serde_json::to_value(llmbound::report::json::to_json(&base, "x.gguf")).unwrap();
    assert_eq!(j["placement"]["tensor_bytes"], "file");
    // -ot moves exactly the named tensor (its bytes padded to 32) to the host
    let moved = report(opts(vec![r"blk\.2\.ffn_up\.=CPU".into()]));
    let up = inv
        .tensors
        .iter()
        .find(|(n, _)| *n == "blk.2.ffn_up.weight")
        .unwrap()
        .1;
    let m = moved.plan.unwrap();
    assert_eq!(m.host.model.0 - plan.host.model.0, up.div_ceil(32) * 32);
    assert_eq!(
        plan.devices[0].memory.model.0 - m.devices[0].memory.model.0,
        up.div_ceil(32) * 32
    );
}

#[test]
fn the_plans_decode_ceilings_add_each_memory_and_the_rpc_link() {
    let s = scenario(ScenarioOptions {
        machine: Some("rtx-4090-rpc-laptop".into()),
        rpc: Some(vec!["10.0.0.7:50052".into()]),
        ..Default::default()
    });
    let r = evaluate(&s).unwrap();
    let p = r.plan.as_ref().unwrap();
    let c = &p.ceilings;
    assert!(!p.link_missing);
    assert!(p.reads.rpc_hops >= 1, "{:?}", p.reads);
    assert_eq!(
        c.link_bytes,
        u64::from(p.reads.rpc_hops) * p.reads.rpc_hop_bytes
    );
    let l = &s.machine.links[0];
    let link = f64::from(p.reads.rpc_hops)
        * (p.reads.rpc_hop_bytes as f64 / l.bandwidth.value.0 + l.latency_us.value / 1e6);
    assert!(
        (c.link_seconds - link).abs() <= 1e-12 * link.max(1.0),
        "{c:?}"
    );
    let mut sum = link;
    let mut max = link;
    for (d, q) in p.devices.iter().zip(&p.reads.devices) {
        assert!(q.total() > 0, "{d:?}");
        let t = q.total() as f64 / s.machine.tiers[d.tier].headline_bandwidth().value.0;
        sum += t;
        max = max.max(t);
    }
    let host = s
        .machine
        .tiers
        .iter()
        .find(|t| t.kind == llmbound::core::scenario::TierKind::Host)
        .unwrap();
    let h = p.reads.host.total() as f64 / host.headline_bandwidth().value.0;
    sum += h;
    max = max.max(h);
    assert!((c.seconds_per_step - sum).abs() <= 1e-9 * sum, "{c:?}");
    assert!(
        (c.seconds_per_step_overlapped - max).abs() <= 1e-9 * max,
        "{c:?}"
    );
    assert!(c.overlapped_tokens_per_second > c.tokens_per_second);
    // A result carries the least certain provenance among its inputs, in the order
    // user < spec < derived < measured < file (SPEC §1, `Provenance::weakest`, as
    // `decode::ceiling` combines its tiers): the desktop GPU's bandwidth and the link's
    // bandwidth are spec figures, the laptop GPU, the host and the link's latency derived,
    // so the ceilings are spec (an optimistic vendor ceiling), not derived.
    let mut inputs = vec![l.bandwidth.provenance, l.latency_us.provenance];
    inputs.push(host.headline_bandwidth().provenance);
    for d in &p.devices {
        inputs.push(s.machine.tiers[d.tier].headline_bandwidth().provenance);
    }
    assert_eq!(Provenance::weakest(inputs), Some(Provenance::Spec));
    assert_eq!(c.provenance, Provenance::Spec);
    let j = serde_json::to_value(llmbound::report::json::placement_json(&r)).unwrap();
    let cj = &j["ceilings"];
    assert_eq!(cj["link_bytes_per_token"], c.link_bytes);
    assert_eq!(cj["link_missing"], false);
    assert_eq!(cj["sum_tokens_per_second"], c.tokens_per_second);
    assert_eq!(
        j["devices"][0]["read_bytes_per_token"],
        p.reads.devices[0].total()
    );
    let text = llmbound::report::text::placement_lines(&r);
    assert!(
        text.iter()
            .any(|(k, v)| k == "decode ceiling" && v.contains("sum bound"))
    );
}

/// The explorer and `report` evaluate a scenario the same way (`compare::evaluation`): on the
/// RTX 4090 with the placement left to llama.cpp, both judge the `-fit` plan's `-ngl 55`,
/// never all 65 layers (which do not fit the 24 GiB device).
#[test]
fn the_explorer_and_report_judge_the_rtx_4090_default_scenario_alike() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        ..Default::default()
    };
    let cat = Catalog::load_with(Some(dir.path().to_path_buf()));
    let ws = llmbound::workspace::Workspace::new(cat.clone(), &opts).unwrap();
    let r = ws.report();
    assert!(llmbound::compare::left_to_fit(ws.scenario()));
    // All layers do not fit: a whole-layer evaluation would say "does not fit".
    assert!(!evaluate(ws.scenario()).unwrap().capacity.fits);
    assert!(r.capacity.fits, "{:?}", r.capacity.verdict);
    assert_eq!(r.inputs.offload.gpu_layers, Some(55));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"))
        .args([
            "report",
            "--machine",
            "desktop-rtx-4090",
            "--format",
            "json",
        ])
        .env("LLMBOUND_CONFIG_DIR", dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["capacity"]["fits"], true);
    assert_eq!(
        j["capacity"]["headroom_bytes"].as_i64().map(i128::from),
        Some(r.capacity.headroom_bytes)
    );
    // serde_json reads floats to within an ulp or two
    let highest = j["decode"]["highest"]["tokens_per_second"]
        .as_f64()
        .unwrap();
    assert!((highest - r.decode.highest.tokens_per_second).abs() <= 1e-12 * highest);
    assert_eq!(j["placement"]["gpu_layers"], 55);
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"))
        .args(["report", "--machine", "desktop-rtx-4090"])
        .env("LLMBOUND_CONFIG_DIR", dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let verdict = llmbound::report::words::verdict(&r.capacity);
    assert!(text.contains(&verdict), "{verdict}\n{text}");
    // The explorer's Bounds pane draws that verdict under a ✓.
    let app = llmbound::tui::app::App::new(cat, &opts).unwrap();
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 36)).unwrap();
    t.draw(|f| f.render_widget(&app, f.area())).unwrap();
    let screen = t.backend().to_string();
    assert!(screen.contains("✓ fits"), "{screen}");
    // A claim is judged against the same evaluation, the plan's placement ceilings among
    // its lines.
    let c = llmbound::core::check_claim(r, 1.0);
    assert!(c.lines.iter().any(|l| matches!(
        l.kind,
        llmbound::core::decode::CeilingKind::Placement { overlap: false }
    ) && l.tokens_per_second
        == r.plan.as_ref().unwrap().ceilings.tokens_per_second));
}

/// `-c 0` (llama.cpp's default when `-c` is not given): the trained context, which `-fit`
/// reduces on the 24 GiB RTX 4090 (one device: the context first, by linear interpolation,
/// rounded down to 256 tokens, not below `-fitc`) and keeps every layer; report, check and
/// the explorer evaluate at that context.
#[test]
fn context_zero_lets_fit_reduce_the_trained_context() {
    let s = scenario(ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        context: Some(0),
        ..Default::default()
    });
    assert!(s.offload.context_auto);
    let trained = s.model.native_context.unwrap();
    assert_eq!(s.cache.context, trained);
    let first = evaluate(&s).unwrap();
    let p = first.plan.as_ref().unwrap();
    let PlanOrigin::Fitted { arguments, .. } = &p.origin else {
        panic!("{:?}", p.origin)
    };
    let chosen = u64::from(p.n_ctx);
    assert!(
        chosen < trained && chosen >= 4096 && chosen % 256 == 0,
        "{arguments}"
    );
    assert!(
        arguments.starts_with(&format!("-c {chosen} ")),
        "{arguments}"
    );
    // the same scenario with -c set to the trained context: -fit keeps it, drops layers
    let set = evaluate(&scenario(ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        context: Some(trained),
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(u64::from(set.plan.as_ref().unwrap().n_ctx), trained);
    // the one evaluation runs at -fit's context, every layer on the device
    let r = llmbound::compare::evaluation(&s).unwrap();
    assert_eq!(r.inputs.cache.context, chosen);
    assert!(r.capacity.fits, "{:?}", r.capacity.verdict);
    assert_eq!(
        r.layout.gpu_layers,
        llmbound::core::tiers::all_gpu_layers(&s.model)
    );
    // a model that states no trained context cannot take -c 0
    let e = edit::applied(&s, &[Edit::NativeContext(0), Edit::Context(0)]).unwrap_err();
    assert!(e.to_string().contains("states no trained context"), "{e}");
    // a context typed afterwards is set again (-fit keeps it)
    let t = edit::applied(&s, &[Edit::Context(8192)]).unwrap();
    assert!(!t.offload.context_auto);
    assert_eq!(evaluate(&t).unwrap().plan.unwrap().n_ctx, 8192);
}

/// A full-size sparse copy of a committed llama.cpp oracle header: the tensor list llama.cpp
/// placed, at the file's size.
fn shaped_gguf(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join(format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let out = dir.join(format!("{name}.gguf"));
    std::fs::copy(
        fixtures.join(json["model"]["header"].as_str().unwrap()),
        &out,
    )
    .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&out)
        .unwrap()
        .set_len(json["model"]["file_size"].as_u64().unwrap())
        .unwrap();
    out
}

/// Issue 22's measured case through `report`: a Qwen3-30B-A3B-shaped file at 32k on one
/// 16 GiB card. The placement is llama.cpp's `-fit` plan (`-ngl 49 -ot …`, experts of the
/// last layers in host memory), and the bounds are evaluated at that plan: the tiers' weights
/// and the decode ceilings equal the placement's own rows. On a CUDA card the expert ops in
/// host memory run on the card (op offload: each expert tensor copied in, 108 MiB) beside the
/// logits: 344.77 MiB of compute and the plan `-ot "blk\.34\.ffn_down…"`. (llama.cpp's own
/// plan on a 16 GiB llvmpipe Vulkan device, whose output weight is over its tensor limit so the
/// logits are the host's, keeps one more layer's experts, `blk\.35\.ffn_down…`, and llmbound
/// prints that one for such a device.)
#[test]
fn report_prints_llama_cpps_ot_plan_for_a_moe_model_on_a_16_gib_card() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let run = |extra: &[&str]| {
        let (cmd, extra) = match extra.first() {
            Some(&"compare") => ("compare", &extra[1..]),
            _ => ("report", extra),
        };
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"))
            .arg(cmd)
            .arg("--gguf")
            .arg(&gguf)
            .args([
                "--machine",
                "desktop-rtx-4090",
                "--memory",
                "16GiB",
                "--device-free",
                "16GiB",
                "-c",
                "32768",
            ])
            .args(extra)
            .env("LLMBOUND_CONFIG_DIR", dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let j: serde_json::Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    let p = &j["placement"];
    assert_eq!(p["origin"], "fit", "{p}");
    let args = p["fit_arguments"].as_str().unwrap();
    assert!(
        args.starts_with("-c 32768 -ngl 49 -ot \"blk\\.34\\."),
        "{args}"
    );
    assert_eq!(p["gpu_layers"], 49);
    assert_eq!(p["devices_fit"], true);
    // the bounds: at the plan (all 49 layers, the experts its -ot names on the host)
    assert_eq!(j["settings"]["gpu_layers"], 49, "{}", j["settings"]);
    let text = run(&[]);
    assert!(
        text.contains("llama.cpp's -fit chooses -c 32768 -ngl 49 -ot"),
        "{text}"
    );
    assert!(!text.contains("bounds above"), "{text}");
    // the tier's weights are the placement's model bytes (11,784.34 MiB = 11.508 GiB), the
    // inventory ceiling at 32k the placement's sum bound
    assert!(
        text.contains("tier gpu0              48 layers + output: W 11.614 GiB"),
        "{text}"
    );
    assert!(
        text.contains("CUDA0 (gpu0, cuda)     model 11,892.48 MiB"),
        "{text}"
    );
    assert!(
        text.contains("32,768 tokens (inv.)   128.65 tokens/s"),
        "{text}"
    );
    assert!(text.contains("sum bound 128.65 tok/s"), "{text}");
    assert!(text.contains("overlap bound 216.78 tok/s"), "{text}");
    // the buffers line is the placement's compute summed over the tiers (CUDA0 344.77 MiB:
    // the logits beside an expert tensor's copy; host 48.02 MiB), not the CPU model's single
    // figure (348.77 MiB)
    assert!(
        text.contains("compute 411,865,088 bytes = 392.79 MiB summed over the tiers below"),
        "{text}"
    );
    // compare's row: llama.cpp's plan, which it is evaluated at
    let c: serde_json::Value = serde_json::from_str(&run(&[
        "compare",
        "--machine",
        "desktop-rtx-3090",
        "--format",
        "json",
    ]))
    .unwrap();
    let row = &c["machines"][0];
    let placement = row["placement"].as_str().unwrap_or_default();
    assert!(placement.starts_with("-fit -c 32768 -ngl 49 -ot "), "{c}");
}

/// `--memory` on a device follows through to what the backend reports free, unless the user
/// gave that too: a CUDA card keeps back what its profile's figure keeps back (the context),
/// Metal's working set keeps its share. A 16 GiB edit of the RTX 4090 read "free to cuda
/// 23.617 GiB" beside "memory 16.000 GiB".
#[test]
fn an_edited_capacity_moves_the_device_free_figure_with_it() {
    let s = |machine: &str, memory: &str, free: Option<&str>| {
        scenario(ScenarioOptions {
            machine: Some(machine.into()),
            memory: Some(memory.into()),
            device_free: free.map(Into::into),
            ..Default::default()
        })
    };
    let base = scenario(ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        ..Default::default()
    });
    let d0 = base.machine.tiers[0].device.clone().unwrap();
    let kept = base.machine.tiers[0].capacity.value - d0.free.value;
    let cuda = s("desktop-rtx-4090", "16GiB", None);
    let d = cuda.machine.tiers[0].device.as_ref().unwrap();
    assert_eq!(d.free.value, 16 * GIB - kept);
    assert_eq!(d.free.provenance, Provenance::Derived);
    assert!(d.free.source.contains("keeps back"), "{}", d.free.source);
    let mac = s("macbook-pro-m4-pro-48gb", "64GiB", None);
    let d = mac.machine.tiers[0].device.as_ref().unwrap();
    assert_eq!(d.free.value, 48 * GIB);
    // a figure the user gave stays as given
    let given = s("desktop-rtx-4090", "16GiB", Some("12GiB"));
    let d = given.machine.tiers[0].device.as_ref().unwrap();
    assert_eq!(d.free.value, 12 * GIB);
    assert_eq!(d.free.provenance, Provenance::User);
}

/// Without devices `-fit` still runs, against system memory: `-c 0` on a CPU-only machine
/// whose 16 GiB cannot hold the Llama-3.1-8B shape's 131,072-token cache gets a reduced
/// context (llama.cpp's `common_fit_params` with no device), and the report is evaluated there;
/// with room to spare the plan keeps the context; the flags' own `-c` is not reduced. As in
/// llama.cpp, the projection leaves out the weights in `CPU_REPACK` (this shape's Q4_0 matrices
/// on x86-64), so the context it keeps leaves the host short, which the report says
/// (tests/fit_host.rs checks the same rule against llama.cpp's own runs).
#[test]
fn fit_reduces_the_context_on_a_machine_without_devices() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "llama-3.1-8b-shape");
    let on = |memory: &str, context: u64| {
        scenario(ScenarioOptions {
            machine: Some("epyc-zen5-2vcpu-vm".into()),
            memory: Some(memory.into()),
            tier: Some("host".into()),
            gguf: Some(gguf.clone()),
            context: Some(context),
            ..Default::default()
        })
    };
    let s = on("16 GiB", 0);
    let p = evaluate(&s).unwrap().plan.unwrap();
    let PlanOrigin::Fitted { arguments, .. } = &p.origin else {
        panic!("{:?}", p.origin)
    };
    assert!(
        p.n_ctx < 131_072 && p.n_ctx.is_multiple_of(256),
        "{arguments}"
    );
    // llama.cpp's projection (without CPU_REPACK) keeps its 1 GiB margin; the host does not
    assert!(p.host_repack > 3 << 30, "{}", p.host_repack);
    assert!(
        p.host.total() - p.host_repack + (1 << 30) <= 16 << 30,
        "{arguments}"
    );
    assert_eq!(p.fit_left_out_repack(), Some(p.host_repack));
    let r = llmbound::compare::evaluation(&s).unwrap();
    assert_eq!(r.inputs.cache.context, u64::from(p.n_ctx));
    assert!(!r.capacity.fits, "{:?}", r.capacity.verdict);
    let lines = llmbound::report::text::placement_lines(&r);
    assert!(
        lines
            .iter()
            .any(|(_, v)| v.contains("leaves the") && v.contains("CPU_REPACK")),
        "{lines:?}"
    );
    // the context is llama.cpp's choice, and the worksheet says so
    let rows = llmbound::report::text::inputs(&r);
    let cache = rows.iter().find(|row| row.0 == "cache").unwrap();
    assert_eq!(cache.2, Provenance::Derived);
    assert!(
        cache.3.contains("-fit reduced the trained context 131,072"),
        "{}",
        cache.3
    );
    let roomy = evaluate(&on("64 GiB", 0)).unwrap().plan.unwrap();
    assert_eq!(roomy.n_ctx, 131_072);
    assert!(matches!(roomy.origin, PlanOrigin::Fitted { .. }));
    // -c set: -fit cannot reduce it and gives up, as llama.cpp does
    let set = evaluate(&on("16 GiB", 131_072)).unwrap().plan.unwrap();
    assert!(
        matches!(set.origin, PlanOrigin::FitRefused { .. }),
        "{:?}",
        set.origin
    );
}
