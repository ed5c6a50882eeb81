//! The JSON contract. Field names are stable; additions only. Byte counts are exact integers,
//! rates are unrounded floats (text and markdown round them for display).

use crate::core::Report;
use crate::core::decode::{BandwidthChoice, Ceiling};
use crate::core::evaluate::ClaimCheck;
use crate::core::model::Attention;
use crate::core::tiers::WeightsMode;
use crate::core::units::{GB, GIB};
use crate::core::weights::ExpertCount;
use serde::Serialize;

/// Document kind and version of `report --format json`.
pub const SCHEMA: &str = "llmbound-report/1";
/// Of `check --format json`.
pub const CLAIM_SCHEMA: &str = "llmbound-claim/1";

/// A figure with its provenance and source.
#[derive(Debug, Clone, Serialize)]
pub struct InputJson {
    /// What it is.
    pub name: String,
    /// Value as text with units.
    pub value: String,
    /// spec / measured / file / derived / user.
    pub provenance: &'static str,
    /// Citation.
    pub source: String,
}

/// The artifact.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactJson {
    /// W, exact bytes over every file loaded.
    pub bytes: u64,
    /// W in GB (10^9).
    pub gb: f64,
    /// W in GiB (2^30).
    pub gib: f64,
    /// Files and their bytes.
    pub files: Vec<FileJson>,
    /// Provenance of W.
    pub provenance: &'static str,
    /// Parameters used for the density.
    pub parameters: Option<u64>,
    /// "advertised" or "counted".
    pub parameters_basis: Option<&'static str>,
    /// Provenance of the parameter count.
    pub parameters_provenance: Option<&'static str>,
    /// 8W / P_total.
    pub bits_per_parameter: Option<f64>,
}

/// One file of W.
#[derive(Debug, Clone, Serialize)]
pub struct FileJson {
    /// Label.
    pub name: String,
    /// Exact bytes.
    pub bytes: u64,
    /// Provenance.
    pub provenance: &'static str,
}

/// One layer's cache.
#[derive(Debug, Clone, Serialize)]
pub struct KvLayerJson {
    /// Layer index.
    pub layer: u32,
    /// full / sliding / chunked / none.
    pub attention: &'static str,
    /// Window or chunk size.
    pub window: Option<u64>,
    /// Layer carries recurrent state.
    pub recurrent: bool,
    /// Bytes per retained token per sequence (K + V).
    pub bytes_per_token: f64,
    /// Retained tokens per sequence.
    pub retained_tokens: u64,
    /// Logical bytes over all sequences.
    pub bytes: u64,
    /// Cells llama.cpp allocates.
    pub allocated_cells: u64,
    /// Bytes llama.cpp allocates.
    pub allocated_bytes: u64,
}

/// The KV cache.
#[derive(Debug, Clone, Serialize)]
pub struct KvJson {
    /// Bytes added per retained token per sequence on layers that keep every token.
    pub bytes_per_token: u64,
    /// Bytes per token per sequence over all attention layers, windows not applied.
    pub bytes_per_token_all_layers: u64,
    /// The per-token part of `bytes`: bytes per retained token per sequence on the layers
    /// still growing at N (`--swa-full`: the sliding layers too).
    pub growing_bytes_per_token: u64,
    /// The fixed part of `bytes`: the windowed layers' cache, capped by their window at N.
    pub window_bytes: u64,
    /// Logical cache as the runtime stores it (MLA: the latent), all sequences, at N.
    pub bytes: u64,
    /// MLA only: the naive per-head figure.
    pub naive_bytes: Option<u64>,
    /// Recurrent state, all sequences.
    pub recurrent_bytes: u64,
    /// What llama.cpp allocates (padded cells, streams, windows + n_ubatch).
    pub allocated_bytes: u64,
    /// llama.cpp's padded n_ctx.
    pub allocated_context: u64,
    /// Bytes one decode step reads from the cache at N.
    pub read_bytes: u64,
    /// K type.
    pub cache_type_k: &'static str,
    /// V type.
    pub cache_type_v: &'static str,
    /// MLA: V is a view of K, `-ctv` has no effect.
    pub v_is_view_of_k: bool,
    /// Provenance (the model figures').
    pub provenance: &'static str,
    /// Per layer.
    pub per_layer: Vec<KvLayerJson>,
}

/// One tier's capacity check.
#[derive(Debug, Clone, Serialize)]
pub struct TierJson {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: &'static str,
    /// Repeating layers placed here.
    pub layers: u32,
    /// Holds the output layer.
    pub output: bool,
    /// Holds the token embedding.
    pub embedding: bool,
    /// Resident weights.
    pub weights_bytes: u64,
    /// KV here.
    pub kv_bytes: u64,
    /// A here.
    pub other_bytes: u64,
    /// Capacity.
    pub memory_bytes: u64,
    /// Headroom (may be negative).
    pub headroom_bytes: i128,
    /// Fits.
    pub fits: bool,
    /// Largest context fitting on this tier (runtime memory; null when llama.cpp will not
    /// start).
    pub max_context_tokens: Option<u64>,
    /// The runtime's memory on this tier, itemised.
    pub memory: MemoryJson,
    /// Used by the placement.
    pub used: bool,
    /// Stated bandwidth.
    pub bandwidth_bytes_per_second: f64,
    /// Its provenance.
    pub bandwidth_provenance: &'static str,
    /// Measured bandwidth.
    pub measured_bandwidth_bytes_per_second: Option<f64>,
}

/// The runtime's memory on one tier, itemised as llama.cpp itemises it, with the user's A.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryJson {
    /// Weights placed here.
    pub model_bytes: u64,
    /// Allocated cache (padded cells, windows + n_ubatch) and recurrent state.
    pub context_bytes: u64,
    /// Output buffer (host).
    pub output_bytes: u64,
    /// Compute buffer.
    pub compute_bytes: u64,
    /// The user's other allocations A.
    pub user_bytes: u64,
    /// Σ.
    pub total_bytes: u64,
    /// Capacity M_i.
    pub capacity_bytes: u64,
    /// capacity − total (negative: short).
    pub free_bytes: i128,
    /// total ≤ capacity.
    pub fits: bool,
    /// When it does not fit: the item whose addition passes the capacity
    /// ("model", "cache", "output", "compute", "A"); null when it fits.
    pub decides: Option<&'static str>,
    /// Provenance of the itemised figures: "derived" (llama.cpp's model of its own
    /// allocation, see `capacity.buffers.model`).
    pub provenance: &'static str,
}

/// The runtime buffers and where their figures come from.
#[derive(Debug, Clone, Serialize)]
pub struct BuffersJson {
    /// Output buffer bytes.
    pub output_bytes: u64,
    /// Compute buffer bytes (per backend that runs part of the graph).
    pub compute_bytes: u64,
    /// Rows of the reserved graph (min(n_ctx, n_ubatch)).
    pub graph_tokens: u64,
    /// The FFN width was not known and was estimated (errs high).
    pub ffn_estimated: bool,
    /// Provenance: "derived".
    pub provenance: &'static str,
    /// What the figures are derived from: "llama.cpp CPU" (llama.cpp's CPU backend
    /// reservation, pinned build; GPU backends reserve differently).
    pub model: &'static str,
    /// The compute buffer against llama.cpp: "exact" (the graph is replayed, within 5% of
    /// llama.cpp's CPU figure, or 1 MiB but never more than a tenth of it, on every oracle
    /// case), "upper_bound" (may be higher than llama.cpp reserves, never lower) or
    /// "estimate" (neither: it came out on either side of llama.cpp's figure, by the measured
    /// error the reason states) or "unchecked" (replayed from llama.cpp's source, but no
    /// llama.cpp figure checks it on both a small and a realistic shape yet).
    pub compute_status: &'static str,
    /// Why the compute buffer is an upper bound (what is bounded, or the FFN width
    /// estimate) or an estimate (what is not replayed and the measured error); null when
    /// exact.
    pub compute_status_reason: Option<String>,
    /// How the figures are made.
    pub basis: &'static str,
}

/// The compute-buffer status fields of `BuffersJson` for an architecture (and whether the FFN
/// width was estimated, which makes any figure an upper bound).
fn compute_status(arch: &str, ffn_estimated: bool) -> (&'static str, Option<String>) {
    use crate::core::runtime::ComputeStatus;
    match crate::core::runtime::compute_status(arch) {
        ComputeStatus::UpperBound(why) => ("upper_bound", Some(why.to_string())),
        ComputeStatus::Estimate {
            below_pct,
            above_pct,
            why,
        } => (
            "estimate",
            Some(super::words::compute_estimate(below_pct, above_pct, why)),
        ),
        ComputeStatus::Unchecked(missing) => {
            ("unchecked", Some(super::words::compute_unchecked(missing)))
        }
        ComputeStatus::Exact if ffn_estimated => (
            "upper_bound",
            Some("the FFN width is not in the file and was estimated high".to_string()),
        ),
        ComputeStatus::Exact => ("exact", None),
    }
}

/// Capacity.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityJson {
    /// W.
    pub weights_bytes: u64,
    /// K (logical cache + recurrent state).
    pub kv_bytes: u64,
    /// A.
    pub other_bytes: u64,
    /// W + K + A.
    pub total_bytes: u64,
    /// M (Σ over the tiers the placement uses).
    pub memory_bytes: u64,
    /// M − W − K − A; with several tiers, the limiting tier's headroom.
    pub headroom_bytes: i128,
    /// Every used tier holds the runtime's memory (allocated cache + buffers + A).
    pub fits: bool,
    /// The article's W + K + A ≤ M on every used tier.
    pub article_fits: bool,
    /// llama.cpp starts with these settings (false: `verdict` says why — a cache
    /// configuration it refuses at any context, or a cache tensor over a device's tensor limit,
    /// which a context up to `max_context_tokens` avoids).
    pub starts: bool,
    /// Verdict in words.
    pub verdict: String,
    /// Largest context per sequence whose runtime memory fits and whose cache tensors stay
    /// within their devices' tensor limits (null: memory sets no limit, or llama.cpp will not
    /// start at any context — `starts` and `verdict` tell them apart).
    pub max_context_tokens: Option<u64>,
    /// Largest logical context per sequence with W + K + A ≤ M (the article's figure).
    pub article_max_context_tokens: Option<u64>,
    /// Runtime memory over the used tiers, itemised (capacity_bytes = M).
    pub memory: MemoryJson,
    /// The output and compute buffers.
    pub buffers: BuffersJson,
    /// Above the model's native context.
    pub max_context_exceeds_native: bool,
    /// The largest `-ngl` (0 … L + 1) for which every used tier fits (null: not even 0 fits,
    /// or the machine has no accelerator and host tier; `core::gpu_layers`).
    pub max_gpu_layers: Option<u32>,
    /// File-mode decode ceiling at the scenario's context with `-ngl max_gpu_layers`.
    pub max_gpu_layers_decode: Option<CeilingJson>,
    /// Tier with the least headroom.
    pub limiting_tier: String,
    /// Weakest provenance of the inputs.
    pub provenance: &'static str,
    /// Per tier.
    pub tiers: Vec<TierJson>,
}

/// One decode ceiling.
#[derive(Debug, Clone, Serialize)]
pub struct CeilingJson {
    /// Aggregate over B sequences, tokens/s (non-overlapped tiers).
    pub tokens_per_second: f64,
    /// Per sequence, tokens/s.
    pub per_sequence_tokens_per_second: f64,
    /// Time per step, ms (per token of each sequence).
    pub ms_per_token: f64,
    /// Aggregate with perfect overlap between tiers, tokens/s.
    pub overlapped_tokens_per_second: f64,
    /// Q_step bytes.
    pub step_bytes: u64,
    /// Weight bytes of Q_step.
    pub weight_read_bytes: u64,
    /// KV bytes of Q_step.
    pub kv_read_bytes: u64,
    /// Retained tokens per sequence read.
    pub context_tokens: u64,
    /// Bandwidth of the main tier.
    pub bandwidth_bytes_per_second: f64,
    /// Its provenance.
    pub bandwidth_provenance: &'static str,
    /// Weakest provenance of the inputs.
    pub provenance: &'static str,
    /// "optimistic vendor ceiling" or "ceiling".
    pub label: &'static str,
    /// file / inventory.
    pub weights_mode: &'static str,
    /// expected / minimum.
    pub experts: &'static str,
    /// headline / highest.
    pub bandwidth_choice: &'static str,
    /// Bytes per step per tier.
    pub tier_bytes: Vec<u64>,
    /// Seconds per step per tier, Q_i / BW_i.
    pub tier_seconds: Vec<f64>,
    /// Index of the tier moving the most bytes (the first on ties); its bandwidth is
    /// `bandwidth_bytes_per_second`.
    pub main_tier: usize,
    /// Index of the tier whose bytes take longest per step (null: no tier moves a byte).
    pub slowest_tier: Option<usize>,
}

impl From<&Ceiling> for CeilingJson {
    fn from(c: &Ceiling) -> Self {
        CeilingJson {
            tokens_per_second: c.tokens_per_second,
            per_sequence_tokens_per_second: c.per_sequence_tokens_per_second,
            ms_per_token: c.ms_per_token,
            overlapped_tokens_per_second: c.overlapped_tokens_per_second,
            step_bytes: c.step_bytes,
            weight_read_bytes: c.weight_read_bytes,
            kv_read_bytes: c.kv_read_bytes,
            context_tokens: c.context_tokens,
            bandwidth_bytes_per_second: c.bandwidth.0,
            bandwidth_provenance: c.bandwidth_provenance.label(),
            provenance: c.provenance.label(),
            label: ceiling_label(c),
            weights_mode: match c.mode {
                WeightsMode::File => "file",
                WeightsMode::Inventory => "inventory",
            },
            experts: match c.experts {
                ExpertCount::Expected => "expected",
                ExpertCount::Minimum => "minimum",
            },
            bandwidth_choice: match c.bandwidth_choice {
                BandwidthChoice::Headline => "headline",
                BandwidthChoice::Highest => "highest",
            },
            tier_bytes: c.tier_bytes.clone(),
            tier_seconds: c.tier_seconds.clone(),
            main_tier: c.main_tier,
            slowest_tier: c.slowest_tier,
        }
    }
}

/// "optimistic vendor ceiling" when a spec bandwidth is involved, else "ceiling".
pub fn ceiling_label(c: &Ceiling) -> &'static str {
    super::words::ceiling_label(c.bandwidth_provenance)
}

/// Inventory-mode ceilings.
#[derive(Debug, Clone, Serialize)]
pub struct InventoryDecodeJson {
    /// Weight bytes read per token (B = 1... the scenario's B).
    pub read_bytes_per_token: u64,
    /// An estimate from the advertised active parameters (a MoE model without a tensor
    /// inventory), not counted from the file's tensors.
    pub estimate: bool,
    /// How the bytes were found.
    pub basis: &'static str,
    /// Short context.
    pub short_context: CeilingJson,
    /// Full context.
    pub full_context: CeilingJson,
}

/// One curve point.
#[derive(Debug, Clone, Serialize)]
pub struct CurveJson {
    /// Retained tokens.
    pub context_tokens: u64,
    /// File-mode ceiling.
    pub file_tokens_per_second: f64,
    /// Inventory-mode ceiling.
    pub inventory_tokens_per_second: Option<f64>,
}

/// Decode.
#[derive(Debug, Clone, Serialize)]
pub struct DecodeJson {
    /// Headline bandwidth (main tier).
    pub bandwidth_bytes_per_second: f64,
    /// Its provenance.
    pub bandwidth_provenance: &'static str,
    /// A spec bandwidth makes the ceilings optimistic vendor ceilings.
    pub optimistic_vendor_ceiling: bool,
    /// File mode, K_read = 0.
    pub short_context: CeilingJson,
    /// File mode, K_read at N.
    pub full_context: CeilingJson,
    /// Inventory mode (null without a GGUF).
    pub inventory: Option<InventoryDecodeJson>,
    /// The highest ceiling at N (the one that can call a rate impossible at N).
    pub highest: CeilingJson,
    /// The same ceiling at a short context: the highest of every ceiling, at any context.
    pub highest_short_context: CeilingJson,
    /// Whether the highest ceiling can decide (needs a tensor inventory).
    pub highest_decides: bool,
    /// Ceiling over context.
    pub curve: Vec<CurveJson>,
}

/// Prefill.
#[derive(Debug, Clone, Serialize)]
pub struct PrefillJson {
    /// Ceiling, tokens/s (null when the machine has no compute rate for the path).
    pub ceiling_tokens_per_second: Option<f64>,
    /// Why there is none, or what limits it.
    pub reason: String,
    /// Compute path.
    pub compute_path: String,
    /// Compute rate, FLOP/s.
    pub compute_flops_per_second: Option<f64>,
    /// Provenance of the compute rate.
    pub compute_provenance: Option<&'static str>,
    /// Prompt rows S.
    pub prompt_rows: u64,
    /// F for S rows.
    pub flops: f64,
    /// Q for S rows.
    pub bytes: f64,
    /// I = F / Q.
    pub intensity_flop_per_byte: f64,
    /// R = C / BW.
    pub machine_balance_flop_per_byte: Option<f64>,
    /// S* = R × W_linear / (2 P_linear).
    pub crossover_rows: Option<f64>,
    /// compute / bandwidth.
    pub limited_by: Option<&'static str>,
}

/// Roofline of decode.
#[derive(Debug, Clone, Serialize)]
pub struct RooflineJson {
    /// P_linear.
    pub linear_parameters: Option<f64>,
    /// W_linear.
    pub linear_bytes: Option<f64>,
    /// file / derived.
    pub linear_provenance: Option<&'static str>,
    /// Decode F per step at N.
    pub decode_flops: f64,
    /// Decode Q per step at N.
    pub decode_bytes: f64,
    /// Decode I.
    pub decode_intensity_flop_per_byte: f64,
    /// 2 P_linear / W_linear.
    pub weight_only_intensity_flop_per_byte: Option<f64>,
    /// Bandwidth of the roofline's slope, bytes/s.
    pub bandwidth_bytes_per_second: f64,
    /// Ridge point C / BW (null without a compute rate), FLOP/byte.
    pub ridge_intensity_flop_per_byte: Option<f64>,
    /// min(BW × I_decode, C), FLOP/s.
    pub decode_attainable_flops_per_second: f64,
    /// min(BW × I_prefill, C), FLOP/s.
    pub prefill_attainable_flops_per_second: f64,
}

/// Cache and placement settings.
#[derive(Debug, Clone, Serialize)]
pub struct SettingsJson {
    /// N.
    pub context: u64,
    /// B.
    pub sequences: u64,
    /// K type.
    pub cache_type_k: &'static str,
    /// V type.
    pub cache_type_v: &'static str,
    /// -fa.
    pub flash_attn: bool,
    /// -ub.
    pub ubatch: u64,
    /// -kvu.
    pub kv_unified: bool,
    /// --swa-full.
    pub swa_full: bool,
    /// -ngl in effect.
    pub gpu_layers: u32,
    /// -nkvo.
    pub no_kv_offload: bool,
    /// S.
    pub prompt_rows: u64,
    /// Compute path.
    pub compute_path: String,
}

/// The model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelJson {
    /// Name.
    pub name: String,
    /// Architecture.
    pub architecture: String,
    /// L.
    pub layers: u32,
    /// Native context.
    pub native_context: Option<u64>,
    /// Sliding window.
    pub sliding_window: Option<u64>,
    /// Sliding layers.
    pub sliding_layers: u32,
    /// Tied embeddings.
    pub tied_embeddings: bool,
    /// Provenance of the figures.
    pub provenance: &'static str,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct JsonReport {
    /// Document kind and its version: "llmbound-report/1".
    pub schema: &'static str,
    /// llmbound version.
    pub version: &'static str,
    /// Scenario name.
    pub scenario: String,
    /// Model.
    pub model: ModelJson,
    /// Machine id.
    pub machine: String,
    /// Settings.
    pub settings: SettingsJson,
    /// Inputs with provenance.
    pub inputs: Vec<InputJson>,
    /// Artifact.
    pub artifact: ArtifactJson,
    /// KV cache.
    pub kv: KvJson,
    /// Capacity.
    pub capacity: CapacityJson,
    /// Decode.
    pub decode: DecodeJson,
    /// Prefill.
    pub prefill: PrefillJson,
    /// Roofline.
    pub roofline: RooflineJson,
    /// The llama.cpp command that reproduces the scenario.
    pub llama_cpp_command: String,
    /// Warnings, worded (the same sentences as the text report).
    pub warnings: Vec<String>,
    /// The same warnings, each with its kind (same order as `warnings`).
    pub warning_details: Vec<WarningJson>,
    /// What the bounds do not claim.
    pub limitations: Vec<String>,
    /// The plan llama.cpp would choose on the machine.
    pub placement: PlacementJson,
    /// Ollama's plan, for an `ollama:NAME` model (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ollama: Option<OllamaJson>,
}

/// Ollama's plan for an `ollama:NAME` model and the parameters that reproduce the scenario's.
#[derive(Debug, Clone, Serialize)]
pub struct OllamaJson {
    /// The name.
    pub name: String,
    /// The Modelfile's `num_ctx` (null: unset).
    pub modelfile_num_ctx: Option<u64>,
    /// The Modelfile's `num_gpu` (null: unset).
    pub modelfile_num_gpu: Option<i64>,
    /// Total VRAM Ollama compares with its thresholds, bytes.
    pub total_vram_bytes: u64,
    /// Ollama's context per request.
    pub ollama_num_ctx: u64,
    /// What decided it: "modelfile", "environment" (`OLLAMA_CONTEXT_LENGTH`) or
    /// "vram-default".
    pub context_source: &'static str,
    /// Ollama's parallel requests (`OLLAMA_NUM_PARALLEL`, default 1).
    pub ollama_parallel: u64,
    /// Ollama's `-ngl`: "auto" (not passed; `-fit` decides) or a number.
    pub ollama_gpu_layers: String,
    /// The scenario's context per sequence (Ollama's unless an option set it).
    pub num_ctx: u64,
    /// The scenario's sequences.
    pub parallel: u64,
    /// llama-server's `-c`: num_ctx × parallel.
    pub llama_ctx: u64,
    /// The scenario's `-ngl`: "auto", "all" or a number.
    pub gpu_layers: String,
    /// The scenario's context and `-ngl` are Ollama's own (no option changed them).
    pub as_ollama_defaults: bool,
    /// The Ollama parameters that reproduce the scenario's `-c` and `-ngl`
    /// (`/set parameter …`; a Modelfile writes `PARAMETER …`).
    pub reproduce: Vec<String>,
    /// Placement flags of the scenario no Ollama parameter passes on.
    pub not_passed: Vec<&'static str>,
}

/// `-ngl` as a word: "auto", "all" or the count.
pub fn gpu_layers_word(g: crate::core::placement::GpuLayers) -> String {
    use crate::core::placement::GpuLayers;
    match g {
        GpuLayers::Auto => "auto".into(),
        GpuLayers::All => "all".into(),
        GpuLayers::Count(n) => n.to_string(),
    }
}

/// The label of what decided Ollama's context.
pub fn context_source_label(c: crate::ollama::ContextSource) -> &'static str {
    use crate::ollama::ContextSource;
    match c {
        ContextSource::Modelfile => "modelfile",
        ContextSource::Environment => "environment",
        ContextSource::VramDefault => "vram-default",
    }
}

impl From<&crate::workspace::OllamaRun> for OllamaJson {
    fn from(o: &crate::workspace::OllamaRun) -> Self {
        OllamaJson {
            name: o.name.clone(),
            modelfile_num_ctx: o.modelfile.num_ctx,
            modelfile_num_gpu: o.modelfile.num_gpu,
            total_vram_bytes: o.total_vram,
            ollama_num_ctx: o.plan.num_ctx,
            context_source: context_source_label(o.plan.context_source),
            ollama_parallel: o.plan.parallel,
            ollama_gpu_layers: gpu_layers_word(o.plan.gpu_layers),
            num_ctx: o.context,
            parallel: o.parallel,
            llama_ctx: o.context.saturating_mul(o.parallel),
            gpu_layers: gpu_layers_word(o.gpu_layers),
            as_ollama_defaults: o.context_is_ollamas() && o.gpu_layers_is_ollamas(),
            reproduce: o.reproduce(),
            not_passed: o.not_passed.clone(),
        }
    }
}

/// Model / context / compute of one device or the host, bytes.
#[derive(Debug, Clone, Serialize)]
pub struct PlacementMemoryJson {
    /// Weights (each tensor padded to the buffer alignment).
    pub model_bytes: u64,
    /// Cache (KV, recurrent state).
    pub context_bytes: u64,
    /// Compute buffer (an estimate: `compute_basis`).
    pub compute_bytes: u64,
    /// Σ.
    pub total_bytes: u64,
}

impl From<&crate::core::placement::Memory> for PlacementMemoryJson {
    fn from(m: &crate::core::placement::Memory) -> Self {
        PlacementMemoryJson {
            model_bytes: m.model.0,
            context_bytes: m.context.0,
            compute_bytes: m.compute.0,
            total_bytes: m.total(),
        }
    }
}

/// One device of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlacementDeviceJson {
    /// Buffer-type name as llama.cpp spells it (`CUDA0`, `MTL0`, `RPC0[host:port]`).
    pub name: String,
    /// The machine tier.
    pub tier: String,
    /// cuda, rocm, metal, vulkan, rpc.
    pub backend: &'static str,
    /// Tier capacity.
    pub total_bytes: u64,
    /// Memory the backend reports free to llama.cpp.
    pub free_bytes: u64,
    /// Its provenance.
    pub free_provenance: &'static str,
    /// Its source.
    pub free_source: String,
    /// What the device holds.
    pub memory: PlacementMemoryJson,
    /// `-fitt` on this device.
    pub margin_bytes: u64,
    /// free − total held (negative: the device cannot hold its share).
    pub left_bytes: i128,
    /// free − total held − margin.
    pub left_after_margin_bytes: i128,
    /// Bytes it reads per decode step (one token per sequence) under the plan.
    pub read_bytes_per_token: u64,
    /// The tier's headline bandwidth, bytes/s.
    pub bandwidth_bytes_per_second: f64,
    /// Its provenance.
    pub bandwidth_provenance: &'static str,
    /// The prompt graph's ops its tensor limit leaves to the host; null when none.
    pub host_runs: Option<HostRunsJson>,
}

/// What a device's tensor limit leaves to the host in the prompt graph
/// (`core::placement::LimitedOps`).
#[derive(Debug, Clone, Serialize)]
pub struct HostRunsJson {
    /// The device's tensor limit.
    pub limit_bytes: u64,
    /// The prompt graph's rows (`-ub`).
    pub ubatch: u64,
    /// Layers whose attention the host runs, and the largest such tensor (null when none).
    pub attention_layers: u32,
    pub attention_tensor_bytes: Option<u64>,
    /// Layers whose dense FFN the host runs, and the FFN's activation bytes (null when none).
    pub ffn_layers: u32,
    pub ffn_tensor_bytes: Option<u64>,
    /// Of those, layers whose FFN weights are on the device (copied to the host each ubatch).
    pub ffn_weights_copied_layers: u32,
    /// The largest `-ub` whose FFN activations are within the limit (null when the host runs
    /// no FFN).
    pub ffn_max_ubatch: Option<u64>,
    /// The same in one sentence.
    pub sentence: String,
}

/// The decode ceilings of the plan (docs/bounds.md §6).
#[derive(Debug, Clone, Serialize)]
pub struct PlacementCeilingsJson {
    /// Bytes the host reads per decode step under the plan.
    pub host_read_bytes_per_token: u64,
    /// Bytes over the RPC link per decode step (hops × hidden state there and back).
    pub link_bytes_per_token: u64,
    /// The plan has RPC hops but the machine names no `[[link]]`: the hops take no time.
    pub link_missing: bool,
    /// Sum-bound ceiling (memories one after another), tokens/s over all sequences; null when
    /// no memory moves a byte.
    pub sum_tokens_per_second: Option<f64>,
    /// Overlap-bound ceiling (the slowest memory alone), tokens/s over all sequences.
    pub overlap_tokens_per_second: Option<f64>,
    /// The weakest provenance among the figures used.
    pub provenance: &'static str,
}

/// How the plan's per-device compute buffers are obtained (`core::placement::ComputeBasis`).
pub const PLACEMENT_COMPUTE_BASIS: &str = "estimate (derived): llama.cpp's scheduler splits per device; a device that runs a run of whole layers is replayed node by node over its own splits with ggml-alloc's allocator (inputs copied in, four copies held with pipeline parallelism, expert outputs copied back from host-run experts, the output stage), the host's feed-forward splits of device layers are replayed likewise (each weightless op where llama.cpp's scheduler puts it), other shares take working peaks from the single-backend graph; the host's input stage; op offload to the first CUDA/ROCm/Metal/Vulkan device replayed with each host weight copied in by its own split (dense and routed-expert layers), the attention (per layer) and dense FFNs on the host where a device's tensor limit refuses their activations, Vulkan buffers in 1 GiB chunks; checked against llama.cpp b11434's RPC devices and its Vulkan device";

/// `placement`: the plan llama.cpp would choose.
#[derive(Debug, Clone, Serialize)]
pub struct PlacementJson {
    /// "fit" (`-fit on` chose it), "fit-refused" (`-fit` gave up: the flags as given), "fit-off"
    /// (the flags as given), "refused" (llama.cpp refuses the flags: no placement).
    pub origin: &'static str,
    /// The line llama-fit-params prints (`-c N -ngl N [-ts …] [-ot "…"]`), with `-fit on`.
    pub fit_arguments: Option<String>,
    /// Why `-fit` gave up, or why llama.cpp refuses the flags.
    pub reason: Option<String>,
    /// llama.cpp's total context (`-c`, all sequences).
    pub n_ctx: Option<u32>,
    /// `-ngl` in effect (L + 1 = all layers and the output layer).
    pub gpu_layers: Option<u32>,
    /// Per device in use.
    pub devices: Vec<PlacementDeviceJson>,
    /// The host's share.
    pub host: Option<PlacementMemoryJson>,
    /// Of the host's model bytes, the weights in `CPU_REPACK` (left out of `-fit`'s projection
    /// of system memory when there are no devices).
    pub host_repack_bytes: Option<u64>,
    /// Per-layer tensor bytes: "file" (the GGUF's tensor list) or "estimated" (from W).
    pub tensor_bytes: &'static str,
    /// How the compute buffers were obtained.
    pub compute_basis: &'static str,
    /// Every device holds its share within its free memory.
    pub devices_fit: Option<bool>,
    /// The decode ceilings of the plan (none when llama.cpp refuses the flags).
    pub ceilings: Option<PlacementCeilingsJson>,
}

/// The `placement` object of a report.
pub fn placement_json(r: &Report) -> PlacementJson {
    use crate::core::plan::PlanOrigin;
    let basis = PLACEMENT_COMPUTE_BASIS;
    match &r.plan {
        Err(e) => PlacementJson {
            origin: "refused",
            fit_arguments: None,
            reason: Some(e.0.clone()),
            n_ctx: None,
            gpu_layers: None,
            devices: Vec::new(),
            host: None,
            host_repack_bytes: None,
            tensor_bytes: if r.inputs.inventory.is_some() {
                "file"
            } else {
                "estimated"
            },
            compute_basis: basis,
            devices_fit: None,
            ceilings: None,
        },
        Ok(p) => {
            let (origin, fit_arguments, reason) = match &p.origin {
                PlanOrigin::Fitted { arguments, .. } => ("fit", Some(arguments.clone()), None),
                PlanOrigin::FitRefused { reason } => ("fit-refused", None, Some(reason.clone())),
                PlanOrigin::FitOff => ("fit-off", None, None),
            };
            PlacementJson {
                origin,
                fit_arguments,
                reason,
                n_ctx: Some(p.n_ctx),
                gpu_layers: Some(p.gpu_layers),
                devices: p
                    .devices
                    .iter()
                    .enumerate()
                    .map(|(i, d)| PlacementDeviceJson {
                        name: d.buffer_name.clone(),
                        tier: d.tier_name.clone(),
                        backend: d.backend,
                        total_bytes: d.total,
                        free_bytes: d.free.value,
                        free_provenance: d.free.provenance.label(),
                        free_source: d.free.source.clone(),
                        memory: (&d.memory).into(),
                        margin_bytes: d.margin,
                        left_bytes: d.left,
                        left_after_margin_bytes: d.left_after_margin,
                        read_bytes_per_token: p.reads.devices.get(i).map_or(0, |r| r.total()),
                        bandwidth_bytes_per_second: r.inputs.machine.tiers[d.tier]
                            .headline_bandwidth()
                            .value
                            .0,
                        bandwidth_provenance: r.inputs.machine.tiers[d.tier]
                            .headline_bandwidth()
                            .provenance
                            .label(),
                        host_runs: d.limited.as_ref().map(|lo| HostRunsJson {
                            limit_bytes: lo.limit,
                            ubatch: lo.rows,
                            attention_layers: lo.attention_layers,
                            attention_tensor_bytes: (lo.attention_layers > 0)
                                .then_some(lo.attention_tensor),
                            ffn_layers: lo.ffn_layers,
                            ffn_tensor_bytes: (lo.ffn_layers > 0).then_some(lo.ffn_tensor),
                            ffn_weights_copied_layers: lo.ffn_weights_copied,
                            ffn_max_ubatch: (lo.ffn_layers > 0).then_some(lo.ffn_max_ubatch),
                            sentence: super::words::limited_ops(&d.buffer_name, lo),
                        }),
                    })
                    .collect(),
                host: Some((&p.host).into()),
                host_repack_bytes: Some(p.host_repack),
                tensor_bytes: if p.exact_model { "file" } else { "estimated" },
                compute_basis: basis,
                devices_fit: Some(p.devices_fit),
                ceilings: Some(PlacementCeilingsJson {
                    host_read_bytes_per_token: p.reads.host.total(),
                    link_bytes_per_token: p.ceilings.link_bytes,
                    link_missing: p.link_missing,
                    sum_tokens_per_second: Some(p.ceilings.tokens_per_second)
                        .filter(|x| x.is_finite()),
                    overlap_tokens_per_second: Some(p.ceilings.overlapped_tokens_per_second)
                        .filter(|x| x.is_finite()),
                    provenance: p.ceilings.provenance.label(),
                }),
            }
        }
    }
}

/// One warning with its kind.
#[derive(Debug, Clone, Serialize)]
pub struct WarningJson {
    /// A stable machine name: `model`, `cache-refused`, `compute-estimate`,
    /// `compute-upper-bound`, `compute-unchecked`, `beyond-native-context`,
    /// `inventory-layers`.
    pub kind: &'static str,
    /// The warning in words.
    pub message: String,
}

fn attention_json(a: Attention) -> (&'static str, Option<u64>) {
    match a {
        Attention::Full => ("full", None),
        Attention::Sliding { window } => ("sliding", Some(window)),
        Attention::Chunked { chunk } => ("chunked", Some(chunk)),
        Attention::None => ("none", None),
    }
}

/// Build the JSON contract from a report.
pub fn to_json(r: &Report, model_path: &str) -> JsonReport {
    let s = &r.inputs;
    let gpu = crate::core::gpu_layers::max_gpu_layers(s);
    let inputs = super::text::inputs(r)
        .into_iter()
        .map(|(name, value, p, source)| InputJson {
            name,
            value,
            provenance: p.label(),
            source,
        })
        .collect();
    let d = &r.decode;
    let inventory = match (&d.inventory_short_context, &d.inventory_full_context) {
        (Some(a), Some(b)) => Some(InventoryDecodeJson {
            read_bytes_per_token: a.weight_read_bytes,
            estimate: d.inventory_estimated,
            basis: if d.inventory_estimated {
                "estimate (derived): routed-expert bytes from the advertised active parameters, R = (P − A)/(1 − k/n) at the file's mean density"
            } else {
                "counted from the tensor inventory (file)"
            },
            short_context: a.into(),
            full_context: b.into(),
        }),
        _ => None,
    };
    let ro = &r.roofline;
    let (status, status_reason) =
        compute_status(&s.model.architecture, r.capacity.buffers.ffn_estimated);
    JsonReport {
        schema: SCHEMA,
        version: env!("CARGO_PKG_VERSION"),
        scenario: r.scenario.clone(),
        model: ModelJson {
            name: s.model.name.clone(),
            architecture: s.model.architecture.clone(),
            layers: s.model.layer_count(),
            native_context: s.model.native_context,
            sliding_window: s.model.sliding_window(),
            sliding_layers: s
                .model
                .layers
                .iter()
                .filter(|l| {
                    matches!(
                        l.attention,
                        Attention::Sliding { .. } | Attention::Chunked { .. }
                    )
                })
                .count() as u32,
            tied_embeddings: s.model.tied_embeddings,
            provenance: s.model.provenance.label(),
        },
        machine: s.machine.id.clone(),
        settings: SettingsJson {
            context: s.cache.context,
            sequences: s.cache.sequences,
            cache_type_k: s.cache.type_k.name(),
            cache_type_v: s.cache.type_v.name(),
            flash_attn: s.cache.flash_attn,
            ubatch: s.cache.ubatch,
            kv_unified: s.cache.kv_unified,
            swa_full: s.cache.swa_full,
            gpu_layers: r.layout.gpu_layers,
            no_kv_offload: s.offload.no_kv_offload,
            prompt_rows: s.prompt_rows,
            compute_path: s.compute_path.clone(),
        },
        inputs,
        artifact: ArtifactJson {
            bytes: r.artifact.bytes,
            gb: r.artifact.bytes as f64 / GB as f64,
            gib: r.artifact.bytes as f64 / GIB as f64,
            files: s
                .weights
                .iter()
                .map(|w| FileJson {
                    name: w.label(),
                    bytes: w.bytes.value,
                    provenance: w.bytes.provenance.label(),
                })
                .collect(),
            provenance: r.artifact.provenance.label(),
            parameters: r.artifact.parameters,
            parameters_basis: r.artifact.parameters.map(|_| {
                if r.artifact.parameters_counted {
                    "counted"
                } else {
                    "advertised"
                }
            }),
            parameters_provenance: r.artifact.parameters_provenance.map(|p| p.label()),
            bits_per_parameter: r.artifact.bits_per_parameter,
        },
        kv: KvJson {
            bytes_per_token: r.kv.bytes_per_token,
            bytes_per_token_all_layers: r.kv.bytes_per_token_all_layers,
            growing_bytes_per_token: r.kv.growing_bytes_per_token,
            window_bytes: r.kv.window_bytes,
            bytes: r.kv.bytes,
            naive_bytes: r.kv.naive_bytes,
            recurrent_bytes: r.kv.recurrent_bytes,
            allocated_bytes: r.kv.allocated_bytes,
            allocated_context: r.kv.allocated_context,
            read_bytes: r.kv.read_bytes,
            cache_type_k: s.cache.type_k.name(),
            cache_type_v: s.cache.type_v.name(),
            v_is_view_of_k: r.kv.v_is_view_of_k,
            provenance: s.model.provenance.label(),
            per_layer: r
                .kv
                .per_layer
                .iter()
                .map(|l| {
                    let (attention, window) = attention_json(l.attention);
                    KvLayerJson {
                        layer: l.index,
                        attention,
                        window,
                        recurrent: l.recurrent,
                        bytes_per_token: l.b32_per_token as f64 / 32.0,
                        retained_tokens: l.retained_tokens,
                        bytes: l.bytes,
                        allocated_cells: l.allocated_cells,
                        allocated_bytes: l.allocated_bytes,
                    }
                })
                .collect(),
        },
        capacity: CapacityJson {
            weights_bytes: r.capacity.weights_bytes,
            kv_bytes: r.capacity.kv_bytes,
            other_bytes: r.capacity.other_bytes,
            total_bytes: r.capacity.total_bytes,
            memory_bytes: r.capacity.memory_bytes,
            headroom_bytes: r.capacity.headroom_bytes,
            fits: r.capacity.fits,
            article_fits: r.capacity.article_fits,
            starts: !r.capacity.refused(),
            verdict: super::words::verdict(&r.capacity),
            // No context fits a configuration llama.cpp refuses.
            max_context_tokens: r
                .capacity
                .max_context_tokens
                .filter(|_| !r.capacity.starts_at_no_context()),
            article_max_context_tokens: r.capacity.article_max_context_tokens,
            memory: {
                let t = &r.capacity.runtime_bytes;
                let cap = t.capacity_bytes;
                let limiting = r
                    .tiers
                    .iter()
                    .find(|x| x.used && x.name == r.capacity.limiting_tier);
                MemoryJson {
                    model_bytes: t.model_bytes,
                    context_bytes: t.context_bytes,
                    output_bytes: t.output_bytes,
                    compute_bytes: t.compute_bytes,
                    user_bytes: t.user_bytes,
                    total_bytes: t.total_bytes,
                    capacity_bytes: cap,
                    free_bytes: r.capacity.summed_free_bytes(),
                    fits: r.capacity.fits,
                    decides: limiting
                        .and_then(|x| x.memory.overflows_at)
                        .map(super::words::item),
                    provenance: crate::core::units::Provenance::Derived.label(),
                }
            },
            buffers: BuffersJson {
                output_bytes: r.capacity.buffers.output_bytes,
                compute_bytes: r.capacity.buffers.compute_bytes,
                graph_tokens: r.capacity.buffers.graph_tokens,
                ffn_estimated: r.capacity.buffers.ffn_estimated,
                provenance: crate::core::units::Provenance::Derived.label(),
                model: "llama.cpp CPU",
                compute_status: status,
                compute_status_reason: status_reason,
                basis: super::words::BUFFERS_PROVENANCE,
            },
            max_context_exceeds_native: r.capacity.max_context_exceeds_native,
            max_gpu_layers: gpu.as_ref().and_then(|m| m.gpu_layers),
            max_gpu_layers_decode: gpu
                .as_ref()
                .and_then(|m| m.ceiling.as_ref())
                .map(Into::into),
            limiting_tier: r.capacity.limiting_tier.clone(),
            provenance: r.capacity.provenance.label(),
            tiers: r
                .tiers
                .iter()
                .map(|t| {
                    let mt = &s.machine.tiers[t.index];
                    TierJson {
                        name: t.name.clone(),
                        kind: t.kind.label(),
                        layers: t.layers,
                        output: t.output,
                        embedding: t.embedding,
                        weights_bytes: t.weights_bytes,
                        kv_bytes: t.kv_bytes,
                        other_bytes: t.other_bytes,
                        memory_bytes: t.capacity_bytes,
                        headroom_bytes: t.headroom_bytes,
                        fits: t.fits,
                        max_context_tokens: t
                            .max_context_tokens
                            .filter(|_| !r.capacity.starts_at_no_context()),
                        memory: MemoryJson {
                            model_bytes: t.memory.model_bytes,
                            context_bytes: t.memory.context_bytes,
                            output_bytes: t.memory.output_bytes,
                            compute_bytes: t.memory.compute_bytes,
                            user_bytes: t.memory.user_bytes,
                            total_bytes: t.memory.total_bytes,
                            capacity_bytes: t.memory.capacity_bytes,
                            free_bytes: t.memory.free_bytes,
                            fits: t.memory.fits,
                            decides: t.memory.overflows_at.map(super::words::item),
                            provenance: crate::core::units::Provenance::Derived.label(),
                        },
                        used: t.used,
                        bandwidth_bytes_per_second: mt.bandwidth.value.0,
                        bandwidth_provenance: mt.bandwidth.provenance.label(),
                        measured_bandwidth_bytes_per_second: mt
                            .measured_bandwidth
                            .as_ref()
                            .map(|m| m.value.0),
                    }
                })
                .collect(),
        },
        decode: DecodeJson {
            bandwidth_bytes_per_second: d.short_context.bandwidth.0,
            bandwidth_provenance: d.short_context.bandwidth_provenance.label(),
            optimistic_vendor_ceiling: d.optimistic_vendor,
            short_context: (&d.short_context).into(),
            full_context: (&d.full_context).into(),
            inventory,
            highest: (&d.highest).into(),
            highest_short_context: (&d.highest_short).into(),
            highest_decides: d.highest_decides,
            curve: d
                .curve
                .iter()
                .map(|p| CurveJson {
                    context_tokens: p.context_tokens,
                    file_tokens_per_second: p.file_tokens_per_second,
                    inventory_tokens_per_second: p.inventory_tokens_per_second,
                })
                .collect(),
        },
        prefill: PrefillJson {
            ceiling_tokens_per_second: ro.prefill_ceiling_tokens_per_second,
            reason: super::words::prefill_reason(ro),
            compute_path: ro.compute_path.clone(),
            compute_flops_per_second: ro.compute.map(|c| c.0),
            compute_provenance: ro.compute_provenance.map(|p| p.label()),
            prompt_rows: ro.prompt_rows,
            flops: ro.prefill_flops,
            bytes: ro.prefill_bytes,
            intensity_flop_per_byte: ro.prefill_intensity,
            machine_balance_flop_per_byte: ro.machine_balance,
            crossover_rows: ro.crossover_rows,
            limited_by: ro.prefill_limited_by.map(|l| l.label()),
        },
        roofline: RooflineJson {
            linear_parameters: ro.linear.as_ref().map(|l| l.parameters),
            linear_bytes: ro.linear.as_ref().map(|l| l.bytes),
            linear_provenance: ro.linear.as_ref().map(|l| l.provenance.label()),
            decode_flops: ro.decode_flops,
            decode_bytes: ro.decode_bytes,
            decode_intensity_flop_per_byte: ro.decode_intensity,
            weight_only_intensity_flop_per_byte: ro.weight_only_intensity,
            bandwidth_bytes_per_second: ro.bandwidth,
            ridge_intensity_flop_per_byte: ro.ridge_intensity,
            decode_attainable_flops_per_second: ro.decode_attainable_flops_per_second,
            prefill_attainable_flops_per_second: ro.prefill_attainable_flops_per_second,
        },
        llama_cpp_command: super::llama_cpp_command(r, model_path),
        warnings: super::words::warnings(&r.warnings),
        warning_details: r
            .warnings
            .iter()
            .map(|w| WarningJson {
                kind: w.kind(),
                message: super::words::warning(w),
            })
            .collect(),
        limitations: super::text::limitations(r),
        ollama: None,
        placement: placement_json(r),
    }
}

/// A claim check as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimJson {
    /// Document kind and its version: "llmbound-claim/1".
    pub schema: &'static str,
    /// llmbound version.
    pub version: &'static str,
    /// The rate checked (aggregate over `sequences`), tokens/s.
    pub tokens_per_second: f64,
    /// Sequences B of the scenario.
    pub sequences: u64,
    /// Retained tokens per sequence N the ceilings are computed at.
    pub context_tokens: u64,
    /// Above every ceiling at N but within one at a shorter context: the retained context is
    /// the deciding assumption.
    pub context_decides: bool,
    /// Above the highest ceiling at N but within it at a short context: the most retained
    /// tokens per sequence at which the rate is within the highest ceiling (null otherwise).
    pub max_context_tokens: Option<u64>,
    /// The highest ceiling at a short context, tokens/s (same mode as the one at N).
    pub highest_short_context_tokens_per_second: f64,
    /// Above the highest ceiling that can decide.
    pub impossible: bool,
    /// Where the rate lands: within, above-lower-ceiling, above-measured-ceiling,
    /// above-without-inventory or impossible.
    pub outcome: &'static str,
    /// Verdict.
    pub verdict: String,
    /// Every ceiling.
    pub ceilings: Vec<ClaimLineJson>,
}

/// One ceiling of a claim check.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimLineJson {
    /// Which ceiling.
    pub ceiling: String,
    /// Its value.
    pub tokens_per_second: f64,
    /// The rate is above it.
    pub exceeded: bool,
    /// Assumptions a rate above it falsifies.
    pub assumptions: Vec<String>,
}

impl From<&ClaimCheck> for ClaimJson {
    fn from(c: &ClaimCheck) -> Self {
        let w = super::words::claim(c);
        ClaimJson {
            schema: CLAIM_SCHEMA,
            version: env!("CARGO_PKG_VERSION"),
            tokens_per_second: c.tokens_per_second,
            sequences: c.sequences,
            context_tokens: c.context_tokens,
            impossible: c.impossible,
            outcome: c.outcome.label(),
            context_decides: c.context_decides(),
            max_context_tokens: c.max_context_tokens,
            highest_short_context_tokens_per_second: c.highest_short_tokens_per_second,
            verdict: w.verdict,
            ceilings: w
                .lines
                .into_iter()
                .map(|l| ClaimLineJson {
                    ceiling: l.ceiling,
                    tokens_per_second: l.tokens_per_second,
                    exceeded: l.exceeded,
                    assumptions: l.assumptions,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod compute_status_tests {
    use super::compute_status;

    #[test]
    fn compute_status_names_upper_bounds_and_their_reason() {
        assert_eq!(compute_status("qwen3", false), ("exact", None));
        let (status, why) = compute_status("deepseek4", false);
        assert_eq!(status, "upper_bound");
        assert!(why.is_some_and(|w| w.contains("compressed attention")));
        let (status, why) = compute_status("cogvlm", false);
        assert_eq!(status, "estimate");
        assert!(why.is_some_and(|w| w.contains("% below")));
        assert_eq!(compute_status("qwen3", true).0, "upper_bound");
    }
}

#[cfg(test)]
mod warning_tests {
    #[test]
    fn each_warning_is_data_with_a_kind_and_one_wording() {
        let cat = crate::profile::Catalog::builtin();
        // Beyond the default model's native context: one typed warning.
        let opts = crate::build::ScenarioOptions {
            context: Some(1 << 24),
            ..Default::default()
        };
        let s = crate::workspace::scenario(&cat, &opts).unwrap();
        let r = crate::core::evaluate(&s).unwrap();
        assert!(r.warnings.iter().any(|w| matches!(
            w,
            crate::core::Warning::BeyondNativeContext {
                context_tokens: 16_777_216,
                ..
            }
        )));
        let j = super::to_json(&r, "/m.gguf");
        assert_eq!(j.warnings.len(), j.warning_details.len());
        for (text, d) in j.warnings.iter().zip(&j.warning_details) {
            assert_eq!(text, &d.message);
        }
        let d = j
            .warning_details
            .iter()
            .find(|d| d.kind == "beyond-native-context")
            .unwrap();
        assert!(
            d.message
                .starts_with("context 16,777,216 is beyond the model's native"),
            "{}",
            d.message
        );
    }
}
