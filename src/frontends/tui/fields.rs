//! The explorer's editable rows. One table, [`ROWS`], describes every scenario setting the
//! explorer shows (`core::edit::Setting`): its label, the name a prompt and a message use,
//! the pane it sits in and when it is shown, how ←/→ and Space step it ([`Step`]), how typed
//! text becomes its `Edit` (`parse`), the text a prompt opens on (`text`), and how it reads
//! its value and provenance from the workspace (`show`). The panes, prompts and keys read the
//! table; nothing else in the explorer matches on a setting. Pure: rows and edits are
//! computed from the workspace; `App` gives the edits to the workspace.
//!
//! # Adding a setting
//!
//! A new scenario setting touches three source files:
//!
//! 1. `src/core/edit.rs`: the `Edit` variant, its `Setting` variant, the arm of
//!    `Edit::setting` and the arm of `apply` that changes the scenario (`Setting::at` and
//!    `Setting::index` too if it is per tier or per compute rate).
//! 2. this file: one [`Descriptor`] in [`ROWS`], placed where the row is shown (table order is
//!    pane order). Start from [`ROW`] (`..ROW` fills the rest) and give `setting`, `label`,
//!    `name` (the prompt), `short` (messages), `step`, `show`, `text` and `parse`; `pane`,
//!    `per`, `shown` and `absent` when they differ from a cache-pane row shown always.
//!    `text` must read back through `parse` to the same value (a prompt opened and accepted
//!    unchanged changes nothing), and `parse` must make the edit the CLI flag makes.
//! 3. `src/build.rs`: the flag in `ScenarioOptions` and the `Edit` it pushes in `edits`.
//!
//! Then add a `Step` to `tests/edit_paths.rs` (flag and typed text side by side): the CLI and
//! the explorer must give the same JSON report, byte for byte.

mod parse;

use crate::core::cache::CacheType;
use crate::core::edit::{self, Edit, Setting};
use crate::core::gpu_layers::MaxGpuLayers;
use crate::core::mlx::Runtime;
use crate::core::model::{ArchFigures, Attention, ModelShape, PerLayer};
use crate::core::placement::SplitMode;
use crate::core::scenario::{Scenario, Tier};
use crate::core::units::{self, BytesPerSec, FlopPerSec, GIB, Provenance};
use crate::workspace::Workspace;
pub use parse::{
    FieldError, context_step_down, context_step_up, halve_or_double_context, parse_params,
};
use parse::{
    bytes_text, clamp_u32, halve_double, parse_bool, parse_cache_type, parse_count, parse_split,
    parse_u32, rate_text, short_decimal, step_u64, tensor_split_text,
};

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

/// What a row of a pane (or a prompt) is for: a scenario setting, or one of the two rows that
/// are not one (the machine picker, the claim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// A scenario setting, described by its row in [`ROWS`].
    Setting(Setting),
    /// Which machine profile (a switch, not an edit).
    MachineProfile,
    /// The claimed tokens/s (checked against the report, not a setting).
    Claim,
}

impl From<Setting> for Field {
    fn from(s: Setting) -> Field {
        Field::Setting(s)
    }
}

impl Field {
    /// What the field is called in prompts.
    pub fn name(self) -> &'static str {
        match self {
            Field::Setting(s) => descriptor(s).map_or("value", |d| d.name),
            Field::MachineProfile => "machine profile id",
            Field::Claim => "claimed or observed tokens/s",
        }
    }

    /// The short name used in messages about a typed value.
    pub fn short(self) -> &'static str {
        match self {
            Field::Setting(s) => descriptor(s).map_or("value", |d| d.short),
            Field::MachineProfile => "machine profile",
            Field::Claim => "claim",
        }
    }

    /// The scenario setting the field edits (`None`: the machine picker, the claim).
    pub fn setting(self) -> Option<Setting> {
        match self {
            Field::Setting(s) => Some(s),
            Field::MachineProfile | Field::Claim => None,
        }
    }
}

/// How ←/→ and Space change a row's value. Every step goes through the row's own edit, so a
/// step and a typed value are checked alike.
#[derive(Clone, Copy)]
pub enum Step {
    /// Not stepped: Enter types the value.
    Typed,
    /// Space, ← and → switch it on and off (`text` is "on" or "off"; `parse` takes both).
    Toggle,
    /// ← and → go to the previous or next choice, as `parse` takes it (the current value is
    /// found by its `text`).
    Cycle(fn(&Ctx) -> Vec<String>),
    /// ← (−1) and → (+1) make this edit; `None` when there is nothing to step (Enter types).
    By(fn(&Ctx, i32) -> Option<Edit>),
}

/// Which rows a descriptor makes in its pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// One row.
    One,
    /// One row per memory tier of the machine (under the tier's heading).
    Tier,
    /// One row per compute rate of the machine (under the "compute" heading).
    Compute,
}

/// What a row reads: the scenario and its figures, which setting (with its tier or compute
/// index), whether the user set it, and the model's provenance before any edit.
pub struct Ctx<'a> {
    /// The current scenario.
    pub s: &'a Scenario,
    /// Its model figures.
    pub fig: &'a ArchFigures,
    /// The setting, with its index.
    pub setting: Setting,
    /// The workspace records the setting as set by the user.
    pub edited: bool,
    /// The model figures' provenance before edits.
    pub base: Provenance,
    /// The most GPU layers that fit (`n` jumps there).
    pub max_gpu_layers: Option<&'a MaxGpuLayers>,
    /// With the placement left to llama.cpp (`-ngl auto`, `-fit on`), the whole layers the
    /// bounds are evaluated at (`compare::evaluation`: the `-fit` plan's, or the most that fit).
    pub placed_gpu_layers: Option<u32>,
    /// With `-c 0` (the context left to llama.cpp), the context per sequence the bounds are
    /// evaluated at (`-fit`'s, or the trained context).
    pub placed_context: Option<u64>,
    /// The runtimes that apply to what is open (the runtime row cycles through them).
    pub runtimes: Vec<Runtime>,
}

/// What decides whether a row is shown: the scenario (a row's `shown` reads it as a
/// `&Scenario`, through `Deref`) and the runtimes that apply to the open artifact.
pub struct Applies<'a> {
    /// The current scenario.
    pub scenario: &'a Scenario,
    /// The runtimes that apply to what is open (`Workspace::runtimes`).
    pub runtimes: &'a [Runtime],
}

impl std::ops::Deref for Applies<'_> {
    type Target = Scenario;
    fn deref(&self) -> &Scenario {
        self.scenario
    }
}

impl Applies<'_> {
    /// The figures shown are llama.cpp's.
    pub fn llama_cpp(&self) -> bool {
        self.scenario.runtime == Runtime::LlamaCpp
    }
    /// The figures shown are MLX-LM's.
    pub fn mlx_lm(&self) -> bool {
        self.scenario.runtime == Runtime::MlxLm
    }
}

impl<'a> Ctx<'a> {
    /// What the row of `setting` reads from the workspace.
    pub fn of(ws: &'a Workspace, setting: Setting) -> Ctx<'a> {
        Ctx {
            s: ws.scenario(),
            fig: ws.figures(),
            setting,
            edited: ws.is_edited(setting),
            base: ws.model_base(),
            max_gpu_layers: ws.max_gpu_layers(),
            placed_gpu_layers: crate::compare::left_to_fit(ws.scenario())
                .then(|| ws.report().layout.gpu_layers),
            placed_context: ws
                .scenario()
                .offload
                .context_auto
                .then(|| ws.report().inputs.cache.context),
            runtimes: ws.runtimes(),
        }
    }
    fn index(&self) -> usize {
        self.setting.index().unwrap_or(0)
    }
    fn tier(&self) -> Option<&'a Tier> {
        self.s.machine.tiers.get(self.index())
    }
    /// `p`, or `user` once the user set the setting.
    fn prov(&self, p: Provenance) -> Tag {
        Tag::Prov(if self.edited { Provenance::User } else { p })
    }
}

/// A row's value as shown: the text, a tag at the right, a slider, and a label of its own
/// (a compute rate is labelled by its path).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Shown {
    /// The value as text.
    pub value: String,
    /// Right tag.
    pub tag: Option<Tag>,
    /// A slider drawn after the value.
    pub slider: Option<SliderPos>,
    /// A label in place of the descriptor's.
    pub label: Option<String>,
}

fn shown(value: impl Into<String>) -> Shown {
    Shown {
        value: value.into(),
        ..Shown::default()
    }
}

impl Shown {
    fn tag(mut self, t: Tag) -> Shown {
        self.tag = Some(t);
        self
    }
    fn tag_if(self, cond: bool, t: Tag) -> Shown {
        if cond { self.tag(t) } else { self }
    }
}

/// One setting's row: everything the explorer knows about it. See the module header for how
/// to add one.
pub struct Descriptor {
    /// The setting (index 0 for a per-tier or per-compute row).
    pub setting: Setting,
    /// The pane the row sits in.
    pub pane: Pane,
    /// One row, or one per tier or compute rate.
    pub per: Per,
    /// The label at the left of the row.
    pub label: &'static str,
    /// What a prompt calls it (with an example or the values it takes).
    pub name: &'static str,
    /// What a message about a typed value calls it.
    pub short: &'static str,
    /// How ←/→ and Space change it.
    pub step: Step,
    /// The row is shown for this scenario and the runtimes that apply (GPU layers only with
    /// more than one tier, llama.cpp's rows only while its figures are shown…).
    pub shown: fn(&Applies) -> bool,
    /// An info row (label, value) shown in its place when it is not (MLA: none).
    pub absent: Option<(&'static str, &'static str)>,
    /// The value, tag and slider as shown.
    pub show: fn(&Ctx) -> Shown,
    /// The value as a prompt opens on it, read back by `parse` to the same value (empty when
    /// there is none).
    pub text: fn(&Ctx) -> String,
    /// The edit typed text makes; the `&str` after the text is `short`, for messages.
    pub parse: fn(&Ctx, &str, &'static str) -> Result<Edit, FieldError>,
}

fn always(_: &Applies) -> bool {
    true
}
/// A llama.cpp setting: shown while the figures are llama.cpp's.
fn llama_cpp(a: &Applies) -> bool {
    a.llama_cpp()
}
/// An MLX-LM setting: shown while the figures are MLX-LM's.
fn mlx_lm(a: &Applies) -> bool {
    a.mlx_lm()
}
/// A llama.cpp placement setting: shown with more than one tier.
fn several_tiers(a: &Applies) -> bool {
    a.llama_cpp() && a.machine.tiers.len() > 1
}

/// The defaults a row in [`ROWS`] starts from (`..ROW`): a cache-pane row, shown always, one
/// per scenario, typed only.
pub const ROW: Descriptor = Descriptor {
    setting: Setting::Context,
    pane: Pane::Cache,
    per: Per::One,
    label: "",
    name: "",
    short: "",
    step: Step::Typed,
    shown: always,
    absent: None,
    show: |_| Shown::default(),
    text: |_| String::new(),
    parse: |_, _, w| Err(FieldError::Empty(w)),
};

fn cache_type_names(_: &Ctx) -> Vec<String> {
    CacheType::ALL
        .iter()
        .map(|t| t.name().to_string())
        .collect()
}

fn uniform_text(p: &PerLayer) -> String {
    match p {
        PerLayer::Uniform(v) => v.to_string(),
        PerLayer::List(v) => {
            let first = v.first().copied().unwrap_or(0);
            if v.iter().all(|x| *x == first) {
                first.to_string()
            } else {
                String::new()
            }
        }
    }
}

fn first_key_length(s: &Scenario) -> u32 {
    s.model.layers.first().map_or(0, |l| l.key_length)
}
fn first_value_length(s: &Scenario) -> u32 {
    s.model.layers.first().map_or(0, |l| l.value_length)
}
/// A head size's provenance: `user` once set, `derived` when the file states none.
fn dim_tag(c: &Ctx, explicit: Option<u32>) -> Tag {
    Tag::Prov(if c.edited {
        Provenance::User
    } else if explicit.is_none() {
        Provenance::Derived
    } else {
        c.base
    })
}

fn rate_step(v: f64, dir: i32) -> BytesPerSec {
    BytesPerSec((v + dir as f64 * 1e10).max(1e9))
}

/// Every setting the explorer shows, in pane order. One row per setting; see the module
/// header for how to add one.
pub static ROWS: &[Descriptor] = &[
    // ── Cache & run ──
    Descriptor {
        setting: Setting::Runtime,
        label: "runtime",
        name: "runtime (llama.cpp or MLX-LM)",
        short: "runtime",
        shown: |a| a.runtimes.len() > 1,
        step: Step::Cycle(|c| c.runtimes.iter().map(|r| r.name().to_string()).collect()),
        show: |c| shown(c.s.runtime.name()).tag(Tag::Note("both apply".into())),
        text: |c| c.s.runtime.name().to_string(),
        parse: |_, t, w| {
            Runtime::parse(t).map(Edit::Runtime).ok_or_else(|| {
                FieldError::Unit(w, format!("\"{}\": expected llama.cpp or MLX-LM", t.trim()))
            })
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::Context,
        label: "context",
        name: "context length (tokens per sequence)",
        short: "context",
        step: Step::By(|c, dir| {
            // from -c 0: a step from the context the bounds are evaluated at
            let n = c.placed_context.unwrap_or(c.s.cache.context);
            Some(Edit::Context(if dir > 0 {
                context_step_up(n)
            } else {
                context_step_down(n)
            }))
        }),
        show: |c| {
            // -c 0: the context llama.cpp's -fit chose, which the bounds are evaluated at
            let (s, n) = (c.s, c.placed_context.unwrap_or(c.s.cache.context));
            let top = context_slider_top(s) as f64;
            let native = s.model.native_context;
            let text = match c.placed_context {
                Some(_) => format!("auto: {}", units::fmt_tokens(n)),
                None => units::fmt_tokens(n),
            };
            Shown {
                slider: Some(SliderPos {
                    fraction: log_fraction(n as f64, top),
                    marker: native.map(|m| log_fraction(m as f64, top)),
                }),
                ..shown(text)
            }
            .tag_if(native.is_some_and(|m| n > m), Tag::Warn("> native".into()))
        },
        text: |c| c.s.cache.context.to_string(),
        parse: |_, t, w| Ok(Edit::Context(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::KvBits,
        label: "kv bits",
        name: "MLX-LM quantized KV cache (--kv-bits 2, 4 or 8; none = the model's dtype)",
        short: "--kv-bits",
        shown: mlx_lm,
        step: Step::Cycle(|_| ["none", "8", "4", "2"].map(String::from).to_vec()),
        show: |c| match c.s.mlx_lm.kv_bits {
            None => shown("none (model dtype)"),
            Some(b) => shown(format!("{b} bits")).tag(c.prov(Provenance::User)),
        },
        text: |c| c.s.mlx_lm.kv_bits.map_or("none".into(), |b| b.to_string()),
        parse: |_, t, w| {
            if t.is_empty() || t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("off") {
                return Ok(Edit::KvBits(None));
            }
            let b = parse_count(t, w)?;
            crate::core::mlx::check_kv_bits(b).map_err(|e| FieldError::Unit(w, e))?;
            Ok(Edit::KvBits(Some(b)))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::KvGroupSize,
        label: "kv group",
        name: "MLX-LM KV quantization group (--kv-group-size 32, 64 or 128)",
        short: "--kv-group-size",
        shown: mlx_lm,
        step: Step::Cycle(|_| ["32", "64", "128"].map(String::from).to_vec()),
        show: |c| {
            shown(c.s.mlx_lm.kv_group_size.to_string()).tag_if(
                c.s.mlx_lm.kv_bits.is_none(),
                Tag::Note("no --kv-bits".into()),
            )
        },
        text: |c| c.s.mlx_lm.kv_group_size.to_string(),
        parse: |_, t, w| {
            let g = parse_count(t, w)?;
            crate::core::mlx::check_kv_group_size(g).map_err(|e| FieldError::Unit(w, e))?;
            Ok(Edit::KvGroupSize(g))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::QuantizedKvStart,
        label: "kv q start",
        name: "MLX-LM quantize the cache from this many tokens (--quantized-kv-start)",
        short: "--quantized-kv-start",
        shown: mlx_lm,
        show: |c| {
            shown(units::fmt_tokens(c.s.mlx_lm.quantized_kv_start)).tag_if(
                c.s.mlx_lm.kv_bits.is_none(),
                Tag::Note("no --kv-bits".into()),
            )
        },
        text: |c| c.s.mlx_lm.quantized_kv_start.to_string(),
        parse: |_, t, w| Ok(Edit::QuantizedKvStart(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::MaxKvSize,
        label: "max kv",
        name: "MLX-LM rotating cache of N tokens (--max-kv-size N; none = no limit)",
        short: "--max-kv-size",
        shown: mlx_lm,
        show: |c| match c.s.mlx_lm.max_kv_size {
            None => shown("none"),
            Some(n) => shown(units::fmt_tokens(n)).tag(c.prov(Provenance::User)),
        },
        text: |c| {
            c.s.mlx_lm
                .max_kv_size
                .map_or("none".into(), |n| n.to_string())
        },
        parse: |_, t, w| {
            if t.is_empty() || t.eq_ignore_ascii_case("none") {
                return Ok(Edit::MaxKvSize(None));
            }
            Ok(Edit::MaxKvSize(Some(parse_count(t, w)?)))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::Sequences,
        label: "sequences",
        name: "sequences",
        short: "sequences",
        shown: llama_cpp,
        step: Step::By(|c, dir| Some(Edit::Sequences(step_u64(c.s.cache.sequences, dir, 1, 1)))),
        show: |c| shown(c.s.cache.sequences.to_string()),
        text: |c| c.s.cache.sequences.to_string(),
        parse: |_, t, w| Ok(Edit::Sequences(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::CacheTypeK,
        label: "K cache",
        name: "K cache type",
        short: "K cache",
        shown: llama_cpp,
        step: Step::Cycle(cache_type_names),
        show: |c| shown(c.s.cache.type_k.name()),
        text: |c| c.s.cache.type_k.name().to_string(),
        parse: |_, t, w| Ok(Edit::CacheTypeK(parse_cache_type(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::CacheTypeV,
        label: "V cache",
        name: "V cache type",
        short: "V cache",
        shown: llama_cpp,
        step: Step::Cycle(cache_type_names),
        show: |c| {
            let cache = &c.s.cache;
            let r = shown(cache.type_v.name());
            if c.s.model.mla.is_some() {
                r.tag(Tag::Note("view of K".into()))
            } else {
                let needs_fa = cache.type_v.is_quantized() && !cache.flash_attn;
                r.tag_if(needs_fa, Tag::Warn("needs -fa".into()))
            }
        },
        text: |c| c.s.cache.type_v.name().to_string(),
        parse: |_, t, w| Ok(Edit::CacheTypeV(parse_cache_type(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::FlashAttn,
        label: "flash attn",
        name: "flash attention (on/off)",
        short: "flash attention",
        shown: llama_cpp,
        step: Step::Toggle,
        show: |c| shown(on_off(c.s.cache.flash_attn)),
        text: |c| on_off(c.s.cache.flash_attn),
        parse: |_, t, w| Ok(Edit::FlashAttn(parse_bool(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Ubatch,
        label: "n_ubatch",
        name: "n_ubatch",
        short: "n_ubatch",
        shown: llama_cpp,
        step: Step::By(|c, dir| Some(Edit::Ubatch(halve_double(c.s.cache.ubatch, dir)))),
        show: |c| shown(c.s.cache.ubatch.to_string()),
        text: |c| c.s.cache.ubatch.to_string(),
        parse: |_, t, w| Ok(Edit::Ubatch(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::KvUnified,
        label: "unified KV",
        name: "unified KV (on/off)",
        short: "unified KV",
        shown: llama_cpp,
        step: Step::Toggle,
        show: |c| shown(on_off(c.s.cache.kv_unified)),
        text: |c| on_off(c.s.cache.kv_unified),
        parse: |_, t, w| Ok(Edit::KvUnified(parse_bool(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::SwaFull,
        label: "swa-full",
        name: "swa-full (on/off)",
        short: "swa-full",
        shown: llama_cpp,
        step: Step::Toggle,
        show: |c| {
            shown(on_off(c.s.cache.swa_full)).tag_if(
                c.s.model.sliding_window().is_none(),
                Tag::Note("no SWA".into()),
            )
        },
        text: |c| on_off(c.s.cache.swa_full),
        parse: |_, t, w| Ok(Edit::SwaFull(parse_bool(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Overhead,
        label: "other A",
        name: "other allocations A (e.g. 2 GiB)",
        short: "other allocations A",
        shown: llama_cpp,
        step: Step::By(|c, dir| {
            Some(Edit::Overhead(step_u64(
                c.s.other_bytes.value,
                dir,
                GIB / 4,
                0,
            )))
        }),
        show: |c| {
            let a = &c.s.other_bytes;
            let v = if a.value == 0 {
                "0 bytes".to_string()
            } else {
                units::fmt_gib(a.value)
            };
            shown(v).tag(Tag::Prov(a.provenance))
        },
        text: |c| bytes_text(c.s.other_bytes.value),
        parse: |_, t, w| {
            Ok(Edit::Overhead(
                units::parse_bytes(t).map_err(|e| FieldError::Unit(w, e.0))?,
            ))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::GpuLayers,
        label: "GPU layers",
        name: "GPU layers (-ngl; \"all\")",
        short: "GPU layers",
        shown: several_tiers,
        step: Step::By(|c, dir| {
            let all = crate::core::tiers::all_gpu_layers(&c.s.model);
            // from -ngl auto: a step from the layers -fit placed
            let cur = (c.s.offload.gpu_layers.or(c.placed_gpu_layers))
                .unwrap_or(all)
                .min(all);
            let next = if dir > 0 {
                (cur + 1).min(all)
            } else {
                cur.saturating_sub(1)
            };
            Some(Edit::GpuLayers(if next >= all { None } else { Some(next) }))
        }),
        show: |c| {
            let all = crate::core::tiers::all_gpu_layers(&c.s.model);
            let v = match (c.placed_gpu_layers, c.s.offload.gpu_layers) {
                // -ngl auto: the layers -fit placed, which the bounds are evaluated at
                (Some(n), _) if n < all => format!("auto: {n} of {all}"),
                (Some(_), _) => format!("auto: all ({all})"),
                (None, Some(n)) if n < all => format!("{n} of {all}"),
                _ => format!("all ({all})"),
            };
            let r = shown(v);
            match c.max_gpu_layers {
                None => r,
                // the placed layers are the most that fit: nothing to add
                Some(m) if c.placed_gpu_layers.is_some() && m.gpu_layers == c.placed_gpu_layers => {
                    r
                }
                Some(m) => r.tag(match m.gpu_layers {
                    Some(n) if n >= m.all_layers => Tag::Note("all fit".into()),
                    Some(n) => Tag::Note(format!("max {n} (n)")),
                    None => Tag::Warn("none fit".into()),
                }),
            }
        },
        text: |c| (c.s.offload.gpu_layers).map_or_else(|| "all".to_string(), |n| n.to_string()),
        parse: |c, t, w| {
            Ok(Edit::GpuLayers(if t.eq_ignore_ascii_case("all") {
                None
            } else {
                let n = parse_u32(t, w)?;
                // Above L every layer is offloaded: shown as "all".
                (n <= c.s.model.layer_count()).then_some(n)
            }))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::TensorSplit,
        label: "split -ts",
        name: "tensor split (-ts 3,1; \"auto\" = by memory)",
        short: "tensor split",
        shown: |s| several_tiers(s) && s.machine.accelerators().len() > 1,
        show: |c| shown(tensor_split_text(c.s)),
        text: |c| tensor_split_text(c.s),
        parse: |_, t, w| Ok(Edit::TensorSplit(parse_split(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::NoKvOffload,
        label: "KV on host",
        name: "KV in host memory (-nkvo; on/off)",
        short: "KV in host memory",
        shown: several_tiers,
        step: Step::Toggle,
        show: |c| shown(on_off(c.s.offload.no_kv_offload)),
        text: |c| on_off(c.s.offload.no_kv_offload),
        parse: |_, t, w| Ok(Edit::NoKvOffload(parse_bool(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Fit,
        label: "-fit",
        name: "llama.cpp -fit (on/off: fit -ngl and -ot to the devices)",
        short: "-fit",
        shown: several_tiers,
        step: Step::Toggle,
        show: |c| shown(on_off(c.s.offload.fit)),
        text: |c| on_off(c.s.offload.fit),
        parse: |_, t, w| Ok(Edit::Fit(parse_bool(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::FitTarget,
        label: "margin -fitt",
        name: "-fit margin per device, MiB (-fitt 1024, or 1024,2048 per device; default 1024)",
        short: "-fit margin",
        shown: several_tiers,
        show: |c| shown(fit_margin_text(c.s)),
        text: |c| fit_margin_text(c.s),
        parse: |_, t, w| {
            let t = t.trim();
            if t.is_empty() || t.eq_ignore_ascii_case("default") {
                return Ok(Edit::FitTarget(Vec::new()));
            }
            let mut v = Vec::new();
            for part in t.split(',') {
                let n = parse_count(part, w)?;
                v.push(n);
            }
            Ok(Edit::FitTarget(v))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::SplitMode,
        label: "split -sm",
        name: "split mode (-sm layer or none)",
        short: "split mode",
        shown: |s| several_tiers(s) && s.machine.accelerators().len() > 1,
        step: Step::Cycle(|_| vec!["layer".into(), "none".into()]),
        show: |c| shown(edit::split_mode_label(c.s.offload.split_mode)),
        text: |c| edit::split_mode_label(c.s.offload.split_mode).to_string(),
        parse: |_, t, w| {
            match edit::parse_split_mode(t.trim()) {
            Some(SplitMode::Row) => Err(FieldError::Unit(
                w,
                "row split buffers are not modelled, and llama.cpp's -fit refuses -sm row too (use layer or none)".into(),
            )),
            Some(m) => Ok(Edit::SplitMode(m)),
            None => Err(FieldError::Unit(w, format!("\"{}\": expected layer or none", t.trim()))),
        }
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::MainGpu,
        label: "main -mg",
        name: "main GPU (-mg, the device -sm none keeps)",
        short: "main GPU",
        shown: |s| several_tiers(s) && s.machine.accelerators().len() > 1,
        step: Step::By(|c, dir| {
            let n = c.s.machine.accelerators().len() as u32;
            let cur = c.s.offload.main_gpu;
            let next = if dir > 0 {
                cur + 1
            } else {
                cur.checked_sub(1)?
            };
            (next < n).then_some(Edit::MainGpu(next))
        }),
        show: |c| shown(c.s.offload.main_gpu.to_string()),
        text: |c| c.s.offload.main_gpu.to_string(),
        parse: |_, t, w| Ok(Edit::MainGpu(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::NCpuMoe,
        label: "moe -ncmoe",
        name: "experts of the first N layers in host memory (--n-cpu-moe N; 0 = none)",
        short: "--n-cpu-moe",
        shown: |s| several_tiers(s) && s.model.moe.is_some(),
        step: Step::By(|c, dir| {
            let cur = c.s.offload.n_cpu_moe;
            let next = if dir > 0 {
                cur + 1
            } else {
                cur.checked_sub(1)?
            };
            (next <= c.s.model.layer_count()).then_some(Edit::NCpuMoe(next))
        }),
        show: |c| shown(c.s.offload.n_cpu_moe.to_string()),
        text: |c| c.s.offload.n_cpu_moe.to_string(),
        parse: |_, t, w| Ok(Edit::NCpuMoe(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::OverrideTensor,
        label: "-ot",
        name: "tensor overrides (-ot PATTERN=BUFFER_TYPE,…; empty = none)",
        short: "-ot",
        shown: several_tiers,
        show: |c| {
            shown(if c.s.offload.overrides.is_empty() {
                "none".to_string()
            } else {
                c.s.offload.overrides.join(",")
            })
        },
        text: |c| c.s.offload.overrides.join(","),
        parse: |_, t, w| {
            let t = t.trim();
            if t.is_empty() || t.eq_ignore_ascii_case("none") {
                return Ok(Edit::OverrideTensor(Vec::new()));
            }
            edit::check_override_syntax(t).map_err(|e| FieldError::Unit(w, e))?;
            Ok(Edit::OverrideTensor(vec![t.to_string()]))
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::PromptRows,
        label: "prompt S",
        name: "prompt rows S",
        short: "prompt rows",
        shown: llama_cpp,
        step: Step::By(|c, dir| Some(Edit::PromptRows(halve_double(c.s.prompt_rows, dir)))),
        show: |c| shown(units::fmt_tokens(c.s.prompt_rows)),
        text: |c| c.s.prompt_rows.to_string(),
        parse: |_, t, w| Ok(Edit::PromptRows(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::ComputePath,
        label: "compute",
        name: "compute path",
        short: "compute path",
        shown: llama_cpp,
        step: Step::Cycle(|c| {
            let mut paths: Vec<String> = (c.s.machine.compute.iter())
                .map(|r| r.path.clone())
                .collect();
            if !paths.contains(&c.s.compute_path) {
                paths.insert(0, c.s.compute_path.clone());
            }
            paths
        }),
        show: |c| {
            let no_rate = c.s.machine.compute_for(&c.s.compute_path).is_none();
            shown(c.s.compute_path.clone()).tag_if(no_rate, Tag::Note("no rate".into()))
        },
        text: |c| c.s.compute_path.clone(),
        parse: |_, t, _| {
            if t.is_empty() {
                return Err(FieldError::NoComputePath);
            }
            Ok(Edit::ComputePath(t.to_string()))
        },
        ..ROW
    },
    // ── Model ──
    Descriptor {
        setting: Setting::Layers,
        pane: Pane::Model,
        label: "layers",
        name: "layers",
        short: "layers",
        step: Step::By(|c, dir| {
            Some(Edit::Layers(
                (c.fig.layers as i64 + dir as i64).max(1) as u32
            ))
        }),
        show: |c| shown(c.fig.layers.to_string()).tag(c.prov(c.base)),
        text: |c| c.fig.layers.to_string(),
        parse: |_, t, w| Ok(Edit::Layers(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Heads,
        pane: Pane::Model,
        label: "heads",
        name: "query heads",
        short: "heads",
        step: Step::By(|c, dir| {
            Some(Edit::Heads(
                (c.fig.head_count.max() as i64 + dir as i64).max(0) as u32,
            ))
        }),
        show: |c| shown(per_layer_text(&c.fig.head_count)).tag(c.prov(c.base)),
        text: |c| uniform_text(&c.fig.head_count),
        parse: |_, t, w| Ok(Edit::Heads(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::KvHeads,
        pane: Pane::Model,
        label: "KV heads",
        name: "KV heads",
        short: "KV heads",
        step: Step::By(|c, dir| {
            Some(Edit::KvHeads(
                (c.fig.head_count_kv.max() as i64 + dir as i64).max(0) as u32,
            ))
        }),
        show: |c| shown(per_layer_text(&c.fig.head_count_kv)).tag(c.prov(c.base)),
        text: |c| uniform_text(&c.fig.head_count_kv),
        parse: |_, t, w| Ok(Edit::KvHeads(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::KeyLength,
        pane: Pane::Model,
        label: "key dim",
        name: "key length",
        short: "key length",
        step: Step::By(|c, dir| {
            let cur = first_key_length(c.s) as u64;
            Some(Edit::KeyLength(clamp_u32(step_u64(cur, dir, 8, 1))))
        }),
        show: |c| shown(first_key_length(c.s).to_string()).tag(dim_tag(c, c.fig.key_length)),
        text: |c| (c.s.model.layers.first()).map_or_else(String::new, |l| l.key_length.to_string()),
        parse: |_, t, w| Ok(Edit::KeyLength(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::ValueLength,
        pane: Pane::Model,
        label: "value dim",
        name: "value length",
        short: "value length",
        step: Step::By(|c, dir| {
            let cur = first_value_length(c.s) as u64;
            Some(Edit::ValueLength(clamp_u32(step_u64(cur, dir, 8, 1))))
        }),
        show: |c| shown(first_value_length(c.s).to_string()).tag(dim_tag(c, c.fig.value_length)),
        text: |c| {
            (c.s.model.layers.first()).map_or_else(String::new, |l| l.value_length.to_string())
        },
        parse: |_, t, w| Ok(Edit::ValueLength(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Window,
        pane: Pane::Model,
        label: "window",
        name: "sliding window (tokens; 0 = none)",
        short: "window",
        step: Step::By(|c, dir| {
            Some(Edit::Window(step_u64(
                c.fig.sliding_window.unwrap_or(0),
                dir,
                256,
                0,
            )))
        }),
        show: |c| shown(window_value(&c.s.model, c.fig)).tag(c.prov(c.base)),
        text: |c| c.fig.sliding_window.unwrap_or(0).to_string(),
        parse: |_, t, w| Ok(Edit::Window(parse_count(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::KvLoraRank,
        pane: Pane::Model,
        label: "MLA rank",
        name: "MLA kv_lora_rank",
        short: "MLA kv_lora_rank",
        shown: |s| s.model.mla.is_some(),
        absent: Some(("MLA", "none")),
        show: |c| {
            let v = c.s.model.mla.map_or(0, |m| m.kv_lora_rank);
            shown(v.to_string()).tag(c.prov(c.base))
        },
        text: |c| (c.fig.mla).map_or_else(String::new, |m| m.kv_lora_rank.to_string()),
        parse: |_, t, w| Ok(Edit::KvLoraRank(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::RopeDim,
        pane: Pane::Model,
        label: "MLA rope",
        name: "MLA rope dims",
        short: "MLA rope dims",
        shown: |s| s.model.mla.is_some(),
        show: |c| {
            let v = c.s.model.mla.map_or(0, |m| m.rope_dim);
            shown(v.to_string()).tag(c.prov(c.base))
        },
        text: |c| (c.fig.mla).map_or_else(String::new, |m| m.rope_dim.to_string()),
        parse: |_, t, w| Ok(Edit::RopeDim(parse_u32(t, w)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::Experts,
        pane: Pane::Model,
        label: "experts",
        name: "experts used per token",
        short: "experts",
        shown: |s| s.model.moe.is_some(),
        absent: Some(("experts", "dense")),
        step: Step::By(|c, dir| {
            let m = c.fig.moe?;
            Some(Edit::Experts {
                used: (m.experts_used as i64 + dir as i64).clamp(1, m.experts as i64) as u32,
                total: m.experts,
            })
        }),
        show: |c| {
            let (used, total) =
                c.s.model
                    .moe
                    .map_or((0, 0), |m| (m.experts_used, m.experts));
            shown(format!("{used} of {total}")).tag(c.prov(c.base))
        },
        text: |c| {
            (c.fig.moe).map_or_else(String::new, |m| {
                format!("{} of {}", m.experts_used, m.experts)
            })
        },
        parse: |c, t, _| {
            // "8 of 128", "8/128" or a single number for the experts used.
            let lower = t.to_ascii_lowercase();
            let parts: Vec<&str> = (lower.split(['/', ' ']))
                .filter(|p| !p.is_empty() && *p != "of")
                .collect();
            let total = c.fig.moe.map_or(0, |m| m.experts);
            match parts.as_slice() {
                [u] => Ok(Edit::Experts {
                    used: parse_u32(u, "experts used")?,
                    total,
                }),
                [u, n] => Ok(Edit::Experts {
                    used: parse_u32(u, "experts used")?,
                    total: parse_u32(n, "experts")?,
                }),
                _ => Err(FieldError::Experts(t.into())),
            }
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::Parameters,
        pane: Pane::Model,
        label: "parameters",
        name: "parameters",
        short: "parameters",
        show: |c| match &c.s.model.parameters_advertised {
            Some(p) => shown(units::group_digits(p.value as u128)).tag(c.prov(p.provenance)),
            None => match c.s.inventory.as_ref().map(|i| i.parameters) {
                Some(n) if n > 0 => {
                    shown(units::group_digits(n as u128)).tag(Tag::Note("counted".into()))
                }
                _ => shown("unknown"),
            },
        },
        text: |c| {
            (c.s.model.parameters_advertised.as_ref())
                .map(|p| p.value)
                .or_else(|| {
                    (c.s.inventory.as_ref())
                        .map(|i| i.parameters)
                        .filter(|n| *n > 0)
                })
                .map_or_else(String::new, |n| n.to_string())
        },
        parse: |_, t, _| Ok(Edit::Parameters(parse_params(t)?)),
        ..ROW
    },
    Descriptor {
        setting: Setting::NativeContext,
        pane: Pane::Model,
        label: "native ctx",
        name: "native context",
        short: "native context",
        step: Step::By(|c, dir| {
            Some(Edit::NativeContext(halve_double(
                c.fig.native_context.unwrap_or(4096),
                dir,
            )))
        }),
        show: |c| {
            let v =
                c.s.model
                    .native_context
                    .map_or("unknown".into(), units::fmt_tokens);
            shown(v).tag(c.prov(c.base))
        },
        text: |c| (c.fig.native_context).map_or_else(String::new, |n| n.to_string()),
        parse: |_, t, w| Ok(Edit::NativeContext(parse_count(t, w)?)),
        ..ROW
    },
    // ── Machine: per tier, then per compute rate ──
    Descriptor {
        setting: Setting::Capacity(0),
        pane: Pane::Machine,
        per: Per::Tier,
        label: "capacity",
        name: "capacity (e.g. 48 GiB)",
        short: "capacity",
        step: Step::By(|c, dir| {
            Some(Edit::Capacity {
                tier: c.index(),
                bytes: step_u64(c.tier()?.capacity.value, dir, GIB, GIB),
            })
        }),
        show: |c| match c.tier() {
            Some(t) => shown(units::fmt_gib(t.capacity.value)).tag(c.prov(t.capacity.provenance)),
            None => Shown::default(),
        },
        text: |c| {
            c.tier()
                .map_or_else(String::new, |t| bytes_text(t.capacity.value))
        },
        parse: |c, t, w| {
            Ok(Edit::Capacity {
                tier: c.index(),
                bytes: units::parse_bytes(t).map_err(|e| FieldError::Unit(w, e.0))?,
            })
        },
        ..ROW
    },
    Descriptor {
        // What the device's memory figure is (Metal's working set, the driver's free memory),
        // beside the capacity above: the runtime's verdict is held against it.
        setting: Setting::DeviceFree(0),
        pane: Pane::Machine,
        per: Per::Tier,
        label: "free",
        name: "free to the backend (e.g. 40 GiB; a Mac's iogpu.wired_limit_mb)",
        short: "device free memory",
        show: |c| match c
            .tier()
            .and_then(crate::core::placement::groups::memory_base)
        {
            Some(b) => Shown {
                label: Some(super::views::devices::base_name(&b)),
                ..shown(super::views::devices::base_value(&b))
            }
            .tag(c.prov(b.provenance)),
            None => Shown::default(),
        },
        text: |c| {
            c.tier()
                .and_then(crate::core::placement::groups::memory_base)
                .map_or_else(String::new, |b| bytes_text(b.bytes))
        },
        parse: |c, t, w| {
            Ok(Edit::DeviceFree {
                tier: c.index(),
                bytes: units::parse_bytes(t).map_err(|e| FieldError::Unit(w, e.0))?,
            })
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::Bandwidth(0),
        pane: Pane::Machine,
        per: Per::Tier,
        label: "bandwidth",
        name: "bandwidth (e.g. 273 GB/s)",
        short: "bandwidth",
        step: Step::By(|c, dir| {
            Some(Edit::Bandwidth {
                tier: c.index(),
                rate: rate_step(c.tier()?.bandwidth.value.0, dir),
            })
        }),
        show: |c| match c.tier() {
            Some(t) => {
                shown(units::fmt_bandwidth(t.bandwidth.value)).tag(c.prov(t.bandwidth.provenance))
            }
            None => Shown::default(),
        },
        text: |c| {
            c.tier()
                .map_or_else(String::new, |t| rate_text(t.bandwidth.value.0))
        },
        parse: |c, t, w| {
            Ok(Edit::Bandwidth {
                tier: c.index(),
                rate: units::parse_bandwidth(t).map_err(|e| FieldError::Unit(w, e.0))?,
            })
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::Measured(0),
        pane: Pane::Machine,
        per: Per::Tier,
        label: "measured",
        name: "measured bandwidth (e.g. 240 GB/s; empty = none)",
        short: "measured bandwidth",
        step: Step::By(|c, dir| {
            let b = c.tier()?.measured_bandwidth.as_ref()?;
            Some(Edit::Measured {
                tier: c.index(),
                rate: Some(rate_step(b.value.0, dir)),
            })
        }),
        show: |c| match c.tier() {
            Some(t) => match &t.measured_bandwidth {
                Some(b) => shown(units::fmt_bandwidth(b.value)).tag(c.prov(b.provenance)),
                // A bandwidth that is itself measured has no second, measured figure to show.
                None if t.bandwidth.provenance == Provenance::Measured => {
                    shown("the bandwidth above")
                }
                None => shown("none"),
            },
            None => Shown::default(),
        },
        text: |c| {
            (c.tier().and_then(|t| t.measured_bandwidth.as_ref()))
                .map_or_else(String::new, |b| rate_text(b.value.0))
        },
        parse: |c, t, w| {
            Ok(Edit::Measured {
                tier: c.index(),
                rate: if t.is_empty() || t.eq_ignore_ascii_case("none") {
                    None
                } else {
                    Some(units::parse_bandwidth(t).map_err(|e| FieldError::Unit(w, e.0))?)
                },
            })
        },
        ..ROW
    },
    Descriptor {
        setting: Setting::ComputeRate(0),
        pane: Pane::Machine,
        per: Per::Compute,
        label: "compute rate",
        name: "compute rate (e.g. 165 TFLOP/s)",
        short: "compute rate",
        step: Step::By(|c, dir| {
            let r = c.s.machine.compute.get(c.index())?;
            Some(Edit::ComputeRate {
                index: c.index(),
                rate: FlopPerSec((r.rate.value.0 + dir as f64 * 1e12).max(1e12)),
            })
        }),
        show: |c| match c.s.machine.compute.get(c.index()) {
            Some(r) => Shown {
                label: Some(format!("{} @{}", r.path, r.tier)),
                ..shown(units::fmt_flops(r.rate.value))
            }
            .tag(c.prov(r.rate.provenance)),
            None => Shown::default(),
        },
        text: |c| {
            (c.s.machine.compute.get(c.index())).map_or_else(String::new, |r| {
                format!("{} TFLOP/s", short_decimal(r.rate.value.0 / 1e12))
            })
        },
        parse: |c, t, w| {
            Ok(Edit::ComputeRate {
                index: c.index(),
                rate: units::parse_flops(t).map_err(|e| FieldError::Unit(w, e.0))?,
            })
        },
        ..ROW
    },
];

/// The row that describes `setting` (any tier's), if the explorer shows it.
pub fn descriptor(setting: Setting) -> Option<&'static Descriptor> {
    ROWS.iter().find(|d| d.setting.same_kind(setting))
}

fn row_of(d: &Descriptor, c: &Ctx) -> Row {
    let v = (d.show)(c);
    Row {
        field: Some(Field::Setting(c.setting)),
        label: v.label.unwrap_or_else(|| d.label.to_string()),
        value: v.value,
        tag: v.tag,
        slider: v.slider,
        heading: false,
    }
}

/// The rows of the descriptors of `pane` made `per`, at index `i`.
fn table_rows(ws: &Workspace, pane: Pane, per: Per, i: usize, out: &mut Vec<Row>) {
    let runtimes = ws.runtimes();
    let a = Applies {
        scenario: ws.scenario(),
        runtimes: &runtimes,
    };
    for d in ROWS.iter().filter(|d| d.pane == pane && d.per == per) {
        // a host or SSD tier has no device, so no free figure of a backend
        if matches!(d.setting, Setting::DeviceFree(_))
            && !a.machine.tiers.get(i).is_some_and(|t| t.is_device())
        {
            continue;
        }
        if (d.shown)(&a) {
            out.push(row_of(d, &Ctx::of(ws, d.setting.at(i))));
        } else if let Some((label, value)) = d.absent {
            out.push(Row::info(label, value.to_string()));
        }
    }
}

/// Rows of a pane (Cache, Model, Machine), as shown; other panes draw no rows.
pub fn pane_rows(ws: &Workspace, pane: Pane) -> Vec<Row> {
    let mut rows = Vec::new();
    if pane != Pane::Machine {
        table_rows(ws, pane, Per::One, 0, &mut rows);
        return rows;
    }
    let m = &ws.scenario().machine;
    let edited = !ws.machine_edits().is_empty();
    let origin = if edited {
        "edited".to_string()
    } else {
        ws.machine_origin().label().to_string()
    };
    rows.push(Row::field(Field::MachineProfile, "profile", m.id.clone()).tag(Tag::Note(origin)));
    rows.push(Row::info("", m.name.clone()));
    for (i, t) in m.tiers.iter().enumerate() {
        rows.push(Row::heading(format!("{} ({})", t.name, t.kind)));
        table_rows(ws, pane, Per::Tier, i, &mut rows);
    }
    if m.compute.is_empty() {
        rows.push(Row::info("compute", "no rate: no prefill ceiling".into()));
    } else {
        rows.push(Row::heading("compute".into()));
        for i in 0..m.compute.len() {
            table_rows(ws, pane, Per::Compute, i, &mut rows);
        }
    }
    table_rows(ws, pane, Per::One, 0, &mut rows);
    rows
}

/// The edit a step left (−1) or right (+1) makes; `None` when the row cannot be stepped
/// (type its value instead).
pub fn step_edit(ws: &Workspace, setting: Setting, dir: i32) -> Option<Edit> {
    let d = descriptor(setting)?;
    let c = Ctx::of(ws, setting);
    let next_text = match d.step {
        Step::Typed => return None,
        Step::By(f) => return f(&c, dir),
        Step::Toggle => {
            if (d.text)(&c) == "on" {
                "off".to_string()
            } else {
                "on".to_string()
            }
        }
        Step::Cycle(choices) => {
            let all = choices(&c);
            if all.is_empty() {
                return None;
            }
            let cur = (d.text)(&c);
            let i = all.iter().position(|x| *x == cur).unwrap_or(0) as i32;
            all[(i + dir).rem_euclid(all.len() as i32) as usize].clone()
        }
    };
    (d.parse)(&c, &next_text, d.short).ok()
}

/// The edit typed text makes.
pub fn parse_edit(ws: &Workspace, setting: Setting, text: &str) -> Result<Edit, FieldError> {
    let d = descriptor(setting).ok_or(FieldError::Empty("value"))?;
    (d.parse)(&Ctx::of(ws, setting), text.trim(), d.short)
}

/// The current value of a setting as a prompt opens on it: text [`parse_edit`] reads back
/// to the same value (exact bytes or whole units, no digit grouping). Empty when there is
/// no value (no measured bandwidth, no MLA figures, an unknown parameter count).
pub fn edit_text(ws: &Workspace, setting: Setting) -> String {
    descriptor(setting).map_or_else(String::new, |d| (d.text)(&Ctx::of(ws, setting)))
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

/// `-fitt` as typed: one MiB figure, or one per device; "default" (llama.cpp's 1024 MiB) when
/// not given.
fn fit_margin_text(s: &Scenario) -> String {
    if s.offload.fit_margin_mib.is_empty() {
        "default".to_string()
    } else {
        s.offload
            .fit_margin_mib
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",")
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
    let mut lines = crate::tui::format::wrap_words(first.split_whitespace(), width);
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| Row::info(if i == 0 { "refused" } else { "" }, l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::ScenarioOptions;
    use crate::profile::Catalog;

    fn workspace(scenario: &str, machine: Option<&str>, model: Option<&str>) -> Workspace {
        let o = ScenarioOptions {
            scenario: Some(scenario.into()),
            machine: machine.map(str::to_string),
            model: model.map(str::to_string),
            artifact_bytes: model.map(|_| "400000000000".to_string()),
            ..Default::default()
        };
        Workspace::new(Catalog::builtin(), &o).unwrap()
    }

    /// Every setting of every row shown, at every tier and compute index.
    fn shown_settings(ws: &Workspace) -> Vec<Setting> {
        let m = &ws.scenario().machine;
        let mut out = Vec::new();
        let runtimes = ws.runtimes();
        let a = Applies {
            scenario: ws.scenario(),
            runtimes: &runtimes,
        };
        for d in ROWS.iter().filter(|d| (d.shown)(&a)) {
            let n = match d.per {
                Per::One => 1,
                Per::Tier => m.tiers.len(),
                Per::Compute => m.compute.len(),
            };
            out.extend((0..n).map(|i| d.setting.at(i)));
        }
        out
    }

    /// The text a prompt opens on reads back, through the row's own parser and the one edit
    /// function, to the same value; and every row shown is one the table describes.
    #[test]
    fn each_row_reads_its_own_text_back() {
        for (scenario, machine, model) in [
            ("default", None, None),
            (
                "qwen3-32b-rtx-4090-partial",
                Some("desktop-dual-rtx-3090"),
                None,
            ),
            ("default", Some("h200-measured"), Some("deepseek-v3")),
            ("default", None, Some("qwen3-30b-a3b")),
        ] {
            let mut ws = workspace(scenario, machine, model);
            let settings = shown_settings(&ws);
            for k in [Pane::Cache, Pane::Model, Pane::Machine] {
                for r in pane_rows(&ws, k) {
                    if let Some(Field::Setting(s)) = r.field {
                        assert!(settings.contains(&s), "{s:?} shown but not described");
                    }
                }
            }
            for s in settings {
                let before = edit_text(&ws, s);
                if before.is_empty() {
                    continue;
                }
                let e = parse_edit(&ws, s, &before)
                    .unwrap_or_else(|e| panic!("{scenario}: {s:?} {before:?}: {e}"));
                assert_eq!(e.setting(), Some(s), "{before:?}");
                ws.apply(e)
                    .unwrap_or_else(|e| panic!("{scenario}: {s:?} {before:?}: {e}"));
                assert_eq!(edit_text(&ws, s), before, "{scenario}: {s:?}");
            }
        }
    }

    /// Space and ←/→ on toggles and choices go through the row's parser: on becomes off, a
    /// choice moves to the next one and wraps.
    #[test]
    fn toggles_and_cycles_step_through_their_parsers() {
        let ws = workspace("qwen3-32b-rtx-4090-partial", None, None);
        let fa = ws.scenario().cache.flash_attn;
        assert_eq!(
            step_edit(&ws, Setting::FlashAttn, 1),
            Some(Edit::FlashAttn(!fa))
        );
        let k = ws.scenario().cache.type_k;
        let i = CacheType::ALL.iter().position(|t| *t == k).unwrap();
        let n = CacheType::ALL.len();
        assert_eq!(
            step_edit(&ws, Setting::CacheTypeK, -1),
            Some(Edit::CacheTypeK(CacheType::ALL[(i + n - 1) % n]))
        );
        assert_eq!(step_edit(&ws, Setting::TensorSplit, 1), None);
    }
}
