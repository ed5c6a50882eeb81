//! Wording that must never contradict or mislead: with several sequences every rate says
//! whether it is aggregate or per sequence and times are per step; a claim headline that
//! says "above every ceiling" never sits over a ceiling the rate is within, unless it names
//! the retained context that decides.

use assert_cmd::Command;
use llmbound::core::evaluate;
use llmbound::profile::{Catalog, load};
use llmbound::report::words;

fn run(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("llmbound")
        .unwrap()
        .env("LLMBOUND_CONFIG_DIR", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn several_sequences_label_aggregate_and_per_sequence_figures() {
    let t = run(&["report", "--sequences", "4"]);
    assert!(t.contains("55.26 tokens/s across 4 sequences"), "{t}");
    assert!(
        t.contains("13.81 tokens/s per sequence (72.39 ms per step)"),
        "{t}"
    );
    assert!(t.contains("KV, 4 × 32,768 tokens"), "{t}");
    assert!(t.contains("tokens per sequence"), "{t}");
    assert!(!t.contains("ms/token"), "{t}");
    // One sequence: the worked example's wording, unchanged.
    let one = run(&["report"]);
    assert!(one.contains("13.81 tokens/s (72.39 ms/token)"), "{one}");
    assert!(!one.contains("across"), "{one}");
    let c = run(&[
        "compare",
        "--machine",
        "macbook-pro-m4-pro-48gb",
        "--machine",
        "desktop-rtx-4090",
        "--sequences",
        "4",
    ]);
    assert!(
        c.contains("short ceiling t/s (all 4 seq)") && c.contains("ms/step"),
        "{c}"
    );
}

#[test]
fn claim_headline_never_contradicts_its_lines() {
    let cat = Catalog::builtin();
    for id in [
        "default",
        "qwen3-32b-rtx-4090-partial",
        "gemma-3-270m-cpu-vm",
    ] {
        let s = load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap();
        let r = evaluate(&s).unwrap();
        let top = r
            .decode
            .curve
            .iter()
            .map(|p| p.file_tokens_per_second)
            .chain([r.decode.short_context.tokens_per_second])
            .fold(0.0f64, f64::max);
        for i in 1..60 {
            let tps = top * 1.2 * i as f64 / 60.0;
            let c = llmbound::core::check_claim(&r, tps);
            let w = words::claim(&c);
            let within: Vec<_> = w.lines.iter().filter(|l| !l.exceeded).collect();
            if w.verdict.contains("above every ceiling") && !within.is_empty() {
                assert!(
                    w.verdict.contains("tokens of context") && w.verdict.contains("within the"),
                    "{id} at {tps}: {}",
                    w.verdict
                );
            }
            if within.is_empty() {
                assert!(!w.verdict.starts_with("within"), "{}", w.verdict);
            }
            if w.lines.iter().all(|l| !l.exceeded) {
                assert!(
                    w.verdict.starts_with("within every ceiling"),
                    "{}",
                    w.verdict
                );
            }
        }
    }
}
