//! The thin layer between the explorer and the GGUF reader: a read file becomes the rows the
//! views show, and hashing reports progress as `HashUpdate`s. Runs on worker threads.

use super::file::{HashUpdate, Loaded, MetaItem, ShardItem};
use crate::core::units;
use crate::gguf::{self, HashCache, HashJob, HashMessage, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Metadata values longer than this are cut in the list (arrays expand on demand).
const VALUE_CHARS: usize = 160;

fn meta_item(key: &str, v: &Value) -> MetaItem {
    let type_name = match v {
        Value::Array {
            element_type,
            items,
        } => format!("[{element_type}; {}]", items.len()),
        Value::Skipped(s) => format!("[{}; {}]", s.element_type, s.count),
        other => other.type_description(),
    };
    let value = match v {
        // The count is in the type column; the value says what Enter does, short enough for
        // the value column at 120 columns.
        Value::Skipped(s) => format!(
            "{} bytes unread · Enter loads",
            units::group_digits(s.byte_len as u128)
        ),
        Value::Array { items, .. } => {
            let shown: Vec<String> = items.iter().take(12).map(|x| x.short(40)).collect();
            let more = if items.len() > 12 {
                format!(", … {} more", items.len() - 12)
            } else {
                String::new()
            };
            format!("{}{more}", shown.join(", "))
        }
        other => other.short(VALUE_CHARS),
    };
    MetaItem {
        key: key.to_string(),
        type_name,
        value,
        array_len: v.array_len(),
        text_lines: match v {
            Value::String(s) if s.contains('\n') || s.chars().count() > VALUE_CHARS => {
                text_lines(s)
            }
            _ => Vec::new(),
        },
    }
}

/// Characters per line of an expanded string.
const LINE_CHARS: usize = 100;

/// A string value as lines to page through: split at line breaks, tabs as four spaces, cut
/// into pieces of `LINE_CHARS`, every control or bidi character escaped.
pub fn text_lines(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in s.split('\n') {
        let line = line.trim_end_matches('\r').replace('\t', "    ");
        let escaped = crate::sanitize::text(&line).into_owned();
        let chars: Vec<char> = escaped.chars().collect();
        if chars.is_empty() {
            out.push(String::new());
        }
        for piece in chars.chunks(LINE_CHARS) {
            out.push(piece.iter().collect());
        }
    }
    out
}

/// Read a GGUF file's header (and its shards) into what the explorer shows, by the one
/// opening every front end uses (`workspace::open::read`).
pub fn load(path: &Path) -> Result<Loaded, String> {
    let opened = crate::workspace::open::read(path, crate::workspace::Rows::Every)?;
    let art = &opened.artifact;
    let inv = &opened.inventory;
    let tensors = inv.rows.clone();
    let by_type = inv.by_type.clone();
    let metadata = art
        .metadata()
        .iter()
        .map(|e| meta_item(&e.key, &e.value))
        .collect();
    Ok(Loaded {
        path: path.to_path_buf(),
        // A split is named for its first shard, whichever shard was opened.
        file_name: art
            .shards
            .first()
            .map_or_else(|| file_name(path), |s| file_name(&s.path)),
        shards: art
            .shards
            .iter()
            .map(|s| ShardItem {
                file_name: file_name(&s.path),
                path: s.path.clone(),
                bytes: s.header.file_len,
            })
            .collect(),
        total_bytes: art.file_bytes(),
        model: opened.model.clone(),
        weights: art.weight_files(),
        core_inventory: inv.to_core_inventory(),
        tensors,
        by_type,
        parameters: inv.parameters,
        metadata,
        warnings: opened
            .warnings
            .iter()
            .chain(&opened.notes)
            .cloned()
            .collect(),
        opened: std::sync::Arc::new(opened),
    })
}

/// Load every element of a long metadata array as text.
pub fn load_array(path: &Path, key: &str) -> Result<Vec<String>, String> {
    let values = crate::remote::load_array_any(path, key)?;
    Ok(values.iter().map(|v| v.short(VALUE_CHARS)).collect())
}

/// SHA-256 of each file in order with `gguf::HashJob` (digests cached at `cache` when given),
/// forwarding progress, stopping when `cancel` is set.
pub fn hash(
    paths: &[PathBuf],
    cancel: &AtomicBool,
    cache: Option<PathBuf>,
    send: &dyn Fn(HashUpdate),
) {
    let mut job = HashJob::spawn_with_cache(paths.to_vec(), cache.map(HashCache::at));
    loop {
        if cancel.load(Ordering::Relaxed) {
            job.cancel();
        }
        match job.try_recv() {
            Some(HashMessage::Progress(p)) => send(HashUpdate::Progress {
                done: p.bytes_done,
                total: p.total_bytes,
                bytes_per_s: p.bytes_per_s,
                eta_s: p.eta_s,
            }),
            Some(HashMessage::FileDone(_)) => {}
            Some(HashMessage::Finished(r)) => {
                return send(match r {
                    Ok(d) => HashUpdate::Done(d.into_iter().map(|x| x.sha256).collect()),
                    Err(gguf::HashError::Cancelled) => HashUpdate::Cancelled,
                    Err(e) => HashUpdate::Failed(e.to_string()),
                });
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The default place for the digest cache.
pub fn default_hash_cache() -> Option<PathBuf> {
    HashCache::default_location()
}
