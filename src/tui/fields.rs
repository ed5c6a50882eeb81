//! The editable figures of the panes: which fields a pane shows, their rows as text (label,
//! value, provenance tag, slider position), and how each one is stepped or set from typed
//! text. Pure functions over the scenario; the app applies them and recomputes.

use crate::core::cache::CacheType;
use crate::core::edit::{Edit, EditError, Setting};
use crate::core::model::{ArchFigures, Attention, ModelShape, PerLayer};
use crate::core::scenario::{MAX_CONTEXT, Scenario};
use crate::core::units::{self, BytesPerSec, FlopPerSec, GIB, Provenance};

/// A pane of the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    /// The file: size, shards, hash, encodings.
    Artifact,
    /// The model figures the bounds use.
    Model,
    /// Cache and run settings.
    Cache,
    /// The machine profile.
    Machine,
    /// The results.
    Bounds,
    /// A claimed or observed rate.
    Claim,
}

impl Pane {
    /// Tab order.
    pub const ORDER: [Pane; 6] = [
        Pane::Artifact,
        Pane::Model,
        Pane::Cache,
        Pane::Machine,
        Pane::Bounds,
        Pane::Claim,
    ];
    /// Title shown on the border.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Artifact => "Artifact",
            Pane::Model => "Model",
            Pane::Cache => "Cache & run",
            Pane::Machine => "Machine",
            Pane::Bounds => "Bounds",
            Pane::Claim => "Claim",
        }
    }
}

/// One editable (or selectable) figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// Retained tokens per sequence N.
    Context,
    /// Sequences B.
    Sequences,
    /// K cache type.
    TypeK,
    /// V cache type.
    TypeV,
    /// Flash attention.
    FlashAttn,
    /// n_ubatch.
    Ubatch,
    /// Unified KV buffer.
    KvUnified,
    /// Full-size sliding-window cache.
    SwaFull,
    /// Other allocations A.
    Other,
    /// `-ngl`.
    GpuLayers,
    /// `--tensor-split`.
    TensorSplit,
    /// `-nkvo`.
    NoKvOffload,
    /// Prompt rows S.
    PromptRows,
    /// Compute path for prefill.
    ComputePath,
    /// Repeating layers.
    Layers,
    /// Query heads.
    Heads,
    /// KV heads.
    KvHeads,
    /// Key length d_k.
    KeyLength,
    /// Value length d_v.
    ValueLength,
    /// Sliding window.
    Window,
    /// MLA kv_lora_rank.
    KvLoraRank,
    /// MLA rope dims.
    RopeDim,
    /// Routed experts.
    Experts,
    /// Experts used per token.
    ExpertsUsed,
    /// Advertised parameters.
    Parameters,
    /// Native context.
    NativeContext,
    /// Which machine profile.
    MachineProfile,
    /// Capacity of tier i.
    Capacity(usize),
    /// Stated bandwidth of tier i.
    Bandwidth(usize),
    /// Measured bandwidth of tier i.
    Measured(usize),
    /// Compute rate i.
    ComputeRate(usize),
    /// The claimed tokens/s.
    Claim,
}

impl Field {
    /// What the field is called in messages and prompts.
    pub fn name(self) -> String {
        match self {
            Field::Context => "context length (tokens per sequence)".into(),
            Field::Sequences => "sequences".into(),
            Field::TypeK => "K cache type".into(),
            Field::TypeV => "V cache type".into(),
            Field::FlashAttn => "flash attention (on/off)".into(),
            Field::Ubatch => "n_ubatch".into(),
            Field::KvUnified => "unified KV (on/off)".into(),
            Field::SwaFull => "swa-full (on/off)".into(),
            Field::Other => "other allocations A (e.g. 2 GiB)".into(),
            Field::GpuLayers => "GPU layers (-ngl; \"all\")".into(),
            Field::TensorSplit => "tensor split (-ts 3,1; \"auto\" = by memory)".into(),
            Field::NoKvOffload => "KV in host memory (-nkvo; on/off)".into(),
            Field::PromptRows => "prompt rows S".into(),
            Field::ComputePath => "compute path".into(),
            Field::Layers => "layers".into(),
            Field::Heads => "query heads".into(),
            Field::KvHeads => "KV heads".into(),
            Field::KeyLength => "key length".into(),
            Field::ValueLength => "value length".into(),
            Field::Window => "sliding window (tokens; 0 = none)".into(),
            Field::KvLoraRank => "MLA kv_lora_rank".into(),
            Field::RopeDim => "MLA rope dims".into(),
            Field::Experts => "routed experts".into(),
            Field::ExpertsUsed => "experts used per token".into(),
            Field::Parameters => "parameters".into(),
            Field::NativeContext => "native context".into(),
            Field::MachineProfile => "machine profile id".into(),
            Field::Capacity(_) => "capacity (e.g. 48 GiB)".into(),
            Field::Bandwidth(_) => "bandwidth (e.g. 273 GB/s)".into(),
            Field::Measured(_) => "measured bandwidth (e.g. 240 GB/s; empty = none)".into(),
            Field::ComputeRate(_) => "compute rate (e.g. 165 TFLOP/s)".into(),
            Field::Claim => "claimed or observed tokens/s".into(),
        }
    }

    /// The scenario setting the field edits (`None`: the machine picker, the claim).
    pub fn setting(self) -> Option<Setting> {
        Some(match self {
            Field::Context => Setting::Context,
            Field::Sequences => Setting::Sequences,
            Field::TypeK => Setting::CacheTypeK,
            Field::TypeV => Setting::CacheTypeV,
            Field::FlashAttn => Setting::FlashAttn,
            Field::Ubatch => Setting::Ubatch,
            Field::KvUnified => Setting::KvUnified,
            Field::SwaFull => Setting::SwaFull,
            Field::Other => Setting::Overhead,
            Field::GpuLayers => Setting::GpuLayers,
            Field::TensorSplit => Setting::TensorSplit,
            Field::NoKvOffload => Setting::NoKvOffload,
            Field::PromptRows => Setting::PromptRows,
            Field::ComputePath => Setting::ComputePath,
            Field::Layers => Setting::Layers,
            Field::Heads => Setting::Heads,
            Field::KvHeads => Setting::KvHeads,
            Field::KeyLength => Setting::KeyLength,
            Field::ValueLength => Setting::ValueLength,
            Field::Window => Setting::Window,
            Field::KvLoraRank => Setting::KvLoraRank,
            Field::RopeDim => Setting::RopeDim,
            Field::Experts | Field::ExpertsUsed => Setting::Experts,
            Field::Parameters => Setting::Parameters,
            Field::NativeContext => Setting::NativeContext,
            Field::Capacity(i) => Setting::Capacity(i),
            Field::Bandwidth(i) => Setting::Bandwidth(i),
            Field::Measured(i) => Setting::Measured(i),
            Field::ComputeRate(i) => Setting::ComputeRate(i),
            Field::MachineProfile | Field::Claim => return None,
        })
    }

    /// True for fields of the model figures (editing one makes the model `user`).
    pub fn is_model(self) -> bool {
        matches!(
            self,
            Field::Layers
                | Field::Heads
                | Field::KvHeads
                | Field::KeyLength
                | Field::ValueLength
                | Field::Window
                | Field::KvLoraRank
                | Field::RopeDim
                | Field::Experts
                | Field::ExpertsUsed
                | Field::Parameters
                | Field::NativeContext
        )
    }

    /// True for fields of the machine (editing one marks the machine edited).
    pub fn is_machine(self) -> bool {
        matches!(
            self,
            Field::Capacity(_) | Field::Bandwidth(_) | Field::Measured(_) | Field::ComputeRate(_)
        )
    }
}

/// The fields that edit any of `settings` (both experts rows edit one setting).
pub fn fields_of(settings: &[Setting]) -> Vec<Field> {
    let mut out = Vec::new();
    for k in settings {
        match k {
            Setting::Experts => out.extend([Field::Experts, Field::ExpertsUsed]),
            Setting::Context => out.push(Field::Context),
            Setting::Sequences => out.push(Field::Sequences),
            Setting::CacheTypeK => out.push(Field::TypeK),
            Setting::CacheTypeV => out.push(Field::TypeV),
            Setting::FlashAttn => out.push(Field::FlashAttn),
            Setting::Ubatch => out.push(Field::Ubatch),
            Setting::KvUnified => out.push(Field::KvUnified),
            Setting::SwaFull => out.push(Field::SwaFull),
            Setting::Overhead => out.push(Field::Other),
            Setting::GpuLayers => out.push(Field::GpuLayers),
            Setting::PromptRows => out.push(Field::PromptRows),
            Setting::ComputePath => out.push(Field::ComputePath),
            Setting::Layers => out.push(Field::Layers),
            Setting::Heads => out.push(Field::Heads),
            Setting::KvHeads => out.push(Field::KvHeads),
            Setting::KeyLength => out.push(Field::KeyLength),
            Setting::ValueLength => out.push(Field::ValueLength),
            Setting::Window => out.push(Field::Window),
            Setting::KvLoraRank => out.push(Field::KvLoraRank),
            Setting::RopeDim => out.push(Field::RopeDim),
            Setting::Parameters => out.push(Field::Parameters),
            Setting::NativeContext => out.push(Field::NativeContext),
            Setting::Capacity(i) => out.push(Field::Capacity(*i)),
            Setting::Bandwidth(i) => out.push(Field::Bandwidth(*i)),
            Setting::Measured(i) => out.push(Field::Measured(*i)),
            Setting::ComputeRate(i) => out.push(Field::ComputeRate(*i)),
            Setting::TensorSplit => out.push(Field::TensorSplit),
            Setting::NoKvOffload => out.push(Field::NoKvOffload),
            Setting::ExtraFile => {}
            // llama.cpp's placement flags: no explorer row yet (CLI and profiles only)
            Setting::SplitMode
            | Setting::MainGpu
            | Setting::OverrideTensor
            | Setting::CpuMoe
            | Setting::NCpuMoe
            | Setting::NCpuFfn
            | Setting::Fit
            | Setting::FitTarget
            | Setting::FitCtx
            | Setting::DeviceFree(_)
            | Setting::Rpc => {}
        }
    }
    out
}

/// A provenance or a note shown at the right of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Tag {
    /// A provenance label.
    Prov(Provenance),
    /// Any other short note.
    Note(String),
    /// A warning note.
    Warn(String),
}

/// A slider position: 0–1 along a log or linear scale, with an optional marker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SliderPos {
    /// Where the value sits.
    pub fraction: f64,
    /// Where a reference value sits (the native context).
    pub marker: Option<f64>,
}

/// One line of a pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The field, when the row can be selected.
    pub field: Option<Field>,
    /// Left label.
    pub label: String,
    /// The value as text.
    pub value: String,
    /// Right tag.
    pub tag: Option<Tag>,
    /// A slider drawn after the value.
    pub slider: Option<SliderPos>,
    /// A heading row (bold, not selectable).
    pub heading: bool,
}

impl Row {
    fn field(field: Field, label: &str, value: String) -> Row {
        Row {
            field: Some(field),
            label: label.to_string(),
            value,
            tag: None,
            slider: None,
            heading: false,
        }
    }
    fn info(label: &str, value: String) -> Row {
        Row {
            field: None,
            label: label.to_string(),
            value,
            tag: None,
            slider: None,
            heading: false,
        }
    }
    fn heading(label: String) -> Row {
        Row {
            field: None,
            label,
            value: String::new(),
            tag: None,
            slider: None,
            heading: true,
        }
    }
    fn tag(mut self, t: Tag) -> Row {
        self.tag = Some(t);
        self
    }
}

fn on_off(b: bool) -> String {
    if b { "on".into() } else { "off".into() }
}

/// The lowest context on the slider scale.
const SLIDER_MIN: f64 = 256.0;

fn log_fraction(v: f64, top: f64) -> f64 {
    if v <= SLIDER_MIN {
        return 0.0;
    }
    ((v / SLIDER_MIN).log2() / (top / SLIDER_MIN).log2()).clamp(0.0, 1.0)
}

/// The top of the context slider: 4 × native (at least 131,072), or N when above it.
pub fn context_slider_top(s: &Scenario) -> u64 {
    let native = s.model.native_context.unwrap_or(32_768);
    native.saturating_mul(4).max(131_072).max(s.cache.context)
}

/// The cache pane's fields (GPU layers only when the machine has more than one tier).
pub fn cache_fields(s: &Scenario) -> Vec<Field> {
    let mut v = vec![
        Field::Context,
        Field::Sequences,
        Field::TypeK,
        Field::TypeV,
        Field::FlashAttn,
        Field::Ubatch,
        Field::KvUnified,
        Field::SwaFull,
        Field::Other,
    ];
    if s.machine.tiers.len() > 1 {
        v.push(Field::GpuLayers);
        if s.machine.accelerators().len() > 1 {
            v.push(Field::TensorSplit);
        }
        v.push(Field::NoKvOffload);
    }
    v.push(Field::PromptRows);
    v.push(Field::ComputePath);
    v
}

/// Rows of the cache pane.
pub fn cache_rows(s: &Scenario) -> Vec<Row> {
    let c = &s.cache;
    cache_fields(s)
        .into_iter()
        .map(|f| match f {
            Field::Context => {
                let top = context_slider_top(s) as f64;
                let mut r = Row::field(f, "context", units::fmt_tokens(c.context));
                r.slider = Some(SliderPos {
                    fraction: log_fraction(c.context as f64, top),
                    marker: s.model.native_context.map(|n| log_fraction(n as f64, top)),
                });
                match s.model.native_context {
                    Some(n) if c.context > n => r.tag(Tag::Warn("> native".into())),
                    _ => r,
                }
            }
            Field::Sequences => Row::field(f, "sequences", c.sequences.to_string()),
            Field::TypeK => Row::field(f, "K cache", c.type_k.name().to_string()),
            Field::TypeV => {
                let r = Row::field(f, "V cache", c.type_v.name().to_string());
                if s.model.mla.is_some() {
                    r.tag(Tag::Note("view of K".into()))
                } else if c.type_v.is_quantized() && !c.flash_attn {
                    r.tag(Tag::Warn("needs -fa".into()))
                } else {
                    r
                }
            }
            Field::FlashAttn => Row::field(f, "flash attn", on_off(c.flash_attn)),
            Field::Ubatch => Row::field(f, "n_ubatch", c.ubatch.to_string()),
            Field::KvUnified => Row::field(f, "unified KV", on_off(c.kv_unified)),
            Field::SwaFull => {
                let r = Row::field(f, "swa-full", on_off(c.swa_full));
                if s.model.sliding_window().is_none() {
                    r.tag(Tag::Note("no SWA".into()))
                } else {
                    r
                }
            }
            Field::Other => {
                let v = if s.other_bytes.value == 0 {
                    "0 bytes".to_string()
                } else {
                    units::fmt_gib(s.other_bytes.value)
                };
                Row::field(f, "other A", v).tag(Tag::Prov(s.other_bytes.provenance))
            }
            Field::GpuLayers => {
                let all = crate::core::tiers::all_gpu_layers(&s.model);
                let v = match s.offload.gpu_layers {
                    Some(n) if n < all => format!("{n} of {all}"),
                    _ => format!("all ({all})"),
                };
                Row::field(f, "GPU layers", v)
            }
            Field::TensorSplit => Row::field(f, "split -ts", tensor_split_text(s)),
            Field::NoKvOffload => Row::field(f, "KV on host", on_off(s.offload.no_kv_offload)),
            Field::PromptRows => Row::field(f, "prompt S", units::fmt_tokens(s.prompt_rows)),
            Field::ComputePath => {
                let r = Row::field(f, "compute", s.compute_path.clone());
                if s.machine.compute_for(&s.compute_path).is_none() {
                    r.tag(Tag::Note("no rate".into()))
                } else {
                    r
                }
            }
            other => Row::field(other, "?", String::new()),
        })
        .collect()
}

/// Which model figures a user has edited, and the base provenance of the rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelEdits {
    /// Edited fields (shown as `user`).
    pub fields: Vec<Field>,
}

impl ModelEdits {
    /// The fields of the settings the workspace records as edited.
    pub fn of(settings: &[Setting]) -> ModelEdits {
        ModelEdits {
            fields: fields_of(settings),
        }
    }
    /// The field was edited.
    pub fn has(&self, f: Field) -> bool {
        self.fields.contains(&f)
    }
    /// Mark a field edited.
    pub fn mark(&mut self, f: Field) {
        if !self.fields.contains(&f) {
            self.fields.push(f);
        }
    }
}

fn per_layer_text(p: &PerLayer) -> String {
    match p {
        PerLayer::Uniform(v) => v.to_string(),
        PerLayer::List(v) => {
            let min = v.iter().copied().min().unwrap_or(0);
            let max = v.iter().copied().max().unwrap_or(0);
            if min == max {
                min.to_string()
            } else {
                format!("{min}–{max} per layer")
            }
        }
    }
}

fn window_text(m: &ModelShape) -> String {
    let total = m.layers.len();
    let mut sliding = (0usize, 0u64);
    let mut chunked = (0usize, 0u64);
    for l in &m.layers {
        match l.attention {
            Attention::Sliding { window } => sliding = (sliding.0 + 1, window),
            Attention::Chunked { chunk } => chunked = (chunked.0 + 1, chunk),
            _ => {}
        }
    }
    if sliding.0 > 0 {
        format!(
            "{} on {} of {total}",
            units::fmt_tokens(sliding.1),
            sliding.0
        )
    } else if chunked.0 > 0 {
        format!(
            "chunk {} on {} of {total}",
            units::fmt_tokens(chunked.1),
            chunked.0
        )
    } else {
        "none".into()
    }
}

/// Rows of the model pane.
pub fn model_rows(
    s: &Scenario,
    fig: &ArchFigures,
    edits: &ModelEdits,
    base: Provenance,
) -> Vec<Row> {
    let m = &s.model;
    let prov = |f: Field| if edits.has(f) { Provenance::User } else { base };
    let dim_prov = |f: Field, explicit: Option<u32>| {
        if edits.has(f) {
            Provenance::User
        } else if explicit.is_none() {
            Provenance::Derived
        } else {
            base
        }
    };
    let mut rows = vec![
        Row::field(Field::Layers, "layers", fig.layers.to_string())
            .tag(Tag::Prov(prov(Field::Layers))),
        Row::field(Field::Heads, "heads", per_layer_text(&fig.head_count))
            .tag(Tag::Prov(prov(Field::Heads))),
        Row::field(
            Field::KvHeads,
            "KV heads",
            per_layer_text(&fig.head_count_kv),
        )
        .tag(Tag::Prov(prov(Field::KvHeads))),
        Row::field(
            Field::KeyLength,
            "key dim",
            m.layers.first().map_or(0, |l| l.key_length).to_string(),
        )
        .tag(Tag::Prov(dim_prov(Field::KeyLength, fig.key_length))),
        Row::field(
            Field::ValueLength,
            "value dim",
            m.layers.first().map_or(0, |l| l.value_length).to_string(),
        )
        .tag(Tag::Prov(dim_prov(Field::ValueLength, fig.value_length))),
        Row::field(Field::Window, "window", window_value(m, fig))
            .tag(Tag::Prov(prov(Field::Window))),
    ];
    match m.mla {
        Some(mla) => {
            rows.push(
                Row::field(Field::KvLoraRank, "MLA rank", mla.kv_lora_rank.to_string())
                    .tag(Tag::Prov(prov(Field::KvLoraRank))),
            );
            rows.push(
                Row::field(Field::RopeDim, "MLA rope", mla.rope_dim.to_string())
                    .tag(Tag::Prov(prov(Field::RopeDim))),
            );
        }
        None => rows.push(Row::info("MLA", "none".into())),
    }
    match m.moe {
        Some(moe) => {
            rows.push(
                Row::field(
                    Field::ExpertsUsed,
                    "experts",
                    format!("{} of {}", moe.experts_used, moe.experts),
                )
                .tag(Tag::Prov(prov(Field::ExpertsUsed))),
            );
        }
        None => rows.push(Row::info("experts", "dense".into())),
    }
    let params = match &m.parameters_advertised {
        Some(p) => Row::field(
            Field::Parameters,
            "parameters",
            units::group_digits(p.value as u128),
        )
        .tag(Tag::Prov(if edits.has(Field::Parameters) {
            Provenance::User
        } else {
            p.provenance
        })),
        None => match s.inventory.as_ref().map(|i| i.parameters) {
            Some(n) if n > 0 => Row::field(
                Field::Parameters,
                "parameters",
                units::group_digits(n as u128),
            )
            .tag(Tag::Note("counted".into())),
            _ => Row::field(Field::Parameters, "parameters", "unknown".into()),
        },
    };
    rows.push(params);
    rows.push(
        Row::field(
            Field::NativeContext,
            "native ctx",
            m.native_context.map_or("unknown".into(), units::fmt_tokens),
        )
        .tag(Tag::Prov(prov(Field::NativeContext))),
    );
    rows
}

pub use crate::workspace::MachineOrigin;

/// Rows of the machine pane. `edited` lists machine fields the user changed.
pub fn machine_rows(s: &Scenario, origin: MachineOrigin, edited: &[Field]) -> Vec<Row> {
    let m = &s.machine;
    let prov = |f: Field, p: Provenance| {
        if edited.contains(&f) {
            Provenance::User
        } else {
            p
        }
    };
    let mut rows = vec![
        Row::field(Field::MachineProfile, "profile", m.id.clone()).tag(Tag::Note(
            if edited.is_empty() {
                origin.label().to_string()
            } else {
                "edited".into()
            },
        )),
    ];
    rows.push(Row::info("", m.name.clone()));
    for (i, t) in m.tiers.iter().enumerate() {
        rows.push(Row::heading(format!("{} ({})", t.name, t.kind)));
        rows.push(
            Row::field(
                Field::Capacity(i),
                "capacity",
                units::fmt_gib(t.capacity.value),
            )
            .tag(Tag::Prov(prov(Field::Capacity(i), t.capacity.provenance))),
        );
        rows.push(
            Row::field(
                Field::Bandwidth(i),
                "bandwidth",
                units::fmt_bandwidth(t.bandwidth.value),
            )
            .tag(Tag::Prov(prov(Field::Bandwidth(i), t.bandwidth.provenance))),
        );
        let measured = match &t.measured_bandwidth {
            Some(b) => Row::field(
                Field::Measured(i),
                "measured",
                units::fmt_bandwidth(b.value),
            )
            .tag(Tag::Prov(prov(Field::Measured(i), b.provenance))),
            // A bandwidth that is itself measured has no second, measured figure to show.
            None if t.bandwidth.provenance == Provenance::Measured => {
                Row::field(Field::Measured(i), "measured", "the bandwidth above".into())
            }
            None => Row::field(Field::Measured(i), "measured", "none".into()),
        };
        rows.push(measured);
    }
    if m.compute.is_empty() {
        rows.push(Row::info("compute", "no rate: no prefill ceiling".into()));
    } else {
        rows.push(Row::heading("compute".into()));
        for (i, c) in m.compute.iter().enumerate() {
            let label = format!("{} @{}", c.path, c.tier);
            let mut r = Row::field(
                Field::ComputeRate(i),
                &label,
                units::fmt_flops(c.rate.value),
            );
            r = r.tag(Tag::Prov(prov(Field::ComputeRate(i), c.rate.provenance)));
            rows.push(r);
        }
    }
    rows
}

/// A typed value that cannot be used; every message is worded here, one line naming the
/// field and the text.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldError {
    /// Nothing typed where a number is needed.
    Empty(&'static str),
    /// Not a number.
    NotANumber(&'static str, String),
    /// Negative or not finite.
    Negative(&'static str, String),
    /// Beyond the field's range.
    TooLarge(&'static str, String),
    /// A fraction where a whole number is needed.
    Fraction(&'static str, String),
    /// Not on or off.
    NotOnOff(&'static str, String),
    /// Not a cache type llama.cpp knows.
    CacheType(&'static str, String),
    /// A size, bandwidth or rate that does not parse (the unit parser's reason).
    Unit(&'static str, String),
    /// An empty compute path.
    NoComputePath,
    /// Experts not typed as "used of total".
    Experts(String),
    /// A parameter count that does not parse.
    Parameters(String),
    /// A parameter count out of any plausible range.
    ParametersImplausible(String),
    /// The value parses but the scenario refuses it (the one edit function's reason).
    Refused(&'static str, EditError),
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldError::Empty(w) => write!(f, "{w}: type a number"),
            FieldError::NotANumber(w, t) => write!(f, "{w}: \"{t}\" is not a number"),
            FieldError::Negative(w, t) => write!(f, "{w}: \"{t}\" must be a positive number"),
            FieldError::TooLarge(w, t) => write!(f, "{w}: \"{t}\" is too large"),
            FieldError::Fraction(w, t) => write!(f, "{w}: \"{t}\" must be a whole number"),
            FieldError::NotOnOff(w, t) => write!(f, "{w}: \"{t}\" is not on or off"),
            FieldError::CacheType(w, t) => write!(
                f,
                "{w}: unknown cache type \"{t}\" ({})",
                CacheType::names_list()
            ),
            FieldError::Unit(w, m) => write!(f, "{w}: {m}"),
            FieldError::NoComputePath => f.write_str("compute path: type a path name (e.g. fp16)"),
            FieldError::Experts(t) => {
                write!(f, "experts: type \"8 of 128\" (used of total), not \"{t}\"")
            }
            FieldError::Parameters(t) => write!(
                f,
                "parameters: \"{t}\" is not a number (e.g. 32.8e9 or 32.8B)"
            ),
            FieldError::ParametersImplausible(t) => {
                write!(f, "parameters: \"{t}\" is not a plausible parameter count")
            }
            FieldError::Refused(w, e) => write!(f, "{w}: {e}"),
        }
    }
}

impl std::error::Error for FieldError {}

impl Field {
    /// The short name used in messages about a typed value.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Field::Context => "context",
            Field::Sequences => "sequences",
            Field::TypeK => "K cache",
            Field::TypeV => "V cache",
            Field::FlashAttn => "flash attention",
            Field::Ubatch => "n_ubatch",
            Field::KvUnified => "unified KV",
            Field::SwaFull => "swa-full",
            Field::Other => "other allocations A",
            Field::GpuLayers => "GPU layers",
            Field::TensorSplit => "tensor split",
            Field::NoKvOffload => "KV in host memory",
            Field::PromptRows => "prompt rows",
            Field::ComputePath => "compute path",
            Field::Layers => "layers",
            Field::Heads => "heads",
            Field::KvHeads => "KV heads",
            Field::KeyLength => "key length",
            Field::ValueLength => "value length",
            Field::Window => "window",
            Field::KvLoraRank => "MLA kv_lora_rank",
            Field::RopeDim => "MLA rope dims",
            Field::Experts | Field::ExpertsUsed => "experts",
            Field::Parameters => "parameters",
            Field::NativeContext => "native context",
            Field::MachineProfile => "machine profile",
            Field::Capacity(_) => "capacity",
            Field::Bandwidth(_) => "bandwidth",
            Field::Measured(_) => "measured bandwidth",
            Field::ComputeRate(_) => "compute rate",
            Field::Claim => "claim",
        }
    }
}

fn parse_count(text: &str, what: &'static str) -> Result<u64, FieldError> {
    let t = text.trim();
    units::parse_count(t).map_err(|e| match e {
        units::CountError::Empty => FieldError::Empty(what),
        units::CountError::NotANumber => FieldError::NotANumber(what, t.into()),
        units::CountError::Negative => FieldError::Negative(what, t.into()),
        units::CountError::TooLarge => FieldError::TooLarge(what, t.into()),
        units::CountError::Fraction => FieldError::Fraction(what, t.into()),
    })
}

/// `--tensor-split` as llama.cpp takes it: proportions per accelerator, `,` or `/` between;
/// "auto" (or nothing) splits by memory, as llama.cpp does without `-ts`.
fn parse_split(text: &str, what: &'static str) -> Result<Option<Vec<f64>>, FieldError> {
    if text.trim().is_empty() || text.trim().eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    let parts: Vec<&str> = text.split([',', '/']).map(str::trim).collect();
    let mut v = Vec::with_capacity(parts.len());
    for p in parts {
        let x: f64 = p
            .parse()
            .map_err(|_| FieldError::NotANumber(what, text.trim().into()))?;
        if !x.is_finite() || x < 0.0 {
            return Err(FieldError::Negative(what, text.trim().into()));
        }
        v.push(x);
    }
    if !v.iter().any(|x| *x > 0.0) {
        return Err(FieldError::Empty(what));
    }
    Ok(Some(v))
}

/// The split as `-ts` takes it, or "auto" (by memory) without one.
fn tensor_split_text(s: &Scenario) -> String {
    match &s.offload.tensor_split {
        Some(v) => v
            .iter()
            .map(|x| short_decimal(*x))
            .collect::<Vec<_>>()
            .join(","),
        None => "auto".into(),
    }
}

fn parse_u32(text: &str, what: &'static str) -> Result<u32, FieldError> {
    let v = parse_count(text, what)?;
    u32::try_from(v).map_err(|_| FieldError::TooLarge(what, text.trim().into()))
}

fn parse_bool(text: &str, what: &'static str) -> Result<bool, FieldError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "y" => Ok(true),
        "off" | "0" | "false" | "no" | "n" => Ok(false),
        other => Err(FieldError::NotOnOff(what, other.into())),
    }
}

fn parse_cache_type(text: &str, what: &'static str) -> Result<CacheType, FieldError> {
    CacheType::parse(text).ok_or_else(|| FieldError::CacheType(what, text.trim().into()))
}

/// The next context length up: a quarter of the power of two below it (32,768 → 40,960).
pub fn context_step_up(n: u64) -> u64 {
    let p = if n == 0 {
        1
    } else {
        1u64 << (63 - n.leading_zeros())
    };
    let step = (p / 4).max(1);
    (n / step + 1).saturating_mul(step)
}

/// The next context length down (32,768 → 28,672), never below 1.
pub fn context_step_down(n: u64) -> u64 {
    if n <= 1 {
        return 1;
    }
    let below = n - 1;
    let p = 1u64 << (63 - below.leading_zeros());
    let step = (p / 4).max(1);
    ((below / step) * step).max(1)
}

fn step_u64(v: u64, dir: i32, step: u64, min: u64) -> u64 {
    if dir > 0 {
        v.saturating_add(step)
    } else {
        v.saturating_sub(step).max(min)
    }
}

fn halve_double(v: u64, dir: i32) -> u64 {
    if dir > 0 {
        v.saturating_mul(2)
    } else {
        (v / 2).max(1)
    }
}

fn cycle<T: Copy + PartialEq>(all: &[T], cur: T, dir: i32) -> T {
    let i = all.iter().position(|x| *x == cur).unwrap_or(0) as i32;
    let n = all.len() as i32;
    all[((i + dir).rem_euclid(n)) as usize]
}

fn clamp_u32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// The edit a step left (−1) or right (+1) makes; `None` when the field cannot be stepped
/// (type its value instead).
pub fn step_edit(s: &Scenario, fig: &ArchFigures, f: Field, dir: i32) -> Option<Edit> {
    let c = &s.cache;
    let tier = |i: usize| s.machine.tiers.get(i);
    Some(match f {
        Field::Context => Edit::Context(if dir > 0 {
            context_step_up(c.context)
        } else {
            context_step_down(c.context)
        }),
        Field::Sequences => Edit::Sequences(step_u64(c.sequences, dir, 1, 1)),
        Field::TypeK => Edit::CacheTypeK(cycle(&CacheType::ALL, c.type_k, dir)),
        Field::TypeV => Edit::CacheTypeV(cycle(&CacheType::ALL, c.type_v, dir)),
        Field::FlashAttn => Edit::FlashAttn(!c.flash_attn),
        Field::Ubatch => Edit::Ubatch(halve_double(c.ubatch, dir)),
        Field::KvUnified => Edit::KvUnified(!c.kv_unified),
        Field::SwaFull => Edit::SwaFull(!c.swa_full),
        Field::Other => Edit::Overhead(step_u64(s.other_bytes.value, dir, GIB / 4, 0)),
        Field::GpuLayers => {
            let all = crate::core::tiers::all_gpu_layers(&s.model);
            let cur = s.offload.gpu_layers.unwrap_or(all).min(all);
            let next = if dir > 0 {
                (cur + 1).min(all)
            } else {
                cur.saturating_sub(1)
            };
            Edit::GpuLayers(if next >= all { None } else { Some(next) })
        }
        Field::NoKvOffload => Edit::NoKvOffload(!s.offload.no_kv_offload),
        Field::PromptRows => Edit::PromptRows(halve_double(s.prompt_rows, dir)),
        Field::ComputePath => {
            let mut paths: Vec<String> = s.machine.compute.iter().map(|c| c.path.clone()).collect();
            if !paths.contains(&s.compute_path) {
                paths.insert(0, s.compute_path.clone());
            }
            let i = paths.iter().position(|p| *p == s.compute_path).unwrap_or(0) as i32;
            let n = paths.len() as i32;
            Edit::ComputePath(paths[((i + dir).rem_euclid(n)) as usize].clone())
        }
        Field::Layers => Edit::Layers((fig.layers as i64 + dir as i64).max(1) as u32),
        Field::Heads => Edit::Heads((fig.head_count.max() as i64 + dir as i64).max(0) as u32),
        Field::KvHeads => {
            Edit::KvHeads((fig.head_count_kv.max() as i64 + dir as i64).max(0) as u32)
        }
        Field::KeyLength => {
            let cur = s.model.layers.first().map_or(0, |l| l.key_length);
            Edit::KeyLength(clamp_u32(step_u64(cur as u64, dir, 8, 1)))
        }
        Field::ValueLength => {
            let cur = s.model.layers.first().map_or(0, |l| l.value_length);
            Edit::ValueLength(clamp_u32(step_u64(cur as u64, dir, 8, 1)))
        }
        Field::Window => Edit::Window(step_u64(fig.sliding_window.unwrap_or(0), dir, 256, 0)),
        Field::ExpertsUsed => {
            let m = fig.moe?;
            Edit::Experts {
                used: (m.experts_used as i64 + dir as i64).clamp(1, m.experts as i64) as u32,
                total: m.experts,
            }
        }
        Field::NativeContext => {
            Edit::NativeContext(halve_double(fig.native_context.unwrap_or(4096), dir))
        }
        Field::Capacity(i) => Edit::Capacity {
            tier: i,
            bytes: step_u64(tier(i)?.capacity.value, dir, GIB, GIB),
        },
        Field::Bandwidth(i) => Edit::Bandwidth {
            tier: i,
            rate: BytesPerSec((tier(i)?.bandwidth.value.0 + dir as f64 * 1e10).max(1e9)),
        },
        Field::Measured(i) => {
            let b = tier(i)?.measured_bandwidth.as_ref()?;
            Edit::Measured {
                tier: i,
                rate: Some(BytesPerSec((b.value.0 + dir as f64 * 1e10).max(1e9))),
            }
        }
        Field::ComputeRate(i) => Edit::ComputeRate {
            index: i,
            rate: FlopPerSec(
                (s.machine.compute.get(i)?.rate.value.0 + dir as f64 * 1e12).max(1e12),
            ),
        },
        Field::TensorSplit
        | Field::KvLoraRank
        | Field::RopeDim
        | Field::Experts
        | Field::Parameters
        | Field::MachineProfile
        | Field::Claim => return None,
    })
}

/// The edit typed text makes. `None` for fields that are not scenario figures (the machine
/// picker, the claim).
pub fn parse_edit(
    s: &Scenario,
    fig: &ArchFigures,
    f: Field,
    text: &str,
) -> Result<Option<Edit>, FieldError> {
    let what = f.short();
    let t = text.trim();
    Ok(Some(match f {
        Field::Context => Edit::Context(parse_count(t, what)?),
        Field::Sequences => Edit::Sequences(parse_count(t, what)?),
        Field::TypeK => Edit::CacheTypeK(parse_cache_type(t, what)?),
        Field::TypeV => Edit::CacheTypeV(parse_cache_type(t, what)?),
        Field::FlashAttn => Edit::FlashAttn(parse_bool(t, what)?),
        Field::Ubatch => Edit::Ubatch(parse_count(t, what)?),
        Field::KvUnified => Edit::KvUnified(parse_bool(t, what)?),
        Field::SwaFull => Edit::SwaFull(parse_bool(t, what)?),
        Field::Other => {
            Edit::Overhead(units::parse_bytes(t).map_err(|e| FieldError::Unit(what, e.0))?)
        }
        Field::GpuLayers => Edit::GpuLayers(if t.eq_ignore_ascii_case("all") {
            None
        } else {
            let n = parse_u32(t, what)?;
            // Above L every layer is offloaded: shown as "all".
            (n <= s.model.layer_count()).then_some(n)
        }),
        Field::TensorSplit => Edit::TensorSplit(parse_split(t, what)?),
        Field::NoKvOffload => Edit::NoKvOffload(parse_bool(t, what)?),
        Field::PromptRows => Edit::PromptRows(parse_count(t, what)?),
        Field::ComputePath => {
            if t.is_empty() {
                return Err(FieldError::NoComputePath);
            }
            Edit::ComputePath(t.to_string())
        }
        Field::Layers => Edit::Layers(parse_u32(t, what)?),
        Field::Heads => Edit::Heads(parse_u32(t, what)?),
        Field::KvHeads => Edit::KvHeads(parse_u32(t, what)?),
        Field::KeyLength => Edit::KeyLength(parse_u32(t, what)?),
        Field::ValueLength => Edit::ValueLength(parse_u32(t, what)?),
        Field::Window => Edit::Window(parse_count(t, what)?),
        Field::KvLoraRank => Edit::KvLoraRank(parse_u32(t, what)?),
        Field::RopeDim => Edit::RopeDim(parse_u32(t, what)?),
        Field::ExpertsUsed | Field::Experts => {
            // "8 of 128", "8/128" or a single number for the experts used.
            let lower = t.to_ascii_lowercase();
            let parts: Vec<&str> = lower
                .split(['/', ' '])
                .filter(|p| !p.is_empty() && *p != "of")
                .collect();
            let total = fig.moe.map_or(0, |m| m.experts);
            match parts.as_slice() {
                [u] => Edit::Experts {
                    used: parse_u32(u, "experts used")?,
                    total,
                },
                [u, n] => Edit::Experts {
                    used: parse_u32(u, "experts used")?,
                    total: parse_u32(n, "experts")?,
                },
                _ => return Err(FieldError::Experts(t.into())),
            }
        }
        Field::Parameters => Edit::Parameters(parse_params(t)?),
        Field::NativeContext => Edit::NativeContext(parse_count(t, what)?),
        Field::Capacity(i) => Edit::Capacity {
            tier: i,
            bytes: units::parse_bytes(t).map_err(|e| FieldError::Unit(what, e.0))?,
        },
        Field::Bandwidth(i) => Edit::Bandwidth {
            tier: i,
            rate: units::parse_bandwidth(t).map_err(|e| FieldError::Unit(what, e.0))?,
        },
        Field::Measured(i) => Edit::Measured {
            tier: i,
            rate: if t.is_empty() || t.eq_ignore_ascii_case("none") {
                None
            } else {
                Some(units::parse_bandwidth(t).map_err(|e| FieldError::Unit(what, e.0))?)
            },
        },
        Field::ComputeRate(i) => Edit::ComputeRate {
            index: i,
            rate: units::parse_flops(t).map_err(|e| FieldError::Unit(what, e.0))?,
        },
        Field::MachineProfile | Field::Claim => return Ok(None),
    }))
}

/// Parameters: `32.8e9`, `32,800,000,000`, `32.8B`, `671b`, `270M`.
pub fn parse_params(t: &str) -> Result<u64, FieldError> {
    let lower: String = t
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && !c.is_whitespace())
        .collect();
    let (num, mult) = match lower.chars().last() {
        Some('b') => (&lower[..lower.len() - 1], 1e9),
        Some('m') => (&lower[..lower.len() - 1], 1e6),
        Some('k') => (&lower[..lower.len() - 1], 1e3),
        Some('t') => (&lower[..lower.len() - 1], 1e12),
        _ => (lower.as_str(), 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| FieldError::Parameters(t.trim().into()))?;
    let v = v * mult;
    if !v.is_finite() || v < 1.0 || v >= u64::MAX as f64 {
        return Err(FieldError::ParametersImplausible(t.trim().into()));
    }
    Ok(v.round() as u64)
}

/// The context after `[` (halve) or `]` (double).
pub fn halve_or_double_context(n: u64, double: bool) -> u64 {
    if double {
        n.saturating_mul(2).min(MAX_CONTEXT.saturating_mul(2))
    } else {
        (n / 2).max(1)
    }
}

/// Tag the GPU layers row with the most that fit (`core::gpu_layers`), `n` jumps there.
pub fn tag_max_gpu_layers(rows: &mut [Row], m: Option<&crate::core::gpu_layers::MaxGpuLayers>) {
    let Some(m) = m else { return };
    let Some(row) = rows.iter_mut().find(|r| r.field == Some(Field::GpuLayers)) else {
        return;
    };
    row.tag = Some(match m.gpu_layers {
        Some(n) if n >= m.all_layers => Tag::Note("all fit".into()),
        Some(n) => Tag::Note(format!("max {n} (n)")),
        None => Tag::Warn("none fit".into()),
    });
}

/// The window row: the shape's windows, and a typed window the architecture does not apply
/// (llama.cpp runs no SWA for it: the Bounds pane's warning says so) or one above the
/// model's native context (every retained token is then inside it).
fn window_value(m: &ModelShape, fig: &ArchFigures) -> String {
    let shown = window_text(m);
    match fig.sliding_window.filter(|w| *w > 0) {
        Some(w) if shown == "none" => format!("{} not applied", units::fmt_tokens(w)),
        Some(w) if fig.native_context.is_some_and(|n| w > n) => {
            format!("{shown} > native ctx")
        }
        _ => shown,
    }
}

/// Why the last model edit was refused, as info rows of at most `width` characters: the
/// first clause of the reason, the key named without its architecture prefix (the message
/// line below the panes has all of it).
pub fn refusal_rows(reason: &str, width: usize) -> Vec<Row> {
    let first = reason.split(": ").next().unwrap_or(reason);
    let first = match first.split_once(' ') {
        Some((key, rest)) if key.contains('.') => {
            format!("{} {rest}", key.rsplit('.').next().unwrap_or(key))
        }
        _ => first.to_string(),
    };
    let mut lines: Vec<String> = vec![String::new()];
    for word in first.split_whitespace() {
        let cur = lines.last_mut().expect("one line");
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| Row::info(if i == 0 { "refused" } else { "" }, l))
        .collect()
}

/// The current value of `f` as a prompt opens on it: text [`parse_edit`] reads back to the
/// same value (exact bytes or whole units, no digit grouping). Empty when there is no value
/// (no measured bandwidth, no MLA figures, an unknown parameter count).
pub fn edit_text(s: &Scenario, fig: &ArchFigures, f: Field) -> String {
    let c = &s.cache;
    let tier = |i: usize| s.machine.tiers.get(i);
    let per_layer = |p: &PerLayer| match p {
        PerLayer::Uniform(v) => v.to_string(),
        PerLayer::List(v) => {
            let first = v.first().copied().unwrap_or(0);
            if v.iter().all(|x| *x == first) {
                first.to_string()
            } else {
                String::new()
            }
        }
    };
    match f {
        Field::Context => c.context.to_string(),
        Field::Sequences => c.sequences.to_string(),
        Field::TypeK => c.type_k.name().to_string(),
        Field::TypeV => c.type_v.name().to_string(),
        Field::FlashAttn => on_off(c.flash_attn),
        Field::Ubatch => c.ubatch.to_string(),
        Field::KvUnified => on_off(c.kv_unified),
        Field::SwaFull => on_off(c.swa_full),
        Field::Other => bytes_text(s.other_bytes.value),
        Field::GpuLayers => s
            .offload
            .gpu_layers
            .map_or_else(|| "all".to_string(), |n| n.to_string()),
        Field::TensorSplit => tensor_split_text(s),
        Field::NoKvOffload => on_off(s.offload.no_kv_offload),
        Field::PromptRows => s.prompt_rows.to_string(),
        Field::ComputePath => s.compute_path.clone(),
        Field::Layers => fig.layers.to_string(),
        Field::Heads => per_layer(&fig.head_count),
        Field::KvHeads => per_layer(&fig.head_count_kv),
        Field::KeyLength => s
            .model
            .layers
            .first()
            .map_or_else(String::new, |l| l.key_length.to_string()),
        Field::ValueLength => s
            .model
            .layers
            .first()
            .map_or_else(String::new, |l| l.value_length.to_string()),
        Field::Window => fig.sliding_window.unwrap_or(0).to_string(),
        Field::KvLoraRank => fig
            .mla
            .map_or_else(String::new, |m| m.kv_lora_rank.to_string()),
        Field::RopeDim => fig.mla.map_or_else(String::new, |m| m.rope_dim.to_string()),
        Field::Experts | Field::ExpertsUsed => fig.moe.map_or_else(String::new, |m| {
            format!("{} of {}", m.experts_used, m.experts)
        }),
        Field::Parameters => s
            .model
            .parameters_advertised
            .as_ref()
            .map(|p| p.value)
            .or_else(|| {
                s.inventory
                    .as_ref()
                    .map(|i| i.parameters)
                    .filter(|n| *n > 0)
            })
            .map_or_else(String::new, |n| n.to_string()),
        Field::NativeContext => fig
            .native_context
            .map_or_else(String::new, |n| n.to_string()),
        Field::Capacity(i) => tier(i).map_or_else(String::new, |t| bytes_text(t.capacity.value)),
        Field::Bandwidth(i) => tier(i).map_or_else(String::new, |t| rate_text(t.bandwidth.value.0)),
        Field::Measured(i) => tier(i)
            .and_then(|t| t.measured_bandwidth.as_ref())
            .map_or_else(String::new, |b| rate_text(b.value.0)),
        Field::ComputeRate(i) => s.machine.compute.get(i).map_or_else(String::new, |c| {
            format!("{} TFLOP/s", short_decimal(c.rate.value.0 / 1e12))
        }),
        Field::MachineProfile => s.machine.id.clone(),
        Field::Claim => String::new(),
    }
}

/// Bytes as typed: whole GiB or GB when exact, else the byte count.
fn bytes_text(b: u64) -> String {
    if b == 0 {
        "0".into()
    } else if b.is_multiple_of(GIB) {
        format!("{} GiB", b / GIB)
    } else if b.is_multiple_of(1_000_000_000) {
        format!("{} GB", b / 1_000_000_000)
    } else if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        b.to_string()
    }
}

/// A bandwidth as typed, in GB/s.
fn rate_text(bytes_per_s: f64) -> String {
    format!("{} GB/s", short_decimal(bytes_per_s / 1e9))
}

/// The shortest decimal that reads back to `v` within a millionth (no float noise).
fn short_decimal(v: f64) -> String {
    for places in 0..=6 {
        let t = format!("{v:.places$}");
        if let Ok(back) = t.parse::<f64>()
            && (back - v).abs() <= v.abs() * 1e-9
        {
            return t;
        }
    }
    v.to_string()
}
