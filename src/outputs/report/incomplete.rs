//! The one answer every front end gives on an incomplete GGUF (tensor data missing at the end:
//! a partial download): `report` and `inspect` exit 4 with [`crate::gguf::incomplete_reason`],
//! `models` and the library list the file as an error row with the same line.

use std::path::Path;

/// A local GGUF whose tensor data is incomplete, with the one-line reason every front end
/// prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Incomplete(pub String);

/// Err(the one-line reason) when `gguf` names a local file whose tensor data is incomplete.
/// Remote and Ollama specs, and files that do not open, are left to the paths that open them.
pub fn check_gguf(gguf: Option<&Path>) -> Result<(), Incomplete> {
    let Some(p) = gguf.filter(|p| p.is_file()) else {
        return Ok(());
    };
    match crate::gguf::open(p) {
        Ok(a) => {
            crate::gguf::incomplete_reason(p, &a).map_or(Ok(()), |reason| Err(Incomplete(reason)))
        }
        Err(_) => Ok(()),
    }
}
