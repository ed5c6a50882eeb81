//! The tensor inventory of a safetensors model, one row per logical weight: an MLX packed
//! weight (`x.weight`, uint32) is shown with its `x.scales` and `x.biases` folded in, its
//! logical shape (packed width × 32 / bits) and its bits per weight derived from the bytes
//! of all three; everything else is one row per tensor. Mapped to the core's
//! `weights::Inventory` with the same roles as the GGUF inventory (SPEC §2, §4, §5).
//! Depends on `core::weights` and the GGUF inventory's `Role` (one table of roles).

use super::config::{MlxConfig, Quantization};
use super::index::Model;
use super::reader::Dtype;
use crate::core::weights::Inventory;
use crate::gguf::inventory::{MAX_LAYER_INDEX, Role};

/// One logical weight.
#[derive(Debug, Clone, PartialEq)]
pub struct MlxTensorRow {
    /// Tensor name (the `.weight` of a packed triple).
    pub name: String,
    /// The stored dtype of the main tensor.
    pub dtype: Dtype,
    /// `BF16`, `affine q4 g64`, `mxfp4`, or `packed (bits unknown)`.
    pub encoding: String,
    /// Logical dims, outermost first (a packed weight's last dim unpacked).
    pub shape: Vec<u64>,
    /// Logical elements; for a packed weight whose bits are unknown, the stored ones.
    pub elements: u64,
    /// Bytes: the tensor, plus `.scales` and `.biases` of a packed weight.
    pub bytes: u64,
    /// Of `bytes`, those of `.scales` and `.biases`.
    pub scale_bytes: u64,
    /// `8 × bytes / elements`; `None` when the logical elements are unknown.
    pub bits_per_weight: Option<f64>,
    /// Shard index.
    pub shard: usize,
    /// Start of the main tensor's data relative to its shard's data section, bytes.
    pub offset: u64,
    /// Layer N of `….layers.N.…`.
    pub layer: Option<u32>,
    /// What it is for.
    pub role: Role,
    /// Counted in P_linear.
    pub linear: bool,
    /// The quantization applied, if packed.
    pub quantization: Option<Quantization>,
}

/// The inventory of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct MlxInventory {
    /// One row per logical weight, by shard then name.
    pub rows: Vec<MlxTensorRow>,
    /// (experts, experts used) from the config.
    pub experts: Option<(u32, u32)>,
    /// The output projection is the token embedding.
    pub tied_output: bool,
    /// Notes (a packed weight whose shapes disagree with the config, …).
    pub warnings: Vec<String>,
}

/// N of the first `layers.N` (or `h.N`, `blocks.N`) segment of a name.
pub fn layer_of(name: &str) -> Option<u32> {
    let parts: Vec<&str> = name.split('.').collect();
    parts.windows(2).find_map(|w| {
        if matches!(w[0], "layers" | "h" | "blocks" | "layer") {
            w[1].parse().ok().filter(|n| *n < MAX_LAYER_INDEX)
        } else {
            None
        }
    })
}

/// The role of a tensor from its Hugging Face / MLX name.
pub fn role_of(name: &str) -> Role {
    let n = name;
    if layer_of(n).is_none() {
        if n.contains("embed_tokens") || n.contains("wte") || n.ends_with("embeddings.weight") {
            return Role::TokenEmbedding;
        }
        if n.starts_with("lm_head") || n.contains(".lm_head") {
            return Role::Output;
        }
        if n.contains("norm") {
            return Role::OutputNorm;
        }
        return Role::Other;
    }
    let last = n.rsplit('.').nth(1).unwrap_or_default();
    if last.contains("norm") || last.ends_with("layernorm") {
        Role::Norm
    } else if n.contains("shared_expert") {
        Role::SharedExpert
    } else if n.contains(".experts.") || n.contains("switch_mlp") || n.contains(".experts_") {
        Role::RoutedExpert
    } else if n.contains("linear_attn")
        || n.contains("mixer")
        || n.contains(".ssm")
        || n.contains("time_mix")
    {
        Role::Recurrent
    } else if n.contains("attn") || n.contains("attention") {
        Role::Attention
    } else if n.contains("mlp") || n.contains("feed_forward") || n.contains("ffn") {
        Role::FeedForward
    } else {
        Role::OtherLayer
    }
}

fn experts_of(cfg: Option<&MlxConfig>) -> Option<(u32, u32)> {
    let c = cfg?;
    let n = c
        .u64("num_experts")
        .or_else(|| c.u64("n_routed_experts"))
        .or_else(|| c.u64("num_local_experts"))
        .filter(|n| *n > 0)?;
    let k = c.u64("num_experts_per_tok").unwrap_or(n);
    Some((u32::try_from(n).ok()?, u32::try_from(k).ok()?))
}

impl MlxInventory {
    /// Build the inventory of `model`.
    pub fn of(model: &Model) -> MlxInventory {
        let cfg = model.config.as_ref();
        let mut by_name: std::collections::BTreeMap<&str, (usize, &super::TensorEntry)> =
            std::collections::BTreeMap::new();
        for (i, t) in model.tensors() {
            by_name.insert(t.name.as_str(), (i, t));
        }
        let has_lm_head = by_name.keys().any(|n| role_of(n) == Role::Output);
        let tied_output = cfg
            .and_then(|c| c.bool("tie_word_embeddings"))
            .unwrap_or(false)
            || !has_lm_head;
        let mut rows = Vec::new();
        let mut warnings = Vec::new();
        for (i, t) in model.tensors() {
            let name = t.name.as_str();
            // Companions of a packed weight are folded into it.
            if let Some(base) = name
                .strip_suffix(".scales")
                .or_else(|| name.strip_suffix(".biases"))
                && by_name.contains_key(format!("{base}.weight").as_str())
            {
                continue;
            }
            let role = role_of(name);
            let base = name.strip_suffix(".weight");
            let scales = base.and_then(|b| by_name.get(format!("{b}.scales").as_str()));
            let biases = base.and_then(|b| by_name.get(format!("{b}.biases").as_str()));
            let mut shape = t.shape.clone();
            let mut elements = t.elements;
            let mut bytes = t.bytes();
            let mut scale_bytes = 0;
            let mut encoding = t.dtype.name().to_string();
            let mut quantization = None;
            let mut known = true;
            if let (Some(b), Some((_, s))) = (base, scales) {
                scale_bytes = s.bytes() + biases.map_or(0, |(_, b)| b.bytes());
                bytes += scale_bytes;
                let q = cfg.and_then(|c| c.quantization_of(b));
                let last = t.shape.last().copied().unwrap_or(0);
                let groups = s.shape.last().copied().unwrap_or(0);
                match q {
                    Some(q) if q.bits > 0 && (last * 32) % q.bits == 0 => {
                        let logical = last * 32 / q.bits;
                        if q.group_size == 0 || logical != groups * q.group_size {
                            warnings.push(format!(
                                "\"{}\": {} in config.json does not match its shapes ({} packed words, {} groups)",
                                super::reader::cut(name),
                                q.label(),
                                last,
                                groups
                            ));
                        }
                        let outer: u64 =
                            t.shape[..t.shape.len().saturating_sub(1)].iter().product();
                        if let Some(last_dim) = shape.last_mut() {
                            *last_dim = logical;
                        }
                        elements = outer.saturating_mul(logical);
                        encoding = q.label();
                        quantization = Some(q);
                    }
                    _ => {
                        encoding = "packed (bits unknown: no quantization in config.json)".into();
                        known = false;
                    }
                }
            }
            let layer = layer_of(name);
            let linear = shape.len() >= 2
                && name.ends_with(".weight")
                && !matches!(role, Role::Norm | Role::OutputNorm)
                && !name.contains("conv")
                && (role != Role::TokenEmbedding || tied_output);
            rows.push(MlxTensorRow {
                name: name.to_string(),
                dtype: t.dtype,
                encoding,
                bits_per_weight: crate::core::units::bits_per_weight(bytes, elements)
                    .filter(|_| known),
                shape,
                elements,
                bytes,
                scale_bytes,
                shard: i,
                offset: t.begin,
                layer,
                role,
                linear,
                quantization,
            });
        }
        MlxInventory {
            rows,
            experts: experts_of(cfg),
            tied_output,
            warnings,
        }
    }

    /// The rows as the tensor view lists a GGUF's (`gguf::TensorRow`): dims row first (the
    /// reverse of the stored order), the encoding as the type name (`affine q4 g64`), and
    /// what a batch-one decode step reads of it. The ggml type id is that of the dtype for
    /// plain F32/F16/BF16 tensors and `u32::MAX` (no ggml type) for packed ones.
    pub fn tensor_rows(&self) -> Vec<crate::gguf::TensorRow> {
        use crate::gguf::GgmlType;
        self.rows
            .iter()
            .map(|r| {
                let ggml = match (r.quantization, r.dtype) {
                    (None, Dtype::F32) => GgmlType::F32,
                    (None, Dtype::F16) => GgmlType::F16,
                    (None, Dtype::BF16) => GgmlType::BF16,
                    _ => GgmlType(u32::MAX),
                };
                let counted = match (r.role, self.experts) {
                    (Role::RoutedExpert, Some((n, k))) => format!("{k}/{n} experts"),
                    (Role::TokenEmbedding, _) if !self.tied_output => {
                        let rows = r.shape.first().copied().unwrap_or(1);
                        format!(
                            "1 row of {}",
                            crate::core::units::group_digits(rows as u128)
                        )
                    }
                    _ => "full".into(),
                };
                crate::gguf::TensorRow {
                    name: r.name.clone(),
                    type_name: r.encoding.clone(),
                    ggml_type: ggml,
                    // as the file states it (outermost first, as `inspect DIR`, safetensors
                    // and MLX print it), not reversed into GGUF's innermost-first order
                    shape: r.shape.clone(),
                    elements: r.elements,
                    bytes: Some(r.bytes),
                    bits_per_weight: r.bits_per_weight,
                    offset: r.offset,
                    shard: r.shard,
                    layer: r.layer,
                    role: r.role,
                    linear: r.linear,
                    counted,
                }
            })
            .collect()
    }

    /// Totals per encoding, most bytes first (the tensor view's type rollup).
    pub fn encoding_rollups(&self) -> Vec<crate::gguf::TypeRollup> {
        let total = self.tensor_bytes().max(1) as f64;
        let mut by: std::collections::BTreeMap<&str, (usize, u64, u64, Dtype)> = Default::default();
        for r in &self.rows {
            let e = by.entry(r.encoding.as_str()).or_insert((0, 0, 0, r.dtype));
            e.0 += 1;
            e.1 += r.elements;
            e.2 += r.bytes;
        }
        let mut v: Vec<crate::gguf::TypeRollup> = by
            .into_iter()
            .map(
                |(name, (count, elements, bytes, _))| crate::gguf::TypeRollup {
                    type_name: name.to_string(),
                    ggml_type: crate::gguf::GgmlType(u32::MAX),
                    count,
                    elements,
                    bytes,
                    share: bytes as f64 / total,
                    bits_per_weight: crate::core::units::bits_per_weight(bytes, elements),
                },
            )
            .collect();
        v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.type_name.cmp(&b.type_name)));
        v
    }

    /// Σ bytes of every row (equals Σ tensor bytes of the shards).
    pub fn tensor_bytes(&self) -> u64 {
        self.rows.iter().map(|r| r.bytes).sum()
    }

    /// The core's inventory (SPEC §4 inventory mode, §5 P_linear).
    pub fn to_core(&self) -> Inventory {
        let mut inv = Inventory {
            tied_output: self.tied_output,
            ..Inventory::default()
        };
        let layers = self
            .rows
            .iter()
            .filter_map(|r| r.layer)
            .max()
            .map_or(0, |m| m as usize + 1);
        inv.layer_bytes = vec![0; layers];
        inv.layer_routed_expert_bytes = vec![0; layers];
        for r in &self.rows {
            inv.tensor_bytes += r.bytes;
            inv.parameters += r.elements;
            match (r.role, r.layer) {
                (Role::TokenEmbedding, _) => {
                    inv.embedding_bytes += r.bytes;
                    inv.embedding_elements += r.elements;
                    let rows = r.shape.first().copied().unwrap_or(1).max(1);
                    inv.embedding_row_bytes += r.bytes / rows;
                }
                (Role::Output | Role::OutputNorm, _) => inv.output_bytes += r.bytes,
                (_, Some(l)) => {
                    inv.layer_bytes[l as usize] += r.bytes;
                    if r.role == Role::RoutedExpert {
                        inv.layer_routed_expert_bytes[l as usize] += r.bytes;
                    }
                }
                _ => inv.other_bytes += r.bytes,
            }
            if r.linear {
                if r.role == Role::RoutedExpert {
                    inv.linear_expert_elements += r.elements;
                } else {
                    inv.linear_dense_elements += r.elements;
                    inv.linear_dense_bytes += r.bytes;
                }
            }
        }
        inv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_of_mlx_names() {
        assert_eq!(role_of("model.embed_tokens.weight"), Role::TokenEmbedding);
        assert_eq!(role_of("lm_head.weight"), Role::Output);
        assert_eq!(role_of("model.norm.weight"), Role::OutputNorm);
        assert_eq!(
            role_of("model.layers.3.self_attn.q_proj.weight"),
            Role::Attention
        );
        assert_eq!(
            role_of("model.layers.3.self_attn.q_norm.weight"),
            Role::Norm
        );
        assert_eq!(role_of("model.layers.3.input_layernorm.weight"), Role::Norm);
        assert_eq!(
            role_of("model.layers.0.mlp.switch_mlp.up_proj.weight"),
            Role::RoutedExpert
        );
        assert_eq!(
            role_of("model.layers.0.mlp.shared_expert.up_proj.weight"),
            Role::SharedExpert
        );
        assert_eq!(
            role_of("model.layers.0.mlp.shared_experts.up_proj.weight"),
            Role::SharedExpert
        );
        assert_eq!(role_of("model.layers.0.mlp.gate.weight"), Role::FeedForward);
        assert_eq!(
            role_of("model.layers.0.linear_attn.in_proj_qkvz.weight"),
            Role::Recurrent
        );
        assert_eq!(layer_of("model.layers.12.mlp.up_proj.weight"), Some(12));
        assert_eq!(layer_of("model.layers.99999999.mlp.up_proj.weight"), None);
    }
}
