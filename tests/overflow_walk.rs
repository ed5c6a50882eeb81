//! The 64-bit guard checks the cache walk `kv` itself computes, not a copy of it: shapes whose
//! cache the old per-layer copy in `core::overflow` did not see (RWKV state, an indexer cache)
//! are refused with the figure that would not fit, instead of reaching a report as
//! saturated arithmetic.

use llmbound::core::kv;
use llmbound::core::model::{ArchFigures, CacheKeys, ModelShape, PerLayer};
use llmbound::core::overflow::{ByteFigure, check_scenario_bytes};
use llmbound::core::units::Provenance;
use llmbound::profile::{Catalog, load};

fn scenario() -> llmbound::core::Scenario {
    let cat = Catalog::builtin();
    load::scenario(&cat, &cat.scenario("default").unwrap()).unwrap()
}

fn figures(arch: &str, layers: u32, heads: u32, embd: u64) -> ArchFigures {
    ArchFigures {
        architecture: arch.into(),
        layers,
        head_count: PerLayer::Uniform(heads),
        head_count_kv: PerLayer::Uniform(heads),
        key_length: None,
        value_length: None,
        embedding_length: embd,
        vocab_size: 1000,
        native_context: Some(4096),
        sliding_window: None,
        sliding_pattern: None,
        chunk_size: None,
        mla: None,
        moe: None,
        ssm: None,
        recurrent_layers: None,
        tied_embeddings: false,
        keys: CacheKeys::default(),
    }
}

/// An RWKV-6 shape whose WKV state is 2^65 + 2^46 bytes: 8 layers × (2^40 × 2^20 state +
/// 2 × 2^40 token-shift) f32 values. The old copy counted recurrent state only from Mamba's
/// `ssm.*` figures, so it saw 0 bytes here and let the scenario through.
#[test]
fn rwkv_state_beyond_64_bits_is_refused_by_name() {
    let mut f = figures("rwkv6", 8, 1 << 10, 1 << 40);
    f.head_count_kv = PerLayer::Uniform(0);
    f.keys.wkv_head_size = Some(1 << 20);
    let model = ModelShape::from_figures("rwkv-huge", &f, Provenance::User).expect("a shape");
    let mut s = scenario();
    s.model = model;
    s.cache.context = 4096;
    s.cache.sequences = 1;
    // kv's own walk saturates it…
    let sat = kv::cache_checked(&s.model, &s.cache).unwrap_err();
    assert_eq!(sat.figure, ByteFigure::RecurrentState);
    assert_eq!(sat.value, Some((1u128 << 65) + (1u128 << 46)));
    assert_eq!(kv::cache(&s.model, &s.cache).recurrent_bytes, u64::MAX);
    // …and the guard refuses the scenario with that figure.
    let err = check_scenario_bytes(&s).unwrap_err();
    assert_eq!(err.figure, ByteFigure::RecurrentState);
    assert_eq!(err.approx_bytes, ((1u128 << 65) + (1u128 << 46)) as f64);
    assert!(
        err.to_string()
            .starts_with("the recurrent state would be about 3.689e19 bytes"),
        "{err}"
    );
}

/// A DSA model (deepseek32) whose attention cache fits but whose indexer cache does not: the
/// old copy left indexer keys out of every figure.
#[test]
fn an_indexer_cache_beyond_64_bits_is_refused() {
    let mut f = figures("deepseek32", 4, 1, 4096);
    f.key_length = Some(64);
    f.value_length = Some(64);
    f.keys.indexer_key_length = Some(u32::MAX);
    f.keys.indexer_head_count = Some(1);
    let Ok(model) = ModelShape::from_figures("dsa-huge", &f, Provenance::User) else {
        panic!("a shape");
    };
    assert!(model.layers.iter().any(|l| l.indexer_key_length > 0));
    let mut s = scenario();
    s.model = model;
    s.cache.context = 1 << 31;
    s.cache.sequences = 1;
    s.cache.type_k = llmbound::core::cache::CacheType::F32;
    s.cache.type_v = llmbound::core::cache::CacheType::F32;
    let err = check_scenario_bytes(&s).unwrap_err();
    assert!(
        matches!(err.figure, ByteFigure::KvAllocated | ByteFigure::KvCache),
        "{err}"
    );
    // 4 layers × (2^32 − 1) × 4 bytes × 2^31 cells: about 1.5e20 bytes.
    assert!(err.approx_bytes > 1.4e20, "{err}");
}

/// Shapes that fit are unchanged by the check: the checked walk is the walk.
#[test]
fn a_shape_that_fits_passes_and_the_walks_agree() {
    let s = scenario();
    check_scenario_bytes(&s).expect("the default scenario fits in 64 bits");
    assert_eq!(
        kv::cache_checked(&s.model, &s.cache).unwrap(),
        kv::cache(&s.model, &s.cache)
    );
}
