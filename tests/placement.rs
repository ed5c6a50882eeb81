//! Placement on several tiers (SPEC §6): llama.cpp's -ngl counts the output layer, the token
//! embedding stays in host memory, KV lives with its layer unless -nkvo, layers split across
//! accelerators run one after another (the sum bound).

use llmbound::build::{self, ScenarioOptions};
use llmbound::core::evaluate;
use llmbound::profile::Catalog;

fn report(o: ScenarioOptions) -> llmbound::core::Report {
    let cat = Catalog::builtin();
    evaluate(&build::scenario(&cat, &o).unwrap()).unwrap()
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
        r.capacity
            .verdict
            .starts_with("does not fit: gpu0 is short by")
    );
}
