//! The options a user gives about a scenario (CLI flags, the explorer's start-up arguments):
//! the one struct every scenario flag lives in, the [`Edit`]s they make, and the scenario the
//! profiles they name describe before any edit (`workspace::prepare` then opens the artifact
//! and applies the edits).
//! Depends on: core, gguf, profile.

use crate::core::cache::CacheType;
use crate::core::edit::{self, Edit};
use crate::core::mlx::{self, MlxLmSettings, Runtime};
use crate::core::scenario::Scenario;
use crate::core::units::{self, Provenance, Sourced};
use crate::core::weights::{WeightFile, WeightKind};
use crate::gguf::{self, GgufError};
use crate::profile::file::ScenarioFile;
use crate::profile::{Catalog, ProfileError, load};
use clap::builder::TypedValueParser as _;
use std::path::{Path, PathBuf};

/// Everything a user can set from the command line about a scenario: the one struct every
/// scenario flag lives in (flag names follow llama.cpp's where one exists). Flattened into
/// the commands that take a scenario only; [`ScenarioOptions::edits`] turns the overrides
/// into the same [`Edit`]s the explorer applies.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct ScenarioOptions {
    /// Scenario profile id or TOML path.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Model profile id or TOML path.
    #[arg(long)]
    pub model: Option<String>,
    /// Artifact id of the model profile.
    #[arg(long)]
    pub artifact: Option<String>,
    /// The artifact's exact size, when no artifact profile or file is at hand ("42520398080").
    #[arg(long = "artifact-bytes", allow_hyphen_values = true)]
    pub artifact_bytes: Option<String>,
    /// Machine profile id or TOML path (`compare` takes it several times).
    #[arg(long, action = clap::ArgAction::Append)]
    pub machine: Option<String>,
    /// Retained tokens per sequence N (llama.cpp's -c is N × sequences); 0: llama.cpp's
    /// default, the trained context, which -fit may reduce.
    #[arg(short = 'c', long, allow_negative_numbers = true, value_parser = whole_u64)]
    pub context: Option<u64>,
    /// Sequences decoded together (llama.cpp -np).
    #[arg(long, visible_alias = "parallel", allow_negative_numbers = true, value_parser = whole_u64)]
    pub sequences: Option<u64>,
    /// K cache type (-ctk): f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl.
    #[arg(long = "cache-type-k", visible_alias = "ctk")]
    pub cache_type_k: Option<String>,
    /// V cache type (-ctv).
    #[arg(long = "cache-type-v", visible_alias = "ctv")]
    pub cache_type_v: Option<String>,
    /// Other live allocations A ("2 GiB"); default 0.
    #[arg(long, allow_hyphen_values = true)]
    pub overhead: Option<String>,
    /// llama.cpp -ngl: the output layer plus the last n − 1 repeating layers on the accelerators.
    #[arg(long = "gpu-layers", allow_negative_numbers = true, value_parser = whole_u32, conflicts_with = "ngl")]
    pub gpu_layers: Option<u32>,
    /// llama.cpp -ngl N|auto|all (auto, the default, lets -fit choose; all counts as set).
    #[arg(long = "ngl", value_name = "N|auto|all", allow_hyphen_values = true)]
    pub ngl: Option<String>,
    /// llama.cpp -sm none|layer|row (row is refused: llama.cpp's -fit refuses it too).
    #[arg(long = "split-mode", value_name = "none|layer|row")]
    pub split_mode: Option<String>,
    /// llama.cpp -mg: the device -sm none keeps.
    #[arg(long = "main-gpu", allow_negative_numbers = true, value_parser = whole_u32)]
    pub main_gpu: Option<u32>,
    /// llama.cpp -ot PATTERN=BUFFER_TYPE,… (CPU, CUDA0, MTL0, RPC0[host:port]); repeatable.
    #[arg(long = "override-tensor", value_name = "PATTERN=BUFFER_TYPE,…", action = clap::ArgAction::Append, allow_hyphen_values = true)]
    pub override_tensor: Vec<String>,
    /// llama.cpp --cpu-moe: every routed-expert tensor in host memory.
    #[arg(long = "cpu-moe")]
    pub cpu_moe: bool,
    /// llama.cpp --n-cpu-moe N: the routed experts of the first N layers in host memory.
    #[arg(long = "n-cpu-moe", allow_negative_numbers = true, value_parser = whole_u32)]
    pub n_cpu_moe: Option<u32>,
    /// llama.cpp --n-cpu-ffn N: the dense FFN of the first N layers in host memory.
    #[arg(long = "n-cpu-ffn", allow_negative_numbers = true, value_parser = whole_u32)]
    pub n_cpu_ffn: Option<u32>,
    /// llama.cpp -fit on|off (on by default): fit -c, -ngl, -ts and -ot to the devices.
    #[arg(long = "fit", value_name = "on|off", value_parser = clap::builder::PossibleValuesParser::new(["on", "off"]).map(|s| s == "on"))]
    pub fit: Option<bool>,
    /// llama.cpp -fitt MiB[,MiB…]: the memory -fit leaves free per device (default 1024).
    #[arg(long = "fit-target", value_name = "MiB", value_delimiter = ',', allow_negative_numbers = true, value_parser = whole_u64)]
    pub fit_target: Option<Vec<u64>>,
    /// llama.cpp -fitc N: the smallest context -fit may choose (default 4096).
    #[arg(long = "fit-ctx", allow_negative_numbers = true, value_parser = whole_u32)]
    pub fit_ctx: Option<u32>,
    /// llama.cpp --rpc host:port,…: the endpoints of the machine's rpc devices, in order.
    #[arg(long = "rpc", value_name = "HOST:PORT,…", value_delimiter = ',')]
    pub rpc: Option<Vec<String>>,
    /// The memory the backend reports free on --tier's device ("40 GiB"; a Mac's
    /// `sudo sysctl iogpu.wired_limit_mb=N` makes Metal report N MiB); default the first device.
    #[arg(long = "device-free", allow_hyphen_values = true)]
    pub device_free: Option<String>,
    /// Prompt rows S for the prefill bound.
    #[arg(long = "prompt-rows", allow_negative_numbers = true, value_parser = whole_u64)]
    pub prompt_rows: Option<u64>,
    /// Override the capacity of a tier ("64 GiB").
    #[arg(long, allow_hyphen_values = true)]
    pub memory: Option<String>,
    /// Override the bandwidth of a tier ("400 GB/s"); drops the tier's measured figure.
    #[arg(long, allow_hyphen_values = true)]
    pub bandwidth: Option<String>,
    /// Tier the --memory/--bandwidth overrides apply to (default the first).
    #[arg(long)]
    pub tier: Option<String>,
    /// Flash attention (-fa).
    #[arg(long = "flash-attn", value_name = "FLASH_ATTN", value_parser = clap::builder::PossibleValuesParser::new(["on", "off"]).map(|s| s == "on"))]
    pub flash_attn: Option<bool>,
    /// Physical micro-batch n_ubatch (-ub).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_u64)]
    pub ubatch: Option<u64>,
    /// One unified KV buffer for all sequences (-kvu).
    #[arg(long = "kv-unified")]
    pub kv_unified: bool,
    /// Full-size cache on sliding-window layers (--swa-full).
    #[arg(long = "swa-full")]
    pub swa_full: bool,
    /// Keep the KV cache in host memory (-nkvo).
    #[arg(long = "no-kv-offload")]
    pub no_kv_offload: bool,
    /// Layer split across accelerators (--tensor-split 3,1).
    #[arg(
        long = "tensor-split",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub tensor_split: Option<Vec<f64>>,
    /// Compute path for the prefill ceiling ("fp16", "int8", …).
    #[arg(long = "compute-path")]
    pub compute_path: Option<String>,
    /// A GGUF file (any shard of a split model): W, model shape and tensor inventory from it.
    #[arg(long, value_name = "FILE")]
    pub gguf: Option<PathBuf>,
    /// A multimodal projector the runtime also loads (adds to W).
    #[arg(long, value_name = "FILE")]
    pub mmproj: Option<PathBuf>,
    /// A draft model the runtime also loads (adds to W).
    #[arg(long, value_name = "FILE")]
    pub draft: Option<PathBuf>,
    /// The runtime the figures are for when the model has both a GGUF and a safetensors
    /// model (llama.cpp or mlx-lm).
    #[arg(long, value_name = "llama.cpp|mlx-lm")]
    pub runtime: Option<String>,
    /// MLX-LM --kv-bits: a quantized KV cache (2, 4 or 8 bits; MLX's 3, 5 and 6 are not
    /// modelled) from --quantized-kv-start tokens.
    #[arg(long = "kv-bits", allow_negative_numbers = true, value_parser = whole_u64)]
    pub kv_bits: Option<u64>,
    /// MLX-LM --kv-group-size (32, 64 or 128; default 64).
    #[arg(long = "kv-group-size", allow_negative_numbers = true, value_parser = whole_u64)]
    pub kv_group_size: Option<u64>,
    /// MLX-LM --quantized-kv-start, tokens (default 5000).
    #[arg(long = "quantized-kv-start", allow_negative_numbers = true, value_parser = whole_u64)]
    pub quantized_kv_start: Option<u64>,
    /// MLX-LM --max-kv-size, tokens: a RotatingKVCache on models without their own caches.
    #[arg(long = "max-kv-size", allow_negative_numbers = true, value_parser = whole_u64)]
    pub max_kv_size: Option<u64>,
}

/// Edits, each with the flag that asked for it.
pub type FlagEdits = Vec<(&'static str, Edit)>;

/// Why a count flag's value is refused (clap prints it after the flag's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CountFlagError {
    /// Below zero.
    #[error("must not be negative: give a whole number (0, 1, 2, …)")]
    Negative,
    /// Not a whole number.
    #[error("must be a whole number (0, 1, 2, …), not a fraction")]
    Fraction,
    /// Above `u64::MAX`.
    #[error("must be a whole number from 0 to {} (0, 1, 2, …)", u64::MAX)]
    TooLarge,
    /// Empty or not a number.
    #[error("not a number: give a whole number (0, 1, 2, … or 32k)")]
    NotANumber,
    /// Above `u32::MAX` for a 32-bit flag.
    #[error("must be at most {}", u32::MAX)]
    AboveU32,
}

/// A whole number for a count flag (tokens, sequences, layers, rows), read by the one count
/// parser the explorer uses too (`units::parse_count`: `32768`, `32,768`, `32k`). clap's own
/// parser would call "-5" "invalid digit found in string"; this says what is wrong with it.
pub fn whole_u64(s: &str) -> Result<u64, CountFlagError> {
    units::parse_count(s).map_err(|e| match e {
        units::CountError::Negative => CountFlagError::Negative,
        units::CountError::Fraction => CountFlagError::Fraction,
        units::CountError::TooLarge => CountFlagError::TooLarge,
        units::CountError::Empty | units::CountError::NotANumber => CountFlagError::NotANumber,
    })
}

/// [`whole_u64`] for a flag that fits in 32 bits (llama.cpp's -ngl).
pub fn whole_u32(s: &str) -> Result<u32, CountFlagError> {
    let v = whole_u64(s)?;
    u32::try_from(v).map_err(|_| CountFlagError::AboveU32)
}

impl ScenarioOptions {
    /// `--runtime`, parsed (a bad name is a one-line error naming the flag).
    pub fn runtime(&self) -> Result<Option<Runtime>, BuildError> {
        self.runtime
            .as_deref()
            .map(|r| {
                Runtime::parse(r).ok_or_else(|| {
                    flag(
                        "--runtime",
                        format!("\"{r}\": expected llama.cpp or mlx-lm"),
                    )
                })
            })
            .transpose()
    }

    /// The MLX-LM flags given (`--kv-bits`, `--kv-group-size`, `--quantized-kv-start`,
    /// `--max-kv-size`), each with the edit it makes, checked as MLX checks them.
    pub fn mlx_lm_edits(&self) -> Result<Vec<(&'static str, Edit)>, BuildError> {
        let mut v = Vec::new();
        if let Some(b) = self.kv_bits {
            mlx::check_kv_bits(b).map_err(|e| flag("--kv-bits", e))?;
            v.push(("--kv-bits", Edit::KvBits(Some(b))));
        }
        if let Some(g) = self.kv_group_size {
            mlx::check_kv_group_size(g).map_err(|e| flag("--kv-group-size", e))?;
            v.push(("--kv-group-size", Edit::KvGroupSize(g)));
        }
        if let Some(n) = self.quantized_kv_start {
            v.push(("--quantized-kv-start", Edit::QuantizedKvStart(n)));
        }
        if let Some(n) = self.max_kv_size {
            if n == 0 {
                return Err(flag("--max-kv-size", "must be at least 1 token"));
            }
            v.push(("--max-kv-size", Edit::MaxKvSize(Some(n))));
        }
        Ok(v)
    }

    /// The options without the settings that need the opened model (`--runtime` and MLX-LM's
    /// flags), and those settings as edits: the explorer builds its scenario before its
    /// start-up file is open (on a worker) and applies them once it is.
    pub fn split_after_open(&self) -> Result<(ScenarioOptions, FlagEdits), BuildError> {
        let mut later = Vec::new();
        if let Some(r) = self.runtime()? {
            later.push(("--runtime", Edit::Runtime(r)));
        }
        later.extend(self.mlx_lm_edits()?);
        let now = ScenarioOptions {
            runtime: None,
            kv_bits: None,
            kv_group_size: None,
            quantized_kv_start: None,
            max_kv_size: None,
            ..self.clone()
        };
        Ok((now, later))
    }

    /// MLX-LM's settings the flags give (MLX-LM's defaults for those not given).
    pub fn mlx_lm(&self) -> Result<MlxLmSettings, BuildError> {
        let mut m = MlxLmSettings::default();
        for (_, e) in self.mlx_lm_edits()? {
            match e {
                Edit::KvBits(b) => m.kv_bits = b,
                Edit::KvGroupSize(g) => m.kv_group_size = g,
                Edit::QuantizedKvStart(n) => m.quantized_kv_start = n,
                Edit::MaxKvSize(n) => m.max_kv_size = n,
                _ => {}
            }
        }
        Ok(m)
    }

    /// The first MLX-LM flag given, if any.
    pub fn mlx_lm_flag(&self) -> Option<&'static str> {
        [
            (self.kv_bits.is_some(), "--kv-bits"),
            (self.kv_group_size.is_some(), "--kv-group-size"),
            (self.quantized_kv_start.is_some(), "--quantized-kv-start"),
            (self.max_kv_size.is_some(), "--max-kv-size"),
        ]
        .into_iter()
        .find_map(|(given, f)| given.then_some(f))
    }

    /// The overrides as the edits they make, each with the flag that asked for it, in the
    /// order they apply. Values are parsed here (a bad one names its flag); the tier named by
    /// `--tier` is looked up on the scenario's machine.
    pub fn edits(&self, s: &Scenario) -> Result<Vec<(&'static str, Edit)>, BuildError> {
        let mut v: Vec<(&'static str, Edit)> = Vec::new();
        if let Some(r) = self.runtime()? {
            v.push(("--runtime", Edit::Runtime(r)));
        }
        v.extend(self.mlx_lm_edits()?);
        if let Some(n) = self.context {
            v.push(("--context", Edit::Context(n)));
        }
        if let Some(n) = self.sequences {
            v.push(("--sequences", Edit::Sequences(n)));
        }
        if let Some(t) = &self.cache_type_k {
            v.push((
                "--cache-type-k",
                Edit::CacheTypeK(cache_type("--cache-type-k", t)?),
            ));
        }
        if let Some(t) = &self.cache_type_v {
            v.push((
                "--cache-type-v",
                Edit::CacheTypeV(cache_type("--cache-type-v", t)?),
            ));
        }
        if let Some(a) = &self.overhead {
            let b = units::parse_bytes(a).map_err(|e| flag("--overhead", e.0))?;
            v.push(("--overhead", Edit::Overhead(b)));
        }
        if let Some(n) = self.gpu_layers {
            v.push(("--gpu-layers", Edit::GpuLayers(Some(n))));
        }
        if let Some(n) = &self.ngl {
            let g = crate::core::placement::GpuLayers::parse(n).map_err(|e| flag("-ngl", e.0))?;
            v.push(("-ngl", Edit::Ngl(g)));
        }
        if let Some(m) = &self.split_mode {
            let mode = edit::parse_split_mode(m)
                .ok_or_else(|| flag("-sm", format!("\"{m}\": expected none, layer or row")))?;
            if mode == crate::core::placement::SplitMode::Row {
                return Err(flag(
                    "-sm",
                    "row: row split buffers are not modelled, and llama.cpp's -fit refuses -sm row too (use layer or none)",
                ));
            }
            v.push(("-sm", Edit::SplitMode(mode)));
        }
        if let Some(g) = self.main_gpu {
            v.push(("-mg", Edit::MainGpu(g)));
        }
        if !self.override_tensor.is_empty() {
            for item in &self.override_tensor {
                edit::check_override_syntax(item).map_err(|e| flag("-ot", e))?;
            }
            v.push(("-ot", Edit::OverrideTensor(self.override_tensor.clone())));
        }
        if self.cpu_moe {
            v.push(("--cpu-moe", Edit::CpuMoe(true)));
        }
        if let Some(n) = self.n_cpu_moe {
            v.push(("--n-cpu-moe", Edit::NCpuMoe(n)));
        }
        if let Some(n) = self.n_cpu_ffn {
            v.push(("--n-cpu-ffn", Edit::NCpuFfn(n)));
        }
        if let Some(f) = self.fit {
            v.push(("-fit", Edit::Fit(f)));
        }
        if let Some(t) = &self.fit_target {
            v.push(("-fitt", Edit::FitTarget(t.clone())));
        }
        if let Some(c) = self.fit_ctx {
            if c == 0 {
                return Err(flag("-fitc", "must be at least 1 token"));
            }
            v.push(("-fitc", Edit::FitCtx(c)));
        }
        if let Some(r) = &self.rpc {
            if let Some(bad) = r.iter().find(|e| !edit::valid_endpoint(e)) {
                return Err(flag("--rpc", format!("\"{bad}\": expected host:port")));
            }
            v.push(("--rpc", Edit::Rpc(r.clone())));
        }
        if let Some(n) = self.prompt_rows {
            v.push(("--prompt-rows", Edit::PromptRows(n)));
        }
        if let Some(f) = self.flash_attn {
            v.push(("--flash-attn", Edit::FlashAttn(f)));
        }
        if let Some(u) = self.ubatch {
            v.push(("--ubatch", Edit::Ubatch(u)));
        }
        if self.kv_unified {
            v.push(("--kv-unified", Edit::KvUnified(true)));
        }
        if self.swa_full {
            v.push(("--swa-full", Edit::SwaFull(true)));
        }
        if self.no_kv_offload {
            v.push(("--no-kv-offload", Edit::NoKvOffload(true)));
        }
        if let Some(t) = &self.tensor_split {
            v.push(("--tensor-split", Edit::TensorSplit(Some(t.clone()))));
        }
        if let Some(p) = &self.compute_path {
            v.push(("--compute-path", Edit::ComputePath(p.clone())));
        }
        if let Some(p) = &self.mmproj {
            v.push((
                "--mmproj",
                Edit::ExtraFile(extra_file(WeightKind::Mmproj, p)?),
            ));
        }
        if let Some(p) = &self.draft {
            v.push((
                "--draft",
                Edit::ExtraFile(extra_file(WeightKind::Draft, p)?),
            ));
        }
        if let Some(f) = &self.device_free {
            let bytes = units::parse_bytes(f).map_err(|e| flag("--device-free", e.0))?;
            let tier = match &self.tier {
                Some(_) => self.tier_index(s)?,
                None => s
                    .machine
                    .tiers
                    .iter()
                    .position(|t| t.is_device())
                    .ok_or_else(|| {
                        flag(
                            "--device-free",
                            format!(
                                "machine \"{}\" has no accelerator or unified tier",
                                s.machine.id
                            ),
                        )
                    })?,
            };
            v.push(("--device-free", Edit::DeviceFree { tier, bytes }));
        }
        if self.memory.is_some() || self.bandwidth.is_some() {
            let tier = self.tier_index(s)?;
            if let Some(m) = &self.memory {
                let bytes = units::parse_bytes(m).map_err(|e| flag("--memory", e.0))?;
                v.push(("--memory", Edit::Capacity { tier, bytes }));
            }
            if let Some(b) = &self.bandwidth {
                let rate = units::parse_bandwidth(b).map_err(|e| flag("--bandwidth", e.0))?;
                v.push(("--bandwidth", Edit::Bandwidth { tier, rate }));
            }
        }
        Ok(v)
    }

    /// The tier `--tier` names on the scenario's machine (the first without it).
    pub fn tier_index(&self, s: &Scenario) -> Result<usize, BuildError> {
        let Some(name) = &self.tier else {
            return Ok(0);
        };
        s.machine
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
            })
    }
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
    /// The GGUF's tensor data ends short of its offsets (a partial download): `inspect`'s line.
    #[error("{0}")]
    Incomplete(String),
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

pub use crate::profile::load::USER_ARTIFACT;

/// Parse a cache type name for a flag.
pub fn cache_type(flag_name: &'static str, s: &str) -> Result<CacheType, BuildError> {
    CacheType::parse(s).ok_or_else(|| {
        flag(
            flag_name,
            format!(
                "unknown cache type \"{s}\" (use {})",
                CacheType::names_list()
            ),
        )
    })
}

/// The scenario the profiles the options name describe, before the artifact and the option
/// overrides are applied, and the scenario profile it started from.
pub fn profile_scenario(
    cat: &Catalog,
    o: &ScenarioOptions,
) -> Result<(Scenario, ScenarioFile), BuildError> {
    let profile = cat.scenario(o.scenario.as_deref().unwrap_or("default"))?;
    let mut file = profile.clone();
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
        let s = load::scenario(&cat2, &file).map_err(|e| in_scenario(cat, o, e))?;
        return Ok((s, profile));
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
    let s = load::scenario(cat, &file).map_err(|e| in_scenario(cat, o, e))?;
    Ok((s, profile))
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

/// A GGUF error as one line that names the file (`gguf::error_line`).
pub fn gguf_message(path: &Path, e: &GgufError) -> String {
    gguf::error_line(path, e)
}

/// A file the runtime loads beside the model (projector, draft): its exact size from the OS.
pub fn extra_file(kind: WeightKind, path: &Path) -> Result<WeightFile, BuildError> {
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
        kind,
        file: name,
        bytes: Sourced::new(meta.len(), Provenance::File, path.display().to_string()),
    })
}

/// Apply the option overrides to `s`, each as the [`Edit`] it makes (a what-if: `compare`
/// applies the same overrides to every machine it compares). `s` is unchanged on an error.
pub fn apply(s: &mut Scenario, o: &ScenarioOptions) -> Result<(), BuildError> {
    let mut next = s.clone();
    for (name, e) in o.edits(s)? {
        next = edit::applied(&next, std::slice::from_ref(&e))
            .map_err(|err| flag(name, err.to_string()))?;
    }
    next.validate().map_err(|e| flag("scenario", e.0))?;
    *s = next;
    Ok(())
}
