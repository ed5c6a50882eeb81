//! The inputs of one evaluation: model, weight files, inventory, machine, cache and
//! placement settings. Pure: no I/O, no other top-level module.

use super::kv::CacheSettings;
use super::model::ModelShape;
use super::runtime::FeedForward;
use super::units::{BytesPerSec, FlopPerSec, Provenance, Sourced};
use super::weights::{Inventory, WeightFile};
use std::fmt;

/// The kind of a memory tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierKind {
    /// Accelerator-attached memory (GPU VRAM, HBM).
    Accelerator,
    /// Unified system memory shared by CPU and GPU (Apple silicon, Strix Halo).
    Unified,
    /// Host RAM.
    Host,
    /// Solid-state storage.
    Ssd,
}

impl TierKind {
    /// Label used in profiles and reports.
    pub fn label(self) -> &'static str {
        match self {
            TierKind::Accelerator => "accelerator",
            TierKind::Unified => "unified",
            TierKind::Host => "host",
            TierKind::Ssd => "ssd",
        }
    }
    /// Parse a label.
    pub fn parse(s: &str) -> Option<TierKind> {
        [
            TierKind::Accelerator,
            TierKind::Unified,
            TierKind::Host,
            TierKind::Ssd,
        ]
        .into_iter()
        .find(|k| k.label() == s)
    }
}

impl fmt::Display for TierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One memory pool of a machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Tier {
    /// Name ("unified", "gpu0", "host").
    pub name: String,
    /// Kind.
    pub kind: TierKind,
    /// Capacity M in bytes.
    pub capacity: Sourced<u64>,
    /// Vendor or stated bandwidth in bytes/s.
    pub bandwidth: Sourced<BytesPerSec>,
    /// Sustained bandwidth measured on the machine, bytes/s.
    pub measured_bandwidth: Option<Sourced<BytesPerSec>>,
}

impl Tier {
    /// The bandwidth the headline ceilings use: the measured figure when there is one,
    /// else the stated one.
    pub fn headline_bandwidth(&self) -> &Sourced<BytesPerSec> {
        self.measured_bandwidth.as_ref().unwrap_or(&self.bandwidth)
    }
    /// The highest bandwidth on record for the tier (the one that can call a rate impossible).
    pub fn highest_bandwidth(&self) -> &Sourced<BytesPerSec> {
        match &self.measured_bandwidth {
            Some(m) if m.value.0 > self.bandwidth.value.0 => m,
            _ => &self.bandwidth,
        }
    }
}

/// A sustained compute rate for one execution path.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeRate {
    /// Path name ("fp16", "int8", ...).
    pub path: String,
    /// Tier whose processor runs it.
    pub tier: String,
    /// FLOP/s (one multiply-add = 2 FLOP).
    pub rate: Sourced<FlopPerSec>,
}

/// A machine profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Profile id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Memory tiers, in order.
    pub tiers: Vec<Tier>,
    /// Compute rates per path.
    pub compute: Vec<ComputeRate>,
}

impl Machine {
    /// The compute rate for a path, if the profile has one.
    pub fn compute_for(&self, path: &str) -> Option<&ComputeRate> {
        self.compute.iter().find(|c| c.path == path)
    }
    /// Accelerator tier indices, in order.
    pub fn accelerators(&self) -> Vec<usize> {
        self.tiers
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == TierKind::Accelerator)
            .map(|(i, _)| i)
            .collect()
    }
}

/// Where layers go (llama.cpp `-ngl`, `--tensor-split`, `-nkvo`, SPEC §6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Offload {
    /// `-ngl n`: the output layer plus the last n − 1 repeating layers on accelerators.
    /// `None` = all (`-ngl L+1` or more).
    pub gpu_layers: Option<u32>,
    /// Proportions of the offloaded layers per accelerator (`--tensor-split`); default by capacity.
    pub tensor_split: Option<Vec<f64>>,
    /// `-nkvo`: keep the whole KV cache in host memory.
    pub no_kv_offload: bool,
}

/// Everything one evaluation needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Display name.
    pub name: String,
    /// Model shape.
    pub model: ModelShape,
    /// Files the runtime loads (shards, projector, draft); Σ = W.
    pub weights: Vec<WeightFile>,
    /// Tensor inventory of the artifact, when a GGUF was read.
    pub inventory: Option<Inventory>,
    /// Machine.
    pub machine: Machine,
    /// Cache settings.
    pub cache: CacheSettings,
    /// Other live allocations A in bytes.
    pub other_bytes: Sourced<u64>,
    /// Layer placement.
    pub offload: Offload,
    /// Prompt rows S for the prefill bound.
    pub prompt_rows: u64,
    /// Compute path for prefill ("fp16", ...).
    pub compute_path: String,
    /// FFN widths stated by the model profile (a GGUF's tensor inventory carries its own).
    pub feed_forward: FeedForward,
    /// The runtime the figures shown are for (llama.cpp unless an MLX model is open and
    /// MLX-LM is chosen); `core::evaluate` is llama.cpp's either way.
    pub runtime: super::mlx::Runtime,
}

/// An input that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

/// Capacity and bandwidths of a tier within the plausible ranges of `units` (bandwidth
/// 1 MB/s – 100 TB/s, capacity 1 MiB – 1 PiB).
fn check_tier_ranges(t: &Tier) -> Result<(), ScenarioError> {
    use super::units::{check_bandwidth, check_capacity, fmt_bandwidth, group_digits};
    check_capacity(t.capacity.value).map_err(|e| {
        ScenarioError(format!(
            "tier \"{}\": capacity {} bytes is {e}",
            t.name,
            group_digits(t.capacity.value as u128)
        ))
    })?;
    for (what, bw) in std::iter::once(("bandwidth", &t.bandwidth)).chain(
        t.measured_bandwidth
            .iter()
            .map(|m| ("measured bandwidth", m)),
    ) {
        check_bandwidth(bw.value).map_err(|e| {
            ScenarioError(format!(
                "tier \"{}\": {what} {} is {e}",
                t.name,
                if bw.value.0.is_finite() && bw.value.0 < 1e18 && bw.value.0 > 1e-3 {
                    fmt_bandwidth(bw.value)
                } else {
                    format!("{:.3e} B/s", bw.value.0)
                }
            ))
        })?;
    }
    Ok(())
}

/// llama.cpp's largest sequence count (`LLAMA_MAX_SEQ`).
pub const MAX_SEQUENCES: u64 = 256;
/// llama.cpp's context is a u32.
pub const MAX_CONTEXT: u64 = u32::MAX as u64;

impl Scenario {
    /// Reject inputs no runtime could run, with a one-line reason.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let c = &self.cache;
        if c.context == 0 {
            return Err(ScenarioError("context must be at least 1 token".into()));
        }
        if c.sequences == 0 {
            return Err(ScenarioError("sequences must be at least 1".into()));
        }
        if c.sequences > MAX_SEQUENCES {
            return Err(ScenarioError(format!(
                "sequences \"{}\" is above llama.cpp's limit of {MAX_SEQUENCES}",
                c.sequences
            )));
        }
        if c.context.saturating_mul(c.sequences) > MAX_CONTEXT {
            return Err(ScenarioError(format!(
                "context {} × {} sequences is beyond llama.cpp's u32 context ({} tokens)",
                super::units::group_digits(c.context as u128),
                c.sequences,
                super::units::group_digits(MAX_CONTEXT as u128)
            )));
        }
        if c.ubatch == 0 || c.ubatch > MAX_CONTEXT {
            return Err(ScenarioError(format!(
                "ubatch \"{}\" must be between 1 and {MAX_CONTEXT}",
                c.ubatch
            )));
        }
        if self.prompt_rows == 0 || self.prompt_rows > MAX_CONTEXT {
            return Err(ScenarioError(format!(
                "prompt rows \"{}\" must be between 1 and {MAX_CONTEXT}",
                self.prompt_rows
            )));
        }
        if self.machine.tiers.is_empty() {
            return Err(ScenarioError(format!(
                "machine \"{}\" has no memory tier",
                self.machine.id
            )));
        }
        for t in &self.machine.tiers {
            if t.capacity.value == 0 {
                return Err(ScenarioError(format!(
                    "tier \"{}\" has zero capacity",
                    t.name
                )));
            }
            if !(t.bandwidth.value.0 > 0.0 && t.bandwidth.value.0.is_finite()) {
                return Err(ScenarioError(format!(
                    "tier \"{}\" has no positive bandwidth",
                    t.name
                )));
            }
            check_tier_ranges(t)?;
        }
        for c in &self.machine.compute {
            super::units::check_flops(c.rate.value).map_err(|e| {
                ScenarioError(format!(
                    "compute path \"{}\": rate {:.3e} FLOP/s is {e}",
                    c.path, c.rate.value.0
                ))
            })?;
        }
        if self.weights.is_empty() {
            return Err(ScenarioError("no artifact: W is unknown".into()));
        }
        if self.weights.iter().any(|w| w.bytes.value == 0) {
            return Err(ScenarioError(
                "an artifact of 0 bytes cannot be a model".into(),
            ));
        }
        if let Some(split) = &self.offload.tensor_split {
            let devices = self.machine.accelerators().len();
            super::split::fractions(split, devices)
                .map_err(|e| ScenarioError(format!("{e} (machine \"{}\")", self.machine.id)))?;
        }
        super::overflow::check_scenario_bytes(self).map_err(|e| ScenarioError(e.to_string()))?;
        Ok(())
    }

    /// A name derived from what the scenario is: "{preset artifact file} on {machine}, {N}
    /// tokens[ × B sequences], {K}[/{V}] cache" (the model's name when only a size was given);
    /// "{FILE} on {machine}" for an opened GGUF. The name of a scenario profile stands only
    /// while the scenario is what the profile describes ([`Scenario::same_subject`]).
    pub fn derived_name(&self) -> String {
        use super::weights::{ArtifactSource, WeightKind};
        // An opened GGUF is named by its file and machine (the panes and the worksheet show
        // the rest); a preset's artifact file names its quantisation; a size given by the
        // user has only the model's name.
        let what = match self.weights.first() {
            Some(w) => match w.kind {
                WeightKind::Artifact(ArtifactSource::File | ArtifactSource::Remote) => {
                    return format!("{} on {}", w.file, self.machine.name);
                }
                WeightKind::Artifact(ArtifactSource::Preset) => w.file.clone(),
                _ => self.model.name.clone(),
            },
            None => self.model.name.clone(),
        };
        let c = &self.cache;
        let sequences = if c.sequences == 1 {
            String::new()
        } else {
            format!(" × {} sequences", c.sequences)
        };
        let cache = if c.type_k == c.type_v {
            c.type_k.name().to_string()
        } else {
            format!("{}/{}", c.type_k.name(), c.type_v.name())
        };
        format!(
            "{what} on {}, {} tokens{sequences}, {cache} cache",
            self.machine.name,
            super::units::fmt_tokens(c.context)
        )
    }

    /// True when both scenarios are described by the same name: same model, weight files,
    /// machine, context, sequences and cache types.
    pub fn same_subject(&self, other: &Scenario) -> bool {
        let key = |s: &Scenario| {
            (
                s.model.name.clone(),
                s.weights.clone(),
                s.machine.id.clone(),
                s.machine.name.clone(),
                s.cache.context,
                s.cache.sequences,
                s.cache.type_k,
                s.cache.type_v,
            )
        };
        key(self) == key(other)
    }

    /// Σ of the weight files' bytes (W).
    pub fn weight_bytes(&self) -> u64 {
        super::weights::total_bytes(&self.weights).0
    }

    /// FFN widths for the compute graph: the tensor inventory's when a GGUF was read (none
    /// when it has no FFN tensors), else the profile's.
    pub fn feed_forward(&self) -> FeedForward {
        // A GGUF's inventory decides, even when it has no FFN tensors (Mamba, RWKV): the
        // profile's widths belong to the profile's model, never to another file (a Qwen3
        // FFN width on a Mamba file once made its compute buffer 20x llama.cpp's).
        self.inventory
            .as_ref()
            .map_or(self.feed_forward, |i| i.feed_forward)
    }

    /// Provenance of W: the weakest among the files.
    pub fn weight_provenance(&self) -> Provenance {
        super::weights::total_bytes(&self.weights).1
    }
}
