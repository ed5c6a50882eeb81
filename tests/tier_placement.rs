//! The tiers follow the tensor placement (issue 22): when the flags move single tensors
//! (`-ot`, `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, a fitted plan applied as flags) the
//! capacity verdict, each tier's W and the decode bytes per tier are the placement's, the same
//! the report's Placement section prints; whole-layer placements keep the whole-layer rule,
//! and on the committed llama.cpp shapes the two agree wherever they describe the same thing.

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::{self, Edit};
use llmbound::core::placement::{self, Buffer, TensorLayer};
use llmbound::core::scenario::TierKind;
use llmbound::core::tiers::{self, WeightsMode};
use llmbound::core::weights::ExpertCount;
use llmbound::core::{Report, Scenario, evaluate};
use llmbound::profile::Catalog;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp")
}

/// A full-size copy of a committed llama.cpp oracle header (the tensors past its end sparse).
fn shaped_gguf(dir: &Path, name: &str) -> PathBuf {
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join(format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let size = json["model"]["file_size"].as_u64().unwrap();
    let header = fixtures().join(json["model"]["header"].as_str().unwrap());
    let out = dir.join(format!("{name}.gguf"));
    std::fs::copy(&header, &out).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&out)
        .unwrap()
        .set_len(size)
        .unwrap();
    out
}

/// llama.cpp b11434's own `-fit` choice for the Qwen3-30B-A3B shape on one 16 GiB device at
/// 32k (the placement fixture): `-ngl 49` and the `-ot` list that sends 14 layers' experts
/// (and one layer's `ffn_down`) to the host.
fn fitted_ot() -> String {
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("placement/qwen3-30b-a3b-shape.json")).unwrap(),
    )
    .unwrap();
    let args = json["cases"][0]["arguments"].as_str().unwrap();
    assert!(args.contains("-ngl 49 -ot "), "{args}");
    let ot = args.split("-ot ").nth(1).unwrap().trim().trim_matches('"');
    assert_eq!(ot.split(',').count(), 15, "{ot}");
    ot.to_string()
}

fn moe_16_gib(gguf: &Path) -> ScenarioOptions {
    ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        memory: Some("16 GiB".into()),
        device_free: Some("16 GiB".into()),
        gguf: Some(gguf.to_path_buf()),
        context: Some(32768),
        ..Default::default()
    }
}

fn scenario(o: &ScenarioOptions) -> Scenario {
    llmbound::workspace::scenario(&Catalog::builtin(), o).unwrap()
}

fn tier(r: &Report, kind: TierKind) -> usize {
    r.tiers.iter().position(|t| t.kind == kind).unwrap()
}

/// Bytes (as stored) of the tensors `place` puts in host memory, routed experts apart.
fn host_tensor_bytes(s: &Scenario) -> (u64, u64) {
    let devs = s.machine.devices();
    let devices: Vec<_> = devs.iter().map(|(_, d)| d.clone()).collect();
    let settings = s.offload.placement_settings(&devices).unwrap();
    let model = llmbound::core::plan::placement_model(s);
    let ctx = placement::scenario_context(s)(llmbound::core::plan::total_context(s));
    let p = placement::place(&model, &ctx, &devices, &settings).unwrap();
    let exps = placement::cpu_moe();
    let (mut experts, mut rest) = (0u64, 0u64);
    for (t, b) in model.tensors.iter().zip(&p.tensor_buffer) {
        if *b != Buffer::Host {
            continue;
        }
        if matches!(t.layer, TensorLayer::Layer(_)) && exps.matches(&t.name) {
            experts += t.bytes;
        } else {
            rest += t.bytes;
        }
    }
    (experts, rest)
}

#[test]
fn the_fitted_ot_placement_fits_and_its_tiers_are_the_placements() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let mut o = moe_16_gib(&gguf);
    o.fit = Some(false);
    o.gpu_layers = Some(49);
    o.override_tensor = vec![fitted_ot()];
    let s = scenario(&o);
    let r = evaluate(&s).unwrap();
    let plan = r.plan.as_ref().unwrap();
    assert_eq!(plan.devices.len(), 1);
    assert!(plan.devices_fit, "{plan:?}");
    assert_eq!(plan.host_short(), None);
    // the verdict is the placement's: it fits (whole layers said gpu0 was 3.173 GiB short)
    assert!(r.capacity.fits, "{:?}", r.capacity.verdict);
    let (gpu, host) = (tier(&r, TierKind::Accelerator), tier(&r, TierKind::Host));
    // W per tier is the placement's model bytes, and so is the rest of its runtime memory
    assert_eq!(r.tiers[gpu].weights_bytes, plan.devices[0].memory.model.0);
    assert_eq!(r.tiers[host].weights_bytes, plan.host.model.0);
    let m = &r.tiers[gpu].memory;
    assert_eq!(m.context_bytes, plan.devices[0].memory.context.0);
    assert_eq!(m.compute_bytes, plan.devices[0].memory.compute.0);
    assert_eq!(r.tiers[host].memory.compute_bytes, plan.host.compute.0);
    assert_eq!(r.tiers[gpu].layers, 48);
    assert!(r.tiers[gpu].output);
    // every layer's cache stays on the device
    assert_eq!(r.tiers[gpu].kv_bytes, r.kv.total_bytes());
    // the decode split: the host reads what it holds — file mode every stored byte of its
    // tensors (and the file's bytes outside tensors), inventory mode its experts at the
    // expected fraction and one embedding row
    let (host_experts, host_rest) = host_tensor_bytes(&s);
    assert!(host_experts > 4 * (1 << 30), "{host_experts}");
    let split = &r.split;
    let outside = s.weight_bytes()
        - s.inventory
            .as_ref()
            .unwrap()
            .tensors
            .iter()
            .map(|(_, b)| b)
            .sum::<u64>();
    let short = &r.decode.short_context;
    assert_eq!(short.tier_bytes[host], host_experts + outside);
    assert_eq!(
        host_rest, split.embedding,
        "only the token embedding besides"
    );
    assert_eq!(
        short.tier_bytes.iter().sum::<u64>(),
        s.weight_bytes(),
        "file mode reads every file byte once"
    );
    let inv = r.decode.inventory_short_context.as_ref().unwrap();
    let moe = s.model.moe.unwrap();
    let frac = llmbound::core::weights::expert_fraction(
        moe.experts,
        moe.experts_used,
        1,
        ExpertCount::Expected,
    );
    assert_eq!(
        inv.tier_bytes[host],
        (host_experts as f64 * frac).round() as u64 + split.embedding_row
    );
    // the same figures from step_bytes itself
    let q = tiers::step_bytes(
        &s,
        &r.layout,
        split,
        WeightsMode::File,
        ExpertCount::Expected,
        0,
    );
    assert_eq!(q, short.tier_bytes);
}

/// The CLI's report with llama.cpp's fitted flags: the headline and the tier lines agree with
/// the Placement section under them.
#[test]
fn the_cli_report_with_the_fitted_flags_agrees_with_its_placement() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let out = assert_cmd::Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", dir.path().join("none"))
        .env("NO_COLOR", "1")
        .args([
            "report",
            "--machine",
            "desktop-rtx-4090",
            "--memory",
            "16 GiB",
            "--device-free",
            "16 GiB",
            "--context",
            "32768",
            "--fit",
            "off",
            "--ngl",
            "49",
            "-ot",
            &fitted_ot(),
            "--format",
            "json",
            "--gguf",
        ])
        .arg(&gguf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &j["capacity"];
    assert_eq!(c["fits"], true, "{c}");
    let tiers = c["tiers"].as_array().unwrap();
    let gpu = tiers.iter().find(|t| t["name"] == "gpu0").unwrap();
    let host = tiers.iter().find(|t| t["name"] == "host").unwrap();
    let p = &j["placement"];
    assert_eq!(
        gpu["weights_bytes"],
        p["devices"][0]["memory"]["model_bytes"]
    );
    assert_eq!(host["weights_bytes"], p["host"]["model_bytes"]);
    assert_eq!(
        gpu["memory"]["total_bytes"],
        p["devices"][0]["memory"]["total_bytes"]
    );
    // the experts on the host are read there: more than 4 GiB of the step on the host
    let q = j["decode"]["short_context"]["tier_bytes"]
        .as_array()
        .unwrap();
    assert!(q[1].as_u64().unwrap() > 4 << 30, "{q:?}");
    assert!(q[0].as_u64().unwrap() < 12 << 30, "{q:?}");
}

/// Whole layers by the `-ot` path: an override that matches no tensor makes the tiers read the
/// tensor placement, which on every committed llama.cpp shape puts the layers, the output
/// layer and the caches on the same tiers as the whole-layer rule, holds the same cache and
/// logical KV per tier; over all tiers the stored bytes are the file's (less its bytes outside
/// tensors, which are in no buffer), and file-mode decode bytes are equal in total and on
/// every such tier (but for `token_embd_norm`, which llama.cpp creates with layer 0).
#[test]
fn whole_layers_by_tensor_equal_the_whole_layer_rule_on_the_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().to_string();
            n.strip_suffix("-shape.json").map(|b| format!("{b}-shape"))
        })
        .collect();
    names.sort();
    assert!(names.len() >= 30, "{names:?}");
    let mut checked = 0;
    for name in &names {
        let gguf = shaped_gguf(dir.path(), name);
        let base = llmbound::workspace::scenario(
            &Catalog::builtin(),
            &ScenarioOptions {
                machine: Some("desktop-dual-rtx-3090".into()),
                gguf: Some(gguf.clone()),
                context: Some(4096),
                fit: Some(false),
                ..Default::default()
            },
        );
        let Ok(base) = base else {
            continue;
        };
        if base.inventory.as_ref().is_none_or(|i| i.tensors.is_empty()) {
            continue;
        }
        // an encoder–decoder file names its layers `enc.blk.N` / `dec.blk.N`, and WavTokenizer
        // `posnet.N` / `convnext.N`; the tensor placement reads only `blk.N` as layers (its
        // whole-layer split does): not compared
        if matches!(base.model.architecture.as_str(), "t5" | "t5encoder")
            || !llmbound::core::plan::placement_model(&base)
                .tensors
                .iter()
                .any(|t| t.name.starts_with("blk."))
        {
            continue;
        }
        let layer_0_extra: u64 = llmbound::core::plan::placement_model(&base)
            .tensors
            .iter()
            .filter(|t| t.layer == TensorLayer::Layer(0) && !t.name.starts_with("blk."))
            .map(|t| t.bytes)
            .sum();
        let all = tiers::all_gpu_layers(&base.model);
        for ngl in [0, all / 2, all] {
            let whole = edit::applied(
                &base,
                &[
                    Edit::GpuLayers(Some(ngl)),
                    Edit::TensorSplit(Some(vec![1.0, 1.0])),
                ],
            )
            .unwrap();
            let by_tensor = edit::applied(
                &whole,
                &[Edit::OverrideTensor(vec!["^no_such_tensor$=CPU".into()])],
            )
            .unwrap();
            let lw = tiers::layout(&whole);
            let lt = tiers::layout(&by_tensor);
            let at = format!("{name} -ngl {ngl}");
            assert!(lw.tensors.is_none(), "{at}");
            let t = lt.tensors.as_ref().expect("placed by tensor");
            assert_eq!(lw.layer_tier, lt.layer_tier, "{at}");
            assert_eq!(lw.output_tier, lt.output_tier, "{at}");
            assert_eq!(lw.kv_tier, lt.kv_tier, "{at}");
            assert_eq!(lw.embedding_tier, lt.embedding_tier, "{at}");
            assert_eq!(lw.other_tier, lt.other_tier, "{at}");
            assert_eq!(lw.gpu_layers, lt.gpu_layers, "{at}");
            assert_eq!(lw.offloaded_layers, lt.offloaded_layers, "{at}");
            let split = tiers::weight_split(&whole);
            let kv = llmbound::core::kv::cache(&whole.model, &whole.cache);
            let buf = tiers::buffers(&whole, &whole.cache, &kv);
            let mw = tiers::memory(&whole, &lw, &split, &kv, &buf);
            let mt = tiers::memory(&by_tensor, &lt, &split, &kv, &buf);
            let ldw = tiers::loads(&whole, &lw, &split, &kv, &buf);
            let ldt = tiers::loads(&by_tensor, &lt, &split, &kv, &buf);
            let qw = |m| tiers::step_bytes(&whole, &lw, &split, m, ExpertCount::Expected, 4096);
            let qt = |m| tiers::step_bytes(&by_tensor, &lt, &split, m, ExpertCount::Expected, 4096);
            let (fw, ft) = (qw(WeightsMode::File), qt(WeightsMode::File));
            for ti in 0..whole.machine.tiers.len() {
                assert_eq!(mw[ti].context_bytes, mt[ti].context_bytes, "{at} tier {ti}");
                assert_eq!(mw[ti].output_bytes, mt[ti].output_bytes, "{at} tier {ti}");
                assert_eq!(mw[ti].user_bytes, mt[ti].user_bytes, "{at} tier {ti}");
                assert_eq!(ldw[ti].kv_bytes, ldt[ti].kv_bytes, "{at} tier {ti}");
                assert_eq!(ldw[ti].layers, ldt[ti].layers, "{at} tier {ti}");
                let layers_only = ti != lw.output_tier && ti != lw.embedding_tier;
                if layers_only {
                    // the same tensors, each padded to 32 bytes in llama.cpp's buffer
                    let stored: u64 = (0..split.layer.len())
                        .filter(|il| lw.layer_tier[*il] == ti)
                        .map(|il| split.layer[il])
                        .sum();
                    assert_eq!(mw[ti].model_bytes, stored, "{at} tier {ti}");
                    assert!(mt[ti].model_bytes >= stored, "{at} tier {ti}");
                    // llama.cpp creates `token_embd_norm` with layer 0 (the whole-layer
                    // rule counts it with the file's other tensors, on the host)
                    let with_layer_0 = if lw.layer_tier.first() == Some(&ti) {
                        layer_0_extra
                    } else {
                        0
                    };
                    assert_eq!(
                        fw[ti] + with_layer_0,
                        ft[ti],
                        "{at} tier {ti}: file-mode bytes"
                    );
                }
            }
            let padded: u64 = mt.iter().map(|m| m.model_bytes).sum();
            // a tied output in host memory beside the embedding is the embedding's tensor
            // (`dense_bytes` counts what the output projection reads)
            let shared =
                if split.tied && lw.output_tier == lw.embedding_tier && !split.tied_host_copy {
                    split.embedding
                } else {
                    0
                };
            let stored: u64 = t.dense_bytes.iter().sum::<u64>()
                + t.expert_bytes.iter().sum::<u64>()
                + t.input_bytes.iter().sum::<u64>()
                - shared;
            assert!(padded >= stored, "{at}");
            assert_eq!(
                fw.iter().sum::<u64>(),
                ft.iter().sum::<u64>(),
                "{at}: file-mode bytes in total"
            );
            assert_eq!(
                ft.iter().sum::<u64>() - kv_read(&whole, 4096),
                whole.weight_bytes(),
                "{at}: file mode reads every file byte once"
            );
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} placements checked");
}

/// Cache bytes read per step at `n` over all tiers (file mode less the weights).
fn kv_read(s: &Scenario, n: u64) -> u64 {
    let lay = tiers::layout(s);
    let split = tiers::weight_split(s);
    let with = tiers::step_bytes(s, &lay, &split, WeightsMode::File, ExpertCount::Expected, n);
    let without = tiers::step_bytes(s, &lay, &split, WeightsMode::File, ExpertCount::Expected, 0);
    with.iter().sum::<u64>() - without.iter().sum::<u64>()
}

/// For any placement by flags (`-fit off` with `-ngl`, `-ot`, `--cpu-moe`, `--n-cpu-moe`,
/// `--n-cpu-ffn`), one device or two, at short and long contexts: the Bounds verdict over the
/// device tiers is the Devices view's (every device's `left` ≥ 0), and when the flags place by
/// tensor each device tier holds the plan's model + context + compute exactly and fits exactly
/// when its device does.
#[test]
fn the_bounds_verdict_and_the_devices_verdict_agree() {
    let dir = tempfile::tempdir().unwrap();
    let moe = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let dense = shaped_gguf(dir.path(), "qwen3-32b-shape");
    let mut cases: Vec<(String, ScenarioOptions)> = Vec::new();
    let ot = fitted_ot();
    for ctx in [4096u64, 32768, 131072] {
        let one = |f: &dyn Fn(&mut ScenarioOptions)| {
            let mut o = moe_16_gib(&moe);
            o.fit = Some(false);
            o.context = Some(ctx);
            f(&mut o);
            o
        };
        let two = |f: &dyn Fn(&mut ScenarioOptions)| {
            let mut o = ScenarioOptions {
                machine: Some("desktop-dual-rtx-3090".into()),
                gguf: Some(dense.clone()),
                context: Some(ctx),
                fit: Some(false),
                ..Default::default()
            };
            f(&mut o);
            o
        };
        for ngl in [10u32, 30, 49] {
            cases.push((
                format!("moe {ctx} -ngl {ngl}"),
                one(&|o| o.gpu_layers = Some(ngl)),
            ));
            cases.push((
                format!("moe {ctx} -ngl {ngl} -ot fitted"),
                one(&|o| {
                    o.gpu_layers = Some(ngl);
                    o.override_tensor = vec![ot.clone()];
                }),
            ));
            cases.push((
                format!("moe {ctx} -ngl {ngl} --cpu-moe"),
                one(&|o| {
                    o.gpu_layers = Some(ngl);
                    o.cpu_moe = true;
                }),
            ));
            for n in [8u32, 24, 40] {
                cases.push((
                    format!("moe {ctx} -ngl {ngl} --n-cpu-moe {n}"),
                    one(&|o| {
                        o.gpu_layers = Some(ngl);
                        o.n_cpu_moe = Some(n);
                    }),
                ));
            }
        }
        for ngl in [20u32, 65] {
            for n in [0u32, 16, 40] {
                cases.push((
                    format!("dense {ctx} -ngl {ngl} --n-cpu-ffn {n}"),
                    two(&|o| {
                        o.gpu_layers = Some(ngl);
                        o.n_cpu_ffn = (n > 0).then_some(n);
                    }),
                ));
            }
            cases.push((
                format!("dense {ctx} -ngl {ngl} -ot CUDA1"),
                two(&|o| {
                    o.gpu_layers = Some(ngl);
                    o.override_tensor = vec!["blk\\.(1|2|3)\\.ffn_.*=CUDA1".into()];
                }),
            ));
        }
    }
    let (mut fits, mut short) = (0, 0);
    for (at, o) in &cases {
        let s = scenario(o);
        let r = evaluate(&s).unwrap();
        let plan = r.plan.as_ref().unwrap();
        let placed_by_tensor = r.layout.tensors.is_some();
        let mut all = true;
        for d in &plan.devices {
            let t = &r.tiers[d.tier];
            all &= t.memory.fits;
            if placed_by_tensor {
                assert_eq!(
                    t.memory.total_bytes,
                    d.memory.total(),
                    "{at}: {}",
                    d.tier_name
                );
                assert_eq!(t.memory.fits, d.left >= 0, "{at}: {}", d.tier_name);
            }
        }
        // whole layers charge each tier the CPU-model compute figure, not the plan's per
        // device; in this grid no case sits close enough to the edge for that to part them
        assert_eq!(all, plan.devices_fit, "{at}");
        if placed_by_tensor {
            if all {
                fits += 1;
            } else {
                short += 1;
            }
        }
    }
    // both verdicts occur in the grid
    assert!(fits > 5 && short > 5, "{fits} fit, {short} short");
}

/// Nothing fits (the host too small for what `-fit` leaves it): the report is at llama.cpp's
/// own plan, so its verdict names the host, not the devices that whole layers would overfill.
#[test]
fn when_nothing_fits_the_report_is_at_llama_cpps_plan() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = shaped_gguf(dir.path(), "qwen3-30b-a3b-shape");
    let s = scenario(&moe_16_gib(&gguf));
    let host = tier(&evaluate(&s).unwrap(), TierKind::Host);
    let s = edit::applied(
        &s,
        &[Edit::Capacity {
            tier: host,
            bytes: 2 << 30,
        }],
    )
    .unwrap();
    let r = llmbound::compare::evaluation(&s).unwrap();
    let plan = r.plan.as_ref().unwrap();
    assert!(!plan.overrides.is_empty(), "{:?}", plan.origin);
    assert!(plan.devices_fit);
    assert!(!r.capacity.fits);
    // the Placement section and the Devices view say by how much
    let over = plan.host.total() - (2u64 << 30);
    assert_eq!(plan.host_short(), Some(over));
    let gpu = tier(&r, TierKind::Accelerator);
    // the tiers are the plan's: the device holds what -fit gave it, the host the rest
    assert_eq!(r.tiers[gpu].weights_bytes, plan.devices[0].memory.model.0);
    assert_eq!(r.tiers[host].weights_bytes, plan.host.model.0);
    let v = &r.capacity.verdict;
    let text = format!("{v:?}");
    assert!(text.contains("host") && !text.contains("gpu0"), "{text}");
}
