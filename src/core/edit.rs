//! One change to a scenario, whoever asks for it: a CLI flag becomes a sequence of `Edit`s,
//! an explorer key or typed value becomes one, opening a file or switching a profile becomes
//! one, and [`apply`] is the only function that changes a scenario for any of them (the
//! workspace calls it for the user's scenario; [`applied`] makes what-if copies for bench
//! rows, compare rows and GPU-layer trials). Model-figure edits rebuild the model shape here.
//! Pure: no I/O, no other top-level module.
//!
//! One behaviour for both front ends: a stated bandwidth set by the user replaces the tier's
//! figure *and* drops its measured figure (the ceilings then follow the figure the user
//! gave; a measurement of the old figure no longer describes it). The measured figure is
//! its own edit ([`Edit::Measured`]).

use super::cache::CacheType;
use super::model::{ArchFigures, Mla, ModelShape, Moe, PerLayer};
use super::placement::{GpuLayers, SplitMode};
use super::runtime::FeedForward;
use super::scenario::{Machine, Scenario};
use super::units::{self, BytesPerSec, FlopPerSec, Provenance, Sourced};
use super::weights::WeightFile;
use super::weights::{Inventory, WeightKind};
use std::fmt;

/// One change to a scenario's settings, machine or model figures.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Retained tokens per sequence N (0: `-c 0`, llama.cpp's default: the trained context,
    /// which `-fit` may reduce).
    Context(u64),
    /// The context `-fit` chose under `-c 0` (reduced from the trained one): retained tokens
    /// per sequence, still llama.cpp's choice and not the user's.
    FitContext(u64),
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
    /// `--tensor-split` proportions; `None` splits by capacity (llama.cpp's default).
    TensorSplit(Option<Vec<f64>>),
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
    /// A new model: an opened file or another model profile. Its shape, the artifact's files
    /// and tensor inventory replace the current ones; files the runtime loads beside the
    /// model (projector, draft) stay.
    Model(Box<NewModel>),
    /// Another machine profile (its figures as loaded).
    Machine(Box<Machine>),
    /// The machine's profile id (after it was saved under a new one).
    MachineId(String),
    /// The scenario's display name.
    Name(String),
    /// `-ngl N|auto|all` (the explorer's [`Edit::GpuLayers`] spells only a count or all).
    Ngl(GpuLayers),
    /// `-sm none|layer|row`.
    SplitMode(SplitMode),
    /// `-mg N`.
    MainGpu(u32),
    /// `-ot PATTERN=BUFFER_TYPE,…`: the list replaces the previous one (items in order).
    OverrideTensor(Vec<String>),
    /// `--cpu-moe`.
    CpuMoe(bool),
    /// `--n-cpu-moe N` (0: none).
    NCpuMoe(u32),
    /// `--n-cpu-ffn N` (0: none).
    NCpuFfn(u32),
    /// `-fit on|off`.
    Fit(bool),
    /// `-fitt MiB[,MiB…]`: the margin `-fit` leaves free per device (empty: 1024 MiB).
    FitTarget(Vec<u64>),
    /// `-fitc N`: the smallest context `-fit` may choose.
    FitCtx(u32),
    /// The free memory the backend of tier `tier` reports (a Mac's `sudo sysctl
    /// iogpu.wired_limit_mb=N` makes Metal report exactly N MiB): a user figure.
    DeviceFree {
        /// Tier index (an accelerator or unified tier).
        tier: usize,
        /// Bytes.
        bytes: u64,
    },
    /// `--rpc host:port,…`: the endpoints of the machine's rpc tiers, in tier order.
    Rpc(Vec<String>),
    /// The runtime the figures shown are for (the workspace refuses one that does not apply
    /// to the open artifacts).
    Runtime(super::mlx::Runtime),
    /// MLX-LM `--kv-bits` (`None`: the cache stays in the model's dtype).
    KvBits(Option<u64>),
    /// MLX-LM `--kv-group-size`.
    KvGroupSize(u64),
    /// MLX-LM `--quantized-kv-start`, tokens.
    QuantizedKvStart(u64),
    /// MLX-LM `--max-kv-size`, tokens (`None`: no rotating cache).
    MaxKvSize(Option<u64>),
}

/// `-sm`'s value.
pub fn split_mode_label(m: SplitMode) -> &'static str {
    match m {
        SplitMode::None => "none",
        SplitMode::Layer => "layer",
        SplitMode::Row => "row",
    }
}

/// Parse `-sm`'s value.
pub fn parse_split_mode(s: &str) -> Option<SplitMode> {
    match s {
        "none" => Some(SplitMode::None),
        "layer" => Some(SplitMode::Layer),
        "row" => Some(SplitMode::Row),
        _ => None,
    }
}

/// Check one `-ot` value (`PATTERN=BUFFER_TYPE[,…]`): every item has a buffer type and a
/// pattern that is a regex. The buffer type is matched against the machine's devices when the
/// placement is made (an unknown one is llama.cpp's error then).
pub fn check_override_syntax(value: &str) -> Result<(), String> {
    for item in value.split(',') {
        let Some((pattern, buft)) = item.split_once('=') else {
            return Err(format!("-ot {item}: expected PATTERN=BUFFER_TYPE"));
        };
        if pattern.is_empty() || buft.is_empty() {
            return Err(format!("-ot {item}: expected PATTERN=BUFFER_TYPE"));
        }
        super::placement::Override::new(pattern, super::placement::Target::Cpu).map_err(|e| e.0)?;
    }
    Ok(())
}

/// A valid `--rpc` endpoint: `host:port` with a port 1–65535.
pub fn valid_endpoint(e: &str) -> bool {
    e.rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0))
}

/// What [`Edit::Model`] puts in place.
#[derive(Debug, Clone, PartialEq)]
pub struct NewModel {
    /// The model shape.
    pub shape: ModelShape,
    /// The artifact's files (shards); Σ is the artifact's W.
    pub weights: Vec<WeightFile>,
    /// The tensor inventory, when a header was read.
    pub inventory: Option<Inventory>,
    /// FFN widths a model profile states (`None` keeps the current ones).
    pub feed_forward: Option<FeedForward>,
}

/// Which setting an edit changes (without its value): what the workspace records as edited
/// by the user, and what a front end's row is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Setting {
    /// [`Edit::Context`].
    Context,
    /// [`Edit::Sequences`].
    Sequences,
    /// [`Edit::CacheTypeK`].
    CacheTypeK,
    /// [`Edit::CacheTypeV`].
    CacheTypeV,
    /// [`Edit::FlashAttn`].
    FlashAttn,
    /// [`Edit::Ubatch`].
    Ubatch,
    /// [`Edit::KvUnified`].
    KvUnified,
    /// [`Edit::SwaFull`].
    SwaFull,
    /// [`Edit::NoKvOffload`].
    NoKvOffload,
    /// [`Edit::Overhead`].
    Overhead,
    /// [`Edit::GpuLayers`].
    GpuLayers,
    /// [`Edit::TensorSplit`].
    TensorSplit,
    /// [`Edit::PromptRows`].
    PromptRows,
    /// [`Edit::ComputePath`].
    ComputePath,
    /// [`Edit::ExtraFile`].
    ExtraFile,
    /// [`Edit::Capacity`] of a tier.
    Capacity(usize),
    /// [`Edit::Bandwidth`] of a tier.
    Bandwidth(usize),
    /// [`Edit::Measured`] of a tier.
    Measured(usize),
    /// [`Edit::ComputeRate`] of a compute path.
    ComputeRate(usize),
    /// [`Edit::Layers`].
    Layers,
    /// [`Edit::Heads`].
    Heads,
    /// [`Edit::KvHeads`].
    KvHeads,
    /// [`Edit::KeyLength`].
    KeyLength,
    /// [`Edit::ValueLength`].
    ValueLength,
    /// [`Edit::Window`].
    Window,
    /// [`Edit::KvLoraRank`].
    KvLoraRank,
    /// [`Edit::RopeDim`].
    RopeDim,
    /// [`Edit::Experts`].
    Experts,
    /// [`Edit::Parameters`].
    Parameters,
    /// [`Edit::NativeContext`].
    NativeContext,
    /// [`Edit::SplitMode`].
    SplitMode,
    /// [`Edit::MainGpu`].
    MainGpu,
    /// [`Edit::OverrideTensor`].
    OverrideTensor,
    /// [`Edit::CpuMoe`].
    CpuMoe,
    /// [`Edit::NCpuMoe`].
    NCpuMoe,
    /// [`Edit::NCpuFfn`].
    NCpuFfn,
    /// [`Edit::Fit`].
    Fit,
    /// [`Edit::FitTarget`].
    FitTarget,
    /// [`Edit::FitCtx`].
    FitCtx,
    /// [`Edit::DeviceFree`] of a tier.
    DeviceFree(usize),
    /// [`Edit::Rpc`].
    Rpc,
    /// [`Edit::Runtime`].
    Runtime,
    /// [`Edit::KvBits`].
    KvBits,
    /// [`Edit::KvGroupSize`].
    KvGroupSize,
    /// [`Edit::QuantizedKvStart`].
    QuantizedKvStart,
    /// [`Edit::MaxKvSize`].
    MaxKvSize,
}

impl Setting {
    /// A model figure (editing one makes the model `user`).
    pub fn is_model(self) -> bool {
        matches!(
            self,
            Setting::Layers
                | Setting::Heads
                | Setting::KvHeads
                | Setting::KeyLength
                | Setting::ValueLength
                | Setting::Window
                | Setting::KvLoraRank
                | Setting::RopeDim
                | Setting::Experts
                | Setting::Parameters
                | Setting::NativeContext
        )
    }
    /// The tier or compute-rate index of a setting that has one.
    pub fn index(self) -> Option<usize> {
        match self {
            Setting::Capacity(i)
            | Setting::Bandwidth(i)
            | Setting::Measured(i)
            | Setting::ComputeRate(i)
            | Setting::DeviceFree(i) => Some(i),
            _ => None,
        }
    }
    /// The same setting of tier (or compute rate) `i`; a setting without an index is
    /// returned as it is.
    pub fn at(self, i: usize) -> Setting {
        match self {
            Setting::Capacity(_) => Setting::Capacity(i),
            Setting::Bandwidth(_) => Setting::Bandwidth(i),
            Setting::Measured(_) => Setting::Measured(i),
            Setting::ComputeRate(_) => Setting::ComputeRate(i),
            Setting::DeviceFree(_) => Setting::DeviceFree(i),
            other => other,
        }
    }
    /// The same setting, whatever its index (a front end's row describes every tier's).
    pub fn same_kind(self, other: Setting) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
    /// A machine figure (editing one marks the machine edited).
    pub fn is_machine(self) -> bool {
        matches!(
            self,
            Setting::Capacity(_)
                | Setting::Bandwidth(_)
                | Setting::Measured(_)
                | Setting::ComputeRate(_)
                | Setting::DeviceFree(_)
                | Setting::Rpc
        )
    }
}

impl Edit {
    /// The setting this edit changes; `None` for edits that replace a whole input (a new
    /// model or machine, a name).
    pub fn setting(&self) -> Option<Setting> {
        Some(match self {
            Edit::Context(_) | Edit::FitContext(_) => Setting::Context,
            Edit::Sequences(_) => Setting::Sequences,
            Edit::CacheTypeK(_) => Setting::CacheTypeK,
            Edit::CacheTypeV(_) => Setting::CacheTypeV,
            Edit::FlashAttn(_) => Setting::FlashAttn,
            Edit::Ubatch(_) => Setting::Ubatch,
            Edit::KvUnified(_) => Setting::KvUnified,
            Edit::SwaFull(_) => Setting::SwaFull,
            Edit::NoKvOffload(_) => Setting::NoKvOffload,
            Edit::Overhead(_) => Setting::Overhead,
            Edit::GpuLayers(_) => Setting::GpuLayers,
            Edit::TensorSplit(_) => Setting::TensorSplit,
            Edit::PromptRows(_) => Setting::PromptRows,
            Edit::ComputePath(_) => Setting::ComputePath,
            Edit::ExtraFile(_) => Setting::ExtraFile,
            Edit::Capacity { tier, .. } => Setting::Capacity(*tier),
            Edit::Bandwidth { tier, .. } => Setting::Bandwidth(*tier),
            Edit::Measured { tier, .. } => Setting::Measured(*tier),
            Edit::ComputeRate { index, .. } => Setting::ComputeRate(*index),
            Edit::Layers(_) => Setting::Layers,
            Edit::Heads(_) => Setting::Heads,
            Edit::KvHeads(_) => Setting::KvHeads,
            Edit::KeyLength(_) => Setting::KeyLength,
            Edit::ValueLength(_) => Setting::ValueLength,
            Edit::Window(_) => Setting::Window,
            Edit::KvLoraRank(_) => Setting::KvLoraRank,
            Edit::RopeDim(_) => Setting::RopeDim,
            Edit::Experts { .. } => Setting::Experts,
            Edit::Parameters(_) => Setting::Parameters,
            Edit::NativeContext(_) => Setting::NativeContext,
            Edit::Ngl(_) => Setting::GpuLayers,
            Edit::SplitMode(_) => Setting::SplitMode,
            Edit::MainGpu(_) => Setting::MainGpu,
            Edit::OverrideTensor(_) => Setting::OverrideTensor,
            Edit::CpuMoe(_) => Setting::CpuMoe,
            Edit::NCpuMoe(_) => Setting::NCpuMoe,
            Edit::NCpuFfn(_) => Setting::NCpuFfn,
            Edit::Fit(_) => Setting::Fit,
            Edit::FitTarget(_) => Setting::FitTarget,
            Edit::FitCtx(_) => Setting::FitCtx,
            Edit::DeviceFree { tier, .. } => Setting::DeviceFree(*tier),
            Edit::Rpc(_) => Setting::Rpc,
            Edit::Runtime(_) => Setting::Runtime,
            Edit::KvBits(_) => Setting::KvBits,
            Edit::KvGroupSize(_) => Setting::KvGroupSize,
            Edit::QuantizedKvStart(_) => Setting::QuantizedKvStart,
            Edit::MaxKvSize(_) => Setting::MaxKvSize,
            Edit::Model(_) | Edit::Machine(_) | Edit::MachineId(_) | Edit::Name(_) => {
                return None;
            }
        })
    }

    /// True for an edit of the model figures (the model shape is rebuilt from them).
    pub fn is_model(&self) -> bool {
        self.setting().is_some_and(Setting::is_model)
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
    /// A placement flag llama.cpp would not take (its reason, naming the flag).
    Placement(String),
    /// An MLX-LM setting MLX would not take (its reason, naming the flag).
    MlxLm(String),
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
            EditError::Shape(m) | EditError::Placement(m) | EditError::MlxLm(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for EditError {}

fn user<T>(v: T) -> Sourced<T> {
    Sourced::new(v, Provenance::User, USER_SOURCE)
}

/// A copy of `base` with `edits` applied in order (bench rows, compare rows, trials).
pub fn applied(base: &Scenario, edits: &[Edit]) -> Result<Scenario, EditError> {
    let mut s = base.clone();
    let mut fig = figures_of(&s.model);
    for e in edits {
        apply(&mut s, &mut fig, e)?;
    }
    Ok(s)
}

/// Apply one edit. Scenario settings and machine figures change in `s`; model figures change
/// in `fig` and are checked first, so a shape llama.cpp could not run is refused with its
/// reason before anything changes; the model shape is then rebuilt from them (the advertised
/// parameter counts and the file's warnings are kept). [`Edit::Model`] replaces the model; the
/// caller passes the new model's figures in `fig`.
pub fn apply(s: &mut Scenario, fig: &mut ArchFigures, edit: &Edit) -> Result<(), EditError> {
    let c = &mut s.cache;
    match edit {
        Edit::Model(m) => {
            s.model = m.shape.clone();
            let extra: Vec<WeightFile> = (s.weights.iter())
                .filter(|w| !matches!(w.kind, WeightKind::Artifact(_)))
                .cloned()
                .collect();
            s.weights = m.weights.clone();
            s.weights.extend(extra);
            s.inventory = m.inventory.clone();
            if let Some(ff) = &m.feed_forward {
                s.feed_forward = *ff;
            }
            // `-c 0`: the new model's trained context.
            if s.offload.context_auto
                && let Some(n) = s.model.native_context
            {
                s.cache.context = n;
            }
        }
        Edit::Machine(m) => s.machine = (**m).clone(),
        Edit::MachineId(id) => s.machine.id = id.clone(),
        Edit::Name(n) => s.name = n.clone(),
        Edit::Runtime(r) => s.runtime = *r,
        // `-c 0`: llama.cpp's default, the trained context, which `-fit` may reduce.
        Edit::Context(0) => {
            c.context = s.model.native_context.filter(|n| *n > 0).ok_or(EditError::Zero(
                "the context of a model that states no trained context (-c 0 takes the trained one)",
            ))?;
            s.offload.context_auto = true;
        }
        Edit::Context(n) => {
            c.context = *n;
            s.offload.context_auto = false;
        }
        Edit::FitContext(n) => {
            c.context = *n;
            s.offload.context_auto = true;
        }
        Edit::KvBits(b) => {
            if let Some(b) = b {
                super::mlx::check_kv_bits(*b)
                    .map_err(|e| EditError::MlxLm(format!("--kv-bits: {e}")))?;
            }
            s.mlx_lm.kv_bits = *b;
        }
        Edit::KvGroupSize(g) => {
            super::mlx::check_kv_group_size(*g)
                .map_err(|e| EditError::MlxLm(format!("--kv-group-size: {e}")))?;
            s.mlx_lm.kv_group_size = *g;
        }
        Edit::QuantizedKvStart(n) => s.mlx_lm.quantized_kv_start = *n,
        Edit::MaxKvSize(n) => {
            if *n == Some(0) {
                return Err(EditError::Zero("--max-kv-size"));
            }
            s.mlx_lm.max_kv_size = *n;
        }
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
        Edit::TensorSplit(t) => s.offload.tensor_split = t.clone(),
        Edit::PromptRows(n) => s.prompt_rows = *n,
        Edit::ComputePath(p) => s.compute_path = p.clone(),
        Edit::ExtraFile(w) => s.weights.push(w.clone()),
        Edit::Ngl(n) => {
            s.offload.gpu_layers = match n {
                GpuLayers::Count(c) => Some(*c),
                _ => None,
            };
            s.offload.gpu_layers_all = *n == GpuLayers::All;
        }
        Edit::SplitMode(m) => s.offload.split_mode = *m,
        Edit::MainGpu(g) => s.offload.main_gpu = *g,
        Edit::OverrideTensor(list) => {
            for item in list {
                check_override_syntax(item).map_err(EditError::Placement)?;
            }
            s.offload.overrides = list.clone();
        }
        Edit::CpuMoe(b) => s.offload.cpu_moe = *b,
        Edit::NCpuMoe(n) => s.offload.n_cpu_moe = *n,
        Edit::NCpuFfn(n) => s.offload.n_cpu_ffn = *n,
        Edit::Fit(b) => s.offload.fit = *b,
        Edit::FitTarget(v) => s.offload.fit_margin_mib = v.clone(),
        Edit::FitCtx(n) => {
            if *n == 0 {
                return Err(EditError::Zero("-fitc"));
            }
            s.offload.fit_min_ctx = *n;
        }
        Edit::DeviceFree { tier, bytes } => {
            if *bytes == 0 {
                return Err(EditError::Zero("a device's free memory"));
            }
            let t = s
                .machine
                .tiers
                .get_mut(*tier)
                .ok_or(EditError::NoTier(*tier))?;
            let mut d = t.device_or_default().ok_or_else(|| {
                EditError::Placement(format!(
                    "tier \"{}\" is a {} tier: llama.cpp sees no device there",
                    t.name,
                    t.kind.label()
                ))
            })?;
            if *bytes > t.capacity.value {
                return Err(EditError::Placement(format!(
                    "free memory {} bytes is above tier \"{}\"'s capacity of {} bytes",
                    units::group_digits(*bytes as u128),
                    t.name,
                    units::group_digits(t.capacity.value as u128)
                )));
            }
            d.free = user(*bytes);
            t.device = Some(d);
        }
        Edit::Rpc(endpoints) => {
            let rpc: Vec<usize> = (s.machine.tiers.iter().enumerate())
                .filter(|(_, t)| {
                    t.device_or_default()
                        .is_some_and(|d| d.backend == super::placement::Backend::Rpc)
                })
                .map(|(i, _)| i)
                .collect();
            if rpc.len() != endpoints.len() {
                return Err(EditError::Placement(format!(
                    "--rpc names {} server(s) but machine \"{}\" has {} rpc device(s)",
                    endpoints.len(),
                    s.machine.id,
                    rpc.len()
                )));
            }
            if let Some(bad) = endpoints.iter().find(|e| !valid_endpoint(e)) {
                return Err(EditError::Placement(format!(
                    "--rpc {bad}: expected host:port"
                )));
            }
            for (i, e) in rpc.into_iter().zip(endpoints) {
                if let Some(d) = s.machine.tiers[i].device.as_mut() {
                    d.endpoint = Some(e.clone());
                }
            }
        }
        Edit::Capacity { tier, bytes } => {
            if *bytes == 0 {
                return Err(EditError::Zero("a memory size"));
            }
            let t = s
                .machine
                .tiers
                .get_mut(*tier)
                .ok_or(EditError::NoTier(*tier))?;
            let old = t.capacity.value;
            t.capacity = user(*bytes);
            // The device's free figure follows the new capacity unless the user gave it: Metal's
            // working set keeps its share of the memory; other backends keep back what the
            // profile's figure keeps back (the CUDA context). A free figure above the capacity
            // (a 24 GiB card's 23.617 GiB beside 16 GiB) is never left standing.
            if let Some(d) = t.device.as_mut()
                && d.free.provenance != Provenance::User
                && old > 0
            {
                let was = d.free.value.min(old);
                let (value, how) = if d.backend == super::placement::Backend::Metal {
                    let v = (u128::from(*bytes) * u128::from(was) / u128::from(old)) as u64;
                    (
                        v,
                        format!(
                            "the same share of the edited capacity as the profile's figure, {} of {}",
                            units::fmt_gib(was),
                            units::fmt_gib(old)
                        ),
                    )
                } else {
                    let kept = old - was;
                    (
                        bytes.saturating_sub(kept),
                        format!(
                            "the edited capacity less the {} the profile's figure keeps back",
                            units::bytes_mib(kept)
                        ),
                    )
                };
                d.free = Sourced::new(
                    value,
                    Provenance::Derived,
                    format!("derived: {how} ({})", d.free.source),
                );
            }
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
        Edit::Parameters(v) => {
            s.model.parameters_advertised = Some(user(*v));
            s.model.provenance = Provenance::User;
        }
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
            let old = &s.model;
            let mut shape = ModelShape::from_figures(old.name.clone(), &next, Provenance::User)
                .map_err(|e| EditError::Shape(e.0))?;
            shape.parameters_advertised = old.parameters_advertised.clone();
            shape.active_parameters_advertised = old.active_parameters_advertised.clone();
            shape.warnings = old.warnings.clone();
            s.model = shape;
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
