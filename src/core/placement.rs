//! Placement of every tensor on a machine's devices by llama.cpp's rules (b11434), the memory
//! each device then holds as llama.cpp's memory breakdown prints it, and the `-fit` plan
//! (`common_fit_params`) replayed over that projection. Pure: no I/O, no other top-level
//! module.
//!
//! # API
//!
//! ```text
//! PlacementModel::from_tensors(names_and_bytes, n_layer, n_expert, n_ctx_train, tied)
//!                                       -> PlacementModel   (exact, from a GGUF tensor list)
//! PlacementModel::estimated(&WeightSplit, n_expert, n_ctx_train)
//!                                       -> PlacementModel   (per-layer bytes estimated; flagged)
//! PlacementSettings { gpu_layers, tensor_split, split_mode, main_gpu, overrides, no_kv_offload }
//!     Override::parse_list("re=CPU,re2=RPC0[…]")  (-ot), cpu_moe() (--cpu-moe),
//!     n_cpu_moe(n) (--n-cpu-moe), n_cpu_ffn(n) (--n-cpu-ffn): llama.cpp's own patterns
//! place(&model, &ContextFigures, &[Device], &settings) -> Result<Placement, PlacementError>
//!     Placement { tensor_buffer, layer_device, output_device, devices: Vec<Memory>, host: Memory }
//! fit(&model, &[Device], &settings, &FitSettings, &dyn Fn(n_ctx) -> ContextFigures)
//!     -> Result<FitPlan, FitRefusal>;  FitPlan::arguments() is the line llama-fit-params prints
//! decode_reads(&shape, &model, &placement, &devices, &cache, ExpertCount) -> DecodeReads
//! ceilings(&DecodeReads, &Bandwidths) -> PlacementCeilings   (sum and overlap bounds over
//!     the devices, the host and the RPC link; see [`reads`])
//! scenario_context(&Scenario) -> impl Fn(u32) -> ContextFigures   (the cache and buffers of
//!     the scenario at llama.cpp's total n_ctx, from core::kv and core::runtime)
//! ```
//!
//! # Rules replayed (llama.cpp b11434)
//! - `src/llama-model.cpp` `load_tensors`: the input layer (token embedding, position and
//!   token-type embeddings) always on the CPU; `i_gpu_start = max(L + 1 − ngl, 0)`; layer `il`
//!   (and the output layer as `il = L`) on the device `upper_bound(splits, (il − i_gpu_start) /
//!   act_gpu_layers)` with f32 cumulative splits (`-ts`, else free memory); `-sm none` keeps
//!   only the main GPU (`-mg`); `-sm row` is refused (no split buffers modelled).
//! - `src/llama-model-loader.cpp` `create_tensor`: the first `-ot` pattern that
//!   `std::regex_search`es the tensor name decides its buffer; a tied output is a duplicate of
//!   the token embedding (same name) placed with the output layer.
//! - `src/llama-kv-cache.cpp`: each layer's cache on that layer's device (host with `-nkvo`).
//! - `common/fit.cpp` `common_params_fit_impl`: step by step, see [`fit`].
//!
//! - `ggml/src/ggml-backend.cpp` `ggml_backend_sched_split_graph` and `src/llama-context.cpp`
//!   `sched_reserve`: the compute buffer of every backend, see [`ComputeBasis::SchedulerModel`]
//!   — the split inputs each device copies in, [`PIPELINE_COPIES`] copies of them kept with
//!   pipeline parallelism (several devices, all layers offloaded, `-sm layer`, no `-nkvo`, no
//!   `-ot`), the logits on the output layer's device, the host's input stage, and op offload
//!   of host-resident weights (≥ [`OP_OFFLOAD_MIN_ROWS`] rows) to the first device on the
//!   backends that do it (not RPC).
//!
//! - `ggml/src/ggml-vulkan/ggml-vulkan.cpp` `ggml_backend_vk_device_supports_op` and
//!   `llama-model-loader.cpp` `select_weight_buft`: a device with a tensor limit
//!   ([`Device::max_tensor`], Vulkan's `maxStorageBufferRange` without 64-bit indexing) cannot
//!   run an op on a larger weight, so the weight stays in host memory (an `-ot` target is
//!   taken as given); the output projection then runs on the host with its logits, as it does
//!   when `-ot` puts an untied output weight in host memory and no device offloads it. An op
//!   whose activation is over the limit runs on the host too: a layer's attention (its KQ
//!   scores without flash attention, per layer: a sliding-window layer's may fit where a full
//!   layer's does not) and a dense FFN (its gate, up, GLU and down, with the device's FFN
//!   weights copied into the host's buffer one split each), both replayed node by node.
//!
//! Model and context bytes are exact when the tensor list is (each tensor padded to the
//! buffer's 32-byte alignment): equal to llama.cpp's breakdown on all 333 RPC fixture
//! placements (tests/placement_oracle.rs) and on all 57 Vulkan (llvmpipe) placements
//! (tests/placement_vulkan.rs); a tied output in host memory is one tensor with the token
//! embedding unless the CPU repacks its type (see `tied_output_shared`). Compute
//! buffers follow the scheduler's structure with working peaks from `core::runtime` (within
//! 5% / 16 MiB on 966 of 970 RPC fixture buffers, within 1% / 1 MiB on 846, to the byte on
//! 475; on llvmpipe all 114, 100 to the byte; the issue's Llama-3.1-8B cases within 0.5 MiB on
//! RPC and on llvmpipe). A host whose
//! splits run only feed-forward work of device layers (`-ot ffn_down=CPU`, `--cpu-moe`,
//! `--n-cpu-moe`, `--n-cpu-ffn`, and `-fit`'s overflow of the last layers' experts with its
//! partial layers) is replayed as the scheduler assigns each node of a layer's feed-forward
//! block and ggml-alloc places the host's share (`runtime::host_ffn_peak`, equal to llama.cpp's
//! on all 65 such fixture placements); a device that runs one split of whole layers is replayed
//! over its own splits (`runtime::segment_peak`, also when its layers' experts or whole MoE
//! blocks run on the host, or when it runs only the output stage after a last layer whose
//! experts ran there), and the first device when all its layers' experts run on the host
//! (`runtime::experts_elsewhere_peak`); the rest is a model of the scheduler, not a node-by-node
//! replay, so other splits unlike whole layers are off, each named in the tests with its
//! measured error (`scripts/oracle/sched_trace.py` prints llama.cpp's own splits and, with
//! `--alloc`, ggml-alloc's own trace): a device of a hybrid model that runs only attention while
//! its experts run on the host, the host holding whole layers' weights of device layers or the
//! output, an output device that also runs another device's overflowing experts. Because
//! `-fit` compares these totals with its targets, a plan can differ from llama.cpp's near a
//! boundary (all 92 RPC fixture plans and all 11 Vulkan plans are identical). CPU_REPACK (a
//! host buffer type llama.cpp lists on its own row, chosen by the CPU's features, [`HostCpu`])
//! is counted in the host's model bytes and kept apart as
//! [`Placement::host_repack`]: without devices `-fit` projects system memory without it, as
//! `common/fit.cpp` sums only buffers ggml calls host memory (14 of 14 CPU-only plans of
//! tests/fixtures/llama-cpp/fit-host identical, each dry run's host bytes to the byte).

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;

use super::kv::{self, CacheSettings, KvCache};
use super::model::ModelShape;
use super::runtime::{self, FeedForward, FfnProjections, GraphSettings};
use super::scenario::Scenario;
use super::tiers::WeightSplit;
use super::units::{Bytes, MIB};
use super::weights::MatmulWeight;

pub mod groups;
pub mod reads;
pub use reads::{Bandwidths, DecodeReads, Link, PlacementCeilings, Reads, ceilings, decode_reads};

/// Buffer alignment of the CPU and RPC buffer types (`TENSOR_ALIGNMENT`).
pub const ALIGNMENT: u64 = 32;

/// `-fitt` default: the free memory `-fit` leaves on every device, 1024 MiB.
pub const DEFAULT_FIT_MARGIN: Bytes = Bytes(1024 * MIB);

/// `-fitc` default: the smallest context `-fit` sets, 4096 tokens.
pub const DEFAULT_FIT_MIN_CTX: u32 = 4096;

/// `GGML_SCHED_MAX_COPIES`: the copies of every split input the scheduler keeps with
/// pipeline parallelism (more than one device, all layers offloaded, `-sm layer`, the cache
/// offloaded, no `-ot`).
pub const PIPELINE_COPIES: u64 = 4;

/// The rows from which CUDA, ROCm, Vulkan and Metal take the ops of host-resident weights
/// (`ggml_backend_*_offload_op`: batch size ≥ 32).
pub const OP_OFFLOAD_MIN_ROWS: u64 = 32;

/// llama.cpp's `llama_max_tensor_buft_overrides()`.
pub const MAX_OVERRIDES: usize = 4096;

/// `LLM_FFN_EXPS_REGEX` (common/common.h): the routed-expert tensors.
pub const FFN_EXPS_REGEX: &str = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps";

/// `LLM_FFN_DENSE_REGEX` (common/common.h): the dense FFN tensors.
pub const FFN_DENSE_REGEX: &str = r"\.ffn_(up|down|gate)\.";

/// The ggml backend behind a device: it decides what llama.cpp's scheduler does with the
/// device beyond holding its layers (op offload of host-resident weights, host buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// NVIDIA CUDA (`CUDA0`).
    Cuda,
    /// AMD ROCm/HIP (`ROCm0`).
    Rocm,
    /// Apple Metal (`MTL0`).
    Metal,
    /// Vulkan (`Vulkan0`).
    Vulkan,
    /// llama.cpp RPC (`RPC0[host:port]`): a remote backend; the scheduler does not offload
    /// host-resident ops to it.
    #[default]
    Rpc,
}

impl Backend {
    /// Does the scheduler offload ops of host-resident weights to this backend when a batch
    /// has enough rows (`ggml_backend_sched` op offload, CUDA/Vulkan/Metal/ROCm `offload_op`)?
    pub fn offloads_ops(self) -> bool {
        !matches!(self, Backend::Rpc)
    }
    /// Has it a pinned host buffer type llama.cpp lists first for host weights
    /// (`ggml_backend_dev_host_buffer_type`: CUDA_Host, ROCm_Host, Vulkan_Host; none for Metal
    /// and RPC)?
    pub fn host_buffer(self) -> bool {
        matches!(self, Backend::Cuda | Backend::Rocm | Backend::Vulkan)
    }
    /// The largest chunk its compute buffers are allocated in (`ggml_backend_buft_get_max_size`;
    /// ggml-alloc opens another chunk for what does not fit): Vulkan's suballocation block,
    /// 1 GiB by default (`GGML_VK_SUBALLOCATION_BLOCK_SIZE`, at most the device's
    /// `maxMemoryAllocationSize`), for the device's buffer and its pinned host buffer, which
    /// then holds the host's compute buffer. None: no limit (CUDA, ROCm, RPC; Metal's is the
    /// device's largest buffer, beyond what a compute buffer reaches).
    pub fn max_chunk(self) -> Option<u64> {
        match self {
            Backend::Vulkan => Some(1 << 30),
            _ => None,
        }
    }
    /// The name as llmbound's profiles and JSON spell it.
    pub fn label(self) -> &'static str {
        match self {
            Backend::Cuda => "cuda",
            Backend::Rocm => "rocm",
            Backend::Metal => "metal",
            Backend::Vulkan => "vulkan",
            Backend::Rpc => "rpc",
        }
    }
    /// Can the scheduler pipeline this backend (async compute and events, as llama.cpp asks
    /// every device before it keeps [`PIPELINE_COPIES`] copies of the inputs)? CUDA, ROCm,
    /// Metal, Vulkan and RPC all report both in b11434.
    pub fn pipeline_parallel(self) -> bool {
        true
    }
    /// Parse a profile's `backend`.
    pub fn parse(s: &str) -> Option<Backend> {
        [
            Backend::Cuda,
            Backend::Rocm,
            Backend::Metal,
            Backend::Vulkan,
            Backend::Rpc,
        ]
        .into_iter()
        .find(|b| b.label() == s)
    }
}

/// One accelerator as llama.cpp sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Its buffer type's name, as `-ot` and the fitted arguments spell it (`CUDA0`,
    /// `RPC0[127.0.0.1:50052]`).
    pub buffer_name: String,
    /// Its backend.
    pub backend: Backend,
    /// The memory the backend reports free (`ggml_backend_dev_memory`).
    pub free: Bytes,
    /// The memory the backend reports in total.
    pub total: Bytes,
    /// The largest tensor an op on this device may read or write, when the backend has such a
    /// limit: Vulkan without 64-bit shader indexing refuses an op with a source or result over
    /// `maxStorageBufferRange` (`ggml_backend_vk_device_supports_op`), so a weight over it stays
    /// in host memory (`CPU_REPACK`/`CPU`, the next buffer type llama.cpp tries) and its op runs
    /// on the host — Mesa's llvmpipe reports 128 MiB, NVIDIA and AMD 4 GiB. `None`: no limit.
    pub max_tensor: Option<Bytes>,
}

impl Device {
    /// Can an op on this device take a tensor of `bytes` (see [`Device::max_tensor`])?
    pub fn takes_tensor(&self, bytes: u64) -> bool {
        self.max_tensor.is_none_or(|m| bytes <= m.0)
    }
}

/// `-ngl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuLayers {
    /// `auto` (the default, -1): all layers, and `-fit` may choose.
    #[default]
    Auto,
    /// `all` (-2): all layers; `-fit` treats it as set by the user.
    All,
    /// A number: the output layer plus the last n − 1 repeating layers.
    Count(u32),
}

impl GpuLayers {
    /// llama.cpp's `n_gpu_layers` value (-1 auto, -2 all).
    pub fn raw(self) -> i64 {
        match self {
            GpuLayers::Auto => -1,
            GpuLayers::All => -2,
            GpuLayers::Count(n) => i64::from(n),
        }
    }
    /// The layer count in effect for a model of `n_layer` repeating layers (`auto`/`all` =
    /// L + 1), as `llama_model::n_gpu_layers()`.
    pub fn effective(self, n_layer: u32) -> u32 {
        match self {
            GpuLayers::Count(n) => n,
            _ => n_layer.saturating_add(1),
        }
    }
    /// Parse `-ngl`'s value: a number, `auto` or `all`.
    pub fn parse(s: &str) -> Result<GpuLayers, PlacementError> {
        match s {
            "auto" => Ok(GpuLayers::Auto),
            "all" => Ok(GpuLayers::All),
            n => match n.parse::<i64>() {
                Ok(-1) => Ok(GpuLayers::Auto),
                Ok(-2) => Ok(GpuLayers::All),
                Ok(v) if v >= 0 => Ok(GpuLayers::Count(u32::try_from(v).unwrap_or(u32::MAX))),
                _ => Err(PlacementError(format!(
                    "-ngl {s}: expected a number, auto or all"
                ))),
            },
        }
    }
}

/// `-sm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitMode {
    /// `none`: only the main GPU (`-mg`).
    None,
    /// `layer` (the default): whole layers per device.
    #[default]
    Layer,
    /// `row`: rows of each matrix across devices (refused here, as `-fit` refuses it).
    Row,
}

/// Where an override sends a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The CPU buffer type (host memory; CPU_REPACK where the CPU repacks the type).
    Cpu,
    /// A device's buffer type, by index into the device list.
    Device(usize),
}

/// One `-ot PATTERN=BUFT`.
#[derive(Debug, Clone)]
pub struct Override {
    /// The pattern as written (ECMAScript regex, searched anywhere in the tensor name).
    pub pattern: String,
    /// Where a match goes.
    pub target: Target,
    /// Shared, so that the copies a `-fit` search makes keep one warm search cache.
    regex: Arc<Regex>,
    /// `blk.N.` when the pattern starts with the literal `blk\.N\.`: a name without it cannot
    /// match, so [`place`] searches such a pattern only in the names of that block.
    needle: Option<String>,
}

/// The literal `blk.N.` a pattern starts with (`blk\.N\.`), if it does.
fn block_needle(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix(r"blk\.")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !rest[digits..].starts_with(r"\.") {
        return None;
    }
    Some(format!("blk.{}.", &rest[..digits]))
}

impl PartialEq for Override {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.target == other.target
    }
}

impl Override {
    /// An override; the pattern must be a valid regex.
    pub fn new(pattern: &str, target: Target) -> Result<Override, PlacementError> {
        let regex = Regex::new(pattern)
            .map_err(|e| PlacementError(format!("-ot {pattern}: not a regex: {e}")))?;
        Ok(Override::compiled(pattern, target, Arc::new(regex)))
    }

    fn compiled(pattern: &str, target: Target, regex: Arc<Regex>) -> Override {
        Override {
            pattern: pattern.to_string(),
            target,
            regex,
            needle: block_needle(pattern),
        }
    }

    /// Parse `-ot`'s value `PATTERN=BUFT,…` against the devices' buffer names (and `CPU`), as
    /// `parse_tensor_buffer_overrides` does: an unknown buffer type is an error.
    pub fn parse_list(value: &str, devices: &[Device]) -> Result<Vec<Override>, PlacementError> {
        let mut out = Vec::new();
        for item in value.split(',') {
            let Some((pattern, buft)) = item.split_once('=') else {
                return Err(PlacementError(format!(
                    "-ot {item}: expected PATTERN=BUFFER_TYPE"
                )));
            };
            let target = if buft == "CPU" {
                Target::Cpu
            } else if let Some(i) = devices.iter().position(|d| d.buffer_name == buft) {
                Target::Device(i)
            } else {
                return Err(PlacementError(format!(
                    "-ot {item}: unknown buffer type {buft} (known: CPU{})",
                    devices
                        .iter()
                        .map(|d| format!(", {}", d.buffer_name))
                        .collect::<String>()
                )));
            };
            out.push(Override::new(pattern, target)?);
        }
        Ok(out)
    }

    /// Does the pattern match the tensor name (`std::regex_search`)?
    pub fn matches(&self, name: &str) -> bool {
        self.regex.is_match(name)
    }
}

/// `--cpu-moe`: every routed-expert tensor in host memory.
pub fn cpu_moe() -> Override {
    Override::new(FFN_EXPS_REGEX, Target::Cpu).expect("constant regex")
}

/// `--n-cpu-moe N`: the routed experts of layers 0 … N − 1 in host memory.
pub fn n_cpu_moe(n: u32) -> Vec<Override> {
    per_layer(n, FFN_EXPS_REGEX)
}

/// `--n-cpu-ffn N`: the dense FFN of layers 0 … N − 1 in host memory.
pub fn n_cpu_ffn(n: u32) -> Vec<Override> {
    per_layer(n, FFN_DENSE_REGEX)
}

fn per_layer(n: u32, re: &str) -> Vec<Override> {
    (0..n)
        .map(|i| Override::new(&format!(r"blk\.{i}{re}"), Target::Cpu).expect("constant regex"))
        .collect()
}

/// The placement flags.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacementSettings {
    /// `-ngl`.
    pub gpu_layers: GpuLayers,
    /// `-ts` proportions (None or all zero: by free memory).
    pub tensor_split: Option<Vec<f32>>,
    /// `-sm`.
    pub split_mode: SplitMode,
    /// `-mg` (used with `-sm none`).
    pub main_gpu: usize,
    /// `-ot`, `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, in command-line order.
    pub overrides: Vec<Override>,
    /// `-nkvo`: every layer's cache in host memory.
    pub no_kv_offload: bool,
}

/// An input the placement cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementError(pub String);

impl std::fmt::Display for PlacementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which of llama.cpp's layers a tensor belongs to (`llm_tensor_info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorLayer {
    /// The input layer (token, position, token-type embeddings): always the CPU.
    Input,
    /// A repeating layer `blk.N` (N < L); `token_embd_norm` counts as layer 0.
    Layer(u32),
    /// The output layer (output norm, output projection, classifier heads; blocks ≥ L).
    Output,
}

/// One tensor as the placement sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedTensor {
    /// Name (`blk.3.ffn_up_exps.weight`); the tied output copy keeps `token_embd.weight`.
    pub name: String,
    /// Data bytes.
    pub bytes: u64,
    /// Its layer.
    pub layer: TensorLayer,
    /// Its ggml type id and rows (`MatmulWeight::rows`: modulo 64, except a tied output's)
    /// when a matrix multiplication reads it (from a GGUF; None for lookups, norms and an
    /// estimated model): whether the CPU repacks it in host memory.
    pub matmul: Option<(u32, u64)>,
}

/// The model as the placement needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementModel {
    /// Every tensor llama.cpp creates (a tied output adds a copy of the token embedding).
    pub tensors: Vec<PlacedTensor>,
    /// Repeating layers L (`hparams.n_layer`).
    pub n_layer: u32,
    /// Routed experts (0 for a dense model); `-fit` treats the model as MoE when > 0.
    pub n_expert: u32,
    /// Trained context (`-fit`'s context when `-c` is unset).
    pub n_ctx_train: u32,
    /// The tensor bytes are exact (a GGUF tensor list), not estimated per layer.
    pub exact: bool,
    /// The token embedding's ggml type id and rows, when known: a tied output in host memory
    /// shares the embedding's buffer unless the CPU repacks it ([`HostCpu::repacks`]).
    pub embedding_type: Option<(u32, u64)>,
}

/// The host CPU as llama.cpp's CPU backend sees it: which weight types its `CPU_REPACK` buffer
/// type takes (`ggml_repack_get_optimal_repack_type`, ggml-cpu/repack.cpp, b11434). Not in the
/// machine profiles: derived from the devices (a Metal device: Apple silicon; else x86-64 with
/// AVX2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCpu {
    /// x86-64 with AVX2 (no AVX-512).
    X86Avx2,
    /// Arm with NEON and the dot-product extension (Apple M1 and later).
    ArmDotprod,
}

impl HostCpu {
    /// The host CPU of a machine with these devices.
    pub fn of(devices: &[&Device]) -> HostCpu {
        if devices.iter().any(|d| d.backend == Backend::Metal) {
            HostCpu::ArmDotprod
        } else {
            HostCpu::X86Avx2
        }
    }

    /// Does `CPU_REPACK` take a 2-D weight of this ggml type with `rows` rows (`ne[1]`)?
    pub fn repacks(self, ggml_type: u32, rows: u64) -> bool {
        // ggml type ids: Q4_0 2, Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14, IQ4_NL 20, MXFP4 39, Q1_0 41
        let every = match (self, ggml_type) {
            (HostCpu::X86Avx2, 2 | 12 | 20 | 39) => 8,
            (HostCpu::ArmDotprod, 12..=14) => 8,
            (HostCpu::ArmDotprod, 2 | 8 | 20 | 39 | 41) => 4,
            _ => return false,
        };
        rows.is_multiple_of(every)
    }
}

/// The class of a tensor name.
pub fn tensor_layer(name: &str, n_layer: u32) -> TensorLayer {
    if let Some(rest) = name.strip_prefix("blk.")
        && let Some((n, _)) = rest.split_once('.')
        && let Ok(il) = n.parse::<u32>()
    {
        return if il < n_layer {
            TensorLayer::Layer(il)
        } else {
            TensorLayer::Output
        };
    }
    let base = name.split('.').next().unwrap_or("");
    match base {
        "token_embd" | "position_embd" | "token_types" | "per_layer_token_embd" => {
            TensorLayer::Input
        }
        "token_embd_norm" => TensorLayer::Layer(0),
        _ => TensorLayer::Output,
    }
}

impl PlacementModel {
    /// From a GGUF tensor list (name, bytes). `tied`: the output projection is the token
    /// embedding, so llama.cpp creates a duplicate of it with the output layer.
    pub fn from_tensors<'a, I>(
        tensors: I,
        n_layer: u32,
        n_expert: u32,
        n_ctx_train: u32,
        tied: bool,
    ) -> PlacementModel
    where
        I: IntoIterator<Item = (&'a str, u64)>,
    {
        Self::from_weights(
            tensors.into_iter().map(|(n, b)| (n, b, None)),
            n_layer,
            n_expert,
            n_ctx_train,
            tied,
            None,
        )
    }

    /// As [`PlacementModel::from_tensors`], each tensor with its type and rows when a matrix
    /// multiplication reads it, and the token embedding's type and rows (the tied output's).
    fn from_weights<'a, I>(
        tensors: I,
        n_layer: u32,
        n_expert: u32,
        n_ctx_train: u32,
        tied: bool,
        embedding_type: Option<(u32, u64)>,
    ) -> PlacementModel
    where
        I: IntoIterator<Item = (&'a str, u64, Option<MatmulWeight>)>,
    {
        let mut out: Vec<PlacedTensor> = tensors
            .into_iter()
            .map(|(name, bytes, mm)| PlacedTensor {
                name: name.to_string(),
                bytes,
                layer: tensor_layer(name, n_layer),
                matmul: mm.map(|m| (m.ggml_type, m.rows)),
            })
            .collect();
        if tied
            && !out.iter().any(|t| t.name == "output.weight")
            && let Some(e) = out.iter().find(|t| t.name == "token_embd.weight")
        {
            // llama.cpp's duplicate keeps the embedding's name (so `-ot token_embd` moves it)
            out.push(PlacedTensor {
                name: e.name.clone(),
                bytes: e.bytes,
                layer: TensorLayer::Output,
                matmul: embedding_type,
            });
        }
        PlacementModel {
            tensors: out,
            n_layer,
            n_expert,
            n_ctx_train,
            exact: true,
            embedding_type,
        }
    }

    /// From a GGUF's inventory: its tensor list (see [`PlacementModel::from_tensors`]) and the
    /// token embedding's type.
    pub fn from_inventory(
        inv: &super::weights::Inventory,
        n_layer: u32,
        n_expert: u32,
        n_ctx_train: u32,
        tied: bool,
    ) -> PlacementModel {
        PlacementModel::from_weights(
            inv.tensors.iter_weights(),
            n_layer,
            n_expert,
            n_ctx_train,
            tied,
            inv.embedding_type,
        )
    }

    /// Without a tensor list: each layer as an attention part and, for MoE, a routed-expert
    /// part, from `tiers::weight_split` (estimated unless the split is exact). `-ot` patterns
    /// see the names `blk.N.attn.weight`, `blk.N.ffn_up.weight` (dense FFN: none separate),
    /// `blk.N.ffn_up_exps.weight`, `output.weight` and a tied output's `token_embd.weight`.
    pub fn estimated(split: &WeightSplit, n_expert: u32, n_ctx_train: u32) -> PlacementModel {
        let n_layer = u32::try_from(split.layer.len()).unwrap_or(u32::MAX);
        let mut t = vec![PlacedTensor {
            name: "token_embd.weight".into(),
            bytes: split.embedding,
            layer: TensorLayer::Input,
            matmul: None,
        }];
        for (il, bytes) in split.layer.iter().enumerate() {
            let il32 = u32::try_from(il).unwrap_or(u32::MAX);
            let exps = split
                .layer_experts
                .get(il)
                .copied()
                .unwrap_or(0)
                .min(*bytes);
            t.push(PlacedTensor {
                name: format!("blk.{il}.attn.weight"),
                bytes: bytes - exps,
                layer: TensorLayer::Layer(il32),
                matmul: None,
            });
            if exps > 0 {
                t.push(PlacedTensor {
                    name: format!("blk.{il}.ffn_up_exps.weight"),
                    bytes: exps,
                    layer: TensorLayer::Layer(il32),
                    matmul: None,
                });
            }
        }
        if !split.tied || split.output > 0 {
            t.push(PlacedTensor {
                name: "output.weight".into(),
                bytes: split.output,
                layer: TensorLayer::Output,
                matmul: None,
            });
        }
        if split.tied {
            // llama.cpp's duplicate of the embedding keeps its name (see `from_tensors`)
            t.push(PlacedTensor {
                name: "token_embd.weight".into(),
                bytes: split.embedding,
                layer: TensorLayer::Output,
                matmul: None,
            });
        }
        PlacementModel {
            tensors: t,
            n_layer,
            n_expert,
            n_ctx_train,
            exact: split.exact,
            embedding_type: None,
        }
    }
}

/// What the cache and graph take at one context: the inputs of the projection that change
/// with `-c`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContextFigures {
    /// Cache bytes llama.cpp allocates per repeating layer (KV, recurrent state).
    pub layer_bytes: Vec<u64>,
    /// The compute buffer of the whole graph on one backend (`core::runtime::buffers`).
    pub compute_bytes: u64,
    /// The part of it that is the logits (n_vocab × rows f32), held where the output is.
    pub logits_bytes: u64,
    /// One hidden-state row block, n_embd × rows f32 (what passes between devices).
    pub embd_bytes: u64,
    /// The host's share when every layer and the output run on devices without pipeline
    /// parallelism: the masks, four hidden-state blocks (the token and vector embedding
    /// inputs, the token rows and their copy) and the small inputs.
    pub host_inputs_bytes: u64,
    /// The graph's KQ masks as the scheduler copies them (f16 cells × rows per attention
    /// cache with flash attention; without it the f32 mask and its cast, three times that).
    pub mask_bytes: u64,
    /// The single-backend compute buffer of the graph without its logits (the working peak of
    /// the layers, `core::runtime::buffers` of the model with no vocabulary).
    pub layer_compute_bytes: u64,
    /// What crosses from one device's last layer to the next device's first: the hidden
    /// state and the next layer's input norm (the previous backend computes it), f32 rows.
    pub boundary_bytes: u64,
    /// The small graph inputs a device copies in: positions and the cache's row indices.
    pub small_inputs_bytes: u64,
    /// Rows of the reserved graph, min(n_ctx, n_ubatch).
    pub rows: u64,
    /// [`Self::layer_compute_bytes`] on a backend whose layers' routed experts run on another
    /// (`core::runtime::experts_elsewhere_peak`).
    pub experts_elsewhere_compute_bytes: u64,
    /// The graph inputs every device copies in beside the masks: positions, and per attention
    /// cache its K and V row indices.
    pub device_inputs_bytes: u64,
    /// The output ids (i32 per row) the output device copies in.
    pub output_ids_bytes: u64,
    /// Hidden-state blocks live beside the logits: the output norm's rows, and the last
    /// hidden state when the architecture keeps it as a graph output (`core::arch::Tail`).
    pub output_rows_blocks: u64,
    /// Qwen3.5's classifier-head projection of the output rows, a graph output live beside
    /// the logits (0 without a `cls.output` tensor).
    pub output_proj_bytes: u64,
    /// The KQ masks as graph inputs: f16 with flash attention, else f32.
    pub mask_input_bytes: u64,
    /// Per repeating layer, the largest tensor of its attention ops
    /// (`core::runtime::attention_tensor_of`): a device whose tensor limit is below it leaves
    /// that layer's attention to the host (llvmpipe without flash attention: a full-attention
    /// layer's KQ scores, not a sliding-window layer's).
    pub attn_tensor_bytes: Vec<u64>,
    /// Per repeating layer: the largest tensor of its cache (its K or V over every stream;
    /// [`crate::core::kv::KvLayer::largest_tensor_bytes`]), and its bytes per cell of one
    /// stream when it grows with the context (0: a windowed or no cache).
    pub cache_tensor_bytes: Vec<(u64, u64)>,
    /// The largest activation of a dense FFN layer's ops (`core::runtime::ffn_tensor_max`): a
    /// device whose tensor limit is below it leaves the dense FFNs to the host.
    pub ffn_tensor_bytes: u64,
    /// The model, cache and graph for replaying one device's split
    /// (`core::runtime::segment_peak`), when the replay follows it.
    pub segments: Option<Arc<SegmentReplay>>,
    /// The same for the host's feed-forward splits (`core::runtime::host_ffn_peak`), when
    /// the replay follows them.
    pub host_replay: Option<Arc<SegmentReplay>>,
    /// The same for RWKV-7's per-backend shares (`core::runtime::rwkv7_share_peak`).
    pub rwkv7: Option<Arc<SegmentReplay>>,
}

/// What [`runtime::segment_peak`] replays one device's layers over.
#[derive(Debug)]
pub struct SegmentReplay {
    model: ModelShape,
    ff: FeedForward,
    kv: KvCache,
    g: GraphSettings,
}

impl SegmentReplay {
    /// RWKV-7's share of one backend (`runtime::rwkv7_share`).
    fn rwkv7_share(&self, share: &runtime::Rwkv7Share) -> Option<u64> {
        runtime::rwkv7_share(&self.model, &self.ff, &self.kv, &self.g, share)
    }
    /// The host's RWKV-7 layers among device layers (`runtime::rwkv7_host_layers_peak`).
    fn rwkv7_host_layers(&self, host_layer: &[bool]) -> Option<u64> {
        runtime::rwkv7_host_layers_peak(&self.model, &self.ff, &self.kv, &self.g, host_layer)
    }
}

impl PartialEq for SegmentReplay {
    fn eq(&self, other: &Self) -> bool {
        self.model == other.model && self.ff == other.ff && self.kv == other.kv && self.g == other.g
    }
}

impl Eq for SegmentReplay {}

/// Index of the dense feed-forward block in per-kind arrays.
pub const FFN_DENSE: usize = 0;
/// Index of the routed experts.
pub const FFN_EXPERTS: usize = 1;
/// Index of the shared expert.
pub const FFN_SHARED: usize = 2;

/// A layer tensor's role: its name between `blk.N.` and `.weight` (`attn_output`).
fn layer_role(name: &str) -> Option<&str> {
    name.strip_prefix("blk.")?
        .split_once('.')?
        .1
        .strip_suffix(".weight")
}

/// The roles of an MLA attention's weights but its output projection: with all of them in host
/// memory the host's splits follow the layer (`runtime::HostFfn::attention`).
const MLA_ATTENTION: [&str; 8] = [
    "attn_norm",
    "attn_q_a",
    "attn_q_a_norm",
    "attn_q_b",
    "attn_kv_a_mqa",
    "attn_kv_a_norm",
    "attn_k_b",
    "attn_v_b",
];

/// Record a layer's tensor among the weights op offload copies in one at a time
/// ([`runtime::OffloadedWeights`], by its name: `blk.N.attn_q.weight`); false for a tensor of
/// another role (the layer is then not replayed under op offload).
fn offloaded_weight(w: &mut runtime::OffloadedWeights, name: &str, bytes: u64) -> bool {
    let Some(role) = layer_role(name) else {
        return false;
    };
    let slot = match role {
        "attn_norm" => &mut w.attn_norm,
        "attn_q" => &mut w.q,
        "attn_q_norm" => &mut w.q_norm,
        "attn_k" => &mut w.k,
        "attn_k_norm" => &mut w.k_norm,
        "attn_v" => &mut w.v,
        "attn_output" => &mut w.o,
        "ffn_norm" => &mut w.ffn_norm,
        "post_attention_norm" => &mut w.post_attn_norm,
        "post_ffw_norm" => &mut w.post_ffn_norm,
        "ffn_gate" => &mut w.gate,
        "ffn_up" => &mut w.up,
        "ffn_down" => &mut w.down,
        "ffn_gate_inp" => &mut w.router,
        "ffn_gate_exps" => &mut w.gate_exps,
        "ffn_up_exps" => &mut w.up_exps,
        "ffn_down_exps" => &mut w.down_exps,
        _ => return false,
    };
    *slot = bytes;
    true
}

/// The feed-forward projection a layer's tensor is (by its name: `blk.N.ffn_down_exps.weight`):
/// the kind of block and the projection set (gate, up, down, or the fused gate and up).
fn ffn_projection(name: &str) -> Option<(usize, FfnProjections)> {
    let base = name.strip_prefix("blk.")?.split('.').nth(1)?;
    let rest = base.strip_prefix("ffn_")?;
    let (kind, proj) = if let Some(p) = rest
        .strip_suffix("_chexps")
        .or_else(|| rest.strip_suffix("_exps"))
    {
        (FFN_EXPERTS, p)
    } else if let Some(p) = rest.strip_suffix("_shexp") {
        (FFN_SHARED, p)
    } else {
        (FFN_DENSE, rest)
    };
    let p = match proj {
        "gate" => FfnProjections {
            gate: true,
            ..Default::default()
        },
        "up" => FfnProjections {
            up: true,
            ..Default::default()
        },
        "down" => FfnProjections {
            down: true,
            ..Default::default()
        },
        "gate_up" => FfnProjections {
            gate: true,
            up: true,
            down: false,
            fused: true,
        },
        _ => return None,
    };
    Some((kind, p))
}

/// A feed-forward gate that is not a projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FfnGate {
    /// The router (`ffn_gate_inp`, its bias, the expert score bias `exp_probs_b`).
    Router,
    /// The shared expert's gate (`ffn_gate_inp_shexp`).
    Shared,
}

/// The feed-forward gate a layer's tensor is, by its name.
fn ffn_gate_tensor(name: &str) -> Option<FfnGate> {
    let base = name.strip_prefix("blk.")?.split('.').nth(1)?;
    match base {
        "ffn_gate_inp" | "exp_probs_b" => Some(FfnGate::Router),
        "ffn_gate_inp_shexp" => Some(FfnGate::Shared),
        _ => None,
    }
}

/// How a compute figure was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeBasis {
    /// The scheduler's split structure (`ggml_backend_sched_split_graph` over llama.cpp's
    /// graph, b11434) with each split's working peak taken from `core::runtime`'s
    /// single-backend replay of ggml-alloc: which backend runs which layers and the output,
    /// the split inputs each device copies in (the embeddings from the host, two hidden-state
    /// blocks at each later boundary, the KQ masks, positions and cache indices), held
    /// [`PIPELINE_COPIES`] times and never freed with pipeline parallelism, the logits on the
    /// output layer's device (the host's when the device cannot run the output projection:
    /// its weight in host memory by `-ot` or a tensor limit, or its logits over the limit),
    /// the host's input stage (token and vector embedding inputs), and op offload of
    /// host-resident weights the first device can take to it, on backends that do it. A
    /// device that runs a contiguous run of whole layers of a decoder the replay follows (no
    /// weight of its layers elsewhere but, at most, exactly their routed experts in host
    /// memory; none of another layer's; the cache on it) is replayed node by node over its own
    /// layers (`core::runtime::segment_peak`): its split inputs held in the buffer's prefix
    /// with pipeline parallelism, else copied in by the split that first uses them and freed
    /// after their last use; the expert outputs of host-run experts copied back in per layer;
    /// and the output stage as the architecture ends its graph. The first device under op
    /// offload of whole host layers (`-ngl` below the layer count on CUDA, ROCm, Metal or
    /// Vulkan) is replayed the same way over the host layers and then its own, for decoders
    /// of plain attention and a gated dense FFN (`runtime::OffloadedWeights`): each host weight
    /// copied in by its own split, the host layers' cached K and V copied in for their
    /// attention. A device whose tensor limit is below the attention's largest tensor leaves
    /// the attention to the host (both replayed: `runtime::Segment::attn_elsewhere`,
    /// `runtime::HostSplits::attention`), and a Vulkan buffer is allocated in 1 GiB chunks
    /// ([`Backend::max_chunk`]). Other working peaks are
    /// the runtime's whole-graph figures less whole hidden-state blocks (the input stage a
    /// device does not run), as measured on llama.cpp's own RPC devices, so a split whose ops
    /// differ from a whole layer's (a device holding attention only, the experts of another
    /// device) is off.
    SchedulerModel,
}

/// One device's (or the host's) share, as llama.cpp's memory breakdown prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// Model weights (padded per tensor to the buffer alignment).
    pub model: Bytes,
    /// Cache (KV, recurrent state).
    pub context: Bytes,
    /// Compute buffer (the scheduler model, see [`ComputeBasis`]).
    pub compute: Bytes,
}

impl Memory {
    /// model + context + compute (`llama_memory_breakdown_data::total`).
    pub fn total(&self) -> u64 {
        self.model
            .0
            .saturating_add(self.context.0)
            .saturating_add(self.compute.0)
    }
}

/// Where a tensor (or a cache) lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// Host memory (CPU, CPU_REPACK).
    Host,
    /// A device, by index into the devices in use.
    Device(usize),
}

/// The result of [`place`].
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The devices in use (`-sm none` keeps only the main GPU), indices into the input list.
    pub devices_used: Vec<usize>,
    /// The buffer of each tensor of the model, in its order.
    pub tensor_buffer: Vec<Buffer>,
    /// The device of each repeating layer (its cache follows unless `-nkvo`).
    pub layer_device: Vec<Buffer>,
    /// The output layer's device.
    pub output_device: Buffer,
    /// Where each repeating layer's cache sits (its layer's device; the host with `-nkvo`).
    pub cache_device: Vec<Buffer>,
    /// Per device in use.
    pub devices: Vec<Memory>,
    /// The host.
    pub host: Memory,
    /// Of the host's model bytes, the weights in `CPU_REPACK` (matrices of a type the CPU
    /// repacks, where no device's pinned host buffer takes them). Not host memory to
    /// llama.cpp's `-fit` (`ggml_backend_buft_is_host` is false for it): without devices it
    /// projects system memory without them.
    pub host_repack: Bytes,
    /// The `-ngl` in effect.
    pub gpu_layers: u32,
    /// The tensor bytes were exact.
    pub exact_model: bool,
    /// How the compute figures were obtained.
    pub compute_basis: ComputeBasis,
    /// Per device in use: the prompt graph's ops its tensor limit leaves to the host (None:
    /// none, or no limit).
    pub limited: Vec<Option<LimitedOps>>,
    /// A layer's cache tensor over its device's tensor limit: llama.cpp aborts when it reserves
    /// the graph (`pre-allocated tensor … in a buffer … that cannot run the operation`).
    pub cache_over_limit: Option<CacheOverLimit>,
    /// The largest context per sequence (a multiple of 256) whose cache tensors all stay within
    /// their devices' tensor limits (None: no cache is on a device with a limit; 0: none).
    pub cache_max_context: Option<u64>,
}

/// A cache tensor over a device's tensor limit ([`Placement::cache_over_limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheOverLimit {
    /// The device (index among those in use).
    pub device: usize,
    /// The first such layer.
    pub layer: u32,
    /// Its largest cache tensor (bytes).
    pub bytes: u64,
    /// The device's tensor limit (bytes).
    pub limit: u64,
    /// The largest context per sequence (a multiple of 256) that keeps every cache tensor on
    /// a limited device within its limit; None: none does (a windowed cache is over it).
    pub max_context: Option<u64>,
}

/// What a device with a tensor limit ([`Device::max_tensor`]) leaves to the host in the
/// reserved prompt graph: ggml-vulkan's `supports_op` refuses an op with a source or result over
/// the limit, so llama.cpp runs it on the host (with the device's FFN weights copied in per
/// ubatch for a dense FFN). The decode graph's activations are one row per sequence, far under
/// any limit: this is prompt processing's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitedOps {
    /// The device's tensor limit (bytes).
    pub limit: u64,
    /// The graph's rows (`-ub`, at most the context).
    pub rows: u64,
    /// Layers run by the device (or whose ops it takes under op offload) whose attention the
    /// host runs, and the largest such tensor (without flash attention the KQ scores).
    pub attention_layers: u32,
    pub attention_tensor: u64,
    /// Layers whose dense FFN the host runs, and the FFN's activation bytes.
    pub ffn_layers: u32,
    pub ffn_tensor: u64,
    /// Of those, layers whose FFN weights are on the device (copied to the host each ubatch).
    pub ffn_weights_copied: u32,
    /// The largest ubatch whose FFN activations are within the limit.
    pub ffn_max_ubatch: u64,
}

/// Is `t` a tied output in host memory that shares the token embedding's tensor (see
/// [`tied_copy_in_host`])?
fn tied_output_shared(model: &PlacementModel, t: &PlacedTensor, devs: &[&Device]) -> bool {
    t.layer == TensorLayer::Output
        && t.name == "token_embd.weight"
        && !tied_copy_in_host(model.embedding_type, t.bytes, devs)
}

/// Does llama.cpp hold a second copy of a tied embedding (`bytes`, of this ggml type and rows)
/// when the output layer is in host memory too? Its `create_tensor` reuses the embedding's
/// tensor when both select the same buffer type (`select_weight_buft` over
/// `make_cpu_buft_list`): the first device's pinned host buffer when that device can run the
/// projection (the CPU buffer instead when the model is memory-mapped), else `CPU_REPACK` when
/// the CPU repacks the type — the one case with two copies — else the CPU buffer. Without the
/// type (an estimated model) the usual type of a tied embedding in a quantised file, Q8_0 or
/// Q6_K, is assumed: one copy on x86-64, two on Apple silicon.
pub fn tied_copy_in_host(embedding_type: Option<(u32, u64)>, bytes: u64, devs: &[&Device]) -> bool {
    const Q8_0: u32 = 8;
    let (ty, rows) = embedding_type.unwrap_or((Q8_0, 0));
    in_cpu_repack(ty, rows, bytes, devs)
}

/// Does a matrix multiplication's weight in host memory (this ggml type, rows and bytes) go to
/// `CPU_REPACK`? Host weights take the first buffer type of `make_cpu_buft_list` that runs
/// their op: the first device's pinned host buffer when it has one and can run it (CUDA, ROCm,
/// Vulkan), else `CPU_REPACK` when the CPU repacks the type, else the CPU buffer.
fn in_cpu_repack(ty: u32, rows: u64, bytes: u64, devs: &[&Device]) -> bool {
    match devs.iter().find(|d| d.backend.host_buffer()) {
        Some(d) if d.takes_tensor(bytes) => false,
        _ => HostCpu::of(devs).repacks(ty, rows),
    }
}

fn padded(b: u64) -> u64 {
    b.div_ceil(ALIGNMENT).saturating_mul(ALIGNMENT)
}

/// llama.cpp's f32 split points and device choice for layer positions.
fn split_points(devices: &[&Device], split: Option<&[f32]>) -> Vec<f32> {
    let all_zero = split.is_none_or(|s| s.iter().take(devices.len()).all(|x| *x == 0.0));
    let mut v: Vec<f32> = if all_zero {
        devices.iter().map(|d| d.free.0 as f32).collect()
    } else {
        let s = split.unwrap_or(&[]);
        (0..devices.len())
            .map(|i| s.get(i).copied().unwrap_or(0.0))
            .collect()
    };
    let mut sum = 0.0f32;
    for x in v.iter_mut() {
        sum += *x;
        *x = sum;
    }
    for x in v.iter_mut() {
        *x /= sum;
    }
    v
}

/// The overrides of a placement, indexed by the block their pattern names: the first pattern
/// (in order) that matches a name, as `create_tensor` finds it, without searching every
/// pattern in every name (a `-fit` plan has one pattern per overflowing layer).
struct OverrideIndex<'a> {
    all: &'a [Override],
    /// Patterns without a block literal, by position.
    general: Vec<usize>,
    /// Patterns starting with `blk\.N\.`, by `blk.N.`, each list by position.
    by_block: HashMap<&'a str, Vec<usize>>,
}

impl<'a> OverrideIndex<'a> {
    fn new(all: &'a [Override]) -> OverrideIndex<'a> {
        let mut general = Vec::new();
        let mut by_block: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, o) in all.iter().enumerate() {
            match &o.needle {
                Some(n) => by_block.entry(n.as_str()).or_default().push(i),
                None => general.push(i),
            }
        }
        OverrideIndex {
            all,
            general,
            by_block,
        }
    }

    fn first_match(&self, name: &str) -> Option<&'a Override> {
        if self.all.is_empty() {
            return None;
        }
        // a name holds `blk.N.` once (its prefix) in every GGUF llama.cpp reads; any other
        // name is searched with every pattern
        let block = name
            .strip_prefix("blk.")
            .and_then(|r| r.find('.').map(|k| &name[..4 + k + 1]))
            .filter(|b| !name[b.len()..].contains("blk."));
        let Some(block) = block else {
            return self.all.iter().find(|o| o.matches(name));
        };
        let keyed = self.by_block.get(block).map_or(&[][..], Vec::as_slice);
        // merge the two ordered lists: the first index whose pattern matches
        let (mut g, mut k) = (0, 0);
        loop {
            let i = match (self.general.get(g), keyed.get(k)) {
                (Some(&a), Some(&b)) if a < b => {
                    g += 1;
                    a
                }
                (_, Some(&b)) => {
                    k += 1;
                    b
                }
                (Some(&a), None) => {
                    g += 1;
                    a
                }
                (None, None) => return None,
            };
            if self.all[i].matches(name) {
                return Some(&self.all[i]);
            }
        }
    }
}

/// Place every tensor and cache; per-device and host memory.
pub fn place(
    model: &PlacementModel,
    ctx: &ContextFigures,
    devices: &[Device],
    settings: &PlacementSettings,
) -> Result<Placement, PlacementError> {
    if settings.split_mode == SplitMode::Row {
        return Err(PlacementError(
            "-sm row: row split buffers are not modelled (llama.cpp's -fit refuses them too)"
                .into(),
        ));
    }
    let used: Vec<usize> = if settings.split_mode == SplitMode::None && !devices.is_empty() {
        if settings.main_gpu >= devices.len() {
            return Err(PlacementError(format!(
                "-mg {}: invalid main GPU (available devices: {})",
                settings.main_gpu,
                devices.len()
            )));
        }
        vec![settings.main_gpu]
    } else {
        (0..devices.len()).collect()
    };
    let devs: Vec<&Device> = used.iter().map(|&i| &devices[i]).collect();
    let nd = devs.len();
    let n_layer = model.n_layer;
    let ngl = settings.gpu_layers.effective(n_layer);
    let i_gpu_start = (i64::from(n_layer) + 1 - i64::from(ngl)).max(0);
    let act = if nd == 0 {
        0
    } else {
        i64::from(ngl.min(n_layer.saturating_add(1)))
    };
    let splits = split_points(&devs, settings.tensor_split.as_deref());
    let device_of = |il: i64| -> Buffer {
        if il < i_gpu_start || il - i_gpu_start >= act {
            return Buffer::Host;
        }
        let x = (il - i_gpu_start) as f32 / act as f32;
        let d = splits.partition_point(|s| *s <= x);
        Buffer::Device(d.min(nd - 1))
    };
    let layer_device: Vec<Buffer> = (0..i64::from(n_layer)).map(device_of).collect();
    let output_device = device_of(i64::from(n_layer));
    // map override targets (indices into `devices`) onto the devices in use
    let target_buffer = |t: &Target| -> Option<Buffer> {
        match t {
            Target::Cpu => Some(Buffer::Host),
            Target::Device(i) => used.iter().position(|u| u == i).map(Buffer::Device),
        }
    };
    let index = OverrideIndex::new(&settings.overrides);
    let mut devices_mem = vec![Memory::default(); nd];
    let mut host = Memory::default();
    let mut host_repack = Bytes(0);
    let mut tensor_buffer = Vec::with_capacity(model.tensors.len());
    // per repeating layer: tensors, and those in host memory (overrides)
    let mut layer_tensors = vec![(0u32, 0u32); n_layer as usize];
    let mut host_weight_max = 0u64;
    // the output layer's device cannot take its weight (over the device's tensor limit): the
    // output projection and its logits run on the host
    let mut output_weight_on_host = false;
    let mut output_weight_max = 0u64;
    // the device layers' weights in host memory: per layer the feed-forward projections among
    // them per kind of block, and whether any other weight is there
    let mut host_ffn = vec![[FfnProjections::default(); 3]; n_layer as usize];
    let mut host_attn_out = vec![false; n_layer as usize];
    let mut host_ffn_norm = vec![false; n_layer as usize];
    // layers with a norm after the attention or the FFN (Gemma's `post_attention_norm`,
    // `post_ffw_norm`): the host's splits do not follow their output projection
    let post_norm: Vec<bool> = {
        let mut v = vec![false; n_layer as usize];
        for t in &model.tensors {
            if let TensorLayer::Layer(il) = t.layer
                && layer_role(&t.name).is_some_and(|r| r.contains("post"))
                && let Some(x) = v.get_mut(il as usize)
            {
                *x = true;
            }
        }
        v
    };
    let mut host_other_layer = vec![false; n_layer as usize];
    // per device layer: its MLA attention weights (but the output projection) in host memory,
    // and how many it has (the host's splits follow a layer with all of them there)
    let mut host_mla_attn = vec![(0u32, 0u32); n_layer as usize];
    let mut other_host_role = false;
    // the device layers' routers and shared-expert gates in host memory (a partial layer's
    // `ffn_gate.*` pattern takes them), and per layer whether it has a shared-expert gate
    let mut host_router = vec![false; n_layer as usize];
    let mut host_shared_gate = vec![false; n_layer as usize];
    let mut has_shared_gate = vec![false; n_layer as usize];
    // per layer, the kinds of feed-forward block it has (wherever they are)
    let mut ffn_kinds = vec![[false; 3]; n_layer as usize];
    // per layer, its dense FFN's gate, up and down weights on a device (bytes), which the host
    // copies in when that device cannot run their ops (`runtime::HostFfn::dense_copied`)
    let mut dense_on_device = vec![[0u64; 3]; n_layer as usize];
    let mut foreign = vec![false; nd];
    // per layer: its weights as op offload copies them in (None: a tensor of another role)
    let mut offload_weights = vec![Some(runtime::OffloadedWeights::default()); n_layer as usize];
    for t in &model.tensors {
        let natural = match t.layer {
            TensorLayer::Input => Buffer::Host,
            TensorLayer::Layer(il) => layer_device[il as usize],
            TensorLayer::Output => output_device,
        };
        let mut buf = natural;
        if let Some(o) = index.first_match(&t.name) {
            buf = target_buffer(&o.target).ok_or_else(|| {
                PlacementError(format!(
                    "-ot {}: the device is not in use (-sm none keeps only -mg)",
                    o.pattern
                ))
            })?;
        } else if let Buffer::Device(d) = buf
            && !devs[d].takes_tensor(t.bytes)
        {
            // `select_weight_buft`: the device cannot run the weight's op, so the next buffer
            // type of the layer's list (host memory) takes it; an `-ot` target is taken as given
            buf = Buffer::Host;
        }
        if let TensorLayer::Layer(il) = t.layer
            && let Some((k, p)) = ffn_projection(&t.name)
            && let Some(kinds) = ffn_kinds.get_mut(il as usize)
        {
            kinds[k] = true;
            if k == FFN_DENSE
                && matches!(buf, Buffer::Device(_))
                && t.name.ends_with(".weight")
                && let Some(w) = dense_on_device.get_mut(il as usize)
            {
                // (a fused gate-and-up projection is the up projection's slot)
                let slot = if p.gate && !p.fused {
                    0
                } else if p.up {
                    1
                } else {
                    2
                };
                w[slot] = t.bytes;
            }
        }
        if let TensorLayer::Layer(il) = t.layer
            && let Some(slot) = offload_weights.get_mut(il as usize)
            && let Some(w) = slot
            && !(buf == Buffer::Host && offloaded_weight(w, &t.name, t.bytes))
            && (buf == Buffer::Host || natural == Buffer::Host)
        {
            // a host layer with a weight of another role, or one of its weights on a device
            *slot = None;
        }
        let gate = ffn_gate_tensor(&t.name);
        if let TensorLayer::Layer(il) = t.layer
            && gate == Some(FfnGate::Shared)
            && let Some(x) = has_shared_gate.get_mut(il as usize)
        {
            *x = true;
        }
        if let TensorLayer::Layer(il) = t.layer
            && layer_role(&t.name).is_some_and(|r| MLA_ATTENTION.contains(&r))
            && let Some(c) = host_mla_attn.get_mut(il as usize)
        {
            c.1 += 1;
        }
        if let TensorLayer::Layer(il) = t.layer
            && natural != Buffer::Host
            && buf == Buffer::Host
        {
            let il = il as usize;
            match (ffn_projection(&t.name), host_ffn.get_mut(il), gate) {
                (Some((k, p)), Some(layer), _) => layer[k].merge(p),
                (None, Some(_), Some(FfnGate::Router)) => host_router[il] = true,
                (None, Some(_), Some(FfnGate::Shared)) => host_shared_gate[il] = true,
                _ => {
                    // the attention's output projection and the FFN's input norm are replayed
                    // with the host's feed-forward splits (their layer is still one with other
                    // weights in host memory for its device)
                    let plain = !post_norm.get(il).copied().unwrap_or(true);
                    match layer_role(&t.name) {
                        Some("attn_output") if plain => host_attn_out[il] = true,
                        Some("ffn_norm") if plain => host_ffn_norm[il] = true,
                        Some(r) if plain && MLA_ATTENTION.contains(&r) => {
                            if let Some(c) = host_mla_attn.get_mut(il) {
                                c.0 += 1;
                            }
                        }
                        _ => other_host_role = true,
                    }
                    if let Some(o) = host_other_layer.get_mut(il) {
                        *o = true;
                    }
                }
            }
        }
        // the output projection's weight (not the output norm) in host memory: by `-ot` or the
        // device's tensor limit
        let projection = t.layer == TensorLayer::Output && !t.name.contains("norm");
        output_weight_on_host |= projection && buf == Buffer::Host && t.bytes > 0;
        if projection {
            output_weight_max = output_weight_max.max(t.bytes);
        }
        let b = if buf == Buffer::Host && tied_output_shared(model, t, &devs) {
            // one copy in llama.cpp's buffer: the embedding's, already counted
            Bytes(0)
        } else {
            Bytes(padded(t.bytes))
        };
        if let TensorLayer::Layer(il) = t.layer
            && let Some(c) = layer_tensors.get_mut(il as usize)
        {
            c.0 += 1;
            if buf == Buffer::Host {
                c.1 += 1;
            }
        }
        if let (TensorLayer::Layer(il), Buffer::Device(d)) = (t.layer, buf)
            && layer_device.get(il as usize) != Some(&buf)
            && let Some(f) = foreign.get_mut(d)
        {
            *f = true;
        }
        match buf {
            Buffer::Host => {
                host.model.0 = host.model.0.saturating_add(b.0);
                if let Some((ty, rows)) = t.matmul
                    && in_cpu_repack(ty, rows, t.bytes, &devs)
                {
                    host_repack.0 = host_repack.0.saturating_add(b.0);
                }
                // op offload copies a host weight to the first device, if it can take it
                if t.layer != TensorLayer::Input
                    && devs.first().is_some_and(|d| d.takes_tensor(t.bytes))
                {
                    host_weight_max = host_weight_max.max(b.0);
                }
            }
            Buffer::Device(d) => {
                devices_mem[d].model.0 = devices_mem[d].model.0.saturating_add(b.0)
            }
        }
        tensor_buffer.push(buf);
    }
    // a device layer's MLA attention is followed on the host with all of its weights there and
    // flash attention (see `runtime::HostFfn::attention`)
    // (the replay follows deepseek2's absorbed MLA with flash attention and a compressed query)
    let mla_followed = ctx.host_replay.as_ref().is_some_and(|sr| {
        sr.g.flash_attn && sr.model.mla.is_some() && sr.model.keys.q_lora_rank.is_some()
    });
    let host_attn: Vec<bool> = host_mla_attn
        .iter()
        .map(|&(here, all)| here > 0 && here == all && mla_followed)
        .collect();
    let host_other = other_host_role
        || host_mla_attn
            .iter()
            .zip(&host_attn)
            .any(|(&(here, _), whole)| here > 0 && !whole);
    let cache_device: Vec<Buffer> = layer_device
        .iter()
        .map(|d| {
            if settings.no_kv_offload {
                Buffer::Host
            } else {
                *d
            }
        })
        .collect();
    for (il, bytes) in ctx.layer_bytes.iter().enumerate() {
        let dev = cache_device.get(il).copied().unwrap_or(Buffer::Host);
        match dev {
            Buffer::Host => host.context.0 = host.context.0.saturating_add(*bytes),
            Buffer::Device(d) => {
                devices_mem[d].context.0 = devices_mem[d].context.0.saturating_add(*bytes)
            }
        }
    }
    // the first device's MoE layers all have their routed experts in host memory
    let first_experts_on_host = {
        let mut moe_layers = (0..host_ffn.len())
            .filter(|&il| layer_device[il] == Buffer::Device(0) && ffn_kinds[il][FFN_EXPERTS]);
        let full = |il: usize| host_ffn[il][FFN_EXPERTS].all();
        moe_layers.next().is_some_and(full) && moe_layers.all(full)
    };
    // per layer: its whole MoE block runs on the host (router, experts and shared expert), or
    // its routed experts' outputs come from there (their down projection is there)
    let ffn_on_host: Vec<bool> = (0..host_ffn.len())
        .map(|il| {
            host_router[il]
                && host_ffn[il][FFN_EXPERTS].all()
                && (!ffn_kinds[il][FFN_SHARED] || host_ffn[il][FFN_SHARED].all())
                && !host_other_layer[il]
        })
        .collect();
    let experts_out_on_host: Vec<bool> = (0..host_ffn.len())
        .map(|il| host_ffn[il][FFN_EXPERTS].down && !host_other_layer[il] && !ffn_on_host[il])
        .collect();
    // the host's splits run only feed-forward work of device layers: replayed as llama.cpp's
    // scheduler splits each layer's block (`runtime::host_ffn_peak`)
    let host_splits = (!host_other
        && nd > 0
        && layer_device.iter().all(|b| *b != Buffer::Host)
        && (0..host_ffn.len()).any(|il| {
            host_attn[il]
                || host_router[il]
                || host_shared_gate[il]
                || host_attn_out[il]
                || host_ffn_norm[il]
                || host_ffn[il].iter().any(|p| p.any())
        }))
    .then(|| {
        let layer_device = layer_device
            .iter()
            .map(|b| match b {
                Buffer::Device(d) => *d,
                Buffer::Host => 0,
            })
            .collect();
        let on_host = (0..host_ffn.len())
            .map(|il| runtime::HostFfn {
                router: host_router[il],
                experts: host_ffn[il][FFN_EXPERTS],
                shared: host_ffn[il][FFN_SHARED],
                shared_gate: host_shared_gate[il],
                dense: host_ffn[il][FFN_DENSE],
                attn_output: host_attn_out[il],
                ffn_norm: host_ffn_norm[il],
                attention: host_attn[il],
                dense_copied: None,
            })
            .collect();
        let kinds = (0..host_ffn.len())
            .map(|il| runtime::FfnKinds {
                experts: ffn_kinds[il][FFN_EXPERTS],
                shared: ffn_kinds[il][FFN_SHARED],
                shared_gate: has_shared_gate[il],
                dense: ffn_kinds[il][FFN_DENSE],
            })
            .collect();
        (layer_device, on_host, kinds)
    });
    // op offload over host layers: they come first, every weight of theirs is one op offload
    // copies in, and no device layer has a weight in host memory
    let host_prefix = layer_device
        .iter()
        .take_while(|b| **b == Buffer::Host)
        .count();
    // (a host layer: attention and a dense FFN or routed experts; a device layer with weights
    // in host memory: on the first device, whose ops op offload takes)
    let whole = |w: &runtime::OffloadedWeights| {
        [w.q, w.k, w.v, w.o].iter().all(|b| *b > 0)
            && ([w.gate, w.up, w.down].iter().all(|b| *b > 0)
                || [w.router, w.gate_exps, w.up_exps, w.down_exps]
                    .iter()
                    .all(|b| *b > 0))
    };
    let offloaded = (!settings.no_kv_offload
        && layer_device[host_prefix..]
            .iter()
            .all(|b| *b != Buffer::Host)
        && offload_weights[..host_prefix]
            .iter()
            .all(|w| w.as_ref().is_some_and(whole))
        && (host_prefix..layer_device.len()).all(|il| {
            layer_tensors[il].1 == 0
                || (layer_device[il] == Buffer::Device(0) && offload_weights[il].is_some())
        }))
    .then(|| {
        let v: Vec<_> = (0..layer_device.len())
            .map(|il| offload_weights[il].filter(|_| il < host_prefix || layer_tensors[il].1 > 0))
            .collect();
        (v, host_prefix)
    })
    .filter(|(v, _)| v.iter().any(Option::is_some));
    let shape = SplitShape {
        offloaded,
        first_experts_on_host,
        experts_out_on_host: &experts_out_on_host,
        ffn_on_host: &ffn_on_host,
        layer_device: &layer_device,
        output_device,
        layer_tensors: &layer_tensors,
        host_splits,
        host_weight_max,
        output_ops_on_host: {
            // op offload takes the projection of a host weight to the first device, if it can
            let offloadable = devs.first().is_some_and(|d| {
                d.backend.offloads_ops()
                    && d.takes_tensor(output_weight_max)
                    && d.takes_tensor(ctx.logits_bytes)
            });
            match output_device {
                Buffer::Device(d) => {
                    (output_weight_on_host && !offloadable)
                        || !devs[d].takes_tensor(ctx.logits_bytes)
                }
                Buffer::Host => {
                    !offloadable && devs.first().is_some_and(|d| d.backend.offloads_ops())
                }
            }
        },
        pipeline_parallel: nd > 1
            && ngl > n_layer
            && settings.split_mode == SplitMode::Layer
            && !settings.no_kv_offload
            && settings.overrides.is_empty()
            && devs.iter().all(|d| d.backend.pipeline_parallel()),
        offload_to: devs.first().filter(|d| d.backend.offloads_ops()).map(|_| 0),
        foreign,
        kv_on_host: settings.no_kv_offload,
        attn_away: devs
            .iter()
            .map(|d| {
                ctx.attn_tensor_bytes
                    .iter()
                    .map(|b| !d.takes_tensor(*b))
                    .collect()
            })
            .collect(),
        ffn_away: devs
            .iter()
            .map(|d| {
                ctx.ffn_tensor_bytes > 0
                    && !d.takes_tensor(ctx.ffn_tensor_bytes)
                    && ffn_kinds.iter().any(|k| k[FFN_DENSE])
            })
            .collect(),
        dense_on_device: &dense_on_device,
        dense_layer: &ffn_kinds.iter().map(|k| k[FFN_DENSE]).collect::<Vec<_>>(),
        chunk: devs.iter().map(|d| d.backend.max_chunk()).collect(),
        host_chunk: devs.first().and_then(|d| d.backend.max_chunk()),
    };
    // what each device's tensor limit leaves to the host (a host layer's ops under op offload
    // are the offload device's)
    let limited: Vec<Option<LimitedOps>> = (0..nd)
        .map(|d| limited_ops(ctx, &shape, d, devs[d], settings.no_kv_offload))
        .collect();
    let (cache_over_limit, cache_max_context) = cache_limits(ctx, &cache_device, &devs);
    let (dev_compute, host_compute) = compute_buffers(ctx, &shape, nd);
    for (mem, c) in devices_mem.iter_mut().zip(dev_compute) {
        mem.compute = Bytes(c);
    }
    host.compute = Bytes(host_compute);
    Ok(Placement {
        devices_used: used,
        tensor_buffer,
        layer_device,
        output_device,
        cache_device,
        devices: devices_mem,
        host,
        host_repack,
        gpu_layers: ngl,
        exact_model: model.exact,
        compute_basis: ComputeBasis::SchedulerModel,
        limited,
        cache_over_limit,
        cache_max_context,
    })
}

/// The first layer whose cache tensor is over its device's tensor limit, and the largest
/// context per sequence (a multiple of 256) that keeps every cache tensor of a device with a
/// limit within it (None: no cache is on such a device; 0: no context does, a windowed cache
/// is over it).
fn cache_limits(
    ctx: &ContextFigures,
    cache_device: &[Buffer],
    devs: &[&Device],
) -> (Option<CacheOverLimit>, Option<u64>) {
    let on_limited = |il: usize| match cache_device.get(il) {
        Some(Buffer::Device(d)) => devs.get(*d).and_then(|x| x.max_tensor).map(|m| (*d, m.0)),
        _ => None,
    };
    let mut cap: Option<u64> = None;
    let mut over = None;
    for (il, &(bytes, per_cell)) in ctx.cache_tensor_bytes.iter().enumerate() {
        let Some((d, limit)) = on_limited(il) else {
            continue;
        };
        let c = match per_cell {
            0 if bytes > limit => 0,
            0 => continue,
            p => limit / p / 256 * 256,
        };
        cap = Some(cap.map_or(c, |x| x.min(c)));
        if bytes > limit && over.is_none() {
            over = Some((d, il as u32, bytes, limit));
        }
    }
    let over = over.map(|(device, layer, bytes, limit)| CacheOverLimit {
        device,
        layer,
        bytes,
        limit,
        max_context: cap.filter(|c| *c > 0),
    });
    (over, cap)
}

/// What device `d`'s tensor limit leaves to the host in the prompt graph ([`LimitedOps`]):
/// the layers whose ops it runs ([`SplitShape::op_device`]) whose attention or dense FFN it
/// refuses (with `-nkvo` the host runs every attention anyway).
fn limited_ops(
    ctx: &ContextFigures,
    sh: &SplitShape,
    d: usize,
    dev: &Device,
    kv_on_host: bool,
) -> Option<LimitedOps> {
    let limit = dev.max_tensor?.0;
    let mut lo = LimitedOps {
        limit,
        rows: ctx.rows,
        ffn_tensor: ctx.ffn_tensor_bytes,
        ffn_max_ubatch: limit / (ctx.ffn_tensor_bytes / ctx.rows.max(1)).max(1),
        ..LimitedOps::default()
    };
    let ffn_away = sh.ffn_away.get(d) == Some(&true);
    for il in (0..sh.layer_device.len()).filter(|&il| sh.op_device(il, ctx.rows) == Some(d)) {
        if sh.attn_away_at(d).get(il) == Some(&true) && !kv_on_host {
            lo.attention_layers += 1;
            let bytes = ctx.attn_tensor_bytes.get(il).copied().unwrap_or(0);
            lo.attention_tensor = lo.attention_tensor.max(bytes);
        }
        if ffn_away && sh.dense_layer.get(il) == Some(&true) {
            lo.ffn_layers += 1;
            if sh
                .dense_on_device
                .get(il)
                .is_some_and(|w| w.iter().any(|b| *b > 0))
            {
                lo.ffn_weights_copied += 1;
            }
        }
    }
    (lo.attention_layers > 0 || lo.ffn_layers > 0).then_some(lo)
}

/// Where the layers of a placement run: what [`compute_buffers`] needs.
struct SplitShape<'a> {
    /// Every MoE layer on the first device has all its routed experts in host memory.
    first_experts_on_host: bool,
    layer_device: &'a [Buffer],
    output_device: Buffer,
    /// Per repeating layer: its tensors, and how many of them are in host memory.
    layer_tensors: &'a [(u32, u32)],
    /// The host's splits run only feed-forward work of device layers (every layer on a
    /// device): per layer its device, its feed-forward weights in host memory and its blocks.
    host_splits: Option<(Vec<usize>, Vec<runtime::HostFfn>, Vec<runtime::FfnKinds>)>,
    /// The largest layer weight in host memory (padded) that the first device can take.
    host_weight_max: u64,
    /// The output projection runs on the host although the output layer is on a device (its
    /// weight in host memory, by `-ot` or the device's tensor limit, and no op offload that
    /// takes it; or logits over the device's limit), or with the output in host memory where
    /// op offload cannot take it to the first device. The logits are then on the host.
    output_ops_on_host: bool,
    /// The scheduler keeps [`PIPELINE_COPIES`] copies of every split input.
    pipeline_parallel: bool,
    /// The device (index into the devices in use) that takes the ops of host-resident weights.
    offload_to: Option<usize>,
    /// Per device: it holds weights of a layer that runs elsewhere (an `-ot` to it).
    foreign: Vec<bool>,
    /// Per repeating layer: its routed experts' down projection is in host memory (with or
    /// without their other projections, the router or the shared expert's, but not the whole
    /// block) and no other weight of the layer: the k expert outputs come back from the host.
    experts_out_on_host: &'a [bool],
    /// Per repeating layer: its router, routed experts and shared expert are in host memory
    /// (a partial layer of `-fit`): the device gets the block's output back.
    ffn_on_host: &'a [bool],
    /// The KV cache is in host memory (`-nkvo`).
    kv_on_host: bool,
    /// Op offload of weights in host memory whose ops the first device takes: per layer its
    /// weights there ([`runtime::OffloadedWeights`]: a host layer's, which come first, or a first
    /// device layer's), and how many host layers come first.
    offloaded: Option<(Vec<Option<runtime::OffloadedWeights>>, usize)>,
    /// Per device, per repeating layer: it cannot run the layer's attention (a tensor of it
    /// over its limit), so the host runs it ([`runtime::Segment::attn_elsewhere`]).
    attn_away: Vec<Vec<bool>>,
    /// Per device: it cannot run a dense FFN's ops (an activation over its limit,
    /// `runtime::ffn_tensor_max`), so the host runs them ([`runtime::Segment::ffn_elsewhere`],
    /// [`runtime::HostFfn::dense_copied`]).
    ffn_away: Vec<bool>,
    /// Per repeating layer: its dense FFN's gate, up and down weights on a device (bytes).
    dense_on_device: &'a [[u64; 3]],
    /// Per repeating layer: it has a dense FFN.
    dense_layer: &'a [bool],
    /// Per device: its buffer type's largest chunk ([`Backend::max_chunk`]).
    chunk: Vec<Option<u64>>,
    /// The host's compute buffer's largest chunk (the first device's pinned host buffer).
    host_chunk: Option<u64>,
}

impl SplitShape<'_> {
    /// The device that runs repeating layer `il`'s ops: its own, or for a host layer the one op
    /// offload takes them to (weights in host memory, a batch of at least
    /// [`OP_OFFLOAD_MIN_ROWS`] `rows`); None: the host runs them.
    fn op_device(&self, il: usize, rows: u64) -> Option<usize> {
        match self.layer_device.get(il)? {
            Buffer::Device(d) => Some(*d),
            Buffer::Host => self
                .offloaded
                .as_ref()
                .and(self.offload_to)
                .filter(|_| rows >= OP_OFFLOAD_MIN_ROWS),
        }
    }
    /// Per repeating layer: device `d` cannot run its attention.
    fn attn_away_at(&self, d: usize) -> &[bool] {
        self.attn_away.get(d).map_or(&[], |v| &v[..])
    }
}

/// The compute buffer of each device in use and of the host (see [`ComputeBasis`]).
fn compute_buffers(ctx: &ContextFigures, sh: &SplitShape, nd: usize) -> (Vec<u64>, u64) {
    let e = ctx.embd_bytes;
    let m = ctx.mask_bytes;
    let s = ctx.small_inputs_bytes;
    let whole_graph = ctx.compute_bytes;
    let layers = ctx.layer_compute_bytes;
    // the logits beside the output norm's rows (and the last hidden state, when the
    // architecture keeps it as a graph output: `core::arch::Tail`)
    let logits = ctx
        .logits_bytes
        .saturating_add(ctx.output_proj_bytes)
        .saturating_add(e.saturating_mul(ctx.output_rows_blocks));
    let host_inputs = ctx.host_inputs_bytes;
    let host_layers = sh.layer_device.contains(&Buffer::Host);
    let first_device = sh.layer_device.first().copied();
    // a layer that runs on a device with all of its weights in host memory (-ot), and one
    // with some of them (its FFN or experts)
    let mut whole_layer_on_host = false;
    let mut part_on_host = false;
    // a layer with part of its weights in host memory followed by a later layer wholly on a
    // device (`--n-cpu-moe`, `--n-cpu-ffn`: the first layers' experts or FFN on the host)
    let mut part_before_device_layer = false;
    for (b, (n, h)) in sh.layer_device.iter().zip(sh.layer_tensors) {
        if *b != Buffer::Host {
            if *h == 0 {
                part_before_device_layer |= part_on_host;
            } else if h == n {
                whole_layer_on_host = true;
            } else {
                part_on_host = true;
            }
        }
    }
    let host_weight_work = host_layers || whole_layer_on_host || part_on_host;
    let offload = sh
        .offload_to
        .filter(|_| host_weight_work && ctx.rows >= OP_OFFLOAD_MIN_ROWS && nd > 0);
    // per device: its layers' dense FFNs run on the host (their activations over its limit)
    // (the host's replay follows such FFNs only beside its own input stage: no cache in host
    // memory, no other host splits, no pipeline copies, host layers only under op offload; else
    // both sides keep the estimate that counts the FFN on the device)
    let ops_offloaded = sh.offloaded.is_some() && offload.is_some();
    let ffn_host_ok = nd > 0
        && !sh.kv_on_host
        && sh.host_splits.is_none()
        && !sh.pipeline_parallel
        && (!host_layers || ops_offloaded)
        && ctx
            .host_replay
            .as_ref()
            .is_some_and(|sr| runtime::offload_replayable(&sr.model));
    let ffn_away_at = |d: usize| ffn_host_ok && sh.ffn_away.get(d) == Some(&true);
    let ffn_elsewhere = |d: usize| -> Vec<bool> {
        if ffn_away_at(d) {
            sh.dense_layer.to_vec()
        } else {
            Vec::new()
        }
    };
    // per device: the layers whose attention the host runs
    let mut dev = vec![0u64; nd];
    for (d, out) in dev.iter_mut().enumerate() {
        let here = Buffer::Device(d);
        let runs = sh.layer_device.contains(&here);
        let has_output = sh.output_device == here && !sh.output_ops_on_host;
        let first = first_device == Some(here);
        // the device's layers, when they are one contiguous run
        let span = sh
            .layer_device
            .iter()
            .position(|b| *b == here)
            .zip(sh.layer_device.iter().rposition(|b| *b == here))
            .map(|(start, last)| (start, last + 1))
            .filter(|&(start, end)| sh.layer_device[start..end].iter().all(|b| *b == here))
            .or_else(|| {
                // the output device without layers after a last layer whose experts ran on
                // the host: it runs that layer's tail (the expert outputs copied in, weighted
                // and summed) and the output stage
                let n = sh.layer_device.len();
                (!runs
                    && has_output
                    && !sh.pipeline_parallel
                    && n > 0
                    && sh.experts_out_on_host[n - 1])
                    .then_some((n, n))
            });
        if (sh.attn_away_at(d).contains(&true) || ffn_away_at(d))
            && !sh.pipeline_parallel
            && !sh.kv_on_host
            && let Some(sr) = &ctx.segments
            && runtime::offload_replayable(&sr.model)
            && let Some((start, end)) = span
            && start < end
            && sh.layer_tensors[start..end].iter().all(|(_, h)| *h == 0)
        {
            // its layers without their attention and/or dense FFNs, which the host runs
            let seg = runtime::Segment {
                first,
                output: has_output,
                attn_elsewhere: sh.attn_away_at(d).to_vec(),
                ffn_elsewhere: ffn_elsewhere(d),
                max_chunk: sh.chunk.get(d).copied().flatten(),
                ..runtime::Segment::over(start..end)
            };
            *out = runtime::segment_peak(&sr.model, &sr.ff, &sr.kv, &sr.g, &seg);
            continue;
        }
        // RWKV-7: a device's run of whole layers (the only device's, the whole graph but the
        // input stage, is the figure below)
        if let Some(sr) = &ctx.rwkv7
            && offload.is_none()
            && let Some((start, end)) = span
            && start < end
            && if sh.kv_on_host {
                start == 0 && !has_output
            } else {
                start > 0 || sh.pipeline_parallel || !has_output
            }
            && has_output == (end == sh.layer_device.len())
            && sh.layer_tensors[start..end].iter().all(|(_, h)| *h == 0)
            && (start == 0
                || sh.layer_device[start - 1] == Buffer::Host
                || sh.layer_tensors[start - 1].1 == 0)
            && let Some(peak) = sr.rwkv7_share(&runtime::Rwkv7Share {
                layers: start..end,
                start: match start.checked_sub(1).map(|p| sh.layer_device[p]) {
                    None => runtime::Rwkv7Start::FirstDevice,
                    Some(Buffer::Host) => runtime::Rwkv7Start::After(runtime::Rwkv7Before::Host),
                    Some(Buffer::Device(_)) => {
                        runtime::Rwkv7Start::After(runtime::Rwkv7Before::Device)
                    }
                },
                held_copies: if sh.pipeline_parallel {
                    PIPELINE_COPIES
                } else {
                    0
                },
                state_on_host: sh.kv_on_host,
            })
        {
            *out = peak;
            continue;
        }
        let v = if sh.pipeline_parallel
            && let Some(sr) = &ctx.segments
            && let Some((start, end)) = span
            && (has_output == (end == sh.layer_device.len()))
        {
            // its split inputs held PIPELINE_COPIES times, never freed; then its layers (and
            // the output) replayed node by node
            let own = if first {
                3 * e + ctx.rows.saturating_mul(8)
            } else {
                ctx.boundary_bytes
            };
            let ids = if has_output { ctx.output_ids_bytes } else { 0 };
            let held = PIPELINE_COPIES.saturating_mul(
                ctx.mask_input_bytes
                    .saturating_add(own)
                    .saturating_add(ctx.device_inputs_bytes)
                    .saturating_add(ids),
            );
            let seg = runtime::Segment {
                first,
                output: has_output,
                held: Some(held),
                max_chunk: sh.chunk.get(d).copied().flatten(),
                ..runtime::Segment::over(start..end)
            };
            runtime::segment_peak(&sr.model, &sr.ff, &sr.kv, &sr.g, &seg)
        } else if sh.pipeline_parallel {
            // split inputs held PIPELINE_COPIES times, never freed; then the layers' work
            // without the masks and the input stage
            let crossing = if first { 3 * e } else { ctx.boundary_bytes };
            let held = PIPELINE_COPIES.saturating_mul(m.saturating_add(crossing).saturating_add(s));
            let work = layers
                .saturating_sub(m)
                .saturating_sub(3 * e)
                .saturating_add(if first { 2 * e } else { e });
            let mut v = if runs { held.saturating_add(work) } else { 0 };
            if has_output {
                let held_out = PIPELINE_COPIES
                    .saturating_mul(m.saturating_add(ctx.boundary_bytes).saturating_add(s));
                v = v.max(held_out.saturating_add(logits));
            }
            v
        } else if nd == 1 && sh.output_device == here && sh.layer_device.iter().all(|b| *b == here)
        {
            if sh.output_ops_on_host {
                // the layers and the output norm; the projection runs on the host
                *out = layers.saturating_sub(e);
                continue;
            }
            // the whole graph but the input stage: the logits beside copies of the host's
            // inputs, or the layers' peak
            ctx.logits_bytes
                .saturating_add(ctx.output_proj_bytes)
                .saturating_add(host_inputs)
                .max(layers.saturating_sub(e))
        } else if let Some(sr) = &ctx.segments
            && let Some((start, end)) = span
            && (start..end).all(|il| {
                sh.layer_tensors[il].1 == 0 || sh.experts_out_on_host[il] || sh.ffn_on_host[il]
            })
            && !(start > 0
                && sh.layer_device[start - 1] == Buffer::Host
                && runtime::has_shared_experts(&sr.model, &sr.ff))
            // a previous device's partial layer whose feed-forward work it runs is followed
            // only when its own layers' experts run on the host too, or it runs no layer
            // (those splits, or the output stage, set its peak)
            && (!sh.foreign[d]
                || start == end
                || (start..end).any(|il| sh.experts_out_on_host[il]))
            && !(sh.kv_on_host && sr.model.mla.is_some())
            && offload.is_none()
            && (has_output == (end == sh.layer_device.len()))
            && (sh.output_device == here) == (end == sh.layer_device.len())
        {
            // one split of whole layers: its inputs copied in at its start and freed after
            // their last use, its layers (and the output) replayed node by node
            let seg = runtime::Segment {
                first,
                output: has_output,
                // a whole MoE layer on the host just before: the host runs its experts and this
                // device its tail (the scheduler gives the weightless ops to the next device)
                experts_elsewhere: (0..sh.layer_device.len())
                    .map(|il| {
                        sh.experts_out_on_host[il]
                            || (il + 1 == start && sh.layer_device[il] == Buffer::Host)
                    })
                    .collect(),
                ffn_elsewhere: sh.ffn_on_host.to_vec(),
                kv_elsewhere: sh.kv_on_host,
                max_chunk: sh.chunk.get(d).copied().flatten(),
                after_host: start > 0 && sh.layer_device[start - 1] == Buffer::Host,
                ..runtime::Segment::over(start..end)
            };
            runtime::segment_peak(&sr.model, &sr.ff, &sr.kv, &sr.g, &seg)
        } else {
            let work = if !runs {
                0
            } else if first && !host_layers && sh.first_experts_on_host && offload.is_none() {
                // its layers' expert outputs are copied in from the host, weighted and summed
                // here (llama.cpp's splits, `scripts/oracle/sched_trace.py`; Qwen3-30B-A3B
                // `--cpu-moe` over three RPC devices: 52.0 MiB on the first)
                ctx.experts_elsewhere_compute_bytes.saturating_sub(e)
            } else if first && !host_layers {
                layers.saturating_sub(e)
            } else {
                layers.saturating_sub(2 * e).max(m)
            };
            if has_output { work.max(logits) } else { work }
        };
        *out = v;
    }
    // op offload: the first device runs the host layers' ops
    if nd > 0
        && let Some(d) = offload
    {
        let here = Buffer::Device(d);
        let h = sh.offloaded.as_ref().map_or(0, |(_, h)| *h);
        // its own layers: none, or a contiguous run right after the host layers
        let own_end = sh
            .layer_device
            .iter()
            .rposition(|b| *b == here)
            .map(|l| l + 1);
        let contiguous = own_end.is_none_or(|end| {
            sh.layer_device[h.min(end)..end].iter().all(|b| *b == here)
                && sh.layer_device.get(h) == Some(&here)
        });
        match (&ctx.segments, &sh.offloaded) {
            (Some(sr), Some((offloaded, _)))
                if d == 0 && contiguous && runtime::offload_replayable(&sr.model) =>
            {
                // the host layers' ops and then its own layers, replayed node by node: each
                // host weight copied in by its own split, the host layers' cached K and V
                // copied in for their attention
                let seg = runtime::Segment {
                    first: true,
                    output: sh.output_device == here && !sh.output_ops_on_host,
                    offloaded: offloaded.clone(),
                    host_prefix: h,
                    attn_elsewhere: sh.attn_away_at(d).to_vec(),
                    ffn_elsewhere: ffn_elsewhere(d),
                    max_chunk: sh.chunk.get(d).copied().flatten(),
                    ..runtime::Segment::over(0..own_end.unwrap_or(h).max(h))
                };
                dev[d] = runtime::segment_peak(&sr.model, &sr.ff, &sr.kv, &sr.g, &seg);
            }
            _ => {
                // the device takes the host's weight ops and copies the weights in, one at
                // a time — also with no layer on it (`-ngl 0`, the output on the host too)
                dev[d] = dev[d]
                    .max(layers.saturating_sub(2 * e))
                    .saturating_add(sh.host_weight_max);
            }
        }
    }
    // per layer: its attention runs on the host: its device cannot run it, or it is a host
    // layer whose other ops op offload takes to such a device
    let attention: Vec<bool> = (0..sh.layer_device.len())
        .map(|il| {
            sh.op_device(il, ctx.rows)
                .is_some_and(|d| sh.attn_away_at(d).get(il) == Some(&true))
        })
        .collect();
    // (a host layer whose attention a device runs is not followed by the host replay)
    let host_attention = nd > 0
        && !sh.kv_on_host
        && attention.contains(&true)
        && sh
            .layer_device
            .iter()
            .enumerate()
            .all(|(il, b)| *b != Buffer::Host || attention[il] || sh.offloaded.is_some())
        && ctx
            .host_replay
            .as_ref()
            .is_some_and(|sr| runtime::offload_replayable(&sr.model));
    let host_output = sh.output_ops_on_host || sh.output_device == Buffer::Host;
    // or it runs no layer work, only the output projection (its host layers' ops offloaded)
    // (under op offload the first device runs the ops of every weight in host memory)
    let host_output_only = nd > 0
        && host_output
        && !sh.kv_on_host
        && (ops_offloaded
            || (!host_layers
                && sh.host_splits.is_none()
                && sh.layer_tensors.iter().all(|(_, h)| *h == 0)))
        && ctx.host_replay.is_some();
    // or the dense FFNs of layers whose device cannot run them (a host layer's: the device op
    // offload takes its other ops to), their weights copied in from the device (a host layer's
    // are here)
    let ffn_here = |il: usize| {
        sh.dense_layer.get(il) == Some(&true) && sh.op_device(il, ctx.rows).is_some_and(ffn_away_at)
    };
    let host_ffn = ffn_host_ok && (0..sh.layer_device.len()).any(ffn_here);
    let host = if nd == 0 {
        whole_graph
    } else if (host_attention || host_output_only || host_ffn)
        && let Some(sr) = &ctx.host_replay
    {
        // the host runs every layer's attention, the dense FFNs its devices cannot run and/or
        // the output projection, replayed with its input stage
        let layer_device: Vec<usize> = sh
            .layer_device
            .iter()
            .map(|b| match b {
                Buffer::Device(d) => *d,
                Buffer::Host => offload.unwrap_or(0),
            })
            .collect();
        let attention: Vec<bool> = attention.iter().map(|a| *a && host_attention).collect();
        let cache_here: Vec<bool> = sh.layer_device.iter().map(|b| *b == Buffer::Host).collect();
        let ffn_blocks: Option<(Vec<runtime::HostFfn>, Vec<runtime::FfnKinds>)> =
            host_ffn.then(|| {
                (0..sh.layer_device.len())
                    .map(|il| {
                        let dense = sh.dense_layer.get(il).copied().unwrap_or(false);
                        let h = match sh.layer_device[il] {
                            _ if !ffn_here(il) => runtime::HostFfn::default(),
                            Buffer::Device(_) => runtime::HostFfn {
                                dense_copied: sh.dense_on_device.get(il).copied(),
                                ..Default::default()
                            },
                            Buffer::Host => runtime::HostFfn {
                                dense: FfnProjections {
                                    gate: true,
                                    up: true,
                                    down: true,
                                    fused: false,
                                },
                                ..Default::default()
                            },
                        };
                        let k = runtime::FfnKinds {
                            dense,
                            ..Default::default()
                        };
                        (h, k)
                    })
                    .unzip()
            });
        let (on_host, kinds) = match &ffn_blocks {
            Some((o, k)) => (&o[..], &k[..]),
            None => sh
                .host_splits
                .as_ref()
                .filter(|_| !ops_offloaded)
                .map_or((&[][..], &[][..]), |(_, o, k)| (&o[..], &k[..])),
        };
        let splits = runtime::HostSplits {
            layer_device: &layer_device,
            on_host,
            kinds,
            ff: sr.ff,
            attention: &attention,
            cache_here: &cache_here,
            output: host_output,
            max_chunk: sh.host_chunk,
        };
        runtime::host_ffn_peak(&sr.model, &sr.kv, &sr.g, &splits)
    } else if offload.is_some() {
        host_inputs
    } else if sh.output_device == Buffer::Host {
        whole_graph
    } else if host_layers
        && let Some(sr) = &ctx.rwkv7
        && let Some(peak) = rwkv7_host_prefix(sh).and_then(|k| {
            sr.rwkv7_share(&runtime::Rwkv7Share {
                layers: 0..k,
                start: runtime::Rwkv7Start::Graph,
                held_copies: 0,
                state_on_host: false,
            })
        })
    {
        // RWKV-7's first layers on the host, the rest on devices
        peak
    } else if host_layers {
        layers
    } else if sh.kv_on_host
        && sh.output_device != Buffer::Host
        && !sh.output_ops_on_host
        && sh.layer_tensors.iter().all(|(_, h)| *h == 0)
        && let Some(sr) = &ctx.rwkv7
        && let Some(peak) = sr.rwkv7_share(&runtime::Rwkv7Share {
            layers: 0..0,
            start: runtime::Rwkv7Start::Graph,
            held_copies: 0,
            state_on_host: true,
        })
    {
        // RWKV-7 with its state in host memory: the host runs the whole input stage (its
        // gathers and stores of each layer's state rows are smaller)
        peak
    } else if sh.pipeline_parallel {
        // every graph input PIPELINE_COPIES times, then the two gathered token-row blocks
        PIPELINE_COPIES
            .saturating_mul(host_inputs.saturating_sub(2 * e))
            .saturating_add(2 * e)
    } else if let Some(sr) = &ctx.host_replay
        && let Some((layer_device, on_host, kinds)) = &sh.host_splits
        && !sh.kv_on_host
    {
        let splits = runtime::HostSplits {
            layer_device,
            on_host,
            kinds,
            ff: sr.ff,
            attention: &[],
            cache_here: &[],
            output: false,
            max_chunk: sh.host_chunk,
        };
        runtime::host_ffn_peak(&sr.model, &sr.kv, &sr.g, &splits)
    } else if whole_layer_on_host
        && !sh.kv_on_host
        && sh.output_device != Buffer::Host
        && !sh.output_ops_on_host
        && sh.layer_tensors.iter().all(|(n, h)| *h == 0 || h == n)
        && let Some(sr) = &ctx.rwkv7
        && let Some(peak) = sr.rwkv7_host_layers(
            &sh.layer_tensors
                .iter()
                .map(|(n, h)| *h > 0 && h == n)
                .collect::<Vec<_>>(),
        )
    {
        // RWKV-7 layers whose weights are in host memory among device layers
        peak
    } else if whole_layer_on_host {
        layers.saturating_sub(e)
    } else if part_before_device_layer {
        // the host's FFN/expert splits come while later layers still take the masks from it:
        // the layers' peak less the input stage (measured: --n-cpu-moe 24 over two devices at
        // 32k, Qwen3-30B-A3B 108.3 MiB; --n-cpu-ffn 8, Llama-3.1-8B 104.0 MiB)
        layers.saturating_sub(3 * e)
    } else if part_on_host {
        host_inputs.max(layers.saturating_sub(m).saturating_sub(2 * e))
    } else {
        host_inputs
    };
    // the output projection on the host: the logits beside the hidden state copied back and
    // its normed copy (llvmpipe: 266.5 MiB on the Llama-3.1-8B shape at ub 512; `-ot
    // output=CPU` on RPC devices: 404.0 MiB on the gpt-oss-20b shape)
    let host =
        if nd > 0 && sh.output_ops_on_host && !host_attention && !host_output_only && !host_ffn {
            host.max(
                ctx.logits_bytes
                    .saturating_add(ctx.output_proj_bytes)
                    .saturating_add(2 * e),
            )
        } else {
            host
        };
    (dev, host)
}

/// The host's run of RWKV-7 layers when it is the first `k` whole layers and devices run the
/// rest and the output with all of their weights (the host's share [`runtime::Rwkv7Share`]
/// follows).
fn rwkv7_host_prefix(sh: &SplitShape) -> Option<usize> {
    let k = sh
        .layer_device
        .iter()
        .take_while(|b| **b == Buffer::Host)
        .count();
    (k > 0
        && k < sh.layer_device.len()
        && !sh.kv_on_host
        && !sh.output_ops_on_host
        && sh.output_device != Buffer::Host
        && sh.layer_device[k..].iter().all(|b| *b != Buffer::Host)
        && sh.layer_tensors[k..].iter().all(|(_, h)| *h == 0))
    .then_some(k)
}

/// `-fit`'s own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FitSettings {
    /// `-c` as given (None: unset, so `-fit` may reduce the trained context).
    pub n_ctx: Option<u32>,
    /// Sequences (`-np`).
    pub n_seq: u32,
    /// `-kvu`.
    pub kv_unified: bool,
    /// `-fitt`: margin per device (one value broadcast, or one per device).
    pub margins: Vec<Bytes>,
    /// `-fitc`.
    pub min_ctx: u32,
    /// The host's free memory (used only without devices).
    pub host_free: Bytes,
}

impl Default for FitSettings {
    fn default() -> Self {
        FitSettings {
            n_ctx: None,
            n_seq: 1,
            kv_unified: false,
            margins: vec![DEFAULT_FIT_MARGIN],
            min_ctx: DEFAULT_FIT_MIN_CTX,
            host_free: Bytes(0),
        }
    }
}

/// Why `-fit` gave up (llama.cpp then keeps the user's settings and prints the reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitRefusal(pub String);

/// `-fit`'s outcome: the arguments llama-fit-params prints and the placement they give.
#[derive(Debug, Clone, PartialEq)]
pub struct FitPlan {
    /// `-c`.
    pub n_ctx: u32,
    /// `-ngl` as printed (-1 when `-fit` left it at `auto`).
    pub n_gpu_layers: i64,
    /// `-ts` per device (printed when more than one device has layers).
    pub tensor_split: Vec<u32>,
    /// `-ot` (pattern, buffer type name).
    pub overrides: Vec<(String, String)>,
    /// The settings the plan stands for.
    pub settings: PlacementSettings,
    /// The placement there.
    pub placement: Placement,
    /// The projection calls the search made (llama.cpp makes one dry run per call).
    pub probes: u32,
}

impl FitPlan {
    /// The line llama-fit-params prints: `-c N -ngl N [-ts a,b] [-ot "p=B,…"]`.
    pub fn arguments(&self) -> String {
        let mut s = format!("-c {} -ngl {}", self.n_ctx, self.n_gpu_layers);
        let mut nd = self.tensor_split.len();
        while nd > 1 && self.tensor_split[nd - 1] == 0 {
            nd -= 1;
        }
        if nd > 1 {
            let ts: Vec<String> = self.tensor_split[..nd]
                .iter()
                .map(|x| x.to_string())
                .collect();
            s.push_str(&format!(" -ts {}", ts.join(",")));
        }
        if !self.overrides.is_empty() {
            let ot: Vec<String> = self
                .overrides
                .iter()
                .map(|(p, b)| format!("{p}={b}"))
                .collect();
            s.push_str(&format!(" -ot \"{}\"", ot.join(",")));
        }
        s
    }
}

/// The part of a layer the first partial layer of a device keeps (`common_layer_fraction_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fraction {
    Attn,
    Up,
    Gate,
    Moe,
}

fn overflow_pattern(il: u32, f: Fraction) -> String {
    match f {
        Fraction::Attn => format!(r"blk\.{il}\.ffn_(gate|up|gate_up|down).*"),
        Fraction::Up => format!(r"blk\.{il}\.ffn_(gate|gate_up|down).*"),
        Fraction::Gate => format!(r"blk\.{il}\.ffn_down.*"),
        Fraction::Moe => format!(r"blk\.{il}\.ffn_(up|down|gate_up|gate)_(ch|)exps"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ngl {
    n_layer: u32,
    n_part: u32,
    overflow: Fraction,
}

impl Default for Ngl {
    fn default() -> Self {
        Ngl {
            n_layer: 0,
            n_part: 0,
            overflow: Fraction::Moe,
        }
    }
}

impl Ngl {
    fn n_full(&self) -> u32 {
        self.n_layer - self.n_part
    }
}

/// The settings a per-device layer count stands for, its `-ts` and its printed `-ot` list.
type FitSettingsFor = (PlacementSettings, Vec<u32>, Vec<(String, String)>);

struct FitState<'a> {
    model: &'a PlacementModel,
    devices: &'a [Device],
    base: &'a PlacementSettings,
    context_at: &'a dyn Fn(u32) -> ContextFigures,
    /// The context figures of the last context measured (most probes share one context).
    cached: Option<(u32, ContextFigures)>,
    probes: u32,
    /// The overflow patterns compiled so far (the search builds the same ones again and again).
    regexes: HashMap<String, Arc<Regex>>,
}

impl FitState<'_> {
    fn measure(&mut self, s: &PlacementSettings, n_ctx: u32) -> Result<Placement, FitRefusal> {
        self.probes += 1;
        if self.cached.as_ref().is_none_or(|(n, _)| *n != n_ctx) {
            self.cached = Some((n_ctx, (self.context_at)(n_ctx)));
        }
        let ctx = &self.cached.as_ref().expect("just set").1;
        place(self.model, ctx, self.devices, s).map_err(|e| FitRefusal(e.0))
    }

    /// `set_ngl_tensor_split_tbo`.
    fn settings_for(
        &mut self,
        ngl: &[Ngl],
        overflow: &[Target],
    ) -> Result<FitSettingsFor, FitRefusal> {
        let nd = self.devices.len();
        let hp_ngl = self.model.n_layer;
        let total: u32 = ngl.iter().map(|n| n.n_layer).sum();
        let mut s = self.base.clone();
        s.gpu_layers = GpuLayers::Count(total);
        let ts: Vec<u32> = ngl.iter().map(|n| n.n_layer).collect();
        s.tensor_split = if nd > 1 {
            Some(ts.iter().map(|x| *x as f32).collect())
        } else {
            None
        };
        let mut il0 = (hp_ngl + 1).saturating_sub(total);
        let mut ov = Vec::new();
        let mut printed = Vec::new();
        for (id, n) in ngl.iter().enumerate() {
            il0 += n.n_full();
            for il in il0..il0 + n.n_part {
                if ov.len() + 1 >= MAX_OVERRIDES {
                    return Err(FitRefusal(format!(
                        "llama_max_tensor_buft_overrides() == {MAX_OVERRIDES} is insufficient for model"
                    )));
                }
                let (f, t) = if il == il0 {
                    (n.overflow, overflow[id].clone())
                } else {
                    (Fraction::Moe, Target::Cpu)
                };
                let p = overflow_pattern(il, f);
                let name = match &t {
                    Target::Cpu => "CPU".to_string(),
                    Target::Device(j) => self.devices[*j].buffer_name.clone(),
                };
                let regex = match self.regexes.get(&p) {
                    Some(r) => Arc::clone(r),
                    None => {
                        let r = Arc::new(Regex::new(&p).map_err(|e| FitRefusal(e.to_string()))?);
                        self.regexes.insert(p.clone(), Arc::clone(&r));
                        r
                    }
                };
                ov.push(Override::compiled(&p, t, regex));
                printed.push((p, name));
            }
            il0 += n.n_part;
        }
        s.overrides = ov;
        Ok((s, ts, printed))
    }

    fn memory_for(
        &mut self,
        ngl: &[Ngl],
        overflow: &[Target],
        n_ctx: u32,
    ) -> Result<Vec<i64>, FitRefusal> {
        let (s, _, _) = self.settings_for(ngl, overflow)?;
        let p = self.measure(&s, n_ctx)?;
        Ok(p.devices.iter().map(|m| m.total() as i64).collect())
    }
}

/// Replay `common_params_fit_impl` (llama.cpp common/fit.cpp) over [`place`]:
/// 1. project the given settings (at the trained context × streams when `-c` is unset); stop
///    when every device keeps its margin;
/// 2. with `-c` unset, reduce the context by linear interpolation between `-fitc` × streams and
///    the maximum, rounded down to 256 × streams (one device: done there);
/// 3. refuse when the user set `-ngl`, `-ts`, `-ot` or `-sm row`; fill devices back to front
///    with dense layers by false position (MoE: dense-only layers, experts in host memory);
/// 4. MoE with a surplus: convert dense-only layers to full layers front to back, overflowing
///    expert tensors to the next device or host memory, and try one more partial layer (UP,
///    then GATE, else ATTN).
pub fn fit(
    model: &PlacementModel,
    devices: &[Device],
    settings: &PlacementSettings,
    fs: &FitSettings,
    context_at: &dyn Fn(u32) -> ContextFigures,
) -> Result<FitPlan, FitRefusal> {
    let mut st = FitState {
        model,
        devices,
        base: settings,
        context_at,
        cached: None,
        probes: 0,
        regexes: HashMap::new(),
    };
    let nd = devices.len();
    let n_streams: u32 = if fs.kv_unified { 1 } else { fs.n_seq.max(1) };
    let n_ctx_auto = fs.n_ctx.is_none_or(|c| c == 0);
    let hp_ngl = model.n_layer;
    let hp_nct = model.n_ctx_train;
    let hp_nex = model.n_expert;
    let n_ctx_max = (u64::from(hp_nct) * u64::from(n_streams)).min(u64::from(u32::MAX)) as u32;
    let n_ctx_min_total =
        (u64::from(fs.min_ctx) * u64::from(n_streams)).min(u64::from(u32::MAX)) as u32;
    let mut n_ctx = if n_ctx_auto {
        n_ctx_max
    } else {
        fs.n_ctx.unwrap_or(0)
    };
    let margin = |id: usize| -> i64 {
        fs.margins
            .get(id)
            .or(fs.margins.first())
            .map_or(DEFAULT_FIT_MARGIN.0, |b| b.0) as i64
    };
    // llama.cpp's first dry run is at the trained context; with several streams and `-c` unset
    // it measures again at the trained context per stream (the first figures are not used)
    if n_ctx_auto && n_streams > 1 {
        st.probes += 1;
    }
    let full = st.measure(settings, n_ctx)?;
    // a cache tensor over a device's tensor limit: llama.cpp aborts in this first dry run
    if full.cache_over_limit.is_some() {
        return Err(FitRefusal(
            "a cache tensor is over its device's tensor limit, and llama.cpp aborts in -fit's first dry run".into(),
        ));
    }
    let done = |st: &FitState, n_ctx: u32, p: Placement| -> FitPlan {
        FitPlan {
            n_ctx,
            n_gpu_layers: settings.gpu_layers.raw(),
            tensor_split: settings
                .tensor_split
                .as_ref()
                .map(|v| v.iter().map(|x| *x as u32).collect())
                .unwrap_or_default(),
            // llama-fit-params prints the overrides it leaves as they are: the user's own
            // (`-ot`, and `--cpu-moe` / `--n-cpu-moe` as their patterns)
            overrides: settings
                .overrides
                .iter()
                .map(|o| {
                    let name = match &o.target {
                        Target::Cpu => "CPU".to_string(),
                        Target::Device(j) => devices
                            .get(*j)
                            .map_or_else(|| format!("device {j}"), |d| d.buffer_name.clone()),
                    };
                    (o.pattern.clone(), name)
                })
                .collect(),
            settings: settings.clone(),
            placement: p,
            probes: st.probes,
        }
    };
    let free = |id: usize| devices[id].free.0 as i64;
    let mut sum_free = 0i64;
    let mut sum_projected_free = 0i64;
    let mut sum_projected_used = 0i64;
    let mut sum_projected_model = 0i64;
    // without devices -fit projects the host's buffers that are host memory to ggml: the
    // weights in CPU_REPACK are left out (common/fit.cpp sums `ggml_backend_buft_is_host`)
    let host_projected = |p: &Placement| p.host.total().saturating_sub(p.host_repack.0) as i64;
    if nd == 0 {
        sum_projected_used = host_projected(&full);
        sum_free = fs.host_free.0 as i64;
        sum_projected_free = sum_free - sum_projected_used;
        if sum_projected_free >= margin(0) {
            return Ok(done(&st, n_ctx, full));
        }
    } else {
        let mut changes = false;
        for (id, m) in full.devices.iter().enumerate() {
            let used = m.total() as i64;
            let pf = free(id) - used;
            sum_free += free(id);
            sum_projected_used += used;
            sum_projected_free += pf;
            sum_projected_model += m.model.0 as i64;
            if pf < margin(id) {
                changes = true;
            }
        }
        if !changes {
            return Ok(done(&st, n_ctx, full));
        }
    }
    // step 2: context
    let margins_sum: i64 = if nd == 0 {
        margin(0)
    } else {
        (0..nd).map(margin).sum()
    };
    let global_surplus = sum_projected_free - margins_sum;
    if global_surplus < 0 && n_ctx_auto && n_ctx_max > n_ctx_min_total {
        let mut sum_used_target = sum_free - margins_sum;
        if nd > 1 {
            // uint32_t(n_gpu_layers): auto (-1) and all (-2) are huge, so L
            let div = match settings.gpu_layers {
                GpuLayers::Count(n) => i64::from(n.min(hp_ngl)),
                _ => i64::from(hp_ngl),
            }
            .max(1);
            let model_per_layer = sum_projected_model / div;
            sum_used_target -= (nd as i64 + 1) * model_per_layer / if hp_nex == 0 { 2 } else { 6 };
        }
        n_ctx = n_ctx_min_total;
        let min_p = st.measure(settings, n_ctx)?;
        let used_min: i64 = if nd == 0 {
            host_projected(&min_p)
        } else {
            min_p.devices.iter().map(|m| m.total() as i64).sum()
        };
        if sum_used_target > used_min {
            let add = i64::from(n_ctx_max - n_ctx_min_total) * (sum_used_target - used_min)
                / (sum_projected_used - used_min);
            n_ctx = (i64::from(n_ctx) + add) as u32;
            let align = 256 * n_streams;
            n_ctx = (n_ctx - n_ctx % align).max(n_ctx_min_total);
            if nd <= 1 {
                // llama.cpp returns here without another dry run: the placement at the chosen
                // context is llmbound's own (not counted as one of llama.cpp's probes)
                let p = st.measure(settings, n_ctx)?;
                st.probes -= 1;
                return Ok(done(&st, n_ctx, p));
            }
        }
    }
    if nd == 0 {
        return Err(FitRefusal(
            "was unable to fit model into system memory by reducing context, abort".into(),
        ));
    }
    if settings.gpu_layers != GpuLayers::Auto {
        return Err(FitRefusal(format!(
            "n_gpu_layers already set by user to {}, abort",
            settings.gpu_layers.raw()
        )));
    }
    if nd > 1 {
        if settings
            .tensor_split
            .as_ref()
            .is_some_and(|v| v.iter().take(nd).any(|x| *x != 0.0))
        {
            return Err(FitRefusal(
                "model_params::tensor_split already set by user, abort".into(),
            ));
        }
        if settings.split_mode == SplitMode::Row {
            return Err(FitRefusal(
                "changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented, abort".into(),
            ));
        }
    }
    if !settings.overrides.is_empty() {
        return Err(FitRefusal(
            "model_params::tensor_buft_overrides already set by user, abort".into(),
        ));
    }
    // step 3
    let mut global_surplus_cpu_moe = 0i64;
    if hp_nex > 0 {
        let mut s = settings.clone();
        s.overrides = vec![
            Override::new(
                r"blk\.\d+\.ffn_(up|down|gate_up|gate)_(ch|)exps",
                Target::Cpu,
            )
            .map_err(|e| FitRefusal(e.0))?,
        ];
        let p = st.measure(&s, n_ctx)?;
        for (id, m) in p.devices.iter().enumerate() {
            global_surplus_cpu_moe += free(id) - m.total() as i64 - margin(id);
        }
    }
    let targets: Vec<i64> = (0..nd).map(|id| free(id) - margin(id)).collect();
    let mut overflow: Vec<Target> = vec![Target::Cpu; nd];
    let mut ngl = vec![Ngl::default(); nd];
    let mut mem = st.memory_for(&ngl, &overflow, n_ctx)?;
    for id in (0..nd).rev() {
        let mut n_unassigned = hp_ngl + 1;
        for n in &ngl[id + 1..] {
            n_unassigned -= n.n_layer;
        }
        let mut high = ngl.clone();
        high[id].n_layer = n_unassigned;
        if hp_nex > 0 {
            high[id].n_part = if id < nd - 1 {
                high[id].n_layer
            } else {
                high[id].n_layer.saturating_sub(1)
            };
        }
        if high[id].n_layer > 0 {
            let mut mem_high = st.memory_for(&high, &overflow, n_ctx)?;
            if mem_high[id] > targets[id] {
                let mut delta = high[id].n_layer - ngl[id].n_layer;
                while delta > 1 {
                    let step =
                        i64::from(delta) * (targets[id] - mem[id]) / (mem_high[id] - mem[id]);
                    let step = (step as u32).max(1).min(delta - 1);
                    let mut test = ngl.clone();
                    test[id].n_layer += step;
                    if hp_nex > 0 {
                        test[id].n_part += if id == nd - 1 && test[id].n_part == 0 {
                            step - 1
                        } else {
                            step
                        };
                    }
                    let mem_test = st.memory_for(&test, &overflow, n_ctx)?;
                    if mem_test[id] <= targets[id] {
                        ngl = test;
                        mem = mem_test;
                    } else {
                        high = test;
                        mem_high = mem_test;
                    }
                    delta = high[id].n_layer - ngl[id].n_layer;
                }
            } else {
                ngl = high;
                mem = mem_high;
            }
        }
    }
    if hp_nex == 0 || global_surplus_cpu_moe <= 0 {
        return finish(&mut st, &ngl, &overflow, n_ctx);
    }
    // step 4
    let mut id_dense_start = nd;
    for id in (0..nd).rev() {
        if ngl[id].n_layer > 0 {
            id_dense_start = id;
            continue;
        }
        break;
    }
    if id_dense_start >= nd {
        return finish(&mut st, &ngl, &overflow, n_ctx);
    }
    let mut id = 0;
    while id <= id_dense_start && id_dense_start < nd {
        let mut high = ngl.clone();
        for jd in id_dense_start..nd {
            let mv = if jd < nd - 1 {
                high[jd].n_layer
            } else {
                high[jd].n_layer - 1
            };
            high[id].n_layer += mv;
            high[jd].n_layer -= mv;
            high[jd].n_part = 0;
        }
        let mut id_dense_start_high = nd - 1;
        let mut mem_high = st.memory_for(&high, &overflow, n_ctx)?;
        if mem_high[id] > targets[id] {
            let mut delta = high[id].n_full() - ngl[id].n_full();
            while delta > 1 {
                let step = i64::from(delta) * (targets[id] - mem[id]) / (mem_high[id] - mem[id]);
                let step = (step as u32).max(1).min(delta - 1);
                let mut test = ngl.clone();
                let mut id_test = id_dense_start;
                let mut converted = 0u32;
                while id_test < nd {
                    let n = (step - converted).min(test[id_test].n_part);
                    test[id_test].n_layer -= n;
                    test[id_test].n_part -= n;
                    test[id].n_layer += n;
                    converted += n;
                    if test[id_test].n_part > 0 {
                        break;
                    }
                    id_test += 1;
                }
                let mem_test = st.memory_for(&test, &overflow, n_ctx)?;
                if mem_test[id] <= targets[id] {
                    ngl = test;
                    mem = mem_test;
                    id_dense_start = id_test;
                } else {
                    high = test;
                    mem_high = mem_test;
                    id_dense_start_high = id_test;
                }
                delta = high[id].n_full() - ngl[id].n_full();
            }
        } else {
            ngl = high;
            mem = mem_high;
            id_dense_start = id_dense_start_high;
        }
        let _ = id_dense_start_high;
        // one more partial layer
        if id_dense_start < nd && ngl[id_dense_start].n_layer > if id < nd - 1 { 0 } else { 1 } {
            let mut test = ngl.clone();
            let mut id_test = id_dense_start;
            test[id_test].n_layer -= 1;
            test[id].n_layer += 1;
            if id_test == id {
                // llama.cpp decrements and increments the same unsigned n_part: with none
                // left (n_part 0, the device's layers all full) it wraps and comes back to 0,
                // so the "extra layer" adds no partial layer and no override
            } else {
                test[id_test].n_part = test[id_test].n_part.saturating_sub(1);
                test[id].n_part += 1;
            }
            if test[id_test].n_part == 0 {
                id_test += 1;
            }
            test[id].overflow = Fraction::Up;
            let mut overflow_test = overflow.clone();
            if id < nd - 1 {
                overflow_test[id] = Target::Device(id + 1);
            }
            let ok =
                |m: &[i64]| m[id] < targets[id] && (id + 1 == nd || m[id + 1] < targets[id + 1]);
            let mut mem_test = st.memory_for(&test, &overflow_test, n_ctx)?;
            if ok(&mem_test) {
                ngl = test.clone();
                overflow = overflow_test.clone();
                mem = mem_test;
                id_dense_start = id_test;
                test[id].overflow = Fraction::Gate;
                mem_test = st.memory_for(&test, &overflow_test, n_ctx)?;
                if ok(&mem_test) {
                    ngl = test;
                    overflow = overflow_test;
                    mem = mem_test;
                    id_dense_start = id_test;
                }
            } else {
                test[id].overflow = Fraction::Attn;
                mem_test = st.memory_for(&test, &overflow_test, n_ctx)?;
                if ok(&mem_test) {
                    ngl = test;
                    overflow = overflow_test;
                    mem = mem_test;
                    id_dense_start = id_test;
                }
            }
        }
        id += 1;
    }
    let _ = mem;
    finish(&mut st, &ngl, &overflow, n_ctx)
}

fn finish(
    st: &mut FitState,
    ngl: &[Ngl],
    overflow: &[Target],
    n_ctx: u32,
) -> Result<FitPlan, FitRefusal> {
    let (s, ts, printed) = st.settings_for(ngl, overflow)?;
    // (llmbound's own placement at the plan: llama.cpp prints the plan without another dry
    // run, so it is not counted as one)
    let p = st.measure(&s, n_ctx)?;
    st.probes -= 1;
    let n_gpu_layers = i64::from(ngl.iter().map(|n| n.n_layer).sum::<u32>());
    Ok(FitPlan {
        n_ctx,
        n_gpu_layers,
        tensor_split: if st.devices.len() > 1 { ts } else { Vec::new() },
        overrides: printed,
        settings: s,
        placement: p,
        probes: st.probes,
    })
}

/// The context figures of a scenario's model and cache settings at llama.cpp's total
/// `n_ctx` (`-c`; per sequence n_ctx / streams), from `core::kv` and `core::runtime`.
pub fn scenario_context(s: &Scenario) -> impl Fn(u32) -> ContextFigures + '_ {
    let ff = s.feed_forward();
    let cache = s.cache.clone();
    move |n_ctx| context_figures(&s.model, &ff, &cache, n_ctx)
}

/// The context figures of `model` with the cache settings `cache` at llama.cpp's total
/// `n_ctx` (the settings' own context is replaced: per sequence n_ctx / streams).
pub fn context_figures(
    model: &ModelShape,
    ff: &FeedForward,
    cache: &CacheSettings,
    n_ctx: u32,
) -> ContextFigures {
    let mut cs = cache.clone();
    let streams = if cs.kv_unified {
        1
    } else {
        cs.sequences.max(1)
    };
    cs.context = (u64::from(n_ctx) / streams).max(1);
    let kv: KvCache = kv::cache(model, &cs);
    let b = cs.sequences.max(1);
    let layer_bytes = kv
        .per_layer
        .iter()
        .map(|l| {
            let rec = if l.recurrent {
                model.recurrent_bytes_per_layer(b)
            } else {
                0
            };
            l.allocated_bytes.saturating_add(rec)
        })
        .collect();
    let g = GraphSettings {
        ubatch: cs.ubatch,
        sequences: cs.sequences,
        flash_attn: cs.flash_attn,
        kv_unified: cs.kv_unified,
    };
    let rb = runtime::buffers(model, ff, &kv, &g);
    let rows = kv.allocated_context.min(cs.ubatch).max(1);
    let embd = model
        .embedding_length
        .saturating_mul(rows)
        .saturating_mul(4);
    let masks_f16: u64 = kv
        .caches
        .iter()
        .filter(|c| matches!(c.kind, kv::CacheKind::Kv | kv::CacheKind::Swa))
        .map(|c| {
            c.cells
                .saturating_mul(c.streams.max(1))
                .saturating_mul(rows)
                .saturating_mul(2)
        })
        .sum();
    // without flash attention the scheduler moves the f32 mask and its f16 cast: three times
    // the f16 figure, as measured on llama.cpp's RPC devices
    let masks = if cs.flash_attn {
        masks_f16
    } else {
        masks_f16.saturating_mul(3)
    };
    // RWKV passes its value-first stream and token-shift inputs along with the hidden state
    // (five blocks per boundary, as measured); every other decoder the hidden state and the
    // next layer's norm
    let boundary_blocks = if model.architecture.starts_with("rwkv") {
        5
    } else {
        2
    };
    // positions (i32) and the K and V row indices (i64) per row
    let small = rows.saturating_mul(20);
    // per attention cache its K and V row indices (without flash attention V is stored
    // transposed: one index per element)
    let kinds = kv
        .caches
        .iter()
        .filter(|c| matches!(c.kind, kv::CacheKind::Kv | kv::CacheKind::Swa))
        .count() as u64;
    let v_idx = if cs.flash_attn || model.mla.is_some() {
        rows.saturating_mul(8)
    } else {
        rows.saturating_mul(model.v_width_max()).saturating_mul(8)
    };
    // the KQ masks as graph inputs: f16 with flash attention, else f32
    let mask_input = if cs.flash_attn {
        masks_f16
    } else {
        masks_f16.saturating_mul(2)
    };
    let device_inputs = rows
        .saturating_mul(4)
        .saturating_add(kinds.saturating_mul(rows.saturating_mul(8).saturating_add(v_idx)));
    let no_vocab = ModelShape {
        vocab_size: 0,
        ..model.clone()
    };
    let layer_compute = runtime::buffers(&no_vocab, ff, &kv, &g).compute_bytes;
    // (a graph the device replay follows is one the host replay follows)
    let segment_replay = (runtime::host_splits_replayable(model) || model.architecture == "rwkv7")
        .then(|| {
            Arc::new(SegmentReplay {
                model: model.clone(),
                ff: *ff,
                kv: kv.clone(),
                g,
            })
        });
    ContextFigures {
        attn_tensor_bytes: (0..model.layers.len())
            .map(|il| runtime::attention_tensor_of(model, &kv, &g, il))
            .collect(),
        cache_tensor_bytes: kv
            .per_layer
            .iter()
            .map(|l| {
                // a cache as long as the context grows with it (a full layer's, or a sliding
                // one's with --swa-full); a window's does not
                let grows = l.allocated_cells > 0
                    && l.allocated_cells >= kv.cells_per_stream.saturating_mul(streams);
                let per_cell = if grows {
                    l.largest_tensor_bytes / l.allocated_cells * streams
                } else {
                    0
                };
                (l.largest_tensor_bytes, per_cell)
            })
            .collect(),
        ffn_tensor_bytes: runtime::ffn_tensor_max(model, ff, &kv, &g),
        layer_bytes,
        mask_bytes: masks,
        layer_compute_bytes: layer_compute,
        compute_bytes: rb.compute_bytes,
        logits_bytes: model.vocab_size.saturating_mul(rows).saturating_mul(4),
        output_proj_bytes: model
            .keys
            .cls_out_width
            .unwrap_or(0)
            .saturating_mul(rows)
            .saturating_mul(4),
        embd_bytes: embd,
        // every graph input: the masks, the token and vector embedding inputs and their two
        // gathered blocks, token ids, mixed ids and slots, output ids, positions and each
        // attention cache's row indices
        host_inputs_bytes: mask_input
            .saturating_add(embd.saturating_mul(4))
            .saturating_add(rows.saturating_mul(20))
            .saturating_add(device_inputs),
        boundary_bytes: embd.saturating_mul(boundary_blocks),
        small_inputs_bytes: small,
        rows,
        experts_elsewhere_compute_bytes: runtime::experts_elsewhere_peak(&no_vocab, ff, &kv, &g),
        device_inputs_bytes: device_inputs,
        mask_input_bytes: mask_input,
        output_ids_bytes: rows.saturating_mul(4),
        output_rows_blocks: if runtime::keeps_last_hidden(model) {
            2
        } else {
            1
        },
        segments: segment_replay
            .clone()
            .filter(|_| runtime::segment_replayable(model)),
        host_replay: segment_replay
            .clone()
            .filter(|_| runtime::host_splits_replayable(model)),
        rwkv7: segment_replay.filter(|_| model.architecture == "rwkv7"),
    }
}

/// llama.cpp's command line, split into the placement flags and the rest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedArgs {
    /// The placement flags.
    pub settings: PlacementSettings,
    /// `-c` (None: not given).
    pub n_ctx: Option<u32>,
    /// Arguments this parser does not read, in order.
    pub rest: Vec<String>,
}

/// Parse the placement flags of a llama.cpp command line (`-ngl`, `-ts`, `-sm`, `-mg`, `-ot`,
/// `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, `-nkvo`, `-c`, with their long spellings);
/// `-ot` buffer types are matched against `devices`. Overrides keep command-line order.
pub fn parse_args(args: &[String], devices: &[Device]) -> Result<ParsedArgs, PlacementError> {
    let mut out = ParsedArgs::default();
    let mut i = 0;
    let value = |i: usize, flag: &str| -> Result<&str, PlacementError> {
        args.get(i + 1)
            .map(String::as_str)
            .ok_or_else(|| PlacementError(format!("{flag}: missing value")))
    };
    let number = |v: &str, flag: &str| -> Result<u32, PlacementError> {
        v.parse::<u32>()
            .map_err(|_| PlacementError(format!("{flag} {v}: expected a non-negative number")))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let mut took = 1;
        match a {
            "-ngl" | "--gpu-layers" | "--n-gpu-layers" => {
                out.settings.gpu_layers = GpuLayers::parse(value(i, a)?)?;
                took = 2;
            }
            "-ts" | "--tensor-split" => {
                let v = value(i, a)?;
                let mut split = Vec::new();
                for x in v.split([',', '/']) {
                    let f = x.parse::<f32>().ok().filter(|f| f.is_finite() && *f >= 0.0);
                    split.push(f.ok_or_else(|| {
                        PlacementError(format!("{a} {v}: expected non-negative numbers"))
                    })?);
                }
                out.settings.tensor_split = Some(split);
                took = 2;
            }
            "-sm" | "--split-mode" => {
                out.settings.split_mode = match value(i, a)? {
                    "none" => SplitMode::None,
                    "layer" => SplitMode::Layer,
                    "row" => SplitMode::Row,
                    v => {
                        return Err(PlacementError(format!(
                            "{a} {v}: expected none, layer or row"
                        )));
                    }
                };
                took = 2;
            }
            "-mg" | "--main-gpu" => {
                out.settings.main_gpu = number(value(i, a)?, a)? as usize;
                took = 2;
            }
            "-ot" | "--override-tensor" => {
                let list = Override::parse_list(value(i, a)?, devices)?;
                out.settings.overrides.extend(list);
                took = 2;
            }
            "-cmoe" | "--cpu-moe" => out.settings.overrides.push(cpu_moe()),
            "-ncmoe" | "--n-cpu-moe" => {
                let n = number(value(i, a)?, a)?;
                out.settings.overrides.extend(n_cpu_moe(n));
                took = 2;
            }
            "-ncffn" | "--n-cpu-ffn" => {
                let n = number(value(i, a)?, a)?;
                out.settings.overrides.extend(n_cpu_ffn(n));
                took = 2;
            }
            "-nkvo" | "--no-kv-offload" => out.settings.no_kv_offload = true,
            "-c" | "--ctx-size" => {
                out.n_ctx = Some(number(value(i, a)?, a)?);
                took = 2;
            }
            _ => out.rest.push(a.to_string()),
        }
        i += took;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, gib: u64) -> Device {
        Device {
            buffer_name: name.into(),
            backend: Backend::Rpc,
            free: Bytes(gib << 30),
            total: Bytes(gib << 30),
            max_tensor: None,
        }
    }

    fn dense(n_layer: u32, per_layer: u64) -> PlacementModel {
        let mut t: Vec<(String, u64)> = vec![("token_embd.weight".into(), 1 << 20)];
        for il in 0..n_layer {
            t.push((format!("blk.{il}.attn_q.weight"), per_layer / 2));
            t.push((format!("blk.{il}.ffn_up.weight"), per_layer / 2));
        }
        t.push(("output.weight".into(), 1 << 20));
        PlacementModel::from_tensors(
            t.iter().map(|(n, b)| (n.as_str(), *b)),
            n_layer,
            0,
            8192,
            false,
        )
    }

    fn ctx(n_layer: u32, per: u64) -> ContextFigures {
        ContextFigures {
            layer_bytes: vec![per; n_layer as usize],
            ..Default::default()
        }
    }

    /// A tied output in host memory (`-ngl 0`) is one tensor with the token embedding unless
    /// the CPU repacks it: gemma-3-270m-q4_k_m.gguf (Q8_0 embedding of 262,144 rows) on
    /// llama.cpp b11434's x86 CPU backend holds 246,587,904 bytes in all, one copy.
    #[test]
    fn tied_output_in_host_memory_shares_the_embedding_unless_repacked() {
        const Q4_0: u32 = 2;
        const Q8_0: u32 = 8;
        const Q6_K: u32 = 14;
        let tensors = [
            ("token_embd.weight", 1_000_000u64),
            ("blk.0.attn_q.weight", 96),
            ("blk.1.attn_q.weight", 96),
            ("output_norm.weight", 64),
        ];
        let host_model = |ty: Option<(u32, u64)>, devs: &[Device]| {
            let m = PlacementModel {
                embedding_type: ty,
                ..PlacementModel::from_tensors(tensors.iter().copied(), 2, 0, 4096, true)
            };
            let s = PlacementSettings {
                gpu_layers: GpuLayers::Count(0),
                ..Default::default()
            };
            place(&m, &ctx(2, 0), devs, &s).unwrap().host.model.0
        };
        let one = 1_000_000 + 96 + 96 + 64;
        let two = one + 1_000_000;
        let on = |backend: Backend, max_tensor: Option<Bytes>| Device {
            backend,
            max_tensor,
            ..dev("D", 8)
        };
        // x86 CPU only, or with an RPC device: Q8_0 and Q6_K are not repacked, Q4_0 is
        assert_eq!(host_model(Some((Q8_0, 262_144)), &[]), one);
        assert_eq!(
            host_model(Some((Q6_K, 262_144)), &[on(Backend::Rpc, None)]),
            one
        );
        assert_eq!(host_model(Some((Q4_0, 262_144)), &[]), two);
        // ... unless the rows do not divide into its 8-row blocks
        assert_eq!(host_model(Some((Q4_0, 262_148)), &[]), one);
        // Apple silicon: the Arm CPU repacks Q8_0 and Q6_K
        assert_eq!(
            host_model(Some((Q8_0, 262_144)), &[on(Backend::Metal, None)]),
            two
        );
        assert_eq!(
            host_model(Some((Q6_K, 262_144)), &[on(Backend::Metal, None)]),
            two
        );
        // CUDA / Vulkan: their pinned host buffer comes first and takes both
        assert_eq!(
            host_model(Some((Q4_0, 262_144)), &[on(Backend::Cuda, None)]),
            one
        );
        // ... unless the device cannot run the projection (over its tensor limit): repacked
        let small = Some(Bytes(1 << 19));
        assert_eq!(
            host_model(Some((Q4_0, 262_144)), &[on(Backend::Vulkan, small)]),
            two
        );
        assert_eq!(
            host_model(Some((Q6_K, 262_144)), &[on(Backend::Vulkan, small)]),
            one
        );
        // the embedding's type unknown (an estimate): Q8_0 or Q6_K as quantised files have it
        assert_eq!(host_model(None, &[]), one);
        assert_eq!(host_model(None, &[on(Backend::Metal, None)]), two);
    }

    /// The host's `CPU_REPACK` share: its matrices of a type the CPU repacks, unless a device's
    /// pinned host buffer takes them (llama.cpp's breakdown lists `CPU_REPACK` apart; `-fit`
    /// without devices leaves it out of system memory).
    #[test]
    fn host_repack_is_the_host_matrices_the_cpu_repacks() {
        const Q4_0: u32 = 2;
        const Q6_K: u32 = 14;
        let mm = |ggml_type: u32| Some(MatmulWeight::new(ggml_type, 4096));
        let tensors = [
            ("token_embd.weight", 1_000u64, None),
            ("blk.0.attn_q.weight", 4_096, mm(Q4_0)),
            ("blk.0.attn_norm.weight", 64, None),
            ("blk.1.ffn_up.weight", 8_192, mm(Q6_K)),
            ("output.weight", 2_048, mm(Q6_K)),
        ];
        let repack = |devs: &[Device]| {
            let m = PlacementModel::from_weights(tensors.iter().copied(), 2, 0, 4096, false, None);
            let s = PlacementSettings {
                gpu_layers: GpuLayers::Count(0),
                ..Default::default()
            };
            let p = place(&m, &ctx(2, 0), devs, &s).unwrap();
            assert_eq!(p.host.model.0, 1_024 + 4_096 + 64 + 8_192 + 2_048);
            p.host_repack.0
        };
        let on = |backend: Backend| Device {
            backend,
            ..dev("D", 8)
        };
        // x86-64: Q4_0 repacked, Q6_K not
        assert_eq!(repack(&[]), 4_096);
        assert_eq!(repack(&[on(Backend::Rpc)]), 4_096);
        // Apple silicon: both
        assert_eq!(repack(&[on(Backend::Metal)]), 4_096 + 8_192 + 2_048);
        // CUDA's pinned host buffer comes first
        assert_eq!(repack(&[on(Backend::Cuda)]), 0);
    }

    #[test]
    fn layers_split_like_llama_cpp() {
        let m = dense(32, 1 << 24);
        let d = [dev("A", 8), dev("B", 8)];
        let s = PlacementSettings {
            tensor_split: Some(vec![1.0, 1.0]),
            ..Default::default()
        };
        let p = place(&m, &ctx(32, 1 << 20), &d, &s).unwrap();
        // 33 positions over two devices: positions 0..16 (x < 0.5) on the first
        let first = p
            .layer_device
            .iter()
            .filter(|b| **b == Buffer::Device(0))
            .count();
        assert_eq!(first, 17);
        assert_eq!(p.output_device, Buffer::Device(1));
        assert_eq!(p.devices[0].context.0, 17 << 20);
        assert_eq!(p.host.model.0, 1 << 20);
    }

    #[test]
    fn ngl_and_overrides() {
        let m = dense(10, 1 << 24);
        let d = [dev("A", 8)];
        let s = PlacementSettings {
            gpu_layers: GpuLayers::Count(5),
            overrides: n_cpu_ffn(10),
            ..Default::default()
        };
        let p = place(&m, &ctx(10, 0), &d, &s).unwrap();
        assert_eq!(
            p.layer_device
                .iter()
                .filter(|b| **b == Buffer::Host)
                .count(),
            6
        );
        // 4 layers' attention halves and the output on the device
        assert_eq!(p.devices[0].model.0, 4 * (1 << 23) + (1 << 20));
        assert!(
            place(
                &m,
                &ctx(10, 0),
                &d,
                &PlacementSettings {
                    split_mode: SplitMode::Row,
                    ..Default::default()
                }
            )
            .is_err()
        );
    }

    #[test]
    fn feed_forward_projections_by_name() {
        let p = |n: &str| ffn_projection(n).map(|(k, p)| (k, p.gate, p.up, p.down, p.fused));
        assert_eq!(
            p("blk.3.ffn_down_exps.weight"),
            Some((FFN_EXPERTS, false, false, true, false))
        );
        assert_eq!(
            p("blk.3.ffn_up_exps.bias"),
            Some((FFN_EXPERTS, false, true, false, false))
        );
        assert_eq!(
            p("blk.0.ffn_gate_up_exps.weight"),
            Some((FFN_EXPERTS, true, true, false, true))
        );
        assert_eq!(
            p("blk.3.ffn_gate_shexp.weight"),
            Some((FFN_SHARED, true, false, false, false))
        );
        assert_eq!(
            p("blk.0.ffn_down.weight"),
            Some((FFN_DENSE, false, false, true, false))
        );
        // the router, the norms and attention are not feed-forward projections
        for n in [
            "blk.0.ffn_gate_inp.weight",
            "blk.0.ffn_gate_inp_shexp.weight",
            "blk.0.ffn_norm.weight",
            "blk.0.attn_q.weight",
            "output.weight",
        ] {
            assert_eq!(p(n), None, "{n}");
        }
    }

    fn figures(n_layer: u32) -> ContextFigures {
        let e = 8 << 20;
        ContextFigures {
            layer_bytes: vec![1 << 20; n_layer as usize],
            compute_bytes: 300 << 20,
            logits_bytes: 250 << 20,
            embd_bytes: e,
            // (the masks, four hidden-state blocks, 20 bytes of ids per row: as context_figures)
            host_inputs_bytes: (4 << 20) + 4 * e + 512 * 20,
            mask_bytes: 4 << 20,
            layer_compute_bytes: 128 << 20,
            boundary_bytes: 2 * e,
            small_inputs_bytes: 0,
            rows: 512,
            experts_elsewhere_compute_bytes: 128 << 20,
            mask_input_bytes: 4 << 20,
            output_rows_blocks: 1,
            output_proj_bytes: 0,
            ..Default::default()
        }
    }

    /// A cache tensor over a device's tensor limit: llama.cpp aborts (the placement says which
    /// layer and the largest context that avoids it); on the host, or with `-nkvo`, no limit.
    #[test]
    fn cache_tensor_over_the_tensor_limit() {
        let m = dense(4, 1 << 24);
        let mut c = figures(4);
        // layers 0-2 grow with the context (256 MiB at it, 8 KiB per cell); layer 3 is a
        // window of 96 MiB
        c.cache_tensor_bytes = vec![
            (256 << 20, 8 << 10),
            (256 << 20, 8 << 10),
            (256 << 20, 8 << 10),
            (96 << 20, 0),
        ];
        let limited = Device {
            backend: Backend::Vulkan,
            max_tensor: Some(Bytes(128 << 20)),
            ..dev("Vulkan0", 24)
        };
        let on_limited = |c: &ContextFigures, s: &PlacementSettings| {
            place(&m, c, std::slice::from_ref(&limited), s).unwrap()
        };
        let p = on_limited(&c, &PlacementSettings::default());
        let o = p.cache_over_limit.expect("over the limit");
        assert_eq!(
            (o.device, o.layer, o.bytes, o.limit),
            (0, 0, 256 << 20, 128 << 20)
        );
        // 128 MiB / 8 KiB = 16,384 cells
        assert_eq!(o.max_context, Some(16_384));
        assert_eq!(p.cache_max_context, Some(16_384));
        // a window over the limit: no context avoids it
        c.cache_tensor_bytes[3] = (160 << 20, 0);
        let p = on_limited(&c, &PlacementSettings::default());
        assert_eq!(p.cache_over_limit.map(|o| o.max_context), Some(None));
        assert_eq!(p.cache_max_context, Some(0));
        // the cache in host memory, or no limit: nothing over it
        let nkvo = PlacementSettings {
            no_kv_offload: true,
            ..PlacementSettings::default()
        };
        let p = on_limited(&c, &nkvo);
        assert_eq!((p.cache_over_limit, p.cache_max_context), (None, None));
        let p = place(&m, &c, &[dev("RPC0", 24)], &PlacementSettings::default()).unwrap();
        assert_eq!((p.cache_over_limit, p.cache_max_context), (None, None));
    }

    #[test]
    fn scheduler_compute_structure() {
        let m = dense(32, 1 << 24);
        let c = figures(32);
        let (e, mask, l) = (8u64 << 20, 4u64 << 20, 250u64 << 20);
        let two = [dev("A", 24), dev("B", 24)];
        // all layers over two devices: pipeline parallelism, four copies of every split input
        let p = place(&m, &c, &two, &PlacementSettings::default()).unwrap();
        assert_eq!(p.compute_basis, ComputeBasis::SchedulerModel);
        // (every graph input: the masks, two hidden-state blocks, 20 bytes of ids per row)
        assert_eq!(p.host.compute.0, 4 * (mask + 2 * e + 512 * 20) + 2 * e);
        assert_eq!(
            p.devices[0].compute.0,
            4 * (mask + 3 * e) + (128 << 20) - mask - 3 * e + 2 * e
        );
        assert_eq!(p.devices[1].compute.0, 4 * (mask + 2 * e) + l + e);
        // -nkvo turns pipeline parallelism off: one copy, freed after use
        let s = PlacementSettings {
            no_kv_offload: true,
            ..Default::default()
        };
        let p = place(&m, &c, &two, &s).unwrap();
        assert_eq!(p.host.compute.0, c.host_inputs_bytes);
        assert_eq!(p.devices[0].compute.0, (128 << 20) - e);
        assert_eq!(p.devices[1].compute.0, l + e);
        // one device with everything: the whole graph but the input stage
        let p = place(&m, &c, &two[..1], &PlacementSettings::default()).unwrap();
        assert_eq!(p.devices[0].compute.0, l + c.host_inputs_bytes);
        // partial offload on RPC: the host runs its layers, the device its own and the logits
        let s = PlacementSettings {
            gpu_layers: GpuLayers::Count(10),
            ..Default::default()
        };
        let p = place(&m, &c, &two[..1], &s).unwrap();
        assert_eq!(p.host.compute.0, 128 << 20);
        assert_eq!(p.devices[0].compute.0, l + e);
        // a CUDA device takes the host layers' weight ops and copies the weights in
        let mut cuda = two[0].clone();
        cuda.backend = Backend::Cuda;
        let p = place(&m, &c, &[cuda], &s).unwrap();
        assert_eq!(p.host.compute.0, c.host_inputs_bytes);
        assert_eq!(p.devices[0].compute.0, l + e + padded(1 << 23));
    }

    #[test]
    fn override_index_keeps_order() {
        let d = [dev("A", 8)];
        let list = Override::parse_list(r"blk\.1\.ffn=A,ffn=CPU,blk\.1\.attn=CPU", &d).unwrap();
        assert_eq!(list[0].needle.as_deref(), Some("blk.1."));
        assert_eq!(list[1].needle, None);
        let ix = OverrideIndex::new(&list);
        let first = |n: &str| ix.first_match(n).map(|o| o.pattern.clone());
        assert_eq!(
            first("blk.1.ffn_up.weight").as_deref(),
            Some(r"blk\.1\.ffn")
        );
        assert_eq!(first("blk.11.ffn_up.weight").as_deref(), Some("ffn"));
        assert_eq!(
            first("blk.1.attn_q.weight").as_deref(),
            Some(r"blk\.1\.attn")
        );
        assert_eq!(first("blk.2.attn_q.weight"), None);
        assert_eq!(first("output.weight"), None);
        assert_eq!(block_needle(r"blk\.12\.ffn"), Some("blk.12.".into()));
        assert_eq!(block_needle(r"blk\.(1|2)\."), None);
        assert_eq!(block_needle(r"blk\.3"), None);
    }

    #[test]
    fn ot_parse() {
        let d = [dev("RPC0[127.0.0.1:1]", 8)];
        let o = Override::parse_list(r"blk\.1\.=CPU,exps=RPC0[127.0.0.1:1]", &d).unwrap();
        assert_eq!(o[1].target, Target::Device(0));
        assert!(Override::parse_list("x=CUDA0", &d).is_err());
        assert!(Override::parse_list("(=CPU", &d).is_err());
        assert!(GpuLayers::parse("abc").is_err());
        assert_eq!(GpuLayers::parse("all").unwrap(), GpuLayers::All);
    }

    #[test]
    fn fit_dense_fills_back_to_front() {
        let m = dense(32, 256 << 20);
        let d = [dev("A", 4), dev("B", 4)];
        let c = |_n: u32| ctx(32, 16 << 20);
        let fs = FitSettings {
            n_ctx: Some(4096),
            ..Default::default()
        };
        let plan = fit(&m, &d, &PlacementSettings::default(), &fs, &c).unwrap();
        for (i, m) in plan.placement.devices.iter().enumerate() {
            assert!(m.total() as i64 <= d[i].free.0 as i64 - (1 << 30), "{i}");
        }
        assert!(plan.arguments().starts_with("-c 4096 -ngl "));
        assert!(plan.arguments().contains(" -ts "));
        // refusals
        // -ngl set by the user and too much for the devices: -fit refuses, as llama.cpp does
        let s = PlacementSettings {
            gpu_layers: GpuLayers::All,
            ..Default::default()
        };
        assert!(fit(&m, &d, &s, &fs, &c).is_err());
        // a -ngl that fits needs no change
        let s = PlacementSettings {
            gpu_layers: GpuLayers::Count(3),
            ..Default::default()
        };
        assert_eq!(
            fit(&m, &d, &s, &fs, &c).unwrap().arguments(),
            "-c 4096 -ngl 3"
        );
    }

    #[test]
    fn args_and_estimated_model() {
        let d = [dev("A", 8), dev("B", 8)];
        let a: Vec<String> = [
            "-c",
            "8192",
            "-ngl",
            "all",
            "-ts",
            "3,1",
            "--n-cpu-moe",
            "2",
            "-nkvo",
            "-np",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = parse_args(&a, &d).unwrap();
        assert_eq!(p.n_ctx, Some(8192));
        assert_eq!(p.settings.gpu_layers, GpuLayers::All);
        assert_eq!(p.settings.tensor_split, Some(vec![3.0, 1.0]));
        assert_eq!(p.settings.overrides.len(), 2);
        assert_eq!(
            p.settings.overrides[1].pattern,
            r"blk\.1\.ffn_(up|down|gate|gate_up)_(ch|)exps"
        );
        assert!(p.settings.no_kv_offload);
        assert_eq!(p.rest, vec!["-np".to_string(), "2".to_string()]);
        for bad in [
            &["-ngl"][..],
            &["-ts", "a,b"],
            &["-sm", "diag"],
            &["--n-cpu-moe", "-1"],
        ] {
            let v: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            assert!(parse_args(&v, &d).is_err(), "{bad:?}");
        }
        // without a tensor list: estimated per-layer bytes, flagged so
        let split = WeightSplit {
            layer: vec![100; 4],
            layer_experts: vec![60; 4],
            output: 10,
            tied: false,
            tied_host_copy: false,
            embedding: 20,
            embedding_row: 1,
            other: 0,
            exact: false,
        };
        let m = PlacementModel::estimated(&split, 8, 4096);
        assert!(!m.exact);
        let p = place(
            &m,
            &ctx(4, 0),
            &d[..1],
            &PlacementSettings {
                overrides: vec![cpu_moe()],
                ..Default::default()
            },
        )
        .unwrap();
        assert!(!p.exact_model);
        assert_eq!(p.host.model.0, padded(20) + 4 * padded(60));
        assert_eq!(p.devices[0].model.0, 4 * padded(40) + padded(10));
    }
}
