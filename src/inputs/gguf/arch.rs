//! Architecture figures from GGUF metadata, read the way llama.cpp's `llama_model::load_hparams`
//! reads them (key names checked against gguf-py 0.19 `constants.py` and llama.cpp's
//! `src/llama-model.cpp`), then handed to `core::model` for the per-architecture rules.
//! Depends on `core::model` for its input and output types only.
//!
//! Notes from llama.cpp that decide what is read here:
//! - `head_count_kv` defaults to `head_count` when absent; both may be per-layer arrays.
//! - `key_length`/`value_length` default to `embedding_length / head_count`.
//! - llama4's chunk size is not a GGUF key: llama.cpp hard-codes `n_swa = 8192` with the
//!   pattern "3 chunked, 1 full"; a file with `llama4.attention.sliding_window` = 0 turns
//!   chunking off.
//! - `attention.sliding_window_pattern` is a bool array per layer, or (as gguf-py's
//!   `add_sliding_window_pattern(int)` writes it) a u32 period n: layer il slides when
//!   `il % n < n − 1` (llama.cpp's `set_swa_pattern`).
//! - MLA (deepseek2 family): the cache is the latent only when `key_length_mla` /
//!   `value_length_mla` are present; then `key_length` is kv_lora_rank + rope dims (576) and
//!   `head_count_kv` is 1 as written.
//! - SSM: `ssm.conv_kernel`, `ssm.inner_size`, `ssm.state_size`, `ssm.group_count` (0 when
//!   absent, Mamba-1). falcon-h1 has attention and SSM state in every layer; granitehybrid
//!   (and jamba, nemotron_h) mark recurrent layers with `head_count_kv[l] == 0`.

use super::GgufError;
use super::reader::Metadata;
use super::split::Artifact;
use super::types::Value;
use crate::core::model::{
    ArchFigures, CacheKeys, LLAMA_CPP_BUILD, Mla, ModelShape, Moe, PerLayer, Ssm,
    is_llama_cpp_architecture,
};
use crate::core::units::Provenance;

/// The most layers a file may state (the core refuses more as well).
pub const MAX_LAYERS: u32 = 100_000;

/// Figures read from a file, with what had to be guessed.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchReport {
    /// The raw figures for `ModelShape::from_figures`.
    pub figures: ArchFigures,
    /// What was guessed or is not modelled, one sentence each.
    pub warnings: Vec<String>,
}

fn per_layer(m: &Metadata, key: &str) -> Result<Option<PerLayer>, GgufError> {
    let Some(e) = m.get(key) else {
        return Ok(None);
    };
    match &e.value {
        Value::Array { .. } | Value::Skipped(_) => Ok(m.get_u32_array(key)?.map(PerLayer::List)),
        _ => Ok(m.get_u32(key)?.map(PerLayer::Uniform)),
    }
}

/// A per-layer flag key as llama.cpp's `get_key_or_arr` reads it: a bool array, or one value
/// (bool or integer) for every layer.
fn bool_or_array(m: &Metadata, key: &str, layers: u32) -> Result<Option<Vec<bool>>, GgufError> {
    let Some(e) = m.get(key) else {
        return Ok(None);
    };
    match &e.value {
        Value::Array { .. } | Value::Skipped(_) => m.get_bool_array(key),
        Value::Bool(b) => Ok(Some(vec![*b; layers as usize])),
        _ => Ok(m.get_u32(key)?.map(|v| vec![v != 0; layers as usize])),
    }
}

fn required<T>(v: Option<T>, key: &str, needed_for: &str) -> Result<T, GgufError> {
    v.ok_or_else(|| GgufError::MissingKey {
        key: key.to_string(),
        needed_for: needed_for.to_string(),
    })
}

/// The raw architecture figures of an artifact (see `arch_report` for the warnings).
pub fn arch_figures(artifact: &Artifact) -> Result<ArchFigures, GgufError> {
    arch_report(artifact).map(|r| r.figures)
}

/// The raw architecture figures and what had to be guessed. Fails, naming the key, when a
/// figure the KV maths needs is missing; the tensor inventory does not depend on this.
pub fn arch_report(artifact: &Artifact) -> Result<ArchReport, GgufError> {
    let m = artifact.metadata();
    let arch = required(
        m.get_str("general.architecture")?,
        "general.architecture",
        "the architecture names every other model key",
    )?
    .to_string();
    let k = |suffix: &str| format!("{arch}.{suffix}");
    let mut warnings = Vec::new();
    if !is_llama_cpp_architecture(&arch) {
        warnings.push(format!(
            "architecture {arch:?} is not one llama.cpp (b{LLAMA_CPP_BUILD}) knows: read the generic {arch}.* keys (block_count, attention.head_count, head_count_kv, key_length, value_length); no sliding-window, chunked or recurrent rule was applied"
        ));
    }

    let layers = required(
        m.get_u32(&k("block_count"))?,
        &k("block_count"),
        "the layer count for the KV cache",
    )?;
    if layers > MAX_LAYERS {
        return Err(GgufError::Implausible {
            key: k("block_count"),
            value: layers.into(),
            why: format!("more than {MAX_LAYERS} layers is not a plausible model"),
            offset: m.get(&k("block_count")).map(|e| e.offset).unwrap_or(0),
        });
    }
    let head_count = required(
        per_layer(m, &k("attention.head_count"))?,
        &k("attention.head_count"),
        "the attention heads for the KV cache",
    )?;
    let head_count_kv = match per_layer(m, &k("attention.head_count_kv"))? {
        Some(v) => v,
        None => {
            warnings.push(format!(
                "{} is absent: as llama.cpp, KV heads = query heads",
                k("attention.head_count_kv")
            ));
            head_count.clone()
        }
    };
    let key_length = m.get_u32(&k("attention.key_length"))?;
    let value_length = m.get_u32(&k("attention.value_length"))?;
    let token_embd = artifact.tensor("token_embd.weight");
    let embedding_length = match m.get_u64(&k("embedding_length"))? {
        Some(v) => v,
        None => {
            let guess = token_embd.and_then(|t| t.dims().first().copied());
            match guess {
                Some(g) => {
                    warnings.push(format!(
                        "{} is absent: the width {g} of token_embd.weight was used",
                        k("embedding_length")
                    ));
                    g
                }
                None => {
                    if key_length.is_none() || value_length.is_none() {
                        return Err(GgufError::MissingKey {
                            key: k("embedding_length"),
                            needed_for: "the per-head sizes (no key_length/value_length either)"
                                .into(),
                        });
                    }
                    0
                }
            }
        }
    };
    let vocab_size = match m.get_u64(&k("vocab_size"))? {
        Some(v) => v,
        None => match m.array_len("tokenizer.ggml.tokens") {
            Some(n) => n,
            None => match token_embd.and_then(|t| t.dims().get(1).copied()) {
                Some(n) => n,
                None => {
                    warnings.push(
                        "no vocabulary size: no vocab_size key, tokenizer or token_embd.weight"
                            .into(),
                    );
                    0
                }
            },
        },
    };
    let native_context = m.get_u64(&k("context_length"))?;
    let sliding_window = m.get_u64(&k("attention.sliding_window"))?;

    let pattern_key = k("attention.sliding_window_pattern");
    let mut swa_period = None;
    let mut sliding_pattern = match m.get(&pattern_key).map(|e| &e.value) {
        None => None,
        Some(Value::Array { .. } | Value::Skipped(_)) => m.get_bool_array(&pattern_key)?,
        Some(_) => {
            // A period n: the core applies it with the architecture's dense-first rule.
            swa_period = Some(required(
                m.get_u32(&pattern_key)?,
                &pattern_key,
                "the window pattern",
            )?);
            None
        }
    };
    if arch == "llama4" && sliding_window == Some(0) && sliding_pattern.is_none() {
        // llama.cpp: a llama4 file with sliding_window 0 has no chunked attention.
        sliding_pattern = Some(vec![false; layers as usize]);
    }

    let key_mla = m.get_u32(&k("attention.key_length_mla"))?;
    let value_mla = m.get_u32(&k("attention.value_length_mla"))?;
    let mla = if key_mla.is_some() || value_mla.is_some() {
        let needed = "the latent (MLA) cache size";
        // The cache is key_length × head_count_kv whatever these say; llama.cpp does not
        // require them (rope dims default to the key head size), so neither does llmbound.
        let lora = m.get_u32(&k("attention.kv_lora_rank"))?;
        let rope = m.get_u32(&k("rope.dimension_count"))?;
        let key = key_length.unwrap_or(0);
        Some(Mla {
            kv_lora_rank: lora.unwrap_or_else(|| key.saturating_sub(rope.unwrap_or(0))),
            rope_dim: rope.unwrap_or_else(|| key.saturating_sub(lora.unwrap_or(key))),
            key_length_mla: required(key_mla, &k("attention.key_length_mla"), needed)?,
            value_length_mla: required(value_mla, &k("attention.value_length_mla"), needed)?,
        })
    } else {
        None
    };

    let moe = match m.get_u32(&k("expert_count"))? {
        Some(n) if n > 0 => Some(Moe {
            experts: n,
            experts_used: required(
                m.get_u32(&k("expert_used_count"))?,
                &k("expert_used_count"),
                "the share of routed experts read per token",
            )?,
            shared_experts: m.get_u32(&k("expert_shared_count"))?.unwrap_or(0),
        }),
        _ => None,
    };

    let conv = m.get_u64(&k("ssm.conv_kernel"))?;
    let inner = m.get_u64(&k("ssm.inner_size"))?;
    let state = m.get_u64(&k("ssm.state_size"))?;
    // Kimi delta attention states only the convolution kernel; Mamba-style layers all three.
    let ssm = if inner.is_some() || state.is_some() {
        let needed = "the recurrent state size";
        Some(Ssm {
            d_conv: required(conv, &k("ssm.conv_kernel"), needed)?,
            d_inner: required(inner, &k("ssm.inner_size"), needed)?,
            d_state: required(state, &k("ssm.state_size"), needed)?,
            n_group: m.get_u64(&k("ssm.group_count"))?.unwrap_or(0),
        })
    } else {
        None
    };

    let (ssm_in, qkv) = projection_layers(artifact, layers);
    let keys = CacheKeys {
        nextn_layers: m.get_u32(&k("nextn_predict_layers"))?.unwrap_or(0),
        shared_kv_layers: m.get_u32(&k("attention.shared_kv_layers"))?,
        key_length_swa: m.get_u32(&k("attention.key_length_swa"))?,
        value_length_swa: m.get_u32(&k("attention.value_length_swa"))?,
        swa_period,
        recurrent_pattern: bool_or_array(m, &k("attention.recurrent_layers"), layers)?,
        full_attention_interval: m.get_u32(&k("full_attention_interval"))?,
        feed_forward: per_layer(m, &k("feed_forward_length"))?,
        conv_kernel: if ssm.is_none() { conv } else { None },
        wkv_head_size: m.get_u32(&k("wkv.head_size"))?,
        token_shift_count: m.get_u32(&k("token_shift_count"))?,
        shortconv_l_cache: m.get_u32(&k("shortconv.l_cache"))?,
        kda_head_dim: m.get_u32(&k("kda.head_dim"))?,
        indexer_key_length: m.get_u32(&k("attention.indexer.key_length"))?,
        indexer_types: bool_or_array(m, &k("attention.indexer.types"), layers)?,
        indexer_top_k: m.get_u32(&k("attention.indexer.top_k"))?,
        indexer_head_count: m.get_u32(&k("attention.indexer.head_count"))?,
        q_lora_rank: m.get_u32(&k("attention.q_lora_rank"))?,
        compress_ratios: per_layer(m, &k("attention.compress_ratios"))?,
        leading_dense: m.get_u32(&k("leading_dense_block_count"))?,
        ple_layers: m.get_u32_array(&k("ple.layers"))?,
        ple_ngram_size: m.get_u32(&k("ple.ngram_size"))?,
        ple_heads_per_ngram: m.get_u32(&k("ple.heads_per_ngram"))?,
        ple_conv_kernel: m.get_u32(&k("ple.conv_kernel"))?,
        hc_mult: m.get_u32(&k("hyper_connection.count"))?,
        fused_qkvz: fused_qkvz_layers(&arch, &ssm_in, &qkv),
        attn_qkv: if qkv.iter().any(|x| *x) {
            qkv.clone()
        } else {
            Vec::new()
        },
        cls_out_width: (arch == "qwen35")
            .then(|| artifact.tensor("cls.output.weight"))
            .flatten()
            .and_then(|t| t.dims().get(1).copied()),
        rwkv7_lora_ranks: match (
            m.get_u32(&k("attention.decay_lora_rank"))?,
            m.get_u32(&k("attention.iclr_lora_rank"))?,
            m.get_u32(&k("attention.value_residual_mix_lora_rank"))?,
            m.get_u32(&k("attention.gate_lora_rank"))?,
        ) {
            (Some(w), Some(a), Some(v), Some(g)) => Some([w, a, v, g]),
            _ => None,
        },
        mrope_sections: m
            .get_u32_array(&k("rope.dimension_sections"))
            .ok()
            .flatten()
            .is_some_and(|v| v.first().is_some_and(|x| *x > 0) && v.get(1).is_some_and(|x| *x > 0)),
    };
    if keys.nextn_layers > layers {
        return Err(GgufError::Implausible {
            key: k("nextn_predict_layers"),
            value: keys.nextn_layers.into(),
            why: format!("more next-token-prediction layers than the {layers} blocks"),
            offset: m
                .get(&k("nextn_predict_layers"))
                .map(|e| e.offset)
                .unwrap_or(0),
        });
    }

    Ok(ArchReport {
        figures: ArchFigures {
            architecture: arch,
            layers,
            head_count,
            head_count_kv,
            key_length,
            value_length,
            embedding_length,
            vocab_size,
            native_context,
            sliding_window,
            sliding_pattern,
            chunk_size: None,
            mla,
            moe,
            ssm,
            recurrent_layers: None,
            tied_embeddings: artifact.tensor("output.weight").is_none(),
            keys,
        },
        warnings,
    })
}

/// The model shape of an artifact: `ModelShape::from_figures(name, figures, Provenance::File)`,
/// with the reader's guesses added to its warnings.
pub fn model_shape(artifact: &Artifact, name: &str) -> Result<ModelShape, GgufError> {
    model_shape_and_figures(artifact, name).map(|(shape, _)| shape)
}

/// The model shape and the raw figures it was built from (for edits), read once.
pub fn model_shape_and_figures(
    artifact: &Artifact,
    name: &str,
) -> Result<(ModelShape, ArchFigures), GgufError> {
    let report = arch_report(artifact)?;
    let mut shape = ModelShape::from_figures(name, &report.figures, Provenance::File)?;
    let mut warnings = report.warnings;
    warnings.append(&mut shape.warnings);
    shape.warnings = warnings;
    Ok((shape, report.figures))
}

/// Per layer, from the tensor inventory: whether it holds `blk.N.ssm_in.weight` and
/// `blk.N.attn_qkv.weight` (one pass over the tensors).
fn projection_layers(artifact: &Artifact, layers: u32) -> (Vec<bool>, Vec<bool>) {
    let (mut ssm_in, mut qkv) = (vec![false; layers as usize], vec![false; layers as usize]);
    for t in artifact.tensors() {
        let Some((n, name)) = t
            .name()
            .strip_prefix("blk.")
            .and_then(|r| r.split_once('.'))
        else {
            continue;
        };
        let Ok(i) = n.parse::<usize>() else {
            continue;
        };
        let which = match name {
            "ssm_in.weight" => &mut ssm_in,
            "attn_qkv.weight" => &mut qkv,
            _ => continue,
        };
        if let Some(x) = which.get_mut(i) {
            *x = true;
        }
    }
    (ssm_in, qkv)
}

/// Qwen3-Next's layers whose linear attention projects Q, K, V and the gate in one tensor
/// (`ssm_in` without `attn_qkv`: llama.cpp takes `attn_qkv` when a layer has both); empty
/// for other architectures or when no layer does.
fn fused_qkvz_layers(arch: &str, ssm_in: &[bool], qkv: &[bool]) -> Vec<bool> {
    if arch != "qwen3next" {
        return Vec::new();
    }
    let v: Vec<bool> = ssm_in.iter().zip(qkv).map(|(f, s)| *f && !*s).collect();
    if v.iter().any(|x| *x) { v } else { Vec::new() }
}
