//! Ollama's model store: manifests under `manifests/<host>/<namespace>/<name>/<tag>` name the
//! model layer (`application/vnd.ollama.image.model`) and projector layer by digest; the
//! blobs are `blobs/sha256-<hex>`. The store is `$OLLAMA_MODELS` or `~/.ollama/models`.
//!
//! Ollama's plan: Ollama runs llama-server and leaves `-ngl` to llama.cpp's `-fit`, so an
//! `ollama:NAME` model is placed as llama.cpp places it with Ollama's own `-c` (its default
//! context by total VRAM, or the Modelfile's `num_ctx`) and `-ngl` only when the Modelfile sets
//! `num_gpu`: [`read_params`] reads the Modelfile's parameters from the manifest's params layer,
//! [`plan`] applies Ollama's rules, [`reproduce`] gives the parameters that make Ollama use a
//! plan. Rules from ollama/ollama at commit fb30760996871fa9460115c753afd2c60d4ab0f7.
//! Depends on: core, infile, sanitize.

use std::path::{Path, PathBuf};

use crate::core::placement::{FitSettings, GpuLayers, PlacementSettings};

/// The registry whose `library/` namespace Ollama names without a prefix.
pub const DEFAULT_REGISTRY: &str = "registry.ollama.ai";

/// Manifests larger than this are not Ollama's (they are a few KiB).
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// A params layer larger than this is not Ollama's (a Modelfile's parameters: a few hundred
/// bytes).
const MAX_PARAMS_BYTES: u64 = 1024 * 1024;

/// The media type of a manifest's params layer (the Modelfile's `PARAMETER` lines as JSON).
pub const PARAMS_MEDIA_TYPE: &str = "application/vnd.ollama.image.params";

/// Ollama's store folder: `$OLLAMA_MODELS`, else `~/.ollama/models`.
pub fn store() -> Option<PathBuf> {
    crate::infile::env_dir("OLLAMA_MODELS")
        .or_else(|| crate::infile::home().map(|h| h.join(".ollama").join("models")))
}

/// One model of the store.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaModel {
    /// The name as `ollama list` shows it (`qwen3:32b`, `user/m:tag`, `hf.co/o/r:Q4_K_M`).
    pub name: String,
    /// The model layer's blob.
    pub model: PathBuf,
    /// The projector layer's blob, when there is one.
    pub projector: Option<PathBuf>,
    /// The params layer's blob (the Modelfile's parameters), when there is one.
    pub params: Option<PathBuf>,
    /// The manifest.
    pub manifest: PathBuf,
}

/// Why an Ollama model cannot be opened.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OllamaError {
    /// No store folder.
    #[error("ollama:{name}: no Ollama store (set OLLAMA_MODELS or HOME)")]
    NoStore {
        /// The name.
        name: String,
    },
    /// No manifest for the name.
    #[error("ollama:{name}: no manifest \"{}\"{}", manifest.display(), have(known))]
    NotFound {
        /// The name.
        name: String,
        /// Where it was looked for.
        manifest: PathBuf,
        /// Names the store has.
        known: Vec<String>,
    },
    /// A name that would leave the store's manifests folder.
    #[error("ollama:{name}: not a model name ({why})")]
    BadName {
        /// The name (sanitised).
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A manifest that is not JSON or has no model layer.
    #[error("ollama manifest \"{}\": {detail}", manifest.display())]
    BadManifest {
        /// The manifest.
        manifest: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A params layer that is not a JSON object or whose `num_ctx` / `num_gpu` is not a whole
    /// number.
    #[error("ollama params layer \"{}\": {detail}", blob.display())]
    BadParams {
        /// The params blob.
        blob: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The blob a manifest names is missing.
    #[error("ollama manifest \"{}\" names blob \"{}\", which is missing (an interrupted pull? run `ollama pull` again)", manifest.display(), blob.display())]
    MissingBlob {
        /// The manifest.
        manifest: PathBuf,
        /// The blob path.
        blob: PathBuf,
    },
}

fn have(known: &[String]) -> String {
    if known.is_empty() {
        "; the store has no models".into()
    } else {
        let shown: Vec<&str> = known.iter().take(12).map(String::as_str).collect();
        format!("; the store has: {}", shown.join(", "))
    }
}

/// The manifest path of `name[:tag]` (tag `latest` when absent).
pub fn manifest_path(store: &Path, name: &str) -> PathBuf {
    let (n, tag) = match name.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (name, "latest"),
    };
    let parts: Vec<&str> = n.split('/').collect();
    let (host, ns, model) = match parts.as_slice() {
        [m] => (DEFAULT_REGISTRY, "library".to_string(), *m),
        [ns, m] => (DEFAULT_REGISTRY, ns.to_string(), *m),
        [host, rest @ .., m] => (*host, rest.join("/"), *m),
        [] => (DEFAULT_REGISTRY, "library".to_string(), ""),
    };
    let mut p = store.join("manifests").join(host);
    for seg in ns.split('/') {
        p = p.join(seg);
    }
    p.join(model).join(tag)
}

/// The name Ollama shows for a manifest at `manifests/<host>/<ns…>/<name>/<tag>`.
pub fn display_name(manifests: &Path, manifest: &Path) -> Option<String> {
    let rel = manifest.strip_prefix(manifests).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let [host, middle @ .., model, tag] = parts.as_slice() else {
        return None;
    };
    let ns = middle.join("/");
    let base = if host == DEFAULT_REGISTRY && ns == "library" {
        model.clone()
    } else if host == DEFAULT_REGISTRY {
        format!("{ns}/{model}")
    } else {
        format!("{host}/{ns}/{model}")
    };
    Some(format!("{base}:{tag}"))
}

fn blob_path(store: &Path, digest: &str) -> Option<PathBuf> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| store.join("blobs").join(format!("sha256-{hex}")))
}

/// Read one manifest: its model and projector blobs (checked to exist).
pub fn read_manifest(
    store: &Path,
    manifest: &Path,
    name: &str,
) -> Result<OllamaModel, OllamaError> {
    let bad = |detail: String| OllamaError::BadManifest {
        manifest: manifest.to_path_buf(),
        detail,
    };
    let text = crate::infile::read_bytes(manifest, MAX_MANIFEST_BYTES, "an Ollama manifest")
        .map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let layers = v
        .get("layers")
        .and_then(|l| l.as_array())
        .ok_or_else(|| bad("no \"layers\" list".into()))?;
    let layer = |kind: &str| {
        layers
            .iter()
            .find(|l| l.get("mediaType").and_then(|m| m.as_str()) == Some(kind))
            .and_then(|l| l.get("digest").and_then(|d| d.as_str()))
            .map(str::to_string)
    };
    let digest = layer("application/vnd.ollama.image.model")
        .ok_or_else(|| bad("no layer of type application/vnd.ollama.image.model".into()))?;
    let model = blob_path(store, &digest).ok_or_else(|| {
        bad(format!(
            "model layer digest \"{digest}\" is not sha256:<64 hex>"
        ))
    })?;
    if !model.is_file() {
        return Err(OllamaError::MissingBlob {
            manifest: manifest.to_path_buf(),
            blob: model,
        });
    }
    let projector = layer("application/vnd.ollama.image.projector")
        .and_then(|d| blob_path(store, &d))
        .filter(|p| p.is_file());
    let params = match layer(PARAMS_MEDIA_TYPE) {
        None => None,
        Some(d) => {
            let p = blob_path(store, &d).ok_or_else(|| {
                bad(format!(
                    "params layer digest \"{d}\" is not sha256:<64 hex>"
                ))
            })?;
            if !p.is_file() {
                return Err(OllamaError::MissingBlob {
                    manifest: manifest.to_path_buf(),
                    blob: p,
                });
            }
            Some(p)
        }
    };
    Ok(OllamaModel {
        name: name.to_string(),
        model,
        projector,
        params,
        manifest: manifest.to_path_buf(),
    })
}

/// Every manifest file under `store/manifests` (at most 6 levels deep).
pub fn manifests(store: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    crate::infile::walk(&store.join("manifests"), 6, &mut |p| {
        out.push(p.to_path_buf())
    });
    out.sort();
    out
}

/// Every model of the store; manifests that cannot be used come back as errors.
pub fn list(store: &Path) -> Vec<Result<OllamaModel, OllamaError>> {
    let root = store.join("manifests");
    manifests(store)
        .into_iter()
        .filter_map(|m| {
            let name = display_name(&root, &m)?;
            Some(read_manifest(store, &m, &name))
        })
        .collect()
}

/// The model blob of `name[:tag]` in the store.
pub fn resolve(name: &str) -> Result<PathBuf, OllamaError> {
    let store = store().ok_or_else(|| OllamaError::NoStore {
        name: name.to_string(),
    })?;
    resolve_in(&store, name).map(|m| m.model)
}

/// `resolve` in a given store. A name with a `.`, `..` or empty segment, an absolute path or
/// a backslash is refused: it would reach a manifest outside the store.
pub fn resolve_in(store: &Path, name: &str) -> Result<OllamaModel, OllamaError> {
    let (n, tag) = match name.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (name, "latest"),
    };
    if let Err(why) = crate::infile::confined(n)
        .map_err(|e| e.to_string())
        .and_then(|_| {
            if tag.is_empty() || tag == "." || tag == ".." || tag.contains('\\') {
                Err("a tag must be one plain name".to_string())
            } else {
                Ok(())
            }
        })
    {
        return Err(OllamaError::BadName {
            name: crate::sanitize::text(&name.chars().take(200).collect::<String>()).into_owned(),
            why,
        });
    }
    let manifest = manifest_path(store, name);
    if !manifest.is_file() {
        let root = store.join("manifests");
        let known = manifests(store)
            .iter()
            .filter_map(|m| display_name(&root, m))
            .collect();
        return Err(OllamaError::NotFound {
            name: name.to_string(),
            manifest,
            known,
        });
    }
    read_manifest(store, &manifest, name)
}

/// The Modelfile parameters that decide Ollama's placement (`PARAMETER num_ctx N`,
/// `PARAMETER num_gpu N`); None where the Modelfile leaves them unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelfileParams {
    /// `num_ctx`: the context per request (llama-server's `-c` is this × parallel requests).
    pub num_ctx: Option<u64>,
    /// `num_gpu`: `-ngl` (0 = CPU only; negative = unset, `-fit` decides).
    pub num_gpu: Option<i64>,
}

/// The Modelfile parameters of a model: its params layer (a JSON object, read bounded), or
/// none set when the manifest has no params layer. Other parameters (stop, temperature, …)
/// are ignored.
pub fn read_params(m: &OllamaModel) -> Result<ModelfileParams, OllamaError> {
    let Some(blob) = &m.params else {
        return Ok(ModelfileParams::default());
    };
    let bad = |detail: String| OllamaError::BadParams {
        blob: blob.clone(),
        detail,
    };
    let text = crate::infile::read_bytes(blob, MAX_PARAMS_BYTES, "an Ollama params layer")
        .map_err(|e| bad(e.to_string()))?;
    parse_params(&text).map_err(bad)
}

/// The Modelfile parameters in a params layer's bytes.
pub fn parse_params(text: &[u8]) -> Result<ModelfileParams, String> {
    let v: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| format!("not JSON ({e})"))?;
    let o = v
        .as_object()
        .ok_or_else(|| "not a JSON object of parameters".to_string())?;
    let whole = |key: &str| -> Result<Option<i64>, String> {
        match o.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(x) => x
                .as_i64()
                .or_else(|| {
                    x.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                })
                .map(Some)
                .ok_or_else(|| format!("{key} is {x}, not a whole number")),
        }
    };
    let num_ctx = match whole("num_ctx")? {
        None => None,
        Some(n) if n >= 0 => Some(n as u64),
        Some(n) => return Err(format!("num_ctx is {n}, below 0")),
    };
    Ok(ModelfileParams {
        num_ctx,
        num_gpu: whole("num_gpu")?,
    })
}

/// Ollama's default context by total VRAM, largest first: (at least this many bytes, tokens).
/// `server/routes.go` lines 2043-2057 at fb30760: `totalVRAM` sums `TotalMemory −
/// OLLAMA_GPU_OVERHEAD` over the GPUs; ≥ 47 GiB → 262,144, ≥ 23 GiB → 32,768, else 4,096
/// ("slightly lower thresholds (47/23 GiB vs. 48/24 GiB)").
pub const DEFAULT_CONTEXT_BY_VRAM: [(u64, u64); 2] = [(47 << 30, 262_144), (23 << 30, 32_768)];

/// Ollama's default context below the lowest VRAM threshold.
pub const DEFAULT_CONTEXT_MIN: u64 = 4096;

/// Ollama's smallest context (`server/sched.go` lines 170-172: below 4 → 4).
pub const MIN_CONTEXT: u64 = 4;

/// The context of a model with a projector at least (`server/sched.go` lines 174-177).
pub const MIN_VISION_CONTEXT: u64 = 2048;

/// The total VRAM Ollama compares with its thresholds: Σ over GPUs of total − overhead
/// (`OLLAMA_GPU_OVERHEAD`, bytes, default 0; `envconfig/config.go` line 303), bytes.
pub fn total_vram(gpu_totals: &[u64], overhead: u64) -> u64 {
    gpu_totals
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.saturating_sub(overhead)))
}

/// Ollama's default context for a total VRAM in bytes (no Modelfile or environment setting).
pub fn default_context(total_vram: u64) -> u64 {
    DEFAULT_CONTEXT_BY_VRAM
        .iter()
        .find(|(at, _)| total_vram >= *at)
        .map_or(DEFAULT_CONTEXT_MIN, |(_, n)| *n)
}

/// What decided Ollama's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextSource {
    /// The Modelfile's `num_ctx`.
    Modelfile,
    /// `OLLAMA_CONTEXT_LENGTH`.
    Environment,
    /// The default by total VRAM.
    VramDefault,
}

/// The inputs of Ollama's plan beside the Modelfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OllamaSettings {
    /// Total VRAM as [`total_vram`] computes it, bytes.
    pub total_vram: u64,
    /// `OLLAMA_CONTEXT_LENGTH` when set and not 0 (`envconfig/config.go` line 230).
    pub context_length: Option<u64>,
    /// `OLLAMA_NUM_PARALLEL` (default 1, `envconfig/config.go` line 275).
    pub num_parallel: u64,
    /// The model has a projector (vision): at least 2048 tokens.
    pub vision: bool,
    /// The model's trained context (`<arch>.context_length`; 0 = unknown).
    pub n_ctx_train: u64,
}

/// The llama-server arguments Ollama starts a model with, as far as placement goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OllamaPlan {
    /// The context per request after Ollama's clamps, tokens.
    pub num_ctx: u64,
    /// What decided it.
    pub context_source: ContextSource,
    /// llama-server's `-c`: num_ctx × parallel requests (`llm/llama_server.go` line 375).
    /// Ollama always passes `-c`, so `-fit` keeps this context and fits only the layers.
    pub llama_ctx: u64,
    /// llama-server's `-np`.
    pub parallel: u64,
    /// `-ngl`: Auto (not passed; `-fit` decides) unless the Modelfile's `num_gpu` is ≥ 0
    /// (`llm/llama_server.go` lines 402-410).
    pub gpu_layers: GpuLayers,
}

/// Ollama's plan for a model on a machine: the context from the Modelfile's `num_ctx`, else
/// `OLLAMA_CONTEXT_LENGTH`, else the VRAM default (`api/types.go` line 1115,
/// `server/routes.go` lines 131-133, then the Modelfile's options over them); at least 4 (2048
/// with a projector, `server/sched.go` 170-177); at most the trained context
/// (`llm/server.go` 111-116); `-ngl` from `num_gpu`. The placement then is llama.cpp's `-fit`
/// at `-c llama_ctx` with that `-ngl` (a set `-ngl` turns `-fit`'s layer search off).
pub fn plan(params: &ModelfileParams, s: &OllamaSettings) -> OllamaPlan {
    let (requested, source) = match (params.num_ctx, s.context_length.filter(|n| *n > 0)) {
        (Some(n), _) => (n, ContextSource::Modelfile),
        (None, Some(n)) => (n, ContextSource::Environment),
        (None, None) => (default_context(s.total_vram), ContextSource::VramDefault),
    };
    let mut n = requested.max(MIN_CONTEXT);
    if s.vision {
        n = n.max(MIN_VISION_CONTEXT);
    }
    if s.n_ctx_train > 0 {
        n = n.min(s.n_ctx_train);
    }
    let parallel = s.num_parallel.max(1);
    let gpu_layers = match params.num_gpu {
        Some(g) if g >= 0 => GpuLayers::Count(u32::try_from(g).unwrap_or(u32::MAX)),
        _ => GpuLayers::Auto,
    };
    OllamaPlan {
        num_ctx: n,
        context_source: source,
        llama_ctx: n.saturating_mul(parallel),
        parallel,
        gpu_layers,
    }
}

impl OllamaPlan {
    /// llama.cpp's placement inputs under this plan: `-ngl` into `settings`, `-c` and `-np`
    /// into `fit` (a set `-c`: `-fit` keeps the context and fits the layers). Everything
    /// else (`-fitt`, the devices) stays as the caller set it.
    pub fn apply(&self, settings: &mut PlacementSettings, fit: &mut FitSettings) {
        settings.gpu_layers = self.gpu_layers;
        fit.n_ctx = Some(u32::try_from(self.llama_ctx).unwrap_or(u32::MAX));
        fit.n_seq = u32::try_from(self.parallel).unwrap_or(u32::MAX);
    }
}

/// The Ollama parameters that make Ollama start llama-server with a plan's `-c` and `-ngl`
/// (`num_ctx` = the context per request, `-c` / parallel requests; `num_gpu` only when the
/// plan sets `-ngl`: with it unset `-fit` makes the same choice of layers at that context;
/// `all` as `num_gpu 999`, every layer). Each as `ollama run`'s `/set parameter` line; a
/// Modelfile writes `PARAMETER` instead.
pub fn reproduce(llama_ctx: u64, parallel: u64, gpu_layers: GpuLayers) -> Vec<String> {
    let mut out = vec![format!(
        "/set parameter num_ctx {}",
        llama_ctx / parallel.max(1)
    )];
    match gpu_layers {
        GpuLayers::Count(n) => out.push(format!("/set parameter num_gpu {n}")),
        GpuLayers::All => out.push("/set parameter num_gpu 999".into()),
        GpuLayers::Auto => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let s = Path::new("/s");
        assert_eq!(
            manifest_path(s, "qwen3:32b"),
            Path::new("/s/manifests/registry.ollama.ai/library/qwen3/32b")
        );
        assert_eq!(
            manifest_path(s, "gemma3"),
            Path::new("/s/manifests/registry.ollama.ai/library/gemma3/latest")
        );
        assert_eq!(
            manifest_path(s, "hf.co/o/r:Q4_K_M"),
            Path::new("/s/manifests/hf.co/o/r/Q4_K_M")
        );
        let root = Path::new("/s/manifests");
        assert_eq!(
            display_name(root, &manifest_path(s, "qwen3:32b")).as_deref(),
            Some("qwen3:32b")
        );
        assert_eq!(
            display_name(root, &manifest_path(s, "hf.co/o/r:Q4_K_M")).as_deref(),
            Some("hf.co/o/r:Q4_K_M")
        );
        assert_eq!(
            display_name(root, &manifest_path(s, "u/m:t")).as_deref(),
            Some("u/m:t")
        );
    }
}
