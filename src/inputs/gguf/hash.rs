//! SHA-256 of artifact files on a worker thread, with progress messages and cancellation, and
//! a cache of digests keyed by canonical path, device, inode, size, and modification and
//! status-change times in nanoseconds. A digest is cached only when the file's stat is the
//! same before and after the full read (a write during hashing is reported, not cached) and
//! the file was not changed within the last second before the read (a change in the same
//! clock tick would leave the times equal). A split model is hashed file by file (pinned
//! hashes are per file), in shard order.
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
    /// The file changed (size, times, inode) while it was being read.
    #[error(
        "\"{path}\" changed while it was being read; the digest describes no single version of it (hash again when nothing writes to it)"
    )]
    Changed {
        /// The file.
        path: PathBuf,
    },
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
    /// When the file was last read in full (seconds since the Unix epoch): now for a fresh
    /// digest, the time of that read for a cached one (`None` for entries of old caches).
    pub read_at_s: Option<u64>,
}

/// `2026-12-01 00:12:03 UTC` for seconds since the Unix epoch (proleptic Gregorian;
/// hand-written to avoid a date crate for one format).
pub fn fmt_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
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

/// Bytes of one read handed from the reading thread to the hashing one: small enough that a
/// buffer is still in the CPU cache when it is hashed (1 MiB buffers went through memory
/// twice, once for the kernel's copy and once for the hash).
pub const PIPE_BUFFER_BYTES: usize = 256 * 1024;
/// Buffers in flight between the two threads.
const PIPE_BUFFERS: usize = 4;

/// SHA-256 of everything `r` yields, read in `CHUNK_BYTES` chunks; `on_chunk(n)` after each
/// chunk of n bytes; stops with `Cancelled` when `cancel` is set. The reads run on a thread
/// of their own while this one hashes (reading from the page cache and hashing then overlap:
/// `openssl dgst` does one after the other), `PIPE_BUFFERS` buffers of `PIPE_BUFFER_BYTES`.
pub fn sha256_reader<R: Read + Send>(
    mut r: R,
    cancel: &AtomicBool,
    mut on_chunk: impl FnMut(u64),
) -> io::Result<Option<[u8; 32]>> {
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(PIPE_BUFFERS);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<u8>>(PIPE_BUFFERS);
    for _ in 0..PIPE_BUFFERS {
        let _ = empty_tx.send(vec![0u8; PIPE_BUFFER_BYTES]);
    }
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // Ends when the file does, on an error, or when the hasher stops taking buffers.
            while let Ok(mut buf) = empty_rx.recv() {
                let n = loop {
                    match r.read(&mut buf) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                let end = matches!(n, Ok(0) | Err(_));
                if full_tx.send(n.map(|n| (buf, n))).is_err() || end {
                    return;
                }
            }
        });
        let mut hasher = Sha256::new();
        let mut since = 0u64;
        let result = loop {
            if cancel.load(Ordering::Relaxed) {
                break Ok(None);
            }
            match full_rx.recv() {
                Ok(Ok((_, 0))) | Err(_) => break Ok(Some(())),
                Ok(Ok((buf, n))) => {
                    hasher.update(&buf[..n]);
                    let _ = empty_tx.send(buf);
                    since += n as u64;
                    if since >= CHUNK_BYTES as u64 {
                        on_chunk(since);
                        since = 0;
                    }
                }
                Ok(Err(e)) => break Err(e),
            }
        };
        // Stop the reader (it may wait for a buffer or to hand one over).
        drop(empty_tx);
        drop(full_rx);
        if since > 0 && matches!(result, Ok(Some(()))) {
            on_chunk(since);
        }
        result.map(|o| o.map(|()| hasher.finalize().into()))
    })
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
    crate::infile::check_regular_or_block(path).map_err(io_err)?;
    let file = File::open(path).map_err(io_err)?;
    match sha256_reader(file, cancel, on_chunk).map_err(io_err)? {
        Some(d) => Ok(hex(&d)),
        None => Err(HashError::Cancelled),
    }
}

/// SHA-256 of a file, checked against change: the file's stat (device, inode, size, mtime,
/// ctime) is taken before and after the read and must be equal, else `HashError::Changed`.
/// Returns the digest and the stat it describes.
pub fn sha256_file_checked(
    path: &Path,
    cancel: &AtomicBool,
    on_chunk: impl FnMut(u64),
) -> Result<(String, Stamp), HashError> {
    let io_err = |e| HashError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    crate::infile::check_regular_or_block(path).map_err(io_err)?;
    let before = stamp(path).map_err(io_err)?;
    let digest = sha256_file(path, cancel, on_chunk)?;
    let after = stamp(path).map_err(io_err)?;
    if before != after {
        return Err(HashError::Changed {
            path: path.to_path_buf(),
        });
    }
    Ok((digest, before))
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

    /// Hash `paths`, taking digests from the cache at `cache` when the file's stat still
    /// matches, and storing new ones there (a cache made with [`HashCache::write_only`] is
    /// not read: `--no-cache` replaces the entry with its fresh result).
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

/// Files hashed at once: one per two cores beyond the first two (each file takes a reading
/// and a hashing thread), at most 4; a single file, or a machine of 2 cores, hashes in order.
pub fn parallel_files(files: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).clamp(1, 4).min(files.max(1))
}

fn run(
    paths: &[PathBuf],
    cache: Option<&HashCache>,
    cancel: &AtomicBool,
    tx: &Sender<HashMessage>,
) -> Result<Vec<FileDigest>, HashError> {
    run_with(paths, cache, cancel, tx, parallel_files(paths.len()))
}

fn run_with(
    paths: &[PathBuf],
    cache: Option<&HashCache>,
    cancel: &AtomicBool,
    tx: &Sender<HashMessage>,
    workers: usize,
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
    let done = std::sync::atomic::AtomicU64::new(0);
    let last = std::sync::Mutex::new(Instant::now());
    let progress = |i: usize| {
        let done = done.load(Ordering::Relaxed);
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
    // A failure in one file stops the others (through the job's own cancel flag: the
    // failure, not a cancellation, is what the job reports).
    let stop = cancel;
    let hash_one = |i: usize| -> Result<FileDigest, HashError> {
        let (path, size) = (&paths[i], sizes[i]);
        if let Some(c) = cache
            && let Ok(Some(e)) = c.lookup_entry(path)
        {
            done.fetch_add(size, Ordering::Relaxed);
            return Ok(FileDigest {
                path: path.clone(),
                bytes: size,
                sha256: e.sha256,
                from_cache: true,
                read_at_s: e.read_at_s,
            });
        }
        let mut done_here = 0u64;
        let (sha256, st) = sha256_file_checked(path, cancel, |n| {
            done_here += n;
            done.fetch_add(n, Ordering::Relaxed);
            if let Ok(mut l) = last.try_lock()
                && l.elapsed() >= PROGRESS_INTERVAL
            {
                *l = Instant::now();
                let _ = tx.send(HashMessage::Progress(progress(i)));
            }
        })?;
        let read_at_s = now_s();
        if let Some(c) = cache
            && st.is_regular
            && !st.racy()
        {
            // A cache that cannot be written does not fail the hash.
            let _ = c.store_stamped(&st, &sha256, read_at_s);
        }
        Ok(FileDigest {
            path: path.clone(),
            bytes: done_here,
            sha256,
            from_cache: false,
            read_at_s: Some(read_at_s),
        })
    };
    let mut results: Vec<Option<Result<FileDigest, HashError>>> =
        (0..paths.len()).map(|_| None).collect();
    if workers <= 1 {
        for (i, slot) in results.iter_mut().enumerate() {
            let r = hash_one(i);
            let failed = r.is_err();
            if let Ok(d) = &r {
                let _ = tx.send(HashMessage::Progress(progress(i)));
                let _ = tx.send(HashMessage::FileDone(d.clone()));
            }
            *slot = Some(r);
            if failed {
                break;
            }
        }
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<FileDigest, HashError>>>> = (0..paths.len())
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        std::thread::scope(|sc| {
            for _ in 0..workers {
                sc.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= paths.len() || stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let r = hash_one(i);
                        match &r {
                            Ok(d) => {
                                let _ = tx.send(HashMessage::Progress(progress(i)));
                                let _ = tx.send(HashMessage::FileDone(d.clone()));
                            }
                            Err(_) => stop.store(true, Ordering::Relaxed),
                        }
                        if let Ok(mut s) = slots[i].lock() {
                            *s = Some(r);
                        }
                    }
                });
            }
        });
        for (slot, m) in results.iter_mut().zip(slots) {
            *slot = m.into_inner().ok().flatten();
        }
    }
    // In shard order: the first failure (a cancellation only when nothing else failed).
    let mut out = Vec::with_capacity(paths.len());
    let mut cancelled = false;
    for r in results {
        match r {
            Some(Ok(d)) => out.push(d),
            Some(Err(HashError::Cancelled)) => cancelled = true,
            Some(Err(e)) => return Err(e),
            None => cancelled = true,
        }
    }
    if cancelled {
        return Err(HashError::Cancelled);
    }
    Ok(out)
}

/// One remembered digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CacheEntry {
    /// Canonical path.
    pub path: String,
    /// Device id (`st_dev`) when hashed.
    pub dev: u64,
    /// Inode number (`st_ino`) when hashed.
    pub ino: u64,
    /// Size in bytes when hashed.
    pub size: u64,
    /// Modification time when hashed: seconds since the Unix epoch.
    pub mtime_s: i64,
    /// … and nanoseconds.
    pub mtime_ns: i64,
    /// Status-change time when hashed (`st_ctime`; `touch -r` cannot set it back).
    pub ctime_s: i64,
    /// … and nanoseconds.
    pub ctime_ns: i64,
    /// When the file was last read in full: seconds since the Unix epoch.
    #[serde(default)]
    pub read_at_s: Option<u64>,
    /// Lower-case hex SHA-256.
    pub sha256: String,
}

/// Cache format version; files of another version are ignored (and replaced on the next store).
const CACHE_VERSION: u32 = 2;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct CacheFile {
    version: u32,
    #[serde(default)]
    entries: Vec<serde_json::Value>,
}

impl CacheFile {
    fn entries(&self) -> Vec<CacheEntry> {
        if self.version != CACHE_VERSION {
            return Vec::new();
        }
        self.entries
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect()
    }
}

/// Digests remembered in a JSON file, keyed by canonical path, device, inode, size, mtime
/// and ctime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashCache {
    path: PathBuf,
    read: bool,
}

/// What a cache entry is keyed on: the file's identity and stat, nanoseconds included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    path: String,
    dev: u64,
    ino: u64,
    size: u64,
    mtime_s: i64,
    mtime_ns: i64,
    ctime_s: i64,
    ctime_ns: i64,
    is_regular: bool,
}

/// A change this close (seconds) before the read may share its clock tick with a write
/// during the read; such a digest is returned but not cached.
const RACY_S: i64 = 1;

impl Stamp {
    fn racy(&self) -> bool {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        ns(self.mtime_s, self.mtime_ns).max(ns(self.ctime_s, self.ctime_ns)) >= now - ns(RACY_S, 0)
    }

    fn matches(&self, e: &CacheEntry) -> bool {
        e.path == self.path
            && e.dev == self.dev
            && e.ino == self.ino
            && e.size == self.size
            && e.mtime_s == self.mtime_s
            && e.mtime_ns == self.mtime_ns
            && e.ctime_s == self.ctime_s
            && e.ctime_ns == self.ctime_ns
    }
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The stat a cache entry is keyed on (symlinks followed, path made canonical).
pub fn stamp(file: &Path) -> io::Result<Stamp> {
    let canonical = fs::canonicalize(file)?;
    let meta = fs::metadata(&canonical)?;
    #[cfg(unix)]
    let (dev, ino, mtime_s, mtime_ns, ctime_s, ctime_ns) = {
        use std::os::unix::fs::MetadataExt;
        (
            meta.dev(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        )
    };
    #[cfg(not(unix))]
    let (dev, ino, mtime_s, mtime_ns, ctime_s, ctime_ns) = {
        let t = |r: io::Result<SystemTime>| {
            r.ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .unwrap_or_default()
        };
        let m = t(meta.modified());
        let c = t(meta.created());
        (
            0,
            0,
            m.as_secs() as i64,
            i64::from(m.subsec_nanos()),
            c.as_secs() as i64,
            i64::from(c.subsec_nanos()),
        )
    };
    Ok(Stamp {
        path: canonical.to_string_lossy().into_owned(),
        dev,
        ino,
        size: meta.len(),
        mtime_s,
        mtime_ns,
        ctime_s,
        ctime_ns,
        is_regular: meta.is_file(),
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
        HashCache {
            path: path.into(),
            read: true,
        }
    }

    /// The same cache, never read but still written (`hash --no-cache`: the fresh digest
    /// replaces the entry).
    pub fn write_only(self) -> HashCache {
        HashCache {
            read: false,
            ..self
        }
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
        match crate::infile::read_bytes(
            &self.path,
            crate::infile::HASH_CACHE_CAP_BYTES,
            "the hash cache",
        ) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| self.err(format!("not a valid cache file: {e}"))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(CacheFile {
                version: CACHE_VERSION,
                entries: Vec::new(),
            }),
            Err(e) => Err(self.err(e.to_string())),
        }
    }

    /// The remembered digest of `file` if its device, inode, size, mtime and ctime are
    /// unchanged.
    pub fn lookup(&self, file: &Path) -> Result<Option<String>, HashError> {
        Ok(self.lookup_entry(file)?.map(|e| e.sha256))
    }

    /// The remembered entry of `file` if its device, inode, size, mtime and ctime are
    /// unchanged (never for a cache made with [`HashCache::write_only`]).
    pub fn lookup_entry(&self, file: &Path) -> Result<Option<CacheEntry>, HashError> {
        if !self.read {
            return Ok(None);
        }
        let s = stamp(file).map_err(|e| HashError::Io {
            path: file.to_path_buf(),
            source: e,
        })?;
        if !s.is_regular {
            return Ok(None);
        }
        Ok(self.load()?.entries().into_iter().find(|e| s.matches(e)))
    }

    /// Remember `sha256` for `file` as it is now (replacing an older entry for the same path).
    /// The caller vouches that the digest describes the file's current contents; hashing
    /// jobs store the stat taken before their read instead ([`HashCache::store_stamped`]).
    pub fn store(&self, file: &Path, sha256: &str) -> Result<(), HashError> {
        let s = stamp(file).map_err(|e| HashError::Io {
            path: file.to_path_buf(),
            source: e,
        })?;
        self.store_stamped(&s, sha256, now_s())
    }

    /// Remember `sha256` for the file whose stat was `s`, read in full at `read_at_s`.
    /// Written to a temporary file in the same folder and renamed over the cache, so a reader
    /// never sees a half-written cache.
    pub fn store_stamped(&self, s: &Stamp, sha256: &str, read_at_s: u64) -> Result<(), HashError> {
        let old = self.load().unwrap_or_default();
        let mut entries = old.entries();
        entries.retain(|e| e.path != s.path);
        entries.push(CacheEntry {
            path: s.path.clone(),
            dev: s.dev,
            ino: s.ino,
            size: s.size,
            mtime_s: s.mtime_s,
            mtime_ns: s.mtime_ns,
            ctime_s: s.ctime_s,
            ctime_ns: s.ctime_ns,
            read_at_s: Some(read_at_s),
            sha256: sha256.to_string(),
        });
        let cache = CacheFile {
            version: CACHE_VERSION,
            entries: entries
                .iter()
                .filter_map(|e| serde_json::to_value(e).ok())
                .collect(),
        };
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
    fn shards_hashed_in_parallel_equal_shards_hashed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..5u8)
            .map(|i| {
                let p = dir.path().join(format!("s{i}"));
                fs::write(&p, vec![i; 300_000 + usize::from(i) * 7]).unwrap();
                p
            })
            .collect();
        let never = AtomicBool::new(false);
        let (tx, _rx) = mpsc::channel();
        let one = run_with(&paths, None, &never, &tx, 1).unwrap();
        let three = run_with(&paths, None, &never, &tx, 3).unwrap();
        // (when each shard was read is the clock's: the two runs may straddle a second)
        let digests = |d: &[FileDigest]| {
            d.iter()
                .map(|x| (x.path.clone(), x.bytes, x.sha256.clone(), x.from_cache))
                .collect::<Vec<_>>()
        };
        assert_eq!(digests(&one), digests(&three));
        assert_eq!(
            one.iter().map(|d| d.path.clone()).collect::<Vec<_>>(),
            paths
        );
        // A shard that cannot be hashed (a folder) fails the job with its own error, in
        // parallel too (the other workers stop).
        let mut bad = paths.clone();
        bad[3] = dir.path().join("a-folder");
        fs::create_dir(&bad[3]).unwrap();
        for workers in [1, 3] {
            match run_with(&bad, None, &never, &tx, workers) {
                Err(HashError::Io { path, .. }) => assert_eq!(path, bad[3]),
                other => panic!("{workers}: {other:?}"),
            }
        }
        // Cancelled before the start: cancelled, in parallel too.
        let cancel = AtomicBool::new(true);
        assert!(matches!(
            run_with(&paths, None, &cancel, &tx, 3),
            Err(HashError::Cancelled)
        ));
    }

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
    fn utc_dates() {
        assert_eq!(fmt_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(fmt_utc(951_782_400 + 3723), "2000-02-29 01:02:03 UTC");
        assert_eq!(fmt_utc(1_796_001_791), "2026-11-30 01:23:11 UTC");
    }

    #[test]
    fn cancelled_before_start() {
        let stop = AtomicBool::new(true);
        assert_eq!(sha256_reader(&b"abc"[..], &stop, |_| {}).unwrap(), None);
    }
}
