//! KV cache bytes: the logical cache per layer (windows, chunks, MLA latent, recurrent state)
//! and what llama.cpp allocates beside it (SPEC §3). Pure: no I/O, no other top-level module.

use super::cache::CacheType;
use super::model::{Attention, LayerShape, ModelShape};

/// The cache configuration of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    /// Retained tokens per sequence N.
    pub context: u64,
    /// Sequences decoded together B (llama.cpp `-np`).
    pub sequences: u64,
    /// K cache element type (`-ctk`).
    pub type_k: CacheType,
    /// V cache element type (`-ctv`).
    pub type_v: CacheType,
    /// Flash attention (`-fa`), required by a quantized V cache.
    pub flash_attn: bool,
    /// Physical micro-batch n_ubatch (`-ub`, default 512).
    pub ubatch: u64,
    /// One unified KV buffer for all sequences (`-kvu`).
    pub kv_unified: bool,
    /// Full-size cache for sliding layers (`--swa-full`).
    pub swa_full: bool,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            context: 4096,
            sequences: 1,
            type_k: CacheType::F16,
            type_v: CacheType::F16,
            flash_attn: true,
            ubatch: 512,
            kv_unified: false,
            swa_full: false,
        }
    }
}

/// llama.cpp pads cache sizes to this many cells.
pub const PAD: u64 = 256;

/// Round up to a multiple of `to`.
pub fn pad(n: u64, to: u64) -> u64 {
    n.div_ceil(to).saturating_mul(to)
}

/// One layer's cache at N.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvLayer {
    /// Layer index.
    pub index: u32,
    /// How the layer retains tokens.
    pub attention: Attention,
    /// The layer also carries recurrent state.
    pub recurrent: bool,
    /// Cache bytes per retained token per sequence in 1/32-byte units (exact), K + V.
    pub b32_per_token: u64,
    /// Retained tokens per sequence (capacity view): N, min(N, window), min(N, chunk).
    pub retained_tokens: u64,
    /// Cells one new token reads per sequence at N (chunked: ((N−1) mod chunk) + 1).
    pub read_tokens: u64,
    /// Logical bytes over all B sequences = ⌈b32 × retained × B / 32⌉.
    pub bytes: u64,
    /// Cells llama.cpp allocates for this layer over all streams.
    pub allocated_cells: u64,
    /// Bytes llama.cpp allocates for this layer.
    pub allocated_bytes: u64,
}

/// The cache of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvCache {
    /// Bytes added per retained token per sequence on layers that keep every token
    /// (Σ over full-attention layers of H_KV(d_k e_k + d_v e_v)); the whole figure without windows.
    pub bytes_per_token: u64,
    /// Bytes per token per sequence over every attention layer (windows not yet applied).
    pub bytes_per_token_all_layers: u64,
    /// Logical attention cache over B sequences at N, as the runtime stores it (MLA: the latent).
    pub bytes: u64,
    /// The naive per-head figure for MLA: n_head × (k_mla e_k + v_mla e_v) per layer per token.
    pub naive_bytes: Option<u64>,
    /// Recurrent state over B sequences (f32, independent of N).
    pub recurrent_bytes: u64,
    /// Bytes one decode step reads from the cache over B sequences at N (chunked layers read
    /// only their current chunk; recurrent state included).
    pub read_bytes: u64,
    /// llama.cpp's allocation: padded cells per layer plus recurrent state.
    pub allocated_bytes: u64,
    /// llama.cpp's n_ctx after padding (`-c` = N × B padded to 256).
    pub allocated_context: u64,
    /// Cells per stream (non-unified) or in the unified buffer.
    pub cells_per_stream: u64,
    /// Per-layer detail.
    pub per_layer: Vec<KvLayer>,
    /// The V cache type has no effect (MLA: V is a view of K).
    pub v_is_view_of_k: bool,
    /// The buffers llama.cpp allocates, as its log lists them (`llama_kv_cache: size = …`,
    /// `llama_memory_recurrent: size = …`).
    pub caches: Vec<AllocatedCache>,
    /// Why llama.cpp would not start with these settings.
    pub refusals: Vec<CacheRefusal>,
}

/// Which of llama.cpp's cache buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    /// The attention cache of full (non-sliding) layers; the only one without SWA.
    Kv,
    /// The sliding-window (or chunked) layers' cache.
    Swa,
    /// The DSA / MSA indexer key cache.
    Indexer,
    /// The recurrent state (K = conv rows `r`, V = state rows `s`).
    Recurrent,
}

/// One cache buffer as llama.cpp allocates and logs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocatedCache {
    /// Which buffer.
    pub kind: CacheKind,
    /// Cells per stream (recurrent: state rows, max(1, B)).
    pub cells: u64,
    /// Streams: 1 when unified, else B (recurrent: 1).
    pub streams: u64,
    /// Layers holding a tensor in this buffer.
    pub layers: u32,
    /// K bytes (recurrent: the conv rows r).
    pub k_bytes: u64,
    /// V bytes (recurrent: the state rows s; 0 for MLA and indexer caches without V).
    pub v_bytes: u64,
}

impl AllocatedCache {
    /// K + V bytes.
    pub fn bytes(&self) -> u64 {
        self.k_bytes.saturating_add(self.v_bytes)
    }
}

/// A cache configuration llama.cpp refuses at start-up (`llama_init_from_model` returns null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRefusal {
    /// MLA models (and deepseek4) need the same K and V cache type.
    MixedTypesOnMla {
        /// `-ctk`.
        k: CacheType,
        /// `-ctv`.
        v: CacheType,
    },
}

impl std::fmt::Display for CacheRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheRefusal::MixedTypesOnMla { k, v } => write!(
                f,
                "llama.cpp will not start: this model does not support different K ({k}) and V ({v}) cache types"
            ),
        }
    }
}

impl KvCache {
    /// The logical capacity term K: attention cache plus recurrent state.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.saturating_add(self.recurrent_bytes)
    }
}

/// K and V bytes per token per sequence of one layer, in 1/32-byte units.
pub fn layer_b32_per_token(
    model: &ModelShape,
    layer: &LayerShape,
    k: CacheType,
    v: CacheType,
) -> u64 {
    let (kb, vb) = layer_k_v_b32(model, layer, k, v, None);
    kb + vb
}

/// K and V bytes per cell of one layer in 1/32-byte units, indexer included; `v_pad` is the
/// V row width llama.cpp pads to with flash attention off (None: the layer's own width).
fn layer_k_v_b32(
    model: &ModelShape,
    layer: &LayerShape,
    k: CacheType,
    v: CacheType,
    v_pad: Option<(u64, u64)>,
) -> (u64, u64) {
    if !layer.owns_cache || model.no_memory {
        return (0, 0);
    }
    let idx_k = layer.indexer_key_length as u64 * k.b32_per_element();
    let idx_v = match v_pad {
        Some((_, iv)) if layer.indexer_key_length > 0 => iv,
        _ => layer.indexer_value_length as u64,
    } * v.b32_per_element();
    if layer.attention == Attention::None {
        return (idx_k, idx_v);
    }
    let hkv = layer.head_count_kv as u64;
    let kb = hkv * layer.key_length as u64 * k.b32_per_element() + idx_k;
    if model.mla.is_some() {
        // llama.cpp stores the latent (kv_lora_rank + n_rot = key_length) as K; V is a view.
        return (kb, idx_v);
    }
    let vw = match v_pad {
        Some((w, _)) => w,
        None => hkv * layer.value_length as u64,
    };
    (kb, vw * v.b32_per_element() + idx_v)
}

/// Tokens a layer retains per sequence at N (capacity view).
pub fn retained(attention: Attention, n: u64) -> u64 {
    match attention {
        Attention::Full => n,
        Attention::Sliding { window } => n.min(window),
        Attention::Chunked { chunk } => n.min(chunk),
        Attention::None => 0,
    }
}

/// Cells a new token reads per sequence at N.
pub fn read_cells(attention: Attention, n: u64) -> u64 {
    match attention {
        Attention::Chunked { chunk } if n > 0 && chunk > 0 => ((n - 1) % chunk) + 1,
        other => retained(other, n),
    }
}

fn b32_to_bytes(b32: u128) -> u64 {
    u64::try_from(b32.div_ceil(32)).unwrap_or(u64::MAX)
}

/// Compute the cache of `model` under `s` (SPEC §3).
pub fn cache(model: &ModelShape, s: &CacheSettings) -> KvCache {
    let n = s.context;
    let b = s.sequences.max(1);
    let total_ctx = n.saturating_mul(b);
    let n_ctx = pad(total_ctx, PAD);
    let cells_per_stream = if s.kv_unified {
        n_ctx
    } else {
        pad(n_ctx / b, PAD)
    };
    let streams = if s.kv_unified { 1 } else { b };
    // Sliding (and chunked) layers: llama.cpp's SWA cache, always padded to 256 cells.
    let swa_cells_per_stream = |w: u64| -> u64 {
        if s.swa_full {
            cells_per_stream
        } else {
            let per = if s.kv_unified { w.saturating_mul(b) } else { w };
            pad(cells_per_stream.min(per.saturating_add(s.ubatch)), PAD)
        }
    };
    // Flash attention off: V is stored transposed and padded to the widest layer.
    let v_pad = if s.flash_attn || model.mla.is_some() {
        None
    } else {
        let idx_v = model
            .layers
            .iter()
            .map(|l| l.value_length as u64)
            .max()
            .unwrap_or(0);
        Some((model.v_width_max(), idx_v))
    };
    let mut per_layer = Vec::with_capacity(model.layers.len());
    let (mut full_b32, mut all_b32) = (0u128, 0u128);
    let (mut bytes, mut read, mut alloc) = (0u64, 0u64, 0u64);
    let mut naive: u128 = 0;
    // (layers, K b32 × cells, V b32 × cells, cells per stream) per buffer.
    let mut base = (0u32, 0u128, 0u128, cells_per_stream);
    let mut swa = (0u32, 0u128, 0u128, 0u64);
    let mut idx = (0u32, 0u128, 0u128, cells_per_stream);
    for (il, layer) in model.layers.iter().enumerate() {
        let b32 = layer_b32_per_token(model, layer, s.type_k, s.type_v);
        all_b32 += b32 as u128;
        if layer.attention == Attention::Full {
            full_b32 += b32 as u128;
        }
        let kept = retained(layer.attention, n);
        let reads = read_cells(layer.attention, n);
        let layer_bytes = b32_to_bytes(b32 as u128 * kept as u128 * b as u128);
        let window = match layer.attention {
            Attention::Sliding { window } => Some(window),
            Attention::Chunked { chunk } => Some(chunk),
            _ => None,
        };
        let owned = layer.owns_cache && !model.no_memory;
        // Attention K/V (without the indexer) and the indexer, allocated separately.
        let (kb, vb) = layer_k_v_b32(model, layer, s.type_k, s.type_v, v_pad);
        let ik = layer.indexer_key_length as u64 * s.type_k.b32_per_element();
        let iv = if layer.indexer_key_length > 0 {
            vb.min(match v_pad {
                Some((_, w)) => w,
                None => layer.indexer_value_length as u64,
            } * s.type_v.b32_per_element())
        } else {
            0
        };
        let (kb, vb) = (kb - ik, vb - iv);
        let layer_cells = match window {
            _ if !owned => 0,
            Some(w) => swa_cells_per_stream(w).saturating_mul(streams),
            None => cells_per_stream.saturating_mul(streams),
        };
        let idx_cells = if owned && layer.indexer_key_length > 0 {
            cells_per_stream.saturating_mul(streams)
        } else {
            0
        };
        if owned {
            let buf = if window.is_some() { &mut swa } else { &mut base };
            buf.0 += 1;
            buf.1 += kb as u128 * layer_cells as u128;
            buf.2 += vb as u128 * layer_cells as u128;
            if let Some(w) = window {
                buf.3 = swa_cells_per_stream(w);
            }
            if layer.indexer_key_length > 0 {
                idx.0 += 1;
                idx.1 += ik as u128 * idx_cells as u128;
                idx.2 += iv as u128 * idx_cells as u128;
            }
        }
        let layer_alloc = b32_to_bytes(
            (kb + vb) as u128 * layer_cells as u128 + (ik + iv) as u128 * idx_cells as u128,
        );
        if let Some(mla) = model.mla
            && layer.attention != Attention::None
            && owned
        {
            let per_tok = layer.head_count as u128
                * (mla.key_length_mla as u128 * s.type_k.b32_per_element() as u128
                    + mla.value_length_mla as u128 * s.type_v.b32_per_element() as u128);
            naive += per_tok * kept as u128 * b as u128;
        }
        bytes = bytes.saturating_add(layer_bytes);
        read = read.saturating_add(b32_to_bytes(b32 as u128 * reads as u128 * b as u128));
        alloc = alloc.saturating_add(layer_alloc);
        per_layer.push(KvLayer {
            index: il as u32,
            attention: layer.attention,
            recurrent: layer.recurrent,
            b32_per_token: b32,
            retained_tokens: kept,
            read_tokens: reads,
            bytes: layer_bytes,
            allocated_cells: layer_cells,
            allocated_bytes: layer_alloc,
        });
    }
    let recurrent = model.recurrent_bytes_per_sequence().saturating_mul(b);
    let mut caches = Vec::new();
    let recurrent_only = super::model::RECURRENT_ARCHITECTURES.contains(&model.architecture.as_str());
    if !model.no_memory && !recurrent_only {
        let buf = |kind, (layers, k, v, cells): (u32, u128, u128, u64)| AllocatedCache {
            kind,
            cells,
            streams,
            layers,
            k_bytes: b32_to_bytes(k),
            v_bytes: b32_to_bytes(v),
        };
        caches.push(buf(CacheKind::Kv, base));
        if swa.0 > 0 {
            caches.push(buf(CacheKind::Swa, swa));
        }
        if idx.0 > 0 {
            caches.push(buf(CacheKind::Indexer, idx));
        }
    }
    if let Some(st) = model.state {
        let layers = model.layers.iter().filter(|l| l.recurrent).count() as u32;
        caches.push(AllocatedCache {
            kind: CacheKind::Recurrent,
            cells: b,
            streams: 1,
            layers,
            k_bytes: st.conv.saturating_mul(4).saturating_mul(b).saturating_mul(layers as u64),
            v_bytes: st.state.saturating_mul(4).saturating_mul(b).saturating_mul(layers as u64),
        });
    }
    let mut refusals = Vec::new();
    if model.kv_types_must_match && s.type_k != s.type_v {
        refusals.push(CacheRefusal::MixedTypesOnMla {
            k: s.type_k,
            v: s.type_v,
        });
    }
    KvCache {
        bytes_per_token: b32_to_bytes(full_b32),
        bytes_per_token_all_layers: b32_to_bytes(all_b32),
        bytes,
        naive_bytes: model.mla.map(|_| b32_to_bytes(naive)),
        recurrent_bytes: recurrent,
        read_bytes: read.saturating_add(recurrent),
        allocated_bytes: alloc.saturating_add(recurrent),
        allocated_context: n_ctx,
        cells_per_stream,
        per_layer,
        v_is_view_of_k: model.mla.is_some(),
        caches,
        refusals,
    }
}

/// Logical attention-cache bytes over B sequences at N for the layers selected by `on`
/// (capacity view). Used by the context solver and per-tier placement.
pub fn logical_bytes_at(
    model: &ModelShape,
    k: CacheType,
    v: CacheType,
    n: u64,
    b: u64,
    on: &dyn Fn(usize) -> bool,
) -> u128 {
    model
        .layers
        .iter()
        .enumerate()
        .filter(|(il, _)| on(*il))
        .map(|(_, l)| {
            (layer_b32_per_token(model, l, k, v) as u128
                * retained(l.attention, n) as u128
                * b as u128)
                .div_ceil(32)
        })
        .sum()
}

/// Largest N whose logical cache (over B sequences, on the selected layers) fits `budget`
/// bytes. Solved on the piecewise-linear cache curve, not scanned. `None` means no limit:
/// every selected layer's cache is bounded by a window (or there is no cache at all).
/// Returns `Some(0)` when even one token does not fit.
pub fn max_context(
    model: &ModelShape,
    k: CacheType,
    v: CacheType,
    b: u64,
    budget: i128,
    on: &dyn Fn(usize) -> bool,
) -> Option<u64> {
    if budget < 0 {
        return Some(0);
    }
    let budget = budget as u128;
    let b = b.max(1) as u128;
    // Each layer contributes b32 × min(N, cap) × B / 32 bytes.
    let mut terms: Vec<(u128, Option<u64>)> = model
        .layers
        .iter()
        .enumerate()
        .filter(|(il, _)| on(*il))
        .filter_map(|(_, l)| {
            let b32 = layer_b32_per_token(model, l, k, v) as u128;
            if b32 == 0 {
                return None;
            }
            let cap = match l.attention {
                Attention::Full => None,
                Attention::Sliding { window } => Some(window),
                Attention::Chunked { chunk } => Some(chunk),
                Attention::None => return None,
            };
            Some((b32 * b, cap))
        })
        .collect();
    if terms.iter().all(|(_, cap)| cap.is_some()) {
        // Bounded cache: fits at every N if it fits at the largest window.
        let max_cap = terms.iter().filter_map(|(_, c)| *c).max().unwrap_or(0);
        let at_cap: u128 = terms
            .iter()
            .map(|(s, c)| s * c.unwrap_or(0) as u128)
            .sum::<u128>()
            .div_ceil(32);
        return if at_cap <= budget {
            None
        } else {
            Some(solve_linear(&terms, budget, max_cap))
        };
    }
    terms.sort_by_key(|(_, c)| c.unwrap_or(u64::MAX));
    // On the last segment (N beyond every window) the curve is linear; solve there first.
    Some(solve_linear(&terms, budget, u64::MAX))
}

/// Largest N ≤ limit with ⌈Σ slope × min(N, cap) / 32⌉ ≤ budget, by walking the breakpoints.
fn solve_linear(terms: &[(u128, Option<u64>)], budget: u128, limit: u64) -> u64 {
    let budget32 = budget * 32; // compare in 1/32 byte units: ceil(x/32) <= budget <=> x <= budget*32
    let f = |n: u64| -> u128 {
        terms
            .iter()
            .map(|(s, c)| s * c.map_or(n, |c| n.min(c)) as u128)
            .sum()
    };
    let mut caps: Vec<u64> = terms
        .iter()
        .filter_map(|(_, c)| *c)
        .filter(|c| *c < limit)
        .collect();
    caps.sort_unstable();
    caps.dedup();
    let mut lo = 0u64;
    for cap in caps.into_iter().chain(std::iter::once(limit)) {
        if f(cap) <= budget32 {
            lo = cap;
            continue;
        }
        // Linear on [lo, cap]: f(n) = f(lo) + slope × (n − lo).
        let slope: u128 = terms
            .iter()
            .filter(|(_, c)| c.is_none_or(|c| c > lo))
            .map(|(s, _)| *s)
            .sum();
        if slope == 0 {
            return lo;
        }
        let extra = (budget32 - f(lo)) / slope;
        return lo
            .saturating_add(u64::try_from(extra).unwrap_or(u64::MAX))
            .min(cap);
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::{ArchFigures, Mla, ModelShape, PerLayer};
    use crate::core::units::Provenance;

    pub(crate) fn qwen3_32b() -> ModelShape {
        let f = ArchFigures {
            architecture: "qwen3".into(),
            layers: 64,
            head_count: PerLayer::Uniform(64),
            head_count_kv: PerLayer::Uniform(8),
            key_length: Some(128),
            value_length: Some(128),
            embedding_length: 5120,
            vocab_size: 151_936,
            native_context: Some(32_768),
            sliding_window: None,
            sliding_pattern: None,
            chunk_size: None,
            mla: None,
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: false,
            keys: Default::default(),
        };
        ModelShape::from_figures("Qwen3-32B", &f, Provenance::Spec).unwrap()
    }

    fn settings(n: u64) -> CacheSettings {
        CacheSettings {
            context: n,
            ..CacheSettings::default()
        }
    }

    #[test]
    fn article_kv() {
        let c = cache(&qwen3_32b(), &settings(32_768));
        assert_eq!(c.bytes_per_token, 262_144);
        assert_eq!(c.bytes, 8_589_934_592);
        assert_eq!(c.allocated_bytes, 8_589_934_592);
        assert_eq!(c.per_layer.len(), 64);
    }

    #[test]
    fn q8_0_is_exact() {
        let mut s = settings(32_768);
        s.type_k = CacheType::Q8_0;
        s.type_v = CacheType::Q8_0;
        let c = cache(&qwen3_32b(), &s);
        // 2 × 64 × 8 × 128 × 34/32 = 139,264 bytes/token
        assert_eq!(c.bytes_per_token, 139_264);
        assert_eq!(c.bytes, 139_264 * 32_768);
    }

    #[test]
    fn padding_and_streams() {
        let mut s = settings(1000);
        s.sequences = 3;
        let c = cache(&qwen3_32b(), &s);
        // c = 3000 → 3072; per stream PAD(3072/3 = 1024, 256) = 1024; 3 streams
        assert_eq!(c.allocated_context, 3072);
        assert_eq!(c.cells_per_stream, 1024);
        assert_eq!(c.allocated_bytes, 262_144 * 3072);
        assert_eq!(c.bytes, 262_144 * 3000);
    }

    fn gemma(window: u64) -> ModelShape {
        let f = ArchFigures {
            architecture: "gemma3".into(),
            layers: 18,
            head_count: PerLayer::Uniform(4),
            head_count_kv: PerLayer::Uniform(1),
            key_length: Some(256),
            value_length: Some(256),
            embedding_length: 640,
            vocab_size: 262_144,
            native_context: Some(32_768),
            sliding_window: Some(window),
            sliding_pattern: None,
            chunk_size: None,
            mla: None,
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: true,
            keys: Default::default(),
        };
        ModelShape::from_figures("gemma", &f, Provenance::File).unwrap()
    }

    #[test]
    fn sliding_layers_cap_and_allocate() {
        let m = gemma(512);
        let c = cache(&m, &settings(4096));
        // per layer per token: 1 × (256 + 256) × 2 = 1024 bytes; 3 full layers.
        assert_eq!(c.bytes_per_token, 3 * 1024);
        assert_eq!(c.bytes, 3 * 1024 * 4096 + 15 * 1024 * 512);
        // sliding layers allocate PAD(min(4096, 512 + 512), 256) = 1024 cells
        assert_eq!(c.allocated_bytes, 3 * 1024 * 4096 + 15 * 1024 * 1024);
        let mut s = settings(4096);
        s.swa_full = true;
        assert_eq!(cache(&m, &s).allocated_bytes, 18 * 1024 * 4096);
        s.swa_full = false;
        s.kv_unified = true;
        s.sequences = 2;
        // unified: n_ctx 8192; sliding PAD(min(8192, 512×2 + 512), 256) = 1536
        assert_eq!(
            cache(&m, &s).allocated_bytes,
            3 * 1024 * 8192 + 15 * 1024 * 1536
        );
    }

    #[test]
    fn max_context_solves_exactly() {
        let m = qwen3_32b();
        let f16 = CacheType::F16;
        let all = |_: usize| true;
        let budget: i128 = 8_589_934_592;
        assert_eq!(max_context(&m, f16, f16, 1, budget, &all), Some(32_768));
        assert_eq!(max_context(&m, f16, f16, 1, budget - 1, &all), Some(32_767));
        assert_eq!(max_context(&m, f16, f16, 2, budget, &all), Some(16_384));
        assert_eq!(max_context(&m, f16, f16, 1, -5, &all), Some(0));
        // with windows: 3 full layers at 1024/token, 15 sliding at 1024 × min(N, 512)
        let g = gemma(512);
        let b = 3 * 1024 * 10_000 + 15 * 1024 * 512;
        assert_eq!(max_context(&g, f16, f16, 1, b as i128, &all), Some(10_000));
        let small = 10 * 1024; // below the windows: 18 layers × 1024 × N ≤ 10 KiB → N = 0
        assert_eq!(max_context(&g, f16, f16, 1, small, &all), Some(0));
        let mid = 18 * 1024 * 300;
        assert_eq!(max_context(&g, f16, f16, 1, mid, &all), Some(300));
    }

    #[test]
    fn max_context_agrees_with_cache() {
        let g = gemma(512);
        let all = |_: usize| true;
        for budget in [0i128, 1, 5_000, 1_000_000, 123_456_789, 9_876_543_210] {
            let n = max_context(&g, CacheType::Q8_0, CacheType::Q4_0, 3, budget, &all).unwrap();
            let at = logical_bytes_at(&g, CacheType::Q8_0, CacheType::Q4_0, n, 3, &all) as i128;
            let next =
                logical_bytes_at(&g, CacheType::Q8_0, CacheType::Q4_0, n + 1, 3, &all) as i128;
            assert!(at <= budget, "{budget}: {n}");
            assert!(next > budget, "{budget}: {n}");
        }
    }

    #[test]
    fn mla_stores_latent() {
        let f = ArchFigures {
            architecture: "deepseek2".into(),
            layers: 61,
            head_count: PerLayer::Uniform(128),
            head_count_kv: PerLayer::Uniform(1),
            key_length: Some(576),
            value_length: Some(512),
            embedding_length: 7168,
            vocab_size: 129_280,
            native_context: Some(163_840),
            sliding_window: None,
            sliding_pattern: None,
            chunk_size: None,
            mla: Some(Mla {
                kv_lora_rank: 512,
                rope_dim: 64,
                key_length_mla: 192,
                value_length_mla: 128,
            }),
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: false,
            keys: Default::default(),
        };
        let m = ModelShape::from_figures("dsv3", &f, Provenance::File).unwrap();
        let c = cache(&m, &settings(1));
        assert_eq!(c.bytes_per_token, 61 * 576 * 2);
        assert_eq!(c.naive_bytes, Some(61 * 128 * (192 + 128) * 2));
        let mut s = settings(1);
        s.type_v = CacheType::Q4_0;
        assert_eq!(
            cache(&m, &s).bytes,
            61 * 576 * 2,
            "-ctv has no effect on MLA"
        );
    }

    #[test]
    fn chunked_reads_current_chunk() {
        let mut f = gemma(512).clone();
        f.architecture = "llama4".into();
        let fig = ArchFigures {
            architecture: "llama4".into(),
            layers: 4,
            head_count: PerLayer::Uniform(8),
            head_count_kv: PerLayer::Uniform(1),
            key_length: Some(128),
            value_length: Some(128),
            embedding_length: 1024,
            vocab_size: 1000,
            native_context: None,
            sliding_window: None,
            sliding_pattern: None,
            chunk_size: Some(8192),
            mla: None,
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: false,
            keys: Default::default(),
        };
        let m = ModelShape::from_figures("l4", &fig, Provenance::File).unwrap();
        let c = cache(&m, &settings(8193));
        assert_eq!(c.per_layer[0].read_tokens, 1);
        assert_eq!(c.per_layer[0].retained_tokens, 8192);
        assert_eq!(c.per_layer[3].read_tokens, 8193);
    }
}
