//! Every model already on the machine: GGUF files found in the Hugging Face hub cache, the
//! Ollama store, LM Studio's folders, llama.cpp's cache and folders the user names; shards of
//! a split model are one model and projector (`mmproj`) files are attached to their model.
//! Scanning reads headers only (never tensor data); each model is then evaluated on the
//! current scenario exactly as `report --gguf FILE` would.
//! Depends on `gguf`, `build`, `compare` and `core`; the CLI and the explorer call it.

pub use crate::ollama;

use crate::build;
use crate::compare::CompareFigures;
use crate::core::scenario::Scenario;
use crate::gguf::split::parse_split_name;
use crate::profile::Catalog;
use crate::workspace::GgufInput;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

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
            for repo in repos {
                walk_noting(
                    &repo.join("snapshots"),
                    8,
                    &mut |p| {
                        if is_gguf(p) {
                            files.push(p.to_path_buf())
                        }
                    },
                    &mut |d, e| errors.push(unreadable_line(d, e)),
                );
            }
            // The same blob under several snapshots is one model.
            let mut seen = HashSet::new();
            files.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
            let root = root.to_path_buf();
            group(files, store, &move |p| hf_cache_name(&root, p))
        }
        _ => {
            let mut files = Vec::new();
            walk_noting(
                root,
                6,
                &mut |p| {
                    if is_gguf(p) {
                        files.push(p.to_path_buf())
                    }
                },
                &mut |d, e| errors.push(unreadable_line(d, e)),
            );
            let root = root.to_path_buf();
            group(files, store, &move |p| {
                p.strip_prefix(&root)
                    .map(|r| r.display().to_string())
                    .unwrap_or_else(|_| file_name(p))
            })
        }
    };
    (found, errors)
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
    /// The header and what the bounds need, or why it cannot be read (one line).
    pub input: Result<GgufInput, String>,
}

impl Scanned {
    /// `general.architecture`.
    pub fn architecture(&self) -> String {
        self.input
            .as_ref()
            .ok()
            .and_then(|g| g.artifact().metadata().architecture().map(str::to_string))
            .unwrap_or_default()
    }

    /// W: Σ shard bytes (projector not included).
    pub fn file_bytes(&self) -> Option<u64> {
        self.input.as_ref().ok().map(|g| g.artifact().file_bytes())
    }

    /// Tensor types by share of tensor bytes, largest first: `Q4_K 72%, Q6_K 21%, F32 1%`.
    pub fn quant_mix(&self) -> String {
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
                        .map(|f| Scanned {
                            found: f.clone(),
                            input: crate::workspace::open_gguf(cat, &f.path)
                                .map(slim)
                                .map_err(|e| e.to_string()),
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

pub mod output;
pub use output::{ModelsArgs, run_cli};
