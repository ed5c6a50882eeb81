//! The opened GGUF file as the explorer shows it: loading and hashing on worker threads
//! (messages through one channel, polled by the event loop), and the rows of the Artifact
//! pane, the tensor browser and the metadata view. The GGUF specifics live in `adapter`.

use super::adapter;
use crate::core::model::{ArchFigures, ModelShape};
use crate::core::weights::{Inventory, WeightFile};
use crate::profile::Catalog;
use crate::profile::file::{ArtifactFile, ModelFile};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

/// One tensor as the inventory browser shows it (the reader's row, as is).
pub use crate::gguf::TensorRow as TensorItem;
/// Totals of one tensor type (the reader's rollup, as is).
pub use crate::gguf::TypeRollup as TypeItem;

/// One metadata key.
#[derive(Debug, Clone, PartialEq)]
pub struct MetaItem {
    /// Key.
    pub key: String,
    /// Type as text (`u32`, `[string; 151936]`).
    pub type_name: String,
    /// The value, arrays summarised.
    pub value: String,
    /// Elements of an array value.
    pub array_len: Option<u64>,
    /// A long or multi-line string value, in lines (escaped, at most 100 characters each) that
    /// Enter expands; empty when the value fits on its row.
    pub text_lines: Vec<String>,
}

/// One file of the artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardItem {
    /// File name.
    pub file_name: String,
    /// Path.
    pub path: PathBuf,
    /// Exact bytes.
    pub bytes: u64,
}

/// A file that was read.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The path the user named.
    pub path: PathBuf,
    /// Its file name.
    pub file_name: String,
    /// Every shard.
    pub shards: Vec<ShardItem>,
    /// Σ shard bytes (W).
    pub total_bytes: u64,
    /// Model shape from the file and its raw figures (for edits), or why the KV maths cannot
    /// be done from it (the inventory and metadata are still shown).
    pub model: Result<(ModelShape, ArchFigures), String>,
    /// Weight files for the scenario.
    pub weights: Vec<WeightFile>,
    /// The core's view of the inventory.
    pub core_inventory: Inventory,
    /// Tensors in file order.
    pub tensors: Vec<TensorItem>,
    /// Per-type totals, most bytes first.
    pub by_type: Vec<TypeItem>,
    /// Counted parameters (Σ elements).
    pub parameters: u64,
    /// Metadata in file order.
    pub metadata: Vec<MetaItem>,
    /// What was guessed while reading, and how the header was fetched.
    pub warnings: Vec<String>,
    /// The header as read: what the workspace opens.
    pub opened: Arc<crate::workspace::Opened>,
}

impl PartialEq for Loaded {
    /// Two reads are equal when they show the same (the artifact itself is not compared).
    fn eq(&self, o: &Loaded) -> bool {
        self.path == o.path
            && self.shards == o.shards
            && self.total_bytes == o.total_bytes
            && self.model == o.model
            && self.tensors == o.tensors
            && self.metadata == o.metadata
            && self.warnings == o.warnings
    }
}

/// Hashing progress and outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum HashState {
    /// Not started.
    #[default]
    Idle,
    /// Running.
    Running {
        /// Bytes hashed.
        done: u64,
        /// Bytes to hash.
        total: u64,
        /// Mean rate, bytes/s.
        bytes_per_s: f64,
        /// Seconds left.
        eta_s: Option<f64>,
    },
    /// Equal to the pinned hash of a profile artifact.
    Verified(String),
    /// Different from the pinned hash.
    Mismatch {
        /// Pinned.
        expected: String,
        /// Computed.
        actual: String,
    },
    /// Computed, no profile pins this file.
    NotPinned(String),
    /// Cancelled by `x`.
    Cancelled,
    /// Failed.
    Failed(String),
}

impl HashState {
    /// Percent done while running.
    pub fn percent(&self) -> Option<u64> {
        match self {
            HashState::Running { done, total, .. } if *total > 0 => {
                Some((*done as u128 * 100 / *total as u128) as u64)
            }
            HashState::Running { .. } => Some(0),
            _ => None,
        }
    }
}

/// A hashing progress report from the worker.
#[derive(Debug, Clone, PartialEq)]
pub enum HashUpdate {
    /// Progress.
    Progress {
        /// Bytes hashed.
        done: u64,
        /// Bytes to hash.
        total: u64,
        /// Mean rate, bytes/s.
        bytes_per_s: f64,
        /// Seconds left.
        eta_s: Option<f64>,
    },
    /// Digests of every shard, in order.
    Done(Vec<String>),
    /// Stopped.
    Cancelled,
    /// Failed.
    Failed(String),
}

/// A message from a worker thread.
#[derive(Debug)]
pub enum JobMessage {
    /// A file was read (or could not be).
    Opened(Box<Result<Loaded, String>>),
    /// Hashing progress.
    Hash(HashUpdate),
    /// A long metadata array was loaded.
    Array(String, Result<Vec<String>, String>),
}

/// Work for a worker thread.
#[derive(Debug, Clone)]
pub enum Job {
    /// Read a GGUF header (and its shards).
    Open(PathBuf),
    /// Hash files in order (digests cached in the file given).
    Hash(Vec<PathBuf>, Arc<AtomicBool>, Option<PathBuf>),
    /// Load one long metadata array.
    Array(PathBuf, String),
}

thread_local! {
    static IN_JOB: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on a job's worker thread: a panic there is caught and reported by the job, so the
/// panic hook must neither restore the terminal nor print over the screen.
pub fn in_job() -> bool {
    IN_JOB.with(|f| f.get())
}

/// The worker threads and their channel.
pub struct Jobs {
    tx: Sender<(u64, JobMessage)>,
    rx: Receiver<(u64, JobMessage)>,
    running: Vec<u64>,
    next: u64,
}

impl Default for Jobs {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Jobs {
            tx,
            rx,
            running: Vec::new(),
            next: 0,
        }
    }
}

/// A message that ends its job.
fn is_final(m: &JobMessage) -> bool {
    match m {
        JobMessage::Opened(_) | JobMessage::Array(..) => true,
        JobMessage::Hash(h) => !matches!(h, HashUpdate::Progress { .. }),
    }
}

impl Jobs {
    /// Start a job on its own thread.
    pub fn spawn(&mut self, job: Job) {
        let id = self.next;
        self.next += 1;
        self.running.push(id);
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("llmbound-job".into())
            .spawn(move || {
                let send = |m: JobMessage| {
                    let _ = tx.send((id, m));
                };
                // Whatever a job meets, it ends with its final message: a panic (a bug) is
                // reported as that job's error, so the status never says "opening …" for ever.
                let what = job.clone();
                IN_JOB.with(|f| f.set(true));
                let run = std::panic::AssertUnwindSafe(|| match job {
                    Job::Open(p) => send(JobMessage::Opened(Box::new(load(&p)))),
                    Job::Hash(paths, cancel, cache) => {
                        adapter::hash(&paths, &cancel, cache, &|u| send(JobMessage::Hash(u)))
                    }
                    Job::Array(p, key) => {
                        let r = adapter::load_array(&p, &key);
                        send(JobMessage::Array(key, r));
                    }
                });
                if let Err(p) = std::panic::catch_unwind(run) {
                    let why = format!(
                        "stopped on an internal error ({}); please report it",
                        crate::remote::panic_text(&p)
                    );
                    send(match what {
                        Job::Open(p) => JobMessage::Opened(Box::new(Err(format!(
                            "{}: {why}",
                            crate::remote::http::redact(&p.display().to_string())
                        )))),
                        Job::Hash(..) => JobMessage::Hash(HashUpdate::Failed(why)),
                        Job::Array(_, key) => JobMessage::Array(key, Err(why)),
                    });
                }
            });
        if spawned.is_err() {
            self.running.retain(|x| *x != id);
        }
    }

    fn note(&mut self, id: u64, m: &JobMessage) {
        if is_final(m) {
            self.running.retain(|x| *x != id);
        }
    }

    /// Every message waiting (never blocks).
    pub fn drain(&mut self) -> Vec<JobMessage> {
        let mut out = Vec::new();
        while let Ok((id, m)) = self.rx.try_recv() {
            self.note(id, &m);
            out.push(m);
        }
        out
    }

    /// Wait up to `timeout` for a message, then drain.
    pub fn wait(&mut self, timeout: Duration) -> Vec<JobMessage> {
        let mut out = Vec::new();
        if let Ok((id, m)) = self.rx.recv_timeout(timeout) {
            self.note(id, &m);
            out.push(m);
        }
        out.extend(self.drain());
        out
    }

    /// Jobs still running.
    pub fn running(&self) -> usize {
        self.running.len()
    }
}

/// The opened file and what is happening to it.
#[derive(Debug, Default)]
pub struct FileState {
    /// Being opened.
    pub opening: Option<PathBuf>,
    /// Read and in use.
    pub loaded: Option<Loaded>,
    /// Hashing.
    pub hash: HashState,
    /// Loaded long arrays (key → values or error).
    pub arrays: Vec<(String, Result<Vec<String>, String>)>,
    /// Why the bounds do not use the loaded file (a partial download, a header without the
    /// model's shape): they keep the previous model while its tensors and metadata are shown.
    pub refused: Option<String>,
    cancel: Option<Arc<AtomicBool>>,
}

impl FileState {
    /// The path to suggest when asking for a file.
    pub fn path_text(&self) -> String {
        self.loaded
            .as_ref()
            .map(|l| l.path.display().to_string())
            .unwrap_or_default()
    }

    /// Start reading a file on a worker.
    pub fn open(&mut self, p: PathBuf, jobs: &mut Jobs) {
        self.opening = Some(p.clone());
        jobs.spawn(Job::Open(p));
    }

    /// Opening ended without using the file.
    pub fn open_failed(&mut self) {
        self.opening = None;
    }

    /// Use a read file (cancels a running hash of the previous one).
    pub fn set_loaded(&mut self, l: Loaded) {
        self.cancel_hash();
        self.opening = None;
        self.hash = HashState::Idle;
        self.arrays.clear();
        self.refused = None;
        self.loaded = Some(l);
    }

    /// Start hashing the loaded file (digests cached in `cache` when given).
    pub fn start_hash(&mut self, jobs: &mut Jobs, cache: Option<PathBuf>) -> Result<(), String> {
        let Some(l) = &self.loaded else {
            return Err("no file open to hash: press o to open a GGUF file".into());
        };
        if matches!(self.hash, HashState::Running { .. }) {
            return Err("already hashing (x cancels)".into());
        }
        if crate::remote::is_remote(&l.path) {
            return Err("a remote file cannot be hashed: only its header was read".into());
        }
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancel = Some(Arc::clone(&cancel));
        self.hash = HashState::Running {
            done: 0,
            total: l.total_bytes,
            bytes_per_s: 0.0,
            eta_s: None,
        };
        jobs.spawn(Job::Hash(
            l.shards.iter().map(|s| s.path.clone()).collect(),
            cancel,
            cache,
        ));
        Ok(())
    }

    /// Cancel a running hash; true when one was running.
    pub fn cancel_hash(&mut self) -> bool {
        match self.cancel.take() {
            Some(c) if matches!(self.hash, HashState::Running { .. }) => {
                c.store(true, Ordering::Relaxed);
                self.hash = HashState::Cancelled;
                true
            }
            _ => false,
        }
    }

    /// Handle a hashing update; returns a message to show when the hash ends.
    pub fn on_hash(
        &mut self,
        u: HashUpdate,
        pinned: Option<&super::app::PinnedArtifact>,
    ) -> Option<super::app::Message> {
        if !matches!(self.hash, HashState::Running { .. }) {
            return None;
        }
        match u {
            HashUpdate::Progress {
                done,
                total,
                bytes_per_s,
                eta_s,
            } => {
                self.hash = HashState::Running {
                    done,
                    total,
                    bytes_per_s,
                    eta_s,
                };
                None
            }
            HashUpdate::Done(digests) => {
                self.cancel = None;
                let actual = digests.join(" ");
                let pin = pinned.and_then(|p| p.sha256.clone());
                let (state, text, error) = match pin {
                    Some(exp) if exp == actual => (
                        HashState::Verified(actual),
                        "SHA-256 verified".to_string(),
                        false,
                    ),
                    Some(exp) => (
                        HashState::Mismatch {
                            expected: exp,
                            actual,
                        },
                        "SHA-256 MISMATCH: this is not the pinned file".to_string(),
                        true,
                    ),
                    None => (
                        HashState::NotPinned(actual),
                        "SHA-256 computed (no profile pins this file)".to_string(),
                        false,
                    ),
                };
                self.hash = state;
                Some(super::app::Message { text, error })
            }
            HashUpdate::Cancelled => {
                self.cancel = None;
                self.hash = HashState::Cancelled;
                None
            }
            HashUpdate::Failed(e) => {
                self.cancel = None;
                self.hash = HashState::Failed(e.clone());
                Some(super::app::Message {
                    text: e,
                    error: true,
                })
            }
        }
    }

    /// Start loading a long metadata array (once).
    pub fn load_array(&mut self, key: &str, jobs: &mut Jobs) {
        let Some(l) = &self.loaded else { return };
        if self.arrays.iter().any(|(k, _)| k == key) {
            return;
        }
        jobs.spawn(Job::Array(l.path.clone(), key.to_string()));
    }

    /// A long array arrived.
    pub fn on_array(&mut self, key: String, r: Result<Vec<String>, String>) {
        self.arrays.retain(|(k, _)| *k != key);
        self.arrays.push((key, r));
    }

    /// The loaded values of an array.
    pub fn array(&self, key: &str) -> Option<&Result<Vec<String>, String>> {
        self.arrays.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Tensors of the loaded file.
    pub fn inventory(&self) -> &[TensorItem] {
        self.loaded.as_ref().map_or(&[], |l| &l.tensors)
    }

    /// Metadata of the loaded file.
    pub fn metadata_rows(&self) -> &[MetaItem] {
        self.loaded.as_ref().map_or(&[], |l| &l.metadata)
    }
}

/// Read any artifact the explorer opens (`o`, the start-up argument, the library's Enter):
/// a GGUF through `adapter`, and a safetensors model (an MLX folder or repository) with its
/// tensors and `config.json` in the views, by the same one opening (`workspace::open::read`).
pub fn load(path: &std::path::Path) -> Result<Loaded, String> {
    let mut l = adapter::load(path)?;
    if l.opened.is_mlx_only()
        && let Some(a) = l.opened.mlx.clone()
    {
        with_safetensors(&mut l, &a);
    }
    Ok(l)
}

/// The views' rows of a safetensors model: its shards, tensors (as the reader lists them),
/// per-encoding totals and the keys of its `config.json`.
fn with_safetensors(l: &mut Loaded, a: &crate::safetensors::plan::MlxArtifact) {
    let name = |p: &std::path::Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    l.file_name = crate::sanitize::path(&a.dir);
    l.shards = (a.model.shards.iter())
        .map(|s| ShardItem {
            file_name: name(&s.path),
            path: s.path.clone(),
            bytes: s.header.file_len,
        })
        .collect();
    l.total_bytes = a.weights_bytes();
    l.core_inventory = a.inventory.to_core();
    l.tensors = a.inventory.tensor_rows();
    l.by_type = a.inventory.encoding_rollups();
    l.parameters = a.inventory.rows.iter().map(|r| r.elements).sum();
    l.metadata = a
        .model
        .config
        .iter()
        .flat_map(|c| c.raw.iter())
        .map(|(k, v)| {
            let type_name = match v {
                serde_json::Value::Null => "null".to_string(),
                serde_json::Value::Bool(_) => "bool".into(),
                serde_json::Value::Number(_) => "number".into(),
                serde_json::Value::String(_) => "string".into(),
                serde_json::Value::Array(a) => format!("[json; {}]", a.len()),
                serde_json::Value::Object(o) => format!("{{json; {}}}", o.len()),
            };
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let shown: String = crate::sanitize::text(&text).chars().take(160).collect();
            MetaItem {
                key: format!("config.json: {k}"),
                type_name,
                text_lines: if shown.chars().count() < text.chars().count() {
                    adapter::text_lines(&text)
                } else {
                    Vec::new()
                },
                value: shown,
                array_len: None,
            }
        })
        .collect();
}

/// A model profile artifact with exactly this many bytes (what a file can be verified against).
pub fn matching_profile(cat: &Catalog, bytes: u64) -> Option<(ModelFile, ArtifactFile)> {
    cat.artifact_with_bytes(bytes)
}
