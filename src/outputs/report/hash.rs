//! `hash`: an artifact's SHA-256 per file and how it compares with the pinned artifact
//! profiles, as data, with its text, markdown and JSON forms. Depends on `core` and on the
//! GGUF hash module's date format only.

use super::Style;
use super::export::{Export, VERSION, json_to};
use crate::core::units::group_digits;
use crate::sanitize::Text;
use serde::Serialize;
use std::io::{self, Write};

/// Document kind and version of `hash --format json`.
pub const SCHEMA: &str = "llmbound-hash/1";

/// One hashed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HashedFile {
    /// The file's path as given or found (a shard of a split model).
    pub path: String,
    /// Lower-case hex SHA-256.
    pub sha256: String,
    /// Taken from the cache of earlier results rather than computed now.
    pub from_cache: bool,
    /// When the file was last read in full, seconds since the Unix epoch (None for entries
    /// of old caches).
    pub read_at_s: Option<u64>,
}

/// How the digest compares with the artifact profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HashOutcome {
    /// The file is shorter than its tensors need: not hashed, not verified.
    Incomplete {
        /// Bytes missing.
        missing_bytes: u64,
        /// Bytes present.
        present_bytes: u64,
    },
    /// The digest equals the pinned one.
    Verified {
        /// Model profile id.
        model: String,
        /// Artifact id.
        artifact: String,
        /// The artifact's file name.
        file: String,
    },
    /// A profile of the same size pins another digest: not that artifact.
    Mismatch {
        /// Artifact id.
        artifact: String,
        /// The pinned digest.
        pinned: String,
        /// The artifact's size, bytes.
        bytes: u64,
    },
    /// A profile has the same size but pins no digest.
    SizeMatchNotPinned {
        /// Artifact id.
        artifact: String,
    },
    /// No profile pins this digest or has this size.
    NotPinned {
        /// A block device (no file size to match).
        block_device: bool,
    },
}

/// The hash report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashReport {
    /// Every file hashed (one per shard), in order.
    pub files: Vec<HashedFile>,
    /// The comparison with the profiles.
    pub outcome: HashOutcome,
}

impl HashReport {
    /// The exit code: `exit::MISMATCH` for a mismatch or an incomplete file, else 0.
    pub fn exit_code(&self) -> i32 {
        match self.outcome {
            HashOutcome::Mismatch { .. } | HashOutcome::Incomplete { .. } => crate::exit::MISMATCH,
            _ => crate::exit::OK,
        }
    }
}

fn cached_note(f: &HashedFile) -> String {
    match (f.from_cache, f.read_at_s) {
        (true, Some(t)) => format!(" (cached, read in full {})", crate::gguf::hash::fmt_utc(t)),
        (true, None) => " (cached)".to_string(),
        (false, _) => String::new(),
    }
}

/// The outcome in one sentence.
pub fn outcome_line(r: &HashReport) -> String {
    match &r.outcome {
        HashOutcome::Incomplete {
            missing_bytes,
            present_bytes,
        } => format!(
            "incomplete: {} bytes missing ({} bytes present, its tensors end at {}); not verified",
            group_digits(*missing_bytes as u128),
            group_digits(*present_bytes as u128),
            group_digits(present_bytes.saturating_add(*missing_bytes) as u128),
        ),
        HashOutcome::Verified {
            model,
            artifact,
            file,
        } => format!(
            "verified{}: matches {} / {} ({})",
            r.files.first().map(cached_note).unwrap_or_default(),
            Text(model),
            Text(artifact),
            Text(file)
        ),
        HashOutcome::Mismatch {
            artifact,
            pinned,
            bytes,
        } => format!(
            "MISMATCH: {} pins {} for {} bytes; this file is NOT that artifact",
            Text(artifact),
            Text(pinned),
            group_digits(*bytes as u128)
        ),
        HashOutcome::SizeMatchNotPinned { artifact } => format!(
            "not pinned: artifact profile {} has the same size but no SHA-256 (add the digest above as its `sha256` to pin it)",
            Text(artifact)
        ),
        HashOutcome::NotPinned { block_device: true } => "not pinned: no artifact profile pins this SHA-256 (a block device has no file size to match)".into(),
        HashOutcome::NotPinned {
            block_device: false,
        } => "not pinned: no artifact profile has this exact size (pin it with an [[artifact]] of this `bytes` and `sha256` in a model profile; see `llmbound profiles path`)".into(),
    }
}

#[derive(Serialize)]
struct HashJson<'a> {
    schema: &'static str,
    version: &'static str,
    files: &'a [HashedFile],
    outcome: &'a HashOutcome,
    verdict: String,
    exit_code: i32,
}

impl Export for HashReport {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        json_to(
            &HashJson {
                schema: SCHEMA,
                version: VERSION,
                files: &self.files,
                outcome: &self.outcome,
                verdict: outcome_line(self),
                exit_code: self.exit_code(),
            },
            w,
        )
    }
    fn write_styled(&self, style: Style, w: &mut dyn Write) -> io::Result<()> {
        if style == Style::Markdown {
            writeln!(w, "# SHA-256\n")?;
            if !self.files.is_empty() {
                writeln!(w, "| sha256 | file | |")?;
                writeln!(w, "|---|---|---|")?;
            }
            for f in &self.files {
                writeln!(
                    w,
                    "| `{}` | {} | {} |",
                    f.sha256,
                    crate::sanitize::field(&f.path, true),
                    cached_note(f).trim()
                )?;
            }
            return writeln!(w, "\n**{}**", outcome_line(self));
        }
        // Text: `sha256sum`'s layout, so the lines can be checked with `sha256sum -c`.
        for f in &self.files {
            writeln!(
                w,
                "{}  {}{}",
                f.sha256,
                crate::sanitize::text(&f.path),
                if f.from_cache {
                    format!(" {}", cached_note(f))
                } else {
                    String::new()
                }
            )?;
        }
        writeln!(w, "{}", outcome_line(self))
    }
}
