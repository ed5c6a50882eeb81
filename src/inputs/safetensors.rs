//! Safetensors artifacts (the files MLX-LM and Hugging Face models ship): read the 8-byte
//! header length and the JSON header only (never the tensor data), a sharded set through
//! `model.safetensors.index.json`, the shape and MLX quantization from `config.json`, and the
//! tensor inventory mapped to the core's `weights::Inventory`.
//!
//!
//! Hardened like the GGUF reader: the header length is capped at [`reader::MAX_HEADER_BYTES`]
//! (100 MiB) and checked against the file's length *before* anything is allocated; every
//! tensor's offsets are checked against the data section and against each other (in order,
//! no overlap); a dtype outside the safetensors list is refused; every error is one line
//! naming the file and the byte.
//! Depends on: core, gguf, infile, sanitize.

pub mod config;
pub mod index;
pub mod inventory;
pub mod layout;
pub mod plan;
pub mod reader;

use std::path::PathBuf;

pub use config::{MlxConfig, QuantMode, Quantization};
pub use index::{Model, open_dir};
pub use inventory::{MlxInventory, MlxTensorRow};
pub use reader::{Dtype, Header, TensorEntry, read_header};

/// Why a safetensors file, index or config could not be read. Each message is one line and
/// names the file and, for problems inside a header, the byte.
#[derive(Debug, thiserror::Error)]
pub enum SafetensorsError {
    /// The file could not be opened, its size read, or a read failed.
    #[error("\"{path}\": {what}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A header problem at a byte of the file.
    #[error("\"{path}\" byte {offset}: {message}")]
    At {
        /// The file.
        path: PathBuf,
        /// Byte offset in the file.
        offset: u64,
        /// What is wrong there.
        message: String,
    },
    /// A problem with a JSON file (index or config) or a set of files.
    #[error("\"{path}\": {message}")]
    File {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl SafetensorsError {
    pub(crate) fn at(path: &std::path::Path, offset: u64, message: impl Into<String>) -> Self {
        SafetensorsError::At {
            path: path.to_path_buf(),
            offset,
            message: message.into(),
        }
    }
    pub(crate) fn file(path: &std::path::Path, message: impl Into<String>) -> Self {
        SafetensorsError::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
    pub(crate) fn io(path: &std::path::Path, what: &str, source: std::io::Error) -> Self {
        SafetensorsError::Io {
            path: path.to_path_buf(),
            what: what.to_string(),
            source,
        }
    }
}
