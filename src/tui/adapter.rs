//! The thin layer between the explorer and the GGUF reader: a read file becomes the rows the
//! views show, and hashing reports progress as `HashUpdate`s. Runs on worker threads.

use super::file::{HashUpdate, Loaded};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Read a GGUF file's header (and its shards) into what the explorer shows.
pub fn load(path: &Path) -> Result<Loaded, String> {
    Err(format!(
        "cannot open \"{}\": this build has no GGUF reader",
        path.display()
    ))
}

/// Load every element of a long metadata array as text.
pub fn load_array(path: &Path, key: &str) -> Result<Vec<String>, String> {
    Err(format!("cannot load \"{key}\" from \"{}\"", path.display()))
}

/// Bytes read per chunk (cancellation is checked between chunks).
const CHUNK: usize = 1 << 20;
/// Progress is reported at most this often.
const EVERY: Duration = Duration::from_millis(100);

/// SHA-256 of each file in order, with progress, stopping when `cancel` is set.
pub fn hash(paths: &[PathBuf], cancel: &AtomicBool, send: &dyn Fn(HashUpdate)) {
    let total: u64 = paths
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .sum();
    let start = Instant::now();
    let mut last = start;
    let mut done = 0u64;
    let mut digests = Vec::with_capacity(paths.len());
    let mut buf = vec![0u8; CHUNK];
    for p in paths {
        let mut f = match std::fs::File::open(p) {
            Ok(f) => f,
            Err(e) => return send(HashUpdate::Failed(format!("cannot read \"{}\" for hashing: {e}", p.display()))),
        };
        let mut h = Sha256::new();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return send(HashUpdate::Cancelled);
            }
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return send(HashUpdate::Failed(format!("read error in \"{}\": {e}", p.display()))),
            };
            h.update(&buf[..n]);
            done += n as u64;
            if last.elapsed() >= EVERY {
                last = Instant::now();
                let secs = start.elapsed().as_secs_f64().max(1e-6);
                let rate = done as f64 / secs;
                send(HashUpdate::Progress {
                    done,
                    total,
                    bytes_per_s: rate,
                    eta_s: (rate > 0.0).then(|| total.saturating_sub(done) as f64 / rate),
                });
            }
        }
        digests.push(h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>());
    }
    send(HashUpdate::Done(digests));
}
