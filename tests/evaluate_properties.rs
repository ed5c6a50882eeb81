//! Properties of `core::evaluate`'s result itself: the fit verdict is the comparison of the
//! runtime's memory with the capacity, tier by tier; the ceilings are ordered; the step time
//! is Σ bytes / bandwidth over the tiers, with the main tier the first that moves the most
//! bytes; the claim check's outcome agrees with the ceilings (docs/bounds.md §2, §4, §6).

use llmbound::core::cache::CacheType;
use llmbound::core::claim::ClaimOutcome;
use llmbound::core::evaluate::FitVerdict;
use llmbound::core::{check_claim, evaluate};
use llmbound::profile::{Catalog, load};
use proptest::prelude::*;

fn scenario(id: &str) -> llmbound::core::Scenario {
    let cat = Catalog::builtin();
    load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap()
}

fn ids() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "default",
        "gemma-3-270m-cpu-vm",
        "qwen3-8b-synth-h200",
        "qwen3-32b-rtx-4090-partial",
        "qwen3-32b-rtx-3090-q8-cache",
    ])
}

fn any_cache_type() -> impl Strategy<Value = CacheType> {
    proptest::sample::select(CacheType::ALL.to_vec())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn evaluate_result_is_consistent(id in ids(), n in 1u64..150_000, b in 1u64..8,
                                     k in any_cache_type(), v in any_cache_type(),
                                     ngl in proptest::option::of(0u32..80)) {
        let mut s = scenario(id);
        s.cache.context = n;
        s.cache.sequences = b;
        s.cache.type_k = k;
        s.cache.type_v = v;
        if ngl.is_some() {
            s.offload.gpu_layers = ngl;
        }
        let Ok(r) = evaluate(&s) else { return Ok(()) };
        let c = &r.capacity;
        let used: Vec<_> = r.tiers.iter().filter(|t| t.used).collect();

        // Fit ⇔ every used tier's runtime total ≤ its capacity.
        for t in &used {
            prop_assert_eq!(t.memory.fits, t.memory.total_bytes <= t.memory.capacity_bytes);
            prop_assert_eq!(t.memory.free_bytes,
                t.memory.capacity_bytes as i128 - t.memory.total_bytes as i128);
        }
        prop_assert_eq!(c.fits, used.iter().all(|t| t.memory.total_bytes <= t.memory.capacity_bytes));
        // One pool: fits ⇔ Σ runtime ≤ what llama.cpp may fill there (a device's free
        // memory, else M), and the article's W + K + A ≤ M.
        if used.len() == 1 {
            prop_assert_eq!(c.fits, c.runtime_bytes.total_bytes <= c.runtime_bytes.capacity_bytes);
            prop_assert!(c.runtime_bytes.capacity_bytes <= c.memory_bytes);
            prop_assert_eq!(c.article_fits, c.total_bytes <= c.memory_bytes);
            prop_assert_eq!(c.headroom_bytes, c.memory_bytes as i128 - c.total_bytes as i128);
        }
        prop_assert_eq!(c.total_bytes, c.weights_bytes + c.kv_bytes + c.other_bytes);
        match &c.verdict {
            FitVerdict::Fits { .. } => prop_assert!(c.fits),
            FitVerdict::DoesNotFit { shortfalls, .. } => {
                prop_assert!(!c.fits);
                prop_assert!(!shortfalls.is_empty());
                for sh in shortfalls {
                    let t = used.iter().find(|t| t.name == sh.tier).unwrap();
                    prop_assert_eq!(sh.bytes as i128, -t.memory.free_bytes);
                }
            }
            FitVerdict::WillNotStart { refusals } => prop_assert!(!refusals.is_empty()),
        }

        // Decode time = Σ bytes / bandwidth, tier by tier.
        let d = &r.decode;
        for ceiling in [&d.short_context, &d.full_context, &d.highest] {
            let mut sum = 0.0;
            let mut max = 0.0f64;
            for (i, bytes) in ceiling.tier_bytes.iter().enumerate() {
                let tier = &s.machine.tiers[i];
                let bw = match ceiling.bandwidth_choice {
                    llmbound::core::decode::BandwidthChoice::Headline => tier.headline_bandwidth(),
                    llmbound::core::decode::BandwidthChoice::Highest => tier.highest_bandwidth(),
                }.value.0;
                let t = if *bytes == 0 { 0.0 } else { *bytes as f64 / bw };
                prop_assert!(close(ceiling.tier_seconds[i], t));
                sum += t;
                max = max.max(t);
            }
            prop_assert!(close(ceiling.seconds_per_step, sum));
            prop_assert!(close(ceiling.seconds_per_step_overlapped, max));
            prop_assert!(close(ceiling.tokens_per_second, b as f64 / sum));
            prop_assert!(close(ceiling.ms_per_token, sum * 1e3));
            prop_assert_eq!(ceiling.step_bytes, ceiling.tier_bytes.iter().sum::<u64>());
            // The main tier is the first that moves the most bytes.
            let most = *ceiling.tier_bytes.iter().max().unwrap();
            prop_assert_eq!(ceiling.main_tier,
                ceiling.tier_bytes.iter().position(|x| *x == most).unwrap());
            // The slowest tier takes the longest (first on ties).
            if let Some(i) = ceiling.slowest_tier {
                prop_assert!(ceiling.tier_seconds.iter().all(|t| *t <= ceiling.tier_seconds[i]));
                prop_assert_eq!(Some(i), ceiling.tier_seconds.iter().position(|t| *t == ceiling.tier_seconds[i]));
            }
        }

        // Ceilings are ordered: short context ≥ full context; inventory ≥ file; the highest
        // is at least every ceiling at N.
        let eps = 1.0 + 1e-12;
        prop_assert!(d.full_context.tokens_per_second <= d.short_context.tokens_per_second * eps);
        if let Some(inv) = &d.inventory_full_context {
            prop_assert!(d.full_context.tokens_per_second <= inv.tokens_per_second * eps);
            prop_assert!(inv.tokens_per_second <= d.highest.top_tokens_per_second() * eps);
        }
        prop_assert!(d.full_context.tokens_per_second <= d.highest.top_tokens_per_second() * eps);

        // The roofline's attainable rate is min(BW × I, C).
        let rl = &r.roofline;
        let want = rl.compute.map_or(rl.bandwidth * rl.decode_intensity,
            |cr| (rl.bandwidth * rl.decode_intensity).min(cr.0));
        prop_assert!(close(rl.decode_attainable_flops_per_second, want));
        prop_assert_eq!(rl.ridge_intensity, rl.machine_balance);

        // The claim check agrees with the ceilings.
        let h = d.highest.top_tokens_per_second();
        let at = check_claim(&r, h);
        prop_assert!(!at.lines.last().unwrap().exceeded);
        prop_assert!(matches!(at.outcome, ClaimOutcome::Within | ClaimOutcome::AboveLower));
        let above = check_claim(&r, h * 1.01 + 1e-9);
        prop_assert!(above.lines.last().unwrap().exceeded);
        prop_assert!(!matches!(above.outcome, ClaimOutcome::Within | ClaimOutcome::AboveLower));
        prop_assert_eq!(above.impossible, d.highest_decides && d.highest.bandwidth_peak_known);
        let below = check_claim(&r, d.full_context.tokens_per_second * 0.5);
        prop_assert_eq!(below.outcome, ClaimOutcome::Within);
    }
}
