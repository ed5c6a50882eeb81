//! The real llama-bench runs of shared/data (copied to tests/fixtures/bench): every decode row
//! must come out below its highest ceiling, and each ceiling equals a figure worked out by hand.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::bench::{self, BenchOptions, BenchReport, BenchRow, TestKind};
use llmbound::core::Scenario;
use llmbound::core::decode::CeilingKind;
use llmbound::core::units::Provenance;
use llmbound::gguf;
use llmbound::profile::{Catalog, load};
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

/// A header-only GGUF copy grown back to the artifact's size (sparse: no disk used).
fn full_size_copy(header: &Path, bytes: u64, dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(header, &p).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    p
}

/// The built-in scenario with the GGUF's model shape, inventory and exact size, as `--gguf`
/// builds it (`llmbound::workspace::open_gguf` + `llmbound::workspace::with_gguf`).
fn scenario_with_gguf(id: &str, gguf_path: &Path) -> Scenario {
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap();
    let g = llmbound::workspace::open_gguf(&cat, gguf_path).unwrap();
    assert_eq!(g.artifact().missing_bytes(), 0);
    llmbound::workspace::with_gguf(&mut s, &g).unwrap();
    s
}

fn load_all(files: &[&str]) -> Vec<BenchRow> {
    files
        .iter()
        .flat_map(|f| bench::load(fixture(f)).unwrap())
        .collect()
}

/// `actual` rounded to three significant figures equals `hand` (written to three figures).
fn assert_3sf(what: &str, actual: f64, hand: f64) {
    let rounded: f64 = format!("{actual:.2e}").parse().unwrap();
    assert_eq!(
        rounded, hand,
        "{what}: computed {actual}, worked out by hand {hand}"
    );
}

fn print_efficiencies(title: &str, r: &BenchReport) {
    eprintln!("{title}");
    eprintln!(
        "  {:<18} {:>9} {:>6} {:>10} {:>10} {:>12} {:>10} {:>14} {:>10}",
        "test", "K/V", "thr", "observed", "best", "ceiling", "eff.", "headline ceil.", "eff."
    );
    for x in r.rows.iter().filter(|x| x.test == TestKind::Generation) {
        let d = x.decode.as_ref().unwrap();
        let c = d.ceiling.as_ref().unwrap();
        let h = d.headline_ceiling.as_ref().unwrap();
        eprintln!(
            "  {:<18} {:>9} {:>6} {:>10.2} {:>10.2} {:>12.2} {:>9.1}% {:>14.2} {:>9.1}%",
            x.name,
            format!("{}/{}", x.type_k, x.type_v),
            x.n_threads.unwrap_or(0),
            x.observed_tokens_per_second,
            x.best_sample_tokens_per_second.unwrap(),
            c.tokens_per_second,
            d.efficiency.unwrap() * 100.0,
            h.tokens_per_second,
            d.headline_efficiency.unwrap() * 100.0
        );
    }
}

fn gemma_gguf(dir: &Path) -> PathBuf {
    match std::env::var_os("LLMBOUND_GEMMA_GGUF") {
        Some(p) => PathBuf::from(p),
        None => {
            eprintln!(
                "note: LLMBOUND_GEMMA_GGUF is unset; using the committed header-only copy of the real file"
            );
            full_size_copy(
                &fixture("cpu/gemma-3-270m-q4_k_m.gguf-header"),
                253_113_024,
                dir,
                "gemma-3-270m-q4_k_m.gguf",
            )
        }
    }
}

const GEMMA_FILES: [&str; 4] = [
    "cpu/gemma3-270m_t1_f16.json",
    "cpu/gemma3-270m_t1_q8_0.json",
    "cpu/gemma3-270m_t2_f16.json",
    "cpu/gemma3-270m_t2_q8_0.json",
];

fn gemma_report() -> BenchReport {
    let dir = tempfile::tempdir().unwrap();
    let path = gemma_gguf(dir.path());
    let s = scenario_with_gguf("gemma-3-270m-cpu-vm", &path);
    let rows = load_all(&GEMMA_FILES);
    assert_eq!(rows.len(), 24);
    let opts = BenchOptions {
        gguf: Some("gemma-3-270m-q4_k_m.gguf".into()),
        artifact_sha256: None,
    };
    bench::evaluate(&rows, &s, &opts)
}

/// The committed header copy is the real file's header: same inventory and shape.
#[test]
fn gemma_header_copy_matches_the_real_file() {
    let Some(real) = std::env::var_os("LLMBOUND_GEMMA_GGUF") else {
        skipped!(
            "note: LLMBOUND_GEMMA_GGUF is unset; the header copy was not compared with the real file"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = full_size_copy(
        &fixture("cpu/gemma-3-270m-q4_k_m.gguf-header"),
        253_113_024,
        dir.path(),
        "copy.gguf",
    );
    let a = gguf::open(&real).unwrap();
    let b = gguf::open(&copy).unwrap();
    assert_eq!(
        gguf::TensorInventory::from_artifact(&a).to_core_inventory(),
        gguf::TensorInventory::from_artifact(&b).to_core_inventory()
    );
    assert_eq!(
        gguf::model_shape(&a, "g").unwrap(),
        gguf::model_shape(&b, "g").unwrap()
    );
}

// gemma-3-270m Q4_K_M on the 2-vCPU Zen 5 VM.
//
// Bytes per token, inventory mode (from the tensor list of the real file):
//   Σ tensor bytes (llama-bench model_size)            246,587,904
//   of which token_embd.weight Q8_0, 640 × 262,144:
//     167,772,160 elements × 34/32                     178,257,920
//   The embedding is tied: the same matrix is the output projection, read in full every
//   token, so no separate one-row lookup is added. Nothing else is skipped (dense model),
//   so W_read = 246,587,904 bytes.
// KV per token per layer: 1 KV head × 256 dims × (K + V):
//   f16  256 × 2 × 2      = 1,024 bytes
//   q8_0 256 × 34/32 × 2  =   544 bytes
// Retained mean over a tg128 run: n_depth + 128/2 = n_depth + 64 tokens.
// Cells read: 15 sliding layers × min(N, 512) + 3 global layers × N:
//   d0      N = 64:      18 × 64              =  1,152 cells
//   d4096   N = 4,160:   15 × 512 + 3 × 4,160 = 20,160 cells
//   d16384  N = 16,448:  15 × 512 + 3 × 16,448 = 57,024 cells
// Bandwidth: the profile `epyc-zen5-2vcpu-vm` states 64.5 GB/s, provenance "measured" (the
// highest quiet-machine Sum2(RO) figure on record, 2 threads; no vendor figure for a VM), so
// it is both the headline and the highest bandwidth.
//   f16  d0:     246,587,904 +  1,152 × 1,024 = 247,767,552 B → 64.5e9 / that = 260.3 → 260 t/s
//   f16  d4096:  246,587,904 + 20,160 × 1,024 = 267,231,744 B →                241.4 → 241 t/s
//   f16  d16384: 246,587,904 + 57,024 × 1,024 = 304,980,480 B →                211.49 → 211 t/s
//   q8_0 d0:     246,587,904 +  1,152 × 544   = 247,214,592 B →                260.9 → 261 t/s
//   q8_0 d4096:  246,587,904 + 20,160 × 544   = 257,554,944 B →                250.4 → 250 t/s
//   q8_0 d16384: 246,587,904 + 57,024 × 544   = 277,608,960 B →                232.3 → 232 t/s
#[test]
fn gemma_cpu_every_decode_row_below_its_hand_worked_ceiling() {
    let r = gemma_report();
    print_efficiencies(
        "gemma-3-270m Q4_K_M, 2-vCPU Zen 5 VM, 64.5 GB/s (measured, highest on record)",
        &r,
    );
    let hand = |t: &str, d: u64| -> (u64, f64) {
        match (t, d) {
            ("f16", 0) => (247_767_552, 260.0),
            ("f16", 4096) => (267_231_744, 241.0),
            ("f16", 16384) => (304_980_480, 211.0),
            ("q8_0", 0) => (247_214_592, 261.0),
            ("q8_0", 4096) => (257_554_944, 250.0),
            ("q8_0", 16384) => (277_608_960, 232.0),
            _ => panic!("unexpected row {t} d{d}"),
        }
    };
    let mut tg = 0;
    for x in &r.rows {
        assert!(x.error.is_none(), "{}: {:?}", x.name, x.error);
        assert!(x.artifact_matches, "{}", x.name);
        match x.test {
            TestKind::Generation => {
                tg += 1;
                assert_eq!(x.retained_tokens, Some(x.n_depth + 64));
                let d = x.decode.as_ref().unwrap();
                let c = d
                    .ceiling
                    .as_ref()
                    .expect("an inventory gives the highest ceiling");
                let (bytes, tps) = hand(&x.type_k, x.n_depth);
                assert_eq!(
                    c.weight_read_bytes, 246_587_904,
                    "{}: W_read must count the tied token_embd (178,257,920 bytes) once, as the output projection",
                    x.name
                );
                assert_eq!(c.step_bytes, bytes, "{} {}", x.name, x.type_k);
                assert_3sf(
                    &format!("{} {} ceiling", x.name, x.type_k),
                    c.tokens_per_second,
                    tps,
                );
                assert_eq!(c.bandwidth.bytes_per_second, 64.5e9);
                assert_eq!(c.bandwidth.provenance, Provenance::Measured);
                assert!(
                    d.within_ceiling && !d.impossible,
                    "{}: {}",
                    x.name,
                    bench::text::row_verdict(d)
                );
                assert!(d.exceeded.is_empty(), "{}: {:?}", x.name, d.exceeded);
                assert!(d.assumptions.is_empty());
                // File mode reads all 253,113,024 file bytes: a lower ceiling.
                assert_eq!(d.file_ceiling.weight_read_bytes, 253_113_024, "{}", x.name);
                assert!(d.file_ceiling.tokens_per_second < c.tokens_per_second);
                let e = d.efficiency.unwrap();
                assert!(e > 0.1 && e < 1.0, "{}: efficiency {e}", x.name);
            }
            TestKind::Prompt => {
                let p = x.prefill.as_ref().unwrap();
                assert_eq!(p.prompt_rows, 512);
                assert!(p.ceiling_tokens_per_second.is_none());
                assert_eq!(
                    p.bound,
                    llmbound::core::roofline::PrefillBound::NoComputeRate,
                    "{:?}",
                    p.bound
                );
                assert!(p.intensity > 0.0);
            }
            TestKind::Combined => unreachable!("the CPU runs have no pg rows"),
        }
    }
    assert_eq!(tg, 12);
    assert_eq!(r.impossible_rows, 0);
    assert_eq!(r.rows_above_lower_ceiling, 0);
    assert_eq!(r.exit_code(), 0);
    let b = r.bandwidth.as_ref().unwrap();
    assert_eq!(
        (b.bytes_per_second, b.provenance),
        (64.5e9, Provenance::Measured)
    );
}

fn h200_report(files: &[&str]) -> (BenchReport, Scenario) {
    let dir = tempfile::tempdir().unwrap();
    let path = full_size_copy(
        &fixture("h200/qwen3-8b-q8_0-synth.gguf-header"),
        8_703_585_952,
        dir.path(),
        "qwen3-8b-q8_0-synth.gguf",
    );
    let s = scenario_with_gguf("qwen3-8b-synth-h200", &path);
    let rows = load_all(files);
    let opts = BenchOptions {
        gguf: Some("qwen3-8b-q8_0-synth.gguf".into()),
        artifact_sha256: None,
    };
    (bench::evaluate(&rows, &s, &opts), s)
}

// The Qwen3-8B-shaped synthetic Q8_0 file fully offloaded on one H200.
//
// Bytes per token, inventory mode (tensor list of the header):
//   Σ tensor bytes (llama-bench model_size)                8,703,561,728
//   − token_embd.weight Q8_0, 4,096 × 151,936 × 34/32        661,225,472
//   + one embedding row (untied: a lookup), 4,096 × 34/32          4,352
//   = W_read                                               8,042,340,608
// KV per token: 36 layers × 8 KV heads × 128 dims × 2 (K + V) × e:
//   f16  × 2 bytes   = 147,456 bytes
//   q8_0 × 34/32     =  78,336 bytes
// Retained mean: n_depth + 64 → 64, 8,256, 32,832 tokens (no sliding window).
// Bandwidth: the profile `h200-measured` has the vendor's 4.8 TB/s (spec) and a measured
// 4,354.1 GB/s read-only reduction. The highest on record is the vendor's 4.8 TB/s: the
// measured figure is below the peak, so only the peak can call a rate impossible.
//   f16  d0:     8,042,340,608 +     64 × 147,456 =  8,051,777,792 B → 4.8e12 / that = 596.1 → 596 t/s
//   f16  d8192:  8,042,340,608 +  8,256 × 147,456 =  9,259,737,344 B →                 518.4 → 518 t/s
//   f16  d32768: 8,042,340,608 + 32,832 × 147,456 = 12,883,616,000 B →                 372.6 → 373 t/s
//   q8_0 d0:     8,042,340,608 +     64 ×  78,336 =  8,047,354,112 B →                 596.5 → 596 t/s
//   q8_0 d8192:  8,042,340,608 +  8,256 ×  78,336 =  8,689,082,624 B →                 552.4 → 552 t/s
//   q8_0 d32768: 8,042,340,608 + 32,832 ×  78,336 = 10,614,268,160 B →                 452.2 → 452 t/s
// At the measured 4,354.1 GB/s (the headline), the same bytes: 540.8, 470.2, 338.0, 541.1,
// 501.1, 410.2 t/s → 541, 470, 338, 541, 501, 410.
#[test]
fn h200_every_decode_row_below_its_hand_worked_ceiling() {
    let (r, _) = h200_report(&["h200/bench_f16.json", "h200/bench_q8_0.json"]);
    print_efficiencies(
        "Qwen3-8B-shaped Q8_0, one H200, 4.8 TB/s (spec, highest on record)",
        &r,
    );
    let hand = |t: &str, d: u64| -> (u64, f64, f64) {
        match (t, d) {
            ("f16", 0) => (8_051_777_792, 596.0, 541.0),
            ("f16", 8192) => (9_259_737_344, 518.0, 470.0),
            ("f16", 32768) => (12_883_616_000, 373.0, 338.0),
            ("q8_0", 0) => (8_047_354_112, 596.0, 541.0),
            ("q8_0", 8192) => (8_689_082_624, 552.0, 501.0),
            ("q8_0", 32768) => (10_614_268_160, 452.0, 410.0),
            _ => panic!("unexpected row {t} d{d}"),
        }
    };
    let mut tg = 0;
    for x in &r.rows {
        assert!(x.error.is_none(), "{}: {:?}", x.name, x.error);
        assert!(x.artifact_matches);
        match x.test {
            TestKind::Generation => {
                tg += 1;
                let d = x.decode.as_ref().unwrap();
                let c = d.ceiling.as_ref().unwrap();
                let (bytes, tps, headline) = hand(&x.type_k, x.n_depth);
                assert_eq!(c.weight_read_bytes, 8_042_340_608);
                assert_eq!(c.step_bytes, bytes, "{} {}", x.name, x.type_k);
                assert_3sf(
                    &format!("{} {} ceiling", x.name, x.type_k),
                    c.tokens_per_second,
                    tps,
                );
                assert_eq!(c.bandwidth.bytes_per_second, 4.8e12);
                assert_eq!(c.bandwidth.provenance, Provenance::Spec);
                let h = d.headline_ceiling.as_ref().unwrap();
                assert_3sf(
                    &format!("{} {} at the measured bandwidth", x.name, x.type_k),
                    h.tokens_per_second,
                    headline,
                );
                assert_eq!(h.bandwidth.provenance, Provenance::Measured);
                assert!(
                    d.within_ceiling && !d.impossible,
                    "{}: {}",
                    x.name,
                    bench::text::row_verdict(d)
                );
                assert!(d.exceeded.is_empty(), "{}: {:?}", x.name, d.exceeded);
            }
            TestKind::Prompt => {
                let p = x.prefill.as_ref().unwrap();
                let c = p
                    .ceiling_tokens_per_second
                    .expect("the H200 profile has an fp16 rate");
                assert_eq!(&*p.compute_path, "fp16");
                assert!(
                    p.within_ceiling == Some(true),
                    "{}: {} > {c}",
                    x.name,
                    x.observed_tokens_per_second
                );
            }
            TestKind::Combined => unreachable!(),
        }
    }
    assert_eq!(tg, 6);
    assert_eq!(r.impossible_rows, 0);
    // The README's "about 45% of the ceiling from the measured bandwidth" at depth 0, f16.
    let d0 = r
        .rows
        .iter()
        .find(|x| x.name == "tg128" && x.type_k == "f16")
        .unwrap();
    let he = d0.decode.as_ref().unwrap().headline_efficiency.unwrap();
    assert!((0.44..0.45).contains(&he), "{he}");
    let b = r.bandwidth.as_ref().unwrap();
    assert_eq!(
        (b.bytes_per_second, b.provenance),
        (4.8e12, Provenance::Spec)
    );
    let h = r.headline_bandwidth.as_ref().unwrap();
    assert_eq!(h.provenance, Provenance::Measured);
    assert!(
        (h.bytes_per_second - 4_354.1e9).abs() < 1.0,
        "{}",
        h.bytes_per_second
    );
}

#[test]
fn record_fields_the_files_lack_are_listed_not_invented() {
    let (r, _) = h200_report(&["h200/bench_f16.json"]);
    let missing: Vec<&str> = r.record_missing.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(
        missing,
        ["artifact hash", "runtime commit", "peak resident memory"]
    );
    let commit = &r.record_missing[1];
    assert!(commit.note.contains("\"unknown\""), "{}", commit.note);
    let present: Vec<&str> = r.record_present.iter().map(|f| f.field.as_str()).collect();
    for f in [
        "runtime",
        "layers on the accelerator",
        "prompt and generated lengths",
        "batch and concurrency",
        "K/V cache types",
        "flash-attention setting",
        "prompt-processing rate",
        "generation rate",
    ] {
        assert!(present.contains(&f), "{f} not in {present:?}");
    }
    let mut json = Vec::new();
    bench::write_json(&r, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        v["missing_record_fields"],
        serde_json::json!(["artifact hash", "runtime commit", "peak resident memory"])
    );
}

/// A generation row doctored above its highest ceiling is a falsification; one between the
/// measured-bandwidth ceiling and the vendor-peak ceiling is only above a lower ceiling.
#[test]
fn doctored_rows_above_ceilings() {
    let (_, s) = h200_report(&["h200/bench_f16.json"]);
    let rows = bench::load(fixture("h200/bench_f16.json")).unwrap();
    let mut tg = rows
        .iter()
        .find(|x| x.test() == TestKind::Generation && x.n_depth == 0)
        .unwrap()
        .clone();
    let opts = BenchOptions::default();

    // 700 t/s > 596.1 t/s (inventory bytes at 4.8 TB/s, 64 tokens): impossible.
    tg.avg_ts = 700.0;
    tg.samples_ts = vec![700.0];
    let r = bench::evaluate(std::slice::from_ref(&tg), &s, &opts);
    let d = r.rows[0].decode.as_ref().unwrap();
    let verdict = bench::text::row_verdict(d);
    assert!(d.impossible && !d.within_ceiling, "{verdict}");
    assert!(verdict.starts_with("IMPOSSIBLE"), "{verdict}");
    assert!(d.assumptions.len() >= 3, "{:?}", d.assumptions);
    assert!(
        llmbound::report::words::assumptions(&d.assumptions)
            .iter()
            .any(|a| a.contains("4.8 TB/s")),
        "{:?}",
        d.assumptions
    );
    assert_eq!(r.impossible_rows, 1);
    assert_eq!(r.exit_code(), 3);
    let mut json = Vec::new();
    bench::write_json(&r, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["impossible_rows"], 1);
    assert_eq!(v["rows"][0]["within_ceiling"], false);
    assert!(!v["rows"][0]["assumptions"].as_array().unwrap().is_empty());
    let mut text = Vec::new();
    bench::write_text(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("IMPOSSIBLE"), "{text}");

    // 560 t/s: above 540.8 (inventory at the measured 4,354.1 GB/s) and the file ceilings,
    // below 596.1 (the peak): possible, an assumption of the lower ceilings is false.
    tg.avg_ts = 560.0;
    let r = bench::evaluate(std::slice::from_ref(&tg), &s, &opts);
    let d = r.rows[0].decode.as_ref().unwrap();
    assert!(!d.impossible && d.within_ceiling, "{:?}", d.outcome);
    assert!(
        d.exceeded
            .iter()
            .any(|e| matches!(e.kind, CeilingKind::InventoryFull { .. })),
        "{:?}",
        d.exceeded
    );
    assert!(
        d.exceeded
            .iter()
            .any(|e| matches!(e.kind, CeilingKind::FileFull | CeilingKind::FileShort))
    );
    assert!(d.assumptions.is_empty());
    assert_eq!(
        (r.impossible_rows, r.rows_above_lower_ceiling, r.exit_code()),
        (0, 1, 0)
    );
}

/// `-pg` rows count prompt and generated tokens in avg_ts: never held against a decode ceiling.
#[test]
fn pg_rows_are_never_compared() {
    let (_, s) = h200_report(&["h200/bench_f16.json"]);
    let rows = bench::load(fixture("h200/bench_f16.json")).unwrap();
    let mut pg = rows[1].clone();
    pg.n_prompt = 512;
    pg.n_gen = 128;
    pg.avg_ts = 5_000.0; // far above any decode ceiling
    assert_eq!(pg.test(), TestKind::Combined);
    let r = bench::evaluate(std::slice::from_ref(&pg), &s, &BenchOptions::default());
    let x = &r.rows[0];
    assert!(x.decode.is_none() && x.prefill.is_none());
    assert_eq!((r.impossible_rows, r.exit_code()), (0, 0));
    let mut json = Vec::new();
    bench::write_json(&r, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["test"], "pg");
    assert!(row["ceiling_tokens_per_second"].is_null());
    assert!(row["efficiency"].is_null());
    assert!(row["within_ceiling"].is_null());
    assert_eq!(row["impossible"], false);
}

/// A run of another artifact is reported but never judged impossible.
#[test]
fn another_artifact_is_not_judged() {
    let (_, s) = h200_report(&["h200/bench_f16.json"]);
    let mut rows = bench::load(fixture("h200/bench_f16.json")).unwrap();
    for r in &mut rows {
        r.model_size += 1_000_000;
        r.avg_ts *= 10.0;
    }
    let r = bench::evaluate(&rows, &s, &BenchOptions::default());
    assert_eq!(r.impossible_rows, 0);
    assert_eq!(r.rows_above_other_artifact, 3);
    assert!(!r.artifacts[0].matches);
    assert!(
        r.artifacts[0].detail.contains("another artifact"),
        "{}",
        r.artifacts[0].detail
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.text.contains("another artifact") && n.rows.len() == 6)
    );
}

/// Without a GGUF there is no inventory: the ceilings are from file bytes and cannot decide.
#[test]
fn without_inventory_nothing_is_impossible() {
    let cat = Catalog::builtin();
    let s = load::scenario(&cat, &cat.scenario("qwen3-8b-synth-h200").unwrap()).unwrap();
    let mut rows = bench::load(fixture("h200/bench_f16.json")).unwrap();
    let r = bench::evaluate(&rows, &s, &BenchOptions::default());
    assert!(r.artifacts[0].matches, "{}", r.artifacts[0].detail);
    assert!(
        r.artifacts[0].detail.contains("24,224 bytes of header"),
        "{}",
        r.artifacts[0].detail
    );
    for x in r.rows.iter().filter(|x| x.test == TestKind::Generation) {
        let d = x.decode.as_ref().unwrap();
        assert!(d.ceiling.is_none() && d.ceiling_without_inventory.is_some());
        assert!(d.efficiency.is_none());
        assert!(d.within_ceiling);
    }
    for x in &mut rows {
        x.avg_ts *= 10.0;
    }
    let r = bench::evaluate(&rows, &s, &BenchOptions::default());
    assert_eq!(r.impossible_rows, 0);
    assert_eq!(r.rows_above_without_inventory, 3);
    let mut text = Vec::new();
    bench::write_text(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("undecided"), "{text}");
}

/// The JSON contract, and the text and Markdown forms of the same report.
#[test]
fn outputs() {
    let (r, _) = h200_report(&["h200/bench_f16.json", "h200/bench_q8_0.json"]);
    let mut json = Vec::new();
    bench::write_json(&r, &mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    for key in [
        "rows",
        "bandwidth_bytes_per_second",
        "bandwidth_provenance",
        "missing_record_fields",
        "impossible_rows",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["bandwidth_bytes_per_second"], 4.8e12);
    assert_eq!(v["bandwidth_provenance"], "spec");
    assert_eq!(v["headline_bandwidth_provenance"], "measured");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    for key in [
        "test",
        "n_prompt",
        "n_gen",
        "n_depth",
        "type_k",
        "type_v",
        "observed_tokens_per_second",
        "best_sample_tokens_per_second",
        "ceiling_tokens_per_second",
        "file_ceiling_tokens_per_second",
        "efficiency",
        "within_ceiling",
        "retained_tokens",
        "assumptions",
    ] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "{key}");
    }
    let tg = &rows[1];
    assert_eq!(tg["test"], "tg");
    assert_eq!(tg["retained_tokens"], 64);
    assert_eq!(tg["within_ceiling"], true);
    assert!(tg["efficiency"].as_f64().unwrap() > 0.40);
    assert_eq!(tg["best_sample_tokens_per_second"], 242.355);
    let pp = &rows[0];
    assert_eq!(pp["test"], "pp");
    assert!(pp["ceiling_tokens_per_second"].is_null());
    assert!(pp["prefill_ceiling_tokens_per_second"].as_f64().unwrap() > 10_800.0);

    let mut text = Vec::new();
    bench::write_text(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    eprintln!("{text}");
    assert!(text.contains("ceiling t/s"));
    assert!(text.contains("observed t/s"));
    assert!(text.contains("40.5%"), "{text}");
    assert!(text.contains("MISSING: peak resident memory"));
    assert!(text.contains("4.8 TB/s (spec"));
    assert!(text.contains("4.354 TB/s (measured"));
    let mut md = Vec::new();
    bench::write_markdown(&r, &mut md).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.starts_with("# llama-bench import"));
    assert!(md.contains("|---:|"));
    assert!(md.contains("40.5%"));
}

/// `-o jsonl` gives the same rows as `-o json`.
#[test]
fn jsonl_equals_json() {
    let path = fixture("h200/bench_q8_0.json");
    let rows = bench::load(&path).unwrap();
    let v: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let jsonl: String = v.iter().map(|x| format!("{x}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bench_q8_0.jsonl");
    std::fs::write(&p, jsonl).unwrap();
    let rows_l = bench::load(&p).unwrap();
    assert_eq!(rows.len(), rows_l.len());
    for (a, b) in rows.iter().zip(&rows_l) {
        assert_eq!(b.source.line, b.source.row);
        let mut b = b.clone();
        b.source = a.source.clone();
        assert_eq!(a, &b);
    }
}
