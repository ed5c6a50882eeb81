//! SHA-256 of artifact files on a worker thread, with progress messages and cancellation, and
//! a cache of digests keyed by canonical path, size and modification time. A split model is
//! hashed file by file (pinned hashes are per file), in shard order.
//! Depends on nothing outside `gguf` but `sha2`, `serde_json` and `directories`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bytes read per chunk; cancellation is checked between chunks.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Progress messages are sent at most this often (and once at the end of each file).
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Why hashing failed.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// A file could not be read.
    #[error("cannot read \"{path}\" for hashing: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// `HashJob::cancel` was called.
    #[error("hashing was cancelled")]
    Cancelled,
    /// The worker thread ended without a result.
    #[error("the hashing thread stopped without a result")]
    WorkerLost,
    /// The cache file could not be read or written.
    #[error("hash cache \"{path}\": {detail}")]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },
}

/// The digest of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Lower-case hex SHA-256.
    pub sha256: String,
    /// Taken from the cache rather than computed.
    pub from_cache: bool,
}

/// Progress of a hashing job over all its files.
#[derive(Debug, Clone, PartialEq)]
pub struct HashProgress {
    /// Index of the file being hashed.
    pub file_index: usize,
    /// Number of files.
    pub files: usize,
    /// Bytes hashed so far over all files.
    pub bytes_done: u64,
    /// Bytes of all files.
    pub total_bytes: u64,
    /// Mean rate since the start, bytes/s.
    pub bytes_per_s: f64,
    /// Seconds left at that rate.
    pub eta_s: Option<f64>,
}

/// A message from the worker.
#[derive(Debug)]
pub enum HashMessage {
    /// Bytes done so far.
    Progress(HashProgress),
    /// One file finished.
    FileDone(FileDigest),
    /// The job ended: every file's digest in order, or the error that stopped it.
    Finished(Result<Vec<FileDigest>, HashError>),
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of everything `r` yields, read in `CHUNK_BYTES` chunks; `on_chunk(n)` after each
/// chunk of n bytes; stops with `Cancelled` when `cancel` is set.
pub fn sha256_reader<R: Read>(
    mut r: R,
    cancel: &AtomicBool,
    mut on_chunk: impl FnMut(u64),
) -> io::Result<Option<[u8; 32]>> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        on_chunk(n as u64);
    }
    Ok(Some(hasher.finalize().into()))
}

/// SHA-256 of a file as lower-case hex.
pub fn sha256_file(
    path: &Path,
    cancel: &AtomicBool,
    on_chunk: impl FnMut(u64),
) -> Result<String, HashError> {
    let io_err = |e| HashError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let file = File::open(path).map_err(io_err)?;
    match sha256_reader(file, cancel, on_chunk).map_err(io_err)? {
        Some(d) => Ok(hex(&d)),
        None => Err(HashError::Cancelled),
    }
}

/// A hashing job running on its own thread. Dropping it cancels the work.
#[derive(Debug)]
pub struct HashJob {
    rx: Receiver<HashMessage>,
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    done: bool,
}

impl HashJob {
    /// Hash `paths` in order on a worker thread.
    pub fn spawn(paths: Vec<PathBuf>) -> HashJob {
        HashJob::spawn_with_cache(paths, None)
    }

    /// Hash `paths`, taking digests from the cache at `cache` when size and modification time
    /// still match, and storing new ones there.
    pub fn spawn_with_cache(paths: Vec<PathBuf>, cache: Option<HashCache>) -> HashJob {
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let handle = std::thread::Builder::new()
            .name("llmbound-hash".into())
            .spawn(move || {
                let result = run(&paths, cache.as_ref(), &flag, &tx);
                let _ = tx.send(HashMessage::Finished(result));
            })
            .ok();
        HashJob {
            rx,
            cancel,
            handle,
            done: false,
        }
    }

    /// Ask the worker to stop; it checks between 1 MiB chunks.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The next message if one is waiting (never blocks; for an event loop).
    pub fn try_recv(&mut self) -> Option<HashMessage> {
        match self.rx.try_recv() {
            Ok(m) => {
                if matches!(m, HashMessage::Finished(_)) {
                    self.done = true;
                }
                Some(m)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) if !self.done => {
                self.done = true;
                Some(HashMessage::Finished(Err(HashError::WorkerLost)))
            }
            Err(TryRecvError::Disconnected) => None,
        }
    }

    /// Block until the job ends and return its result, ignoring progress.
    pub fn wait(mut self) -> Result<Vec<FileDigest>, HashError> {
        if self.handle.is_none() {
            return Err(HashError::WorkerLost);
        }
        loop {
            match self.rx.recv() {
                Ok(HashMessage::Finished(r)) => {
                    self.done = true;
                    return r;
                }
                Ok(_) => {}
                Err(_) => return Err(HashError::WorkerLost),
            }
        }
    }
}

impl Drop for HashJob {
    fn drop(&mut self) {
        self.cancel();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(
    paths: &[PathBuf],
    cache: Option<&HashCache>,
    cancel: &AtomicBool,
    tx: &Sender<HashMessage>,
) -> Result<Vec<FileDigest>, HashError> {
    let sizes = paths
        .iter()
        .map(|p| {
            fs::metadata(p).map(|m| m.len()).map_err(|e| HashError::Io {
                path: p.clone(),
                source: e,
            })
        })
        .collect::<Result<Vec<u64>, HashError>>()?;
    let total = sizes.iter().fold(0u64, |a, b| a.saturating_add(*b));
    let start = Instant::now();
    let mut done_before = 0u64;
    let mut out = Vec::with_capacity(paths.len());
    for (i, (path, size)) in paths.iter().zip(&sizes).enumerate() {
        if let Some(c) = cache
            && let Ok(Some(sha256)) = c.lookup(path)
        {
            let d = FileDigest {
                path: path.clone(),
                bytes: *size,
                sha256,
                from_cache: true,
            };
            done_before += size;
            let _ = tx.send(HashMessage::FileDone(d.clone()));
            out.push(d);
            continue;
        }
        let mut done_here = 0u64;
        let mut last = Instant::now();
        let progress = |done_here: u64| {
            let done = done_before + done_here;
            let secs = start.elapsed().as_secs_f64();
            let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
            HashProgress {
                file_index: i,
                files: paths.len(),
                bytes_done: done,
                total_bytes: total,
                bytes_per_s: rate,
                eta_s: (rate > 0.0).then(|| total.saturating_sub(done) as f64 / rate),
            }
        };
        let sha256 = sha256_file(path, cancel, |n| {
            done_here += n;
            if last.elapsed() >= PROGRESS_INTERVAL {
                last = Instant::now();
                let _ = tx.send(HashMessage::Progress(progress(done_here)));
            }
        })?;
        let _ = tx.send(HashMessage::Progress(progress(done_here)));
        done_before += done_here;
        if let Some(c) = cache {
            // A cache that cannot be written does not fail the hash.
            let _ = c.store(path, &sha256);
        }
        let d = FileDigest {
            path: path.clone(),
            bytes: done_here,
            sha256,
            from_cache: false,
        };
        let _ = tx.send(HashMessage::FileDone(d.clone()));
        out.push(d);
    }
    Ok(out)
}

/// One remembered digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CacheEntry {
    /// Canonical path.
    pub path: String,
    /// Size in bytes when hashed.
    pub size: u64,
    /// Modification time when hashed: seconds since the Unix epoch.
    pub mtime_s: u64,
    /// … and nanoseconds.
    pub mtime_ns: u32,
    /// Lower-case hex SHA-256.
    pub sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct CacheFile {
    version: u32,
    entries: Vec<CacheEntry>,
}

/// Digests remembered in a JSON file, keyed by canonical path, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashCache {
    path: PathBuf,
}

struct Stamp {
    path: String,
    size: u64,
    mtime_s: u64,
    mtime_ns: u32,
}

fn stamp(file: &Path) -> io::Result<Stamp> {
    let canonical = fs::canonicalize(file)?;
    let meta = fs::metadata(&canonical)?;
    let mtime = meta
        .modified()?
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Ok(Stamp {
        path: canonical.to_string_lossy().into_owned(),
        size: meta.len(),
        mtime_s: mtime.as_secs(),
        mtime_ns: mtime.subsec_nanos(),
    })
}

impl HashCache {
    /// The platform cache file: `<cache dir>/hashes.json` of `ProjectDirs("", "", "llmbound")`.
    pub fn default_location() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "llmbound")
            .map(|d| d.cache_dir().join("hashes.json"))
    }

    /// The cache at the platform location, if the platform has one.
    pub fn platform() -> Option<HashCache> {
        HashCache::default_location().map(HashCache::at)
    }

    /// A cache stored in `path`.
    pub fn at(path: impl Into<PathBuf>) -> HashCache {
        HashCache { path: path.into() }
    }

    /// Where the cache is stored.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, detail: impl Into<String>) -> HashError {
        HashError::Cache {
            path: self.path.clone(),
            detail: detail.into(),
        }
    }

    fn load(&self) -> Result<CacheFile, HashError> {
        match fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| self.err(format!("not a valid cache file: {e}"))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(CacheFile {
                version: 1,
                entries: Vec::new(),
            }),
            Err(e) => Err(self.err(e.to_string())),
        }
    }

    /// The remembered digest of `file` if its size and modification time are unchanged.
    pub fn lookup(&self, file: &Path) -> Result<Option<String>, HashError> {
        let s = stamp(file).map_err(|e| HashError::Io {
            path: file.to_path_buf(),
            source: e,
        })?;
        Ok(self.load()?.entries.into_iter().find_map(|e| {
            (e.path == s.path
                && e.size == s.size
                && e.mtime_s == s.mtime_s
                && e.mtime_ns == s.mtime_ns)
                .then_some(e.sha256)
        }))
    }

    /// Remember `sha256` for `file` (replacing an older entry for the same path). Written to a
    /// temporary file in the same folder and renamed over the cache, so a reader never sees
    /// a half-written cache.
    pub fn store(&self, file: &Path, sha256: &str) -> Result<(), HashError> {
        let s = stamp(file).map_err(|e| HashError::Io {
            path: file.to_path_buf(),
            source: e,
        })?;
        let mut cache = self.load().unwrap_or_default();
        cache.version = 1;
        cache.entries.retain(|e| e.path != s.path);
        cache.entries.push(CacheEntry {
            path: s.path,
            size: s.size,
            mtime_s: s.mtime_s,
            mtime_ns: s.mtime_ns,
            sha256: sha256.to_string(),
        });
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.err(e.to_string()))?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let tmp = dir.join(format!(".hashes.{}.{nanos}.tmp", std::process::id()));
        let json = serde_json::to_vec_pretty(&cache).map_err(|e| self.err(e.to_string()))?;
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&json)?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            self.err(e.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        let never = AtomicBool::new(false);
        let d = sha256_reader(&b""[..], &never, |_| {}).unwrap().unwrap();
        assert_eq!(
            hex(&d),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let d = sha256_reader(&b"abc"[..], &never, |_| {}).unwrap().unwrap();
        assert_eq!(
            hex(&d),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cancelled_before_start() {
        let stop = AtomicBool::new(true);
        assert_eq!(sha256_reader(&b"abc"[..], &stop, |_| {}).unwrap(), None);
    }
}
