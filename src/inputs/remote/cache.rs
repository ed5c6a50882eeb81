//! The optional header cache: a folder named by `LLMBOUND_HEADER_CACHE` (off when unset). Each
//! entry holds the first bytes of one remote file, keyed by its URL, the server's ETag and the
//! file's size, so a second reading of an unchanged file needs only the first request.
//!
//! The folder may be shared or writable by others, so nothing in it is trusted:
//! - entries are read through `infile::read_bytes` (regular files only, at most the header
//!   cap: a FIFO, a link to `/dev/zero` or a huge file is not read);
//! - an entry is used only when its HMAC-SHA256, under a secret key kept in the user's
//!   configuration folder (`header-cache.key`, never in the cache folder), covers its URL,
//!   ETag, size and every byte, and its start equals the bytes just fetched: an entry
//!   changed or written by anyone else (even self-consistently) is never used;
//! - entries are written to a temporary file created exclusively (`O_EXCL`, so a planted
//!   symbolic link is never followed) under an unpredictable name, then renamed.
//!
//! Hand-written HMAC (RFC 2104) over `sha2`: a few lines, no new dependency.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::PathBuf;

const MAGIC: &[u8; 8] = b"LLMBHC2\n";
const KEY_FILE: &str = "header-cache.key";

/// The cache folder, when `LLMBOUND_HEADER_CACHE` names one.
pub fn dir() -> Option<PathBuf> {
    crate::infile::env_dir("LLMBOUND_HEADER_CACHE")
}

/// What an entry is for: the URL named, the server's ETag and the file's complete size.
pub struct Key<'a> {
    /// The URL the user named.
    pub url: &'a str,
    /// The server's ETag.
    pub etag: &'a str,
    /// The complete size the server gave.
    pub size: u64,
}

impl Key<'_> {
    fn id(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for part in [self.url.as_bytes(), self.etag.as_bytes()] {
            v.extend_from_slice(&(part.len() as u64).to_le_bytes());
            v.extend_from_slice(part);
        }
        v.extend_from_slice(&self.size.to_le_bytes());
        v
    }

    fn file_name(&self) -> String {
        format!("{}.bin", crate::gguf::hash::hex(&Sha256::digest(self.id())))
    }
}

fn hmac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut k = [0u8; 64];
    k[..32].copy_from_slice(key);
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// 16 unpredictable bytes: the OS's random source, else hashers keyed by it (std's
/// `RandomState`), the time and the process id.
fn random16() -> [u8; 16] {
    let mut out = [0u8; 16];
    if let Ok(f) = std::fs::File::open("/dev/urandom")
        && f.take(16).read_exact(&mut out).is_ok()
    {
        return out;
    }
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let h =
            std::collections::hash_map::RandomState::new().hash_one((now, std::process::id(), i));
        chunk.copy_from_slice(&h.to_le_bytes());
    }
    out
}

fn create_exclusive(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// The user's secret key (created on first use), when there is a configuration folder.
fn secret() -> Option<[u8; 32]> {
    let dir = crate::profile::load::user_dir()?;
    let path = dir.join(KEY_FILE);
    let read = |p: &std::path::Path| {
        crate::infile::read_bytes(p, 64, "a header cache key")
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
    };
    if let Some(k) = read(&path) {
        return Some(k);
    }
    if path.symlink_metadata().is_ok() {
        // Something else is there (a wrong size, a link, a folder): the cache stays unused.
        return None;
    }
    std::fs::create_dir_all(&dir).ok()?;
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&random16());
    key[16..].copy_from_slice(&random16());
    match create_exclusive(&path) {
        Ok(mut f) => {
            f.write_all(&key).ok()?;
            f.sync_all().ok()?;
            Some(key)
        }
        // Another llmbound created it first.
        Err(_) => read(&path),
    }
}

/// The cached bytes of `key` when an entry exists, verifies, starts with `first` and is at
/// most `cap` bytes; `None` otherwise (nothing in the folder is trusted).
pub fn load(key: &Key, first: &[u8], cap: u64) -> Option<Vec<u8>> {
    let path = dir()?.join(key.file_name());
    let raw = crate::infile::read_bytes(&path, cap + 48, "a header cache entry").ok()?;
    let (magic, rest) = raw.split_at_checked(8)?;
    let (mac, rest) = rest.split_at_checked(32)?;
    let (len, bytes) = rest.split_at_checked(8)?;
    if magic != MAGIC || u64::from_le_bytes(len.try_into().ok()?) != bytes.len() as u64 {
        return None;
    }
    if bytes.len() < first.len() || bytes[..first.len()] != *first || bytes.len() as u64 > cap {
        return None;
    }
    let want = hmac(&secret()?, &[&key.id(), len, bytes]);
    (want[..] == *mac).then(|| bytes.to_vec())
}

/// Save `bytes` as the entry of `key` (errors ignored: the cache only saves transfers).
pub fn store(key: &Key, bytes: &[u8]) {
    let (Some(dir), Some(secret)) = (dir(), secret()) else {
        return;
    };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let name = key.file_name();
    let tmp = dir.join(format!(
        ".{name}.{}.tmp",
        crate::gguf::hash::hex(&random16())
    ));
    let len = (bytes.len() as u64).to_le_bytes();
    let mac = hmac(&secret, &[&key.id(), &len, bytes]);
    let written = create_exclusive(&tmp).and_then(|mut f| {
        f.write_all(MAGIC)?;
        f.write_all(&mac)?;
        f.write_all(&len)?;
        f.write_all(bytes)?;
        f.flush()
    });
    if written.is_err() || std::fs::rename(&tmp, dir.join(&name)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_style_vectors() {
        // HMAC-SHA256 with a 32-byte key of 0x0b and "Hi There" (checked with openssl:
        // `printf 'Hi There' | openssl dgst -sha256 -mac HMAC -macopt hexkey:0b…0b`).
        let mac = hmac(&[0x0b; 32], &[b"Hi ", b"There"]);
        assert_eq!(
            crate::gguf::hash::hex(&mac),
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
    }
}
