//! The TOML profile files as written on disk (kebab-case, unknown keys rejected). Values with
//! units and provenance labels are checked while parsing, so errors carry their line and column.

use crate::core::cache::CacheType;
use crate::core::units::{self, Provenance};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A provenance label in a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProvenanceLabel(pub Provenance);

impl<'de> Deserialize<'de> for ProvenanceLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Provenance::parse(&s).map(ProvenanceLabel).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown provenance \"{s}\" (use spec, measured, file, derived or user)"
            ))
        })
    }
}

impl Serialize for ProvenanceLabel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.label())
    }
}

/// A number written as an integer, a float or a string with units.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum RawNumber {
    /// A whole number.
    Int(i64),
    /// A float (`273e9`).
    Float(f64),
    /// Text with units (`"273 GB/s"`).
    Text(String),
}

impl RawNumber {
    fn as_text(&self) -> String {
        match self {
            RawNumber::Int(i) => i.to_string(),
            RawNumber::Float(f) => format!("{f:e}"),
            RawNumber::Text(s) => s.clone(),
        }
    }
}

macro_rules! unit_value {
    ($name:ident, $inner:ty, $parse:path, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            /// The parsed value.
            pub value: $inner,
            /// As written.
            pub raw: RawNumber,
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = RawNumber::deserialize(d)?;
                if let RawNumber::Int(i) = raw
                    && i < 0
                {
                    return Err(serde::de::Error::custom(format!("\"{i}\" is negative")));
                }
                let value = $parse(&raw.as_text()).map_err(serde::de::Error::custom)?;
                Ok($name { value, raw })
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.raw.serialize(s)
            }
        }
    };
}

unit_value!(
    SizeValue,
    u64,
    units::parse_bytes,
    "A size in bytes (`\"48 GiB\"` or an integer)."
);
unit_value!(
    RateValue,
    units::BytesPerSec,
    units::parse_bandwidth,
    "A bandwidth (`\"273 GB/s\"` or bytes/s)."
);
unit_value!(
    FlopsValue,
    units::FlopPerSec,
    units::parse_flops,
    "A compute rate (`\"165.2 TFLOP/s\"` or FLOP/s)."
);

/// A figure with provenance and source.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Figure<V> {
    /// The value.
    pub value: V,
    /// Where it comes from.
    pub provenance: ProvenanceLabel,
    /// Citation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Date of a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Method of a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

impl<V: Clone> Figure<V> {
    /// The figure as a core input: value, provenance and citation.
    pub fn sourced(&self) -> crate::core::units::Sourced<V> {
        crate::core::units::Sourced::new(self.value.clone(), self.provenance.0, self.citation())
    }
}

impl<V> Figure<V> {
    /// The citation with date and method folded in.
    pub fn citation(&self) -> String {
        let mut s = self.source.clone();
        if let Some(d) = &self.date {
            s = if s.is_empty() {
                d.clone()
            } else {
                format!("{s} ({d})")
            };
        }
        if let Some(m) = &self.method {
            s = if s.is_empty() {
                m.clone()
            } else {
                format!("{s}; method: {m}")
            };
        }
        s
    }
}

/// A memory tier.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TierFile {
    /// Name.
    pub name: String,
    /// Kind: accelerator, unified, host, ssd.
    pub kind: TierKindLabel,
    /// Capacity.
    pub capacity: Figure<SizeValue>,
    /// Stated bandwidth.
    pub bandwidth: Figure<RateValue>,
    /// Measured sustained bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_bandwidth: Option<Figure<RateValue>>,
    /// The backend llama.cpp runs this accelerator or unified tier with (cuda, rocm, metal,
    /// vulkan, rpc). Absent: cuda for an accelerator, metal for unified memory (derived).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendLabel>,
    /// The memory that backend reports free to llama.cpp. Absent: the whole capacity (derived).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<Figure<SizeValue>>,
    /// `host:port` of the RPC server (backend rpc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The largest tensor an op on the device may read or write (Vulkan's
    /// `maxStorageBufferRange` without 64-bit shader indexing): larger weights stay in host
    /// memory, and ops with larger activations (a layer's KQ scores, a dense FFN's
    /// intermediates) run on the host. Absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tensor: Option<Figure<SizeValue>>,
}

/// A backend label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackendLabel(pub crate::core::placement::Backend);

impl<'de> Deserialize<'de> for BackendLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::core::placement::Backend::parse(&s)
            .map(BackendLabel)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown backend \"{s}\" (use cuda, rocm, metal, vulkan or rpc)"
                ))
            })
    }
}

impl Serialize for BackendLabel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.label())
    }
}

/// A tier kind label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierKindLabel(pub crate::core::scenario::TierKind);

impl<'de> Deserialize<'de> for TierKindLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::core::scenario::TierKind::parse(&s)
            .map(TierKindLabel)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown tier kind \"{s}\" (use accelerator, unified, host or ssd)"
                ))
            })
    }
}

impl Serialize for TierKindLabel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.label())
    }
}

/// A compute rate.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ComputeFile {
    /// Path name.
    pub path: String,
    /// Tier whose processor runs it.
    pub tier: String,
    /// Rate.
    pub rate: Figure<FlopsValue>,
}

/// A machine profile.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MachineFile {
    /// Id (file name without `.toml`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Free notes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// Tiers.
    #[serde(rename = "tier")]
    pub tiers: Vec<TierFile>,
    /// Compute rates.
    #[serde(default, rename = "compute", skip_serializing_if = "Vec::is_empty")]
    pub compute: Vec<ComputeFile>,
    /// Network links between the machine's hosts (llama.cpp RPC).
    #[serde(default, rename = "link", skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkFile>,
}

/// A network link between hosts of one machine (llama.cpp RPC: `rpc-server` on the far host).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LinkFile {
    /// Name ("10gbe", "thunderbolt").
    pub name: String,
    /// The tiers it joins to the head host (rpc tiers reached over it).
    pub tiers: Vec<String>,
    /// Bandwidth one way.
    pub bandwidth: Figure<RateValue>,
    /// Latency of one request and its reply (round trip), microseconds.
    pub latency_us: Figure<f64>,
}

/// KV heads: one number or one per layer.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum HeadsFile {
    /// Same for every layer.
    Uniform(u32),
    /// Per layer.
    List(Vec<u32>),
}

/// MLA figures.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MlaFile {
    /// kv_lora_rank.
    pub kv_lora_rank: u32,
    /// RoPE dims.
    pub rope_dim: u32,
    /// Per-head key size after decompression.
    pub key_length_mla: u32,
    /// Per-head value size after decompression.
    pub value_length_mla: u32,
}

/// MoE figures.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MoeFile {
    /// Routed experts.
    pub experts: u32,
    /// Experts used per token.
    pub experts_used: u32,
    /// Shared experts.
    #[serde(default)]
    pub shared_experts: u32,
    /// Width of one routed expert's FFN (config `moe_intermediate_size`; GGUF
    /// `expert_feed_forward_length`), for the compute buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_intermediate_size: Option<u64>,
}

/// SSM figures.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SsmFile {
    /// d_conv.
    pub d_conv: u64,
    /// d_inner.
    pub d_inner: u64,
    /// d_state.
    pub d_state: u64,
    /// n_group.
    #[serde(default = "one")]
    pub n_group: u64,
}

fn one() -> u64 {
    1
}

/// A known artifact of a model.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ArtifactFile {
    /// Id.
    pub id: String,
    /// File name.
    pub file: String,
    /// Repository.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// Revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Exact bytes.
    pub bytes: u64,
    /// SHA-256, lower-case hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Quantization preset name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub quantization: String,
    /// Citation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// A model profile.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModelFile {
    /// Id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// llama.cpp architecture name.
    pub architecture: String,
    /// Repository.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// Revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Citation of the figures.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Advertised total parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Figure<u64>>,
    /// Advertised active parameters (MoE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_parameters: Option<Figure<u64>>,
    /// Repeating layers.
    pub layers: u32,
    /// Query heads.
    pub attention_heads: u32,
    /// KV heads.
    pub kv_heads: HeadsFile,
    /// Head dim (key = value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_dim: Option<u32>,
    /// Key length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_length: Option<u32>,
    /// Value length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_length: Option<u32>,
    /// Hidden size.
    pub hidden_size: u64,
    /// FFN size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermediate_size: Option<u64>,
    /// Vocabulary.
    pub vocab_size: u64,
    /// Native context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_context: Option<u64>,
    /// Tied embeddings.
    #[serde(default)]
    pub tied_embeddings: bool,
    /// Sliding window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<u64>,
    /// Explicit sliding pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_pattern: Option<Vec<bool>>,
    /// Chunk size (llama4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<u64>,
    /// Recurrent layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrent_layers: Option<Vec<u32>>,
    /// MLA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mla: Option<MlaFile>,
    /// MoE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeFile>,
    /// SSM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssm: Option<SsmFile>,
    /// Known artifacts.
    #[serde(default, rename = "artifact", skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<ArtifactFile>,
    /// Public GGUF repositories whose header can be read over HTTP (`--gguf owner/repo:QUANT`).
    #[serde(default, rename = "gguf-repo", skip_serializing_if = "Vec::is_empty")]
    pub gguf_repos: Vec<GgufRepoFile>,
}

/// A public GGUF repository for a model without a pinned artifact.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GgufRepoFile {
    /// What `--gguf` takes: `owner/repo:QUANT` or `hf://owner/repo/FILE.gguf`.
    pub spec: String,
    /// Where the repository and file name were seen (citation).
    pub source: String,
}

/// A cache type label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheTypeLabel(pub CacheType);

impl<'de> Deserialize<'de> for CacheTypeLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CacheType::parse(&s).map(CacheTypeLabel).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown cache type \"{s}\" (use {})",
                CacheType::names_list()
            ))
        })
    }
}

impl Serialize for CacheTypeLabel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name())
    }
}

/// An extra file the scenario loads (projector, draft model).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ExtraFile {
    /// "mmproj" or "draft".
    pub kind: String,
    /// File name.
    pub file: String,
    /// Exact bytes.
    pub bytes: u64,
}

/// A scenario profile.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ScenarioFile {
    /// Id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Model id.
    pub model: String,
    /// Artifact id of that model.
    pub artifact: String,
    /// Machine id.
    pub machine: String,
    /// Retained tokens per sequence.
    pub context: u64,
    /// Sequences.
    #[serde(default = "one")]
    pub sequences: u64,
    /// K cache type.
    #[serde(default = "f16")]
    pub cache_type_k: CacheTypeLabel,
    /// V cache type.
    #[serde(default = "f16")]
    pub cache_type_v: CacheTypeLabel,
    /// Flash attention.
    #[serde(default = "yes")]
    pub flash_attn: bool,
    /// n_ubatch.
    #[serde(default = "ubatch")]
    pub ubatch: u64,
    /// Unified KV.
    #[serde(default)]
    pub kv_unified: bool,
    /// Full-size SWA cache.
    #[serde(default)]
    pub swa_full: bool,
    /// Other allocations A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<SizeValue>,
    /// `-ngl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_layers: Option<u32>,
    /// `--tensor-split`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_split: Option<Vec<f64>>,
    /// `-nkvo`.
    #[serde(default)]
    pub no_kv_offload: bool,
    /// `-ngl all` (with `gpu-layers` unset: all layers, counted as set by the user).
    #[serde(default, skip_serializing_if = "is_false")]
    pub gpu_layers_all: bool,
    /// `-sm none|layer|row`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_mode: Option<String>,
    /// `-mg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_gpu: Option<u32>,
    /// `-ot PATTERN=BUFFER_TYPE` items in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub override_tensor: Vec<String>,
    /// `--cpu-moe`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cpu_moe: bool,
    /// `--n-cpu-moe N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_cpu_moe: Option<u32>,
    /// `--n-cpu-ffn N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_cpu_ffn: Option<u32>,
    /// `-fit on|off` (absent: on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<bool>,
    /// `-fitt`, MiB per device (one value, or one per device).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fit_target_mib: Vec<u64>,
    /// `-fitc`, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_ctx: Option<u32>,
    /// Prompt rows S.
    #[serde(default = "prompt_rows")]
    pub prompt_rows: u64,
    /// Compute path.
    #[serde(default = "fp16_path")]
    pub compute_path: String,
    /// Extra files (projector, draft).
    #[serde(default, rename = "extra-file", skip_serializing_if = "Vec::is_empty")]
    pub extra_files: Vec<ExtraFile>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn f16() -> CacheTypeLabel {
    CacheTypeLabel(CacheType::F16)
}
fn yes() -> bool {
    true
}
fn ubatch() -> u64 {
    512
}
fn prompt_rows() -> u64 {
    512
}
fn fp16_path() -> String {
    "fp16".into()
}
