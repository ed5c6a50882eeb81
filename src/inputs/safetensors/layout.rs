//! The per-architecture cache layout of MLX-LM 0.32.2 (each model's `make_cache()`, else
//! `make_prompt_cache`'s one `KVCache` per layer), read from `config.json`. One table: the
//! model types covered, which ones build their own caches (so `--max-kv-size` has no
//! effect on them), and how each lays its layers out.

use super::config::MlxConfig;
use super::index::Model;
use super::reader::Dtype;
use crate::core::mlx::{CacheLayout, LayerCache};

/// Model types (after MLX-LM's `MODEL_REMAPPING`) whose module defines `make_cache()` in
/// mlx-lm 0.32.2 (`grep -l "def make_cache" mlx_lm/models/*.py`).
pub const OWN_MAKE_CACHE: &[&str] = &[
    "afm7",
    "afmoe",
    "baichuan_m1",
    "bailing_hybrid",
    "bailing_moe_linear",
    "bailing_moe_v3",
    "cohere2",
    "deepseek_v32",
    "deepseek_v41",
    "exaone4",
    "exaone_moe",
    "falcon_h1",
    "gear",
    "gemma3",
    "gemma3_text",
    "gemma3n",
    "gemma4",
    "gemma4_text",
    "gpt_oss",
    "granitemoehybrid",
    "iquestloopcoder",
    "jamba",
    "kimi_k3",
    "kimi_linear",
    "laguna",
    "lfm2-vl",
    "lfm2",
    "lfm2_moe",
    "llama",
    "llama4",
    "longcat_flash",
    "longcat_flash_ngram",
    "mamba",
    "mamba2",
    "mellum",
    "mimo_v2_flash",
    "minimax_m3_vl",
    "ministral3",
    "muse_glimmer",
    "muse_spark",
    "nanbeige",
    "nemotron-nas",
    "nemotron_h",
    "olmo3",
    "olmo_hybrid",
    "plamo2",
    "plamo3",
    "qwen3_5",
    "qwen3_next",
    "recurrent_gemma",
    "rwkv7",
    "spark2_5",
    "step3p5",
];

/// MLX-LM's `MODEL_REMAPPING` entries that matter here.
fn remap(t: &str) -> &str {
    match t {
        "mistral" | "iquestcoder" | "xverse" => "llama",
        "kimi_k2" | "joyai_llm_flash" => "deepseek_v3",
        other => other,
    }
}

/// Why no layout could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The folder has no config.json.
    #[error("no config.json: the cache layout needs the model's shape")]
    NoConfig,
    /// A model type whose caches are not modelled.
    #[error(
        "MLX-LM model type \"{0}\" is not modelled yet (covered: llama/mistral, qwen2, qwen3, qwen3_moe, mixtral, gemma3, gpt_oss, deepseek_v2, deepseek_v3, qwen3_next)"
    )]
    Unsupported(String),
    /// A key the layout needs is absent.
    #[error("config.json has no \"{0}\"")]
    Missing(&'static str),
}

/// The element type the model computes in (and so its caches): the dtype of its norm
/// weights, which MLX never quantizes; else the most common float dtype.
pub fn model_dtype(model: &Model) -> Dtype {
    let float = |d: Dtype| matches!(d, Dtype::BF16 | Dtype::F16 | Dtype::F32);
    if let Some((_, t)) = model
        .tensors()
        .find(|(_, t)| t.name.contains("norm") && float(t.dtype))
    {
        return t.dtype;
    }
    let mut counts = std::collections::BTreeMap::new();
    for (_, t) in model.tensors().filter(|(_, t)| float(t.dtype)) {
        *counts.entry(t.dtype).or_insert(0u64) += t.elements;
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map_or(Dtype::BF16, |(d, _)| d)
}

fn need(c: &MlxConfig, k: &'static str) -> Result<u64, LayoutError> {
    c.u64(k).ok_or(LayoutError::Missing(k))
}

/// The cache layout of the model described by `cfg`, computing in `dtype`.
pub fn cache_layout(cfg: &MlxConfig, dtype: Dtype) -> Result<CacheLayout, LayoutError> {
    let t = remap(&cfg.model_type);
    let layers = need(cfg, "num_hidden_layers")?;
    let heads = need(cfg, "num_attention_heads")?;
    let kv_heads = cfg.u64("num_key_value_heads").unwrap_or(heads);
    let head_dim = match cfg.u64("head_dim") {
        Some(d) => d,
        None => need(cfg, "hidden_size")? / heads.max(1),
    };
    let kv = LayerCache::Kv {
        kv_heads,
        k_dim: head_dim,
        v_dim: head_dim,
    };
    let rot = |max: u64| LayerCache::Rotating {
        kv_heads,
        k_dim: head_dim,
        v_dim: head_dim,
        max_size: max,
        keep: 0,
    };
    let n = layers as usize;
    let by_types = |window: u64| -> Option<Vec<LayerCache>> {
        let types = cfg.strings("layer_types")?;
        Some(
            types
                .iter()
                .take(n)
                .map(|lt| {
                    if lt == "sliding_attention" {
                        rot(window)
                    } else {
                        kv
                    }
                })
                .collect(),
        )
    };
    let out = match t {
        "llama" => match (
            cfg.u64("sliding_window"),
            by_types(cfg.u64("sliding_window").unwrap_or(0)),
        ) {
            (Some(w), Some(v)) if w > 0 => v,
            _ => vec![kv; n],
        },
        "qwen2" | "qwen3" | "qwen3_moe" | "mixtral" | "phi3" | "qwen2_moe" | "olmoe" => vec![kv; n],
        "gemma3_text" | "gemma3" => {
            let w = cfg.u64("sliding_window").unwrap_or(512);
            let p = cfg.u64("sliding_window_pattern").unwrap_or(6).max(1);
            (0..layers)
                .map(|i| if i % p == p - 1 { kv } else { rot(w) })
                .collect()
        }
        "gpt_oss" => {
            let w = need(cfg, "sliding_window")?;
            by_types(w).ok_or(LayoutError::Missing("layer_types"))?
        }
        "deepseek_v3" => {
            // The latent and the rope key, one head (deepseek_v3.py: update_and_fetch(kv_latent, k_pe)).
            let r = need(cfg, "kv_lora_rank")?;
            let rope = need(cfg, "qk_rope_head_dim")?;
            vec![
                LayerCache::Kv {
                    kv_heads: 1,
                    k_dim: r,
                    v_dim: rope
                };
                n
            ]
        }
        "deepseek_v2" => {
            let nope = need(cfg, "qk_nope_head_dim")?;
            let rope = need(cfg, "qk_rope_head_dim")?;
            let v = need(cfg, "v_head_dim")?;
            vec![
                LayerCache::Kv {
                    kv_heads: heads,
                    k_dim: nope + rope,
                    v_dim: v
                };
                n
            ]
        }
        "qwen3_next" => {
            let interval = cfg.u64("full_attention_interval").unwrap_or(4).max(1);
            let hk = need(cfg, "linear_num_key_heads")?;
            let hv = need(cfg, "linear_num_value_heads")?;
            let dk = need(cfg, "linear_key_head_dim")?;
            let dv = need(cfg, "linear_value_head_dim")?;
            let kernel = need(cfg, "linear_conv_kernel_dim")?;
            let conv_dim = 2 * hk * dk + hv * dv;
            // ArraysCache(2): the conv state (K − 1) × conv_dim in the model dtype and the
            // gated-delta state Hv × Dv × Dk in f32 (gated_delta.py).
            let bytes = kernel.saturating_sub(1) * conv_dim * dtype.bits() / 8 + hv * dv * dk * 4;
            (0..layers)
                .map(|i| {
                    if (i + 1) % interval != 0 {
                        LayerCache::Arrays { bytes }
                    } else {
                        kv
                    }
                })
                .collect()
        }
        other => return Err(LayoutError::Unsupported(other.to_string())),
    };
    Ok(CacheLayout {
        layers: out,
        dtype_bytes: dtype.bits() / 8,
        own_make_cache: OWN_MAKE_CACHE.contains(&t),
        quantized_kv_breaks: t == "deepseek_v3",
    })
}

/// The layout of a model read from its folder.
pub fn layout_of(model: &Model) -> Result<CacheLayout, LayoutError> {
    let cfg = model.config.as_ref().ok_or(LayoutError::NoConfig)?;
    cache_layout(cfg, model_dtype(model))
}
