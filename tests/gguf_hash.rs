//! SHA-256 on a worker thread: digests per file in order, progress, cancellation, and the
//! digest cache keyed by canonical path, size and modification time.

use llmbound::gguf::hash::{HashCache, HashError, HashJob, HashMessage, hex};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(dir: &Path, name: &str, len: usize, seed: u8) -> (PathBuf, String) {
    let data: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    let p = dir.join(name);
    fs::write(&p, &data).unwrap();
    (p, hex(&Sha256::digest(&data)))
}

#[test]
fn digests_per_file_in_order_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (a, ha) = write(dir.path(), "m-00001-of-00002.gguf", 3 * 1024 * 1024 + 17, 1);
    let (b, hb) = write(dir.path(), "m-00002-of-00002.gguf", 1000, 2);
    let mut job = HashJob::spawn(vec![a.clone(), b.clone()]);
    let mut last_done = 0;
    let mut files = Vec::new();
    let result = loop {
        match job.try_recv() {
            Some(HashMessage::Progress(p)) => {
                assert!(p.bytes_done >= last_done);
                assert_eq!(p.total_bytes, 3 * 1024 * 1024 + 17 + 1000);
                assert_eq!(p.files, 2);
                last_done = p.bytes_done;
            }
            Some(HashMessage::FileDone(d)) => files.push(d),
            Some(HashMessage::Finished(r)) => break r.unwrap(),
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    assert_eq!(last_done, 3 * 1024 * 1024 + 17 + 1000);
    assert_eq!(result.len(), 2);
    assert_eq!((result[0].path.clone(), result[0].sha256.clone()), (a, ha));
    assert_eq!((result[1].path.clone(), result[1].sha256.clone()), (b, hb));
    assert_eq!(files, result);
    assert!(result.iter().all(|d| !d.from_cache));
}

#[test]
fn cancel_stops_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.gguf");
    fs::File::create(&p).unwrap().set_len(4 << 30).unwrap();
    let job = HashJob::spawn(vec![p]);
    job.cancel();
    assert!(matches!(job.wait(), Err(HashError::Cancelled)));
}

#[test]
fn a_missing_file_is_an_error() {
    let job = HashJob::spawn(vec![PathBuf::from("/nonexistent/x.gguf")]);
    let msg = job.wait().unwrap_err().to_string();
    assert!(msg.contains("\"/nonexistent/x.gguf\""), "{msg}");
}

#[test]
fn cache_by_path_size_and_mtime() {
    let dir = tempfile::tempdir().unwrap();
    let (p, h) = write(dir.path(), "m.gguf", 5000, 3);
    let cache = HashCache::at(dir.path().join("cache/hashes.json"));
    assert_eq!(cache.lookup(&p).unwrap(), None);
    // A file changed within the last second is hashed but not cached (a write in the same
    // clock tick as the read would leave its times unchanged): let that second pass.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let first = HashJob::spawn_with_cache(vec![p.clone()], Some(cache.clone()))
        .wait()
        .unwrap();
    assert!(!first[0].from_cache);
    assert_eq!(cache.lookup(&p).unwrap(), Some(h.clone()));
    // Through a different spelling of the same path.
    let other = dir.path().join(".").join("m.gguf");
    assert_eq!(cache.lookup(&other).unwrap(), Some(h.clone()));
    let second = HashJob::spawn_with_cache(vec![p.clone()], Some(cache.clone()))
        .wait()
        .unwrap();
    assert!(second[0].from_cache);
    assert_eq!(second[0].sha256, h);
    // A changed file is not found.
    fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(4000)
        .unwrap();
    assert_eq!(cache.lookup(&p).unwrap(), None);
    // Storing again replaces the entry; no temporary files are left behind.
    cache.store(&p, "00").unwrap();
    assert_eq!(cache.lookup(&p).unwrap(), Some("00".into()));
    let left: Vec<_> = fs::read_dir(dir.path().join("cache")).unwrap().collect();
    assert_eq!(left.len(), 1);
    let text = fs::read_to_string(cache.path()).unwrap();
    assert_eq!(text.matches("\"sha256\"").count(), 1);
}

#[test]
fn a_corrupt_cache_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = write(dir.path(), "m.gguf", 10, 4);
    let path = dir.path().join("hashes.json");
    fs::write(&path, b"not json").unwrap();
    let msg = HashCache::at(&path).lookup(&p).unwrap_err().to_string();
    assert!(msg.contains("not a valid cache file"), "{msg}");
}

#[test]
fn platform_location() {
    if let Some(p) = HashCache::default_location() {
        assert!(p.ends_with("hashes.json"));
    }
}
