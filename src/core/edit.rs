//! One change to a scenario, whoever asks for it: a CLI flag becomes a sequence of `Edit`s,
//! an explorer key or typed value becomes one, and [`apply`] is the only function that
//! changes a scenario's settings for either. Pure: no I/O, no other top-level module.
//!
//! One behaviour for both front ends: a stated bandwidth set by the user replaces the tier's
//! figure *and* drops its measured figure (the ceilings then follow the figure the user
//! gave; a measurement of the old figure no longer describes it). The measured figure is
//! its own edit ([`Edit::Measured`]).

use super::cache::CacheType;
use super::model::{ArchFigures, Mla, ModelShape, Moe, PerLayer};
use super::scenario::Scenario;
use super::units::{self, BytesPerSec, FlopPerSec, Provenance, Sourced};
use super::weights::WeightFile;
use std::fmt;

/// One change to a scenario's settings, machine or model figures.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Retained tokens per sequence N.
    Context(u64),
    /// Sequences decoded together.
    Sequences(u64),
    /// K cache type.
    CacheTypeK(CacheType),
    /// V cache type.
    CacheTypeV(CacheType),
    /// Flash attention.
    FlashAttn(bool),
    /// Physical micro-batch n_ubatch.
    Ubatch(u64),
    /// One unified KV buffer.
    KvUnified(bool),
    /// Full-size cache on sliding-window layers.
    SwaFull(bool),
    /// KV cache in host memory (`-nkvo`).
    NoKvOffload(bool),
    /// Other live allocations A, bytes.
    Overhead(u64),
    /// `-ngl n`; `None` = all layers.
    GpuLayers(Option<u32>),
    /// `--tensor-split` proportions.
    TensorSplit(Vec<f64>),
    /// Prompt rows S.
    PromptRows(u64),
    /// Compute path for the prefill ceiling.
    ComputePath(String),
    /// A file the runtime loads beside the model (projector, draft); its size is read by the
    /// caller.
    ExtraFile(WeightFile),
    /// Capacity of tier `tier`, bytes.
    Capacity {
        /// Tier index.
        tier: usize,
        /// Bytes.
        bytes: u64,
    },
    /// Stated bandwidth of tier `tier` (drops the measured figure).
    Bandwidth {
        /// Tier index.
        tier: usize,
        /// Bytes/s.
        rate: BytesPerSec,
    },
    /// Measured bandwidth of tier `tier` (`None` removes it).
    Measured {
        /// Tier index.
        tier: usize,
        /// Bytes/s.
        rate: Option<BytesPerSec>,
    },
    /// Compute rate `index` of the machine.
    ComputeRate {
        /// Index in the machine's compute list.
        index: usize,
        /// FLOP/s.
        rate: FlopPerSec,
    },
    /// Repeating layers L.
    Layers(u32),
    /// Query heads (uniform).
    Heads(u32),
    /// KV heads (uniform).
    KvHeads(u32),
    /// Key length d_k.
    KeyLength(u32),
    /// Value length d_v.
    ValueLength(u32),
    /// Sliding window in tokens (0 = none).
    Window(u64),
    /// MLA kv_lora_rank.
    KvLoraRank(u32),
    /// MLA rope dims.
    RopeDim(u32),
    /// MoE experts used of total.
    Experts {
        /// Experts used per token.
        used: u32,
        /// Routed experts.
        total: u32,
    },
    /// Advertised parameter count.
    Parameters(u64),
    /// Native context (0 = unknown).
    NativeContext(u64),
}

impl Edit {
    /// True for an edit of the model figures (the model shape is rebuilt from them).
    pub fn is_model(&self) -> bool {
        matches!(
            self,
            Edit::Layers(_)
                | Edit::Heads(_)
                | Edit::KvHeads(_)
                | Edit::KeyLength(_)
                | Edit::ValueLength(_)
                | Edit::Window(_)
                | Edit::KvLoraRank(_)
                | Edit::RopeDim(_)
                | Edit::Experts { .. }
                | Edit::Parameters(_)
                | Edit::NativeContext(_)
        )
    }
}

/// The source recorded on a figure the user set (the same for a flag and the explorer, so
/// both produce the same report).
pub const USER_SOURCE: &str = "set by the user";
/// The source recorded on other allocations A set by the user.
pub const OVERHEAD_SOURCE: &str = "other allocations A, set by the user";

/// Why an edit cannot be applied.
#[derive(Debug, Clone, PartialEq)]
pub enum EditError {
    /// A figure that must be above zero is zero.
    Zero(&'static str),
    /// The machine has no tier (or compute rate) with this index.
    NoTier(usize),
    /// A window longer than the context the model is run at.
    WindowAboveContext {
        /// The window, tokens.
        window: u64,
        /// The native (or, unknown, the scenario's) context, tokens.
        context: u64,
    },
    /// More experts used than the model has.
    ExpertsAboveTotal {
        /// Used.
        used: u32,
        /// Total.
        total: u32,
    },
    /// The model figures llama.cpp could not run (KV heads above or not dividing the heads…).
    Shape(String),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Zero(what) => write!(f, "{what} must be above 0"),
            EditError::NoTier(i) => write!(f, "the machine has no tier {i}"),
            EditError::WindowAboveContext { window, context } => write!(
                f,
                "a sliding window of {} tokens is above the context of {} tokens (every token would be inside it: type 0 for none)",
                units::group_digits(*window as u128),
                units::group_digits(*context as u128)
            ),
            EditError::ExpertsAboveTotal { used, total } => {
                write!(f, "{used} experts used of {total}: at most {total}")
            }
            EditError::Shape(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for EditError {}

fn user<T>(v: T) -> Sourced<T> {
    Sourced::new(v, Provenance::User, USER_SOURCE)
}

/// Apply one edit. Scenario settings and machine figures change in `s`; model figures change
/// in `fig` (the caller rebuilds the model shape from them) and are checked here, so a shape
/// llama.cpp could not run is refused with its reason before anything changes.
pub fn apply(s: &mut Scenario, fig: &mut ArchFigures, edit: &Edit) -> Result<(), EditError> {
    let c = &mut s.cache;
    match edit {
        Edit::Context(n) => c.context = *n,
        Edit::Sequences(n) => c.sequences = *n,
        Edit::CacheTypeK(t) => c.type_k = *t,
        Edit::CacheTypeV(t) => c.type_v = *t,
        Edit::FlashAttn(b) => c.flash_attn = *b,
        Edit::Ubatch(n) => c.ubatch = *n,
        Edit::KvUnified(b) => c.kv_unified = *b,
        Edit::SwaFull(b) => c.swa_full = *b,
        Edit::NoKvOffload(b) => s.offload.no_kv_offload = *b,
        Edit::Overhead(v) => s.other_bytes = Sourced::new(*v, Provenance::User, OVERHEAD_SOURCE),
        // -ngl above L + 1 counts as all layers (llama.cpp clamps it): kept as given.
        Edit::GpuLayers(n) => s.offload.gpu_layers = *n,
        Edit::TensorSplit(t) => s.offload.tensor_split = Some(t.clone()),
        Edit::PromptRows(n) => s.prompt_rows = *n,
        Edit::ComputePath(p) => s.compute_path = p.clone(),
        Edit::ExtraFile(w) => s.weights.push(w.clone()),
        Edit::Capacity { tier, bytes } => {
            if *bytes == 0 {
                return Err(EditError::Zero("a memory size"));
            }
            let t = s
                .machine
                .tiers
                .get_mut(*tier)
                .ok_or(EditError::NoTier(*tier))?;
            t.capacity = user(*bytes);
        }
        Edit::Bandwidth { tier, rate } => {
            let t = s
                .machine
                .tiers
                .get_mut(*tier)
                .ok_or(EditError::NoTier(*tier))?;
            t.bandwidth = user(*rate);
            t.measured_bandwidth = None;
        }
        Edit::Measured { tier, rate } => {
            let t = s
                .machine
                .tiers
                .get_mut(*tier)
                .ok_or(EditError::NoTier(*tier))?;
            t.measured_bandwidth = rate.map(user);
        }
        Edit::ComputeRate { index, rate } => {
            let cr = (s.machine.compute.get_mut(*index)).ok_or(EditError::NoTier(*index))?;
            cr.rate = user(*rate);
        }
        Edit::Parameters(v) => s.model.parameters_advertised = Some(user(*v)),
        model => {
            let mut next = fig.clone();
            edit_figures(&mut next, model, s)?;
            super::shape_check::check_figures(&next).map_err(|e| {
                EditError::Shape(e.message(&format!(
                    "{}.{}",
                    next.architecture,
                    e.figure.gguf_key()
                )))
            })?;
            *fig = next;
        }
    }
    Ok(())
}

fn edit_figures(fig: &mut ArchFigures, edit: &Edit, s: &Scenario) -> Result<(), EditError> {
    match edit {
        Edit::Layers(n) => {
            if *n == 0 {
                return Err(EditError::Zero("a model's layer count"));
            }
            let n = *n as usize;
            if let PerLayer::List(v) = &fig.head_count_kv
                && v.len() != n
            {
                fig.head_count_kv = PerLayer::Uniform(fig.head_count_kv.max());
            }
            if let PerLayer::List(v) = &fig.head_count
                && v.len() != n
            {
                fig.head_count = PerLayer::Uniform(fig.head_count.max());
            }
            if fig.sliding_pattern.as_ref().is_some_and(|p| p.len() != n) {
                fig.sliding_pattern = None;
            }
            fig.layers = n as u32;
        }
        Edit::Heads(n) => fig.head_count = PerLayer::Uniform(*n),
        Edit::KvHeads(n) => fig.head_count_kv = PerLayer::Uniform(*n),
        Edit::KeyLength(n) => fig.key_length = Some(*n),
        Edit::ValueLength(n) => fig.value_length = Some(*n),
        Edit::Window(w) => {
            let context = fig.native_context.unwrap_or(s.cache.context);
            if *w > context {
                return Err(EditError::WindowAboveContext {
                    window: *w,
                    context,
                });
            }
            fig.sliding_window = (*w > 0).then_some(*w);
        }
        Edit::KvLoraRank(v) | Edit::RopeDim(v) => {
            let mla = fig.mla.get_or_insert(Mla {
                kv_lora_rank: 512,
                rope_dim: 64,
                key_length_mla: 192,
                value_length_mla: 128,
            });
            if matches!(edit, Edit::KvLoraRank(_)) {
                mla.kv_lora_rank = *v;
            } else {
                mla.rope_dim = *v;
            }
            fig.key_length = Some(mla.kv_lora_rank + mla.rope_dim);
            fig.value_length = Some(mla.kv_lora_rank);
        }
        Edit::Experts { used, total } => {
            if *used > *total && *total > 0 {
                return Err(EditError::ExpertsAboveTotal {
                    used: *used,
                    total: *total,
                });
            }
            let shared = fig.moe.map_or(0, |m| m.shared_experts);
            fig.moe = Some(Moe {
                experts: *total,
                experts_used: *used,
                shared_experts: shared,
            });
        }
        Edit::NativeContext(v) => fig.native_context = (*v > 0).then_some(*v),
        _ => {}
    }
    Ok(())
}

/// Raw figures recovered from a model shape (for a scenario without a model profile).
pub fn figures_of(m: &ModelShape) -> ArchFigures {
    // The full-attention head sizes (sliding layers may have their own, `keys`).
    let first = m
        .layers
        .iter()
        .find(|l| !matches!(l.attention, super::model::Attention::Sliding { .. }))
        .or(m.layers.first());
    ArchFigures {
        architecture: m.architecture.clone(),
        layers: m.layer_count(),
        head_count: PerLayer::List(m.layers.iter().map(|l| l.head_count).collect()),
        head_count_kv: PerLayer::List(m.layers.iter().map(|l| l.head_count_kv).collect()),
        key_length: first.map(|l| l.key_length),
        value_length: first.map(|l| l.value_length),
        embedding_length: m.embedding_length,
        vocab_size: m.vocab_size,
        native_context: m.native_context,
        sliding_window: m.sliding_window(),
        sliding_pattern: Some(
            m.layers
                .iter()
                .map(|l| matches!(l.attention, super::model::Attention::Sliding { .. }))
                .collect(),
        ),
        chunk_size: None,
        mla: m.mla,
        moe: m.moe,
        ssm: m.ssm,
        recurrent_layers: None,
        tied_embeddings: m.tied_embeddings,
        keys: m.keys.clone(),
    }
}
