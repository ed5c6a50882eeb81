//! From options (CLI flags or the TUI's start-up arguments) to a `core::Scenario`: picks the
//! scenario, model, artifact and machine profiles and applies overrides. No terminal I/O.

use crate::core::cache::CacheType;
use crate::core::model::ModelShape;
use crate::core::scenario::Scenario;
use crate::core::units::{self, Provenance, Sourced};
use crate::core::weights::WeightFile;
use crate::gguf::{self, GgufError, TensorInventory};
use crate::profile::file::{ArtifactFile, ModelFile};
use crate::profile::{Catalog, ProfileError, load};
use std::path::{Path, PathBuf};

/// Everything a user can set from the command line about a scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioOptions {
    /// Scenario id or path (default "default").
    pub scenario: Option<String>,
    /// Model id or path (replaces the scenario's model; needs an artifact).
    pub model: Option<String>,
    /// Artifact id within the model.
    pub artifact: Option<String>,
    /// W stated by the user ("42.5 GB") instead of a known artifact.
    pub artifact_bytes: Option<String>,
    /// Machine id or path.
    pub machine: Option<String>,
    /// Retained tokens per sequence.
    pub context: Option<u64>,
    /// Sequences.
    pub sequences: Option<u64>,
    /// K cache type.
    pub cache_type_k: Option<String>,
    /// V cache type.
    pub cache_type_v: Option<String>,
    /// Other allocations A ("2 GiB").
    pub overhead: Option<String>,
    /// `-ngl`.
    pub gpu_layers: Option<u32>,
    /// Prompt rows S.
    pub prompt_rows: Option<u64>,
    /// Override the capacity of a tier ("64 GiB").
    pub memory: Option<String>,
    /// Override the bandwidth of a tier ("400 GB/s").
    pub bandwidth: Option<String>,
    /// Tier the overrides apply to (default the first).
    pub tier: Option<String>,
    /// Flash attention.
    pub flash_attn: Option<bool>,
    /// n_ubatch.
    pub ubatch: Option<u64>,
    /// Unified KV.
    pub kv_unified: bool,
    /// Full SWA cache.
    pub swa_full: bool,
    /// `-nkvo`.
    pub no_kv_offload: bool,
    /// `--tensor-split`.
    pub tensor_split: Option<Vec<f64>>,
    /// Compute path for prefill.
    pub compute_path: Option<String>,
    /// A GGUF file (any shard of a split model): its model shape, bytes and inventory replace
    /// the profile's.
    pub gguf: Option<PathBuf>,
    /// A multimodal projector file the runtime also loads (adds to W).
    pub mmproj: Option<PathBuf>,
    /// A draft model file the runtime also loads (adds to W).
    pub draft: Option<PathBuf>,
}

/// A problem building the scenario: one line.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// A profile could not be used.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// A GGUF file could not be read (the reader's one-line message, with the byte offset).
    #[error("{0}")]
    Gguf(String),
    /// A file could not be opened.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// OS message.
        message: String,
    },
    /// A flag value is wrong.
    #[error("{flag}: {message}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        message: String,
    },
}

fn flag(flag: &'static str, message: impl Into<String>) -> BuildError {
    BuildError::Flag {
        flag,
        message: message.into(),
    }
}

const USER_ARTIFACT: &str = "user-stated-size";

/// Parse a cache type name for a flag.
pub fn cache_type(flag_name: &'static str, s: &str) -> Result<CacheType, BuildError> {
    CacheType::parse(s).ok_or_else(|| {
        flag(
            flag_name,
            format!("unknown cache type \"{s}\" (use f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1 or iq4_nl)"),
        )
    })
}

/// Build the scenario the options describe.
pub fn scenario(cat: &Catalog, o: &ScenarioOptions) -> Result<Scenario, BuildError> {
    let mut file = cat.scenario(o.scenario.as_deref().unwrap_or("default"))?;
    let user_bytes = match &o.artifact_bytes {
        Some(b) => {
            let v = units::parse_bytes(b).map_err(|e| flag("--artifact-bytes", e.0))?;
            if v == 0 {
                return Err(flag(
                    "--artifact-bytes",
                    "an artifact of 0 bytes cannot be a model",
                ));
            }
            Some(v)
        }
        None => None,
    };
    if let Some(bytes) = user_bytes {
        // A W stated by the user stands in for the artifact: kept in an in-memory catalogue.
        let mut model = cat.model(o.model.as_deref().unwrap_or(&file.model))?;
        model.artifacts.push(crate::profile::file::ArtifactFile {
            id: USER_ARTIFACT.into(),
            file: "(size given with --artifact-bytes)".into(),
            repository: String::new(),
            revision: None,
            bytes,
            sha256: None,
            quantization: String::new(),
            source: "--artifact-bytes".into(),
        });
        let mut cat2 = cat.clone();
        cat2.models.retain(|e| e.id != model.id);
        file.model = model.id.clone();
        cat2.models.push(crate::profile::Entry {
            id: model.id.clone(),
            origin: crate::profile::Origin::Builtin,
            value: model,
        });
        file.artifact = USER_ARTIFACT.into();
        if let Some(m) = &o.machine {
            file.machine = m.clone();
        }
        let mut s = load::scenario(&cat2, &file).map_err(|e| in_scenario(cat, o, e))?;
        s.weights[0].bytes.provenance = Provenance::User;
        apply(&mut s, o)?;
        return Ok(s);
    }
    if let Some(m) = &o.model {
        let model = cat.model(m)?;
        file.model = m.clone();
        file.artifact = match &o.artifact {
            Some(a) => a.clone(),
            None => match model.artifacts.first() {
                Some(a) => a.id.clone(),
                None => {
                    let try_remote = if model.gguf_repos.is_empty() {
                        String::new()
                    } else {
                        let specs: Vec<&str> =
                            model.gguf_repos.iter().map(|r| r.spec.as_str()).collect();
                        format!(
                            " such as --gguf {} (a public GGUF read over HTTP, header only)",
                            specs.join(" or --gguf ")
                        )
                    };
                    return Err(flag(
                        "--model",
                        format!(
                            "model \"{}\" has no known artifact: give its GGUF with --gguf{try_remote}, or its exact size with --artifact-bytes",
                            model.id
                        ),
                    ));
                }
            },
        };
    } else if let Some(a) = &o.artifact {
        file.artifact = a.clone();
    }
    if let Some(m) = &o.machine {
        file.machine = m.clone();
    }
    let mut s = load::scenario(cat, &file).map_err(|e| in_scenario(cat, o, e))?;
    if let Some(path) = &o.gguf {
        let g = open_gguf(cat, path)?;
        with_gguf(&mut s, &g)?;
    }
    apply(&mut s, o)?;
    Ok(s)
}

/// An unknown model, machine or artifact that the scenario file named (not a flag) is
/// reported with that file and line: `s.toml:2: unknown model "no-such-model"; known: …`.
fn in_scenario(cat: &Catalog, o: &ScenarioOptions, e: ProfileError) -> BuildError {
    let ProfileError::Unknown { kind, .. } = &e else {
        return e.into();
    };
    let from_flag = match *kind {
        "model" => o.model.is_some(),
        "machine" => o.machine.is_some(),
        "artifact" => o.artifact.is_some() || o.model.is_some() || o.artifact_bytes.is_some(),
        _ => true,
    };
    if from_flag {
        return e.into();
    }
    let id = o.scenario.as_deref().unwrap_or("default");
    match load::scenario_key_location(cat, id, kind) {
        Some(loc) => BuildError::File {
            path: loc,
            message: e.to_string(),
        },
        None => e.into(),
    }
}

/// A GGUF error as one line that names the file.
pub fn gguf_message(path: &Path, e: &GgufError) -> String {
    let m = e.to_string();
    let p = path.display().to_string();
    if m.contains(&p) {
        m
    } else {
        format!("{p}: {m}")
    }
}

/// An opened GGUF artifact with what the bounds need from it.
#[derive(Debug, Clone)]
pub struct GgufInput {
    /// The artifact (all shards).
    pub artifact: gguf::Artifact,
    /// Its tensor inventory: totals and rollups, `rows` left empty (`TensorInventory::summary`).
    pub inventory: TensorInventory,
    /// The model shape, or why the KV maths cannot be done (the inventory still can).
    pub shape: Result<ModelShape, String>,
    /// A model profile artifact of exactly the same size, when there is one.
    pub matched: Option<(ModelFile, ArtifactFile)>,
}

/// Open a GGUF header (never its tensor data) and match it to a profile by exact size.
pub fn open_gguf(cat: &Catalog, path: &Path) -> Result<GgufInput, BuildError> {
    let artifact = crate::remote::open_any(path)
        .map_err(BuildError::Gguf)?
        .artifact;
    let inventory = TensorInventory::summary(&artifact);
    let name = artifact
        .metadata()
        .get_str("general.name")
        .ok()
        .flatten()
        .map(str::to_string)
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let shape = gguf::model_shape(&artifact, &name).map_err(|e| gguf_message(path, &e));
    let matched = cat.artifact_with_bytes(artifact.file_bytes());
    Ok(GgufInput {
        artifact,
        inventory,
        shape,
        matched,
    })
}

/// Replace the scenario's model, W and inventory with an opened file's. The advertised
/// parameter count of a model profile whose artifact has exactly the same size is kept (spec);
/// otherwise the file's counted parameters serve, labelled as counted.
pub fn with_gguf(s: &mut Scenario, g: &GgufInput) -> Result<(), BuildError> {
    let mut shape = g.shape.clone().map_err(BuildError::Gguf)?;
    shape.warnings.extend(g.artifact.all_warnings());
    if g.artifact.missing_bytes() > 0 {
        shape.warnings.push(format!(
            "partial download: {} bytes of tensor data are missing; W is the size of the complete file",
            units::group_digits(g.artifact.missing_bytes() as u128)
        ));
    }
    if let Some((m, _)) = &g.matched {
        shape.parameters_advertised = m.parameters.as_ref().map(|p| p.sourced());
        shape.active_parameters_advertised = m.active_parameters.as_ref().map(|p| p.sourced());
    }
    let file = g
        .artifact
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    s.name = format!("{file} on {}", s.machine.name);
    s.model = shape;
    let extra: Vec<WeightFile> = s
        .weights
        .iter()
        .filter(|w| w.label.starts_with("mmproj ") || w.label.starts_with("draft "))
        .cloned()
        .collect();
    s.weights = g.artifact.weight_files();
    s.weights.extend(extra);
    s.inventory = Some(g.inventory.to_core_inventory());
    Ok(())
}

/// A file the runtime loads beside the model (projector, draft): its exact size from the OS.
pub fn extra_file(kind: &str, path: &Path) -> Result<WeightFile, BuildError> {
    let meta = std::fs::metadata(path).map_err(|e| BuildError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(BuildError::File {
            path: path.display().to_string(),
            message: "not a regular file".into(),
        });
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(WeightFile {
        label: format!("{kind} {name}"),
        bytes: Sourced::new(meta.len(), Provenance::File, path.display().to_string()),
    })
}

/// Apply the option overrides to a scenario (also used after a GGUF replaced the model).
pub fn apply(s: &mut Scenario, o: &ScenarioOptions) -> Result<(), BuildError> {
    if let Some(n) = o.context {
        s.cache.context = n;
    }
    if let Some(b) = o.sequences {
        s.cache.sequences = b;
    }
    if let Some(t) = &o.cache_type_k {
        s.cache.type_k = cache_type("--cache-type-k", t)?;
    }
    if let Some(t) = &o.cache_type_v {
        s.cache.type_v = cache_type("--cache-type-v", t)?;
    }
    if let Some(a) = &o.overhead {
        let v = units::parse_bytes(a).map_err(|e| flag("--overhead", e.0))?;
        s.other_bytes = Sourced::new(v, Provenance::User, "--overhead");
    }
    if let Some(n) = o.gpu_layers {
        s.offload.gpu_layers = Some(n);
    }
    if let Some(n) = o.prompt_rows {
        s.prompt_rows = n;
    }
    if let Some(f) = o.flash_attn {
        s.cache.flash_attn = f;
    }
    if let Some(u) = o.ubatch {
        s.cache.ubatch = u;
    }
    if o.kv_unified {
        s.cache.kv_unified = true;
    }
    if o.swa_full {
        s.cache.swa_full = true;
    }
    if o.no_kv_offload {
        s.offload.no_kv_offload = true;
    }
    if let Some(t) = &o.tensor_split {
        s.offload.tensor_split = Some(t.clone());
    }
    if let Some(p) = &o.compute_path {
        s.compute_path = p.clone();
    }
    if let Some(p) = &o.mmproj {
        s.weights.push(extra_file("mmproj", p)?);
    }
    if let Some(p) = &o.draft {
        s.weights.push(extra_file("draft", p)?);
    }
    if o.memory.is_some() || o.bandwidth.is_some() {
        let idx = match &o.tier {
            Some(name) => s
                .machine
                .tiers
                .iter()
                .position(|t| &t.name == name)
                .ok_or_else(|| {
                    flag(
                        "--tier",
                        format!(
                            "machine \"{}\" has no tier \"{name}\" (tiers: {})",
                            s.machine.id,
                            s.machine
                                .tiers
                                .iter()
                                .map(|t| t.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?,
            None => 0,
        };
        let tier = &mut s.machine.tiers[idx];
        if let Some(m) = &o.memory {
            let v = units::parse_bytes(m).map_err(|e| flag("--memory", e.0))?;
            if v == 0 {
                return Err(flag(
                    "--memory",
                    "a memory size must be above 0 (e.g. \"64 GiB\")",
                ));
            }
            tier.capacity = Sourced::new(v, Provenance::User, "--memory");
        }
        if let Some(b) = &o.bandwidth {
            let v = units::parse_bandwidth(b).map_err(|e| flag("--bandwidth", e.0))?;
            tier.bandwidth = Sourced::new(v, Provenance::User, "--bandwidth");
            tier.measured_bandwidth = None;
        }
    }
    s.validate().map_err(|e| flag("scenario", e.0))?;
    Ok(())
}
