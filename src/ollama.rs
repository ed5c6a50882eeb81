//! Ollama's model store: manifests under `manifests/<host>/<namespace>/<name>/<tag>` name the
//! model layer (`application/vnd.ollama.image.model`) and projector layer by digest; the
//! blobs are `blobs/sha256-<hex>`. The store is `$OLLAMA_MODELS` or `~/.ollama/models`.

use std::path::{Path, PathBuf};

/// The registry whose `library/` namespace Ollama names without a prefix.
pub const DEFAULT_REGISTRY: &str = "registry.ollama.ai";

/// Manifests larger than this are not Ollama's (they are a few KiB).
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

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
    Ok(OllamaModel {
        name: name.to_string(),
        model,
        projector,
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
