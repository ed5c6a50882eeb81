//! An MLX-LM artifact read once (a safetensors folder's headers, its inventory, its cache
//! layout and activation shape) and its plan on a machine: what the CLI report, the
//! explorer (through the workspace) and the side-by-side comparison all compute from.
//! The arithmetic is `core::mlx::plan`; this gathers its inputs from the headers.

use super::index::Model;
use super::inventory::MlxInventory;
use super::{SafetensorsError, layout};
use crate::core::mlx::{self, ActivationShape, KvQuant, MlxPlan, MlxRun, PlanInput};
use crate::core::weights::{ExpertCount, inventory_read_bytes};
use std::path::Path;

/// Why a safetensors folder gives no MLX-LM artifact (one line naming the folder).
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// Reading the folder.
    #[error(transparent)]
    Read(#[from] SafetensorsError),
    /// No cache layout for this model.
    #[error("{dir}: {source}")]
    Layout {
        /// The folder.
        dir: String,
        /// Why.
        source: layout::LayoutError,
    },
}

/// What the report needs of the machine.
#[derive(Debug, Clone)]
pub struct MachineFigures {
    /// Display name.
    pub name: String,
    /// Memory capacity, bytes.
    pub capacity: u64,
    /// Bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Provenance label of the bandwidth.
    pub bandwidth_provenance: &'static str,
    /// Metal's `recommendedMaxWorkingSetSize` from the machine's profile, bytes
    /// ([`machine_working_set`]).
    pub working_set: Option<u64>,
    /// Provenance label of that figure (the profile's: spec, measured, derived or user).
    pub working_set_provenance: Option<&'static str>,
}

/// The largest context searched when the config gives no native context, tokens.
pub const SEARCH_CAP: u64 = 1 << 24;

/// A safetensors model read for MLX-LM: the folder's headers, its inventory, its cache
/// layout and the shape of its activations. Read once; every plan of it is computed from it.
#[derive(Debug, Clone)]
pub struct MlxArtifact {
    /// The folder (or file) named.
    pub dir: std::path::PathBuf,
    /// The headers and config as read.
    pub model: Model,
    /// The logical tensors.
    pub inventory: MlxInventory,
    /// MLX-LM's caches for this model.
    pub layout: mlx::CacheLayout,
    /// The shape the activation estimate needs.
    pub shape: ActivationShape,
}

impl MlxArtifact {
    /// Read the folder's config and every shard's header (never the tensor data).
    pub fn read(dir: &Path) -> Result<MlxArtifact, ArtifactError> {
        let model = super::open_dir(dir)?;
        MlxArtifact::of(dir, model)
    }

    /// The artifact of headers already read (a remote repository's).
    pub fn of(dir: &Path, model: Model) -> Result<MlxArtifact, ArtifactError> {
        let inventory = MlxInventory::of(&model);
        let layout = layout::layout_of(&model).map_err(|source| ArtifactError::Layout {
            dir: crate::sanitize::path(dir),
            source,
        })?;
        let shape = shape_of(&model);
        Ok(MlxArtifact {
            dir: dir.to_path_buf(),
            model,
            inventory,
            layout,
            shape,
        })
    }

    /// W: the safetensors files' bytes.
    pub fn weights_bytes(&self) -> u64 {
        self.model.file_bytes()
    }

    /// Weight bytes read per decoded token: packed weights with their scales and biases,
    /// the routed experts a token uses.
    pub fn weights_read_bytes(&self) -> u64 {
        inventory_read_bytes(
            &self.inventory.to_core(),
            self.inventory.experts,
            1,
            ExpertCount::Expected,
        )
    }

    /// `model_type` from config.json ("?" without one).
    pub fn model_type(&self) -> &str {
        self.model
            .config
            .as_ref()
            .map_or("?", |c| c.model_type.as_str())
    }

    /// The native context (`max_position_embeddings`), when the config gives it.
    pub fn native_context(&self) -> Option<u64> {
        self.model
            .config
            .as_ref()
            .and_then(|c| c.u64("max_position_embeddings"))
            .filter(|&n| n > 0)
    }

    /// Bytes and elements per encoding (`BF16`, `affine q4 g64`, …), by name.
    pub fn encodings(&self) -> Vec<(String, u64, u64)> {
        let mut enc: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
        for r in &self.inventory.rows {
            let e = enc.entry(r.encoding.as_str()).or_default();
            e.0 += r.bytes;
            e.1 += r.elements;
        }
        enc.into_iter()
            .map(|(k, (b, n))| (k.to_string(), b, n))
            .collect()
    }

    /// The reader's and the inventory's notes.
    pub fn warnings(&self) -> Vec<String> {
        self.model
            .warnings
            .iter()
            .chain(&self.inventory.warnings)
            .cloned()
            .collect()
    }
}

fn shape_of(model: &Model) -> ActivationShape {
    let c = model.config.as_ref();
    let u = |k: &str| c.and_then(|c| c.u64(k)).unwrap_or(0);
    let experts = u("num_experts_per_tok") * u("moe_intermediate_size")
        + u("shared_expert_intermediate_size");
    ActivationShape {
        heads: u("num_attention_heads"),
        hidden: u("hidden_size"),
        ffn: u("intermediate_size").max(experts),
        recurrent_state: u("linear_num_value_heads")
            * u("linear_value_head_dim")
            * u("linear_key_head_dim")
            * 4,
    }
}

impl MachineFigures {
    /// The figures of a machine's first memory tier (where the weights are), with the
    /// working set its profile records; `None` for a machine without a tier.
    pub fn of(m: &crate::core::scenario::Machine) -> Option<MachineFigures> {
        let tier = m.tiers.first()?;
        let bw = tier.headline_bandwidth();
        Some(MachineFigures {
            name: m.name.clone(),
            capacity: tier.capacity.value,
            bandwidth: bw.value.0,
            bandwidth_provenance: bw.provenance.label(),
            working_set: machine_working_set(m).map(|(b, _)| b),
            working_set_provenance: machine_working_set(m).map(|(_, p)| p),
        })
    }
}

/// The machine's Metal working set (`recommendedMaxWorkingSetSize`), bytes, with its
/// provenance label: the memory its profile says the Metal backend reports free (the same
/// figure llama.cpp's placement holds the model against; `--device-free` / a wired-limit
/// edit changes both). `None` for a machine without a Metal device (then `--working-set`
/// gives it). The one place MLX-LM's plan reads it from the profile.
pub fn machine_working_set(
    machine: &crate::core::scenario::Machine,
) -> Option<(u64, &'static str)> {
    machine
        .tiers
        .iter()
        .filter_map(|t| t.device_or_default())
        .find(|d| d.backend == crate::core::placement::Backend::Metal)
        .map(|d| (d.free.value, d.free.provenance.label()))
}

/// The MLX-LM settings of a plan, parsed from the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MlxSettings {
    /// `--kv-bits` and its group and start.
    pub kv_quant: Option<KvQuant>,
    /// `--max-kv-size`.
    pub max_kv_size: Option<u64>,
    /// Metal's `recommendedMaxWorkingSetSize`, bytes.
    pub working_set: Option<u64>,
    /// Where the working set came from (`user` for `--working-set`, else the profile's).
    pub working_set_provenance: Option<&'static str>,
}

impl MlxSettings {
    /// MLX-LM's defaults (no quantized cache, no `--max-kv-size`) with the machine's working
    /// set, when its profile records one.
    pub fn on(machine: &MachineFigures) -> MlxSettings {
        MlxSettings {
            working_set: machine.working_set,
            working_set_provenance: machine.working_set_provenance,
            ..MlxSettings::default()
        }
    }
    /// The scenario's MLX-LM settings (`--kv-bits`, `--max-kv-size` …) with the machine's
    /// working set.
    pub fn with(machine: &MachineFigures, run: &crate::core::mlx::MlxLmSettings) -> MlxSettings {
        MlxSettings {
            kv_quant: run.kv_quant(),
            max_kv_size: run.max_kv_size,
            ..MlxSettings::on(machine)
        }
    }
}

/// MLX-LM's plan of `art` with `settings` for a prompt of `context` tokens on `machine`.
pub fn plan(
    art: &MlxArtifact,
    settings: &MlxSettings,
    context: u64,
    machine: &MachineFigures,
) -> MlxPlan {
    let mut run = MlxRun::prompt(context.max(1));
    run.max_kv_size = settings.max_kv_size;
    run.kv_quant = settings.kv_quant;
    mlx::plan(&PlanInput {
        layout: &art.layout,
        shape: art.shape,
        weights_bytes: art.weights_bytes(),
        weights_read_bytes: art.weights_read_bytes(),
        capacity: machine.capacity,
        bandwidth: machine.bandwidth,
        working_set: settings.working_set,
        run,
        search_max: art.native_context().unwrap_or(SEARCH_CAP),
    })
}

/// llama.cpp's architecture for an MLX-LM `model_type` whose figures map one to one (dense
/// attention, every layer full): the shape the workspace shows for a safetensors model.
const DENSE_ARCHITECTURES: &[(&str, &str)] = &[
    ("llama", "llama"),
    ("mistral", "llama"),
    ("qwen2", "qwen2"),
    ("qwen3", "qwen3"),
];

impl MlxArtifact {
    /// The model's raw figures as a GGUF of it would give them, for the models whose
    /// `config.json` maps one to one (dense attention on every layer: llama, mistral, qwen2,
    /// qwen3; no experts, no sliding window); `None` for any other (the panes then keep the
    /// figures they had).
    pub fn arch_figures(&self) -> Option<crate::core::model::ArchFigures> {
        use crate::core::model::{ArchFigures, PerLayer};
        let c = self.model.config.as_ref()?;
        let arch = DENSE_ARCHITECTURES
            .iter()
            .find(|(m, _)| *m == c.model_type)?
            .1;
        let u = |k: &str| c.u64(k);
        if u("num_local_experts").or(u("num_experts")).unwrap_or(0) > 0
            || u("sliding_window").is_some_and(|w| w > 0)
                && c.bool("use_sliding_window").unwrap_or(true)
        {
            return None;
        }
        let n32 = |k: &str| u(k).and_then(|v| u32::try_from(v).ok());
        let layers = n32("num_hidden_layers")?;
        let heads = n32("num_attention_heads")?;
        let kv = n32("num_key_value_heads").unwrap_or(heads);
        let hidden = u("hidden_size")?;
        let head_dim =
            n32("head_dim").or_else(|| u32::try_from(hidden / u64::from(heads.max(1))).ok())?;
        Some(ArchFigures {
            architecture: arch.to_string(),
            layers,
            head_count: PerLayer::Uniform(heads),
            head_count_kv: PerLayer::Uniform(kv),
            key_length: Some(head_dim),
            value_length: Some(head_dim),
            embedding_length: hidden,
            vocab_size: u("vocab_size").unwrap_or(0),
            native_context: self.native_context(),
            sliding_window: None,
            sliding_pattern: None,
            chunk_size: None,
            mla: None,
            moe: None,
            ssm: None,
            recurrent_layers: None,
            tied_embeddings: self.inventory.tied_output,
            keys: Default::default(),
        })
    }

    /// The safetensors files as the scenario's weight files (W = Σ their sizes, from the
    /// files or, remote, the sizes the server gave).
    pub fn weight_files(&self) -> Vec<crate::core::weights::WeightFile> {
        use crate::core::units::{Provenance, Sourced};
        use crate::core::weights::{ArtifactSource, WeightFile, WeightKind};
        self.model
            .shards
            .iter()
            .map(|s| {
                let p = s.path.to_string_lossy();
                let remote = p.starts_with("http://") || p.starts_with("https://");
                WeightFile {
                    kind: WeightKind::Artifact(if remote {
                        ArtifactSource::Remote
                    } else {
                        ArtifactSource::File
                    }),
                    file: s
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    bytes: Sourced::new(
                        s.header.file_len,
                        Provenance::File,
                        "safetensors file size",
                    ),
                }
            })
            .collect()
    }
}
