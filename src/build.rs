//! From options (CLI flags or the TUI's start-up arguments) to a `core::Scenario`: picks the
//! scenario, model, artifact and machine profiles and applies overrides. No terminal I/O.

use crate::core::cache::CacheType;
use crate::core::scenario::Scenario;
use crate::core::units::{self, Provenance, Sourced};
use crate::profile::{Catalog, ProfileError, load};

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
}

/// A problem building the scenario: one line.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// A profile could not be used.
    #[error(transparent)]
    Profile(#[from] ProfileError),
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
        let mut s = load::scenario(&cat2, &file)?;
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
                    return Err(flag(
                        "--model",
                        format!(
                            "model \"{}\" has no known artifact: give its GGUF with --gguf",
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
    let mut s = load::scenario(cat, &file)?;
    apply(&mut s, o)?;
    Ok(s)
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
                return Err(flag("--memory", "a memory size must be above 0"));
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
