//! Placement on several tiers (docs/bounds.md §6): llama.cpp's -ngl counts the output layer, the token
//! embedding stays in host memory, KV lives with its layer unless -nkvo, layers split across
//! accelerators run one after another (the sum bound).

use llmbound::build::ScenarioOptions;
use llmbound::core::evaluate;
use llmbound::profile::Catalog;

fn report(o: ScenarioOptions) -> llmbound::core::Report {
    let cat = Catalog::builtin();
    evaluate(&llmbound::workspace::scenario(&cat, &o).unwrap()).unwrap()
}

fn on_4090(ngl: Option<u32>) -> ScenarioOptions {
    ScenarioOptions {
        scenario: Some("qwen3-32b-rtx-4090-partial".into()),
        gpu_layers: ngl,
        ..Default::default()
    }
}

#[test]
fn ngl_counts_the_output_layer() {
    let r = report(on_4090(Some(50)));
    let gpu = &r.tiers[0];
    let host = &r.tiers[1];
    assert_eq!(gpu.layers, 49);
    assert!(gpu.output && !gpu.embedding);
    assert_eq!(host.layers, 15);
    assert!(host.embedding && !host.output);
    // ngl 1 = only the output layer
    let r = report(on_4090(Some(1)));
    assert_eq!(r.tiers[0].layers, 0);
    assert!(r.tiers[0].output);
    // ngl 0 = nothing on the GPU
    let r = report(on_4090(Some(0)));
    assert!(!r.tiers[0].used);
    assert_eq!(r.tiers[1].layers, 64);
    // ngl >= L + 1 = all
    let r = report(on_4090(Some(999)));
    assert_eq!(r.tiers[0].layers, 64);
    assert_eq!(r.layout.gpu_layers, 65);
}

#[test]
fn kv_follows_its_layer_unless_nkvo() {
    let r = report(on_4090(Some(50)));
    let per_layer = r.kv.per_layer[0].bytes;
    assert_eq!(r.tiers[0].kv_bytes, 49 * per_layer);
    assert_eq!(r.tiers[1].kv_bytes, 15 * per_layer);
    let mut o = on_4090(Some(50));
    o.no_kv_offload = true;
    let r = report(o);
    assert_eq!(r.tiers[0].kv_bytes, 0);
    assert_eq!(r.tiers[1].kv_bytes, 64 * per_layer);
}

#[test]
fn weights_are_conserved_across_tiers() {
    for ngl in [0, 1, 20, 50, 65] {
        let r = report(on_4090(Some(ngl)));
        let placed: u64 = r.tiers.iter().map(|t| t.weights_bytes).sum();
        assert_eq!(placed, r.capacity.weights_bytes, "ngl {ngl}");
        let kv: u64 = r.tiers.iter().map(|t| t.kv_bytes).sum();
        assert_eq!(kv, r.capacity.kv_bytes, "ngl {ngl}");
    }
}

#[test]
fn more_layers_on_the_gpu_never_lower_the_ceiling() {
    let mut last = 0.0;
    for ngl in 0..=65 {
        let r = report(on_4090(Some(ngl)));
        let t = r.decode.full_context.tokens_per_second;
        assert!(t >= last - 1e-9, "ngl {ngl}: {t} < {last}");
        last = t;
    }
}

#[test]
fn sum_and_overlap_bounds() {
    let r = report(on_4090(Some(50)));
    let c = &r.decode.full_context;
    let tiers = &r.inputs.machine.tiers;
    let t0 = c.tier_bytes[0] as f64 / tiers[0].bandwidth.value.0;
    let t1 = c.tier_bytes[1] as f64 / tiers[1].bandwidth.value.0;
    assert!((c.seconds_per_step - (t0 + t1)).abs() < 1e-12);
    assert!((c.seconds_per_step_overlapped - t0.max(t1)).abs() < 1e-12);
    assert!(c.overlapped_tokens_per_second > c.tokens_per_second);
}

#[test]
fn two_gpus_split_layers_and_sum() {
    let o = ScenarioOptions {
        machine: Some("desktop-dual-rtx-3090".into()),
        model: Some("llama-3.3-70b-instruct".into()),
        artifact_bytes: Some("42520000000".into()),
        context: Some(8192),
        tensor_split: Some(vec![3.0, 1.0]),
        ..Default::default()
    };
    let r = report(o);
    let (g0, g1) = (&r.tiers[0], &r.tiers[1]);
    // 81 offloaded pieces (80 layers + output) split 3:1 by cumulative fraction.
    assert_eq!(g0.layers, 61);
    assert_eq!(g1.layers, 19);
    assert!(g1.output);
    assert!(!g0.fits || g0.weights_bytes > g1.weights_bytes);
    let c = &r.decode.short_context;
    let secs: f64 = c
        .tier_bytes
        .iter()
        .zip(&r.inputs.machine.tiers)
        .map(|(b, t)| *b as f64 / t.bandwidth.value.0)
        .sum();
    assert!((c.seconds_per_step - secs).abs() < 1e-12);
}

#[test]
fn a_full_gpu_is_reported_per_tier() {
    let r = report(on_4090(Some(65)));
    assert!(!r.capacity.fits);
    assert_eq!(r.capacity.limiting_tier, "gpu0");
    assert!(
        llmbound::report::words::verdict(&r.capacity).starts_with("does not fit: gpu0 is short by")
    );
}

fn gemma_with_inventory(tied: bool, machine: &str) -> llmbound::core::Scenario {
    use llmbound::core::weights::Inventory;
    let cat = Catalog::builtin();
    let mut s = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            scenario: Some("gemma-3-270m-cpu-vm".into()),
            machine: Some(machine.into()),
            ..Default::default()
        },
    )
    .unwrap();
    s.model.tied_embeddings = tied;
    let layer = 5_000_000u64;
    let inv = Inventory {
        tensor_bytes: 18 * layer + 178_257_920 + 2_560 + if tied { 0 } else { 178_257_920 },
        parameters: 268_098_176,
        embedding_bytes: 178_257_920,
        embedding_row_bytes: 680,
        embedding_elements: 262_144 * 640,
        embedding_type: None,
        tied_output: tied,
        output_bytes: 2_560 + if tied { 0 } else { 178_257_920 },
        layer_bytes: vec![layer; 18],
        layer_routed_expert_bytes: vec![0; 18],
        other_bytes: 0,
        linear_dense_elements: 1,
        linear_dense_bytes: 1,
        linear_expert_elements: 0,
        feed_forward: Default::default(),
        tensors: Default::default(),
    };
    s.weights[0].bytes.value = inv.tensor_bytes + 4_000_000; // header and padding
    s.inventory = Some(inv);
    s
}

#[test]
fn file_mode_reads_w_and_inventory_mode_matches_the_reference() {
    use llmbound::core::weights::{ExpertCount, inventory_read_bytes};
    for tied in [true, false] {
        let s = gemma_with_inventory(tied, "epyc-zen5-2vcpu-vm");
        let r = evaluate(&s).unwrap();
        assert_eq!(
            r.decode.short_context.step_bytes,
            s.weight_bytes(),
            "tied {tied}"
        );
        let inv = s.inventory.as_ref().unwrap();
        let want = inventory_read_bytes(inv, None, 1, ExpertCount::Expected);
        assert_eq!(
            r.decode
                .inventory_short_context
                .as_ref()
                .unwrap()
                .step_bytes,
            want,
            "tied {tied}"
        );
        // a tied matrix is read in full as the output projection
        if tied {
            assert_eq!(want, 18 * 5_000_000 + 2_560 + 178_257_920);
        } else {
            assert_eq!(want, 18 * 5_000_000 + 2_560 + 178_257_920 + 680);
        }
    }
}

#[test]
fn tied_matrix_is_copied_to_the_output_tier() {
    let s = gemma_with_inventory(true, "desktop-rtx-4090");
    let r = evaluate(&s).unwrap();
    let (gpu, host) = (&r.tiers[0], &r.tiers[1]);
    assert!(gpu.output && host.embedding);
    assert_eq!(gpu.weights_bytes, 18 * 5_000_000 + 2_560 + 178_257_920);
    assert_eq!(host.weights_bytes, 178_257_920 + 4_000_000);
    // file mode still reads each file byte once; inventory mode reads the GPU copy in full
    // and one row from the host copy
    assert_eq!(r.decode.short_context.step_bytes, s.weight_bytes());
    let inv = r.decode.inventory_short_context.as_ref().unwrap();
    assert_eq!(inv.tier_bytes[0], 18 * 5_000_000 + 2_560 + 178_257_920);
    assert_eq!(inv.tier_bytes[1], 680);
}

/// The output layer in host memory beside the embedding: one tensor (the x86 CPU does not
/// repack Q8_0/Q6_K, the usual type of a tied embedding), two copies on Apple silicon's CPU,
/// which repacks them; the tiers and the Placement section agree.
#[test]
fn tied_matrix_in_host_memory_is_copied_only_when_the_cpu_repacks_it() {
    let file = 18 * 5_000_000 + 2_560 + 178_257_920 + 4_000_000;
    for (machine, ngl, copies) in [
        ("epyc-zen5-2vcpu-vm", None, 1),
        ("desktop-rtx-4090", Some(0), 1),
        ("macbook-pro-m4-pro-48gb", Some(0), 2),
        ("macbook-pro-m4-pro-48gb", None, 1),
    ] {
        let mut s = gemma_with_inventory(true, machine);
        s.offload.gpu_layers = ngl;
        let r = evaluate(&s).unwrap();
        let w: u64 = r.tiers.iter().map(|t| t.weights_bytes).sum();
        let extra = if copies == 2 { 178_257_920 } else { 0 };
        let at = format!("{machine} -ngl {ngl:?}");
        if ngl == Some(0) || r.tiers.len() == 1 {
            assert_eq!(w, file + extra, "{at}");
        }
        if let Ok(p) = &r.plan
            && ngl == Some(0)
        {
            // the placement's host (no tensor list here: estimated per layer) holds the same
            let stored = 18 * 5_000_000 + 2_560 + 178_257_920;
            let host = p.host.model.0;
            assert!(
                host >= stored + extra && host < stored + extra + 4096,
                "{at}: {host}"
            );
        }
    }
}
