//! Opening inputs safely: only regular files (and block devices where a caller allows them)
//! are opened, checked with `metadata` *before* `open` — opening a FIFO blocks until a writer
//! comes, and `/dev/zero` never ends — and every text input is read through a size cap.
//! Depends on: core.

use std::fs::{self, File, FileType, Metadata};
use std::io::{self, Read};
use std::path::Path;

// Hand-written: a metadata check before open and a `take` are a few lines; no crate does
// exactly this (`same-file`/`fs-err` open first, which is what blocks on a FIFO).

/// Largest profile or scenario TOML read: 1 MiB (the shipped ones are under 8 KiB).
pub const PROFILE_CAP_BYTES: u64 = 1 << 20;
/// Largest llama-bench result file read: 64 MiB (about 100,000 rows of `-o json`).
pub const BENCH_CAP_BYTES: u64 = 64 << 20;
/// Largest hash cache read: 16 MiB (about 50,000 entries).
pub const HASH_CACHE_CAP_BYTES: u64 = 16 << 20;

/// What kind of file this is, for a message ("a FIFO", "a directory", …).
pub fn kind_name(t: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// True for a block device (a disk holding an image, for `hash`).
pub fn is_block_device(t: &FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        t.is_block_device()
    }
    #[cfg(not(unix))]
    {
        let _ = t;
        false
    }
}

fn not_regular(t: &FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({})", kind_name(t)),
    )
}

/// The metadata of `path` (symlinks followed) when it is a regular file; an error saying
/// what it is otherwise. Never opens the file.
pub fn check_regular(path: &Path) -> io::Result<Metadata> {
    let m = fs::metadata(path)?;
    if m.is_file() {
        Ok(m)
    } else {
        Err(not_regular(&m.file_type()))
    }
}

/// As [`check_regular`], also accepting a block device.
pub fn check_regular_or_block(path: &Path) -> io::Result<Metadata> {
    let m = fs::metadata(path)?;
    if m.is_file() || is_block_device(&m.file_type()) {
        Ok(m)
    } else {
        Err(not_regular(&m.file_type()))
    }
}

/// Open `path` for reading after checking it is a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    check_regular(path)?;
    File::open(path)
}

/// Read a regular file of at most `cap` bytes as UTF-8 text; `what` names the kind of input
/// in the message when it is larger ("a profile", "a llama-bench result file").
pub fn read_text(path: &Path, cap: u64, what: &str) -> io::Result<String> {
    let bytes = read_bytes(path, cap, what)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Read a regular file of at most `cap` bytes (through `Read::take(cap + 1)`, so a file that
/// grows while being read is still bounded).
pub fn read_bytes(path: &Path, cap: u64, what: &str) -> io::Result<Vec<u8>> {
    let m = check_regular(path)?;
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than the {} MiB limit for {what} ({} bytes)",
                cap >> 20,
                crate::core::units::group_digits(cap as u128)
            ),
        )
    };
    if m.len() > cap {
        return Err(too_big());
    }
    let mut buf = Vec::with_capacity(m.len() as usize);
    File::open(path)?.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(buf)
}

/// Why a path cannot become part of a URL or a file path (every message says a name must stay
/// inside its repository or store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unconfined {
    /// Nothing given.
    #[error("an empty path (a name must stay inside its repository or store)")]
    Empty,
    /// A path from the root, or a URL.
    #[error("an absolute path (a name must stay inside its repository or store)")]
    Absolute,
    /// A backslash or a control character.
    #[error(
        "a backslash or control character in a path (a name must stay inside its repository or store)"
    )]
    Character,
    /// A `.`, `..` or empty segment.
    #[error("a `.`, `..` or empty path segment (a name must stay inside its repository or store)")]
    Segment,
}

/// Why `path` (a path in a repository, a name from a listing or a store) cannot become part
/// of a URL or a file path: empty, absolute, a `.`, `..` or empty segment, a backslash or a
/// control character. `Ok` when every segment stays inside.
pub fn confined(path: &str) -> Result<(), Unconfined> {
    if path.is_empty() {
        return Err(Unconfined::Empty);
    }
    if path.starts_with('/') || path.starts_with('\\') || path.contains(":/") {
        return Err(Unconfined::Absolute);
    }
    if path.contains('\\') || path.chars().any(|c| c.is_control()) {
        return Err(Unconfined::Character);
    }
    if path
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err(Unconfined::Segment);
    }
    Ok(())
}

/// A folder named by an environment variable, when it is set and not empty.
pub fn env_dir(var: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

/// The user's home folder (`$HOME`, when set and not empty).
pub fn home() -> Option<std::path::PathBuf> {
    env_dir("HOME")
}

/// Call `f` on every regular file under `dir`, at most `depth` levels down (symbolic links to
/// files are followed, to folders not, so a loop cannot hang the walk).
pub fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    walk_noting(dir, depth, f, &mut |_, _| {});
}

/// As [`walk`], calling `unreadable(folder, error)` for every folder that cannot be listed
/// (a folder that does not exist at the top is not reported: a store that is not there).
pub fn walk_noting(
    dir: &Path,
    depth: usize,
    f: &mut dyn FnMut(&Path),
    unreadable: &mut dyn FnMut(&Path, &io::Error),
) {
    walk_inner(dir, depth, f, unreadable, true);
}

fn walk_inner(
    dir: &Path,
    depth: usize,
    f: &mut dyn FnMut(&Path),
    unreadable: &mut dyn FnMut(&Path, &io::Error),
    top: bool,
) {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            if !(top && e.kind() == io::ErrorKind::NotFound) {
                unreadable(dir, &e);
            }
            return;
        }
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if depth > 0 {
                walk_inner(&p, depth - 1, f, unreadable, false);
            }
        } else if ft.is_file() || (ft.is_symlink() && p.is_file()) {
            f(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn special_files_are_named_not_opened() {
        let e = check_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let e = check_regular(Path::new("/")).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
    }

    #[test]
    fn text_over_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        std::fs::write(&p, vec![b'#'; 2048]).unwrap();
        assert_eq!(read_text(&p, 2048, "a profile").unwrap().len(), 2048);
        let e = read_text(&p, 2047, "a profile").unwrap_err();
        assert!(e.to_string().starts_with("larger than the"), "{e}");
    }
}
