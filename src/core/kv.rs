//! KV cache bytes: the logical cache per layer (windows, chunks, MLA latent, recurrent state)
//! and what llama.cpp allocates beside it (docs/bounds.md §3). Pure: no I/O, no other top-level module.

use super::cache::CacheType;
use super::model::{Attention, LayerShape, ModelShape};
use super::overflow::ByteFigure;
use std::cell::Cell;

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
    /// The largest single tensor of this layer's cache llama.cpp allocates (its K or its V,
    /// or an indexer's, over every stream): what a device's tensor limit is held against.
    /// 0 where it is not computed (DeepSeek-V4's compressed caches).
    pub largest_tensor_bytes: u64,
}

/// The cache of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvCache {
    /// Bytes added per retained token per sequence on layers that keep every token
    /// (Σ over full-attention layers of H_KV(d_k e_k + d_v e_v)); the whole figure without windows.
    pub bytes_per_token: u64,
    /// Bytes per token per sequence over every attention layer (windows not yet applied).
    pub bytes_per_token_all_layers: u64,
    /// Bytes per retained token per sequence over the layers still growing at N (every layer
    /// whose window is not yet full, or held whole by `--swa-full`): the per-token part of
    /// `bytes`, so `bytes ≈ growing_bytes_per_token × N × B + window_bytes`.
    pub growing_bytes_per_token: u64,
    /// Logical bytes over B sequences of the layers whose retained tokens are capped by their
    /// window or chunk at N: the fixed part of `bytes`, which no longer grows with N.
    pub window_bytes: u64,
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
    /// The element types of the K and V cells (V's is K's when V is a view of K).
    pub cell_types: (CacheType, CacheType),
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
    /// deepseek4: a compressed K-only cache holding one row per `ratio` tokens (4 = CSA,
    /// 128 = HCA); its lightning indexer is the `Indexer` cache at ratio 4.
    Compressed {
        /// Tokens per compressed row.
        ratio: u32,
    },
    /// deepseek4: a compressor's f32 state (`llama_dsv4_comp_state`): K = the kv plane,
    /// V = the score plane; `cells` = rows of state per stream.
    CompressorState {
        /// Tokens per compressed row.
        ratio: u32,
        /// The lightning indexer's compressor (else the attention's).
        indexer: bool,
    },
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

/// A cache configuration llama.cpp refuses at start-up (`llama_init_from_model` returns null),
/// or one it aborts on when it reserves the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheRefusal {
    /// MLA models (and deepseek4) need the same K and V cache type.
    MixedTypesOnMla {
        /// `-ctk`.
        k: CacheType,
        /// `-ctv`.
        v: CacheType,
    },
    /// A quantized V cache needs flash attention, which llama.cpp turns off for this
    /// architecture (grok).
    QuantizedVWithoutFlashAttn {
        /// `-ctv`.
        v: CacheType,
    },
    /// A quantized V cache with flash attention turned off (`-fa off`): llama.cpp refuses it.
    QuantizedVNeedsFlashAttn {
        /// `-ctv`.
        v: CacheType,
    },
    /// With flash attention, a block-quantized cache type must divide every layer's head size.
    HeadSizeNotBlockMultiple {
        /// "K" or "V".
        which: &'static str,
        /// The cache type.
        ty: CacheType,
        /// The head size it does not divide.
        head: u32,
    },
    /// A layer's cache tensor is over its device's tensor limit (Vulkan's
    /// `maxStorageBufferRange` without 64-bit indexing): llama.cpp aborts when it reserves
    /// the graph (`pre-allocated tensor … in a buffer … that cannot run the operation`), and
    /// `-fit` in its first dry run.
    CacheTensorOverLimit {
        /// The device's buffer-type name (`Vulkan0`).
        device: String,
        /// The first such layer.
        layer: u32,
        /// Its largest cache tensor (bytes).
        bytes: u64,
        /// The device's tensor limit (bytes).
        limit: u64,
        /// The largest context per sequence that keeps every cache tensor within its
        /// device's limit (None: none does).
        max_context: Option<u64>,
    },
}

impl CacheRefusal {
    /// A smaller context starts (the refusal is the tensor limit's, which a shorter cache
    /// keeps to): the largest such context.
    pub fn max_context(&self) -> Option<u64> {
        match self {
            CacheRefusal::CacheTensorOverLimit { max_context, .. } => *max_context,
            _ => None,
        }
    }
}

impl std::fmt::Display for CacheRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheRefusal::MixedTypesOnMla { k, v } => write!(
                f,
                "llama.cpp will not start: this model does not support different K ({k}) and V ({v}) cache types"
            ),
            CacheRefusal::QuantizedVWithoutFlashAttn { v } => write!(
                f,
                "llama.cpp will not start: a quantized V cache ({v}) needs flash attention, which llama.cpp turns off for this architecture"
            ),
            CacheRefusal::QuantizedVNeedsFlashAttn { v } => write!(
                f,
                "llama.cpp will not start: a quantized V cache ({v}) needs flash attention (use -fa on or an unquantized V cache)"
            ),
            CacheRefusal::HeadSizeNotBlockMultiple { which, ty, head } => write!(
                f,
                "llama.cpp will not start: {which} cache type {ty} with block size {} does not divide the head size {head}",
                ty.block().1
            ),
            CacheRefusal::CacheTensorOverLimit {
                device,
                layer,
                bytes,
                limit,
                max_context,
            } => {
                write!(
                    f,
                    "llama.cpp will not start: layer {layer}'s cache tensor ({}) is over {device}'s {} tensor limit (it aborts reserving the graph)",
                    crate::core::units::fmt_binary(*bytes),
                    crate::core::units::fmt_binary(*limit)
                )?;
                match max_context {
                    Some(c) => write!(
                        f,
                        "; a context of {} tokens per sequence or less keeps every cache tensor within it",
                        crate::core::units::fmt_tokens(*c)
                    ),
                    None => write!(f, "; no context keeps it within (a windowed cache)"),
                }
            }
        }
    }
}

impl KvCache {
    /// K and V cells are f32 (`-ctk f32`, `-ctv f32`): flash attention casts each layer's
    /// cache views to f16 for the attention (`build_attn_mha`).
    pub fn f32_cells(&self) -> (bool, bool) {
        let (k, v) = self.cell_types;
        (k == CacheType::F32, v == CacheType::F32)
    }
    /// K and V cells are quantized (`-ctk q8_0` …): llama.cpp rotates Q, K, V and the
    /// attention output by a Hadamard matrix for them (`attn_inp_k_rot`, `attn_inp_v_rot`);
    /// V is not rotated when it is a view of K.
    pub fn quantized_cells(&self) -> (bool, bool) {
        let (k, v) = self.cell_types;
        (k.is_quantized(), !self.v_is_view_of_k && v.is_quantized())
    }
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
    u64::try_from(kb + vb).unwrap_or(u64::MAX)
}

/// K and V bytes per cell of one layer in 1/32-byte units, indexer included; `v_pad` is the
/// V row width llama.cpp pads to with flash attention off (None: the layer's own width).
fn layer_k_v_b32(
    model: &ModelShape,
    layer: &LayerShape,
    k: CacheType,
    v: CacheType,
    v_pad: Option<(u64, u64)>,
) -> (u128, u128) {
    if !layer.owns_cache || model.no_memory {
        return (0, 0);
    }
    // u32 × u32 × a few hundred and u64 × a few hundred: within u128 whatever the figures.
    let (ek, ev) = (k.b32_per_element() as u128, v.b32_per_element() as u128);
    let idx_k = layer.indexer_key_length as u128 * ek;
    // Only a non-MLA indexer (MSA) stores V; the others are K-only.
    let idx_v = match v_pad {
        Some((_, iv)) if layer.indexer_value_length > 0 => iv,
        _ => layer.indexer_value_length as u64,
    } as u128
        * ev;
    if layer.attention == Attention::None {
        return (idx_k, idx_v);
    }
    let hkv = layer.head_count_kv as u128;
    let kb = hkv * layer.key_length as u128 * ek + idx_k;
    if model.mla.is_some() {
        // llama.cpp stores the latent (kv_lora_rank + n_rot = key_length) as K; V is a view.
        return (kb, idx_v);
    }
    let vw = match v_pad {
        Some((w, _)) => w as u128,
        None => hkv * layer.value_length as u128,
    };
    (kb, vw * ev + idx_v)
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

/// A byte figure of a cache walk that does not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saturated {
    /// Which figure.
    pub figure: ByteFigure,
    /// Its value in widened arithmetic (1/32-byte units for `KvPerToken`, else bytes);
    /// `None` when it passes even u128.
    pub value: Option<u128>,
}

/// The widened arithmetic of a cache walk: every product and sum that could pass 64 bits is
/// taken in u128 (checked; totals are summed wide and narrowed once), and each figure that
/// does not fit where the `KvCache` keeps it is recorded with the largest value seen (its
/// total), while the walk saturates it. [`cache_checked`] returns the record;
/// `core::overflow` refuses the scenario with it before any report shows the saturated figure.
#[derive(Debug, Default)]
struct Wide([Cell<Option<Option<u128>>>; 4]);

/// The figures a cache walk records, in the order they are reported.
const WALK_FIGURES: [ByteFigure; 4] = [
    ByteFigure::KvPerToken,
    ByteFigure::KvCache,
    ByteFigure::KvAllocated,
    ByteFigure::RecurrentState,
];

impl Wide {
    fn hit(&self, figure: ByteFigure, value: Option<u128>) {
        let Some(i) = WALK_FIGURES.iter().position(|f| *f == figure) else {
            return;
        };
        // None (beyond u128) is the largest value.
        let larger = match (self.0[i].get(), value) {
            (None, _) => value,
            (Some(None), _) | (_, None) => None,
            (Some(Some(a)), Some(b)) => Some(a.max(b)),
        };
        self.0[i].set(Some(larger));
    }
    /// The first recorded figure, in the order of [`WALK_FIGURES`].
    fn first(&self) -> Option<Saturated> {
        WALK_FIGURES.iter().zip(&self.0).find_map(|(figure, c)| {
            c.get().map(|value| Saturated {
                figure: *figure,
                value,
            })
        })
    }
    /// `v` as u64, saturating (recorded).
    fn narrow(&self, figure: ByteFigure, v: Option<u128>) -> u64 {
        match v.map(u64::try_from) {
            Some(Ok(x)) => x,
            _ => {
                self.hit(figure, v);
                u64::MAX
            }
        }
    }
    /// ⌈b32 / 32⌉ bytes as u64, saturating (recorded).
    fn bytes(&self, figure: ByteFigure, b32: u128) -> u64 {
        self.narrow(figure, Some(b32.div_ceil(32)))
    }
    /// a × b as u64, saturating (recorded).
    fn mul(&self, figure: ByteFigure, a: u64, b: u64) -> u64 {
        self.narrow(figure, Some(a as u128 * b as u128))
    }
    /// a + b as u64, saturating (recorded).
    fn add(&self, figure: ByteFigure, a: u64, b: u64) -> u64 {
        self.narrow(figure, Some(a as u128 + b as u128))
    }
    /// a × b in u128, saturating (recorded as beyond u128).
    fn mul128(&self, figure: ByteFigure, a: u128, b: u128) -> u128 {
        a.checked_mul(b).unwrap_or_else(|| {
            self.hit(figure, None);
            u128::MAX
        })
    }
    /// a + b in u128, saturating (recorded as beyond u128).
    fn add128(&self, figure: ByteFigure, a: u128, b: u128) -> u128 {
        a.checked_add(b).unwrap_or_else(|| {
            self.hit(figure, None);
            u128::MAX
        })
    }
    /// a × b × c in u128, saturating (recorded as beyond u128).
    fn mul3(&self, figure: ByteFigure, a: u128, b: u128, c: u128) -> u128 {
        let ab = self.mul128(figure, a, b);
        self.mul128(figure, ab, c)
    }
}

/// deepseek4's compression ratio of layer `il` (0 = raw window only; 4 = CSA + indexer;
/// 128 = HCA), from `attention.compress_ratios`.
fn dsv4_ratio(model: &ModelShape, il: usize) -> u64 {
    model
        .keys
        .compress_ratios
        .as_ref()
        .map_or(0, |r| u64::from(r.at(il)))
}

/// deepseek4's compressed rows per token of layer `il` in 1/32-byte units, rounded up (the
/// capacity view): K / ratio, plus the indexer key / 4 on CSA layers.
fn dsv4_compressed_b32_per_token(model: &ModelShape, il: usize, k: CacheType) -> u128 {
    let Some(layer) = model.layers.get(il) else {
        return 0;
    };
    let ratio = dsv4_ratio(model, il);
    let compressed = super::arch::lookup(&model.architecture).is_some_and(|a| a.compressed_kv);
    if !compressed || !layer.owns_cache || ratio == 0 {
        return 0;
    }
    let kw = u128::from(layer.head_count_kv) * u128::from(layer.key_length);
    let mut b32 = (kw * u128::from(k.b32_per_element())).div_ceil(u128::from(ratio));
    if ratio == 4 {
        let ik = u128::from(model.keys.indexer_key_length.unwrap_or(0));
        b32 += (ik * u128::from(k.b32_per_element())).div_ceil(4);
    }
    b32
}

/// deepseek4 (`llama_kv_cache_dsv4`): a raw sliding-window K-only cache on every layer (an
/// iSWA pair whose non-SWA half holds no layer), compressed K-only caches on the ratio-4 (CSA)
/// and ratio-128 (HCA) layers, the lightning-indexer cache on the CSA layers, and three f32
/// compressor states. Streams are per sequence even with `-kvu` (llama.cpp keeps DSV4 caches
/// non-unified); with `-kvu` each stream holds the whole context.
fn dsv4_cache(model: &ModelShape, s: &CacheSettings, wd: &Wide) -> KvCache {
    use ByteFigure::{KvAllocated as Alloc, KvCache as Logical, KvPerToken as PerToken};
    let n = s.context;
    let b = s.sequences.max(1);
    let n_ctx = wd.narrow(
        Alloc,
        Some((wd.mul(Alloc, n, b) as u128).div_ceil(PAD as u128) * PAD as u128),
    );
    // llama.cpp's n_ctx_seq: the whole context when unified, else its share.
    let base_cells = if s.kv_unified {
        n_ctx
    } else {
        pad(n_ctx / b, PAD)
    };
    let streams = b;
    let ek = s.type_k.b32_per_element();
    let comp_cells = |ratio: u64| pad(base_cells.div_ceil(ratio).max(1), PAD);
    let ik = u64::from(model.keys.indexer_key_length.unwrap_or(0));
    // (layers, K b32 × cells, cells per stream)
    let mut swa = (0u32, 0u128, 0u64);
    let mut csa = (0u32, 0u128, comp_cells(4));
    let mut hca = (0u32, 0u128, comp_cells(128));
    let mut lid = (0u32, 0u128, comp_cells(4));
    // compressor states: (layers, f32 elements per plane per stream)
    let (mut st_csa, mut st_hca, mut st_lid) = ((0u32, 0u64), (0u32, 0u64), (0u32, 0u64));
    let mut per_layer = Vec::with_capacity(model.layers.len());
    let (mut bytes, mut alloc) = (0u128, 0u128);
    for (il, layer) in model.layers.iter().enumerate() {
        let owned = layer.owns_cache && !model.no_memory && layer.attention != Attention::None;
        let kw = u64::from(layer.head_count_kv) * u64::from(layer.key_length);
        let k_b32w = kw as u128 * ek as u128;
        let k_b32 = wd.narrow(PerToken, Some(k_b32w));
        let window = match layer.attention {
            Attention::Sliding { window } => window,
            _ => base_cells,
        };
        let raw_cells = if s.swa_full {
            base_cells
        } else {
            pad(base_cells.min(window.saturating_add(s.ubatch)), PAD)
        };
        let ratio = dsv4_ratio(model, il);
        let cells3 =
            |b32: u128, cells: u64| wd.mul3(Alloc, b32, u128::from(cells), u128::from(streams));
        let mut layer_alloc: u128 = 0;
        // this layer's compressor states (f32 kv + score planes, per stream), fixed in size
        let mut layer_states = 0u64;
        if owned {
            swa.0 += 1;
            swa.2 = raw_cells;
            let raw = cells3(k_b32w, raw_cells);
            swa.1 = wd.add128(Alloc, swa.1, raw);
            layer_alloc = wd.add128(Alloc, layer_alloc, raw);
            let head = u64::from(layer.key_length);
            match ratio {
                4 => {
                    let c = cells3(k_b32w, csa.2);
                    csa.0 += 1;
                    csa.1 = wd.add128(Alloc, csa.1, c);
                    let l = cells3(u128::from(ik) * u128::from(ek), lid.2);
                    lid.0 += 1;
                    lid.1 = wd.add128(Alloc, lid.1, l);
                    layer_alloc = wd.add128(Alloc, layer_alloc, wd.add128(Alloc, c, l));
                    // 2·ratio rows of 2·head (overlapping windows), for K and for the indexer
                    st_csa.0 += 1;
                    st_csa.1 = 8 * 2 * head;
                    st_lid.0 += 1;
                    st_lid.1 = 8 * 2 * ik;
                    layer_states = wd.mul(Alloc, (st_csa.1 + st_lid.1) * 2 * 4, streams);
                }
                128 => {
                    let c = cells3(k_b32w, hca.2);
                    hca.0 += 1;
                    hca.1 = wd.add128(Alloc, hca.1, c);
                    layer_alloc = wd.add128(Alloc, layer_alloc, c);
                    st_hca.0 += 1;
                    st_hca.1 = 128 * head;
                    layer_states = wd.mul(Alloc, st_hca.1 * 2 * 4, streams);
                }
                _ => {}
            }
        }
        let kept = if owned { n.min(window) } else { 0 };
        // logical: the raw window plus the compressed (and indexer) rows, N / ratio each
        // (rounded up per token, as the capacity solver counts them)
        let logical = wd.add128(
            Logical,
            wd.mul128(Logical, k_b32w, u128::from(kept)),
            wd.mul128(
                Logical,
                dsv4_compressed_b32_per_token(model, il, s.type_k),
                u128::from(n),
            ),
        );
        // the compressor states count with their layer (logical and allocated alike), so the
        // per-layer figures add up to the whole
        let layer_bytes = wd.add128(
            Logical,
            wd.mul128(Logical, logical, u128::from(b)).div_ceil(32),
            u128::from(layer_states),
        );
        let layer_alloc = wd.add128(Alloc, layer_alloc.div_ceil(32), u128::from(layer_states));
        bytes = wd.add128(Logical, bytes, layer_bytes);
        alloc = wd.add128(Alloc, alloc, layer_alloc);
        let (layer_bytes, layer_alloc) = (
            wd.narrow(Logical, Some(layer_bytes)),
            wd.narrow(Alloc, Some(layer_alloc)),
        );
        per_layer.push(KvLayer {
            index: il as u32,
            attention: layer.attention,
            recurrent: layer.recurrent,
            b32_per_token: if owned { k_b32 } else { 0 },
            retained_tokens: kept,
            read_tokens: kept,
            bytes: layer_bytes,
            allocated_cells: if owned {
                wd.mul(Alloc, raw_cells, streams)
            } else {
                0
            },
            allocated_bytes: layer_alloc,
            largest_tensor_bytes: 0,
        });
    }
    let buf = |kind, layers: u32, k: u128, cells: u64| AllocatedCache {
        kind,
        cells,
        streams,
        layers,
        k_bytes: wd.bytes(Alloc, k),
        v_bytes: 0,
    };
    let mut caches = vec![
        // the iSWA pair's non-SWA half: no layer, no bytes
        buf(CacheKind::Kv, 0, 0, base_cells),
        buf(CacheKind::Swa, swa.0, swa.1, swa.2),
        buf(CacheKind::Compressed { ratio: 4 }, csa.0, csa.1, csa.2),
        buf(CacheKind::Compressed { ratio: 128 }, hca.0, hca.1, hca.2),
        buf(CacheKind::Indexer, lid.0, lid.1, lid.2),
    ];
    for (ratio, indexer, (layers, per_plane)) in
        [(4, false, st_csa), (128, false, st_hca), (4, true, st_lid)]
    {
        // two f32 planes (kv, score) per layer per stream
        let plane = wd.narrow(
            Alloc,
            (per_plane as u128 * 4 * streams as u128).checked_mul(u128::from(layers)),
        );
        caches.push(AllocatedCache {
            kind: CacheKind::CompressorState { ratio, indexer },
            cells: if ratio == 4 { 8 } else { 128 },
            streams,
            layers,
            k_bytes: plane,
            v_bytes: plane,
        });
    }
    let mut refusals = Vec::new();
    if s.type_k != s.type_v {
        refusals.push(CacheRefusal::MixedTypesOnMla {
            k: s.type_k,
            v: s.type_v,
        });
    }
    // the caches that grow with N: the compressed rows (K / ratio, indexer / 4) per token
    let growth: u128 = (0..model.layers.len())
        .map(|il| dsv4_compressed_b32_per_token(model, il, s.type_k))
        .fold(0, |a, x| wd.add128(PerToken, a, x));
    let all_b32 = model
        .layers
        .iter()
        .map(|l| {
            let (kb, vb) = layer_k_v_b32(model, l, s.type_k, s.type_v, None);
            kb + vb
        })
        .fold(0, |a, x| wd.add128(PerToken, a, x));
    wd.narrow(PerToken, Some(all_b32));
    let growing_bytes = wd.bytes(
        Logical,
        wd.mul3(Logical, growth, u128::from(n), u128::from(b)),
    );
    let (bytes, alloc) = (
        wd.narrow(Logical, Some(bytes)),
        wd.narrow(Alloc, Some(alloc)),
    );
    KvCache {
        bytes_per_token: wd.bytes(PerToken, growth),
        bytes_per_token_all_layers: wd.bytes(PerToken, all_b32),
        growing_bytes_per_token: wd.bytes(PerToken, growth),
        window_bytes: bytes.saturating_sub(growing_bytes),
        bytes,
        naive_bytes: None,
        recurrent_bytes: 0,
        read_bytes: bytes,
        allocated_bytes: alloc,
        allocated_context: n_ctx,
        cells_per_stream: base_cells,
        per_layer,
        v_is_view_of_k: true,
        cell_types: (s.type_k, s.type_k),
        caches,
        refusals,
    }
}

/// Compute the cache of `model` under `s` (docs/bounds.md §3). A figure beyond 64 bits is
/// saturated here; [`cache_checked`] says which (scenarios are checked before they reach a
/// report, `core::overflow`).
pub fn cache(model: &ModelShape, s: &CacheSettings) -> KvCache {
    walk(model, s, &Wide::default())
}

/// [`cache`], or the first figure of the same walk that does not fit in 64 bits.
pub fn cache_checked(model: &ModelShape, s: &CacheSettings) -> Result<KvCache, Saturated> {
    let wd = Wide::default();
    let kv = walk(model, s, &wd);
    match wd.first() {
        Some(sat) => Err(sat),
        None => Ok(kv),
    }
}

fn walk(model: &ModelShape, s: &CacheSettings, wd: &Wide) -> KvCache {
    use ByteFigure::{
        KvAllocated as Alloc, KvCache as Logical, KvPerToken as PerToken,
        RecurrentState as Recurrent,
    };
    if super::arch::lookup(&model.architecture).is_some_and(|a| a.compressed_kv) && !model.no_memory
    {
        return dsv4_cache(model, s, wd);
    }
    let n = s.context;
    let b = s.sequences.max(1);
    let total_ctx = wd.mul(Alloc, n, b);
    let n_ctx = wd.narrow(
        Alloc,
        Some((total_ctx as u128).div_ceil(PAD as u128) * PAD as u128),
    );
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
    let flash_attn = model.effective_flash_attn(s.flash_attn);
    // Flash attention off: V is stored transposed and padded to the widest layer.
    let v_pad = if flash_attn || model.mla.is_some() {
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
    let (mut bytes, mut read, mut alloc) = (0u128, 0u128, 0u128);
    let mut naive: u128 = 0;
    let (mut grow_b32, mut window_total) = (0u128, 0u128);
    // (layers, K b32 × cells, V b32 × cells, cells per stream) per buffer.
    let mut base = (0u32, 0u128, 0u128, cells_per_stream);
    let mut swa = (0u32, 0u128, 0u128, 0u64);
    let mut idx = (0u32, 0u128, 0u128, cells_per_stream);
    for (il, layer) in model.layers.iter().enumerate() {
        // per token in 1/32-byte units: wide for every sum and product, narrowed where kept
        let b32w = {
            let (kb, vb) = layer_k_v_b32(model, layer, s.type_k, s.type_v, None);
            kb + vb
        };
        let b32 = wd.narrow(PerToken, Some(b32w));
        all_b32 = wd.add128(PerToken, all_b32, b32w);
        if layer.attention == Attention::Full {
            full_b32 = wd.add128(PerToken, full_b32, b32w);
        }
        // --swa-full: the sliding layers keep every cell, so every token stays (llama.cpp
        // reuses a masked cell only when no free one is left).
        let kept = match layer.attention {
            Attention::Sliding { .. } | Attention::Chunked { .. } if s.swa_full => n,
            a => retained(a, n),
        };
        let layer_b32 = wd.mul3(Logical, b32w, kept as u128, b as u128);
        if layer.attention != Attention::None && kept == n {
            grow_b32 = wd.add128(PerToken, grow_b32, b32w);
        } else if kept < n {
            window_total = wd.add128(Logical, window_total, layer_b32.div_ceil(32));
        }
        let reads = read_cells(layer.attention, n);
        let layer_bytes = layer_b32.div_ceil(32);
        let window = match layer.attention {
            Attention::Sliding { window } => Some(window),
            Attention::Chunked { chunk } => Some(chunk),
            _ => None,
        };
        let owned = layer.owns_cache && !model.no_memory;
        // Attention K/V (without the indexer) and the indexer, allocated separately.
        let (kb, vb) = layer_k_v_b32(model, layer, s.type_k, s.type_v, v_pad);
        let ik = layer.indexer_key_length as u128 * s.type_k.b32_per_element() as u128;
        let iv = if layer.indexer_value_length > 0 {
            vb.min(
                match v_pad {
                    Some((_, w)) => w,
                    None => layer.indexer_value_length as u64,
                } as u128
                    * s.type_v.b32_per_element() as u128,
            )
        } else {
            0
        };
        let (kb, vb) = (kb - ik, vb - iv);
        let layer_cells = match window {
            _ if !owned => 0,
            Some(w) => wd.mul(Alloc, swa_cells_per_stream(w), streams),
            None => wd.mul(Alloc, cells_per_stream, streams),
        };
        let idx_cells = if owned && layer.indexer_key_length > 0 {
            wd.mul(Alloc, cells_per_stream, streams)
        } else {
            0
        };
        let (k_cells, v_cells) = (
            wd.mul128(Alloc, kb, layer_cells as u128),
            wd.mul128(Alloc, vb, layer_cells as u128),
        );
        let (ik_cells, iv_cells) = (
            wd.mul128(Alloc, ik, idx_cells as u128),
            wd.mul128(Alloc, iv, idx_cells as u128),
        );
        if owned {
            let buf = if window.is_some() {
                &mut swa
            } else {
                &mut base
            };
            buf.0 += 1;
            buf.1 = wd.add128(Alloc, buf.1, k_cells);
            buf.2 = wd.add128(Alloc, buf.2, v_cells);
            if let Some(w) = window {
                buf.3 = swa_cells_per_stream(w);
            }
            if layer.indexer_key_length > 0 {
                idx.0 += 1;
                idx.1 = wd.add128(Alloc, idx.1, ik_cells);
                idx.2 = wd.add128(Alloc, idx.2, iv_cells);
            }
        }
        let layer_alloc = [k_cells, v_cells, ik_cells, iv_cells]
            .into_iter()
            .fold(0, |a, x| wd.add128(Alloc, a, x))
            .div_ceil(32);
        if let Some(mla) = model.mla
            && layer.attention != Attention::None
            && owned
        {
            let per_tok = layer.head_count as u128
                * (mla.key_length_mla as u128 * s.type_k.b32_per_element() as u128
                    + mla.value_length_mla as u128 * s.type_v.b32_per_element() as u128);
            naive = wd.add128(
                Logical,
                naive,
                wd.mul3(Logical, per_tok, kept as u128, b as u128),
            );
        }
        bytes = wd.add128(Logical, bytes, layer_bytes);
        read = wd.add128(
            Logical,
            read,
            wd.mul3(Logical, b32w, reads as u128, b as u128)
                .div_ceil(32),
        );
        alloc = wd.add128(Alloc, alloc, layer_alloc);
        let (layer_bytes, layer_alloc) = (
            wd.narrow(Logical, Some(layer_bytes)),
            wd.narrow(Alloc, Some(layer_alloc)),
        );
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
            largest_tensor_bytes: wd.narrow(
                Alloc,
                Some(
                    [k_cells, v_cells, ik_cells, iv_cells]
                        .into_iter()
                        .max()
                        .unwrap_or(0)
                        .div_ceil(32),
                ),
            ),
        });
    }
    // qwen4exp's PLE rows are attributed to the PLE layers (per-layer figures add up)
    let recurrent = wd.narrow(
        Recurrent,
        model
            .state
            .and_then(|st| {
                let layers = model.layers.iter().filter(|l| l.recurrent).count() as u128;
                (st.conv as u128 + st.state as u128)
                    .checked_mul(4)?
                    .checked_mul(layers)?
                    .checked_mul(b as u128)
            })
            .or(model.state.is_none().then_some(0)),
    );
    let ple_rows = wd.mul(
        Recurrent,
        wd.mul(Recurrent, model.state.map_or(0, |st| st.ple), 4),
        b,
    );
    if ple_rows > 0 {
        let ple_layers: Vec<usize> = model
            .keys
            .ple_layers
            .iter()
            .flatten()
            .map(|il| *il as usize)
            .filter(|il| model.layers.get(*il).is_some_and(|l| l.recurrent))
            .collect();
        let each = ple_rows / ple_layers.len().max(1) as u64;
        for il in ple_layers {
            if let Some(x) = per_layer.get_mut(il) {
                x.bytes = wd.add(Logical, x.bytes, each);
                x.allocated_bytes = wd.add(Alloc, x.allocated_bytes, each);
            }
            bytes = wd.add128(Logical, bytes, u128::from(each));
            read = wd.add128(Logical, read, u128::from(each));
            alloc = wd.add128(Alloc, alloc, u128::from(each));
        }
    }
    let mut caches = Vec::new();
    let memory = super::arch::lookup(&model.architecture).map(|a| a.memory);
    let recurrent_only = memory == Some(super::arch::Memory::Recurrent);
    if !model.no_memory && !recurrent_only {
        let buf = |kind, (layers, k, v, cells): (u32, u128, u128, u64)| AllocatedCache {
            kind,
            cells,
            streams,
            layers,
            k_bytes: wd.bytes(Alloc, k),
            v_bytes: wd.bytes(Alloc, v),
        };
        // llama.cpp's order: the main (or DSA) cache, its indexer, then the SWA cache.
        caches.push(buf(CacheKind::Kv, base));
        if idx.0 > 0 {
            caches.push(buf(CacheKind::Indexer, idx));
        }
        if swa.0 > 0 {
            caches.push(buf(CacheKind::Swa, swa));
        }
    }
    // llama.cpp creates the recurrent memory for every hybrid and recurrent architecture,
    // even when no layer holds state.
    let has_recurrent_memory = memory == Some(super::arch::Memory::Hybrid) || recurrent_only;
    if model.state.is_some() || has_recurrent_memory {
        let st = model.state.unwrap_or(super::model::RecurrentState {
            conv: 0,
            state: 0,
            ple: 0,
        });
        let layers = model.layers.iter().filter(|l| l.recurrent).count() as u32;
        caches.push(AllocatedCache {
            kind: CacheKind::Recurrent,
            cells: b,
            streams: 1,
            layers,
            k_bytes: wd.mul(
                Recurrent,
                wd.mul(Recurrent, wd.mul(Recurrent, st.conv, 4), b),
                layers as u64,
            ),
            // S rows plus qwen4exp's PLE rows (llama.cpp logs them apart as P)
            v_bytes: wd.add(
                Recurrent,
                wd.mul(
                    Recurrent,
                    wd.mul(Recurrent, wd.mul(Recurrent, st.state, 4), b),
                    layers as u64,
                ),
                ple_rows,
            ),
        });
    }
    let mut refusals = Vec::new();
    if model.kv_types_must_match && s.type_k != s.type_v {
        refusals.push(CacheRefusal::MixedTypesOnMla {
            k: s.type_k,
            v: s.type_v,
        });
    }
    if s.flash_attn && !flash_attn && s.type_v.is_quantized() {
        refusals.push(CacheRefusal::QuantizedVWithoutFlashAttn { v: s.type_v });
    }
    if !s.flash_attn && s.type_v.is_quantized() && !model.no_memory {
        refusals.push(CacheRefusal::QuantizedVNeedsFlashAttn { v: s.type_v });
    }
    // The head-size check belongs to the cache: a model without one (wavtokenizer-dec, head
    // 1,282) starts with any K and V type under flash attention (oracle fixtures).
    if flash_attn && !model.no_memory {
        let n_main = model
            .layers
            .len()
            .saturating_sub(model.keys.nextn_layers as usize);
        for (which, ty, head) in [
            (
                "K",
                s.type_k,
                model.layers[..n_main]
                    .iter()
                    .map(|l| l.key_length)
                    .collect::<Vec<_>>(),
            ),
            (
                "V",
                s.type_v,
                model.layers[..n_main]
                    .iter()
                    .map(|l| l.value_length)
                    .collect(),
            ),
        ] {
            let blck = ty.block().1;
            if blck > 1
                && let Some(h) = head.into_iter().find(|h| !(*h as u64).is_multiple_of(blck))
            {
                refusals.push(CacheRefusal::HeadSizeNotBlockMultiple { which, ty, head: h });
            }
        }
    }
    // The per-token sums stay in 1/32-byte units in u64 for their readers.
    wd.narrow(PerToken, Some(all_b32));
    KvCache {
        bytes_per_token: wd.bytes(PerToken, full_b32),
        bytes_per_token_all_layers: wd.bytes(PerToken, all_b32),
        growing_bytes_per_token: wd.bytes(PerToken, grow_b32),
        window_bytes: wd.narrow(Logical, Some(window_total)),
        bytes: wd.narrow(Logical, Some(bytes)),
        naive_bytes: model.mla.map(|_| wd.bytes(Logical, naive)),
        recurrent_bytes: recurrent,
        read_bytes: wd.narrow(
            Logical,
            Some(wd.add128(Logical, read, u128::from(recurrent))),
        ),
        allocated_bytes: wd.narrow(Alloc, Some(wd.add128(Alloc, alloc, u128::from(recurrent)))),
        allocated_context: n_ctx,
        cells_per_stream,
        per_layer,
        v_is_view_of_k: model.mla.is_some(),
        cell_types: (
            s.type_k,
            if model.mla.is_some() {
                s.type_k
            } else {
                s.type_v
            },
        ),
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
        .map(|(il, l)| {
            ((layer_b32_per_token(model, l, k, v) as u128 * retained(l.attention, n) as u128
                + dsv4_compressed_b32_per_token(model, il, k) * n as u128)
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
        .flat_map(|(il, l)| {
            let b32 = layer_b32_per_token(model, l, k, v) as u128;
            let cap = match l.attention {
                Attention::Full => None,
                Attention::Sliding { window } => Some(window),
                Attention::Chunked { chunk } => Some(chunk),
                Attention::None => return vec![],
            };
            let mut t = Vec::with_capacity(2);
            if b32 > 0 {
                t.push((b32 * b, cap));
            }
            // deepseek4's compressed rows grow with N, beyond every window
            let comp = dsv4_compressed_b32_per_token(model, il, k);
            if comp > 0 {
                t.push((comp * b, None));
            }
            t
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
        let f = crate::core::model::qwen3_32b_figures();
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

/// Per-architecture figures derived by hand from the pinned llama.cpp source
/// (`load_arch_hparams`, `create_memory`, `llama_kv_cache`, `llama_memory_recurrent`).
#[cfg(test)]
mod llama_rules {
    use super::*;
    use crate::core::model::{ArchFigures, CacheKeys, Mla, ModelShape, PerLayer, Ssm};
    use crate::core::units::Provenance;

    fn fig(arch: &str, layers: u32, h: u32, hkv: PerLayer, d: u32, embd: u64) -> ArchFigures {
        ArchFigures {
            architecture: arch.into(),
            layers,
            head_count: PerLayer::Uniform(h),
            head_count_kv: hkv,
            key_length: Some(d),
            value_length: Some(d),
            embedding_length: embd,
            vocab_size: 1000,
            native_context: None,
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

    fn shape(f: &ArchFigures) -> ModelShape {
        ModelShape::from_figures("m", f, Provenance::File).unwrap()
    }

    fn at(n: u64) -> CacheSettings {
        CacheSettings {
            context: n,
            ..CacheSettings::default()
        }
    }

    fn kind(c: &KvCache, k: CacheKind) -> AllocatedCache {
        c.caches.iter().find(|x| x.kind == k).cloned().unwrap()
    }

    #[test]
    fn gemma3n_e4b_without_pattern_key() {
        // 35 layers, 2 KV heads × 256, window 512; only layers 0..19 hold a cache, period 5.
        let mut f = fig("gemma3n", 35, 8, PerLayer::Uniform(2), 256, 2048);
        f.sliding_window = Some(512);
        let m = shape(&f);
        assert_eq!(m.layers.iter().filter(|l| l.owns_cache).count(), 20);
        let c = cache(&m, &at(32_768));
        // per layer per cell: 2 × (256 + 256) × 2 = 2048 bytes; 4 full + 16 sliding
        let base = kind(&c, CacheKind::Kv);
        assert_eq!((base.layers, base.cells), (4, 32_768));
        assert_eq!(base.bytes(), 4 * 2048 * 32_768);
        let swa = kind(&c, CacheKind::Swa);
        assert_eq!((swa.layers, swa.cells), (16, 1024));
        assert_eq!(swa.bytes(), 16 * 2048 * 1024);
        assert_eq!(c.allocated_bytes, 301_989_888);
        // before: 35 full layers, 2,348,810,240 bytes
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn gemma4_shared_kv_and_swa_head_sizes() {
        let mut f = fig("gemma4", 6, 8, PerLayer::Uniform(2), 512, 2048);
        f.sliding_window = Some(1024);
        f.sliding_pattern = Some(vec![true, true, false, true, true, false]);
        f.keys.shared_kv_layers = Some(2);
        f.keys.key_length_swa = Some(256);
        f.keys.value_length_swa = Some(256);
        let m = shape(&f);
        let mut s = at(4096);
        let c = cache(&m, &s);
        // own caches: layers 0..3 (1, 0 sliding; 2 full; 3 sliding)
        let base = kind(&c, CacheKind::Kv);
        assert_eq!(base.layers, 1);
        assert_eq!(base.bytes(), 2 * (512 + 512) * 2 * 4096);
        let swa = kind(&c, CacheKind::Swa);
        assert_eq!((swa.layers, swa.cells), (3, 1536));
        assert_eq!(swa.bytes(), 3 * 2 * (256 + 256) * 2 * 1536);
        // flash attention off: V padded to the widest layer (2 × 512)
        s.flash_attn = false;
        let c = cache(&m, &s);
        assert_eq!(kind(&c, CacheKind::Swa).v_bytes, 3 * 2 * 512 * 2 * 1536);
        assert_eq!(kind(&c, CacheKind::Swa).k_bytes, 3 * 2 * 256 * 2 * 1536);
    }

    fn qwen3next(layers: u32, nextn: u32) -> ModelShape {
        let mut f = fig("qwen3next", layers, 16, PerLayer::Uniform(2), 256, 2048);
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 4096,
            d_state: 128,
            n_group: 16,
        });
        f.keys.nextn_layers = nextn;
        shape(&f)
    }

    #[test]
    fn qwen3next_every_fourth_layer_attends() {
        let m = qwen3next(48, 0);
        let attn: Vec<usize> = (0..48).filter(|i| m.layers[*i].owns_cache).collect();
        assert_eq!(attn, vec![3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47]);
        assert_eq!(m.layers.iter().filter(|l| l.recurrent).count(), 36);
        let c = cache(&m, &at(32_768));
        // 12 layers × 2 × (256 + 256) × 2 bytes × 32,768 cells
        assert_eq!(kind(&c, CacheKind::Kv).bytes(), 805_306_368);
        // r = 3 × (4096 + 2 × 16 × 128) = 24,576; s = 128 × 4096 = 524,288; × 4 bytes × 36
        let r = kind(&c, CacheKind::Recurrent);
        assert_eq!((r.layers, r.cells), (36, 1));
        assert_eq!(r.k_bytes, 36 * 24_576 * 4);
        assert_eq!(r.v_bytes, 36 * 524_288 * 4);
        assert_eq!(c.allocated_bytes, 805_306_368 + 79_036_416);
        // before: 48 attention layers (3,221,225,472 bytes) and no recurrent state
    }

    #[test]
    fn hybrid_streams_and_mtp() {
        // 4 sequences of 8,192, not unified: 4 streams of 8,192 cells; 4 state rows.
        let m = qwen3next(49, 1);
        assert!(!m.layers[48].owns_cache && !m.layers[48].recurrent);
        let mut s = at(8192);
        s.sequences = 4;
        let c = cache(&m, &s);
        let kv = kind(&c, CacheKind::Kv);
        assert_eq!((kv.cells, kv.streams, kv.layers), (8192, 4, 12));
        assert_eq!(kv.bytes(), 12 * 2048 * 8192 * 4);
        let r = kind(&c, CacheKind::Recurrent);
        assert_eq!(r.cells, 4);
        assert_eq!(r.bytes(), 36 * (24_576 + 524_288) * 4 * 4);
        s.kv_unified = true;
        let c = cache(&m, &s);
        let kv = kind(&c, CacheKind::Kv);
        assert_eq!((kv.cells, kv.streams), (32_768, 1));
    }

    #[test]
    fn qwen35_recurrent_layers_key_wins() {
        let mut f = fig("qwen35", 4, 16, PerLayer::Uniform(2), 256, 2048);
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 4096,
            d_state: 128,
            n_group: 16,
        });
        f.keys.recurrent_pattern = Some(vec![true, false, true, false]);
        let m = shape(&f);
        assert_eq!(
            m.layers.iter().map(|l| l.recurrent).collect::<Vec<_>>(),
            vec![true, false, true, false]
        );
        f.keys.recurrent_pattern = None;
        f.keys.full_attention_interval = Some(2);
        let m = shape(&f);
        assert_eq!(
            m.layers.iter().map(|l| l.owns_cache).collect::<Vec<_>>(),
            vec![false, true, false, true]
        );
    }

    #[test]
    fn rwkv_state() {
        for arch in ["rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"] {
            let mut f = fig(arch, 24, 0, PerLayer::Uniform(0), 0, 2048);
            f.key_length = None;
            f.value_length = None;
            f.keys.wkv_head_size = Some(64);
            let m = shape(&f);
            let c = cache(&m, &at(32_768));
            // (2 × 2048 + 2048 × 64) × 4 bytes = 540,672 per layer
            assert_eq!(c.allocated_bytes, 24 * 540_672, "{arch}");
            assert_eq!(c.caches.len(), 1);
            f.keys.token_shift_count = Some(1);
            assert_eq!(
                shape(&f).recurrent_bytes_per_sequence(),
                24 * (2048 + 131_072) * 4
            );
        }
    }

    #[test]
    fn mamba_every_layer_recurrent() {
        let mut f = fig("mamba2", 4, 0, PerLayer::Uniform(0), 0, 1024);
        f.key_length = None;
        f.value_length = None;
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 2048,
            d_state: 128,
            n_group: 1,
        });
        let c = cache(&shape(&f), &at(1000));
        assert_eq!(c.allocated_bytes, 4 * ((3 * (2048 + 256)) + 128 * 2048) * 4);
    }

    #[test]
    fn nemotron_h_recurrent_needs_no_ffn() {
        // Nemotron-H-8B: M = Mamba, - = MLP, * = attention (52 layers).
        let p = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-";
        assert_eq!(p.len(), 52);
        let hkv: Vec<u32> = p.chars().map(|c| if c == '*' { 8 } else { 0 }).collect();
        let ff: Vec<u32> = p
            .chars()
            .map(|c| if c == '-' { 21_504 } else { 0 })
            .collect();
        let mut f = fig("nemotron_h", 52, 32, PerLayer::List(hkv), 128, 4096);
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 8192,
            d_state: 128,
            n_group: 8,
        });
        f.keys.feed_forward = Some(PerLayer::List(ff));
        let m = shape(&f);
        assert_eq!(m.layers.iter().filter(|l| l.recurrent).count(), 24);
        let c = cache(&m, &at(32_768));
        // r = 3 × (8192 + 2 × 8 × 128) = 30,720; s = 128 × 8192 = 1,048,576
        assert_eq!(c.recurrent_bytes, 24 * (30_720 + 1_048_576) * 4);
        let kv = kind(&c, CacheKind::Kv);
        assert_eq!(kv.layers, 4);
        assert_eq!(kv.bytes(), 4 * 2 * 8 * 128 * 2 * 32_768);
        // before: 48 recurrent layers (twice the state)
    }

    #[test]
    fn lfm2_short_convolution_state() {
        // LFM2-1.2B: 16 layers, attention at 2, 5, 8, 10, 12, 14; l_cache 3.
        let hkv: Vec<u32> = (0..16)
            .map(|i| {
                if [2, 5, 8, 10, 12, 14].contains(&i) {
                    8
                } else {
                    0
                }
            })
            .collect();
        let mut f = fig("lfm2", 16, 32, PerLayer::List(hkv), 64, 2048);
        f.keys.shortconv_l_cache = Some(3);
        let m = shape(&f);
        let c = cache(&m, &at(32_768));
        // 10 conv layers × 2048 × 2 rows × 4 bytes
        assert_eq!(c.recurrent_bytes, 10 * 2048 * 2 * 4);
        assert_eq!(kind(&c, CacheKind::Kv).bytes(), 6 * 2 * 8 * 64 * 2 * 32_768);
        // with a window every attention layer slides
        f.sliding_window = Some(512);
        let c = cache(&shape(&f), &at(32_768));
        assert_eq!(kind(&c, CacheKind::Swa).layers, 6);
    }

    #[test]
    fn kimi_linear_kda_state() {
        let hkv: Vec<u32> = (0..4).map(|i| if i == 3 { 32 } else { 0 }).collect();
        let mut f = fig("kimi-linear", 4, 32, PerLayer::List(hkv), 192, 2304);
        f.keys.kda_head_dim = Some(128);
        f.keys.conv_kernel = Some(4);
        let m = shape(&f);
        // r = 3 × 3 × 32 × 128 = 36,864; s = 128 × 128 × 32 = 524,288
        assert_eq!(m.recurrent_bytes_per_sequence(), 3 * (36_864 + 524_288) * 4);
    }

    #[test]
    fn hard_coded_window_patterns() {
        let pattern = |arch: &str, layers: u32, window: Option<u64>| {
            let mut f = fig(arch, layers, 8, PerLayer::Uniform(2), 128, 1024);
            f.sliding_window = window;
            let m = shape(&f);
            assert!(
                !m.warnings.iter().any(|w| w.contains("applies none")),
                "{arch}: {:?}",
                m.warnings
            );
            m.layers
                .iter()
                .map(|l| match l.attention {
                    Attention::Sliding { window } => window,
                    _ => 0,
                })
                .collect::<Vec<u64>>()
        };
        assert_eq!(pattern("afmoe", 4, Some(512)), vec![512, 512, 512, 0]);
        assert_eq!(pattern("afmoe", 4, None), vec![0, 0, 0, 0]);
        // smallthinker: dense first and the window forced to 4096
        assert_eq!(
            pattern("smallthinker", 5, Some(100)),
            vec![0, 4096, 4096, 4096, 0]
        );
        assert_eq!(pattern("plamo3", 8, Some(64))[7], 0);
        assert_eq!(pattern("plamo3", 8, Some(64))[6], 64);
        assert_eq!(pattern("exaone-moe", 4, None), vec![128, 128, 128, 0]);
        assert_eq!(pattern("exaone4", 64, None)[0], 4096);
        assert_eq!(pattern("exaone4", 64, None)[3], 0);
        assert_eq!(pattern("exaone4", 30, Some(4096)), vec![0; 30]);
        assert_eq!(pattern("cohere2moe", 4, Some(8)), vec![0, 8, 8, 8]);
        // mimo2 / step35 need the per-layer array
        let mut f = fig("mimo2", 4, 8, PerLayer::Uniform(2), 128, 1024);
        f.sliding_window = Some(128);
        assert!(ModelShape::from_figures("m", &f, Provenance::File).is_err());
        f.sliding_pattern = Some(vec![true, false, true, false]);
        assert_eq!(
            shape(&f).layers[0].attention,
            Attention::Sliding { window: 128 }
        );
    }

    #[test]
    fn mtp_layers_hold_no_cache() {
        // GLM-4.5-Air: 46 layers + 1 MTP layer; 8 KV heads × 128.
        let mut f = fig("glm4moe", 47, 96, PerLayer::Uniform(8), 128, 4096);
        f.keys.nextn_layers = 1;
        let c = cache(&shape(&f), &at(32_768));
        assert_eq!(kind(&c, CacheKind::Kv).layers, 46);
        assert_eq!(c.allocated_bytes, 46 * 4096 * 32_768);
        // before: 47 layers, 6,308,233,216 bytes
    }

    #[test]
    fn non_causal_models_have_no_memory() {
        for arch in [
            "bert",
            "modern-bert",
            "gemma-embedding",
            "nomic-bert",
            "llada",
        ] {
            let mut f = fig(arch, 12, 12, PerLayer::Uniform(12), 64, 768);
            f.sliding_window = Some(128);
            let m = shape(&f);
            let c = cache(&m, &at(8192));
            assert_eq!(
                (c.bytes, c.allocated_bytes, c.caches.len()),
                (0, 0, 0),
                "{arch}"
            );
        }
    }

    #[test]
    fn v_padded_to_widest_layer_without_flash_attention() {
        // openelm-like: per-layer query heads 12, 12, 16, 20 and KV heads 3, 3, 4, 5 of 64.
        let mut f = fig("openelm", 4, 12, PerLayer::List(vec![3, 3, 4, 5]), 64, 768);
        f.head_count = PerLayer::List(vec![12, 12, 16, 20]);
        let m = shape(&f);
        let mut s = at(256);
        let c = cache(&m, &s);
        assert_eq!(
            kind(&c, CacheKind::Kv).v_bytes,
            (3 + 3 + 4 + 5) * 64 * 2 * 256
        );
        s.flash_attn = false;
        let c = cache(&m, &s);
        let kv = kind(&c, CacheKind::Kv);
        assert_eq!(kv.v_bytes, 4 * 5 * 64 * 2 * 256);
        assert_eq!(kv.k_bytes, (3 + 3 + 4 + 5) * 64 * 2 * 256);
        assert_eq!(c.allocated_bytes, kv.bytes());
    }

    fn dsv3(arch: &str) -> ArchFigures {
        let mut f = fig(arch, 4, 128, PerLayer::Uniform(1), 576, 7168);
        f.value_length = Some(512);
        f.mla = Some(Mla {
            kv_lora_rank: 512,
            rope_dim: 64,
            key_length_mla: 192,
            value_length_mla: 128,
        });
        f
    }

    #[test]
    fn mla_refuses_mixed_types() {
        let m = shape(&dsv3("deepseek2"));
        let mut s = at(4096);
        s.type_k = CacheType::Q4_0;
        assert_eq!(
            cache(&m, &s).refusals,
            vec![CacheRefusal::MixedTypesOnMla {
                k: CacheType::Q4_0,
                v: CacheType::F16
            }]
        );
        s.type_v = CacheType::Q4_0;
        assert!(cache(&m, &s).refusals.is_empty());
        // llama refuses nothing here
        let l = shape(&fig("llama", 2, 8, PerLayer::Uniform(8), 128, 1024));
        s.type_v = CacheType::F16;
        assert!(cache(&l, &s).refusals.is_empty());
    }

    #[test]
    fn quantized_cache_must_divide_head_size() {
        let m = shape(&fig("llama", 2, 4, PerLayer::Uniform(2), 16, 64));
        let mut s = at(4096);
        s.type_k = CacheType::Q8_0;
        s.type_v = CacheType::Q8_0;
        let r = cache(&m, &s).refusals;
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            r[0],
            CacheRefusal::HeadSizeNotBlockMultiple {
                which: "K",
                ty: CacheType::Q8_0,
                head: 16
            }
        );
        s.flash_attn = false;
        s.type_v = CacheType::F16;
        assert!(cache(&m, &s).refusals.is_empty());
    }

    #[test]
    fn grok_runs_without_flash_attention() {
        let m = shape(&fig("grok", 2, 4, PerLayer::List(vec![1, 2]), 16, 64));
        let mut s = at(256);
        s.type_k = CacheType::Q4_0;
        let c = cache(&m, &s);
        assert!(c.refusals.is_empty(), "{:?}", c.refusals);
        // V transposed and padded to the widest layer (2 × 16)
        assert_eq!(kind(&c, CacheKind::Kv).v_bytes, 2 * 2 * 16 * 2 * 256);
        s.type_v = CacheType::Q8_0;
        assert_eq!(
            cache(&m, &s).refusals,
            vec![CacheRefusal::QuantizedVWithoutFlashAttn { v: CacheType::Q8_0 }]
        );
    }

    #[test]
    fn dsa_indexer_cache() {
        let mut f = dsv3("deepseek32");
        f.keys.indexer_key_length = Some(128);
        let c = cache(&shape(&f), &at(4096));
        let idx = kind(&c, CacheKind::Indexer);
        assert_eq!((idx.layers, idx.cells), (4, 4096));
        assert_eq!((idx.k_bytes, idx.v_bytes), (4 * 128 * 2 * 4096, 0));
        assert_eq!(kind(&c, CacheKind::Kv).bytes(), 4 * 576 * 2 * 4096);
        // glm-dsa: only layers typed full own an indexer
        let mut f = dsv3("glm-dsa");
        f.keys.indexer_key_length = Some(128);
        f.keys.indexer_types = Some(vec![true, false, false, true]);
        let c = cache(&shape(&f), &at(4096));
        assert_eq!(kind(&c, CacheKind::Indexer).layers, 2);
        // no types key: all layers before GLM 5.2, the built-in list from 1 Mi tokens on
        let mut f = dsv3("glm-dsa");
        f.layers = 8;
        f.keys.indexer_key_length = Some(128);
        f.native_context = Some(202_752);
        assert_eq!(
            kind(&cache(&shape(&f), &at(256)), CacheKind::Indexer).layers,
            8
        );
        f.native_context = Some(1_048_576);
        let m = shape(&f);
        let owners: Vec<usize> = (0..8)
            .filter(|i| m.layers[*i].indexer_key_length > 0)
            .collect();
        assert_eq!(owners, vec![0, 1, 2, 6]);
    }

    #[test]
    fn dots3note_dsa_beside_swa() {
        let mut f = dsv3("dots3note");
        f.sliding_window = Some(128);
        f.sliding_pattern = Some(vec![false, true, true, true]);
        f.keys.indexer_key_length = Some(64);
        f.keys.indexer_types = Some(vec![true, false, false, false]);
        let c = cache(&shape(&f), &at(4096));
        let kinds: Vec<CacheKind> = c.caches.iter().map(|x| x.kind).collect();
        assert_eq!(
            kinds,
            vec![CacheKind::Kv, CacheKind::Indexer, CacheKind::Swa]
        );
        assert_eq!(kind(&c, CacheKind::Kv).bytes(), 576 * 2 * 4096);
        assert_eq!(kind(&c, CacheKind::Indexer).bytes(), 64 * 2 * 4096);
        // 3 sliding layers: PAD(min(4096, 128 + 512), 256) = 768 cells
        assert_eq!(kind(&c, CacheKind::Swa).bytes(), 3 * 576 * 2 * 768);
    }

    #[test]
    fn glm5_next_kda_mla_and_pooled_indexer() {
        let mut f = dsv3("glm5-next");
        f.head_count_kv = PerLayer::List(vec![0, 0, 0, 1]);
        f.keys.kda_head_dim = Some(128);
        f.keys.conv_kernel = Some(4);
        f.keys.indexer_key_length = Some(128);
        let c = cache(&shape(&f), &at(4096));
        assert_eq!(kind(&c, CacheKind::Kv).bytes(), 576 * 2 * 4096);
        let idx = kind(&c, CacheKind::Indexer);
        assert_eq!((idx.layers, idx.k_bytes), (1, 3 * 128 * 2 * 4096));
        // KDA: r = 3 × 3 × 128 heads × 128, s = 128² × 128, over 3 layers
        let r = kind(&c, CacheKind::Recurrent);
        assert_eq!(r.bytes(), 3 * (3 * 3 * 128 * 128 + 128 * 128 * 128) * 4);
    }

    #[test]
    fn hy_v4_indexer_only_with_top_k() {
        let mut f = dsv3("hy_v4");
        f.keys.indexer_key_length = Some(128);
        f.keys.indexer_types = Some(vec![true, false, true, false]);
        let c = cache(&shape(&f), &at(4096));
        assert!(c.caches.iter().all(|x| x.kind != CacheKind::Indexer));
        f.keys.indexer_top_k = Some(2048);
        let c = cache(&shape(&f), &at(4096));
        assert_eq!(kind(&c, CacheKind::Indexer).layers, 2);
    }

    /// deepseek4-tiny of the oracle fixtures: 6 layers + 1 MTP, one KV head of 128, window 64,
    /// compress ratios 0,4,128,4,128,4 (+0), indexer key 64 (llama.cpp b11434's own figures).
    fn deepseek4_tiny() -> ModelShape {
        let mut f = fig("deepseek4", 7, 4, PerLayer::Uniform(1), 128, 128);
        f.sliding_window = Some(64);
        f.keys.nextn_layers = 1;
        f.keys.indexer_key_length = Some(64);
        f.keys.compress_ratios = Some(PerLayer::List(vec![0, 4, 128, 4, 128, 4, 0]));
        shape(&f)
    }

    #[test]
    fn deepseek4_refuses_what_llama_cpp_refuses() {
        let mut f = fig("deepseek4", 7, 4, PerLayer::Uniform(1), 128, 128);
        f.sliding_window = Some(64);
        let no_ratios = ModelShape::from_figures("m", &f, Provenance::File).unwrap_err();
        assert!(no_ratios.0.contains("compress_ratios"), "{no_ratios}");
        f.keys.compress_ratios = Some(PerLayer::List(vec![0, 4, 128, 4, 128, 8, 0]));
        let bad = ModelShape::from_figures("m", &f, Provenance::File).unwrap_err();
        assert!(bad.0.contains("ratio 8"), "{bad}");
        f.keys.compress_ratios = Some(PerLayer::List(vec![0, 4, 128]));
        assert!(ModelShape::from_figures("m", &f, Provenance::File).is_err());
    }

    #[test]
    fn deepseek4_compressed_caches_as_llama_cpp() {
        let m = deepseek4_tiny();
        let c = cache(&m, &at(32_768));
        let got: Vec<(CacheKind, u64, u32, u64)> = c
            .caches
            .iter()
            .map(|x| (x.kind, x.cells, x.layers, x.bytes()))
            .collect();
        use CacheKind::*;
        assert_eq!(
            got,
            vec![
                (Kv, 32_768, 0, 0),
                (Swa, 768, 7, 1_376_256),
                (Compressed { ratio: 4 }, 8192, 3, 6_291_456),
                (Compressed { ratio: 128 }, 256, 2, 131_072),
                (Indexer, 8192, 3, 3_145_728),
                (
                    CompressorState {
                        ratio: 4,
                        indexer: false
                    },
                    8,
                    3,
                    49_152
                ),
                (
                    CompressorState {
                        ratio: 128,
                        indexer: false
                    },
                    128,
                    2,
                    262_144
                ),
                (
                    CompressorState {
                        ratio: 4,
                        indexer: true
                    },
                    8,
                    3,
                    24_576
                ),
            ]
        );
        // llama.cpp's breakdown: context = 11,280,384 bytes; the per-layer figures (what the
        // tiers place) add up to it
        assert_eq!(c.allocated_bytes, 11_280_384);
        let per_layer: u64 = c.per_layer.iter().map(|l| l.allocated_bytes).sum();
        assert_eq!(per_layer, c.allocated_bytes);
        // four sequences with -kvu: every stream holds the whole context (llama.cpp keeps the
        // DSV4 caches per sequence)
        let s = CacheSettings {
            context: 8192,
            sequences: 4,
            kv_unified: true,
            ..CacheSettings::default()
        };
        assert_eq!(cache(&m, &s).allocated_bytes, 45_121_536);
        // the compressed caches grow with N: the capacity solver sees a limit
        let k = CacheType::F16;
        assert!(max_context(&m, k, k, 1, 1 << 30, &|_| true).is_some());
        assert_eq!(
            cache(
                &m,
                &CacheSettings {
                    type_v: CacheType::Q8_0,
                    ..at(4096)
                }
            )
            .refusals
            .len(),
            1
        );
    }

    #[test]
    fn msa_indexer_skips_dense_lead() {
        let mut f = fig("minimax-m3", 4, 48, PerLayer::Uniform(8), 128, 3072);
        f.keys.indexer_key_length = Some(128);
        f.keys.leading_dense = Some(1);
        let c = cache(&shape(&f), &at(1024));
        let idx = kind(&c, CacheKind::Indexer);
        assert_eq!(idx.layers, 3);
        assert_eq!(
            (idx.k_bytes, idx.v_bytes),
            (3 * 128 * 2 * 1024, 3 * 128 * 2 * 1024)
        );
    }

    #[test]
    fn unsupported_architectures_say_so() {
        let m = shape(&fig("graniteswitch", 4, 8, PerLayer::Uniform(2), 128, 1024));
        assert!(m.unsupported.is_some());
        assert!(m.warnings.iter().any(|w| w.contains("does not model")));
    }

    #[test]
    fn qwen4exp_ple_rows_in_the_recurrent_state() {
        // qwen4exp-tiny of the oracle fixtures: 8 layers, attention every 4th, one PLE module
        // on layer 1 (kernel 4, 3-grams, 2 residual streams, n_embd 128); llama.cpp b11434
        // logs R 18,432, S 49,152 and P 9,216 bytes for one sequence.
        let mut f = fig("qwen4exp", 8, 4, PerLayer::Uniform(2), 32, 128);
        f.ssm = Some(crate::core::model::Ssm {
            d_conv: 4,
            d_inner: 128,
            d_state: 16,
            n_group: 4,
        });
        f.keys.indexer_key_length = Some(32);
        f.keys.compress_ratios = Some(PerLayer::List(vec![0, 0, 0, 4, 0, 0, 0, 4]));
        f.keys.ple_layers = Some(vec![1]);
        f.keys.ple_ngram_size = Some(3);
        f.keys.ple_heads_per_ngram = Some(2);
        f.keys.ple_conv_kernel = Some(4);
        f.keys.hc_mult = Some(2);
        let m = shape(&f);
        assert!(m.unsupported.is_none());
        let c = cache(&m, &at(4096));
        let r = kind(&c, CacheKind::Recurrent);
        assert_eq!((r.k_bytes, r.v_bytes), (18_432, 49_152 + 9_216));
        // the PLE rows count with layer 1; per-layer figures and the recurrent state add up
        let per_layer: u64 = c.per_layer.iter().map(|l| l.allocated_bytes).sum();
        assert_eq!(
            per_layer + c.recurrent_bytes,
            c.allocated_bytes,
            "{:?}",
            c.per_layer
        );
        assert_eq!(c.recurrent_bytes, 18_432 + 49_152);
        let s = CacheSettings {
            sequences: 4,
            ..at(4096)
        };
        let r = kind(&cache(&m, &s), CacheKind::Recurrent);
        assert_eq!((r.k_bytes, r.v_bytes), (73_728, 196_608 + 36_864));
    }
}
