//! Every model already on the machine: GGUF files found in the Hugging Face hub cache, the
//! Ollama store, LM Studio's folders, llama.cpp's cache and folders the user names; shards of
//! a split model are one model and projector (`mmproj`) files are attached to their model.
//! Safetensors models (MLX repositories in the hub cache, LM Studio's MLX models: a folder of
//! `config.json` and `*.safetensors`) are listed too, as MLX-LM models; a repository with both
//! GGUF and safetensors files gives a row for each runtime.
//! Scanning reads headers only (never tensor data); each model is then evaluated on the
//! current scenario exactly as `report --gguf FILE` would.
//! Depends on: build, compare, core, gguf, infile, ollama, profile, remote, safetensors, sanitize, workspace.

pub use crate::ollama;

use crate::build;
use crate::compare::CompareFigures;
use crate::core::mlx::Runtime;
use crate::core::scenario::Scenario;
use crate::gguf::split::parse_split_name;
use crate::profile::Catalog;
use crate::safetensors::plan::{MachineFigures, MlxArtifact, MlxSettings};
use crate::workspace::GgufInput;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Store {
    /// The Hugging Face hub cache.
    HfCache,
    /// Ollama's store.
    Ollama,
    /// LM Studio's models folder.
    LmStudio,
    /// llama.cpp's download cache.
    LlamaCpp,
    /// A folder the user named.
    Folder,
}

impl Store {
    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            Store::HfCache => "hf-cache",
            Store::Ollama => "ollama",
            Store::LmStudio => "lm-studio",
            Store::LlamaCpp => "llama.cpp",
            Store::Folder => "folder",
        }
    }
}

/// A model found on disk (nothing read from it yet).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The name to show (`qwen3:32b`, `owner/repo/file.gguf`, the file name).
    pub name: String,
    /// The file to open (the first shard of a split model, an Ollama blob).
    pub path: PathBuf,
    /// What opens it: `ollama:NAME` for a model of the Ollama store that name resolves in (so
    /// the panes show its Ollama name, not the blob's digest), else `path`. Set by the scan,
    /// off the UI thread.
    pub spec: PathBuf,
    /// Where it was found.
    pub store: Store,
    /// Shard files (1 for a single file).
    pub shards: u32,
    /// Projector file attached to it.
    pub mmproj: Option<PathBuf>,
    /// The runtime that runs it: llama.cpp for a GGUF, MLX-LM for a safetensors folder.
    pub runtime: Runtime,
}

use crate::infile::walk_noting;

/// The message for a folder that cannot be listed.
fn unreadable_line(dir: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot read folder {}: {e}; models in it are not listed",
        crate::sanitize::path(dir)
    )
}

use crate::infile::{env_dir, home};

/// The Hugging Face hub cache: `HF_HUB_CACHE`, else `$HF_HOME/hub` (`~/.cache/huggingface/hub`).
pub fn hf_hub_cache() -> Option<PathBuf> {
    env_dir("HF_HUB_CACHE")
        .or_else(|| env_dir("HUGGINGFACE_HUB_CACHE"))
        .or_else(|| crate::remote::hf::hf_home().map(|h| h.join("hub")))
}

/// llama.cpp's download cache: `LLAMA_CACHE`, else `~/Library/Caches/llama.cpp` on macOS,
/// else `$XDG_CACHE_HOME/llama.cpp` (`~/.cache/llama.cpp`), as `fs_get_cache_directory`.
pub fn llama_cache() -> Option<PathBuf> {
    env_dir("LLAMA_CACHE").or_else(|| {
        if cfg!(target_os = "macos") {
            return home().map(|h| h.join("Library/Caches/llama.cpp"));
        }
        env_dir("XDG_CACHE_HOME")
            .or_else(|| home().map(|h| h.join(".cache")))
            .map(|c| c.join("llama.cpp"))
    })
}

/// LM Studio's model folders that exist.
pub fn lm_studio_dirs() -> Vec<PathBuf> {
    let Some(h) = home() else { return Vec::new() };
    [
        h.join(".lmstudio").join("models"),
        h.join(".cache").join("lm-studio").join("models"),
    ]
    .into_iter()
    .filter(|p| p.is_dir())
    .collect()
}

/// Where to look: the standard stores (unless `standard` is false) and the user's folders.
pub fn roots(user_dirs: &[PathBuf], standard: bool) -> Vec<(Store, PathBuf)> {
    let mut out = Vec::new();
    if standard {
        if let Some(p) = hf_hub_cache() {
            out.push((Store::HfCache, p));
        }
        if let Some(p) = ollama::store() {
            out.push((Store::Ollama, p));
        }
        for p in lm_studio_dirs() {
            out.push((Store::LmStudio, p));
        }
        if let Some(p) = llama_cache() {
            out.push((Store::LlamaCpp, p));
        }
    }
    for d in user_dirs {
        out.push((Store::Folder, d.clone()));
    }
    out
}

fn is_gguf(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Group the GGUF files of a folder tree: split shards are one model (its first shard);
/// projectors are attached to the models of their folder. `name_of` names a model file.
fn group(files: Vec<PathBuf>, store: Store, name_of: &dyn Fn(&Path) -> String) -> Vec<Found> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for f in files {
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        by_dir.entry(dir).or_default().push(f);
    }
    let mut out = Vec::new();
    for (_, mut files) in by_dir {
        files.sort();
        let (proj, models): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .partition(|p| crate::remote::is_projector_name(&file_name(p)));
        let mut dir_models = Vec::new();
        for p in models {
            let name = file_name(&p);
            let shards = match parse_split_name(&name) {
                Some((_, 1, n)) => n,
                Some(_) => continue,
                None => 1,
            };
            dir_models.push(Found {
                name: name_of(&p),
                spec: p.clone(),
                path: p,
                store,
                shards,
                mmproj: None,
                runtime: Runtime::LlamaCpp,
            });
        }
        // A lone projector goes with the models of its folder (LM Studio and HF repos keep
        // them side by side); several projectors are ambiguous and attach to none.
        if let [one] = proj.as_slice() {
            for m in &mut dir_models {
                m.mmproj = Some(one.clone());
            }
        }
        out.extend(dir_models);
    }
    out
}

/// Find the models under one root (no file is opened except Ollama manifests).
pub fn discover_in(store: Store, root: &Path) -> (Vec<Found>, Vec<String>) {
    let mut errors = Vec::new();
    let found = match store {
        Store::Ollama => {
            let mut v = Vec::new();
            for r in ollama::list(root) {
                match r {
                    Ok(m) => v.push(Found {
                        // By name only where the name resolves to this blob (a store other
                        // than the default one is opened by its file).
                        spec: if ollama::resolve(&m.name).is_ok_and(|b| b == m.model) {
                            PathBuf::from(format!("ollama:{}", m.name))
                        } else {
                            m.model.clone()
                        },
                        name: m.name,
                        path: m.model,
                        store,
                        shards: 1,
                        mmproj: m.projector,
                        runtime: Runtime::LlamaCpp,
                    }),
                    Err(e) => errors.push(e.to_string()),
                }
            }
            v
        }
        Store::HfCache => {
            // hub/models--owner--repo/snapshots/<rev>/<path…>.gguf
            let mut files = Vec::new();
            let rd = match std::fs::read_dir(root) {
                Ok(rd) => rd,
                Err(e) => {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        errors.push(unreadable_line(root, &e));
                    }
                    return (Vec::new(), errors);
                }
            };
            let mut repos: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| file_name(p).starts_with("models--"))
                .collect();
            repos.sort();
            let mut st = Vec::new();
            for repo in repos {
                walk_noting(
                    &repo.join("snapshots"),
                    8,
                    &mut |p| {
                        if is_gguf(p) {
                            files.push(p.to_path_buf())
                        } else if is_safetensors(p) {
                            st.push(p.to_path_buf())
                        }
                    },
                    &mut |d, e| errors.push(unreadable_line(d, e)),
                );
            }
            // The same blob under several snapshots is one model.
            let mut seen = HashSet::new();
            files.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
            let root = root.to_path_buf();
            let r2 = root.clone();
            let mut v = group(files, store, &move |p| hf_cache_name(&root, p));
            v.extend(safetensors_models(st, store, &move |d| {
                hf_cache_dir_name(&r2, d)
            }));
            v
        }
        _ => {
            let mut files = Vec::new();
            let mut st = Vec::new();
            walk_noting(
                root,
                6,
                &mut |p| {
                    if is_gguf(p) {
                        files.push(p.to_path_buf())
                    } else if is_safetensors(p) {
                        st.push(p.to_path_buf())
                    }
                },
                &mut |d, e| errors.push(unreadable_line(d, e)),
            );
            let root = root.to_path_buf();
            let r2 = root.clone();
            let mut v = group(files, store, &move |p| {
                p.strip_prefix(&root)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| file_name(p))
            });
            v.extend(safetensors_models(st, store, &move |d| {
                d.strip_prefix(&r2)
                    .ok()
                    .filter(|r| !r.as_os_str().is_empty())
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|| file_name(d))
            }));
            v
        }
    };
    (found, errors)
}

fn is_safetensors(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
}

/// The safetensors models among `files` (every `*.safetensors` found): one per folder that
/// also holds `config.json` (what MLX-LM loads); the same folder reached twice (a snapshot
/// whose files are the blobs of another) is one model. `name_of` names the folder.
fn safetensors_models(
    files: Vec<PathBuf>,
    store: Store,
    name_of: &dyn Fn(&Path) -> String,
) -> Vec<Found> {
    let mut by_dir: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for f in files {
        if let Some(d) = f.parent() {
            by_dir.entry(d.to_path_buf()).or_default().push(f);
        }
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (dir, mut files) in by_dir {
        if !dir.join("config.json").is_file() {
            continue;
        }
        files.sort();
        let key: Vec<PathBuf> = files
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        if !seen.insert(key) {
            continue;
        }
        out.push(Found {
            name: name_of(&dir),
            path: dir.clone(),
            spec: dir,
            store,
            shards: u32::try_from(files.len()).unwrap_or(u32::MAX),
            mmproj: None,
            runtime: Runtime::MlxLm,
        });
    }
    out
}

/// `owner/repo[/path]` for a folder of the hub cache (`models--owner--repo/snapshots/REV/…`).
fn hf_cache_dir_name(root: &Path, dir: &Path) -> String {
    let Ok(rel) = dir.strip_prefix(root) else {
        return file_name(dir);
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() >= 3 {
        let repo = parts[0]
            .strip_prefix("models--")
            .unwrap_or(&parts[0])
            .replacen("--", "/", 1);
        std::iter::once(repo)
            .chain(parts[3..].iter().cloned())
            .collect::<Vec<_>>()
            .join("/")
    } else {
        file_name(dir)
    }
}

/// `owner/repo/path.gguf` for a file of the hub cache.
fn hf_cache_name(root: &Path, p: &Path) -> String {
    let Ok(rel) = p.strip_prefix(root) else {
        return file_name(p);
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    // models--owner--repo / snapshots / rev / path…
    if parts.len() >= 4 {
        let repo = parts[0]
            .strip_prefix("models--")
            .unwrap_or(&parts[0])
            .replacen("--", "/", 1);
        format!("{repo}/{}", parts[3..].join("/"))
    } else {
        file_name(p)
    }
}

/// Find every model under the roots; a file found twice (a folder inside a store) is listed once.
pub fn discover(roots: &[(Store, PathBuf)]) -> (Vec<Found>, Vec<String>) {
    let mut all = Vec::new();
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for (store, root) in roots {
        let (found, errs) = discover_in(*store, root);
        errors.extend(errs);
        for f in found {
            let key = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
            if seen.insert(key) {
                all.push(f);
            }
        }
    }
    (all, errors)
}

/// A found model with its header read.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// What was found.
    pub found: Found,
    /// The header and what the bounds need, or why it cannot be read (one line). For a
    /// safetensors model: why there is no GGUF (`mlx` has the model).
    pub input: Result<GgufInput, String>,
    /// A safetensors model's headers read for MLX-LM, or why they cannot be (one line);
    /// `None` for a GGUF.
    pub mlx: Option<Result<Arc<MlxArtifact>, String>>,
}

impl Scanned {
    /// `general.architecture` (a safetensors model's `model_type`).
    pub fn architecture(&self) -> String {
        if let Some(m) = &self.mlx {
            return m
                .as_ref()
                .map(|a| a.model_type().to_string())
                .unwrap_or_default();
        }
        self.input
            .as_ref()
            .ok()
            .and_then(|g| g.artifact().metadata().architecture().map(str::to_string))
            .unwrap_or_default()
    }

    /// W: Σ shard bytes (projector not included).
    pub fn file_bytes(&self) -> Option<u64> {
        if let Some(m) = &self.mlx {
            return m.as_ref().ok().map(|a| a.weights_bytes());
        }
        self.input.as_ref().ok().map(|g| g.artifact().file_bytes())
    }

    /// Tensor types by share of tensor bytes, largest first: `Q4_K 72%, Q6_K 21%, F32 1%`.
    pub fn quant_mix(&self) -> String {
        if let Some(m) = &self.mlx {
            let Ok(a) = m else {
                return String::new();
            };
            let mut enc = a.encodings();
            let total: u64 = enc.iter().map(|e| e.1).sum();
            if total == 0 {
                return String::new();
            }
            enc.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            return enc
                .iter()
                .filter(|e| e.1 * 100 >= total)
                .take(3)
                .map(|(k, b, _)| format!("{k} {}%", (b * 100 + total / 2) / total))
                .collect::<Vec<_>>()
                .join(", ");
        }
        let Ok(g) = &self.input else {
            return String::new();
        };
        let total: u64 = g.inventory().by_type.iter().map(|t| t.bytes).sum();
        if total == 0 {
            return String::new();
        }
        g.inventory()
            .by_type
            .iter()
            .filter(|t| t.bytes * 100 >= total)
            .take(3)
            .map(|t| format!("{} {}%", t.type_name, (t.bytes * 100 + total / 2) / total))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Metadata keys a row keeps (everything else of the header is dropped after the scan).
const ROW_KEYS: &[&str] = &["general.architecture", "general.name", "split.count"];

/// What a row needs of an opened header: the shape, the inventory's totals, the shards' sizes
/// and warnings, and a few metadata keys. The tensor list and the rest of the metadata (a
/// tokenizer is most of a header's memory) are dropped, so scanning thousands of files keeps
/// a few KB each, not every header.
fn slim(mut g: GgufInput) -> GgufInput {
    for s in &mut g.opened.artifact.shards {
        s.header.tensors = Vec::new();
        s.header
            .metadata
            .entries
            .retain(|e| ROW_KEYS.contains(&e.key.as_str()));
        s.header.metadata.entries.shrink_to_fit();
    }
    g
}

/// Read the header of every found model (two worker threads; headers only).
pub fn scan(cat: &Catalog, found: Vec<Found>) -> Vec<Scanned> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 4);
    let chunk = found.len().div_ceil(threads).max(1);
    let mut out: Vec<Scanned> = Vec::with_capacity(found.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = found
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|f| match f.runtime {
                            Runtime::MlxLm => Scanned {
                                found: f.clone(),
                                input: Err(format!(
                                    "{}: a safetensors model for MLX-LM, not a GGUF",
                                    crate::sanitize::path(&f.path)
                                )),
                                mlx: Some(crate::workspace::open::read_mlx(&f.path)),
                            },
                            Runtime::LlamaCpp => Scanned {
                                found: f.clone(),
                                input: crate::workspace::open_gguf(cat, &f.path)
                                    .map(slim)
                                    .map_err(|e| e.to_string()),
                                mlx: None,
                            },
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            if let Ok(v) = h.join() {
                out.extend(v);
            }
        }
    });
    out
}

/// One model evaluated on the scenario.
#[derive(Debug, Clone)]
pub struct Row {
    /// Index into the scanned list.
    pub index: usize,
    /// The figures, or why the model cannot be evaluated (header unreadable, shape missing).
    pub outcome: Result<CompareFigures, String>,
    /// W + projector bytes used.
    pub weights_bytes: u64,
    /// What opening the file warned about (the warnings `report` and `inspect` print for it):
    /// the row is marked.
    pub warnings: Vec<String>,
}

/// Evaluate every scanned model on `base` (its machine, context, cache types), as `report
/// --gguf FILE` with the same options would, each at its own placement on the machine
/// (`compare::evaluate_placed`); a projector adds its bytes to W.
pub fn evaluate(base: &Scenario, scanned: &[Scanned]) -> Vec<Row> {
    scanned
        .iter()
        .enumerate()
        .map(|(index, s)| {
            if let Some(m) = &s.mlx {
                return mlx_row(base, index, m);
            }
            let mut weights_bytes = 0;
            let warnings = s
                .input
                .as_ref()
                .map(|g| g.artifact().all_warnings())
                .unwrap_or_default();
            let outcome = (|| {
                let g = s.input.as_ref().map_err(Clone::clone)?;
                // A partial download is refused as `inspect` and `report` refuse it.
                if let Some(why) = crate::gguf::incomplete_reason(&s.found.path, g.artifact()) {
                    return Err(why);
                }
                let mut sc = base.clone();
                crate::workspace::with_gguf(&mut sc, g).map_err(|e| e.to_string())?;
                if let Some(p) = &s.found.mmproj {
                    let extra = build::extra_file(crate::core::weights::WeightKind::Mmproj, p)
                        .map_err(|e| e.to_string())?;
                    sc = crate::core::edit::applied(
                        &sc,
                        &[crate::core::edit::Edit::ExtraFile(extra)],
                    )
                    .map_err(|e| e.to_string())?;
                }
                weights_bytes = sc.weights.iter().map(|w| w.bytes.value).sum();
                // Each model at its own placement on the machine (all layers, or the most
                // that fit), never at an -ngl chosen for another model.
                crate::compare::evaluate_placed(&sc)
                    .map(|r| CompareFigures::of(&r))
                    .map_err(|e| e.to_string())
            })();
            Row {
                index,
                outcome,
                weights_bytes,
                warnings,
            }
        })
        .collect()
}

/// A safetensors model's row: MLX-LM's plan on the scenario's machine at its context, in the
/// figures the table shows (the decode ceilings are the inventory's: upper bounds).
fn mlx_row(base: &Scenario, index: usize, m: &Result<Arc<MlxArtifact>, String>) -> Row {
    let outcome = (|| {
        let a = m.as_ref().map_err(Clone::clone)?;
        let fig = MachineFigures::of(&base.machine)
            .ok_or_else(|| "the machine has no memory tier".to_string())?;
        let p = crate::safetensors::plan::plan(a, &MlxSettings::on(&fig), base.cache.context, &fig);
        let Ok(mem) = &p.memory else {
            return Err(match &p.memory {
                Err(e) => format!("refused by MLX-LM: {}", e.message()),
                Ok(_) => String::new(),
            });
        };
        let at = p.decode_at_context.unwrap_or(p.decode_short);
        // File mode: every byte of the files read per token (conditional, not a bound).
        let w = p.weights_bytes;
        let every_short = crate::core::mlx::decode_ceiling(fig.bandwidth, w, 0);
        let every_full = crate::core::mlx::decode_ceiling(fig.bandwidth, w, mem.cache.read_bytes());
        let bandwidth_provenance = (base.machine.tiers.first())
            .map_or(crate::core::units::Provenance::Derived, |t| {
                t.headline_bandwidth().provenance
            });
        Ok(CompareFigures {
            fits: p.fits,
            headroom_bytes: p.headroom.unwrap_or(0),
            max_context_tokens: Some(p.largest_context.unwrap_or(0)),
            max_context_exceeds_native: false,
            ceiling_tokens_per_second: at,
            ceiling_short_tokens_per_second: p.decode_short,
            ceiling_is_upper_bound: true,
            gpu_layers: None,
            all_gpu_layers: 0,
            placement: "MLX-LM (no llama.cpp placement)".into(),
            short_tokens_per_second: every_short,
            full_tokens_per_second: every_full,
            overlapped_tokens_per_second: every_full,
            full_ms_per_token: if every_full > 0.0 {
                1000.0 / every_full
            } else {
                f64::INFINITY
            },
            inventory_full_tokens_per_second: Some(at),
            capacity_tier: base
                .machine
                .tiers
                .first()
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            decode_tier: base
                .machine
                .tiers
                .first()
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            bandwidth_provenance,
            optimistic_vendor: false,
            prefill_tokens_per_second: None,
            context_tokens: base.cache.context,
            sequences: 1,
        })
    })();
    Row {
        index,
        weights_bytes: m.as_ref().map_or(0, |a| a.weights_bytes()),
        warnings: m.as_ref().map(|a| a.warnings()).unwrap_or_default(),
        outcome,
    }
}

/// Row order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SortKey {
    /// Models that fit first, then the highest decode ceiling.
    #[default]
    Fit,
    /// Highest decode ceiling first.
    Speed,
    /// Largest file first.
    Size,
    /// By name.
    Name,
    /// Largest context that fits first.
    Context,
}

/// Sort rows in place.
pub fn sort(rows: &mut [Row], scanned: &[Scanned], key: SortKey) {
    let speed = |r: &Row| {
        r.outcome
            .as_ref()
            .map_or(-1.0, |f| f.ceiling_tokens_per_second)
    };
    let fits = |r: &Row| r.outcome.as_ref().is_ok_and(|f| f.fits);
    let ctx = |r: &Row| {
        r.outcome
            .as_ref()
            .map_or(0, |f| f.max_context_tokens.unwrap_or(u64::MAX))
    };
    let name = |r: &Row| scanned[r.index].found.name.to_ascii_lowercase();
    rows.sort_by(|a, b| {
        let ord = match key {
            SortKey::Fit => fits(b).cmp(&fits(a)).then(speed(b).total_cmp(&speed(a))),
            SortKey::Speed => speed(b).total_cmp(&speed(a)),
            SortKey::Size => b.weights_bytes.cmp(&a.weights_bytes),
            SortKey::Context => ctx(b).cmp(&ctx(a)),
            SortKey::Name => std::cmp::Ordering::Equal,
        };
        ord.then_with(|| name(a).cmp(&name(b)))
    });
}
