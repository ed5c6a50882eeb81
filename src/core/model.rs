//! The model shape the bounds use: per-layer attention, cache kinds, MLA, MoE and SSM figures,
//! built from raw architecture figures by llama.cpp's per-architecture rules (SPEC §3).
//! Pure: no I/O, no other top-level module.

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
}

/// Latent attention (MLA) as current converters write it (SPEC §3).
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
    fn at(&self, il: usize) -> u32 {
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
    /// Provenance of the architecture figures (spec for a profile, file for a GGUF).
    pub provenance: Provenance,
    /// Advertised total parameters (spec), if known.
    pub parameters_advertised: Option<Sourced<u64>>,
    /// Advertised active parameters per token (MoE, spec), if known.
    pub active_parameters_advertised: Option<Sourced<u64>>,
    /// What the rules had to guess.
    pub warnings: Vec<String>,
}

/// Sliding-window pattern period per architecture (llama.cpp `set_swa_pattern(n)`:
/// layer il slides when `il % n < n − 1`).
fn swa_period(arch: &str) -> Option<u32> {
    match arch {
        "gemma2" | "gpt-oss" => Some(2),
        "gemma3" => Some(6),
        "cohere2" | "llama4" => Some(4),
        _ => None,
    }
}

impl ModelShape {
    /// Apply llama.cpp's per-architecture rules (SPEC §3) to raw figures.
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
        let mut warnings = Vec::new();
        let arch = fig.architecture.as_str();
        let window = fig.sliding_window.filter(|w| *w > 0);
        let recurrent_from_list = fig.recurrent_layers.as_ref();
        let mut layers = Vec::with_capacity(l);
        for il in 0..l {
            let h = fig.head_count.at(il);
            let hkv = fig.head_count_kv.at(il);
            let per_head = |explicit: Option<u32>, what: &str| -> Result<u32, ShapeError> {
                match explicit {
                    Some(v) => Ok(v),
                    None if h > 0 => {
                        Ok(u32::try_from(fig.embedding_length / h as u64).map_err(|_| {
                            ShapeError(format!("{what}: embedding_length / head_count too large"))
                        })?)
                    }
                    None => Ok(0),
                }
            };
            let key_length = per_head(fig.key_length, "key_length")?;
            let value_length = per_head(fig.value_length, "value_length")?;
            let recurrent = match (fig.ssm, recurrent_from_list) {
                (Some(_), Some(list)) => list.contains(&(il as u32)),
                (Some(_), None) if arch == "falcon-h1" => true,
                (Some(_), None) => hkv == 0,
                (None, _) => false,
            };
            let attention = if hkv == 0 {
                Attention::None
            } else if let Some(pattern) = &fig.sliding_pattern {
                if pattern.get(il).copied().unwrap_or(false) {
                    match window {
                        Some(w) => Attention::Sliding { window: w },
                        None => Attention::Full,
                    }
                } else {
                    Attention::Full
                }
            } else {
                match arch {
                    "llama4" => {
                        let chunk = fig.chunk_size.filter(|c| *c > 0).unwrap_or(8192);
                        if il % 4 < 3 {
                            Attention::Chunked { chunk }
                        } else {
                            Attention::Full
                        }
                    }
                    "gemma2" => {
                        let w = window.unwrap_or(4096);
                        if il % 2 == 0 {
                            Attention::Sliding { window: w }
                        } else {
                            Attention::Full
                        }
                    }
                    "phi3" => Attention::Full,
                    _ => match (swa_period(arch), window) {
                        (Some(n), Some(w)) => {
                            if (il as u32) % n < n - 1 {
                                Attention::Sliding { window: w }
                            } else {
                                Attention::Full
                            }
                        }
                        (Some(_), None) if matches!(arch, "gpt-oss" | "cohere2") => {
                            return Err(ShapeError(format!(
                                "{arch} needs attention.sliding_window and it is missing"
                            )));
                        }
                        _ => Attention::Full,
                    },
                }
            };
            layers.push(LayerShape {
                head_count: h,
                head_count_kv: hkv,
                key_length,
                value_length,
                attention,
                recurrent,
            });
        }
        if window.is_some()
            && fig.sliding_pattern.is_none()
            && swa_period(arch).is_none()
            && !matches!(arch, "phi3" | "llama4")
        {
            warnings.push(format!(
                "the model states a sliding window but llama.cpp applies none for \"{arch}\": full cache assumed"
            ));
        }
        if arch == "phi3" && window.is_some() {
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
        if layers
            .iter()
            .all(|x| x.attention == Attention::None && !x.recurrent)
        {
            return Err(ShapeError(
                "no layer has attention heads or recurrent state: head_count_kv is 0 everywhere"
                    .into(),
            ));
        }
        if let Some(m) = fig.moe
            && (m.experts == 0 || m.experts_used == 0 || m.experts_used > m.experts)
        {
            return Err(ShapeError(format!(
                "experts used ({}) must be between 1 and the expert count ({})",
                m.experts_used, m.experts
            )));
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

    /// Recurrent state bytes per sequence (f32 whatever the cache types, SPEC §3):
    /// per recurrent layer `((d_conv − 1)(d_inner + 2 n_group d_state) + d_state d_inner) × 4`.
    pub fn recurrent_bytes_per_sequence(&self) -> u64 {
        let Some(s) = self.ssm else { return 0 };
        let per_layer = (s.d_conv.saturating_sub(1) as u128
            * (s.d_inner as u128 + 2 * s.n_group as u128 * s.d_state as u128)
            + s.d_state as u128 * s.d_inner as u128)
            * 4;
        let n = self.layers.iter().filter(|l| l.recurrent).count() as u128;
        u64::try_from(per_layer * n).unwrap_or(u64::MAX)
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
