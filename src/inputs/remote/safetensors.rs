//! Safetensors models over HTTP (an MLX repository on the Hub, or a `.safetensors` URL):
//! `config.json`, `model.safetensors.index.json` and each shard's header are read with range
//! requests through the bounded client (`http::Client`: its time-outs, request budget, shard
//! and header caps all apply), never tensor data. A header is read in a few KB: the first
//! fetch is [`FIRST_FETCH_BYTES`], and the header length in its first 8 bytes says how much
//! more there is. The headers are checked by the same reader as a local file's
//! (`safetensors::read_header`) and assembled by the same code (`safetensors::index::assemble`).

use super::RemoteError;
use super::hf::{self, RepoFile};
use super::http::{Client, RangeReader};
use crate::safetensors::index::{
    INDEX_CAP_BYTES, ShardFile, assemble, shard_names_from_index_text,
};
use crate::safetensors::{
    MlxConfig, Model, SafetensorsError, config::CONFIG_CAP_BYTES, read_header,
};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The first range fetched of a safetensors file, bytes: the 8-byte header length and the
/// start of the header (a tiny model's whole header).
pub const FIRST_FETCH_BYTES: u64 = 16 * 1024;

/// A repository's listing has a safetensors model: `*.safetensors` at its root (`config.json`
/// is read when it is there).
pub fn is_safetensors_repo(files: &[RepoFile]) -> bool {
    files.iter().any(|f| root_safetensors(&f.path))
}

fn root_safetensors(path: &str) -> bool {
    !path.contains('/') && path.to_ascii_lowercase().ends_with(".safetensors")
}

fn has(files: &[RepoFile], name: &str) -> bool {
    files.iter().any(|f| f.path == name)
}

fn st_error(url: &str, e: SafetensorsError) -> RemoteError {
    RemoteError::Gguf {
        url: url.to_string(),
        message: match e {
            // The reader names the path (here the URL) itself: keep only what it says of it.
            SafetensorsError::At {
                offset, message, ..
            } => format!("byte {offset}: {message}"),
            SafetensorsError::File { message, .. } => message,
            SafetensorsError::Io { what, source, .. } => {
                match super::http::unwrap_remote(source, url) {
                    RemoteError::Gguf { message, .. } => format!("{what}: {message}"),
                    other => return other,
                }
            }
        },
    }
}

/// Read a small JSON file (`config.json`, the index) whole, at most `cap` bytes.
fn read_text(client: &Client, url: &str, cap: u64) -> Result<String, RemoteError> {
    let mut rr = RangeReader::open_with_first(client, url, FIRST_FETCH_BYTES)?;
    if rr.len > cap {
        return Err(RemoteError::Gguf {
            url: url.to_string(),
            message: format!(
                "{} bytes, more than the {cap}-byte cap for this file",
                rr.len
            ),
        });
    }
    let mut buf = Vec::with_capacity(rr.len as usize);
    (&mut rr)
        .take(cap)
        .read_to_end(&mut buf)
        .map_err(|e| super::http::unwrap_remote(e, url))?;
    String::from_utf8(buf).map_err(|e| RemoteError::Gguf {
        url: url.to_string(),
        message: format!("not UTF-8 text at byte {}", e.utf8_error().valid_up_to()),
    })
}

/// Read one remote safetensors header.
fn read_shard(client: &Client, url: &str) -> Result<ShardFile, RemoteError> {
    let mut rr = RangeReader::open_with_first(client, url, FIRST_FETCH_BYTES)?;
    let len = rr.len;
    let header = read_header(&mut rr, len, Path::new(url)).map_err(|e| st_error(url, e))?;
    Ok(ShardFile {
        path: PathBuf::from(url),
        header,
    })
}

fn config_at(client: &Client, url: &str) -> Result<MlxConfig, RemoteError> {
    let text = read_text(client, url, CONFIG_CAP_BYTES)?;
    MlxConfig::parse(&text, Path::new(url)).map_err(|e| st_error(url, e))
}

/// Read an MLX (or any safetensors) repository: its config, its index and every shard's
/// header. `files` is its listing; `url_of` gives a file's URL.
pub fn open_repo(
    client: &Client,
    repo: &str,
    revision: &str,
    files: &[RepoFile],
) -> Result<(Model, Vec<String>), RemoteError> {
    let url_of = |name: &str| hf::resolve_url(repo, revision, name);
    let config = if has(files, "config.json") {
        Some(config_at(client, &url_of("config.json"))?)
    } else {
        None
    };
    let index_name = "model.safetensors.index.json";
    let (names, expected) = if has(files, index_name) {
        let url = url_of(index_name);
        let text = read_text(client, &url, INDEX_CAP_BYTES)?;
        let (names, map) =
            shard_names_from_index_text(&text, Path::new(&url)).map_err(|e| st_error(&url, e))?;
        for n in &names {
            if !has(files, n) {
                return Err(RemoteError::NoFile {
                    url: url_of(n),
                    repo: repo.to_string(),
                    files: files
                        .iter()
                        .filter(|f| root_safetensors(&f.path))
                        .map(|f| f.path.clone())
                        .collect(),
                });
            }
        }
        (names, Some((PathBuf::from(url), map)))
    } else {
        // As MLX-LM's load_model: every model*.safetensors at the root.
        let mut v: Vec<String> = files
            .iter()
            .filter(|f| root_safetensors(&f.path) && f.path.starts_with("model"))
            .map(|f| f.path.clone())
            .collect();
        v.sort();
        (v, None)
    };
    if names.is_empty() {
        return Err(RemoteError::Gguf {
            url: url_of(""),
            message: "no model*.safetensors file and no model.safetensors.index.json: not an MLX or safetensors model repository".into(),
        });
    }
    if names.len() as u64 > client.limits.max_shards {
        return Err(RemoteError::Gguf {
            url: url_of(index_name),
            message: format!(
                "{} shard files, more than the {} shards one opening reads (LLMBOUND_MAX_SHARDS)",
                names.len(),
                client.limits.max_shards
            ),
        });
    }
    let mut shards = Vec::with_capacity(names.len());
    let n = names.len();
    let mut urls = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        client.set_stage(format!(" (shard {} of {n})", i + 1));
        let url = url_of(name);
        shards.push(read_shard(client, &url)?);
        urls.push(url);
    }
    // The name MLX-LM's --model takes.
    let dir = PathBuf::from(if revision == "main" {
        repo.to_string()
    } else {
        format!("hf://{repo}@{revision}")
    });
    let model = assemble(dir, config, expected, shards).map_err(|e| st_error(repo, e))?;
    Ok((model, urls))
}

/// Read one `.safetensors` file by URL, with the `config.json` beside it when the server has
/// one (a 404 there means no config; any other failure is an error).
pub fn open_file_url(client: &Client, url: &str) -> Result<(Model, Vec<String>), RemoteError> {
    let shard = read_shard(client, url)?;
    let cfg_url = super::sibling_url(url, "config.json");
    let config = match config_at(client, &cfg_url) {
        Ok(c) => Some(c),
        Err(RemoteError::Status { code: 404, .. }) => None,
        Err(e) => return Err(e),
    };
    let dir = PathBuf::from(url);
    let model = assemble(dir, config, None, vec![shard]).map_err(|e| st_error(url, e))?;
    Ok((model, vec![url.to_string()]))
}

/// True when a URL or repository path names a `.safetensors` file.
pub fn is_safetensors_name(name: &str) -> bool {
    name.split(['?', '#'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
        .ends_with(".safetensors")
}
