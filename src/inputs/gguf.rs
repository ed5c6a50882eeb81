//! GGUF artifacts: read a header (never the tensor data), find the shards of a split model,
//! list the tensor inventory, map it to the core's inputs, and hash the files.
//!
//!
//! Why a reader of our own rather than `gguf-rs-lib`'s: that crate refuses files that
//! llama.cpp reads — metadata keys that are not lower_snake_case ASCII (`gpt-oss.*`,
//! `command-r.*`, `falcon-h1.*`), GGUF version 2, big-endian files, tensor types it does not
//! know, an alignment that is not a multiple of 8 — and keeps metadata in a `HashMap`, losing
//! the file's key order. We still use its ggml type table (checked in `types`), and its writer
//! and reader as a second opinion in the tests.
//!
//! Every length and count in a header is checked against the bytes left in the file before
//! anything is allocated, so a hostile header cannot make the reader allocate more than the
//! file could hold. Arrays larger than 64 KiB (tokenizers) are left in the file and recorded
//! by position.
//! Depends on: core, infile, sanitize.

pub mod arch;
pub mod hash;
pub mod inventory;
pub mod reader;
pub mod split;
pub mod types;
pub mod writer;

use std::io;
use std::path::PathBuf;

pub use arch::{ArchReport, arch_figures, arch_report, model_shape, model_shape_and_figures};
pub use hash::{FileDigest, HashCache, HashError, HashJob, HashMessage};
pub use inventory::{
    LayerRollup, Role, Rollups, RowContext, TensorInventory, TensorRow, TypeRollup,
};
pub use reader::{Header, Metadata, MetadataEntry, load_array, read_header};
pub use split::{Artifact, Shard, open, open_single};
pub use types::{Endian, GgmlType, SkippedArray, TensorInfo, TypeInfo, Value, ValueType};

/// Why a GGUF file could not be read or used. Each message is one line, names the bad value
/// in quotes and, for problems inside a file, the byte offset.
/// A byte count as every report prints it (`5,664`), for the error messages; byte positions
/// (`at byte 270049`) stay plain as in every reader error.
fn grouped(n: u64) -> String {
    crate::core::units::group_digits(u128::from(n))
}

#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// The file could not be opened or its size read.
    #[error("cannot open \"{path}\": {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// An I/O error other than the end of the file.
    #[error("read error at byte {offset} while reading {what}: {source}")]
    Io {
        /// Where the read started.
        offset: u64,
        /// What was being read.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// A 0-byte file.
    #[error("the file is empty (0 bytes): not a GGUF file")]
    Empty,
    /// The file ends inside the header.
    #[error(
        "truncated file: it ends at byte {file_len} while reading {what} at byte {offset} ({needed} bytes needed)"
    )]
    Truncated {
        /// Where the read started.
        offset: u64,
        /// What was being read.
        what: String,
        /// Bytes the read needed.
        needed: u64,
        /// The file's length.
        file_len: u64,
    },
    /// The first four bytes are not `GGUF`.
    #[error("not a GGUF file: it starts with \"{start}\", which looks like {looks_like}")]
    BadMagic {
        /// The first bytes, escaped.
        start: String,
        /// What the file appears to be.
        looks_like: String,
    },
    /// GGUF version 1 (2023), which llama.cpp no longer reads.
    #[error(
        "GGUF version \"1\" at byte 4 is not supported (llama.cpp dropped it in 2023): convert the file again"
    )]
    Version1,
    /// A version other than 1, 2 and 3.
    #[error("unknown GGUF version \"{version}\" at byte 4: only versions 2 and 3 are read")]
    UnknownVersion {
        /// The version field read little-endian.
        version: u32,
    },
    /// A count or length that the rest of the file cannot hold.
    #[error(
        "{what} is \"{count}\" at byte {offset}, more than the {} bytes left before the file ends at byte {file_len}: truncated or corrupt",
        grouped(*.remaining)
    )]
    TooLarge {
        /// What was counted.
        what: String,
        /// The count or length read.
        count: u64,
        /// Where it was read.
        offset: u64,
        /// Bytes left after it.
        remaining: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A count of entries (tensors, key/values, array elements) that the rest of the file is
    /// too short to hold, even at the smallest size an entry can have.
    #[error(
        "{what} is \"{count}\" at byte {offset}: {count} {entries} need at least {} bytes; {} are left before the file ends at byte {file_len} (truncated or corrupt: download or convert it again)",
        crate::core::units::group_digits(*.needed), grouped(*.remaining)
    )]
    CountTooLarge {
        /// What was counted.
        what: String,
        /// The count read.
        count: u64,
        /// What is counted, plural ("tensor entries").
        entries: String,
        /// The fewest bytes that many entries take.
        needed: u128,
        /// Where the count was read.
        offset: u64,
        /// Bytes left after it.
        remaining: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A metadata value type id outside 0–12.
    #[error("unknown metadata value type \"{type_id}\" for key {key:?} at byte {offset}")]
    UnknownValueType {
        /// The key.
        key: String,
        /// The type id read.
        type_id: u32,
        /// Where the type id was read.
        offset: u64,
    },
    /// Arrays of arrays nested beyond the limit.
    #[error("arrays nested more than {limit} deep in key {key:?} at byte {offset}")]
    NestedTooDeep {
        /// The key.
        key: String,
        /// The nesting limit.
        limit: usize,
        /// Where the innermost array starts.
        offset: u64,
    },
    /// A key, tensor name or string value that is not UTF-8.
    #[error("invalid UTF-8 in {what} at byte {offset}: {lossy:?}")]
    InvalidUtf8 {
        /// What was being read.
        what: String,
        /// Where the bytes start.
        offset: u64,
        /// The bytes with invalid sequences replaced.
        lossy: String,
    },
    /// A tensor with more than 4 dimensions.
    #[error("tensor {name:?} at byte {offset} has \"{dims}\" dimensions; ggml allows at most 4")]
    TooManyDims {
        /// Tensor name.
        name: String,
        /// Dimension count read.
        dims: u32,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// The product of a tensor's dimensions does not fit in 64 bits.
    #[error(
        "tensor {name:?} at byte {offset}: the element count of shape \"{shape}\" overflows 64 bits"
    )]
    ElementOverflow {
        /// Tensor name.
        name: String,
        /// The dims.
        shape: String,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// The data size of a tensor does not fit in 64 bits.
    #[error("tensor {name:?} at byte {offset}: its size in bytes overflows 64 bits")]
    ByteOverflow {
        /// Tensor name.
        name: String,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// A row that is not a whole number of quantization blocks.
    #[error(
        "tensor {name:?} at byte {offset}: a row of \"{row}\" elements is not a multiple of the {type_name} block of {block}"
    )]
    RowNotBlockMultiple {
        /// Tensor name.
        name: String,
        /// Elements in dim 0.
        row: u64,
        /// The type's name.
        type_name: String,
        /// The type's block size.
        block: u64,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// The same metadata key twice.
    #[error("duplicate metadata key {key:?} at byte {offset}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// Where the second one starts.
        offset: u64,
    },
    /// The same tensor name twice.
    #[error("duplicate tensor name {name:?} at byte {offset}")]
    DuplicateTensor {
        /// The name.
        name: String,
        /// Where the second one starts.
        offset: u64,
    },
    /// A tensor offset that is not a multiple of the alignment.
    #[error(
        "tensor {name:?} at byte {offset}: data offset \"{data_offset}\" is not a multiple of the alignment {alignment}"
    )]
    MisalignedTensor {
        /// Tensor name.
        name: String,
        /// The data offset read (relative to the data start).
        data_offset: u64,
        /// The file's alignment.
        alignment: u64,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// `general.alignment` of 0 or not a power of two.
    #[error("general.alignment \"{value}\" at byte {offset} is not a power of two")]
    BadAlignment {
        /// The value read.
        value: u64,
        /// Where the key starts.
        offset: u64,
    },
    /// A tensor whose data does not start where llama.cpp requires: in file order, each
    /// tensor's offset is the previous tensor's end rounded up to the alignment, the first at 0
    /// (llama.cpp: "tensor … has offset X, expected Y").
    #[error(
        "tensor {name:?} at byte {offset}: data offset \"{data_offset}\" is not where the previous tensor's data ends ({}); llama.cpp refuses such a file",
        match expected {
            Some(e) => format!("expected {e}: offsets follow the file order, each rounded up to the alignment {alignment}"),
            None => format!("expected at least {previous_end}, after a tensor of unknown size"),
        }
    )]
    NotContiguous {
        /// Tensor name.
        name: String,
        /// The data offset read (relative to the data start).
        data_offset: u64,
        /// Where it must start (relative), when the previous tensor's size is known.
        expected: Option<u64>,
        /// The previous tensor's data offset (relative), for a previous tensor of unknown size.
        previous_end: u64,
        /// The file's alignment.
        alignment: u64,
        /// Where the tensor info starts.
        offset: u64,
    },
    /// A metadata value of the wrong type for what it is used for.
    #[error("metadata key {key:?} at byte {offset} is {found}, expected {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// What it was read as.
        expected: String,
        /// What it is.
        found: String,
        /// Where the key starts.
        offset: u64,
    },
    /// A value no real model has (bounds what is allocated from it).
    #[error("metadata key {key:?} at byte {offset} is \"{value}\", {why}")]
    Implausible {
        /// The key.
        key: String,
        /// The value read.
        value: u64,
        /// Why it is refused.
        why: String,
        /// Where the key starts.
        offset: u64,
    },
    /// A required metadata key is absent.
    #[error("metadata key {key:?} is missing: {needed_for}")]
    MissingKey {
        /// The key.
        key: String,
        /// What it is needed for.
        needed_for: String,
    },
    /// Shards of a split model are missing.
    #[error(
        "split model \"{opened}\" has {count} shards but {} missing in \"{dir}\"",
        missing_list(missing)
    )]
    MissingShards {
        /// The file the user named.
        opened: PathBuf,
        /// The shard count.
        count: u64,
        /// The missing file names.
        missing: Vec<String>,
        /// The folder searched.
        dir: PathBuf,
    },
    /// Shards that do not belong together.
    #[error("split model shard \"{path}\": {detail}")]
    SplitMismatch {
        /// The shard.
        path: PathBuf,
        /// What disagrees.
        detail: String,
    },
    /// The file's architecture figures do not make a model shape.
    #[error("the model shape cannot be built from the file: {0}")]
    Shape(#[from] crate::core::model::ShapeError),
}

fn missing_list(missing: &[String]) -> String {
    let quoted: Vec<String> = missing.iter().map(|m| format!("{m:?}")).collect();
    let verb = if missing.len() == 1 { "is" } else { "are" };
    format!("{} {verb}", quoted.join(", "))
}

impl GgufError {
    /// The byte offset in the file that the error is about, when it is about one.
    pub fn offset(&self) -> Option<u64> {
        use GgufError::*;
        match self {
            Io { offset, .. }
            | Truncated { offset, .. }
            | TooLarge { offset, .. }
            | CountTooLarge { offset, .. }
            | UnknownValueType { offset, .. }
            | NestedTooDeep { offset, .. }
            | InvalidUtf8 { offset, .. }
            | TooManyDims { offset, .. }
            | ElementOverflow { offset, .. }
            | ByteOverflow { offset, .. }
            | RowNotBlockMultiple { offset, .. }
            | DuplicateKey { offset, .. }
            | DuplicateTensor { offset, .. }
            | MisalignedTensor { offset, .. }
            | NotContiguous { offset, .. }
            | BadAlignment { offset, .. }
            | WrongType { offset, .. }
            | Implausible { offset, .. } => Some(*offset),
            Version1 | UnknownVersion { .. } => Some(4),
            BadMagic { .. } => Some(0),
            Open { .. }
            | Empty
            | MissingKey { .. }
            | MissingShards { .. }
            | SplitMismatch { .. }
            | Shape(_) => None,
        }
    }
}

/// A GGUF error as one line that names the file (the reader's messages name it already when
/// they carry a byte offset).
pub fn error_line(path: &std::path::Path, e: &GgufError) -> String {
    let m = e.to_string();
    let p = path.display().to_string();
    if m.contains(&p) {
        m
    } else {
        format!("{p}: {m}")
    }
}

/// Why an artifact is incomplete, in the one line every front end gives (`inspect`, `hash`
/// and `report` exit 4 on it; `models` and the library list it as an error row): tensor data
/// missing at the end of a shard, a partial download. None when every byte is there.
pub fn incomplete_reason(path: &std::path::Path, a: &Artifact) -> Option<String> {
    let missing = a.missing_bytes();
    (missing > 0).then(|| {
        format!(
            "{}: incomplete: {} bytes of tensor data are missing (a partial download? download it again)",
            crate::sanitize::path(path),
            crate::core::units::group_digits(missing as u128)
        )
    })
}
