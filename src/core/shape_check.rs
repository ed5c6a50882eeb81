//! The one check every model shape passes before any arithmetic, wherever it enters (model
//! profile, GGUF metadata, explorer edits): no zero head count, embedding length or head
//! size on a layer with attention, and grouped-query attention that llama.cpp can run
//! (ggml's `ggml_flash_attn_ext` and the non-flash `mul_mat` broadcast both need
//! `n_head % n_head_kv == 0`, so `n_head_kv ≤ n_head`). Typed faults; the callers name the
//! key in their own terms (TOML key and line, GGUF key and file). Pure: no I/O.

use super::model::{ArchFigures, PerLayer};
use std::fmt;

/// The figure a fault is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeFigure {
    /// Query heads (`attention.head_count`, `attention-heads`).
    HeadCount,
    /// KV heads (`attention.head_count_kv`, `kv-heads`).
    HeadCountKv,
    /// Key size per head (`attention.key_length`, `head-dim` / `key-length`).
    KeyLength,
    /// Value size per head (`attention.value_length`, `head-dim` / `value-length`).
    ValueLength,
    /// Hidden size (`embedding_length`, `hidden-size`).
    EmbeddingLength,
}

impl ShapeFigure {
    /// The GGUF metadata key without the architecture prefix.
    pub fn gguf_key(self) -> &'static str {
        match self {
            ShapeFigure::HeadCount => "attention.head_count",
            ShapeFigure::HeadCountKv => "attention.head_count_kv",
            ShapeFigure::KeyLength => "attention.key_length",
            ShapeFigure::ValueLength => "attention.value_length",
            ShapeFigure::EmbeddingLength => "embedding_length",
        }
    }
}

/// What is wrong with the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShapeProblem {
    /// It is 0 where the model needs it.
    Zero,
    /// The per-head size derived as embedding_length / head_count is 0.
    DerivedZero {
        /// embedding_length.
        embedding_length: u64,
        /// head_count.
        heads: u32,
    },
    /// More KV heads than query heads.
    KvAboveHeads {
        /// Query heads.
        heads: u32,
        /// KV heads.
        kv_heads: u32,
    },
    /// KV heads that do not divide the query heads.
    KvNotDivisor {
        /// Query heads.
        heads: u32,
        /// KV heads.
        kv_heads: u32,
    },
}

/// A model shape llama.cpp could not run, and which figure makes it so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeFault {
    /// The figure.
    pub figure: ShapeFigure,
    /// The layer, when the figure is per layer and varies.
    pub layer: Option<u32>,
    /// The problem.
    pub problem: ShapeProblem,
}

impl ShapeFault {
    /// The reason in words, naming the figure as `key` (the caller's name for it).
    pub fn message(&self, key: &str) -> String {
        let at = self
            .layer
            .map(|l| format!(" on layer {l}"))
            .unwrap_or_default();
        match self.problem {
            ShapeProblem::Zero => match self.figure {
                ShapeFigure::EmbeddingLength => {
                    format!("{key} = 0: a model needs a hidden size above 0")
                }
                ShapeFigure::HeadCount => {
                    format!("{key} = 0{at}: a layer with KV heads needs at least one query head")
                }
                _ => format!(
                    "{key} = 0{at}: an attention layer needs a head size above 0 (the cache would hold 0 bytes per token)"
                ),
            },
            ShapeProblem::DerivedZero {
                embedding_length,
                heads,
            } => format!(
                "{key} is not given and embedding_length / head_count = {embedding_length} / {heads} = 0{at}: give the head size"
            ),
            ShapeProblem::KvAboveHeads { heads, kv_heads } => format!(
                "{key} = {kv_heads}{at} is more than the {heads} query heads: llama.cpp's grouped-query attention needs n_head % n_head_kv == 0"
            ),
            ShapeProblem::KvNotDivisor { heads, kv_heads } => format!(
                "{key} = {kv_heads}{at} does not divide the {heads} query heads: llama.cpp's grouped-query attention needs n_head % n_head_kv == 0"
            ),
        }
    }
}

impl fmt::Display for ShapeFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(self.figure.gguf_key()))
    }
}

impl std::error::Error for ShapeFault {}

fn at(p: &PerLayer, il: usize) -> u32 {
    match p {
        PerLayer::Uniform(v) => *v,
        PerLayer::List(v) => v.get(il).copied().unwrap_or(0),
    }
}

/// Check the figures a model shape is built from (see the module text). Layers without KV
/// heads (recurrent or attention-free layers) need no query heads or head size.
pub fn check_figures(fig: &ArchFigures) -> Result<(), ShapeFault> {
    let fault = |figure, layer, problem| ShapeFault {
        figure,
        layer,
        problem,
    };
    if fig.embedding_length == 0 {
        return Err(fault(
            ShapeFigure::EmbeddingLength,
            None,
            ShapeProblem::Zero,
        ));
    }
    let per_layer = matches!(fig.head_count, PerLayer::List(_))
        || matches!(fig.head_count_kv, PerLayer::List(_));
    for il in 0..fig.layers as usize {
        let (h, hkv) = (at(&fig.head_count, il), at(&fig.head_count_kv, il));
        if hkv == 0 {
            continue;
        }
        let layer = per_layer.then_some(il as u32);
        if h == 0 {
            return Err(fault(ShapeFigure::HeadCount, layer, ShapeProblem::Zero));
        }
        if hkv > h {
            return Err(fault(
                ShapeFigure::HeadCountKv,
                layer,
                ShapeProblem::KvAboveHeads {
                    heads: h,
                    kv_heads: hkv,
                },
            ));
        }
        if h % hkv != 0 {
            return Err(fault(
                ShapeFigure::HeadCountKv,
                layer,
                ShapeProblem::KvNotDivisor {
                    heads: h,
                    kv_heads: hkv,
                },
            ));
        }
        for (figure, given) in [
            (ShapeFigure::KeyLength, fig.key_length),
            (ShapeFigure::ValueLength, fig.value_length),
        ] {
            match given {
                Some(0) => return Err(fault(figure, None, ShapeProblem::Zero)),
                None if fig.embedding_length / h as u64 == 0 => {
                    return Err(fault(
                        figure,
                        layer,
                        ShapeProblem::DerivedZero {
                            embedding_length: fig.embedding_length,
                            heads: h,
                        },
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}
