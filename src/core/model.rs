//! The model shape the bounds use: per-layer attention, cache kinds, MLA, MoE and SSM figures,
//! built from raw architecture figures by llama.cpp's per-architecture rules (docs/bounds.md §3).
//! Pure: no I/O, no other top-level module.

use super::arch::{Memory, SwaWhen};
use super::units::{Provenance, Sourced};
use std::fmt;

/// How one layer's attention retains tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attention {
    /// Ordinary causal attention: every token retained.
    Full,
    /// Sliding window: `min(N, window)` tokens retained.
    Sliding {
        /// Window in tokens.
        window: u64,
    },
    /// Chunked attention (llama4): a token reads `((N−1) mod chunk) + 1` cells.
    Chunked {
        /// Chunk size in tokens.
        chunk: u64,
    },
    /// No attention cache in this layer (a purely recurrent layer).
    None,
}

impl fmt::Display for Attention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Attention::Full => f.write_str("full"),
            Attention::Sliding { window } => write!(f, "sliding {window}"),
            Attention::Chunked { chunk } => write!(f, "chunked {chunk}"),
            Attention::None => f.write_str("none"),
        }
    }
}

/// One repeating layer as the cache and the roofline see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerShape {
    /// Query heads H_q.
    pub head_count: u32,
    /// Key/value heads H_KV (GGUF `<arch>.attention.head_count_kv`, per layer).
    pub head_count_kv: u32,
    /// Values per key head d_k.
    pub key_length: u32,
    /// Values per value head d_v.
    pub value_length: u32,
    /// How the layer retains tokens.
    pub attention: Attention,
    /// The layer carries recurrent (SSM) state.
    pub recurrent: bool,
    /// llama.cpp gives the layer a K/V cache of its own in the main context: false for layers
    /// that reuse an earlier layer's cache (gemma3n, gemma4), next-token-prediction (MTP)
    /// layers, purely recurrent layers and models llama.cpp runs without memory.
    pub owns_cache: bool,
    /// Indexer key width per cell (DSA / MSA lightning indexer, one head), 0 when none.
    /// Stored at the K cache type.
    pub indexer_key_length: u32,
    /// Indexer value width per cell (MSA on a non-MLA model), 0 when none.
    pub indexer_value_length: u32,
}

/// Latent attention (MLA) as current converters write it (docs/bounds.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mla {
    /// kv_lora_rank (512 for DeepSeek-V3).
    pub kv_lora_rank: u32,
    /// RoPE dims stored beside the latent (64).
    pub rope_dim: u32,
    /// Per-head key size after decompression (`key_length_mla`, 192).
    pub key_length_mla: u32,
    /// Per-head value size after decompression (`value_length_mla`, 128).
    pub value_length_mla: u32,
}

/// Mixture-of-experts routing figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moe {
    /// Routed experts per MoE layer (n).
    pub experts: u32,
    /// Experts chosen per token (k).
    pub experts_used: u32,
    /// Shared experts (always used).
    pub shared_experts: u32,
}

/// Mamba-style recurrent state figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ssm {
    /// Convolution kernel d_conv.
    pub d_conv: u64,
    /// Inner size d_inner.
    pub d_inner: u64,
    /// State size d_state.
    pub d_state: u64,
    /// Groups n_group.
    pub n_group: u64,
}

/// A figure per layer: one value for all layers, or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerLayer {
    /// The same for every layer.
    Uniform(u32),
    /// One value per layer.
    List(Vec<u32>),
}

impl PerLayer {
    /// The value at layer `il` (0 past the end of a list).
    pub fn at(&self, il: usize) -> u32 {
        match self {
            PerLayer::Uniform(v) => *v,
            PerLayer::List(v) => v.get(il).copied().unwrap_or(0),
        }
    }
    fn check_len(&self, what: &str, layers: usize) -> Result<(), ShapeError> {
        match self {
            PerLayer::List(v) if v.len() != layers => Err(ShapeError(format!(
                "{what} lists {} layers but the model has {layers}",
                v.len()
            ))),
            _ => Ok(()),
        }
    }
    /// The largest value over layers.
    pub fn max(&self) -> u32 {
        match self {
            PerLayer::Uniform(v) => *v,
            PerLayer::List(v) => v.iter().copied().max().unwrap_or(0),
        }
    }
}

/// Raw architecture figures as a GGUF file or a model profile states them, before
/// llama.cpp's per-architecture rules are applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchFigures {
    /// llama.cpp architecture name (`general.architecture`).
    pub architecture: String,
    /// Repeating layers L (`block_count`).
    pub layers: u32,
    /// Query heads, uniform or per layer.
    pub head_count: PerLayer,
    /// KV heads, uniform or per layer.
    pub head_count_kv: PerLayer,
    /// `key_length`, else `embedding_length / head_count`.
    pub key_length: Option<u32>,
    /// `value_length`, else `embedding_length / head_count`.
    pub value_length: Option<u32>,
    /// Hidden size.
    pub embedding_length: u64,
    /// Vocabulary size.
    pub vocab_size: u64,
    /// Native (trained) context in tokens.
    pub native_context: Option<u64>,
    /// `attention.sliding_window` in tokens (0 or absent = none).
    pub sliding_window: Option<u64>,
    /// Explicit per-layer pattern (true = sliding); wins over the architecture rule.
    pub sliding_pattern: Option<Vec<bool>>,
    /// Chunk size for chunked attention (llama4; 8192 when absent).
    pub chunk_size: Option<u64>,
    /// MLA figures when the `_mla` keys are present.
    pub mla: Option<Mla>,
    /// MoE routing.
    pub moe: Option<Moe>,
    /// SSM figures for hybrids.
    pub ssm: Option<Ssm>,
    /// Explicit recurrent layer indices (else derived from head_count_kv == 0 with SSM figures).
    pub recurrent_layers: Option<Vec<u32>>,
    /// Output projection tied to the token embedding.
    pub tied_embeddings: bool,
    /// Further keys llama.cpp's per-architecture cache rules read.
    pub keys: CacheKeys,
}

/// Keys llama.cpp's per-architecture cache rules read beyond heads and windows (all optional;
/// the GGUF key is named on each field, after `<arch>.`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheKeys {
    /// `nextn_predict_layers`: trailing next-token-prediction (MTP) layers.
    pub nextn_layers: u32,
    /// `attention.shared_kv_layers` (gemma4): the last layers reuse earlier caches.
    pub shared_kv_layers: Option<u32>,
    /// `attention.key_length_swa`: key head size on sliding layers.
    pub key_length_swa: Option<u32>,
    /// `attention.value_length_swa`: value head size on sliding layers.
    pub value_length_swa: Option<u32>,
    /// `attention.sliding_window_pattern` written as a period n (the bool-array form is
    /// `ArchFigures::sliding_pattern`).
    pub swa_period: Option<u32>,
    /// `attention.recurrent_layers`, per layer.
    pub recurrent_pattern: Option<Vec<bool>>,
    /// `full_attention_interval` (qwen3next family: every n-th layer is attention).
    pub full_attention_interval: Option<u32>,
    /// `feed_forward_length`, per layer (nemotron_h tells layer kinds apart by it).
    pub feed_forward: Option<PerLayer>,
    /// `ssm.conv_kernel` when the other SSM keys are absent (Kimi delta attention).
    pub conv_kernel: Option<u64>,
    /// `wkv.head_size` (RWKV).
    pub wkv_head_size: Option<u32>,
    /// `token_shift_count` (RWKV; 2 when absent).
    pub token_shift_count: Option<u32>,
    /// `shortconv.l_cache` (LFM2 short convolution).
    pub shortconv_l_cache: Option<u32>,
    /// `kda.head_dim` (Kimi delta attention).
    pub kda_head_dim: Option<u32>,
    /// `attention.indexer.key_length` (DSA / MSA indexer cache).
    pub indexer_key_length: Option<u32>,
    /// `attention.indexer.types`, per layer (glm-dsa, hy_v4: layers that own an indexer).
    pub indexer_types: Option<Vec<bool>>,
    /// `attention.indexer.top_k` (hy_v4: 0 or absent means no indexer at all).
    pub indexer_top_k: Option<u32>,
    /// `attention.indexer.head_count` (DSA / MSA indexer query heads; the compute graph).
    pub indexer_head_count: Option<u32>,
    /// `attention.q_lora_rank` (MLA query compression; the compute graph).
    pub q_lora_rank: Option<u32>,
    /// `attention.compress_ratios`, per layer (qwen4exp: a ratio turns on the pooled key row).
    pub compress_ratios: Option<PerLayer>,
    /// `leading_dense_block_count`.
    pub leading_dense: Option<u32>,
    /// `ple.layers` (qwen4exp): the layers holding a per-layer-embedding (PLE) module.
    pub ple_layers: Option<Vec<u32>>,
    /// `ple.ngram_size` (qwen4exp PLE).
    pub ple_ngram_size: Option<u32>,
    /// `ple.heads_per_ngram` (qwen4exp PLE).
    pub ple_heads_per_ngram: Option<u32>,
    /// `ple.conv_kernel` (qwen4exp PLE convolution).
    pub ple_conv_kernel: Option<u32>,
    /// `hyper_connection.count`: residual streams (qwen4exp, deepseek4, glm5-next).
    pub hc_mult: Option<u32>,
    /// Per layer, from the tensor inventory (not a key): Qwen3-Next's linear attention takes
    /// Q, K, V and the output gate from one projection (`blk.N.ssm_in`, the first conversions)
    /// rather than from `attn_qkv` and `attn_gate`. Empty when no layer does.
    pub fused_qkvz: Vec<bool>,
    /// Per layer, from the tensor inventory: the layer projects Q, K and V in one tensor
    /// (`blk.N.attn_qkv`), which stays live beside its views. Empty when no layer does.
    pub attn_qkv: Vec<bool>,
    /// RWKV-7's low-rank projections (`attention.decay_lora_rank`, `iclr_lora_rank`,
    /// `value_residual_mix_lora_rank`, `gate_lora_rank`), when the file gives all four.
    pub rwkv7_lora_ranks: Option<[u32; 4]>,
    /// Qwen3.5's classifier head (`cls.output.weight`, from the tensor inventory): its output
    /// width. The graph projects the output rows through it beside the logits.
    pub cls_out_width: Option<u64>,
    /// `rope.dimension_sections` names at least two sections (llama.cpp `use_mrope`): glm4,
    /// glm4moe, bailingmoe3 and hunyuan_vl then rotate with M-RoPE, four positions per token.
    pub mrope_sections: bool,
}

/// Recurrent state of one recurrent layer and one sequence, in f32 elements: llama.cpp's
/// `n_embd_r` (convolution / token-shift rows) and `n_embd_s` (SSM / WKV / delta state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecurrentState {
    /// `n_embd_r` elements.
    pub conv: u64,
    /// `n_embd_s` elements.
    pub state: u64,
    /// PLE convolution history (qwen4exp `cache_ple_r_l`): f32 elements per sequence summed
    /// over the PLE layers, `(ple.conv_kernel − 1) × ple.ngram_size × hc × n_embd` each; 0
    /// elsewhere. Not in `bytes()` nor the recurrent totals: `kv::cache` counts it with the PLE
    /// layers' own figures.
    pub ple: u64,
}

impl RecurrentState {
    /// Bytes per layer per sequence (f32), without the PLE rows.
    pub fn bytes(&self) -> u64 {
        self.conv.saturating_add(self.state).saturating_mul(4)
    }
}

/// A problem that keeps the KV maths from being done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShapeError {}

/// The model as every bound sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelShape {
    /// Display name.
    pub name: String,
    /// llama.cpp architecture name.
    pub architecture: String,
    /// Repeating layers, in order.
    pub layers: Vec<LayerShape>,
    /// Hidden size.
    pub embedding_length: u64,
    /// Vocabulary size.
    pub vocab_size: u64,
    /// Native context in tokens.
    pub native_context: Option<u64>,
    /// Output projection tied to the token embedding.
    pub tied_embeddings: bool,
    /// Stored latent cache (llama.cpp stores K only, V is a view).
    pub mla: Option<Mla>,
    /// MoE routing.
    pub moe: Option<Moe>,
    /// Recurrent state figures.
    pub ssm: Option<Ssm>,
    /// Recurrent state per recurrent layer per sequence as llama.cpp sizes it (SSM, RWKV,
    /// short convolution, delta attention).
    pub state: Option<RecurrentState>,
    /// llama.cpp creates no cache memory at all (non-causal, embedding and diffusion models).
    pub no_memory: bool,
    /// llama.cpp refuses K and V cache types that differ (MLA models, deepseek4).
    pub kv_types_must_match: bool,
    /// The cache llama.cpp builds for this architecture is not modelled exactly: why.
    pub unsupported: Option<String>,
    /// The further keys the rules read (kept for edits).
    pub keys: CacheKeys,
    /// Provenance of the architecture figures (spec for a profile, file for a GGUF).
    pub provenance: Provenance,
    /// Advertised total parameters (spec), if known.
    pub parameters_advertised: Option<Sourced<u64>>,
    /// Advertised active parameters per token (MoE, spec), if known.
    pub active_parameters_advertised: Option<Sourced<u64>>,
    /// What the rules had to guess.
    pub warnings: Vec<String>,
}

pub use super::arch::LLAMA_CPP_BUILD;

/// True when the pinned llama.cpp build knows the architecture (a row of `core::arch`).
pub fn is_llama_cpp_architecture(arch: &str) -> bool {
    super::arch::lookup(arch).is_some()
}

/// Why llmbound does not model the cache llama.cpp builds for `arch` (the table's
/// `unsupported` column), when it does not.
pub fn unsupported_reason(arch: &str) -> Option<&'static str> {
    super::arch::lookup(arch).and_then(|a| a.unsupported)
}

/// llama.cpp `set_swa_pattern(n, dense_first)` for one layer.
fn swa_from_period(il: u32, n: u32, dense_first: bool) -> bool {
    if n == 0 {
        true
    } else if dense_first {
        !il.is_multiple_of(n)
    } else {
        il % n < n - 1
    }
}

impl ModelShape {
    /// Apply llama.cpp's per-architecture rules (docs/bounds.md §3) to raw figures, as the pinned
    /// llama.cpp build's `load_hparams` and `create_memory` do (docs/architectures.md).
    pub fn from_figures(
        name: impl Into<String>,
        fig: &ArchFigures,
        provenance: Provenance,
    ) -> Result<ModelShape, ShapeError> {
        let l = fig.layers as usize;
        if l == 0 {
            return Err(ShapeError("the model has 0 layers".into()));
        }
        if l > 100_000 {
            return Err(ShapeError(format!("{l} layers is not a plausible model")));
        }
        fig.head_count.check_len("head_count", l)?;
        fig.head_count_kv.check_len("head_count_kv", l)?;
        super::shape_check::check_figures(fig).map_err(|e| {
            ShapeError(e.message(&format!("{}.{}", fig.architecture, e.figure.gguf_key())))
        })?;
        if let Some(ff) = &fig.keys.feed_forward {
            ff.check_len("feed_forward_length", l)?;
        }
        let mut warnings = Vec::new();
        let arch = fig.architecture.as_str();
        let keys = &fig.keys;
        let row = super::arch::lookup(arch);
        let known = row.is_some();
        let memory = row.map(|r| r.memory);
        let no_memory = memory == Some(Memory::None);
        let recurrent_only = memory == Some(Memory::Recurrent);
        let hybrid = memory == Some(Memory::Hybrid);
        let compressed_kv = row.is_some_and(|r| r.compressed_kv);
        let nextn = keys.nextn_layers.min(fig.layers);
        let n_main = fig.layers - nextn;

        // Head sizes: llama.cpp reads key_length/value_length only when layer 0 has query
        // heads, defaulting to n_embd / n_head(0); sliding layers may have their own.
        let h0 = fig.head_count.at(0);
        let default_head = |what: &str| -> Result<u32, ShapeError> {
            u32::try_from(fig.embedding_length / h0 as u64)
                .map_err(|_| ShapeError(format!("{what}: embedding_length / head_count too large")))
        };
        let (k_full, v_full) = if h0 > 0 || arch == "plamo2" {
            (
                match fig.key_length {
                    Some(v) => v,
                    None if h0 > 0 => default_head("key_length")?,
                    None => 0,
                },
                match fig.value_length {
                    Some(v) => v,
                    None if h0 > 0 => default_head("value_length")?,
                    None => 0,
                },
            )
        } else {
            (0, 0)
        };
        let k_swa = keys.key_length_swa.unwrap_or(k_full);
        let v_swa = keys.value_length_swa.unwrap_or(v_full);

        // Which layers are recurrent (llama.cpp `is_recr`).
        let ff = |il: usize| keys.feed_forward.as_ref().map_or(0, |f| f.at(il));
        let interval_default = if arch == "minimax-01" { 8 } else { 4 };
        let recurrent_at = |il: usize| -> bool {
            let hkv = fig.head_count_kv.at(il);
            let main = (il as u32) < n_main;
            if let Some(list) = &fig.recurrent_layers {
                return list.contains(&(il as u32));
            }
            match arch {
                _ if recurrent_only => main,
                "falcon-h1" => true,
                "nemotron_h" | "nemotron_h_moe" => main && hkv == 0 && ff(il) == 0,
                "qwen3next" | "qwen35" | "qwen35moe" | "qwen4exp" | "minimax-01" => {
                    match &keys.recurrent_pattern {
                        Some(p) => p.get(il).copied().unwrap_or(false),
                        None => {
                            let n = keys.full_attention_interval.unwrap_or(interval_default);
                            main && n > 0 && !(il as u32 + 1).is_multiple_of(n)
                        }
                    }
                }
                "glm5-next" => hkv == 0,
                "jamba" | "granitehybrid" | "plamo2" | "lfm2" | "lfm2moe" | "kimi-linear"
                | "kimi-k3" | "bailingmoe3" => main && hkv == 0,
                _ if !known => fig.ssm.is_some() && hkv == 0,
                _ => false,
            }
        };
        // Which layers get an attention cache of their own (llama.cpp's layer filters).
        let kv_from_start: Option<u32> = match arch {
            "gemma3n" => Some(20),
            "gemma4" => Some(fig.layers - keys.shared_kv_layers.unwrap_or(0).min(fig.layers)),
            _ => None,
        };
        let owns_at = |il: usize, recurrent: bool| -> bool {
            let main = (il as u32) < n_main;
            if no_memory || recurrent_only {
                return false;
            }
            if hybrid {
                return match arch {
                    "falcon-h1" => true,
                    "nemotron_h" | "nemotron_h_moe" => !recurrent && ff(il) == 0,
                    "qwen3next" | "qwen35" | "qwen35moe" | "qwen4exp" | "minimax-01"
                    | "glm5-next" => main && !recurrent,
                    _ => !recurrent,
                };
            }
            let has_kv = kv_from_start.is_none_or(|n| (il as u32) < n);
            // minimax-m3 and hy_v4 (with an indexer) pass no layer filter: MTP layers keep a cache.
            let unfiltered =
                arch == "minimax-m3" || (arch == "hy_v4" && keys.indexer_top_k.unwrap_or(0) > 0);
            let mtp_filtered = nextn > 0 && n_main > 0 && !main && !unfiltered;
            has_kv && !mtp_filtered
        };

        // The sliding-window pattern (llama.cpp `is_swa`) and its window.
        let file_window = fig.sliding_window;
        let rule = row.and_then(|r| r.swa);
        let swa_on = match rule.map(|r| r.when) {
            Some(SwaWhen::Always) => true,
            Some(SwaWhen::WindowPositive) => file_window.is_some_and(|w| w > 0),
            Some(SwaWhen::Layers(n)) => n_main == n,
            None => false,
        };
        let window: Option<u64> = match rule {
            Some(r) if swa_on => r.forced_window.or(file_window).or(r.default_window),
            _ => None,
        };
        if swa_on && window.is_none() {
            return Err(ShapeError(format!(
                "{arch} needs attention.sliding_window and it is missing"
            )));
        }
        // deepseek4: llama.cpp refuses a file whose compress_ratios is missing or shorter than
        // block_count, and any ratio other than 0, 4 and 128.
        if compressed_kv {
            match &keys.compress_ratios {
                Some(PerLayer::List(r)) if r.len() >= l => {
                    if let Some(bad) = r.iter().find(|x| ![0, 4, 128].contains(*x)) {
                        return Err(ShapeError(format!(
                            "deepseek4 compress ratio {bad}: llama.cpp supports only 0, 4 and 128"
                        )));
                    }
                }
                Some(PerLayer::Uniform(r)) if [0, 4, 128].contains(r) => {}
                _ => {
                    return Err(ShapeError(
                        "deepseek4 needs attention.compress_ratios with one ratio (0, 4 or 128) per layer"
                            .into(),
                    ));
                }
            }
        }
        let mut swa_flags: Vec<bool> = vec![false; l];
        if swa_on && let Some(r) = rule {
            match (&fig.sliding_pattern, keys.swa_period.or(r.period)) {
                (Some(p), _) => {
                    for (il, f) in swa_flags.iter_mut().enumerate() {
                        *f = p.get(il).copied().unwrap_or(false);
                    }
                }
                (None, Some(n)) => {
                    for (il, f) in swa_flags.iter_mut().enumerate().take(n_main as usize) {
                        *f = swa_from_period(il as u32, n, r.dense_first);
                    }
                }
                (None, None) => {
                    return Err(ShapeError(format!(
                        "{arch} needs attention.sliding_window_pattern (one flag per layer) and it is missing"
                    )));
                }
            }
            if compressed_kv {
                // its loader marks the MTP layers sliding as well
                swa_flags.iter_mut().for_each(|f| *f = true);
            }
        } else if arch == "lfm2" && file_window.is_some_and(|w| w > 0) {
            // lfm2: every attention layer slides when a window is set.
            for (il, f) in swa_flags.iter_mut().enumerate().take(n_main as usize) {
                *f = !recurrent_at(il);
            }
        } else if !known && let Some(p) = &fig.sliding_pattern {
            // An architecture llama.cpp does not know: the file's pattern, as before.
            for (il, f) in swa_flags.iter_mut().enumerate() {
                *f = p.get(il).copied().unwrap_or(false);
            }
        }
        let lfm2_window = if arch == "lfm2" {
            file_window.filter(|w| *w > 0)
        } else {
            None
        };
        let unknown_window = if known {
            None
        } else {
            file_window.filter(|w| *w > 0)
        };
        let llama4_chunk = if arch == "llama4" && file_window != Some(0) {
            Some(fig.chunk_size.filter(|c| *c > 0).unwrap_or(8192))
        } else {
            None
        };

        // Indexer caches (DSA / MSA).
        let indexer_at = |il: usize| -> (u32, u32) {
            let Some(ik) = keys.indexer_key_length else {
                return (0, 0);
            };
            let main = (il as u32) < n_main;
            match arch {
                "deepseek32" if main => (ik, 0),
                "glm-dsa" if main => {
                    // Without `indexer.types`: every layer before GLM 5.2 (trained context
                    // below 1 Mi tokens), else llama.cpp's built-in 5.2 list (layers 0, 1,
                    // then every 4th from 2, over its 78 entries).
                    let full = match &keys.indexer_types {
                        Some(t) => t.get(il).copied().unwrap_or(false),
                        None if fig.native_context.unwrap_or(0) < 1_048_576 => true,
                        None => il < 2 || (il < 78 && (il - 2).is_multiple_of(4)),
                    };
                    if full { (ik, 0) } else { (0, 0) }
                }
                // dots3note: the layers `indexer.types` marks (DSA cache beside the SWA one).
                "dots3note" if main => {
                    let full = keys
                        .indexer_types
                        .as_ref()
                        .is_some_and(|t| t.get(il).copied().unwrap_or(false));
                    if full { (ik, 0) } else { (0, 0) }
                }
                // glm5-next: attention layers typed full (all by default); the k-pool indexer
                // caches key | gate | pooled rows side by side (3 × the key length).
                "glm5-next" if main && !recurrent_at(il) => {
                    let full = keys
                        .indexer_types
                        .as_ref()
                        .is_none_or(|t| t.get(il).copied().unwrap_or(false));
                    if full { (3 * ik, 0) } else { (0, 0) }
                }
                // qwen4exp: every attention layer; with a compress ratio the QSA indexer caches
                // key | pooled rows side by side.
                "qwen4exp" if main && !recurrent_at(il) => {
                    let pooled = keys.compress_ratios.as_ref().is_some_and(|r| r.max() > 0);
                    (if pooled { 2 * ik } else { ik }, 0)
                }
                // hy_v4: only with a top-k, on the layers typed full.
                "hy_v4" if keys.indexer_top_k.unwrap_or(0) > 0 => {
                    let full = keys
                        .indexer_types
                        .as_ref()
                        .is_some_and(|t| t.get(il).copied().unwrap_or(false));
                    if full { (ik, 0) } else { (0, 0) }
                }
                // deepseek4's lightning indexer is a compressed cache (kv::cache sizes it from
                // the compress ratios), not a per-token one.
                "minimax-m3" if il as u32 >= keys.leading_dense.unwrap_or(0) => {
                    let v = if swa_flags[il] { v_swa } else { v_full };
                    (ik, if fig.mla.is_some() { 0 } else { v })
                }
                _ => (0, 0),
            }
        };

        let mut layers = Vec::with_capacity(l);
        for (il, &sliding) in swa_flags.iter().enumerate() {
            let h = fig.head_count.at(il);
            let hkv = fig.head_count_kv.at(il);
            let recurrent = recurrent_at(il);
            let owns_cache = owns_at(il, recurrent);
            let (key_length, value_length) = if sliding {
                (k_swa, v_swa)
            } else {
                (k_full, v_full)
            };
            let mtp = nextn > 0 && n_main > 0 && il as u32 >= n_main;
            let attention_layer = hkv > 0
                && (!recurrent || arch == "falcon-h1")
                && (!mtp || owns_cache)
                && !(hybrid && !owns_cache && kv_from_start.is_none());
            let attention = if !attention_layer {
                Attention::None
            } else if let Some(chunk) = llama4_chunk {
                let chunked = match &fig.sliding_pattern {
                    Some(p) => p.get(il).copied().unwrap_or(false),
                    None => {
                        swa_from_period(il as u32, keys.swa_period.unwrap_or(4), false)
                            && (il as u32) < n_main
                    }
                };
                if chunked {
                    Attention::Chunked { chunk }
                } else {
                    Attention::Full
                }
            } else if sliding {
                match window.or(lfm2_window).or(unknown_window) {
                    Some(w) if w > 0 => Attention::Sliding { window: w },
                    _ => Attention::Full,
                }
            } else {
                Attention::Full
            };
            let (indexer_key_length, indexer_value_length) = if owns_cache || arch == "minimax-m3" {
                indexer_at(il)
            } else {
                (0, 0)
            };
            layers.push(LayerShape {
                head_count: h,
                head_count_kv: hkv,
                key_length,
                value_length,
                attention,
                recurrent,
                owns_cache,
                indexer_key_length,
                indexer_value_length,
            });
        }
        if known && rule.is_none() && arch != "llama4" && arch != "lfm2" && arch != "phi3" {
            if file_window.is_some_and(|w| w > 0) {
                warnings.push(format!(
                    "the model states a sliding window but llama.cpp applies none for \"{arch}\": full cache assumed"
                ));
            }
        } else if !known && file_window.is_some_and(|w| w > 0) && fig.sliding_pattern.is_none() {
            warnings.push(format!(
                "the model states a sliding window but llama.cpp applies none for \"{arch}\": full cache assumed"
            ));
        }
        if arch == "phi3" && file_window.is_some_and(|w| w > 0) {
            warnings.push(
                "phi3 files carry a sliding window but llama.cpp keeps the full cache: treated as full"
                    .into(),
            );
        }
        if let Some(ssm) = fig.ssm
            && (ssm.d_inner == 0 || ssm.d_state == 0)
        {
            return Err(ShapeError(
                "SSM figures have a zero d_inner or d_state".into(),
            ));
        }

        // Recurrent state (llama.cpp `n_embd_r`, `n_embd_s`), f32 per layer per sequence.
        let any_recurrent = layers.iter().any(|x| x.recurrent);
        let state = if any_recurrent {
            let e = fig.embedding_length;
            let h0 = h0 as u64;
            let (d_conv, d_inner, d_state, n_group) = match fig.ssm {
                Some(s) => (s.d_conv, s.d_inner, s.d_state, s.n_group),
                None => (keys.conv_kernel.unwrap_or(0), 0, 0, 0),
            };
            let ssm_conv = d_conv.saturating_sub(1) * (d_inner + 2 * n_group * d_state);
            let (conv, st) = if let Some(wkv) = keys.wkv_head_size {
                (
                    keys.token_shift_count.unwrap_or(2) as u64 * e,
                    e * wkv as u64,
                )
            } else {
                let conv = if let Some(lc) = keys.shortconv_l_cache {
                    e * (lc as u64).saturating_sub(1)
                } else if let Some(kda) = keys.kda_head_dim {
                    let dc = if d_conv > 0 { d_conv - 1 } else { 3 };
                    3 * dc * h0 * kda as u64
                } else {
                    ssm_conv
                };
                let st = if let Some(kda) = keys.kda_head_dim {
                    kda as u64 * kda as u64 * h0
                } else if arch == "minimax-01" {
                    k_full as u64 * k_full as u64 * h0
                } else {
                    d_state * d_inner
                };
                (conv, st)
            };
            // qwen4exp: the PLE module's convolution history is its own row on each PLE layer
            // (llama.cpp `ple_conv_state`, only when the module has heads and a kernel).
            let ple = match (&keys.ple_layers, keys.ple_ngram_size, keys.ple_conv_kernel) {
                (Some(pl), Some(ng), Some(kc))
                    if arch == "qwen4exp"
                        && kc > 0
                        && ng > 1
                        && keys.ple_heads_per_ngram.unwrap_or(0) > 0 =>
                {
                    let per = (kc as u64 - 1)
                        .saturating_mul(ng as u64)
                        .saturating_mul(keys.hc_mult.unwrap_or(1) as u64)
                        .saturating_mul(e);
                    let n = pl
                        .iter()
                        .filter(|il| layers.get(**il as usize).is_some_and(|l| l.recurrent))
                        .count() as u64;
                    per.saturating_mul(n)
                }
                _ => 0,
            };
            Some(RecurrentState {
                conv,
                state: st,
                ple,
            })
        } else {
            None
        };
        if !no_memory
            && layers
                .iter()
                .all(|x| (x.attention == Attention::None || !x.owns_cache) && !x.recurrent)
            && kv_from_start.is_none()
        {
            return Err(ShapeError(
                "no layer has attention heads or recurrent state: head_count_kv is 0 everywhere"
                    .into(),
            ));
        }
        if recurrent_only && state.is_some_and(|s| s.conv == 0 && s.state == 0) {
            return Err(ShapeError(format!(
                "{arch} is recurrent but the file gives no state size (ssm.* or wkv.head_size)"
            )));
        }
        if let Some(m) = fig.moe
            && (m.experts == 0 || m.experts_used == 0 || m.experts_used > m.experts)
        {
            return Err(ShapeError(format!(
                "experts used ({}) must be between 1 and the expert count ({})",
                m.experts_used, m.experts
            )));
        }
        let unsupported = unsupported_reason(arch).map(|r| r.to_string());
        if let Some(r) = &unsupported {
            warnings.push(format!(
                "llmbound does not model llama.cpp's cache for \"{arch}\" exactly ({r}): the cache figures are the plain attention cache and may be low"
            ));
        }
        Ok(ModelShape {
            name: name.into(),
            architecture: fig.architecture.clone(),
            layers,
            embedding_length: fig.embedding_length,
            vocab_size: fig.vocab_size,
            native_context: fig.native_context,
            tied_embeddings: fig.tied_embeddings,
            mla: fig.mla,
            moe: fig.moe,
            ssm: fig.ssm,
            state,
            no_memory,
            kv_types_must_match: fig.mla.is_some() || compressed_kv,
            unsupported,
            keys: fig.keys.clone(),
            provenance,
            parameters_advertised: None,
            active_parameters_advertised: None,
            warnings,
        })
    }

    /// Repeating layer count L.
    pub fn layer_count(&self) -> u32 {
        self.layers.len() as u32
    }

    /// The sliding window, if any layer slides.
    pub fn sliding_window(&self) -> Option<u64> {
        self.layers.iter().find_map(|l| match l.attention {
            Attention::Sliding { window } => Some(window),
            _ => None,
        })
    }

    /// Recurrent state bytes of one recurrent layer over `sequences` sequences.
    pub fn recurrent_bytes_per_layer(&self, sequences: u64) -> u64 {
        let layers = self.layers.iter().filter(|l| l.recurrent).count() as u64;
        self.recurrent_bytes_per_sequence()
            .checked_div(layers)
            .unwrap_or(0)
            .saturating_mul(sequences.max(1))
    }

    /// Recurrent state bytes per sequence (f32 whatever the cache types, docs/bounds.md §3): per
    /// recurrent layer `(n_embd_r + n_embd_s) × 4`, with llama.cpp's sizes: Mamba
    /// `(d_conv − 1)(d_inner + 2 n_group d_state) + d_state d_inner`, RWKV
    /// `token_shift × n_embd + n_embd × head_size`, LFM2 `n_embd (l_cache − 1)`, KDA
    /// `3 (d_conv − 1) n_head d_head + d_head² n_head`.
    pub fn recurrent_bytes_per_sequence(&self) -> u64 {
        let Some(s) = self.state else { return 0 };
        let n = self.layers.iter().filter(|l| l.recurrent).count() as u128;
        u64::try_from(s.bytes() as u128 * n).unwrap_or(u64::MAX)
    }

    /// Whether flash attention runs when `requested`: llama.cpp turns it off for some
    /// architectures whatever was asked (`llama_init_from_model`; grok, the table's
    /// `flash_attn_off`).
    pub fn effective_flash_attn(&self, requested: bool) -> bool {
        requested
            && !super::arch::lookup(&self.architecture).is_some_and(|a| a.graph.flash_attn_off)
    }

    /// Largest V row over every layer, H_KV × d_v (llama.cpp `n_embd_v_gqa_max`): with flash
    /// attention off llama.cpp stores V transposed and pads every layer's V to this width.
    pub fn v_width_max(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| l.head_count_kv as u64 * l.value_length as u64)
            .max()
            .unwrap_or(0)
    }
}

/// Qwen3-32B's figures (64 layers, 64 query heads over 8 KV heads of 128), the fixture the
/// cache and runtime tests build on.
#[cfg(test)]
pub(crate) fn qwen3_32b_figures() -> ArchFigures {
    ArchFigures {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn figures(arch: &str, layers: u32) -> ArchFigures {
        ArchFigures {
            architecture: arch.into(),
            layers,
            head_count: PerLayer::Uniform(8),
            head_count_kv: PerLayer::Uniform(4),
            key_length: Some(128),
            value_length: Some(128),
            embedding_length: 1024,
            vocab_size: 1000,
            native_context: Some(8192),
            sliding_window: None,
            sliding_pattern: None,
            chunk_size: None,
            mla: None,
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: false,
            keys: Default::default(),
        }
    }

    fn sliding(shape: &ModelShape) -> Vec<usize> {
        shape
            .layers
            .iter()
            .enumerate()
            .filter(|(_, l)| !matches!(l.attention, Attention::Full))
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn gemma3_every_sixth_is_global() {
        let mut f = figures("gemma3", 18);
        f.sliding_window = Some(512);
        let s = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        assert_eq!(sliding(&s).len(), 15);
        assert_eq!(s.layers[5].attention, Attention::Full);
        assert_eq!(s.layers[11].attention, Attention::Full);
        assert_eq!(s.layers[0].attention, Attention::Sliding { window: 512 });
    }

    #[test]
    fn gemma3_without_window_is_full() {
        let mut f = figures("gemma3", 12);
        f.sliding_window = Some(0);
        let s = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        assert!(sliding(&s).is_empty());
    }

    #[test]
    fn gemma2_even_layers_default_window() {
        let s = ModelShape::from_figures("g", &figures("gemma2", 4), Provenance::File).unwrap();
        assert_eq!(s.layers[0].attention, Attention::Sliding { window: 4096 });
        assert_eq!(s.layers[1].attention, Attention::Full);
    }

    #[test]
    fn gpt_oss_needs_window() {
        assert!(ModelShape::from_figures("g", &figures("gpt-oss", 4), Provenance::File).is_err());
        let mut f = figures("gpt-oss", 4);
        f.sliding_window = Some(128);
        let s = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        assert_eq!(sliding(&s), vec![0, 2]);
    }

    #[test]
    fn cohere2_every_fourth_global_command_r_none() {
        let mut f = figures("cohere2", 8);
        f.sliding_window = Some(4096);
        let s = ModelShape::from_figures("c", &f, Provenance::File).unwrap();
        assert_eq!(sliding(&s), vec![0, 1, 2, 4, 5, 6]);
        let mut f = figures("command-r", 8);
        f.sliding_window = Some(4096);
        let s = ModelShape::from_figures("c", &f, Provenance::File).unwrap();
        assert!(sliding(&s).is_empty());
        assert!(!s.warnings.is_empty());
    }

    #[test]
    fn llama4_chunked() {
        let s = ModelShape::from_figures("l", &figures("llama4", 8), Provenance::File).unwrap();
        assert_eq!(s.layers[0].attention, Attention::Chunked { chunk: 8192 });
        assert_eq!(s.layers[3].attention, Attention::Full);
    }

    #[test]
    fn phi3_window_ignored() {
        let mut f = figures("phi3", 4);
        f.sliding_window = Some(2047);
        let s = ModelShape::from_figures("p", &f, Provenance::File).unwrap();
        assert!(sliding(&s).is_empty());
    }

    #[test]
    fn pattern_array_wins() {
        let mut f = figures("gemma3", 4);
        f.sliding_window = Some(512);
        f.sliding_pattern = Some(vec![false, true, false, true]);
        let s = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        assert_eq!(sliding(&s), vec![1, 3]);
    }

    #[test]
    fn per_layer_list_length_checked() {
        let mut f = figures("llama", 4);
        f.head_count_kv = PerLayer::List(vec![4, 4]);
        assert!(ModelShape::from_figures("x", &f, Provenance::File).is_err());
    }

    #[test]
    fn granitehybrid_recurrent_where_no_kv() {
        let mut f = figures("granitehybrid", 4);
        f.head_count_kv = PerLayer::List(vec![0, 0, 0, 4]);
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 2048,
            d_state: 128,
            n_group: 1,
        });
        let s = ModelShape::from_figures("x", &f, Provenance::File).unwrap();
        assert!(s.layers[0].recurrent && !s.layers[3].recurrent);
        assert_eq!(s.layers[0].attention, Attention::None);
        // ((4-1)(2048 + 2*1*128) + 128*2048) * 4 = (6912 + 262144) * 4 = 1,076,224 per layer
        assert_eq!(s.recurrent_bytes_per_sequence(), 3 * 1_076_224);
    }

    #[test]
    fn falcon_h1_every_layer_both() {
        let mut f = figures("falcon-h1", 2);
        f.ssm = Some(Ssm {
            d_conv: 4,
            d_inner: 1024,
            d_state: 16,
            n_group: 1,
        });
        let s = ModelShape::from_figures("x", &f, Provenance::File).unwrap();
        assert!(
            s.layers
                .iter()
                .all(|l| l.recurrent && l.attention == Attention::Full)
        );
    }
}
