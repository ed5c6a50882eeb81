//! The tensor inventory of an artifact: one row per tensor (type, shape, bytes, bits per
//! weight, layer, role, what a decode step reads of it), rollups by type and by layer, and
//! the mapping to the core's `weights::Inventory` (SPEC §2 density, §4 inventory mode, §5
//! P_linear).
//! Depends on `core::weights` for the output type only.

use super::split::Artifact;
use super::types::{GgmlType, TensorInfo};
use crate::core::units::group_digits;
use crate::core::weights::{Inventory, MatmulWeight};
use std::collections::BTreeMap;
use std::fmt;

/// What a tensor is for, from llama.cpp's tensor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// `token_embd.weight`: a row lookup per token unless tied to the output.
    TokenEmbedding,
    /// `output.*`: the output projection (LM head).
    Output,
    /// `output_norm.*`.
    OutputNorm,
    /// `blk.N.attn_*` (and `blk.N.*_norm` tensors go to `Norm`).
    Attention,
    /// `blk.N.ffn_*` dense feed-forward and router tensors.
    FeedForward,
    /// `blk.N.ffn_*_exps.*`: routed experts, a fraction read per token.
    RoutedExpert,
    /// `blk.N.ffn_*_shexp.*`: shared experts, always read.
    SharedExpert,
    /// `blk.N.*norm*`.
    Norm,
    /// `blk.N.ssm_*` and other recurrent-state tensors.
    Recurrent,
    /// Any other tensor inside a layer.
    OtherLayer,
    /// A tensor outside the layers, embedding and output (`rope_freqs`, `position_embd`).
    Other,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::TokenEmbedding => "token embedding",
            Role::Output => "output",
            Role::OutputNorm => "output norm",
            Role::Attention => "attention",
            Role::FeedForward => "feed-forward",
            Role::RoutedExpert => "routed experts",
            Role::SharedExpert => "shared experts",
            Role::Norm => "norm",
            Role::Recurrent => "recurrent",
            Role::OtherLayer => "other (layer)",
            Role::Other => "other",
        })
    }
}

/// One tensor as the inventory shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorRow {
    /// Tensor name.
    pub name: String,
    /// llama.cpp type name (`Q4_K`) or `unknown(ID)`.
    pub type_name: String,
    /// ggml type id.
    pub ggml_type: GgmlType,
    /// Dims, row first.
    pub shape: Vec<u64>,
    /// Elements (product of dims).
    pub elements: u64,
    /// Bytes; `None` for an unknown type.
    pub bytes: Option<u64>,
    /// `8 × bytes / elements`.
    pub bits_per_weight: Option<f64>,
    /// Data offset relative to its shard's data start, bytes.
    pub offset: u64,
    /// Shard index (0 for a single file).
    pub shard: usize,
    /// Layer N of `blk.N.*`.
    pub layer: Option<u32>,
    /// What it is for.
    pub role: Role,
    /// Counted in P_linear (SPEC §5): a weight matrix multiplied per token.
    pub linear: bool,
    /// What a batch-one decode step reads of it: "full", "1 row of 262,144", "8/128 experts".
    pub counted: String,
}

/// Totals for one tensor type.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeRollup {
    /// Type name.
    pub type_name: String,
    /// Type id.
    pub ggml_type: GgmlType,
    /// Tensors of this type.
    pub count: usize,
    /// Σ elements.
    pub elements: u64,
    /// Σ bytes (0 for an unknown type).
    pub bytes: u64,
    /// Share of all tensor bytes, 0–1.
    pub share: f64,
    /// `8 × bytes / elements`.
    pub bits_per_weight: Option<f64>,
}

/// Totals for one layer (or for the tensors outside layers).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerRollup {
    /// Layer N; `None` for tensors outside `blk.*`.
    pub layer: Option<u32>,
    /// Tensors.
    pub count: usize,
    /// Σ elements.
    pub elements: u64,
    /// Σ bytes.
    pub bytes: u64,
    /// Share of all tensor bytes, 0–1.
    pub share: f64,
}

/// The tensor inventory of an artifact (all shards).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInventory {
    /// One row per tensor, in file order (shard by shard).
    pub rows: Vec<TensorRow>,
    /// Per type, most bytes first.
    pub by_type: Vec<TypeRollup>,
    /// Per layer in order, then the tensors outside layers.
    pub by_layer: Vec<LayerRollup>,
    /// Σ elements: the counted parameters.
    pub parameters: u64,
    /// Σ bytes of tensors of known type (llama-bench's `model_size`).
    pub tensor_bytes: u64,
    /// Tensors whose type is unknown (their bytes are left out of every total).
    pub unknown_size_tensors: usize,
    /// No `output.weight`: the output projection is the token embedding.
    pub tied_output: bool,
    /// (experts, experts used) from `<arch>.expert_count` / `expert_used_count`.
    pub experts: Option<(u32, u32)>,
    /// The core's inventory, counted from the tensors when this was built (so that an
    /// inventory built without rows still has it).
    core: Inventory,
}

/// Layer indices at or above this are not taken as layers (a hostile name such as
/// `blk.4000000000.x` must not size a per-layer table); such tensors count as "other".
pub const MAX_LAYER_INDEX: u32 = 65_535;

/// N of a `blk.N.…` name (N below `MAX_LAYER_INDEX`).
pub fn layer_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("blk.")?;
    let (n, _) = rest.split_once('.')?;
    n.parse().ok().filter(|n| *n < MAX_LAYER_INDEX)
}

/// The role of a tensor from its name.
pub fn role_of(name: &str) -> Role {
    if name == "token_embd.weight" {
        return Role::TokenEmbedding;
    }
    if name.starts_with("output_norm.") {
        return Role::OutputNorm;
    }
    if name.starts_with("output.") {
        return Role::Output;
    }
    let Some(rest) = layer_of(name).and_then(|_| name.splitn(3, '.').nth(2)) else {
        return Role::Other;
    };
    let base = rest.split('.').next().unwrap_or(rest);
    if base.contains("_exps") {
        Role::RoutedExpert
    } else if base.contains("_shexp") {
        Role::SharedExpert
    } else if base.contains("norm") {
        Role::Norm
    } else if base.starts_with("attn") {
        Role::Attention
    } else if base.starts_with("ffn") {
        Role::FeedForward
    } else if base.starts_with("ssm")
        || base.starts_with("time_mix")
        || base.starts_with("shortconv")
    {
        Role::Recurrent
    } else {
        Role::OtherLayer
    }
}

/// A weight matrix multiplied per token (SPEC §5): `*.weight` with 2 or more dims, not a
/// norm, not a lookup table (embeddings), not a convolution or SSM parameter. The token
/// embedding is decided by the caller (linear only when tied).
fn is_matrix(t: &TensorInfo, role: Role) -> bool {
    if t.dims().len() < 2 || !t.name().ends_with(".weight") {
        return false;
    }
    if matches!(role, Role::Norm | Role::OutputNorm | Role::TokenEmbedding) {
        return false;
    }
    let lookups_and_params = [
        "embd",
        "token_types",
        "rope_freqs",
        "conv1d",
        "ssm_a",
        "ssm_d.",
        "norm",
    ];
    !lookups_and_params.iter().any(|p| t.name().contains(p))
}

/// Σ that stops at `u64::MAX` (a hostile header can state counts whose sum overflows).
pub fn saturating_sum(values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(0, u64::saturating_add)
}

fn add(total: &mut u64, v: u64) {
    *total = total.saturating_add(v);
}

fn bits(bytes: Option<u64>, elements: u64) -> Option<f64> {
    crate::core::units::bits_per_weight(bytes?, elements)
}

/// What every row of an artifact is read against: whether the output is tied to the token
/// embedding and the expert counts. Lets a caller turn tensors into rows one at a time
/// (`inspect` streams a million tensors without holding a million rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowContext {
    /// No `output.weight`: the output projection is the token embedding.
    pub tied_output: bool,
    /// (experts, experts used) from `<arch>.expert_count` / `expert_used_count`.
    pub experts: Option<(u32, u32)>,
}

impl RowContext {
    /// The context of `artifact`.
    pub fn of(artifact: &Artifact) -> RowContext {
        let m = artifact.metadata();
        let arch = m.architecture().unwrap_or_default();
        let expert_count = m
            .get_u64(&format!("{arch}.expert_count"))
            .ok()
            .flatten()
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v > 0);
        let experts_used = m
            .get_u64(&format!("{arch}.expert_used_count"))
            .ok()
            .flatten()
            .and_then(|v| u32::try_from(v).ok());
        RowContext {
            tied_output: artifact.tensor("output.weight").is_none(),
            experts: expert_count.map(|n| (n, experts_used.unwrap_or(n))),
        }
    }

    /// Counted in P_linear (SPEC §5).
    fn is_linear(&self, t: &TensorInfo, role: Role) -> bool {
        match role {
            Role::TokenEmbedding => self.tied_output && t.dims().len() >= 2,
            _ => is_matrix(t, role),
        }
    }

    /// The row of one tensor.
    pub fn row(&self, t: &TensorInfo) -> TensorRow {
        let role = role_of(t.name());
        let linear = self.is_linear(t, role);
        let counted = match role {
            Role::TokenEmbedding if self.tied_output => "full (tied output)".to_string(),
            Role::TokenEmbedding => {
                format!("1 row of {}", group_digits(t.rows() as u128))
            }
            Role::RoutedExpert => match self.experts {
                Some((n, k)) => format!("{k}/{n} experts"),
                None => "all experts (expert counts absent)".to_string(),
            },
            _ => "full".to_string(),
        };
        TensorRow {
            name: t.name().to_string(),
            type_name: t.ggml_type.name(),
            ggml_type: t.ggml_type,
            shape: t.dims().to_vec(),
            elements: t.elements,
            bytes: t.bytes,
            bits_per_weight: bits(t.bytes, t.elements),
            offset: t.offset,
            shard: t.shard,
            layer: layer_of(t.name()),
            role,
            linear,
            counted,
        }
    }
}

/// Totals of a tensor list by type and by layer, computed in one pass without keeping rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollups {
    /// Per type, most bytes first.
    pub by_type: Vec<TypeRollup>,
    /// Per layer in order, then the tensors outside layers.
    pub by_layer: Vec<LayerRollup>,
    /// Σ elements: the counted parameters.
    pub parameters: u64,
    /// Σ bytes of tensors of known type.
    pub tensor_bytes: u64,
    /// Tensors whose type is unknown.
    pub unknown_size_tensors: usize,
}

impl Rollups {
    /// The rollups of `tensors`.
    pub fn of<'a>(tensors: impl IntoIterator<Item = &'a TensorInfo>) -> Rollups {
        Self::from_parts(
            tensors
                .into_iter()
                .map(|t| (t.ggml_type, layer_of(t.name()), t.elements, t.bytes)),
        )
    }

    /// The rollups of (type, layer, elements, bytes) items.
    fn from_parts(
        items: impl Iterator<Item = (GgmlType, Option<u32>, u64, Option<u64>)>,
    ) -> Rollups {
        let mut types: BTreeMap<GgmlType, (usize, u64, u64)> = BTreeMap::new();
        let mut layers: BTreeMap<Option<u32>, (usize, u64, u64)> = BTreeMap::new();
        let (mut tensor_bytes, mut parameters, mut unknown) = (0u64, 0u64, 0usize);
        for (ggml_type, layer, elements, bytes) in items {
            add(&mut parameters, elements);
            match bytes {
                Some(b) => add(&mut tensor_bytes, b),
                None => unknown += 1,
            }
            let e = types.entry(ggml_type).or_default();
            e.0 += 1;
            e.1 = e.1.saturating_add(elements);
            e.2 = e.2.saturating_add(bytes.unwrap_or(0));
            let l = layers.entry(layer).or_default();
            l.0 += 1;
            l.1 = l.1.saturating_add(elements);
            l.2 = l.2.saturating_add(bytes.unwrap_or(0));
        }
        let share = |b: u64| {
            if tensor_bytes == 0 {
                0.0
            } else {
                b as f64 / tensor_bytes as f64
            }
        };
        let mut by_type: Vec<TypeRollup> = types
            .into_iter()
            .map(|(t, (count, elements, bytes))| TypeRollup {
                type_name: t.name(),
                ggml_type: t,
                count,
                elements,
                bytes,
                share: share(bytes),
                bits_per_weight: bits(t.info().map(|_| bytes), elements),
            })
            .collect();
        by_type.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.ggml_type.cmp(&b.ggml_type)));
        let by_layer: Vec<LayerRollup> = layers
            .iter()
            .filter(|(l, _)| l.is_some())
            .chain(layers.iter().filter(|(l, _)| l.is_none()))
            .map(|(layer, (count, elements, bytes))| LayerRollup {
                layer: *layer,
                count: *count,
                elements: *elements,
                bytes: *bytes,
                share: share(*bytes),
            })
            .collect();
        Rollups {
            by_type,
            by_layer,
            parameters,
            tensor_bytes,
            unknown_size_tensors: unknown,
        }
    }
}

impl TensorInventory {
    /// Build the inventory of every tensor of `artifact`, one row per tensor.
    pub fn from_artifact(artifact: &Artifact) -> TensorInventory {
        let ctx = RowContext::of(artifact);
        let mut rows = Vec::with_capacity(artifact.tensor_count());
        rows.extend(artifact.tensors().map(|t| ctx.row(t)));
        Self::assemble(artifact, ctx, rows)
    }

    /// The inventory without its rows (`rows` is empty): the rollups, totals and core
    /// inventory are the same as `from_artifact`'s, counted in one pass over the tensors.
    /// For callers that never list the tensors (`report --gguf`, `models`): a row is several
    /// allocations (name, type name, shape, what is read), about 300 bytes a tensor.
    pub fn summary(artifact: &Artifact) -> TensorInventory {
        Self::assemble(artifact, RowContext::of(artifact), Vec::new())
    }

    fn assemble(artifact: &Artifact, ctx: RowContext, rows: Vec<TensorRow>) -> TensorInventory {
        let r = Rollups::of(artifact.tensors());
        let mut core = Inventory {
            tensor_bytes: r.tensor_bytes,
            parameters: r.parameters,
            tied_output: ctx.tied_output,
            tensors: crate::core::weights::TensorList::with_capacity(
                artifact.tensor_count(),
                artifact.tensors().map(|t| t.name().len()).sum(),
            ),
            ..Inventory::default()
        };
        for t in artifact.tensors() {
            add_to_core(&mut core, &ctx, t);
        }
        TensorInventory {
            unknown_size_tensors: r.unknown_size_tensors,
            rows,
            by_type: r.by_type,
            by_layer: r.by_layer,
            parameters: r.parameters,
            tensor_bytes: r.tensor_bytes,
            tied_output: ctx.tied_output,
            experts: ctx.experts,
            core,
        }
    }

    /// The row of the tensor named `name` (`None` for an inventory built without rows).
    pub fn row(&self, name: &str) -> Option<&TensorRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The core's inventory (SPEC §2, §4, §5), every field an exact count from the tensor list.
    pub fn to_core_inventory(&self) -> Inventory {
        self.core.clone()
    }
}

/// The part of a `blk.N.` name after the layer number, when N is written as `layer` is
/// (`blk.7.ffn_up.weight` → `ffn_up.weight`; `blk.07.…` has no stem, as before).
fn layer_stem(name: &str, layer: u32) -> &str {
    let Some(rest) = name.strip_prefix("blk.") else {
        return "";
    };
    let Some((n, stem)) = rest.split_once('.') else {
        return "";
    };
    let canonical = n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    if canonical && n.parse::<u32>().ok() == Some(layer) {
        stem
    } else {
        ""
    }
}

/// Count one tensor into the core's inventory (the vectors grow to the highest layer seen).
fn add_to_core(inv: &mut Inventory, ctx: &RowContext, t: &TensorInfo) {
    let name = t.name();
    let role = role_of(name);
    let layer = layer_of(name);
    let linear = ctx.is_linear(t, role);
    let bytes = t.bytes.unwrap_or(0);
    // a matrix multiplication's weight (the output projection of a tied model reads the
    // embedding, which `core::placement` duplicates with the embedding's type)
    // (MUL_MAT's repack takes 2-D weights, MUL_MAT_ID's the 3-D routed experts; a 3-D matrix
    // of heads, as MLA's k_b / v_b, is not repacked)
    let dims = t.dims().len();
    let repackable = dims == 2 || (dims == 3 && role == Role::RoutedExpert);
    let matmul = (is_matrix(t, role) && repackable)
        .then(|| MatmulWeight::new(t.ggml_type.0, t.dims().get(1).copied().unwrap_or(1)));
    inv.tensors.push_weight(name, bytes, matmul);
    if let Some(l) = layer {
        let need = l as usize + 1;
        if inv.layer_bytes.len() < need {
            inv.layer_bytes.resize(need, 0);
            inv.layer_routed_expert_bytes.resize(need, 0);
        }
    }
    match (role, layer) {
        (Role::TokenEmbedding, _) => {
            add(&mut inv.embedding_bytes, bytes);
            add(&mut inv.embedding_elements, t.elements);
            inv.embedding_type = Some((t.ggml_type.0, t.rows()));
            if let Some(row_bytes) = bytes.checked_div(t.rows()) {
                inv.embedding_row_bytes = row_bytes;
            }
        }
        (Role::Output | Role::OutputNorm, _) => add(&mut inv.output_bytes, bytes),
        (_, Some(l)) => {
            add(&mut inv.layer_bytes[l as usize], bytes);
            if role == Role::RoutedExpert {
                add(&mut inv.layer_routed_expert_bytes[l as usize], bytes);
            }
        }
        (_, None) => add(&mut inv.other_bytes, bytes),
    }
    // FFN widths from the shapes ([n_embd, n_ff] for up/gate, [n_ff, n_embd] for down).
    if let Some(l) = layer {
        let stem = layer_stem(name, l);
        let width = match stem {
            "ffn_up.weight"
            | "ffn_gate.weight"
            | "ffn_up_exps.weight"
            | "ffn_gate_exps.weight"
            | "ffn_up_shexp.weight"
            | "ffn_gate_shexp.weight" => t.dims().get(1).copied(),
            _ => None,
        };
        if let Some(w) = width {
            let slot = if stem.contains("_exps") {
                &mut inv.feed_forward.expert_length
            } else if stem.contains("_shexp") {
                &mut inv.feed_forward.shared_expert_length
            } else {
                &mut inv.feed_forward.length
            };
            *slot = (*slot).max(w);
        }
    }
    if linear {
        if role == Role::RoutedExpert {
            add(&mut inv.linear_expert_elements, t.elements);
        } else {
            add(&mut inv.linear_dense_elements, t.elements);
            add(&mut inv.linear_dense_bytes, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_from_names() {
        assert_eq!(role_of("token_embd.weight"), Role::TokenEmbedding);
        assert_eq!(role_of("output.weight"), Role::Output);
        assert_eq!(role_of("output_norm.weight"), Role::OutputNorm);
        assert_eq!(role_of("blk.3.attn_q.weight"), Role::Attention);
        assert_eq!(role_of("blk.3.attn_norm.weight"), Role::Norm);
        assert_eq!(role_of("blk.3.attn_k_norm.weight"), Role::Norm);
        assert_eq!(role_of("blk.3.ffn_gate_exps.weight"), Role::RoutedExpert);
        assert_eq!(role_of("blk.3.ffn_gate_up_exps.weight"), Role::RoutedExpert);
        assert_eq!(role_of("blk.3.ffn_down_shexp.weight"), Role::SharedExpert);
        assert_eq!(role_of("blk.3.ffn_gate_inp.weight"), Role::FeedForward);
        assert_eq!(role_of("blk.3.ssm_in.weight"), Role::Recurrent);
        assert_eq!(role_of("rope_freqs.weight"), Role::Other);
        assert_eq!(layer_of("blk.17.attn_v.weight"), Some(17));
        assert_eq!(layer_of("blkx.1.a"), None);
        assert_eq!(layer_of("output.weight"), None);
        assert_eq!(layer_of("blk.4000000000.attn_q.weight"), None);
        assert_eq!(role_of("blk.4000000000.attn_q.weight"), Role::Other);
    }
}
