//! Snapshots of the three output forms for the real H200 runs (stable names: the files are
//! parsed under their bare names and the GGUF is opened from a temporary copy).

use llmbound::bench::{self, BenchOptions, BenchReport};
use llmbound::profile::{Catalog, load};
use std::path::Path;

fn report() -> BenchReport {
    let (s, rows, opts) = inputs();
    bench::evaluate(&rows, &s, &opts)
}

fn inputs() -> (
    llmbound::core::Scenario,
    Vec<llmbound::bench::BenchRow>,
    BenchOptions,
) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/h200");
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("qwen3-8b-q8_0-synth.gguf");
    std::fs::copy(fixtures.join("qwen3-8b-q8_0-synth.gguf-header"), &gguf).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&gguf)
        .unwrap()
        .set_len(8_703_585_952)
        .unwrap();
    let cat = Catalog::builtin();
    let mut s = load::scenario(&cat, &cat.scenario("qwen3-8b-synth-h200").unwrap()).unwrap();
    llmbound::workspace::with_gguf(
        &mut s,
        &llmbound::workspace::open_gguf(&cat, &gguf).unwrap(),
    )
    .unwrap();
    let mut rows = Vec::new();
    for f in ["bench_f16.json", "bench_q8_0.json"] {
        let text = std::fs::read_to_string(fixtures.join(f)).unwrap();
        rows.extend(bench::parse_str(f, &text).unwrap());
    }
    let opts = BenchOptions {
        gguf: Some("qwen3-8b-q8_0-synth.gguf".into()),
        artifact_sha256: None,
    };
    (s, rows, opts)
}

/// One claim vocabulary: a llama-bench decode row's verdict is the sentence `check` prints
/// for the same rate on the row's scenario.
#[test]
fn a_bench_row_says_what_check_says() {
    let (s, rows, opts) = inputs();
    let r = bench::evaluate(&rows, &s, &opts);
    let mut compared = 0;
    for (row, x) in rows.iter().zip(&r.rows) {
        let Some(d) = &x.decode else { continue };
        let (edits, _) = bench::eval::row_edits(row, &s).unwrap();
        let rs = llmbound::core::edit::applied(&s, &edits).unwrap();
        let c = llmbound::core::check_claim(
            &llmbound::core::evaluate(&rs).unwrap(),
            d.observed_tokens_per_second,
        );
        assert_eq!(
            c.outcome,
            match d.outcome {
                bench::eval::RowOutcome::Claim(o) => o,
                other => panic!("{other:?}"),
            }
        );
        assert_eq!(
            bench::text::row_verdict(d),
            llmbound::report::words::claim_verdict(&c),
            "row {}",
            x.name
        );
        compared += 1;
    }
    assert!(compared > 0, "no decode row");
}

fn snapshot(name: &str, body: &str) {
    insta::with_settings!({snapshot_path => "fixtures/bench/snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, body);
    });
}

#[test]
fn h200_text() {
    let mut out = Vec::new();
    bench::write_text(&report(), &mut out).unwrap();
    snapshot("h200_text", &String::from_utf8(out).unwrap());
}

#[test]
fn h200_markdown() {
    let mut out = Vec::new();
    bench::write_markdown(&report(), &mut out).unwrap();
    snapshot("h200_markdown", &String::from_utf8(out).unwrap());
}

#[test]
fn h200_json() {
    let mut out = Vec::new();
    bench::write_json(&report(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 12);
    snapshot("h200_json", &text);
}
