//! Weight bytes: W (every file the runtime loads) and, from a tensor inventory, the bytes
//! touched per decode step (docs/bounds.md §2, §4 inventory mode) and the linear parameters (docs/bounds.md §5).
//! Pure: no I/O, no other top-level module.

use super::runtime::FeedForward;
use super::units::{Provenance, Sourced};

/// Where the artifact's size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactSource {
    /// An artifact of a model profile (its stated bytes).
    Preset,
    /// A local GGUF file.
    File,
    /// A GGUF read over HTTP (header only).
    Remote,
    /// A size the user gave (`--artifact-bytes`).
    SizeGiven,
}

/// What a weight file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightKind {
    /// The model artifact (one shard of it).
    Artifact(ArtifactSource),
    /// A multimodal projector.
    Mmproj,
    /// A draft model.
    Draft,
}

impl WeightKind {
    /// The kind as the reports and scenario files name it.
    pub fn name(self) -> &'static str {
        match self {
            WeightKind::Artifact(_) => "artifact",
            WeightKind::Mmproj => "mmproj",
            WeightKind::Draft => "draft",
        }
    }
    /// Parse a scenario file's `kind` ("mmproj", "draft").
    pub fn parse_extra(s: &str) -> Option<WeightKind> {
        match s {
            "mmproj" => Some(WeightKind::Mmproj),
            "draft" => Some(WeightKind::Draft),
            _ => None,
        }
    }
}

/// One file that the scenario loads (artifact shard, multimodal projector, draft model).
#[derive(Debug, Clone, PartialEq)]
pub struct WeightFile {
    /// What it is.
    pub kind: WeightKind,
    /// Its file name (an artifact profile's `file`).
    pub file: String,
    /// Exact size in bytes.
    pub bytes: Sourced<u64>,
}

impl WeightFile {
    /// The file as listed: the artifact's file name, `mmproj NAME` or `draft NAME`.
    pub fn label(&self) -> String {
        match self.kind {
            WeightKind::Artifact(_) => self.file.clone(),
            k => format!("{} {}", k.name(), self.file),
        }
    }
}

/// The tensor inventory of an artifact reduced to what the bounds need (provenance `file`).
/// Every field is an exact count taken from the GGUF tensor list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inventory {
    /// Σ tensor bytes (llama-bench's `model_size`), bytes.
    pub tensor_bytes: u64,
    /// Σ tensor elements (the counted parameters).
    pub parameters: u64,
    /// Token embedding (`token_embd.weight`) bytes.
    pub embedding_bytes: u64,
    /// Bytes of one embedding row (what a lookup reads per token).
    pub embedding_row_bytes: u64,
    /// Elements of the token embedding.
    pub embedding_elements: u64,
    /// The token embedding's ggml type id and rows (`ne[1]`, the vocabulary), when a GGUF gave
    /// them: whether the CPU repacks a tied output decides if llama.cpp holds it twice.
    pub embedding_type: Option<(u32, u64)>,
    /// The output projection is tied to the token embedding (no `output.weight`).
    pub tied_output: bool,
    /// Bytes of the output layer (`output.weight`, `output_norm.*`), read fully per token.
    pub output_bytes: u64,
    /// Bytes in each repeating layer (`blk.N.*`), routed experts included in full; index = N.
    pub layer_bytes: Vec<u64>,
    /// Of `layer_bytes`, the routed expert tensors (`*_exps`) per layer.
    pub layer_routed_expert_bytes: Vec<u64>,
    /// Bytes of tensors outside layers, embedding and output (counted fully, host-placed).
    pub other_bytes: u64,
    /// Elements of 2-D/3-D weight matrices used per token, routed experts excluded
    /// (the embedding excluded unless tied; the output projection included).
    pub linear_dense_elements: u64,
    /// Bytes of those dense linear matrices.
    pub linear_dense_bytes: u64,
    /// Elements of routed expert matrices (all experts).
    pub linear_expert_elements: u64,
    /// FFN widths read from the tensor shapes (`ffn_up`/`ffn_gate`, `*_exps`, `*_shexp`).
    pub feed_forward: FeedForward,
    /// Every tensor's name and data bytes, in file order (what `core::plan` places tensor by
    /// tensor); empty when the artifact's reader gives no names.
    pub tensors: TensorList,
}

/// Tensor names and data bytes in file order, stored compactly: one string holding every name
/// and 12 bytes per tensor (a header can list hundreds of thousands of tensors, and
/// a `String` per name would take several times the header's own bytes). Shared, not copied,
/// when an inventory is cloned (the opened file and the scenario hold the same list).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TensorList {
    inner: std::sync::Arc<TensorListData>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct TensorListData {
    /// The names, one after another.
    names: String,
    /// Per tensor: the end of its name in `names` (bytes).
    ends: Vec<u32>,
    /// Per tensor: its data bytes.
    bytes: Vec<u64>,
    /// Per tensor: its type and rows when a matrix multiplication reads it, packed in 16 bits
    /// ([`MatmulWeight::pack`]: a header can list hundreds of thousands of tensors).
    matmul: Vec<u16>,
    /// The names would pass 4 GiB: nothing is kept (the placement then estimates per layer).
    too_large: bool,
}

impl TensorList {
    /// An empty list with room for `n` tensors whose names take `name_bytes`.
    pub fn with_capacity(n: usize, name_bytes: usize) -> TensorList {
        TensorList {
            inner: std::sync::Arc::new(if u32::try_from(name_bytes).is_ok() {
                TensorListData {
                    names: String::with_capacity(name_bytes),
                    ends: Vec::with_capacity(n),
                    bytes: Vec::with_capacity(n),
                    matmul: Vec::with_capacity(n),
                    too_large: false,
                }
            } else {
                TensorListData {
                    too_large: true,
                    ..TensorListData::default()
                }
            }),
        }
    }
    /// Append one tensor (once the names would pass 4 GiB the list empties and stays empty).
    pub fn push(&mut self, name: &str, bytes: u64) {
        self.push_weight(name, bytes, None);
    }
    /// Append one tensor with its type and rows when a matrix multiplication reads it.
    pub fn push_weight(&mut self, name: &str, bytes: u64, matmul: Option<MatmulWeight>) {
        let d = std::sync::Arc::make_mut(&mut self.inner);
        if d.too_large {
            return;
        }
        let Ok(end) = u32::try_from(d.names.len() + name.len()) else {
            *d = TensorListData {
                too_large: true,
                ..TensorListData::default()
            };
            return;
        };
        d.names.push_str(name);
        d.ends.push(end);
        d.bytes.push(bytes);
        d.matmul.push(matmul.map_or(0, MatmulWeight::pack));
    }
    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.inner.ends.len()
    }
    /// No tensor listed.
    pub fn is_empty(&self) -> bool {
        self.inner.ends.is_empty()
    }
    /// (name, data bytes) in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        let mut start = 0usize;
        let d = &*self.inner;
        d.ends.iter().zip(&d.bytes).map(move |(&end, &bytes)| {
            let end = end as usize;
            let name = &d.names[start..end];
            start = end;
            (name, bytes)
        })
    }
    /// (name, data bytes, its type and rows when a matrix multiplication reads it) in file
    /// order.
    pub fn iter_weights(&self) -> impl Iterator<Item = (&str, u64, Option<MatmulWeight>)> + '_ {
        self.iter()
            .zip(&self.inner.matmul)
            .map(|((name, bytes), m)| (name, bytes, MatmulWeight::unpack(*m)))
    }
}

/// A weight matrix a matrix multiplication reads as a 2-D matrix (`MUL_MAT`) or as routed
/// experts (`MUL_MAT_ID`): what decides whether llama.cpp's CPU backend repacks it
/// (`CPU_REPACK`): its type, and whether its rows divide into the repacked blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulWeight {
    /// The ggml type id.
    pub ggml_type: u32,
    /// `ne[1]`, the rows of one matrix, modulo 64 (the repacked blocks take 4, 8 or 16 rows).
    pub rows: u64,
}

impl MatmulWeight {
    /// A weight of this type with `rows` rows (kept modulo 64).
    pub fn new(ggml_type: u32, rows: u64) -> MatmulWeight {
        MatmulWeight {
            ggml_type,
            rows: rows % 64,
        }
    }
    /// 1 bit present, 9 bits of type (ggml's ids are below 512), 6 bits of rows modulo 64;
    /// 0 when the type id does not fit (no such type repacks).
    fn pack(self) -> u16 {
        match u16::try_from(self.ggml_type) {
            Ok(ty) if ty < 512 => 0x8000 | (ty << 6) | (self.rows % 64) as u16,
            _ => 0,
        }
    }
    fn unpack(p: u16) -> Option<MatmulWeight> {
        (p & 0x8000 != 0).then(|| MatmulWeight {
            ggml_type: u32::from((p >> 6) & 0x1ff),
            rows: u64::from(p & 0x3f),
        })
    }
}

impl Inventory {
    /// Routed expert bytes over all layers.
    pub fn routed_expert_bytes(&self) -> u64 {
        self.layer_routed_expert_bytes.iter().sum()
    }
}

/// How many distinct routed experts B sequences touch per MoE layer per step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExpertCount {
    /// The expected distinct experts `n × (1 − (1 − k/n)^B)` (docs/bounds.md §4).
    Expected,
    /// The fewest possible: k (all sequences pick the same experts).
    Minimum,
}

/// Fraction of routed expert bytes read per step for B sequences.
pub fn expert_fraction(experts: u32, experts_used: u32, sequences: u64, mode: ExpertCount) -> f64 {
    if experts == 0 {
        return 1.0;
    }
    let n = experts as f64;
    let k = (experts_used as f64).min(n);
    match mode {
        ExpertCount::Minimum => k / n,
        ExpertCount::Expected => {
            let b = sequences.max(1) as f64;
            let distinct = n * (1.0 - (1.0 - k / n).powf(b));
            distinct / n
        }
    }
}

/// Bytes of the weights read from memory per decode step in inventory mode (docs/bounds.md §4):
/// one embedding row per sequence unless tied, routed experts scaled by the fraction touched,
/// everything else in full. Rounded to whole bytes after scaling.
pub fn inventory_read_bytes(
    inv: &Inventory,
    experts: Option<(u32, u32)>,
    sequences: u64,
    mode: ExpertCount,
) -> u64 {
    let routed = inv.routed_expert_bytes();
    let dense_layers: u64 = inv.layer_bytes.iter().sum::<u64>().saturating_sub(routed);
    let embedding = if inv.tied_output {
        // The tied matrix is the output projection: read in full.
        inv.embedding_bytes
    } else {
        inv.embedding_row_bytes
            .saturating_mul(sequences.max(1))
            .min(inv.embedding_bytes)
    };
    let frac = match experts {
        Some((n, k)) => expert_fraction(n, k, sequences, mode),
        None => 1.0,
    };
    let routed_read = (routed as f64 * frac).round() as u64;
    dense_layers
        .saturating_add(inv.output_bytes)
        .saturating_add(inv.other_bytes)
        .saturating_add(embedding)
        .saturating_add(routed_read)
}

/// Linear parameters used per token P_linear (docs/bounds.md §5): dense matrices plus routed experts
/// scaled by used/total.
pub fn inventory_linear_parameters(inv: &Inventory, experts: Option<(u32, u32)>) -> f64 {
    let frac = match experts {
        Some((n, k)) if n > 0 => k as f64 / n as f64,
        _ => 1.0,
    };
    inv.linear_dense_elements as f64 + inv.linear_expert_elements as f64 * frac
}

/// Total W over files, and the weakest provenance among them.
pub fn total_bytes(files: &[WeightFile]) -> (u64, Provenance) {
    let sum = files
        .iter()
        .fold(0u64, |acc, f| acc.saturating_add(f.bytes.value));
    let prov =
        Provenance::weakest(files.iter().map(|f| f.bytes.provenance)).unwrap_or(Provenance::User);
    (sum, prov)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_weights_pack_into_the_tensor_list() {
        let mut l = TensorList::with_capacity(3, 64);
        l.push_weight("blk.0.attn_q.weight", 10, Some(MatmulWeight::new(2, 4096)));
        l.push("blk.0.attn_norm.weight", 4);
        l.push_weight(
            "blk.0.ffn_up_exps.weight",
            30,
            Some(MatmulWeight::new(39, 2884)),
        );
        // a type id beyond ggml's range is kept as no weight the CPU repacks
        l.push_weight("odd.weight", 1, Some(MatmulWeight::new(70_000, 8)));
        let got: Vec<_> = l.iter_weights().map(|(_, _, m)| m).collect();
        assert_eq!(
            got,
            vec![
                Some(MatmulWeight::new(2, 0)),
                None,
                Some(MatmulWeight::new(39, 2884 % 64)),
                None
            ]
        );
        assert_eq!(got[2].unwrap().rows % 4, 0);
        assert_ne!(got[2].unwrap().rows % 8, 0);
    }

    fn inv() -> Inventory {
        Inventory {
            tensor_bytes: 1_000,
            parameters: 2_000,
            embedding_bytes: 100,
            embedding_row_bytes: 1,
            embedding_elements: 200,
            embedding_type: None,
            tied_output: false,
            output_bytes: 100,
            layer_bytes: vec![400, 400],
            layer_routed_expert_bytes: vec![320, 320],
            other_bytes: 0,
            linear_dense_elements: 500,
            linear_dense_bytes: 250,
            linear_expert_elements: 1000,
            feed_forward: Default::default(),
            tensors: Default::default(),
        }
    }

    #[test]
    fn embedding_is_one_row_unless_tied() {
        let mut i = inv();
        i.layer_routed_expert_bytes = vec![0, 0];
        assert_eq!(
            inventory_read_bytes(&i, None, 1, ExpertCount::Expected),
            800 + 100 + 1
        );
        i.tied_output = true;
        i.output_bytes = 0;
        assert_eq!(
            inventory_read_bytes(&i, None, 1, ExpertCount::Expected),
            800 + 100
        );
    }

    #[test]
    fn experts_scale() {
        // 8 of 64 experts: 640 routed bytes × 1/8 = 80, dense 160, output 100, embd row 1.
        let r = inventory_read_bytes(&inv(), Some((64, 8)), 1, ExpertCount::Expected);
        assert_eq!(r, 160 + 80 + 100 + 1);
        let many = inventory_read_bytes(&inv(), Some((64, 8)), 64, ExpertCount::Expected);
        let min = inventory_read_bytes(&inv(), Some((64, 8)), 64, ExpertCount::Minimum);
        assert!(many > r);
        assert_eq!(min, 160 + 80 + 100 + 64);
    }

    #[test]
    fn expected_distinct_experts() {
        let f = expert_fraction(128, 8, 1, ExpertCount::Expected);
        assert!((f - 8.0 / 128.0).abs() < 1e-12);
        let f4 = expert_fraction(128, 8, 4, ExpertCount::Expected);
        let want = 1.0 - (1.0f64 - 8.0 / 128.0).powi(4);
        assert!((f4 - want).abs() < 1e-12);
    }
}
