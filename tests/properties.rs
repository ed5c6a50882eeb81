//! Invariants of the bounds: more context or sequences never need less memory; ceilings never
//! rise when bytes grow; the context solver agrees with the cache; nothing overflows or panics.

use llmbound::core::cache::CacheType;
use llmbound::core::evaluate;
use llmbound::profile::{Catalog, load};
use proptest::prelude::*;

fn scenario(id: &str) -> llmbound::core::Scenario {
    let cat = Catalog::builtin();
    load::scenario(&cat, &cat.scenario(id).unwrap()).unwrap()
}

fn any_cache_type() -> impl Strategy<Value = CacheType> {
    proptest::sample::select(CacheType::ALL.to_vec())
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn more_context_never_needs_less_memory(id in ids(), n in 1u64..200_000, extra in 1u64..100_000,
                                            b in 1u64..8, k in any_cache_type(), v in any_cache_type()) {
        let mut s = scenario(id);
        s.cache.type_k = k;
        s.cache.type_v = v;
        s.cache.sequences = b;
        s.cache.context = n;
        let a = evaluate(&s).unwrap();
        s.cache.context = n + extra;
        let c = evaluate(&s).unwrap();
        prop_assert!(c.capacity.kv_bytes >= a.capacity.kv_bytes);
        prop_assert!(c.kv.allocated_bytes >= a.kv.allocated_bytes);
        prop_assert!(c.capacity.headroom_bytes <= a.capacity.headroom_bytes);
        prop_assert!(c.decode.full_context.tokens_per_second <= a.decode.full_context.tokens_per_second * (1.0 + 1e-12));
    }

    #[test]
    fn more_sequences_never_need_less_memory(id in ids(), n in 1u64..100_000, b in 1u64..64) {
        let mut s = scenario(id);
        s.cache.context = n;
        s.cache.sequences = b;
        let a = evaluate(&s).unwrap();
        s.cache.sequences = b + 1;
        let c = evaluate(&s).unwrap();
        prop_assert!(c.capacity.kv_bytes >= a.capacity.kv_bytes);
        prop_assert!(c.kv.allocated_bytes >= a.kv.allocated_bytes);
    }

    #[test]
    fn ceilings_never_rise_when_bytes_grow(id in ids(), n in 1u64..100_000, grow in 1u64..10_000_000_000) {
        let mut s = scenario(id);
        s.cache.context = n;
        let a = evaluate(&s).unwrap();
        s.weights[0].bytes.value += grow;
        let c = evaluate(&s).unwrap();
        prop_assert!(c.decode.short_context.tokens_per_second <= a.decode.short_context.tokens_per_second);
        prop_assert!(c.decode.full_context.tokens_per_second <= a.decode.full_context.tokens_per_second);
        prop_assert!(c.capacity.headroom_bytes < a.capacity.headroom_bytes);
    }

    #[test]
    fn largest_context_fits_and_one_more_does_not(id in ids(), b in 1u64..4, a_gib in 0u64..8,
                                                   fa in any::<bool>(), ub in proptest::sample::select(vec![512u64, 2048])) {
        let mut s = scenario(id);
        s.cache.sequences = b;
        s.other_bytes.value = a_gib << 30;
        // without flash attention the compute buffer grows with the context too
        s.cache.flash_attn = fa;
        s.cache.ubatch = ub;
        let r = evaluate(&s).unwrap();
        if let Some(m) = r.capacity.max_context_tokens && m > 0 && m * b < u32::MAX as u64 {
            s.cache.context = m;
            prop_assert!(evaluate(&s).unwrap().capacity.fits, "at {m}");
            s.cache.context = m + 1;
            if (m + 1) * b <= u32::MAX as u64 {
                prop_assert!(!evaluate(&s).unwrap().capacity.fits, "at {}", m + 1);
            }
        }
    }

    #[test]
    fn runtime_memory_never_falls_as_context_grows(id in ids(), n in 1u64..200_000, extra in 1u64..100_000,
                                                   fa in any::<bool>(), b in 1u64..4) {
        let mut s = scenario(id);
        s.cache.flash_attn = fa;
        s.cache.sequences = b;
        s.cache.context = n;
        let a = evaluate(&s).unwrap();
        s.cache.context = n + extra;
        let c = evaluate(&s).unwrap();
        prop_assert!(c.capacity.runtime_bytes.total_bytes >= a.capacity.runtime_bytes.total_bytes);
        // The compute buffer alone may fall as context grows: llama.cpp's own reservation does
        // (Qwen3-32B, 86,157 → 91,905 tokens: 462,442,496 → 457,986,048 bytes; pinned in
        // core::runtime's tests). The cache grows by far more, so the totals never fall.
        for (x, y) in a.tiers.iter().zip(&c.tiers) {
            prop_assert!(y.memory.total_bytes >= x.memory.total_bytes);
        }
    }

    #[test]
    fn extreme_inputs_never_panic(id in ids(), n in any::<u64>(), b in any::<u64>(), w in any::<u64>(),
                                  a in any::<u64>(), ub in any::<u64>(), ngl in any::<u32>(), s_rows in any::<u64>()) {
        let mut s = scenario(id);
        s.cache.context = n;
        s.cache.sequences = b;
        s.weights[0].bytes.value = w;
        s.other_bytes.value = a;
        s.cache.ubatch = ub;
        s.offload.gpu_layers = Some(ngl);
        s.prompt_rows = s_rows;
        let _ = evaluate(&s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The most GPU layers that fit: `-ngl max` fits and `-ngl max + 1` does not (or max is
    /// every layer), decided by `evaluate` itself.
    #[test]
    fn most_gpu_layers_fit_and_one_more_does_not(
        id in proptest::sample::select(vec!["qwen3-32b-rtx-4090-partial", "qwen3-32b-rtx-3090-q8-cache"]),
        n in 1u64..131_072, b in 1u64..4, a_gib in 0u64..6,
    ) {
        use llmbound::core::gpu_layers::{fits_at, max_gpu_layers};
        let mut s = scenario(id);
        s.cache.context = n;
        s.cache.sequences = b;
        s.other_bytes.value = a_gib << 30;
        let m = max_gpu_layers(&s).expect("an accelerator and a host tier");
        prop_assert_eq!(m.all_layers, s.model.layers.len() as u32 + 1);
        match m.gpu_layers {
            Some(g) => {
                prop_assert!(fits_at(&s, g), "-ngl {g} fits");
                prop_assert!(g == m.all_layers || !fits_at(&s, g + 1), "-ngl {} does not", g + 1);
                let c = m.ceiling.as_ref().unwrap();
                let at = evaluate(&llmbound::core::gpu_layers::with_gpu_layers(&s, g)).unwrap();
                prop_assert_eq!(c.tokens_per_second, at.decode.full_context.tokens_per_second);
            }
            None => prop_assert!(!fits_at(&s, 0)),
        }
    }
}

#[test]
fn most_gpu_layers_not_applicable_without_accelerator_and_host() {
    use llmbound::core::gpu_layers::max_gpu_layers;
    // CPU-only VM: no accelerator tier.
    assert_eq!(max_gpu_layers(&scenario("gemma-3-270m-cpu-vm")), None);
}

#[test]
fn most_gpu_layers_qwen3_32b_on_rtx_4090() {
    use llmbound::core::gpu_layers::{fits_at, max_gpu_layers};
    let s = scenario("qwen3-32b-rtx-4090-partial");
    let m = max_gpu_layers(&s).unwrap();
    let g = m.gpu_layers.unwrap();
    assert!(
        g > 0 && g < m.all_layers,
        "partial offload: {g} of {}",
        m.all_layers
    );
    assert!(fits_at(&s, g) && !fits_at(&s, g + 1));
    // More layers on the faster tier: the ceiling at max is above the one at -ngl 0.
    let at0 = evaluate(&llmbound::core::gpu_layers::with_gpu_layers(&s, 0)).unwrap();
    assert!(m.ceiling.unwrap().tokens_per_second > at0.decode.full_context.tokens_per_second);
}
