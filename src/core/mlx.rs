//! MLX-LM's memory, as mlx-lm 0.32.2 on mlx 0.32.4 allocates it (`mlx_lm/models/cache.py`,
//! `mlx_lm/generate.py`), checked against MLX itself (tests/fixtures/mlx, made by
//! scripts/oracle/mlx/oracle.py):
//!
//! - the prompt goes through the model in chunks of `prefill_step_size` (2,048): while more
//!   than one token is left, `min(2048, left − 1)` tokens; then the last token; then one
//!   token per generated token;
//! - `KVCache` grows when a chunk does not fit: by `⌈S / 256⌉ × 256` cells for a chunk of S
//!   (first cutting the buffer to the tokens held when that count is not a multiple of 256),
//!   in the model's dtype: a 1,000-token prompt holds 1,024 cells;
//! - with `kv_bits`, every cache that can be converted is turned into a `QuantizedKVCache`
//!   (group 64, the bits given) after the model call that brings it to `quantized_kv_start`
//!   (5,000) tokens: the whole buffer is quantized (packed uint32 values plus a scale and a
//!   bias per group in the model's dtype), then grows as `KVCache` does. A head dimension not
//!   divisible by the group size is refused by `mx.quantize`; a `RotatingKVCache` cannot be
//!   converted (`NotImplementedError`);
//! - `RotatingKVCache(max_size, keep)` for sliding-window layers and, on models without
//!   their own `make_cache`, for `--max-kv-size` (keep 4): a multi-token chunk is
//!   concatenated after trimming to `max_size − 1` cells, one token is written in place;
//! - `ArraysCache` holds the fixed state of recurrent / linear-attention layers;
//! - MLA: deepseek_v3 stores the latent (kv_lora_rank) as keys and the rope key
//!   (qk_rope_head_dim) as values, one head; deepseek_v2 stores per-head decompressed keys
//!   (nope + rope) and values.
//!
//! Pure: no I/O, no other top-level module.

/// The MLX-LM version modelled.
pub const MLX_LM_VERSION: &str = "0.32.2";
/// The MLX version modelled.
pub const MLX_VERSION: &str = "0.32.4";
/// `KVCache.step`: cells added per growth, tokens.
pub const STEP: u64 = 256;
/// `generate_step`'s default `prefill_step_size`, tokens.
pub const PREFILL_STEP: u64 = 2048;
/// `DEFAULT_QUANTIZED_KV_START`, tokens.
pub const QUANTIZED_KV_START: u64 = 5000;
/// `generate_step`'s default `kv_group_size`.
pub const KV_GROUP_SIZE: u64 = 64;
/// `make_prompt_cache`'s `keep` for `--max-kv-size`, tokens.
pub const MAX_KV_KEEP: u64 = 4;

/// The runtime a scenario's figures are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Runtime {
    /// llama.cpp (a GGUF): the report of `core::evaluate`.
    #[default]
    LlamaCpp,
    /// MLX-LM (a safetensors folder): the plan of [`plan`].
    MlxLm,
}

impl Runtime {
    /// Every runtime, in the order a switch cycles through them.
    pub const ALL: [Runtime; 2] = [Runtime::LlamaCpp, Runtime::MlxLm];
    /// Its name as the user knows it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::LlamaCpp => "llama.cpp",
            Runtime::MlxLm => "MLX-LM",
        }
    }
    /// Parse `llama.cpp` / `llamacpp` / `mlx-lm` / `mlx` (any case).
    pub fn parse(s: &str) -> Option<Runtime> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_', '.', ' '], "")
            .as_str()
        {
            "llamacpp" | "llama" | "gguf" => Some(Runtime::LlamaCpp),
            "mlxlm" | "mlx" => Some(Runtime::MlxLm),
            _ => None,
        }
    }
}

/// The cache of one layer as the model's `make_cache()` (or `make_prompt_cache`) builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerCache {
    /// `KVCache`: keys of `k_dim` and values of `v_dim` per head, `kv_heads` heads.
    Kv {
        /// Heads stored.
        kv_heads: u64,
        /// Width of a stored key, elements.
        k_dim: u64,
        /// Width of a stored value, elements.
        v_dim: u64,
    },
    /// `RotatingKVCache(max_size, keep)`.
    Rotating {
        /// Heads stored.
        kv_heads: u64,
        /// Width of a stored key, elements.
        k_dim: u64,
        /// Width of a stored value, elements.
        v_dim: u64,
        /// `max_size`, tokens.
        max_size: u64,
        /// `keep`: leading tokens never overwritten.
        keep: u64,
    },
    /// `ArraysCache`: a fixed state, bytes per sequence, independent of the tokens.
    Arrays {
        /// Σ nbytes of its arrays.
        bytes: u64,
    },
}

/// The cache layout of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLayout {
    /// One entry per layer.
    pub layers: Vec<LayerCache>,
    /// Bytes of one element of the model's dtype (bf16 = 2), which the caches use.
    pub dtype_bytes: u64,
    /// The model defines `make_cache()`, so `--max-kv-size` has no effect on it.
    pub own_make_cache: bool,
    /// The model's attention cannot read a `QuantizedKVCache` (deepseek_v3's MLA calls
    /// `k_pe.swapaxes` on what is then a tuple): the first call after the conversion fails.
    pub quantized_kv_breaks: bool,
}

/// `--kv-bits` / `--kv-group-size` / `--quantized-kv-start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvQuant {
    /// Bits per stored value.
    pub bits: u64,
    /// Elements per group.
    pub group_size: u64,
    /// Tokens from which the cache is quantized.
    pub start: u64,
}

/// The bits `mx.quantize` packs a quantized cache to (`--kv-bits`).
pub const KV_BITS: [u64; 6] = [2, 3, 4, 5, 6, 8];
/// The group sizes `mx.quantize` takes (`--kv-group-size`).
pub const KV_GROUP_SIZES: [u64; 3] = [32, 64, 128];

/// MLX-LM's run settings a scenario carries: `--kv-bits`, `--kv-group-size`,
/// `--quantized-kv-start` and `--max-kv-size` of `mlx_lm.generate` (MLX-LM's defaults when
/// not set: no quantized cache, group 64, from 5,000 tokens, no rotating cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlxLmSettings {
    /// `--kv-bits` (`None`: the cache stays in the model's dtype).
    pub kv_bits: Option<u64>,
    /// `--kv-group-size`.
    pub kv_group_size: u64,
    /// `--quantized-kv-start`, tokens.
    pub quantized_kv_start: u64,
    /// `--max-kv-size`, tokens.
    pub max_kv_size: Option<u64>,
}

impl Default for MlxLmSettings {
    fn default() -> MlxLmSettings {
        MlxLmSettings {
            kv_bits: None,
            kv_group_size: KV_GROUP_SIZE,
            quantized_kv_start: QUANTIZED_KV_START,
            max_kv_size: None,
        }
    }
}

impl MlxLmSettings {
    /// The quantized cache the settings ask for, if any.
    pub fn kv_quant(&self) -> Option<KvQuant> {
        self.kv_bits.map(|bits| KvQuant {
            bits,
            group_size: self.kv_group_size,
            start: self.quantized_kv_start,
        })
    }
}

/// `--kv-bits N`: one of the widths `mx.quantize` packs and the plan models (2, 4, 8), else
/// the reason.
pub fn check_kv_bits(bits: u64) -> Result<(), String> {
    if matches!(bits, 2 | 4 | 8) {
        Ok(())
    } else if KV_BITS.contains(&bits) {
        Err(format!(
            "{bits} bits: MLX-LM's packing of 3, 5 and 6 bits in QuantizedKVCache is not modelled (2, 4 or 8)"
        ))
    } else {
        Err(format!(
            "MLX quantizes a cache to 2, 3, 4, 5, 6 or 8 bits, not {bits}"
        ))
    }
}

/// `--kv-group-size N`: one of the group sizes `mx.quantize` takes.
pub fn check_kv_group_size(g: u64) -> Result<(), String> {
    if KV_GROUP_SIZES.contains(&g) {
        Ok(())
    } else {
        Err(format!(
            "MLX quantizes in groups of 32, 64 or 128 elements, not {g}"
        ))
    }
}

/// What is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlxRun {
    /// Prompt tokens (at least 1).
    pub prompt: u64,
    /// Generated tokens fed back (each one a one-token model call).
    pub generated: u64,
    /// `prefill_step_size`.
    pub prefill_step: u64,
    /// Quantized KV cache.
    pub kv_quant: Option<KvQuant>,
    /// `--max-kv-size`.
    pub max_kv_size: Option<u64>,
}

impl MlxRun {
    /// A prompt of `prompt` tokens with MLX-LM's defaults.
    pub fn prompt(prompt: u64) -> MlxRun {
        MlxRun {
            prompt,
            generated: 0,
            prefill_step: PREFILL_STEP,
            kv_quant: None,
            max_kv_size: None,
        }
    }
}

/// The class of a layer's cache after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheClass {
    /// `KVCache`.
    Kv,
    /// `QuantizedKVCache`.
    QuantizedKv,
    /// `RotatingKVCache`.
    Rotating,
    /// `ArraysCache`.
    Arrays,
}

impl CacheClass {
    /// MLX-LM's class name.
    pub fn name(self) -> &'static str {
        match self {
            CacheClass::Kv => "KVCache",
            CacheClass::QuantizedKv => "QuantizedKVCache",
            CacheClass::Rotating => "RotatingKVCache",
            CacheClass::Arrays => "ArraysCache",
        }
    }
}

/// One layer's cache after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerState {
    /// Its class.
    pub class: CacheClass,
    /// Cells allocated (0 for `ArraysCache`).
    pub cells: u64,
    /// Tokens seen (`offset`).
    pub offset: u64,
    /// Cells a decode step reads (`min(offset, cells)`).
    pub used: u64,
    /// Bytes allocated (`nbytes`).
    pub bytes: u64,
    /// Bytes a decode step reads: the used cells in their stored width (the whole state for
    /// `ArraysCache`).
    pub read_bytes: u64,
}

/// Why MLX-LM refuses the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MlxRefusal {
    /// `mx.quantize`: a key or value width not divisible by the group size.
    GroupSize {
        /// The width.
        dim: u64,
        /// The group size.
        group_size: u64,
        /// Heads of the buffer quantized.
        kv_heads: u64,
        /// Cells of the buffer quantized (its whole allocation).
        cells: u64,
    },
    /// `RotatingKVCache.to_quantized`: `NotImplementedError("RotatingKVCache Quantization NYI")`.
    RotatingQuantization,
    /// Bits the model here does not cover (MLX-LM's packing of 3, 5 and 6 bits in
    /// `QuantizedKVCache` is not modelled).
    BitsNotModelled(u64),
    /// A prompt of 0 tokens (`generate_step` raises).
    EmptyPrompt,
    /// The model's attention fails on a quantized cache (deepseek_v3 in mlx-lm 0.32.2).
    QuantizedCacheUnreadable,
}

impl MlxRefusal {
    /// MLX's own message (as the oracle recorded it).
    pub fn message(&self) -> String {
        match self {
            MlxRefusal::GroupSize {
                dim,
                group_size,
                kv_heads,
                cells,
            } => format!(
                "ValueError: [quantize] The last dimension of the matrix needs to be divisible by the quantization group size {group_size}. However the provided  matrix has shape (1,{kv_heads},{cells},{dim})"
            ),
            MlxRefusal::RotatingQuantization => {
                "NotImplementedError: RotatingKVCache Quantization NYI".into()
            }
            MlxRefusal::BitsNotModelled(b) => format!("kv_bits {b}: only 2, 4 and 8 are modelled"),
            MlxRefusal::QuantizedCacheUnreadable => {
                "AttributeError: 'list' object has no attribute 'swapaxes'".into()
            }
            MlxRefusal::EmptyPrompt => {
                "ValueError: Either input_embeddings or prompt (or both) must be provided.".into()
            }
        }
    }
}

/// The caches after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheState {
    /// Per layer.
    pub layers: Vec<LayerState>,
    /// `--max-kv-size` was given but the model builds its own caches.
    pub max_kv_size_ignored: bool,
}

impl CacheState {
    /// Σ nbytes: what MLX holds for the cache, bytes.
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.bytes).sum()
    }
    /// Σ bytes read per decode step at this length.
    pub fn read_bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.read_bytes).sum()
    }
}

/// The model calls `generate_step` makes: prompt chunks, the last prompt token, then one per
/// generated token.
pub fn model_calls(run: &MlxRun) -> Vec<u64> {
    let mut calls = Vec::new();
    let step = run.prefill_step.max(1);
    let mut left = run.prompt;
    while left > 1 {
        let n = step.min(left - 1);
        calls.push(n);
        left -= n;
    }
    calls.push(left);
    calls.extend(std::iter::repeat_n(1, run.generated as usize));
    calls
}

#[derive(Debug, Clone, Copy)]
enum Sim {
    Kv {
        cells: u64,
        offset: u64,
        quantized: bool,
    },
    Rot {
        cells: u64,
        offset: u64,
        idx: u64,
    },
    Arrays,
}

fn grow(cells: u64, offset: u64, s: u64) -> u64 {
    if cells == 0 || offset + s > cells {
        let base = if cells > 0 && !offset.is_multiple_of(STEP) {
            offset
        } else {
            cells
        };
        base + s.div_ceil(STEP) * STEP
    } else {
        cells
    }
}

fn rotate(cells: u64, offset: u64, idx: u64, s: u64, max: u64, keep: u64) -> (u64, u64, u64) {
    if s > 1 {
        // _update_concat
        if cells == 0 {
            return (s, s, s);
        }
        let c = if idx == cells || idx < offset {
            cells
        } else {
            idx
        };
        let trim = (c + 1).saturating_sub(max);
        let c = c - trim.min(c.saturating_sub(keep)) + s;
        return (c, offset + s, c);
    }
    // _update_in_place (one token)
    let mut cells = cells;
    let mut idx = idx;
    if cells == 0 || (offset >= cells && cells < max) {
        cells += STEP.min(max.saturating_sub(offset));
        idx = offset;
    }
    if cells > max {
        cells = max;
        idx = max;
    }
    if idx == max {
        idx = keep;
    }
    (cells, offset + s, idx + s)
}

fn quant_bytes_per_cell(dim: u64, q: &KvQuant, dtype_bytes: u64) -> u64 {
    dim * q.bits / 32 * 4 + 2 * (dim / q.group_size) * dtype_bytes
}

/// The caches after `run` on a model of `layout`, or MLX-LM's refusal.
pub fn simulate(layout: &CacheLayout, run: &MlxRun) -> Result<CacheState, MlxRefusal> {
    if run.prompt == 0 {
        return Err(MlxRefusal::EmptyPrompt);
    }
    let ignored = run.max_kv_size.is_some() && layout.own_make_cache;
    let layers: Vec<LayerCache> = match run.max_kv_size {
        Some(max) if !layout.own_make_cache => layout
            .layers
            .iter()
            .map(|l| match *l {
                LayerCache::Kv {
                    kv_heads,
                    k_dim,
                    v_dim,
                } => LayerCache::Rotating {
                    kv_heads,
                    k_dim,
                    v_dim,
                    max_size: max,
                    keep: MAX_KV_KEEP,
                },
                other => other,
            })
            .collect(),
        _ => layout.layers.clone(),
    };
    if let Some(q) = &run.kv_quant
        && !matches!(q.bits, 2 | 4 | 8)
    {
        return Err(MlxRefusal::BitsNotModelled(q.bits));
    }
    let mut sims: Vec<Sim> = layers
        .iter()
        .map(|l| match l {
            LayerCache::Kv { .. } => Sim::Kv {
                cells: 0,
                offset: 0,
                quantized: false,
            },
            LayerCache::Rotating { .. } => Sim::Rot {
                cells: 0,
                offset: 0,
                idx: 0,
            },
            LayerCache::Arrays { .. } => Sim::Arrays,
        })
        .collect();
    for s in model_calls(run) {
        if layout.quantized_kv_breaks
            && sims.iter().any(|x| {
                matches!(
                    x,
                    Sim::Kv {
                        quantized: true,
                        ..
                    }
                )
            })
        {
            return Err(MlxRefusal::QuantizedCacheUnreadable);
        }
        for (sim, l) in sims.iter_mut().zip(&layers) {
            match (sim, l) {
                (Sim::Kv { cells, offset, .. }, _) => {
                    *cells = grow(*cells, *offset, s);
                    *offset += s;
                }
                (Sim::Rot { cells, offset, idx }, LayerCache::Rotating { max_size, keep, .. }) => {
                    (*cells, *offset, *idx) = rotate(*cells, *offset, *idx, s, *max_size, *keep);
                }
                _ => {}
            }
        }
        // maybe_quantize_kv_cache after every model call.
        if let Some(q) = &run.kv_quant {
            for (sim, l) in sims.iter_mut().zip(&layers) {
                match sim {
                    Sim::Kv {
                        cells,
                        offset,
                        quantized,
                    } if !*quantized && *offset >= q.start => {
                        if let LayerCache::Kv {
                            k_dim,
                            v_dim,
                            kv_heads,
                        } = l
                        {
                            for dim in [*k_dim, *v_dim] {
                                if q.group_size == 0 || dim % q.group_size != 0 {
                                    return Err(MlxRefusal::GroupSize {
                                        dim,
                                        group_size: q.group_size,
                                        kv_heads: *kv_heads,
                                        cells: *cells,
                                    });
                                }
                            }
                        }
                        *quantized = true;
                    }
                    Sim::Rot { offset, .. } if *offset >= q.start => {
                        return Err(MlxRefusal::RotatingQuantization);
                    }
                    _ => {}
                }
            }
        }
    }
    let d = layout.dtype_bytes;
    let states = sims
        .iter()
        .zip(&layers)
        .map(|(sim, l)| match (*sim, *l) {
            (
                Sim::Kv {
                    cells,
                    offset,
                    quantized,
                },
                LayerCache::Kv {
                    kv_heads,
                    k_dim,
                    v_dim,
                },
            ) => {
                let per_cell = match (&run.kv_quant, quantized) {
                    (Some(q), true) => {
                        kv_heads
                            * (quant_bytes_per_cell(k_dim, q, d)
                                + quant_bytes_per_cell(v_dim, q, d))
                    }
                    _ => kv_heads * (k_dim + v_dim) * d,
                };
                let used = offset.min(cells);
                LayerState {
                    class: if quantized {
                        CacheClass::QuantizedKv
                    } else {
                        CacheClass::Kv
                    },
                    cells,
                    offset,
                    used,
                    bytes: cells * per_cell,
                    read_bytes: used * per_cell,
                }
            }
            (
                Sim::Rot { cells, offset, .. },
                LayerCache::Rotating {
                    kv_heads,
                    k_dim,
                    v_dim,
                    ..
                },
            ) => {
                let per_cell = kv_heads * (k_dim + v_dim) * d;
                let used = offset.min(cells);
                LayerState {
                    class: CacheClass::Rotating,
                    cells,
                    offset,
                    used,
                    bytes: cells * per_cell,
                    read_bytes: used * per_cell,
                }
            }
            (_, LayerCache::Arrays { bytes }) => LayerState {
                class: CacheClass::Arrays,
                cells: 0,
                offset: 0,
                used: 0,
                bytes,
                read_bytes: bytes,
            },
            _ => unreachable!("a simulation state always matches its layer"),
        })
        .collect();
    Ok(CacheState {
        layers: states,
        max_kv_size_ignored: ignored,
    })
}

/// The shape the activation estimate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivationShape {
    /// Query heads H_q.
    pub heads: u64,
    /// Embedding width.
    pub hidden: u64,
    /// Widest feed-forward (dense, or active experts × expert width).
    pub ffn: u64,
    /// The f32 recurrent state of one linear-attention layer, bytes (0 for none): an
    /// unfused recurrence (MLX's CPU backend) keeps one per token of the call.
    pub recurrent_state: u64,
}

/// Estimate of the prefill activation peak above weights and cache, bytes: the largest
/// model call's attention scores in f32 (`H_q × S × (N0 + S) × 4`, which MLX materializes
/// when attention is not fused) plus its hidden and feed-forward rows in f32
/// (`S × 2 (hidden + ffn) × 4`), plus one recurrent state per token of the call on models
/// with linear-attention layers (`S × state`). An estimate, checked against `mx.get_peak_memory()` on
/// MLX's CPU backend within the band of tests/mlx_oracle.rs; Metal's fused attention does not
/// materialize the scores, so on a Mac this errs high.
pub fn prefill_activation_estimate(shape: &ActivationShape, run: &MlxRun) -> u64 {
    let mut seen = 0u64;
    let mut peak = 0u64;
    for s in model_calls(run) {
        let scores = shape.heads * s * (seen + s) * 4;
        let rows = s * 2 * (shape.hidden + shape.ffn) * 4;
        let states = s * shape.recurrent_state;
        peak = peak.max(scores + rows + states);
        seen += s;
    }
    peak
}

/// What MLX does with a working set on a Mac (Metal backend; `mlx_lm.generate.wired_limit`,
/// MLX's allocator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkingSet {
    /// Weights + cache + activation peak within Metal's `recommendedMaxWorkingSetSize`,
    /// which MLX-LM sets as the wired limit: resident.
    Wired,
    /// Above the wired limit but within MLX's memory limit (1.5 × the recommended size by
    /// default): it loads, and pages on every token.
    Pages,
    /// Above MLX's memory limit.
    OverLimit,
}

/// The working-set verdict and MLX-LM's warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingSetCheck {
    /// The verdict.
    pub verdict: WorkingSet,
    /// MLX-LM prints "[WARNING] Generating with a model that requires … close to the maximum
    /// recommended size" when the weights exceed 0.9 × the recommended size.
    pub warns: bool,
    /// The wired limit (= recommended size), bytes.
    pub wired_limit: u64,
    /// MLX's memory limit, bytes: ⌊1.5 × recommended⌋.
    pub memory_limit: u64,
}

/// The working-set rule for `total` bytes (weights + cache + activations) of which `weights`
/// are model bytes, against Metal's `recommendedMaxWorkingSetSize`.
pub fn working_set(weights: u64, total: u64, recommended: u64) -> WorkingSetCheck {
    let memory_limit = recommended + recommended / 2;
    let verdict = if total <= recommended {
        WorkingSet::Wired
    } else if total <= memory_limit {
        WorkingSet::Pages
    } else {
        WorkingSet::OverLimit
    };
    WorkingSetCheck {
        verdict,
        // model_bytes > 0.9 * max_rec_size, in integers: 10 × model > 9 × rec.
        warns: (weights as u128) * 10 > (recommended as u128) * 9,
        wired_limit: recommended,
        memory_limit,
    }
}

/// Decode ceiling at batch one: `bandwidth / (weights read + cache read)` tokens/s
/// (SPEC §4), with the cache read in its stored width.
pub fn decode_ceiling(
    bandwidth_bytes_per_s: f64,
    weight_read_bytes: u64,
    cache_read_bytes: u64,
) -> f64 {
    let q = weight_read_bytes.saturating_add(cache_read_bytes);
    if q == 0 {
        return f64::INFINITY;
    }
    bandwidth_bytes_per_s / q as f64
}

/// What the MLX-LM plan is made from: the artifact's figures, the machine's and the run.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// The model's cache layout.
    pub layout: &'a CacheLayout,
    /// The shape the activation estimate needs.
    pub shape: ActivationShape,
    /// W: the safetensors files' bytes.
    pub weights_bytes: u64,
    /// Weight bytes read per decoded token (packed weights + scales/biases, active experts).
    pub weights_read_bytes: u64,
    /// Memory capacity of the machine, bytes.
    pub capacity: u64,
    /// Bandwidth for the decode ceiling, bytes/s.
    pub bandwidth: f64,
    /// Metal's `recommendedMaxWorkingSetSize`, bytes, when known.
    pub working_set: Option<u64>,
    /// The run (its prompt is the context of the plan).
    pub run: MlxRun,
    /// The largest context searched, tokens (the model's native context, or a cap).
    pub search_max: u64,
}

/// What a plan's memory is held against: the wired limit when the working set is known
/// (resident), else the machine's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanLimit {
    /// Metal's `recommendedMaxWorkingSetSize` (MLX-LM's wired limit).
    WiredLimit(u64),
    /// The memory capacity (the working set not known).
    Capacity(u64),
}

impl PlanLimit {
    /// The limit, bytes.
    pub fn bytes(self) -> u64 {
        match self {
            PlanLimit::WiredLimit(b) | PlanLimit::Capacity(b) => b,
        }
    }
}

/// The memory of a run at one context: cache, activation estimate and their sum with W.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanMemory {
    /// The caches after the prompt.
    pub cache: CacheState,
    /// The prefill activation estimate, bytes.
    pub activations: u64,
    /// W + cache + activations, bytes.
    pub total: u64,
}

/// MLX-LM's plan for one artifact on one machine at one context: the data every exporter
/// (text, markdown, JSON, the explorer) words.
#[derive(Debug, Clone, PartialEq)]
pub struct MlxPlan {
    /// The context (prompt tokens).
    pub context: u64,
    /// W, bytes.
    pub weights_bytes: u64,
    /// Weight bytes read per decoded token.
    pub weights_read_bytes: u64,
    /// The memory at the context, or MLX-LM's refusal of the run.
    pub memory: Result<PlanMemory, MlxRefusal>,
    /// The limit − total, bytes (negative: short): held against the same limit as the
    /// verdict (Metal's working set when known, else the capacity); `None` when refused.
    pub headroom: Option<i128>,
    /// The working-set rule, when the working set is known and the run is not refused.
    pub working_set: Option<WorkingSetCheck>,
    /// What the memory is held against.
    pub limit: PlanLimit,
    /// The total is within the limit.
    pub fits: bool,
    /// Decode ceiling at a short context (weights only), tokens/s.
    pub decode_short: f64,
    /// Decode ceiling at the context (weights + the cache read in its stored width),
    /// tokens/s; `None` when refused.
    pub decode_at_context: Option<f64>,
    /// The largest context (prompt tokens, up to `search_max`) whose total is within the
    /// limit; `None` when not even one token fits or the run is refused.
    pub largest_context: Option<u64>,
    /// `largest_context` reached the end of the search (the model's native context or cap).
    pub largest_is_search_max: bool,
}

/// The memory of `input`'s run with the prompt set to `context` tokens.
pub fn memory_at(input: &PlanInput<'_>, context: u64) -> Result<PlanMemory, MlxRefusal> {
    let run = MlxRun {
        prompt: context,
        ..input.run
    };
    let cache = simulate(input.layout, &run)?;
    let activations = prefill_activation_estimate(&input.shape, &run);
    let total = input
        .weights_bytes
        .saturating_add(cache.bytes())
        .saturating_add(activations);
    Ok(PlanMemory {
        cache,
        activations,
        total,
    })
}

/// The limit a plan is held against: Metal's wired limit when it is known and no larger than
/// the memory (a capacity edited below the profile's working set limits first), else the
/// capacity.
fn limit_of(input: &PlanInput<'_>) -> PlanLimit {
    match input.working_set {
        Some(w) if w <= input.capacity => PlanLimit::WiredLimit(w),
        _ => PlanLimit::Capacity(input.capacity),
    }
}

/// The largest prompt in `lo..=hi` whose total is within `limit`, when the total grows with
/// the prompt on that range (binary search); `None` when `lo` does not fit.
fn largest_in(input: &PlanInput<'_>, limit: u64, lo: u64, hi: u64) -> Option<u64> {
    let fits = |p: u64| memory_at(input, p).is_ok_and(|m| m.total <= limit);
    if lo > hi || !fits(lo) {
        return None;
    }
    let (mut good, mut bad) = (lo, hi.saturating_add(1));
    if fits(hi) {
        return Some(hi);
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// The largest context whose W + cache + activations stay within `limit`. The total grows
/// with the prompt except where a quantized cache replaces the full-width one (at
/// `quantized_kv_start`): the two sides are searched apart, and the run only gets past the
/// conversion when every prompt before it fits.
pub fn largest_context(input: &PlanInput<'_>, limit: u64) -> Option<u64> {
    let max = input.search_max.max(1);
    match input.run.kv_quant {
        Some(q) if q.start > 1 && q.start <= max => {
            let below = largest_in(input, limit, 1, q.start - 1)?;
            if below < q.start - 1 {
                return Some(below);
            }
            Some(largest_in(input, limit, q.start, max).unwrap_or(below))
        }
        _ => largest_in(input, limit, 1, max),
    }
}

/// MLX-LM's plan for `input` at its run's prompt.
pub fn plan(input: &PlanInput<'_>) -> MlxPlan {
    let context = input.run.prompt;
    let limit = limit_of(input);
    let memory = memory_at(input, context);
    let decode_short = decode_ceiling(input.bandwidth, input.weights_read_bytes, 0);
    let (headroom, working_set, fits, decode_at_context, largest_context) = match &memory {
        Ok(m) => (
            Some(limit.bytes() as i128 - m.total as i128),
            input
                .working_set
                .map(|w| working_set(input.weights_bytes, m.total, w)),
            m.total <= limit.bytes(),
            Some(decode_ceiling(
                input.bandwidth,
                input.weights_read_bytes,
                m.cache.read_bytes(),
            )),
            largest_context(input, limit.bytes()),
        ),
        Err(_) => (None, None, false, None, None),
    };
    MlxPlan {
        context,
        weights_bytes: input.weights_bytes,
        weights_read_bytes: input.weights_read_bytes,
        memory,
        headroom,
        working_set,
        limit,
        fits,
        decode_short,
        decode_at_context,
        largest_is_search_max: largest_context == Some(input.search_max.max(1)),
        largest_context,
    }
}

/// One runtime's headline figures for one model on one machine at one context: what the
/// side-by-side comparison of llama.cpp and MLX-LM shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeFigures {
    /// The runtime.
    pub runtime: Runtime,
    /// W: the files it loads, bytes.
    pub weights_bytes: u64,
    /// Its cache at the context, bytes (`None`: the run is refused).
    pub cache_bytes: Option<u64>,
    /// Everything it holds at the context, bytes: llama.cpp's W + KV + A + buffers,
    /// MLX-LM's W + cache + activation estimate (`None`: refused).
    pub total_bytes: Option<u64>,
    /// The total is within the limit (llama.cpp: the machine's memory; MLX-LM: the wired
    /// limit when the working set is known, else the capacity).
    pub fits: bool,
    /// The largest context within that limit, tokens.
    pub largest_context: Option<u64>,
    /// Decode ceiling at a short context, tokens/s.
    pub decode_short: f64,
    /// Decode ceiling at the context, tokens/s (`None`: refused).
    pub decode_at_context: Option<f64>,
}

/// llama.cpp's figures of a report: its highest ceilings (the inventory's when a GGUF was
/// read, else file mode's).
pub fn llama_cpp_figures(r: &super::Report) -> RuntimeFigures {
    let c = &r.capacity;
    let refused = c.refused();
    RuntimeFigures {
        runtime: Runtime::LlamaCpp,
        weights_bytes: c.weights_bytes,
        cache_bytes: (!refused).then_some(c.kv_bytes),
        total_bytes: (!refused).then_some(c.total_bytes),
        fits: c.starts_and_fits(),
        largest_context: c.max_context_tokens.filter(|_| !refused),
        decode_short: r.decode.highest_short.tokens_per_second,
        decode_at_context: (!refused).then_some(r.decode.highest.tokens_per_second),
    }
}

/// MLX-LM's figures of a plan.
pub fn mlx_lm_figures(p: &MlxPlan) -> RuntimeFigures {
    let m = p.memory.as_ref().ok();
    RuntimeFigures {
        runtime: Runtime::MlxLm,
        weights_bytes: p.weights_bytes,
        cache_bytes: m.map(|m| m.cache.bytes()),
        total_bytes: m.map(|m| m.total),
        fits: p.fits,
        largest_context: p.largest_context,
        decode_short: p.decode_short,
        decode_at_context: p.decode_at_context,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama() -> CacheLayout {
        CacheLayout {
            layers: vec![
                LayerCache::Kv {
                    kv_heads: 2,
                    k_dim: 64,
                    v_dim: 64
                };
                4
            ],
            dtype_bytes: 2,
            own_make_cache: true,
            quantized_kv_breaks: false,
        }
    }

    #[test]
    fn chunks_as_generate_step() {
        assert_eq!(model_calls(&MlxRun::prompt(1)), vec![1]);
        assert_eq!(model_calls(&MlxRun::prompt(1000)), vec![999, 1]);
        assert_eq!(model_calls(&MlxRun::prompt(5000)), vec![2048, 2048, 903, 1]);
    }

    #[test]
    fn thousand_tokens_hold_1024_cells() {
        let s = simulate(&llama(), &MlxRun::prompt(1000)).unwrap();
        assert_eq!(s.layers[0].cells, 1024);
        assert_eq!(s.bytes(), 2_097_152);
        let s = simulate(&llama(), &MlxRun::prompt(2049)).unwrap();
        assert_eq!(s.layers[0].cells, 2304);
    }

    #[test]
    fn a_32_wide_head_is_refused() {
        let mut l = llama();
        l.layers = vec![
            LayerCache::Kv {
                kv_heads: 2,
                k_dim: 32,
                v_dim: 32
            };
            2
        ];
        let mut run = MlxRun::prompt(10);
        run.kv_quant = Some(KvQuant {
            bits: 8,
            group_size: 64,
            start: 0,
        });
        assert_eq!(
            simulate(&l, &run),
            Err(MlxRefusal::GroupSize {
                dim: 32,
                group_size: 64,
                kv_heads: 2,
                cells: 256
            })
        );
    }

    #[test]
    fn working_set_rule() {
        let rec = 38_654_705_664; // 36 GiB
        assert_eq!(working_set(10, rec, rec).verdict, WorkingSet::Wired);
        assert_eq!(working_set(10, rec + 1, rec).verdict, WorkingSet::Pages);
        assert_eq!(
            working_set(10, rec / 2 * 3 + 1, rec).verdict,
            WorkingSet::OverLimit
        );
        assert!(working_set(rec, rec, rec).warns);
        assert!(!working_set(rec / 10 * 9, rec, rec).warns);
    }

    fn input(layout: &CacheLayout, capacity: u64, prompt: u64) -> PlanInput<'_> {
        PlanInput {
            layout,
            shape: ActivationShape {
                heads: 4,
                hidden: 256,
                ffn: 512,
                recurrent_state: 0,
            },
            weights_bytes: 1_000_000,
            weights_read_bytes: 1_000_000,
            capacity,
            bandwidth: 1e9,
            working_set: None,
            run: MlxRun::prompt(prompt),
            search_max: 1 << 20,
        }
    }

    #[test]
    fn plan_largest_context_is_the_last_that_fits() {
        let l = llama();
        let cap = 40_000_000;
        let p = plan(&input(&l, cap, 1000));
        let m = p.memory.as_ref().unwrap();
        assert_eq!(m.cache.bytes(), 2_097_152);
        assert_eq!(m.total, 1_000_000 + 2_097_152 + m.activations);
        assert!(p.fits);
        assert_eq!(p.headroom, Some(cap as i128 - m.total as i128));
        // with Metal's working set known, the headroom is held against it, as the verdict is
        let ws = plan(&PlanInput {
            working_set: Some(cap / 2),
            ..input(&l, cap, 1000)
        });
        assert_eq!(ws.limit, PlanLimit::WiredLimit(cap / 2));
        assert_eq!(ws.headroom, Some((cap / 2) as i128 - m.total as i128));
        assert_eq!(ws.fits, ws.headroom.unwrap() >= 0);
        let n = p.largest_context.unwrap();
        let i = input(&l, cap, 1);
        assert!(memory_at(&i, n).unwrap().total <= cap);
        assert!(memory_at(&i, n + 1).unwrap().total > cap);
        assert!(!p.largest_is_search_max);
        // Held against the wired limit once the working set is known.
        let mut i = input(&l, cap, 1000);
        i.working_set = Some(m.total - 1);
        let q = plan(&i);
        assert!(!q.fits);
        assert_eq!(q.limit, PlanLimit::WiredLimit(m.total - 1));
        assert!(q.largest_context.unwrap() < 1000);
    }

    #[test]
    fn largest_context_crosses_the_quantized_start_only_when_all_before_fit() {
        let l = llama();
        let mut i = input(&l, u64::MAX, 1);
        i.run.kv_quant = Some(KvQuant {
            bits: 4,
            group_size: 64,
            start: 5000,
        });
        // Everything before the start fits, and beyond it the quantized cache is smaller.
        let at_start = memory_at(&i, 4999).unwrap().total;
        let limit = at_start;
        assert!(largest_context(&i, limit).unwrap() >= 5000);
        // One byte short of 4,999 tokens: the run stops before the conversion.
        assert!(largest_context(&i, limit - 1).unwrap() < 4999);
    }
}
