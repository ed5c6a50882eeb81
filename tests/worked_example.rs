//! docs/bounds.md §7: the default scenario reproduces the article's figures digit for digit.

use llmbound::core::units::{self, fmt_gib};
use llmbound::core::{check_claim, evaluate};
use llmbound::profile::{Catalog, load};

fn report() -> llmbound::core::Report {
    let cat = Catalog::builtin();
    let s = cat.scenario("default").unwrap();
    let scen = load::scenario(&cat, &s).unwrap();
    evaluate(&scen).unwrap()
}

#[test]
fn section_7_figures() {
    let r = report();
    assert_eq!(
        format!("{:.3}", r.artifact.bits_per_parameter.unwrap()),
        "4.820"
    );
    assert_eq!(fmt_gib(r.artifact.bytes), "18.405 GiB");
    assert_eq!(r.kv.bytes_per_token, 262_144);
    assert_eq!(units::exact_binary(r.kv.bytes_per_token), "256 KiB");
    assert_eq!(r.kv.bytes, 8_589_934_592);
    assert_eq!(units::exact_binary(r.kv.bytes), "8 GiB");
    let wk = r.capacity.weights_bytes + r.capacity.kv_bytes;
    assert_eq!(wk, 28_352_083_616);
    assert_eq!(fmt_gib(wk), "26.405 GiB");
    assert_eq!(r.capacity.headroom_bytes, 23_187_523_936);
    assert_eq!(fmt_gib(r.capacity.headroom_bytes as u64), "21.595 GiB");
    assert!(r.capacity.fits && r.capacity.article_fits);
    // A is 0 here, so the verdict says so (the runtime's buffers are counted, A is not).
    assert_eq!(
        r.capacity.verdict,
        llmbound::core::FitVerdict::Fits {
            user_counted: false
        }
    );
    // Qwen3-32B at 32,768 tokens needs no padding: the allocated cache is the logical one.
    assert_eq!(r.kv.allocated_bytes, r.kv.bytes);
    assert_eq!(
        units::fmt_rate(r.decode.short_context.tokens_per_second),
        "13.81"
    );
    assert_eq!(units::fmt_ms(r.decode.short_context.ms_per_token), "72.39");
    assert_eq!(
        units::fmt_rate(r.decode.full_context.tokens_per_second),
        "9.63"
    );
    assert_eq!(units::fmt_ms(r.decode.full_context.ms_per_token), "103.85");
    assert!(r.roofline.prefill_ceiling_tokens_per_second.is_none());
    assert_eq!(
        r.roofline.prefill_bound,
        llmbound::core::roofline::PrefillBound::NoComputeRate
    );
    assert!(
        llmbound::report::words::prefill_reason(&r.roofline)
            .starts_with("none: the profile has no sustained compute rate for this path")
    );
    assert!(r.decode.optimistic_vendor);
    // Largest context by W + K: (48 GiB − W) / 256 KiB = 121,221.xx → 121,221 tokens.
    assert_eq!(
        r.capacity.article_max_context_tokens,
        Some((51_539_607_552u64 - 19_762_149_024) / 262_144)
    );
    assert!(r.capacity.max_context_exceeds_native);
}

#[test]
fn claim_without_inventory_is_never_impossible() {
    let r = report();
    let c = check_claim(&r, 20.0);
    assert!(!c.impossible);
    assert!(c.lines.iter().all(|l| l.exceeded));
    let c = check_claim(&r, 5.0);
    assert!(c.lines.iter().all(|l| !l.exceeded));
}
