//! How a llama-bench row becomes a scenario: user overrides, placement, retained length, and
//! rows that cannot be evaluated.

use llmbound::bench::{self, BenchOptions, BenchRow, TestKind};
use llmbound::build::{self, ScenarioOptions};
use llmbound::core::Scenario;
use llmbound::core::units::Provenance;
use llmbound::profile::{Catalog, load};

fn scenario(id: &str) -> Scenario {
    let cat = Catalog::builtin();
    load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap()
}

/// One row of llama-bench JSON with `fields` replacing the defaults (a tg128 of the synthetic
/// Qwen3-8B file on one GPU).
fn row(fields: &str) -> BenchRow {
    let mut v: serde_json::Value = serde_json::json!({
        "build_commit": "0c1e570", "backends": "CUDA", "gpu_info": "NVIDIA H200",
        "model_size": 8_703_561_728u64, "model_n_params": 8_190_735_360u64,
        "n_batch": 2048, "n_ubatch": 512, "n_threads": 16, "type_k": "f16", "type_v": "f16",
        "n_gpu_layers": 99, "n_cpu_moe": 0, "split_mode": "layer", "main_gpu": 0,
        "no_kv_offload": false, "flash_attn": 1, "tensor_split": "0.00",
        "tensor_buft_overrides": "none", "n_prompt": 0, "n_gen": 128, "n_depth": 0,
        "avg_ts": 100.0, "samples_ts": [100.0]
    });
    let extra: serde_json::Value = serde_json::from_str(fields).unwrap();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    bench::parse_str("row.json", &format!("[{v}]"))
        .unwrap()
        .remove(0)
}

/// `--bandwidth` replaces the tier's figures with a user figure: the ceilings follow it.
#[test]
fn bandwidth_override_applies() {
    let mut s = scenario("qwen3-8b-synth-h200");
    let o = ScenarioOptions {
        bandwidth: Some("100 GB/s".into()),
        ..Default::default()
    };
    build::apply(&mut s, &o).unwrap();
    let r = bench::evaluate(&[row("{}")], &s, &BenchOptions::default());
    let b = r.bandwidth.as_ref().unwrap();
    assert_eq!(
        (b.bytes_per_second, b.provenance),
        (100e9, Provenance::User)
    );
    let d = r.rows[0].decode.as_ref().unwrap();
    // Without a GGUF: file bytes 8,703,585,952 + 64 × 147,456 = 8,713,023,136 B at 100 GB/s
    // = 11.48 t/s, far below the observed 100 t/s, but no inventory: undecided.
    let c = d.ceiling_without_inventory.as_ref().unwrap();
    assert_eq!(c.step_bytes, 8_713_023_136);
    assert!(
        (c.tokens_per_second - 11.477).abs() < 0.01,
        "{}",
        c.tokens_per_second
    );
    assert!(!d.within_ceiling && !d.impossible);
    assert_eq!(r.rows_above_without_inventory, 1);
}

/// The retained length is the mean over the run: n_depth + n_gen / 2.
#[test]
fn retained_mean_and_test_kinds() {
    let s = scenario("qwen3-8b-synth-h200");
    let rows = [
        row(r#"{"n_gen": 5, "n_depth": 100}"#),
        row(r#"{"n_prompt": 512, "n_gen": 0, "n_depth": 4096, "avg_ts": 9000.0}"#),
        row(r#"{"n_prompt": 512, "n_gen": 128, "avg_ts": 900.0}"#),
    ];
    let r = bench::evaluate(&rows, &s, &BenchOptions::default());
    assert_eq!(r.rows[0].test, TestKind::Generation);
    assert_eq!(r.rows[0].retained_tokens, Some(102));
    assert_eq!(r.rows[1].test, TestKind::Prompt);
    assert_eq!(r.rows[1].retained_tokens, Some(4608));
    assert_eq!(r.rows[1].name, "pp512 @ d4096");
    assert_eq!(r.rows[2].test, TestKind::Combined);
    assert!(r.rows[2].decode.is_none());
    let present: Vec<_> = r
        .record_present
        .iter()
        .map(|f| (f.field.as_str(), f.value.clone()))
        .collect();
    assert!(
        present.contains(&(
            "prompt and generated lengths",
            Some("tg5, pp512, pp512+tg128; depths 100, 4,096, 0".into())
        )),
        "{present:?}"
    );
    assert!(!r.record_missing.iter().any(|f| f.field == "runtime commit"));
}

/// `-ngl` counts the output layer: 0 keeps everything in host memory, −1 or ≥ L + 1 is all.
#[test]
fn gpu_layers_place_the_model() {
    let s = scenario("qwen3-32b-rtx-4090-partial");
    let cat = Catalog::builtin();
    let w = cat.model("qwen3-32b").unwrap().artifacts[0].bytes;
    let size = w - 5_000_000; // tensor bytes: the file less its header
    let base = format!(
        r#"{{"model_size": {size}, "model_n_params": 32762123264, "gpu_info": "NVIDIA GeForce RTX 4090", "avg_ts": 1.0}}"#
    );
    let with = |ngl: i64| {
        let mut x = row(&base);
        x.n_gpu_layers = Some(ngl);
        let r = bench::evaluate(&[x], &s, &BenchOptions::default());
        assert!(r.artifacts[0].matches, "{}", r.artifacts[0].detail);
        r.rows[0]
            .decode
            .as_ref()
            .unwrap()
            .file_ceiling
            .tokens_per_second
    };
    let (none, some, all, all_minus_one) = (with(0), with(40), with(65), with(-1));
    assert!(none < some && some < all, "{none} {some} {all}");
    assert_eq!(all, all_minus_one);
    assert_eq!(with(99), all);
}

/// A CPU-backend run on a machine with a GPU counts every layer in host memory.
#[test]
fn cpu_backend_run_on_a_gpu_machine() {
    let s = scenario("qwen3-32b-rtx-4090-partial");
    let cat = Catalog::builtin();
    let w = cat.model("qwen3-32b").unwrap().artifacts[0].bytes;
    let fields = format!(
        r#"{{"model_size": {}, "model_n_params": 32762123264, "backends": "CPU", "gpu_info": "", "n_gpu_layers": 99}}"#,
        w - 5_000_000
    );
    let cpu = bench::evaluate(&[row(&fields)], &s, &BenchOptions::default());
    assert!(
        cpu.rows[0].notes.iter().any(|n| n.contains("CPU backend")),
        "{:?}",
        cpu.rows[0].notes
    );
    let mut gpu_row = row(&fields);
    gpu_row.backends = Some("CUDA".into());
    gpu_row.n_gpu_layers = Some(0);
    let host_only = bench::evaluate(&[gpu_row], &s, &BenchOptions::default());
    let f = |r: &bench::BenchReport| {
        r.rows[0]
            .decode
            .as_ref()
            .unwrap()
            .file_ceiling
            .tokens_per_second
    };
    assert_eq!(f(&cpu), f(&host_only));
}

/// A row that cannot be evaluated is reported with its reason; the others still are.
#[test]
fn a_bad_row_does_not_stop_the_others() {
    let s = scenario("qwen3-8b-synth-h200");
    let rows = [row(r#"{"type_k": "q3_k"}"#), row("{}")];
    let r = bench::evaluate(&rows, &s, &BenchOptions::default());
    assert!(
        r.rows[0].error.as_deref().unwrap().contains("\"q3_k\""),
        "{:?}",
        r.rows[0].error
    );
    assert!(r.rows[1].decode.is_some());
    let mut text = Vec::new();
    bench::write_text(&r, &mut text).unwrap();
    assert!(String::from_utf8(text).unwrap().contains("not evaluated"));
}

/// A machine profile without a host tier cannot hold what the run kept in host memory.
#[test]
fn partial_offload_without_a_host_tier_is_noted() {
    let s = scenario("qwen3-8b-synth-h200");
    let r = bench::evaluate(
        &[row(r#"{"n_gpu_layers": 20}"#)],
        &s,
        &BenchOptions::default(),
    );
    assert!(
        r.notes.iter().any(|n| n.text.contains("no host tier")),
        "{:?}",
        r.notes
    );
}

/// Auto flash attention is a field the record lacks.
#[test]
fn flash_attention_auto_is_not_a_recorded_setting() {
    let s = scenario("qwen3-8b-synth-h200");
    let r = bench::evaluate(
        &[row(r#"{"flash_attn": -1, "build_commit": "unknown"}"#)],
        &s,
        &BenchOptions::default(),
    );
    let missing: Vec<&str> = r.record_missing.iter().map(|f| f.field.as_str()).collect();
    assert!(missing.contains(&"flash-attention setting"), "{missing:?}");
    assert!(missing.contains(&"runtime commit"));
    let with_hash = bench::evaluate(
        &[row("{}")],
        &s,
        &BenchOptions {
            gguf: Some("x.gguf".into()),
            artifact_sha256: Some("ab".repeat(32)),
        },
    );
    assert!(
        !with_hash
            .record_missing
            .iter()
            .any(|f| f.field == "artifact hash")
    );
}
