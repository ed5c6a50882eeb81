//! Loading profiles: built-in presets, the user's profile directory (overriding built-ins by
//! id), files named on the command line; validation with file, line and column; conversion
//! to core types; atomic saving.

use super::builtin::BUILTIN;
use super::file::{MachineFile, ModelFile, ScenarioFile};
use crate::core::kv::CacheSettings;
use crate::core::model::{ArchFigures, Mla, ModelShape, Moe, PerLayer, Ssm};
use crate::core::placement::{Backend, SplitMode};
use crate::core::runtime::FeedForward;
use crate::core::scenario::{ComputeRate, DeviceSpec, Link, Machine, Offload, Scenario, Tier};
use crate::core::units::{Provenance, Sourced};
use crate::core::weights::{ArtifactSource, WeightFile, WeightKind};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The id of the stand-in artifact of a size the user gave (`--artifact-bytes`).
pub const USER_ARTIFACT: &str = "user-stated-size";

/// A profile problem, one line, naming the file and where.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProfileError {
    /// TOML syntax or a bad value, with its position.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        /// File (or built-in name).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A profile that parses but cannot be used.
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// File.
        file: String,
        /// Line of the offending key, when it can be found.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// An id that names no profile (`known` starts with the ids that contain it, when any
    /// do: "did you mean …?").
    #[error("unknown {kind} \"{id}\"; {known}")]
    Unknown {
        /// machine, model, scenario, artifact.
        kind: &'static str,
        /// The id asked for.
        id: String,
        /// Known ids.
        known: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {message}")]
    Io {
        /// Path.
        path: String,
        /// OS message.
        message: String,
    },
    /// Saving would overwrite an existing profile.
    #[error(
        "{path} already exists: pass --force to replace it, or choose another id (--save OTHER-ID)"
    )]
    Exists {
        /// Path.
        path: String,
    },
}

/// Where a profile came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded preset.
    Builtin,
    /// A file in the user's profile directory or named on the command line.
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin => f.write_str("built-in"),
            Origin::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A loaded profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<T> {
    /// Its id.
    pub id: String,
    /// Where it came from.
    pub origin: Origin,
    /// Its contents.
    pub value: T,
}

/// Every profile known: built-ins overlaid by the user's.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Machines.
    pub machines: Vec<Entry<MachineFile>>,
    /// Models.
    pub models: Vec<Entry<ModelFile>>,
    /// Scenarios.
    pub scenarios: Vec<Entry<ScenarioFile>>,
    /// Profiles that failed to load (reported, skipped).
    pub errors: Vec<ProfileError>,
    /// The user's profile directory.
    pub user_dir: Option<PathBuf>,
}

/// The known ids after an unknown one: those that contain it (as the explorer's pickers match
/// it) first as "did you mean …?", then every id.
pub fn known_ids<'a>(asked: &str, ids: impl Iterator<Item = &'a str>) -> String {
    let ids: Vec<&str> = ids.collect();
    let needle = asked.to_ascii_lowercase();
    let close: Vec<&str> = (ids.iter().copied())
        .filter(|i| !needle.is_empty() && i.to_ascii_lowercase().contains(&needle))
        .collect();
    let all = format!("known: {}", ids.join(", "));
    match close.as_slice() {
        [] => all,
        [one] => format!("did you mean {one}? {all}"),
        many => format!("did you mean one of {}? {all}", many.join(", ")),
    }
}

/// The user's profile directory: `$LLMBOUND_CONFIG_DIR`, else the platform config directory.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("LLMBOUND_CONFIG_DIR") {
        return Some(PathBuf::from(d));
    }
    directories::ProjectDirs::from("", "", "llmbound").map(|p| p.config_dir().to_path_buf())
}

/// 1-based line and column of a byte offset in a text.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, col)
}

/// Line of `key = ` in a TOML text, for messages about a key.
fn key_line(src: &str, key: &str) -> Option<usize> {
    src.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// Parse one profile text.
pub fn parse<T: serde::de::DeserializeOwned>(file: &str, src: &str) -> Result<T, ProfileError> {
    toml::from_str::<T>(src).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(src, s.start));
        ProfileError::Parse {
            file: file.to_string(),
            line,
            column,
            message: e.message().trim().replace('\n', " "),
        }
    })
}

fn invalid(file: &str, src: &str, key: &str, message: String) -> ProfileError {
    ProfileError::Invalid {
        file: file.to_string(),
        line: key_line(src, key),
        message,
    }
}

pub(super) fn check_id(
    file: &str,
    src: &str,
    id: &str,
    expected: Option<&str>,
) -> Result<(), ProfileError> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
    {
        return Err(invalid(
            file,
            src,
            "id",
            format!("id \"{id}\" must use lower-case letters, digits, '-', '_' or '.'"),
        ));
    }
    if let Some(stem) = expected
        && stem != id
    {
        return Err(invalid(
            file,
            src,
            "id",
            format!("id \"{id}\" does not match the file name \"{stem}.toml\""),
        ));
    }
    Ok(())
}

/// Most memory tiers a machine profile may list (a big multi-GPU box has under 20).
pub const MAX_TIERS: usize = 64;
/// Most compute paths a machine profile may list.
pub const MAX_COMPUTE: usize = 256;

/// Validate a machine profile beyond its syntax.
pub fn check_machine(
    file: &str,
    src: &str,
    m: &MachineFile,
    stem: Option<&str>,
) -> Result<(), ProfileError> {
    check_id(file, src, &m.id, stem)?;
    if m.tiers.len() > MAX_TIERS {
        return Err(invalid(
            file,
            src,
            "id",
            format!(
                "{} [[tier]] tables; a machine has at most {MAX_TIERS} memory tiers",
                m.tiers.len()
            ),
        ));
    }
    if m.compute.len() > MAX_COMPUTE {
        return Err(invalid(
            file,
            src,
            "id",
            format!(
                "{} [[compute]] tables; a machine has at most {MAX_COMPUTE} compute paths",
                m.compute.len()
            ),
        ));
    }
    if m.tiers.is_empty() {
        return Err(invalid(
            file,
            src,
            "id",
            "a machine needs at least one [[tier]]".into(),
        ));
    }
    let mut names = HashSet::new();
    for t in &m.tiers {
        if !names.insert(t.name.as_str()) {
            return Err(invalid(
                file,
                src,
                "name",
                format!("tier name \"{}\" is used twice", t.name),
            ));
        }
        if t.capacity.value.value == 0 {
            return Err(invalid(
                file,
                src,
                "capacity",
                format!("tier \"{}\" has zero capacity", t.name),
            ));
        }
        if let Err(e) = crate::core::units::check_capacity(t.capacity.value.value) {
            return Err(invalid(
                file,
                src,
                "capacity",
                format!(
                    "capacity of tier \"{}\" ({} bytes) is {e}",
                    t.name,
                    crate::core::units::group_digits(t.capacity.value.value as u128)
                ),
            ));
        }
        check_tier_device(file, src, t)?;
        // A measured figure, or one the user typed into the measured field (saved as `user`,
        // never promoted to `measured`: issue 21, defect 4).
        if let Some(mb) = &t.measured_bandwidth
            && !matches!(mb.provenance.0, Provenance::Measured | Provenance::User)
        {
            return Err(invalid(
                file,
                src,
                "measured-bandwidth",
                format!(
                    "measured-bandwidth of tier \"{}\" must have provenance \"measured\" (or \"user\" for a figure typed in)",
                    t.name
                ),
            ));
        }
    }
    for l in &m.links {
        if let Some(t) = l.tiers.iter().find(|t| !names.contains(t.as_str())) {
            return Err(invalid(
                file,
                src,
                "tiers",
                format!(
                    "link \"{}\" names tier \"{t}\", which the machine does not have",
                    l.name
                ),
            ));
        }
        if !(l.latency_us.value.is_finite() && l.latency_us.value >= 0.0) {
            return Err(invalid(
                file,
                src,
                "latency-us",
                format!(
                    "latency of link \"{}\" must be a number of microseconds ≥ 0",
                    l.name
                ),
            ));
        }
        if let Err(e) = crate::core::units::check_bandwidth(l.bandwidth.value.value) {
            return Err(invalid(
                file,
                src,
                "bandwidth",
                format!("bandwidth of link \"{}\" is {e}", l.name),
            ));
        }
    }
    for c in &m.compute {
        if !names.contains(c.tier.as_str()) {
            return Err(invalid(
                file,
                src,
                "tier",
                format!(
                    "compute path \"{}\" names tier \"{}\", which the machine does not have",
                    c.path, c.tier
                ),
            ));
        }
    }
    Ok(())
}

/// The device keys of a tier: only on accelerator and unified tiers; free memory above zero
/// and at most the capacity; a tensor limit above zero; an endpoint `host:port` exactly for
/// the rpc backend.
fn check_tier_device(file: &str, src: &str, t: &super::file::TierFile) -> Result<(), ProfileError> {
    use crate::core::scenario::TierKind;
    let device_tier = matches!(t.kind.0, TierKind::Accelerator | TierKind::Unified);
    if !device_tier {
        for (key, present) in [
            ("backend", t.backend.is_some()),
            ("free", t.free.is_some()),
            ("endpoint", t.endpoint.is_some()),
            ("max-tensor", t.max_tensor.is_some()),
        ] {
            if present {
                return Err(invalid(
                    file,
                    src,
                    key,
                    format!(
                        "tier \"{}\" is a {} tier: {key} belongs to accelerator and unified tiers",
                        t.name,
                        t.kind.0.label()
                    ),
                ));
            }
        }
        return Ok(());
    }
    if let Some(f) = &t.free {
        if f.value.value == 0 {
            return Err(invalid(
                file,
                src,
                "free",
                format!("free memory of tier \"{}\" is zero", t.name),
            ));
        }
        if f.value.value > t.capacity.value.value {
            return Err(invalid(
                file,
                src,
                "free",
                format!(
                    "free memory of tier \"{}\" ({} bytes) is above its capacity ({} bytes)",
                    t.name,
                    crate::core::units::group_digits(f.value.value as u128),
                    crate::core::units::group_digits(t.capacity.value.value as u128)
                ),
            ));
        }
    }
    if t.max_tensor.as_ref().is_some_and(|f| f.value.value == 0) {
        return Err(invalid(
            file,
            src,
            "max-tensor",
            format!("tensor limit of tier \"{}\" is zero", t.name),
        ));
    }
    let rpc = t.backend.is_some_and(|b| b.0 == Backend::Rpc);
    match (&t.endpoint, rpc) {
        (None, true) => Err(invalid(
            file,
            src,
            "backend",
            format!(
                "tier \"{}\" runs on an rpc server: give its endpoint = \"host:port\"",
                t.name
            ),
        )),
        (Some(_), false) => Err(invalid(
            file,
            src,
            "endpoint",
            format!(
                "tier \"{}\" has an endpoint but its backend is not rpc",
                t.name
            ),
        )),
        (Some(e), true) => {
            let ok = e
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
            if ok {
                Ok(())
            } else {
                Err(invalid(
                    file,
                    src,
                    "endpoint",
                    format!("endpoint \"{e}\" of tier \"{}\" is not host:port", t.name),
                ))
            }
        }
        (None, false) => Ok(()),
    }
}

/// Validate a model profile beyond its syntax (including the KV maths' inputs).
pub fn check_model(
    file: &str,
    src: &str,
    m: &ModelFile,
    stem: Option<&str>,
) -> Result<(), ProfileError> {
    check_id(file, src, &m.id, stem)?;
    if m.head_dim.is_some() && (m.key_length.is_some() || m.value_length.is_some()) {
        return Err(invalid(
            file,
            src,
            "head-dim",
            "give head-dim or key-length/value-length, not both".into(),
        ));
    }
    let mut ids = HashSet::new();
    for a in &m.artifacts {
        check_id(file, src, &a.id, None)?;
        if !ids.insert(a.id.as_str()) {
            return Err(invalid(
                file,
                src,
                "id",
                format!("artifact id \"{}\" is used twice", a.id),
            ));
        }
        if a.bytes == 0 {
            return Err(invalid(
                file,
                src,
                "bytes",
                format!("artifact \"{}\" has 0 bytes", a.id),
            ));
        }
        if let Some(h) = &a.sha256
            && (h.len() != 64
                || !h
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()))
        {
            return Err(invalid(
                file,
                src,
                "sha256",
                format!(
                    "sha256 \"{h}\" of artifact \"{}\" is not 64 lower-case hex digits",
                    a.id
                ),
            ));
        }
    }
    check_model_figures(file, src, m)?;
    model_shape(m).map_err(|e| invalid(file, src, "layers", e))?;
    Ok(())
}

/// The shared shape check (`core::shape_check`) with the profile's own key names and line.
fn check_model_figures(file: &str, src: &str, m: &ModelFile) -> Result<(), ProfileError> {
    use crate::core::shape_check::{ShapeFigure, check_figures};
    let Err(fault) = check_figures(&arch_figures(m)) else {
        return Ok(());
    };
    let key = match fault.figure {
        ShapeFigure::HeadCount => "attention-heads",
        ShapeFigure::HeadCountKv => "kv-heads",
        ShapeFigure::EmbeddingLength => "hidden-size",
        ShapeFigure::KeyLength if m.key_length.is_some() => "key-length",
        ShapeFigure::ValueLength if m.value_length.is_some() => "value-length",
        ShapeFigure::KeyLength | ShapeFigure::ValueLength => "head-dim",
    };
    Err(invalid(file, src, key, fault.message(key)))
}

/// Validate a scenario profile against the catalogue.
pub fn check_scenario(
    file: &str,
    src: &str,
    s: &ScenarioFile,
    stem: Option<&str>,
) -> Result<(), ProfileError> {
    check_id(file, src, &s.id, stem)?;
    if let Some(m) = &s.split_mode
        && crate::core::edit::parse_split_mode(m).is_none()
    {
        return Err(invalid(
            file,
            src,
            "split-mode",
            format!("split-mode \"{m}\" must be none, layer or row"),
        ));
    }
    for item in &s.override_tensor {
        if let Err(e) = crate::core::edit::check_override_syntax(item) {
            return Err(invalid(file, src, "override-tensor", e));
        }
    }
    if s.context == 0 {
        return Err(invalid(
            file,
            src,
            "context",
            "context must be at least 1 token".into(),
        ));
    }
    if s.sequences == 0 {
        return Err(invalid(
            file,
            src,
            "sequences",
            "sequences must be at least 1".into(),
        ));
    }
    for x in &s.extra_files {
        if !matches!(x.kind.as_str(), "mmproj" | "draft") {
            return Err(invalid(
                file,
                src,
                "kind",
                format!(
                    "extra file kind \"{}\" must be \"mmproj\" or \"draft\"",
                    x.kind
                ),
            ));
        }
    }
    Ok(())
}

/// Convert a machine profile.
pub fn machine(m: &MachineFile) -> Machine {
    Machine {
        id: m.id.clone(),
        name: m.name.clone(),
        tiers: m
            .tiers
            .iter()
            .map(|t| Tier {
                name: t.name.clone(),
                kind: t.kind.0,
                capacity: Sourced::new(
                    t.capacity.value.value,
                    t.capacity.provenance.0,
                    t.capacity.citation(),
                ),
                bandwidth: Sourced::new(
                    t.bandwidth.value.value,
                    t.bandwidth.provenance.0,
                    t.bandwidth.citation(),
                ),
                measured_bandwidth: t
                    .measured_bandwidth
                    .as_ref()
                    .map(|b| Sourced::new(b.value.value, b.provenance.0, b.citation())),
                device: tier_device(t),
            })
            .collect(),
        compute: m
            .compute
            .iter()
            .map(|c| ComputeRate {
                path: c.path.clone(),
                tier: c.tier.clone(),
                rate: Sourced::new(c.rate.value.value, c.rate.provenance.0, c.rate.citation()),
            })
            .collect(),
        links: m
            .links
            .iter()
            .map(|l| Link {
                name: l.name.clone(),
                tiers: l.tiers.clone(),
                bandwidth: Sourced::new(
                    l.bandwidth.value.value,
                    l.bandwidth.provenance.0,
                    l.bandwidth.citation(),
                ),
                latency_us: Sourced::new(
                    l.latency_us.value,
                    l.latency_us.provenance.0,
                    l.latency_us.citation(),
                ),
            })
            .collect(),
    }
}

/// The device of a tier as its profile states it (`backend`, `free`, `endpoint`, `max-tensor`);
/// `None` when it states none of backend, free memory and tensor limit (the core's derived
/// defaults apply then).
fn tier_device(t: &super::file::TierFile) -> Option<DeviceSpec> {
    use crate::core::scenario::TierKind;
    if t.backend.is_none() && t.free.is_none() && t.max_tensor.is_none() {
        return None;
    }
    let backend = t.backend.map_or(
        if t.kind.0 == TierKind::Unified {
            Backend::Metal
        } else {
            Backend::Cuda
        },
        |b| b.0,
    );
    let free = t.free.as_ref().map_or_else(
        || {
            Sourced::new(
                t.capacity.value.value,
                Provenance::Derived,
                crate::core::scenario::DEFAULT_FREE_SOURCE,
            )
        },
        |f| Sourced::new(f.value.value, f.provenance.0, f.citation()),
    );
    Some(DeviceSpec {
        backend,
        free,
        endpoint: t.endpoint.clone(),
        max_tensor: t
            .max_tensor
            .as_ref()
            .map(|f| Sourced::new(f.value.value, f.provenance.0, f.citation())),
    })
}

/// Raw architecture figures of a model profile.
pub fn arch_figures(m: &ModelFile) -> ArchFigures {
    ArchFigures {
        architecture: m.architecture.clone(),
        layers: m.layers,
        head_count: PerLayer::Uniform(m.attention_heads),
        head_count_kv: match &m.kv_heads {
            super::file::HeadsFile::Uniform(n) => PerLayer::Uniform(*n),
            super::file::HeadsFile::List(v) => PerLayer::List(v.clone()),
        },
        key_length: m.key_length.or(m.head_dim),
        value_length: m.value_length.or(m.head_dim),
        embedding_length: m.hidden_size,
        vocab_size: m.vocab_size,
        native_context: m.native_context,
        sliding_window: m.sliding_window,
        sliding_pattern: m.sliding_pattern.clone(),
        chunk_size: m.chunk_size,
        mla: m.mla.as_ref().map(|x| Mla {
            kv_lora_rank: x.kv_lora_rank,
            rope_dim: x.rope_dim,
            key_length_mla: x.key_length_mla,
            value_length_mla: x.value_length_mla,
        }),
        moe: m.moe.as_ref().map(|x| Moe {
            experts: x.experts,
            experts_used: x.experts_used,
            shared_experts: x.shared_experts,
        }),
        ssm: m.ssm.as_ref().map(|x| Ssm {
            d_conv: x.d_conv,
            d_inner: x.d_inner,
            d_state: x.d_state,
            n_group: x.n_group,
        }),
        recurrent_layers: m.recurrent_layers.clone(),
        tied_embeddings: m.tied_embeddings,
        keys: Default::default(),
    }
}

/// The model shape of a model profile (figures are `spec`: published configuration).
pub fn model_shape(m: &ModelFile) -> Result<ModelShape, String> {
    let figs = arch_figures(m);
    if let Some(p) = &m.sliding_pattern
        && p.len() != m.layers as usize
    {
        return Err(format!(
            "sliding-pattern lists {} layers but layers = {}",
            p.len(),
            m.layers
        ));
    }
    let mut shape =
        ModelShape::from_figures(m.name.clone(), &figs, Provenance::Spec).map_err(|e| e.0)?;
    shape.parameters_advertised = m.parameters.as_ref().map(|p| p.sourced());
    shape.active_parameters_advertised = m.active_parameters.as_ref().map(|p| p.sourced());
    Ok(shape)
}

/// Overrides a caller applies on top of a scenario file (CLI flags, TUI edits).
pub fn scenario(cat: &Catalog, s: &ScenarioFile) -> Result<Scenario, ProfileError> {
    let model = cat.model(&s.model)?;
    let machine_file = cat.machine(&s.machine)?;
    let art = model
        .artifacts
        .iter()
        .find(|a| a.id == s.artifact)
        .ok_or_else(|| ProfileError::Unknown {
            kind: "artifact",
            id: s.artifact.clone(),
            known: known_ids(&s.artifact, model.artifacts.iter().map(|a| a.id.as_str())),
        })?;
    let shape = model_shape(&model).map_err(|message| ProfileError::Invalid {
        file: model.id.clone(),
        line: None,
        message,
    })?;
    let mut weights = vec![WeightFile {
        kind: WeightKind::Artifact(if art.id == USER_ARTIFACT {
            ArtifactSource::SizeGiven
        } else {
            ArtifactSource::Preset
        }),
        file: art.file.clone(),
        // A size the user stated is the user's figure.
        bytes: Sourced::new(
            art.bytes,
            if art.id == USER_ARTIFACT {
                Provenance::User
            } else {
                Provenance::Spec
            },
            art.source.clone(),
        ),
    }];
    for x in &s.extra_files {
        weights.push(WeightFile {
            kind: WeightKind::parse_extra(&x.kind).unwrap_or(WeightKind::Mmproj),
            file: x.file.clone(),
            bytes: Sourced::new(x.bytes, Provenance::User, "scenario extra-file"),
        });
    }
    Ok(Scenario {
        name: s.name.clone(),
        model: shape,
        weights,
        inventory: None,
        machine: machine(&machine_file),
        cache: CacheSettings {
            context: s.context,
            sequences: s.sequences,
            type_k: s.cache_type_k.0,
            type_v: s.cache_type_v.0,
            flash_attn: s.flash_attn,
            ubatch: s.ubatch,
            kv_unified: s.kv_unified,
            swa_full: s.swa_full,
        },
        other_bytes: Sourced::new(
            s.overhead.as_ref().map_or(0, |o| o.value),
            Provenance::User,
            "other allocations A, set by the user",
        ),
        offload: Offload {
            gpu_layers: s.gpu_layers,
            gpu_layers_all: s.gpu_layers_all && s.gpu_layers.is_none(),
            tensor_split: s.tensor_split.clone(),
            no_kv_offload: s.no_kv_offload,
            split_mode: s
                .split_mode
                .as_deref()
                .and_then(crate::core::edit::parse_split_mode)
                .unwrap_or(SplitMode::Layer),
            main_gpu: s.main_gpu.unwrap_or(0),
            overrides: s.override_tensor.clone(),
            cpu_moe: s.cpu_moe,
            n_cpu_moe: s.n_cpu_moe.unwrap_or(0),
            n_cpu_ffn: s.n_cpu_ffn.unwrap_or(0),
            fit: s.fit.unwrap_or(true),
            context_auto: false,
            fit_margin_mib: s.fit_target_mib.clone(),
            fit_min_ctx: s
                .fit_ctx
                .unwrap_or(crate::core::placement::DEFAULT_FIT_MIN_CTX),
        },
        prompt_rows: s.prompt_rows,
        compute_path: s.compute_path.clone(),
        feed_forward: FeedForward {
            length: model.intermediate_size.unwrap_or(0),
            expert_length: model
                .moe
                .as_ref()
                .and_then(|m| m.expert_intermediate_size)
                .unwrap_or(0),
            shared_expert_length: 0,
        },
        runtime: crate::core::mlx::Runtime::default(),
        mlx_lm: crate::core::mlx::MlxLmSettings::default(),
    })
}

fn stem(name: &str) -> &str {
    name.strip_suffix(".toml").unwrap_or(name)
}

impl Catalog {
    /// Built-in presets only.
    pub fn builtin() -> Catalog {
        let mut c = Catalog::default();
        for (kind, name, src) in BUILTIN {
            let file = format!("profiles/{kind}/{name}");
            c.add(kind, &file, src, Some(stem(name)), Origin::Builtin);
        }
        c
    }

    /// Built-ins overlaid by the user's profile directory.
    pub fn load() -> Catalog {
        Catalog::load_with(user_dir())
    }

    /// Built-ins overlaid by the profiles in `dir`.
    pub fn load_with(dir: Option<PathBuf>) -> Catalog {
        let mut c = Catalog::builtin();
        if let Some(d) = &dir {
            for kind in ["machines", "models", "scenarios"] {
                let Ok(rd) = fs::read_dir(d.join(kind)) else {
                    continue;
                };
                let mut paths: Vec<PathBuf> = rd
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                    .collect();
                paths.sort();
                for p in paths {
                    let file = p.display().to_string();
                    // A FIFO or device named *.toml is skipped with a message, never opened.
                    match crate::infile::read_text(
                        &p,
                        crate::infile::PROFILE_CAP_BYTES,
                        "a profile",
                    ) {
                        Ok(src) => {
                            let st = p
                                .file_stem()
                                .and_then(|s| s.to_str())
                                .unwrap_or("")
                                .to_string();
                            c.add(kind, &file, &src, Some(&st), Origin::File(p.clone()));
                        }
                        Err(e) => c.errors.push(ProfileError::Io {
                            path: file,
                            message: e.to_string(),
                        }),
                    }
                }
            }
        }
        c.user_dir = dir;
        c
    }

    fn add(&mut self, kind: &str, file: &str, src: &str, st: Option<&str>, origin: Origin) {
        let r = match kind {
            "machines" => parse::<MachineFile>(file, src)
                .and_then(|m| check_machine(file, src, &m, st).map(|_| m))
                .map(|m| upsert(&mut self.machines, m.id.clone(), origin, m)),
            "models" => parse::<ModelFile>(file, src)
                .and_then(|m| check_model(file, src, &m, st).map(|_| m))
                .map(|m| upsert(&mut self.models, m.id.clone(), origin, m)),
            _ => parse::<ScenarioFile>(file, src)
                .and_then(|m| check_scenario(file, src, &m, st).map(|_| m))
                .map(|m| upsert(&mut self.scenarios, m.id.clone(), origin, m)),
        };
        if let Err(e) = r {
            self.errors.push(e);
        }
    }

    fn find<'a, T: Clone>(
        list: &'a [Entry<T>],
        kind: &'static str,
        id: &str,
    ) -> Result<&'a Entry<T>, ProfileError> {
        list.iter()
            .find(|e| e.id == id)
            .ok_or_else(|| ProfileError::Unknown {
                kind,
                id: id.to_string(),
                known: known_ids(id, list.iter().map(|e| e.id.as_str())),
            })
    }

    /// The model profile and artifact with exactly this many bytes (what an opened file can be
    /// matched and verified against).
    pub fn artifact_with_bytes(
        &self,
        bytes: u64,
    ) -> Option<(ModelFile, super::file::ArtifactFile)> {
        self.models.iter().find_map(|m| {
            m.value
                .artifacts
                .iter()
                .find(|a| a.bytes == bytes)
                .map(|a| (m.value.clone(), a.clone()))
        })
    }

    /// A machine by id, or from a file path.
    pub fn machine(&self, id_or_path: &str) -> Result<MachineFile, ProfileError> {
        if let Some(p) = as_path(id_or_path) {
            let (src, file) = read(&p)?;
            let m: MachineFile = parse(&file, &src)?;
            check_machine(&file, &src, &m, None)?;
            return Ok(m);
        }
        Ok(Self::find(&self.machines, "machine", id_or_path)?
            .value
            .clone())
    }

    /// A model by id, or from a file path.
    pub fn model(&self, id_or_path: &str) -> Result<ModelFile, ProfileError> {
        if let Some(p) = as_path(id_or_path) {
            let (src, file) = read(&p)?;
            let m: ModelFile = parse(&file, &src)?;
            check_model(&file, &src, &m, None)?;
            return Ok(m);
        }
        Ok(Self::find(&self.models, "model", id_or_path)?.value.clone())
    }

    /// A scenario by id, or from a file path.
    pub fn scenario(&self, id_or_path: &str) -> Result<ScenarioFile, ProfileError> {
        if let Some(p) = as_path(id_or_path) {
            let (src, file) = read(&p)?;
            let m: ScenarioFile = parse(&file, &src)?;
            check_scenario(&file, &src, &m, None)?;
            return Ok(m);
        }
        Ok(Self::find(&self.scenarios, "scenario", id_or_path)?
            .value
            .clone())
    }
}

/// `FILE:LINE` of `key = …` in the scenario `id_or_path` (a path, a user profile or a
/// built-in), for an error about a value that scenario holds; `None` when it cannot be found.
pub fn scenario_key_location(cat: &Catalog, id_or_path: &str, key: &str) -> Option<String> {
    let read =
        |p: &Path| crate::infile::read_text(p, crate::infile::PROFILE_CAP_BYTES, "a profile");
    let (file, src) = if let Some(p) = as_path(id_or_path) {
        (p.display().to_string(), read(&p).ok()?)
    } else {
        let e = cat.scenarios.iter().find(|e| e.id == id_or_path)?;
        match &e.origin {
            Origin::File(p) => (p.display().to_string(), read(p).ok()?),
            Origin::Builtin => BUILTIN
                .iter()
                .find(|(kind, name, _)| *kind == "scenarios" && stem(name) == id_or_path)
                .map(|(kind, name, src)| (format!("profiles/{kind}/{name}"), src.to_string()))?,
        }
    };
    Some(match key_line(&src, key) {
        Some(l) => format!("{file}:{l}"),
        None => file,
    })
}

fn upsert<T>(list: &mut Vec<Entry<T>>, id: String, origin: Origin, value: T) {
    if let Some(e) = list.iter_mut().find(|e| e.id == id) {
        e.origin = origin;
        e.value = value;
    } else {
        list.push(Entry { id, origin, value });
    }
}

fn as_path(s: &str) -> Option<PathBuf> {
    (s.ends_with(".toml") || s.contains('/') || s.contains(std::path::MAIN_SEPARATOR))
        .then(|| PathBuf::from(s))
}

fn read(p: &Path) -> Result<(String, String), ProfileError> {
    let file = p.display().to_string();
    crate::infile::read_text(p, crate::infile::PROFILE_CAP_BYTES, "a profile")
        .map(|s| (s, file.clone()))
        .map_err(|e| ProfileError::Io {
            path: file,
            message: e.to_string(),
        })
}

pub use super::save::{check_save, clean_stale_temps, save, write_atomic};
