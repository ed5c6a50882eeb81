//! The inputs of one evaluation: model, weight files, inventory, machine, cache and
//! placement settings. Pure: no I/O, no other top-level module.

use super::kv::CacheSettings;
use super::model::ModelShape;
use super::placement::{
    Backend, Device, GpuLayers, Override, PlacementError, PlacementSettings, SplitMode,
};
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
    /// The device llama.cpp sees on this tier (accelerator and unified tiers): its backend and
    /// the memory the backend reports free. `None`: the defaults of [`Tier::device_or_default`].
    pub device: Option<DeviceSpec>,
}

/// The device a backend exposes on an accelerator or unified tier, as llama.cpp sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceSpec {
    /// The ggml backend (cuda, rocm, metal, vulkan, rpc).
    pub backend: Backend,
    /// The memory the backend reports free to llama.cpp (`ggml_backend_dev_memory`): CUDA's
    /// total minus the context's reservation, Metal's `recommendedMaxWorkingSetSize`, a UMA
    /// APU's GTT pool, what an RPC server reports.
    pub free: Sourced<u64>,
    /// `host:port` of an RPC server (rpc backend only; `--rpc`).
    pub endpoint: Option<String>,
    /// The largest tensor an op on the device may read or write (Vulkan:
    /// `maxStorageBufferRange` when the device lacks 64-bit shader indexing), see
    /// `placement::Device::max_tensor`. `None`: no limit.
    pub max_tensor: Option<Sourced<u64>>,
}

/// The source of a free-memory figure a profile does not state.
pub const DEFAULT_FREE_SOURCE: &str =
    "no free-memory figure in the profile: the whole capacity assumed free to the backend";

impl Tier {
    /// Does llama.cpp see a device on this tier (accelerator or unified memory)?
    pub fn is_device(&self) -> bool {
        matches!(self.kind, TierKind::Accelerator | TierKind::Unified)
    }
    /// The device of an accelerator or unified tier: the profile's, else the defaults, stated
    /// as derived (accelerator: cuda; unified: metal; free = the whole capacity). `None` for
    /// host and ssd tiers.
    pub fn device_or_default(&self) -> Option<DeviceSpec> {
        if !self.is_device() {
            return None;
        }
        Some(self.device.clone().unwrap_or_else(|| DeviceSpec {
            backend: if self.kind == TierKind::Unified {
                Backend::Metal
            } else {
                Backend::Cuda
            },
            free: Sourced::new(
                self.capacity.value,
                Provenance::Derived,
                DEFAULT_FREE_SOURCE,
            ),
            endpoint: None,
            max_tensor: None,
        }))
    }
}

/// The buffer-type name prefix llama.cpp gives a backend's devices (`CUDA0`, `MTL0`, `RPC0[…]`).
pub fn buffer_prefix(b: Backend) -> &'static str {
    match b {
        Backend::Cuda => "CUDA",
        Backend::Rocm => "ROCm",
        Backend::Metal => "MTL",
        Backend::Vulkan => "Vulkan",
        Backend::Rpc => "RPC",
    }
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
    /// Network links to the machine's other hosts (llama.cpp RPC).
    pub links: Vec<Link>,
}

/// A network link between the head host and the hosts of some tiers (llama.cpp RPC).
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Name.
    pub name: String,
    /// Tier names reached over it.
    pub tiers: Vec<String>,
    /// Bandwidth one way, bytes/s.
    pub bandwidth: Sourced<BytesPerSec>,
    /// Round-trip latency of one request, microseconds.
    pub latency_us: Sourced<f64>,
}

impl Machine {
    /// The compute rate for a path, if the profile has one.
    pub fn compute_for(&self, path: &str) -> Option<&ComputeRate> {
        self.compute.iter().find(|c| c.path == path)
    }
    /// The devices llama.cpp sees, in the machine's tier order, with the index of their tier:
    /// accelerator and unified tiers, named as llama.cpp names their buffer types (numbered
    /// per backend: `CUDA0`, `CUDA1`, `MTL0`, `RPC0[host:port]`). Free memory never exceeds
    /// the tier's capacity.
    pub fn devices(&self) -> Vec<(usize, Device)> {
        let mut seen: Vec<(Backend, usize)> = Vec::new();
        let mut out = Vec::new();
        for (i, t) in self.tiers.iter().enumerate() {
            let Some(d) = t.device_or_default() else {
                continue;
            };
            // each RPC server numbers its own devices: one device per server here
            let n = match seen.iter_mut().find(|(b, _)| *b == d.backend) {
                _ if d.backend == Backend::Rpc => 0,
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    seen.push((d.backend, 1));
                    0
                }
            };
            let mut name = format!("{}{n}", buffer_prefix(d.backend));
            if d.backend == Backend::Rpc {
                name.push_str(&format!("[{}]", d.endpoint.as_deref().unwrap_or("?")));
            }
            out.push((
                i,
                Device {
                    buffer_name: name,
                    backend: d.backend,
                    free: super::units::Bytes(d.free.value.min(t.capacity.value)),
                    total: super::units::Bytes(t.capacity.value),
                    max_tensor: d.max_tensor.as_ref().map(|m| super::units::Bytes(m.value)),
                },
            ));
        }
        out
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

/// Where layers and tensors go: llama.cpp's placement flags (`-ngl`, `-ts`, `-sm`, `-mg`, `-ot`,
/// `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, `-nkvo`) and `-fit`'s own (`-fit`, `-fitt`,
/// `-fitc`), SPEC §6.
#[derive(Debug, Clone, PartialEq)]
pub struct Offload {
    /// `-ngl n`: the output layer plus the last n − 1 repeating layers on accelerators.
    /// `None` = all (`auto`, llama.cpp's default, or `all` when [`Offload::gpu_layers_all`]).
    pub gpu_layers: Option<u32>,
    /// `-ngl all` was given (all layers, and `-fit` counts it as set by the user); only with
    /// `gpu_layers: None`.
    pub gpu_layers_all: bool,
    /// Proportions of the offloaded layers per accelerator (`--tensor-split`); default by capacity.
    pub tensor_split: Option<Vec<f64>>,
    /// `-nkvo`: keep the whole KV cache in host memory.
    pub no_kv_offload: bool,
    /// `-sm none|layer|row`.
    pub split_mode: SplitMode,
    /// `-mg`: the device `-sm none` keeps.
    pub main_gpu: u32,
    /// `-ot PATTERN=BUFFER_TYPE` items, in command-line order, as written.
    pub overrides: Vec<String>,
    /// `--cpu-moe`.
    pub cpu_moe: bool,
    /// `--n-cpu-moe N` (0: not given).
    pub n_cpu_moe: u32,
    /// `--n-cpu-ffn N` (0: not given).
    pub n_cpu_ffn: u32,
    /// `-fit on|off` (on by default, as in llama.cpp).
    pub fit: bool,
    /// `-fitt`: the margin `-fit` leaves free per device, MiB (one value for every device, or
    /// one per device; empty: llama.cpp's 1024).
    pub fit_margin_mib: Vec<u64>,
    /// `-fitc`: the smallest context `-fit` may choose (llama.cpp's default 4096).
    pub fit_min_ctx: u32,
    /// `-c 0` (llama.cpp's default when `-c` is not given): the context is the trained one,
    /// and `-fit` may reduce it (linear interpolation down to `-fitc`, rounded down to
    /// 256 × streams). The cache's context is the trained context until the plan chooses.
    pub context_auto: bool,
}

impl Default for Offload {
    fn default() -> Self {
        Offload {
            gpu_layers: None,
            gpu_layers_all: false,
            tensor_split: None,
            no_kv_offload: false,
            split_mode: SplitMode::Layer,
            main_gpu: 0,
            overrides: Vec::new(),
            cpu_moe: false,
            n_cpu_moe: 0,
            n_cpu_ffn: 0,
            fit: true,
            fit_margin_mib: Vec::new(),
            fit_min_ctx: super::placement::DEFAULT_FIT_MIN_CTX,
            context_auto: false,
        }
    }
}

impl Offload {
    /// `-ngl` as llama.cpp holds it.
    pub fn ngl(&self) -> GpuLayers {
        match (self.gpu_layers, self.gpu_layers_all) {
            (Some(n), _) => GpuLayers::Count(n),
            (None, true) => GpuLayers::All,
            (None, false) => GpuLayers::Auto,
        }
    }
    /// The placement flags for llama.cpp's placement, `-ot` buffer types matched against
    /// `devices`; overrides in the order `-ot`, `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`.
    pub fn placement_settings(
        &self,
        devices: &[Device],
    ) -> Result<PlacementSettings, PlacementError> {
        let mut overrides = Vec::new();
        for item in &self.overrides {
            overrides.extend(Override::parse_list(item, devices)?);
        }
        if self.cpu_moe {
            overrides.push(super::placement::cpu_moe());
        }
        overrides.extend(super::placement::n_cpu_moe(self.n_cpu_moe));
        overrides.extend(super::placement::n_cpu_ffn(self.n_cpu_ffn));
        Ok(PlacementSettings {
            gpu_layers: self.ngl(),
            tensor_split: self
                .tensor_split
                .as_ref()
                .map(|v| v.iter().map(|x| *x as f32).collect()),
            split_mode: self.split_mode,
            main_gpu: self.main_gpu as usize,
            overrides,
            no_kv_offload: self.no_kv_offload,
        })
    }
    /// `-fitt` per device, bytes.
    pub fn fit_margins(&self) -> Vec<super::units::Bytes> {
        if self.fit_margin_mib.is_empty() {
            return vec![super::placement::DEFAULT_FIT_MARGIN];
        }
        self.fit_margin_mib
            .iter()
            .map(|m| super::units::Bytes(m.saturating_mul(super::units::MIB)))
            .collect()
    }
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
    /// MLX-LM's run settings (`--kv-bits`, `--max-kv-size` …): they change MLX-LM's plan
    /// only, never llama.cpp's figures.
    pub mlx_lm: super::mlx::MlxLmSettings,
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
