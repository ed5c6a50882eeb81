//! The editable figures of the panes: which fields a pane shows, their rows as text (label,
//! value, provenance tag, slider position), and how each one is stepped or set from typed
//! text. Pure functions over the scenario; the app applies them and recomputes.

use crate::core::cache::CacheType;
use crate::core::model::{ArchFigures, Attention, Mla, ModelShape, Moe, PerLayer};
use crate::core::scenario::{MAX_CONTEXT, Scenario};
use crate::core::units::{self, BytesPerSec, FlopPerSec, GIB, Provenance, Sourced};

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
                let all = s.model.layer_count() + 1;
                let v = match s.offload.gpu_layers {
                    Some(n) if n < all => format!("{n} of {all}"),
                    _ => format!("all ({all})"),
                };
                Row::field(f, "GPU layers", v)
            }
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

/// Rows of the machine pane. `edited` lists machine fields the user changed.
pub fn machine_rows(s: &Scenario, origin: &str, edited: &[Field]) -> Vec<Row> {
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
                origin.to_string()
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

/// A typed value that cannot be used, one line.
pub type FieldError = String;

fn parse_count(text: &str, what: &str) -> Result<u64, FieldError> {
    let t = text.trim();
    let clean: String = t
        .chars()
        .filter(|c| *c != ',' && *c != '_' && !c.is_whitespace())
        .collect();
    if clean.is_empty() {
        return Err(format!("{what}: type a number"));
    }
    let lower = clean.to_ascii_lowercase();
    let (num, mult) = if let Some(n) = lower.strip_suffix('k') {
        (n.to_string(), 1024f64)
    } else if let Some(n) = lower.strip_suffix('m') {
        (n.to_string(), 1024f64 * 1024.0)
    } else {
        (lower.clone(), 1.0)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{what}: \"{t}\" is not a number"))?;
    let v = v * mult;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{what}: \"{t}\" must be a positive number"));
    }
    if v >= u64::MAX as f64 {
        return Err(format!("{what}: \"{t}\" is too large"));
    }
    if v.fract() != 0.0 {
        return Err(format!("{what}: \"{t}\" must be a whole number"));
    }
    Ok(v as u64)
}

fn parse_u32(text: &str, what: &str) -> Result<u32, FieldError> {
    let v = parse_count(text, what)?;
    u32::try_from(v).map_err(|_| format!("{what}: \"{}\" is too large", text.trim()))
}

fn parse_bool(text: &str, what: &str) -> Result<bool, FieldError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "y" => Ok(true),
        "off" | "0" | "false" | "no" | "n" => Ok(false),
        other => Err(format!("{what}: \"{other}\" is not on or off")),
    }
}

fn parse_cache_type(text: &str, what: &str) -> Result<CacheType, FieldError> {
    CacheType::parse(text).ok_or_else(|| {
        format!(
            "{what}: unknown cache type \"{}\" (f32, f16, bf16, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl)",
            text.trim()
        )
    })
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

/// Step a scenario field left (−1) or right (+1). Model figures are stepped in `fig`.
/// Returns Ok(false) when the field cannot be stepped (type its value instead).
pub fn step(
    s: &mut Scenario,
    fig: &mut ArchFigures,
    f: Field,
    dir: i32,
) -> Result<bool, FieldError> {
    let c = &mut s.cache;
    match f {
        Field::Context => {
            c.context = if dir > 0 {
                context_step_up(c.context)
            } else {
                context_step_down(c.context)
            };
        }
        Field::Sequences => c.sequences = step_u64(c.sequences, dir, 1, 1),
        Field::TypeK => c.type_k = cycle(&CacheType::ALL, c.type_k, dir),
        Field::TypeV => c.type_v = cycle(&CacheType::ALL, c.type_v, dir),
        Field::FlashAttn => c.flash_attn = !c.flash_attn,
        Field::Ubatch => c.ubatch = halve_double(c.ubatch, dir),
        Field::KvUnified => c.kv_unified = !c.kv_unified,
        Field::SwaFull => c.swa_full = !c.swa_full,
        Field::Other => {
            let v = step_u64(s.other_bytes.value, dir, GIB / 4, 0);
            s.other_bytes =
                Sourced::new(v, Provenance::User, "other allocations A, set by the user");
        }
        Field::GpuLayers => {
            let all = s.model.layer_count() + 1;
            let cur = s.offload.gpu_layers.unwrap_or(all).min(all);
            let next = if dir > 0 {
                (cur + 1).min(all)
            } else {
                cur.saturating_sub(1)
            };
            s.offload.gpu_layers = if next >= all { None } else { Some(next) };
        }
        Field::PromptRows => s.prompt_rows = halve_double(s.prompt_rows, dir),
        Field::ComputePath => {
            let mut paths: Vec<String> = s.machine.compute.iter().map(|c| c.path.clone()).collect();
            if !paths.contains(&s.compute_path) {
                paths.insert(0, s.compute_path.clone());
            }
            let i = paths.iter().position(|p| *p == s.compute_path).unwrap_or(0) as i32;
            let n = paths.len() as i32;
            s.compute_path = paths[((i + dir).rem_euclid(n)) as usize].clone();
        }
        Field::Layers => fig.layers = (fig.layers as i64 + dir as i64).max(1) as u32,
        Field::Heads => fig.head_count = step_per_layer(&fig.head_count, dir),
        Field::KvHeads => fig.head_count_kv = step_per_layer(&fig.head_count_kv, dir),
        Field::KeyLength => {
            let cur = s.model.layers.first().map_or(0, |l| l.key_length);
            fig.key_length = Some(step_u64(cur as u64, dir, 8, 1) as u32);
        }
        Field::ValueLength => {
            let cur = s.model.layers.first().map_or(0, |l| l.value_length);
            fig.value_length = Some(step_u64(cur as u64, dir, 8, 1) as u32);
        }
        Field::Window => {
            let cur = fig.sliding_window.unwrap_or(0);
            fig.sliding_window = Some(step_u64(cur, dir, 256, 0));
        }
        Field::ExpertsUsed => {
            if let Some(m) = fig.moe.as_mut() {
                m.experts_used =
                    (m.experts_used as i64 + dir as i64).clamp(1, m.experts as i64) as u32;
            }
        }
        Field::NativeContext => {
            let cur = fig.native_context.unwrap_or(4096);
            fig.native_context = Some(halve_double(cur, dir));
        }
        Field::Capacity(i) => {
            if let Some(t) = s.machine.tiers.get_mut(i) {
                let v = step_u64(t.capacity.value, dir, GIB, GIB);
                t.capacity = Sourced::new(v, Provenance::User, "edited in the explorer");
            }
        }
        Field::Bandwidth(i) => {
            if let Some(t) = s.machine.tiers.get_mut(i) {
                let v = (t.bandwidth.value.0 + dir as f64 * 1e10).max(1e9);
                t.bandwidth =
                    Sourced::new(BytesPerSec(v), Provenance::User, "edited in the explorer");
            }
        }
        Field::Measured(i) => match s
            .machine
            .tiers
            .get_mut(i)
            .and_then(|t| t.measured_bandwidth.as_mut())
        {
            Some(b) => {
                let v = (b.value.0 + dir as f64 * 1e10).max(1e9);
                *b = Sourced::new(BytesPerSec(v), Provenance::User, "edited in the explorer");
            }
            None => return Ok(false),
        },
        Field::ComputeRate(i) => {
            if let Some(cr) = s.machine.compute.get_mut(i) {
                let v = (cr.rate.value.0 + dir as f64 * 1e12).max(1e12);
                cr.rate = Sourced::new(FlopPerSec(v), Provenance::User, "edited in the explorer");
            }
        }
        Field::KvLoraRank | Field::RopeDim | Field::Experts | Field::Parameters => {
            return Ok(false);
        }
        Field::MachineProfile | Field::Claim => return Ok(false),
    }
    Ok(true)
}

fn step_per_layer(p: &PerLayer, dir: i32) -> PerLayer {
    let cur = p.max();
    PerLayer::Uniform((cur as i64 + dir as i64).max(0) as u32)
}

/// Set a field from typed text. Errors are one line naming the field and the text.
pub fn set(
    s: &mut Scenario,
    fig: &mut ArchFigures,
    f: Field,
    text: &str,
) -> Result<(), FieldError> {
    let what = f.name();
    let t = text.trim();
    let c = &mut s.cache;
    match f {
        Field::Context => c.context = parse_count(t, "context")?,
        Field::Sequences => c.sequences = parse_count(t, "sequences")?,
        Field::TypeK => c.type_k = parse_cache_type(t, "K cache")?,
        Field::TypeV => c.type_v = parse_cache_type(t, "V cache")?,
        Field::FlashAttn => c.flash_attn = parse_bool(t, "flash attention")?,
        Field::Ubatch => c.ubatch = parse_count(t, "n_ubatch")?,
        Field::KvUnified => c.kv_unified = parse_bool(t, "unified KV")?,
        Field::SwaFull => c.swa_full = parse_bool(t, "swa-full")?,
        Field::Other => {
            let v = units::parse_bytes(t).map_err(|e| format!("other allocations A: {}", e.0))?;
            s.other_bytes =
                Sourced::new(v, Provenance::User, "other allocations A, set by the user");
        }
        Field::GpuLayers => {
            s.offload.gpu_layers = if t.eq_ignore_ascii_case("all") {
                None
            } else {
                let n = parse_u32(t, "GPU layers")?;
                if n > s.model.layer_count() {
                    None
                } else {
                    Some(n)
                }
            };
        }
        Field::PromptRows => s.prompt_rows = parse_count(t, "prompt rows")?,
        Field::ComputePath => {
            if t.is_empty() {
                return Err("compute path: type a path name (e.g. fp16)".into());
            }
            s.compute_path = t.to_string();
        }
        Field::Layers => {
            let n = parse_u32(t, "layers")?;
            if n == 0 {
                return Err("layers: a model has at least 1 layer".into());
            }
            if let PerLayer::List(v) = &fig.head_count_kv
                && v.len() != n as usize
            {
                fig.head_count_kv = PerLayer::Uniform(fig.head_count_kv.max());
            }
            if let PerLayer::List(v) = &fig.head_count
                && v.len() != n as usize
            {
                fig.head_count = PerLayer::Uniform(fig.head_count.max());
            }
            if fig
                .sliding_pattern
                .as_ref()
                .is_some_and(|p| p.len() != n as usize)
            {
                fig.sliding_pattern = None;
            }
            fig.layers = n;
        }
        Field::Heads => fig.head_count = PerLayer::Uniform(parse_u32(t, "heads")?),
        Field::KvHeads => fig.head_count_kv = PerLayer::Uniform(parse_u32(t, "KV heads")?),
        Field::KeyLength => fig.key_length = Some(parse_u32(t, "key length")?),
        Field::ValueLength => fig.value_length = Some(parse_u32(t, "value length")?),
        Field::Window => {
            let w = parse_count(t, "window")?;
            fig.sliding_window = if w == 0 { None } else { Some(w) };
        }
        Field::KvLoraRank | Field::RopeDim => {
            let v = parse_u32(t, &what)?;
            let mla = fig.mla.get_or_insert(Mla {
                kv_lora_rank: 512,
                rope_dim: 64,
                key_length_mla: 192,
                value_length_mla: 128,
            });
            if f == Field::KvLoraRank {
                mla.kv_lora_rank = v;
            } else {
                mla.rope_dim = v;
            }
            fig.key_length = Some(mla.kv_lora_rank + mla.rope_dim);
            fig.value_length = Some(mla.kv_lora_rank);
        }
        Field::ExpertsUsed | Field::Experts => {
            // "8 of 128", "8/128" or a single number for the experts used.
            let lower = t.to_ascii_lowercase();
            let parts: Vec<&str> = lower
                .split(['/', ' '])
                .filter(|p| !p.is_empty() && *p != "of")
                .collect();
            let cur = fig.moe.unwrap_or(Moe {
                experts: 0,
                experts_used: 0,
                shared_experts: 0,
            });
            let (used, total) = match parts.as_slice() {
                [u] => (parse_u32(u, "experts used")?, cur.experts),
                [u, n] => (parse_u32(u, "experts used")?, parse_u32(n, "experts")?),
                _ => {
                    return Err(format!(
                        "experts: type \"8 of 128\" (used of total), not \"{t}\""
                    ));
                }
            };
            fig.moe = Some(Moe {
                experts: total,
                experts_used: used,
                shared_experts: cur.shared_experts,
            });
        }
        Field::Parameters => {
            let v = parse_params(t)?;
            s.model.parameters_advertised =
                Some(Sourced::new(v, Provenance::User, "typed in the explorer"));
        }
        Field::NativeContext => {
            let v = parse_count(t, "native context")?;
            fig.native_context = if v == 0 { None } else { Some(v) };
        }
        Field::Capacity(i) => {
            let v = units::parse_bytes(t).map_err(|e| format!("capacity: {}", e.0))?;
            if v == 0 {
                return Err("capacity: a memory tier needs more than 0 bytes".into());
            }
            if let Some(tier) = s.machine.tiers.get_mut(i) {
                tier.capacity = Sourced::new(v, Provenance::User, "edited in the explorer");
            }
        }
        Field::Bandwidth(i) => {
            let v = units::parse_bandwidth(t).map_err(|e| format!("bandwidth: {}", e.0))?;
            if let Some(tier) = s.machine.tiers.get_mut(i) {
                tier.bandwidth = Sourced::new(v, Provenance::User, "edited in the explorer");
            }
        }
        Field::Measured(i) => {
            let v = if t.is_empty() || t.eq_ignore_ascii_case("none") {
                None
            } else {
                Some(
                    units::parse_bandwidth(t)
                        .map_err(|e| format!("measured bandwidth: {}", e.0))?,
                )
            };
            if let Some(tier) = s.machine.tiers.get_mut(i) {
                tier.measured_bandwidth =
                    v.map(|b| Sourced::new(b, Provenance::User, "typed in the explorer"));
            }
        }
        Field::ComputeRate(i) => {
            let v = units::parse_flops(t).map_err(|e| format!("compute rate: {}", e.0))?;
            if let Some(cr) = s.machine.compute.get_mut(i) {
                cr.rate = Sourced::new(v, Provenance::User, "edited in the explorer");
            }
        }
        Field::MachineProfile | Field::Claim => {}
    }
    Ok(())
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
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "parameters: \"{}\" is not a number (e.g. 32.8e9 or 32.8B)",
            t.trim()
        )
    })?;
    let v = v * mult;
    if !v.is_finite() || v < 1.0 || v >= u64::MAX as f64 {
        return Err(format!(
            "parameters: \"{}\" is not a plausible parameter count",
            t.trim()
        ));
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

/// A saved machine's name: the profile's name without an earlier edit note, followed by the
/// edits as they are now (`… (edited: unified 64.000 GiB)`), so the name never keeps a stale
/// "(edited)".
pub fn edited_machine_name(
    base: &str,
    m: &crate::core::scenario::Machine,
    edits: &[Field],
) -> String {
    let base = base.split(" (edited").next().unwrap_or(base).trim_end();
    let tier = |i: usize| m.tiers.get(i);
    let parts: Vec<String> = edits
        .iter()
        .filter_map(|f| match *f {
            Field::Capacity(i) => {
                tier(i).map(|t| format!("{} {}", t.name, units::fmt_gib(t.capacity.value)))
            }
            Field::Bandwidth(i) => {
                tier(i).map(|t| format!("{} {}", t.name, units::fmt_bandwidth(t.bandwidth.value)))
            }
            Field::Measured(i) => tier(i).map(|t| match &t.measured_bandwidth {
                Some(b) => format!("{} measured {}", t.name, units::fmt_bandwidth(b.value)),
                None => format!("{} measured none", t.name),
            }),
            Field::ComputeRate(i) => m
                .compute
                .get(i)
                .map(|c| format!("{} {}", c.path, units::fmt_flops(c.rate.value))),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        base.to_string()
    } else {
        format!("{base} (edited: {})", parts.join(", "))
    }
}
