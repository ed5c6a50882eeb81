//! Opening an artifact: one GGUF file, or every shard of a split model
//! (`NAME-00001-of-00003.gguf`, as llama.cpp's `gguf-split` names them), found by name from
//! any one shard, checked for consistency and merged.
//! Depends on `core::weights` for `WeightFile` only.

use super::GgufError;
use super::inventory::saturating_sum;
use super::reader::{Header, Metadata, load_array, read_header};
use super::types::{TensorInfo, Value};
use crate::core::units::{Provenance, Sourced};
use crate::core::weights::{ArtifactSource, WeightFile, WeightKind};
use std::collections::HashSet;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Read buffer for headers (at least 64 KiB so a tokenizer is read in few system calls).
pub const READ_BUFFER_BYTES: usize = 256 * 1024;

/// One file of an artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Shard {
    /// Path of the file.
    pub path: PathBuf,
    /// Its header.
    pub header: Header,
}

/// A GGUF model: one file or all shards of a split model, in shard order.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// The file the user named.
    pub path: PathBuf,
    /// The files, first shard first; a single file is one shard.
    pub shards: Vec<Shard>,
    /// Warnings about the artifact as a whole (each shard header keeps its own).
    pub warnings: Vec<String>,
    /// The name the user knows the model by when its file's own name says nothing
    /// (`ollama:qwen3:32b` for a blob `sha256-…`); None for files and URLs.
    pub known_as: Option<String>,
}

fn open_header(path: &Path) -> Result<Header, GgufError> {
    let open_err = |e| GgufError::Open {
        path: path.to_path_buf(),
        source: e,
    };
    // Checked before `open`: opening a FIFO blocks, /dev/zero never ends.
    let file = crate::infile::open_regular(path).map_err(open_err)?;
    let len = file.metadata().map_err(open_err)?.len();
    read_header(BufReader::with_capacity(READ_BUFFER_BYTES, file), len)
}

/// The parts of a split file name `NAME-00002-of-00003.gguf`: (NAME, 2, 3).
pub fn parse_split_name(file_name: &str) -> Option<(&str, u32, u32)> {
    let stem = file_name.strip_suffix(".gguf")?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(count) || !digits(no) || prefix.is_empty() {
        return None;
    }
    Some((prefix, no.parse().ok()?, count.parse().ok()?))
}

/// The file name of shard `no` (1-based) of `count`, as llama.cpp's `llama_split_path`.
pub fn split_file_name(prefix: &str, no: u32, count: u32) -> String {
    format!("{prefix}-{no:05}-of-{count:05}.gguf")
}

/// Open one file only, without looking for the other shards of a split model.
pub fn open_single(path: impl AsRef<Path>) -> Result<Artifact, GgufError> {
    let path = path.as_ref();
    let header = open_header(path)?;
    let mut warnings = Vec::new();
    if let Some(n) = header.metadata.get_u64("split.count")?
        && n > 1
    {
        warnings.push(format!(
            "this file is one shard of a {n}-file split model; only this shard was read"
        ));
    }
    Ok(Artifact {
        path: path.to_path_buf(),
        shards: vec![Shard {
            path: path.to_path_buf(),
            header,
        }],
        warnings,
        known_as: None,
    })
}

/// Open a GGUF file; when it is one shard of a split model, open every shard.
pub fn open(path: impl AsRef<Path>) -> Result<Artifact, GgufError> {
    let path = path.as_ref();
    let header = open_header(path)?;
    let count = header.metadata.get_u64("split.count")?.unwrap_or(1);
    if count <= 1 {
        return Ok(Artifact {
            path: path.to_path_buf(),
            shards: vec![Shard {
                path: path.to_path_buf(),
                header,
            }],
            warnings: Vec::new(),
            known_as: None,
        });
    }
    let mismatch = |p: &Path, detail: String| GgufError::SplitMismatch {
        path: p.to_path_buf(),
        detail,
    };
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let Some((prefix, _, name_count)) = parse_split_name(&file_name) else {
        return Err(mismatch(
            path,
            format!(
                "split.count is \"{count}\" but the name does not follow NAME-00001-of-{count:05}.gguf, so the other shards cannot be found"
            ),
        ));
    };
    if u64::from(name_count) != count {
        return Err(mismatch(
            path,
            format!("the name says {name_count} shards but split.count is \"{count}\""),
        ));
    }
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };

    let mut paths = Vec::new();
    let mut missing = Vec::new();
    for no in 1..=name_count {
        let name = split_file_name(prefix, no, name_count);
        let p = dir.join(&name);
        if name == file_name || p.is_file() {
            paths.push(if name == file_name {
                path.to_path_buf()
            } else {
                p
            });
        } else {
            missing.push(name);
        }
    }
    if !missing.is_empty() {
        return Err(GgufError::MissingShards {
            opened: path.to_path_buf(),
            count,
            missing,
            dir,
        });
    }

    let mut header = Some(header);
    let mut shards = Vec::with_capacity(paths.len());
    for p in paths {
        let h = match header.take_if(|_| p == path) {
            Some(h) => h,
            None => open_header(&p)?,
        };
        shards.push(Shard { path: p, header: h });
    }

    // Names borrowed, not copied (a split model of a million tensors would copy them all).
    let mut names: HashSet<&str> = HashSet::new();
    for s in &shards {
        for t in &s.header.tensors {
            if !names.insert(t.name()) {
                return Err(GgufError::DuplicateTensor {
                    name: t.name().to_string(),
                    offset: t.header_offset,
                });
            }
        }
    }
    drop(names);
    let mut total_tensors = 0u64;
    for (i, shard) in shards.iter_mut().enumerate() {
        let m = &shard.header.metadata;
        let c = m.get_u64("split.count")?;
        if c != Some(count) {
            return Err(mismatch(
                &shard.path,
                format!(
                    "split.count is \"{}\" but the other shards say {count}",
                    c.map(|v| v.to_string()).unwrap_or_else(|| "absent".into())
                ),
            ));
        }
        let no = m.get_u64("split.no")?;
        if no != Some(i as u64) {
            return Err(mismatch(
                &shard.path,
                format!(
                    "split.no is \"{}\" but the file name makes it shard index {i} (0-based)",
                    no.map(|v| v.to_string()).unwrap_or_else(|| "absent".into())
                ),
            ));
        }
        for t in &mut shard.header.tensors {
            t.shard = i;
        }
        total_tensors += shard.header.tensors.len() as u64;
    }
    let mut warnings = Vec::new();
    match shards[0].header.metadata.get_u64("split.tensors.count")? {
        Some(n) if n != total_tensors => {
            return Err(mismatch(
                &shards[0].path,
                format!(
                    "split.tensors.count is \"{n}\" but the shards hold {total_tensors} tensors"
                ),
            ));
        }
        Some(_) => {}
        None => warnings.push("split.tensors.count is absent from the first shard".into()),
    }
    Ok(Artifact {
        path: path.to_path_buf(),
        shards,
        warnings,
        known_as: None,
    })
}

impl Artifact {
    /// The first shard's header (the one with the model's metadata).
    pub fn header(&self) -> &Header {
        &self.shards[0].header
    }

    /// The model's metadata (from the first shard).
    pub fn metadata(&self) -> &Metadata {
        &self.shards[0].header.metadata
    }

    /// Every tensor, shard by shard in file order; `TensorInfo::shard` says which.
    pub fn tensors(&self) -> impl Iterator<Item = &TensorInfo> {
        self.shards.iter().flat_map(|s| s.header.tensors.iter())
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors().find(|t| t.name() == name)
    }

    /// Number of tensors over all shards.
    pub fn tensor_count(&self) -> usize {
        self.shards.iter().map(|s| s.header.tensors.len()).sum()
    }

    /// W: Σ file lengths over all shards, bytes (SPEC §2).
    pub fn file_bytes(&self) -> u64 {
        saturating_sum(self.shards.iter().map(|s| s.header.file_len))
    }

    /// Bytes missing at the end of shards whose tensors end past the end of the file.
    pub fn missing_bytes(&self) -> u64 {
        saturating_sum(self.shards.iter().map(|s| s.header.missing_bytes))
    }

    /// More than one file.
    pub fn is_split(&self) -> bool {
        self.shards.len() > 1
    }

    /// Paths of all shards in order.
    pub fn paths(&self) -> Vec<&Path> {
        self.shards.iter().map(|s| s.path.as_path()).collect()
    }

    /// All warnings: the artifact's, then each shard's (prefixed with its file name when split).
    pub fn all_warnings(&self) -> Vec<String> {
        let mut out = self.warnings.clone();
        for s in &self.shards {
            for w in &s.header.warnings {
                if self.is_split() {
                    let name = s
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.push(format!("{name}: {w}"));
                } else {
                    out.push(w.clone());
                }
            }
        }
        out
    }

    /// Load a metadata array that the reader left in the file (e.g. `tokenizer.ggml.tokens`).
    /// A kept array is returned as is.
    pub fn load_array(&self, key: &str) -> Result<Vec<Value>, GgufError> {
        let entry = self
            .metadata()
            .get(key)
            .ok_or_else(|| GgufError::MissingKey {
                key: key.to_string(),
                needed_for: "the array was asked for".into(),
            })?;
        match &entry.value {
            Value::Array { items, .. } => Ok(items.clone()),
            Value::Skipped(s) => {
                let shard = &self.shards[0];
                let file =
                    crate::infile::open_regular(&shard.path).map_err(|e| GgufError::Open {
                        path: shard.path.clone(),
                        source: e,
                    })?;
                load_array(
                    BufReader::with_capacity(READ_BUFFER_BYTES, file),
                    shard.header.file_len,
                    shard.header.endian,
                    key,
                    s,
                )
            }
            other => Err(GgufError::WrongType {
                key: key.to_string(),
                expected: "an array".into(),
                found: other.type_description(),
                offset: entry.offset,
            }),
        }
    }

    /// The files as the core's weight inputs (provenance `file`), one per shard; a partial
    /// download is sized as the complete file.
    pub fn weight_files(&self) -> Vec<WeightFile> {
        self.shards
            .iter()
            .map(|s| {
                let name = match (&self.known_as, self.shards.len()) {
                    (Some(n), 1) => n.clone(),
                    _ => s
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                };
                // A remote artifact's shard paths are its URLs.
                let url = s
                    .path
                    .to_str()
                    .is_some_and(|p| p.starts_with("http://") || p.starts_with("https://"));
                WeightFile {
                    kind: WeightKind::Artifact(if url {
                        ArtifactSource::Remote
                    } else {
                        ArtifactSource::File
                    }),
                    file: name,
                    // A partial download counts as the complete file its header describes.
                    bytes: Sourced::new(
                        s.header.file_len.max(s.header.data_end),
                        Provenance::File,
                        if s.header.missing_bytes > 0 {
                            format!(
                                "size of the complete {} (partial download)",
                                s.path.display()
                            )
                        } else {
                            format!("size of {}", s.path.display())
                        },
                    ),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names() {
        assert_eq!(
            parse_split_name("Qwen3-235B-Q4_K_M-00002-of-00003.gguf"),
            Some(("Qwen3-235B-Q4_K_M", 2, 3))
        );
        assert_eq!(parse_split_name("model.gguf"), None);
        assert_eq!(parse_split_name("m-1-of-3.gguf"), None);
        assert_eq!(split_file_name("m", 3, 12), "m-00003-of-00012.gguf");
    }
}
