//! Opening a GGUF by any name a user types: a local path, an `http(s)://` URL, `hf://owner/repo
//! [@rev]/path.gguf`, llama.cpp's `owner/repo[@rev]:QUANT`, or `ollama:name[:tag]`. Remote
//! headers are read with HTTP range requests (never tensor data) and the shards of a split
//! model are found next to the first; W is the sum of the sizes the server reports.
//! Depends on: core, gguf, infile, ollama, profile, safetensors, sanitize.

pub mod cache;
pub mod hf;
pub mod http;
pub mod safetensors;

use crate::gguf::reader::{load_array, read_header_with};
use crate::gguf::split::{parse_split_name, split_file_name};
use crate::gguf::{Artifact, GgufError, Header, Shard, Value};
use http::{Client, RangeReader};
pub use http::{Transfer, set_stderr_progress};
use std::path::{Path, PathBuf};

/// Why a remote GGUF could not be read: one line each, naming the URL.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// An error status.
    #[error("{url}: HTTP {code}{}", status_hint(*code, token.as_deref(), body, *retry_after))]
    Status {
        /// The URL asked for.
        url: String,
        /// The status code.
        code: u16,
        /// The start of the body (the Hub explains itself there).
        body: String,
        /// Where the token sent came from, when one was sent.
        token: Option<String>,
        /// Seconds the server's `Retry-After` asked for.
        retry_after: Option<u64>,
    },
    /// A header that needs more bytes than one remote read may fetch.
    #[error(
        "{url}: the header goes on past byte {offset}, beyond the limit of {cap} header bytes a remote read fetches (LLMBOUND_REMOTE_HEADER_CAP): a broken or hostile file, or raise the limit"
    )]
    HeaderCap {
        /// The URL.
        url: String,
        /// The cap, bytes.
        cap: u64,
        /// Where the reader needed to go.
        offset: u64,
    },
    /// A name that would leave its repository or store.
    #[error("{name:?}: {why}")]
    UnsafeName {
        /// The name (sanitised).
        name: String,
        /// What is wrong.
        why: String,
    },
    /// Redirected more than the limit.
    #[error("{url}: more than {limit} redirects: a redirect loop")]
    RedirectLoop {
        /// The URL asked for.
        url: String,
        /// Redirects followed.
        limit: u32,
    },
    /// Connection, time-out or TLS failure.
    #[error("{url}: {message}")]
    Transport {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// An HTML page where a GGUF was expected.
    #[error(
        "{url}: the server sent an HTML page ({content_type}), not a GGUF file: a login page, or a `blob/` link where `resolve/` is meant?"
    )]
    Html {
        /// The URL.
        url: String,
        /// Its content type.
        content_type: String,
    },
    /// A range reply that does not match the request.
    #[error("{url}: the server's range reply is wrong: {detail}")]
    BadRange {
        /// The URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// Neither a range nor a length.
    #[error(
        "{url}: the server gives neither Content-Range nor Content-Length, so the file's size (W) is unknown"
    )]
    NoLength {
        /// The URL.
        url: String,
    },
    /// A server without range support and a header longer than the cap.
    #[error(
        "{url}: the server does not support range requests, and the header goes on past the first {cap} bytes of the stream read (it needs byte {offset}): download the file and open it locally"
    )]
    NoRangeCap {
        /// The URL.
        url: String,
        /// Bytes read at most.
        cap: u64,
        /// Where the reader needed to go.
        offset: u64,
    },
    /// The connection closed early.
    #[error(
        "{url}: truncated response: {got} of {wanted} bytes arrived for the range at byte {offset}"
    )]
    Truncated {
        /// The URL.
        url: String,
        /// Where the range starts.
        offset: u64,
        /// Bytes that arrived.
        got: u64,
        /// Bytes promised.
        wanted: u64,
    },
    /// A listing that is not what the Hub sends.
    #[error("{url}: {detail}")]
    Listing {
        /// The listing URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// No GGUF of the quant.
    #[error("{repo} has no GGUF file for quant \"{quant}\"{}", quant_list(available, *gguf_files))]
    NoQuant {
        /// The repository.
        repo: String,
        /// The quant asked for.
        quant: String,
        /// Quants there are.
        available: Vec<String>,
        /// GGUF model files in the repository.
        gguf_files: usize,
    },
    /// Several GGUFs of the quant.
    #[error("{repo}: quant \"{quant}\" names several files ({}): use hf://{repo}/FILE to pick one", files.join(", "))]
    ManyQuant {
        /// The repository.
        repo: String,
        /// The quant asked for.
        quant: String,
        /// The files.
        files: Vec<String>,
    },
    /// A file the repository does not have.
    #[error(
        "{url}: HTTP 404 Not Found: {repo} has no such file{}",
        file_list(files)
    )]
    NoFile {
        /// The URL asked for.
        url: String,
        /// The repository.
        repo: String,
        /// Its GGUF model files.
        files: Vec<String>,
    },
    /// The remote file is not a usable GGUF.
    #[error("{url}: {message}")]
    Gguf {
        /// The URL.
        url: String,
        /// The reader's one-line message.
        message: String,
    },
    /// A command that needs the bytes of the file on disk.
    #[error("\"{spec}\" is remote: {what} needs the file on disk")]
    NeedsLocal {
        /// What was named.
        spec: String,
        /// The command.
        what: String,
    },
    /// An Ollama name that cannot be opened.
    #[error("{0}")]
    Ollama(String),
}

fn status_hint(code: u16, token: Option<&str>, body: &str, retry_after: Option<u64>) -> String {
    let hub = crate::sanitize::text(body)
        .split_once("\"error\":\"")
        .map(|(_, r)| r.split('"').next().unwrap_or_default().to_string())
        .filter(|s| !s.is_empty())
        .map(|s| {
            format!(
                " (the server says: {})",
                s.chars().take(200).collect::<String>()
            )
        })
        .unwrap_or_default();
    let what = match code {
        401 => match token {
            None => " Unauthorized: a gated or private repository; accept its terms on the Hub and set HF_TOKEN (or save a token with `hf auth login`)".to_string(),
            Some(t) => format!(" Unauthorized: the token from {t} was refused (expired, or no access to this repository)"),
        },
        403 => match token {
            None => " Forbidden: a gated repository; accept its terms on the Hub and set HF_TOKEN".to_string(),
            Some(t) => format!(" Forbidden: gated repository whose terms this account has not accepted, or a token (from {t}) without read access"),
        },
        404 => " Not Found: wrong owner/repo, revision or file name?".to_string(),
        416 => " Range Not Satisfiable".to_string(),
        429 => format!(
            " Too Many Requests: rate-limited{}, still after up to {} retries within the budget; try again later or set HF_TOKEN",
            retry_after
                .map(|s| format!(" (Retry-After: {s} s)"))
                .unwrap_or_default(),
            http::MAX_RETRIES
        ),
        c if c >= 500 => " server error".to_string(),
        _ => String::new(),
    };
    format!("{what}{hub}")
}

fn file_list(files: &[String]) -> String {
    if files.is_empty() {
        "; it has no GGUF files".into()
    } else {
        let shown: Vec<&str> = files.iter().take(10).map(String::as_str).collect();
        let more = if files.len() > 10 {
            format!(" and {} more", files.len() - 10)
        } else {
            String::new()
        };
        format!("; its GGUF files: {}{more}", shown.join(", "))
    }
}

fn quant_list(available: &[String], gguf_files: usize) -> String {
    if gguf_files == 0 {
        "; it has no GGUF files at all".to_string()
    } else if available.is_empty() {
        format!("; it has {gguf_files} GGUF files whose names carry no quant: use hf://")
    } else {
        format!("; quants there: {}", available.join(", "))
    }
}

/// A name a user gave for a GGUF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file on disk.
    Local(PathBuf),
    /// An `http://` or `https://` URL.
    Url(String),
    /// `hf://owner/repo[@rev]/path/file.gguf`.
    HfFile {
        /// owner/repo.
        repo: String,
        /// Revision (default `main`).
        revision: String,
        /// Path in the repository.
        path: String,
    },
    /// `owner/repo[@rev]:QUANT`.
    HfQuant {
        /// owner/repo.
        repo: String,
        /// Revision (default `main`).
        revision: String,
        /// The quant.
        quant: String,
    },
    /// `owner/repo[@rev]` or `hf://owner/repo[@rev]`: a repository named without a file or
    /// quant. Its GGUF of llama.cpp's default quant (`Q4_K_M`, as `-hf owner/repo`), its
    /// safetensors model (an MLX repository), or both.
    HfRepo {
        /// owner/repo.
        repo: String,
        /// Revision (default `main`).
        revision: String,
    },
    /// `ollama:name[:tag]`.
    Ollama(String),
}

/// The quant `owner/repo` without one names (llama.cpp's `-hf` default).
pub const DEFAULT_QUANT: &str = "Q4_K_M";

fn split_rev(repo: &str) -> (String, String) {
    match repo.split_once('@') {
        Some((r, rev)) if !rev.is_empty() => (r.to_string(), rev.to_string()),
        _ => (repo.trim_end_matches('@').to_string(), "main".to_string()),
    }
}

pub use crate::infile::confined;

fn unsafe_name(name: &str, why: impl std::fmt::Display) -> RemoteError {
    RemoteError::UnsafeName {
        name: crate::sanitize::text(&http::redact(name))
            .chars()
            .take(200)
            .collect(),
        why: why.to_string(),
    }
}

fn repo_ok(repo: &str) -> bool {
    let mut parts = repo.split('/');
    let ok = |s: Option<&str>| {
        s.is_some_and(|s| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        })
    };
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

impl Source {
    /// What `text` names. A path that exists on disk is always local.
    pub fn parse(text: &Path) -> Source {
        let Some(s) = text.to_str() else {
            return Source::Local(text.to_path_buf());
        };
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            return Source::Url(s.to_string());
        }
        if let Some(rest) = s.strip_prefix("ollama:") {
            return Source::Ollama(rest.to_string());
        }
        if let Some(rest) = s.strip_prefix("hf://") {
            let mut it = rest.splitn(3, '/');
            let (owner, name, path) = (it.next(), it.next(), it.next());
            if let (Some(o), Some(n)) = (owner, name) {
                let (name, revision) = split_rev(n);
                let repo = format!("{o}/{name}");
                return match path {
                    Some(p) if !p.is_empty() => Source::HfFile {
                        repo,
                        revision,
                        path: p.to_string(),
                    },
                    _ => Source::HfRepo { repo, revision },
                };
            }
        }
        if !text.exists()
            && let Some((repo, quant)) = s.rsplit_once(':')
        {
            let (repo, revision) = split_rev(repo);
            if repo_ok(&repo)
                && !quant.is_empty()
                && quant
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            {
                return Source::HfQuant {
                    repo,
                    revision,
                    quant: quant.to_string(),
                };
            }
        }
        // `owner/repo[@rev]` with no such path here: a repository (never a name ending in a
        // model file's extension, never one starting with `.`).
        if !text.exists()
            && !s.starts_with('.')
            && !s.contains(':')
            && !lower.ends_with(".gguf")
            && !lower.ends_with(".safetensors")
            && !lower.ends_with(".json")
        {
            let (repo, revision) = split_rev(s);
            if repo_ok(&repo) {
                return Source::HfRepo { repo, revision };
            }
        }
        Source::Local(text.to_path_buf())
    }

    /// True for anything read over the network.
    pub fn is_remote(&self) -> bool {
        !matches!(self, Source::Local(_) | Source::Ollama(_))
    }
}

/// True when `spec` names a remote GGUF.
pub fn is_remote(spec: &Path) -> bool {
    Source::parse(spec).is_remote()
}

/// File names of multimodal projectors (`mmproj-…gguf`, `…-mmproj-f16.gguf`).
pub fn is_projector_name(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    base.contains("mmproj")
}

/// An opened artifact and, when it was remote, what that cost.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The artifact (shard paths are the URLs for a remote one).
    pub artifact: Artifact,
    /// Bytes and requests, for a remote artifact.
    pub transfer: Option<Transfer>,
    /// Notes for the user (no range support, which file a quant picked).
    pub notes: Vec<String>,
    /// The URLs of the shards as requested (with any credentials; the artifact's paths show
    /// them redacted). Empty for a local file.
    pub urls: Vec<String>,
    /// A safetensors model (an MLX folder or repository) read instead of, or beside, the
    /// GGUF.
    pub mlx: Option<crate::safetensors::Model>,
    /// A GGUF was read. Without one (a safetensors model alone) `artifact` is a placeholder:
    /// one shard named after the model with an empty header (no metadata, no tensors, 0
    /// bytes), so that nothing reading it needs a case of its own.
    pub has_gguf: bool,
}

impl Opened {
    /// One line on what was read over the network, for a remote artifact.
    pub fn transfer_note(&self) -> Option<String> {
        let t = self.transfer?;
        Some(format!(
            "header read over HTTP: {} bytes transferred in {} requests for {} file{} totalling {} bytes",
            crate::core::units::group_digits(t.bytes as u128),
            t.requests,
            t.files,
            if t.files == 1 { "" } else { "s" },
            crate::core::units::group_digits(self.file_bytes() as u128)
        ))
    }

    /// Bytes of every file read: the GGUF's shards and the safetensors model's.
    pub fn file_bytes(&self) -> u64 {
        self.artifact.file_bytes() + self.mlx.as_ref().map_or(0, |m| m.file_bytes())
    }

    /// An opening of a safetensors model alone (its GGUF artifact a placeholder, `has_gguf`).
    pub fn safetensors(path: &Path, model: crate::safetensors::Model) -> Opened {
        let header = Header {
            version: 3,
            endian: crate::gguf::Endian::Little,
            alignment: 32,
            metadata: Default::default(),
            tensors: Vec::new(),
            header_end: 0,
            data_start: 0,
            file_len: 0,
            data_end: 0,
            missing_bytes: 0,
            warnings: Vec::new(),
        };
        Opened {
            artifact: Artifact {
                path: path.to_path_buf(),
                shards: vec![Shard {
                    path: path.to_path_buf(),
                    header,
                }],
                warnings: Vec::new(),
                known_as: None,
            },
            transfer: None,
            notes: Vec::new(),
            urls: Vec::new(),
            mlx: Some(model),
            has_gguf: false,
        }
    }
}

/// A local safetensors model: a folder (config.json and safetensors files, or a Hugging Face
/// cache snapshot) or a `.safetensors` file.
/// The one GGUF model in a local folder (a single file, or the first shard of one split
/// set), if there is exactly one; `None` for none or several (then `--gguf FILE` names it).
fn local_gguf_beside(dir: &Path) -> Option<PathBuf> {
    let mut found = local_ggufs(dir);
    (found.len() == 1).then(|| found.remove(0))
}

/// The GGUF models in a folder, sorted: every `.gguf` file but projectors (`mmproj`) and the
/// second and later shards of a split set (`-00002-of-…`), so a split model counts once.
fn local_ggufs(dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .take(10_000)
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().to_lowercase());
            n.is_some_and(|n| {
                n.ends_with(".gguf")
                    && !n.contains("mmproj")
                    && (!n.contains("-of-") || n.contains("-00001-of-"))
            })
        })
        .collect();
    found.sort();
    found
}

/// A folder holding several GGUF models: which ones, and how to open one (the explorer's `o`
/// and `--gguf` take the file's path). One line.
fn several_ggufs(dir: &Path, found: &[PathBuf]) -> String {
    const SHOWN: usize = 6;
    let names: Vec<String> = (found.iter().take(SHOWN))
        .map(|p| {
            crate::sanitize::text(&p.file_name().unwrap_or_default().to_string_lossy()).into_owned()
        })
        .collect();
    let more = match found.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{} holds {} GGUF models, not one: {}{more}; open one of them by its path (e.g. {})",
        crate::sanitize::path(dir),
        found.len(),
        names.join(", "),
        crate::sanitize::path(&found[0])
    )
}

pub fn is_local_safetensors(p: &Path) -> bool {
    if p.is_dir() {
        return std::fs::read_dir(p).is_ok_and(|rd| {
            rd.filter_map(Result::ok).take(10_000).any(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n == "config.json" || safetensors::is_safetensors_name(&n)
            })
        });
    }
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"))
}

static CLI_NOTES: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(None);

/// Command-line mode: keep the notes of every opening (bytes transferred, which file a quant
/// picked) for `take_notes`, and show a progress line for slow reads when `progress`.
pub fn cli_mode(progress: bool) {
    set_stderr_progress(progress);
    if let Ok(mut n) = CLI_NOTES.lock() {
        *n = Some(Vec::new());
    }
}

/// The notes kept since `cli_mode` (empty unless it was called).
pub fn take_notes() -> Vec<String> {
    CLI_NOTES
        .lock()
        .ok()
        .and_then(|mut n| n.as_mut().map(std::mem::take))
        .unwrap_or_default()
}

fn keep_notes(o: &Opened) {
    if let Ok(mut n) = CLI_NOTES.lock()
        && let Some(v) = n.as_mut()
    {
        v.extend(o.notes.iter().cloned());
        v.extend(o.transfer_note());
    }
}

/// Remote openings kept in memory for openings of the same name (at most this many).
const HANDOFF_SLOTS: usize = 4;
/// A kept opening is used again only this soon after it was read.
const HANDOFF_FOR: std::time::Duration = std::time::Duration::from_secs(120);

/// Remote headers read in the last `HANDOFF_FOR`, by the name the user gave, used again by an
/// opening of the same name. The explorer started with `--gguf URL` checks its options
/// (reading the header) and then opens the file on a worker, and loading a long metadata array
/// opens the file again: with this the header crosses the network once. Memory only; nothing
/// is written to disk.
static HANDOFF: std::sync::Mutex<Vec<(PathBuf, std::time::Instant, Opened)>> =
    std::sync::Mutex::new(Vec::new());

fn handoff_get(spec: &Path) -> Option<Opened> {
    let mut h = HANDOFF.lock().ok()?;
    h.retain(|(_, at, _)| at.elapsed() < HANDOFF_FOR);
    h.iter()
        .find(|(p, _, _)| p == spec)
        .map(|(_, _, o)| o.clone())
}

fn handoff_keep(spec: &Path, o: &Opened) {
    if let Ok(mut h) = HANDOFF.lock() {
        h.retain(|(p, at, _)| p != spec && at.elapsed() < HANDOFF_FOR);
        if h.len() >= HANDOFF_SLOTS {
            h.remove(0);
        }
        h.push((spec.to_path_buf(), std::time::Instant::now(), o.clone()));
    }
}

/// Why an artifact could not be opened, or a metadata array not read from it: one line naming
/// it, by where it was to come from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// A local file (or split set) that does not open as a GGUF.
    #[error("{0}")]
    File(String),
    /// An `ollama:` name that does not resolve, or whose blob does not open.
    #[error("{0}")]
    Ollama(String),
    /// A remote read (URL, `hf://`, `owner/repo:QUANT`) that failed, credentials redacted.
    #[error("{0}")]
    Remote(String),
    /// A panic while reading from a server, caught and reported as one line.
    #[error("{0}")]
    Internal(String),
    /// A metadata array that is missing, not an array, or could not be read.
    #[error("{0}")]
    Array(String),
}

impl From<OpenError> for String {
    fn from(e: OpenError) -> String {
        e.to_string()
    }
}

/// Open whatever `spec` names (see `Source`); the error is one line naming it. A remote header
/// read moments ago under the same name is used again, not read twice (see `HANDOFF`).
pub fn open_any(spec: &Path) -> Result<Opened, OpenError> {
    let remote = is_remote(spec);
    if remote && let Some(o) = handoff_get(spec) {
        return Ok(o);
    }
    let r = open_any_inner(spec);
    if let Ok(o) = &r {
        keep_notes(o);
        if remote {
            handoff_keep(spec, o);
        }
    }
    r
}

fn open_any_inner(spec: &Path) -> Result<Opened, OpenError> {
    match Source::parse(spec) {
        Source::Local(p) if is_local_safetensors(&p) => {
            let m = crate::safetensors::open_dir(&p).map_err(|e| OpenError::File(e.to_string()))?;
            // A folder that also holds one GGUF (or one split set) opens with both runtimes:
            // llama.cpp's figures of the GGUF, MLX-LM's of the safetensors model.
            let ggufs = local_ggufs(&p);
            if ggufs.len() > 1 {
                // Several GGUFs beside it: the safetensors model opens alone, and the note
                // says which GGUFs there are (none is taken silently).
                let mut o = Opened::safetensors(&p, m);
                o.notes.push(format!(
                    "{} (llama.cpp's figures need one of them)",
                    several_ggufs(&p, &ggufs)
                ));
                return Ok(o);
            }
            match local_gguf_beside(&p) {
                Some(g) => crate::gguf::open(&g)
                    .map(|artifact| Opened {
                        artifact,
                        transfer: None,
                        notes: Vec::new(),
                        urls: Vec::new(),
                        mlx: Some(m),
                        has_gguf: true,
                    })
                    .map_err(|e| OpenError::File(crate::gguf::error_line(&g, &e))),
                None => Ok(Opened::safetensors(&p, m)),
            }
        }
        // A folder of GGUFs: its one model opens; several are listed, never one taken.
        Source::Local(p) if p.is_dir() => {
            let found = local_ggufs(&p);
            match found.as_slice() {
                [] => Err(OpenError::File(format!(
                    "{}: a folder without a GGUF or a safetensors model",
                    crate::sanitize::path(&p)
                ))),
                [one] => crate::gguf::open(one)
                    .map(|artifact| Opened {
                        artifact,
                        transfer: None,
                        notes: Vec::new(),
                        urls: Vec::new(),
                        mlx: None,
                        has_gguf: true,
                    })
                    .map_err(|e| OpenError::File(crate::gguf::error_line(one, &e))),
                _ => Err(OpenError::File(several_ggufs(&p, &found))),
            }
        }
        Source::Local(p) => crate::gguf::open(&p)
            .map(|artifact| Opened {
                artifact,
                transfer: None,
                notes: Vec::new(),
                urls: Vec::new(),
                mlx: None,
                has_gguf: true,
            })
            .map_err(|e| OpenError::File(crate::gguf::error_line(&p, &e))),
        Source::Ollama(name) => {
            let blob =
                crate::ollama::resolve(&name).map_err(|e| OpenError::Ollama(e.to_string()))?;
            crate::gguf::open(&blob)
                .map(|artifact| Opened {
                    artifact: Artifact {
                        known_as: Some(format!("ollama:{name}")),
                        ..artifact
                    },
                    transfer: None,
                    notes: vec![format!("ollama:{name} is {}", blob.display())],
                    urls: Vec::new(),
                    mlx: None,
                    has_gguf: true,
                })
                .map_err(|e| {
                    OpenError::Ollama(format!(
                        "ollama:{name}: {}",
                        crate::gguf::error_line(&blob, &e)
                    ))
                })
        }
        remote => {
            // A remote open never takes the process down: whatever a server sends, a panic
            // below (a bug) is one line naming the source, not exit 101.
            let r = quiet_panics(|| open_remote(&remote));
            match r {
                Ok(Ok(o)) => Ok(redacted(o)),
                Ok(Err(e)) => Err(OpenError::Remote(http::redact(&e.to_string()).into_owned())),
                Err(p) => Err(OpenError::Internal(format!(
                    "{}: reading it stopped on an internal error ({}); please report it",
                    http::redact(&spec.display().to_string()),
                    panic_text(&p)
                ))),
            }
        }
    }
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f`, catching a panic without the panic hook's report (the caller reports it in one
/// line): a hook that wraps whatever hook is installed is set once, and is silent only on a
/// thread inside `quiet_panics`.
fn quiet_panics<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                prev(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r
}

/// The text of a caught panic.
pub fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    let s = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    crate::sanitize::text(&s).chars().take(300).collect()
}

/// The opening with every URL shown without credentials (the real ones stay in `urls`).
fn redacted(mut o: Opened) -> Opened {
    let r = |p: &Path| PathBuf::from(http::redact(&p.display().to_string()).into_owned());
    o.urls = o
        .artifact
        .shards
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    o.artifact.path = r(&o.artifact.path);
    for s in &mut o.artifact.shards {
        s.path = r(&s.path);
    }
    if let Some(m) = &mut o.mlx {
        o.urls
            .extend(m.shards.iter().map(|s| s.path.display().to_string()));
        m.dir = r(&m.dir);
        for s in &mut m.shards {
            s.path = r(&s.path);
        }
    }
    for n in &mut o.notes {
        *n = http::redact(n).into_owned();
    }
    o
}

fn check_repo(repo: &str, revision: &str) -> Result<(), RemoteError> {
    if !repo_ok(repo) {
        return Err(unsafe_name(
            repo,
            "not an owner/repository name (letters, digits, `-`, `_`, `.`; no `.` or `..`)",
        ));
    }
    if revision.is_empty()
        || revision == "."
        || revision == ".."
        || revision.chars().any(|c| c.is_control())
    {
        return Err(unsafe_name(revision, "not a revision name"));
    }
    Ok(())
}

/// The URL of the first file a remote source names (listing the repository for a quant).
pub fn resolve(client: &Client, source: &Source) -> Result<(String, Vec<String>), RemoteError> {
    match source {
        Source::Url(u) => Ok((u.clone(), Vec::new())),
        Source::HfFile {
            repo,
            revision,
            path,
        } => {
            check_repo(repo, revision)?;
            confined(path).map_err(|why| unsafe_name(&format!("hf://{repo}/{path}"), why))?;
            Ok((hf::resolve_url(repo, revision, path), Vec::new()))
        }
        Source::HfQuant {
            repo,
            revision,
            quant,
        } => {
            check_repo(repo, revision)?;
            let files = hf::list(client, repo, revision)?;
            let f = hf::pick_quant(repo, &files, quant)?;
            confined(&f.path).map_err(|why| unsafe_name(&f.path, why))?;
            Ok((
                hf::resolve_url(repo, revision, &f.path),
                vec![format!("{repo}:{quant} is {}", f.path)],
            ))
        }
        Source::HfRepo { repo, revision } => resolve(
            client,
            &Source::HfQuant {
                repo: repo.clone(),
                revision: revision.clone(),
                quant: DEFAULT_QUANT.into(),
            },
        ),
        Source::Local(p) => Err(RemoteError::Transport {
            url: p.display().to_string(),
            message: "not a URL".into(),
        }),
        Source::Ollama(n) => Err(RemoteError::Transport {
            url: n.clone(),
            message: "not a URL".into(),
        }),
    }
}

/// Read a remote artifact's headers.
pub fn open_remote(source: &Source) -> Result<Opened, RemoteError> {
    let client = hf::client();
    let r = open_remote_with(&client, source);
    client.end_progress();
    r
}

fn read_remote_header(client: &Client, url: &str) -> Result<(Header, bool), RemoteError> {
    let mut rr = RangeReader::open(client, url)?;
    let len = rr.len;
    let streamed = rr.streamed;
    let cap = rr.cap;
    match read_header_with(&mut rr, len, cap, true) {
        Ok(h) => {
            rr.save_to_cache();
            Ok((h, streamed))
        }
        Err(GgufError::Io { source, offset, .. }) => Err(match http::unwrap_remote(source, url) {
            RemoteError::Transport { url, message } => RemoteError::Transport {
                url,
                message: format!("{message} (at byte {offset})"),
            },
            other => other,
        }),
        Err(e) => Err(RemoteError::Gguf {
            url: url.to_string(),
            message: match e {
                GgufError::CountTooLarge { .. } if cap < len => format!(
                    "{e} (a remote read stops at the first {cap} header bytes, LLMBOUND_REMOTE_HEADER_CAP)"
                ),
                e => e.to_string(),
            },
        }),
    }
}

/// Replace the last path segment of a URL (keeping a query string).
fn sibling_url(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let dir = base.rsplit_once('/').map(|(d, _)| d).unwrap_or(base);
    match query {
        Some(q) => format!("{dir}/{name}?{q}"),
        None => format!("{dir}/{name}"),
    }
}

fn url_file_name(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    base.rsplit('/').next().unwrap_or(base).to_string()
}

/// An opening of a safetensors model read over HTTP.
fn remote_safetensors(
    client: &Client,
    spec: &str,
    read: (crate::safetensors::Model, Vec<String>),
) -> Opened {
    let (model, urls) = read;
    let mut o = Opened::safetensors(Path::new(spec), model);
    o.transfer = Some(client.transfer(urls.len() as u64));
    o
}

/// `owner/repo` without a file or quant: the GGUF of [`DEFAULT_QUANT`] when the repository has
/// GGUF files, its safetensors model when it has one, both when it has both.
fn open_repo(client: &Client, repo: &str, revision: &str) -> Result<Opened, RemoteError> {
    check_repo(repo, revision)?;
    let files = hf::list(client, repo, revision)?;
    let spec = if revision == "main" {
        repo.to_string()
    } else {
        format!("{repo}@{revision}")
    };
    let mlx = if safetensors::is_safetensors_repo(&files) {
        Some(safetensors::open_repo(client, repo, revision, &files)?)
    } else {
        None
    };
    let ggufs = hf::model_files(&files).len();
    let picked = (ggufs > 0).then(|| hf::pick_quant(repo, &files, DEFAULT_QUANT));
    match (picked, mlx) {
        (Some(Ok(f)), mlx) => {
            confined(&f.path).map_err(|why| unsafe_name(&f.path, why))?;
            let path = f.path.clone();
            let mut o = open_remote_with(
                client,
                &Source::HfFile {
                    repo: repo.to_string(),
                    revision: revision.to_string(),
                    path: path.clone(),
                },
            )?;
            o.notes
                .insert(0, format!("{spec}:{DEFAULT_QUANT} is {path}"));
            if let Some((model, urls)) = mlx {
                o.notes.push(format!(
                    "{spec} also has a safetensors model ({} file{}) for MLX-LM",
                    urls.len(),
                    if urls.len() == 1 { "" } else { "s" }
                ));
                o.mlx = Some(model);
                o.transfer = Some(client.transfer(1 + urls.len() as u64));
            }
            Ok(o)
        }
        (Some(Err(e)), None) => Err(e),
        (Some(Err(e)), Some(read)) => {
            let mut o = remote_safetensors(client, &spec, read);
            o.notes
                .push(format!("its safetensors model is read; no GGUF: {e}"));
            Ok(o)
        }
        (None, Some(read)) => Ok(remote_safetensors(client, &spec, read)),
        (None, None) => Err(RemoteError::Gguf {
            url: spec,
            message:
                "the repository has neither GGUF files nor a safetensors model (model*.safetensors)"
                    .into(),
        }),
    }
}

fn open_remote_with(client: &Client, source: &Source) -> Result<Opened, RemoteError> {
    match source {
        Source::HfRepo { repo, revision } => return open_repo(client, repo, revision),
        Source::Url(u) if safetensors::is_safetensors_name(u) => {
            let read = safetensors::open_file_url(client, u)?;
            return Ok(remote_safetensors(client, u, read));
        }
        Source::HfFile {
            repo,
            revision,
            path,
        } if safetensors::is_safetensors_name(path) => {
            check_repo(repo, revision)?;
            confined(path).map_err(|why| unsafe_name(&format!("hf://{repo}/{path}"), why))?;
            let url = hf::resolve_url(repo, revision, path);
            let read = safetensors::open_file_url(client, &url)?;
            return Ok(remote_safetensors(
                client,
                &format!("hf://{repo}@{revision}/{path}"),
                read,
            ));
        }
        _ => {}
    }
    let (url, mut notes) = resolve(client, source)?;
    let (first, streamed) = match (read_remote_header(client, &url), source) {
        (Err(RemoteError::Status { code: 404, .. }), Source::HfFile { repo, revision, .. }) => {
            // Say which files the repository has, when it exists.
            return Err(match hf::list(client, repo, revision) {
                Ok(files) => RemoteError::NoFile {
                    url,
                    repo: repo.clone(),
                    files: hf::model_files(&files)
                        .iter()
                        .map(|f| f.path.clone())
                        .collect(),
                },
                Err(e) => e,
            });
        }
        (r, _) => r?,
    };
    if streamed {
        notes.push(format!(
            "{url}: the server does not support range requests; the header was read from the start of the stream"
        ));
    }
    let count = first
        .metadata
        .get_u64("split.count")
        .ok()
        .flatten()
        .unwrap_or(1);
    let single = |h: Header| Opened {
        artifact: Artifact {
            path: PathBuf::from(&url),
            shards: vec![Shard {
                path: PathBuf::from(&url),
                header: h,
            }],
            warnings: Vec::new(),
            known_as: None,
        },
        transfer: Some(client.transfer(1)),
        notes: notes.clone(),
        urls: Vec::new(),
        mlx: None,
        has_gguf: true,
    };
    if count <= 1 {
        return Ok(single(first));
    }
    let mismatch = |u: &str, detail: String| RemoteError::Gguf {
        url: u.to_string(),
        message: format!("split model shard: {detail}"),
    };
    let name = url_file_name(&url);
    let Some((prefix, _, n)) = parse_split_name(&name) else {
        return Err(mismatch(
            &url,
            format!(
                "split.count is \"{count}\" but the name does not follow NAME-00001-of-{count:05}.gguf, so the other shards cannot be found"
            ),
        ));
    };
    if u64::from(n) != count {
        return Err(mismatch(
            &url,
            format!("the name says {n} shards but split.count is \"{count}\""),
        ));
    }
    if count > client.limits.max_shards {
        return Err(mismatch(
            &url,
            format!(
                "split.count is {count}, more than the {} shards one opening reads (LLMBOUND_MAX_SHARDS)",
                client.limits.max_shards
            ),
        ));
    }
    let mut first = Some(first);
    let mut shards = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for no in 1..=n {
        let shard_name = split_file_name(prefix, no, n);
        let shard_url = if shard_name == name {
            url.clone()
        } else {
            sibling_url(&url, &shard_name)
        };
        client.set_stage(format!(" (shard {no} of {n})"));
        let mut header = match first.take_if(|_| shard_name == name) {
            Some(h) => h,
            None => read_remote_header(client, &shard_url)?.0,
        };
        let i = (no - 1) as usize;
        let c = header.metadata.get_u64("split.count").ok().flatten();
        if c != Some(count) {
            return Err(mismatch(
                &shard_url,
                format!(
                    "split.count is \"{}\" but the first shard says {count}",
                    c.map(|v| v.to_string()).unwrap_or_else(|| "absent".into())
                ),
            ));
        }
        let sno = header.metadata.get_u64("split.no").ok().flatten();
        if sno != Some(i as u64) {
            return Err(mismatch(
                &shard_url,
                format!(
                    "split.no is \"{}\" but the name makes it shard index {i} (0-based)",
                    sno.map(|v| v.to_string())
                        .unwrap_or_else(|| "absent".into())
                ),
            ));
        }
        for t in &mut header.tensors {
            if !seen.insert(t.name().to_string()) {
                return Err(RemoteError::Gguf {
                    url: shard_url.clone(),
                    message: format!(
                        "duplicate tensor name {:?} at byte {}",
                        t.name(),
                        t.header_offset
                    ),
                });
            }
            t.shard = i;
        }
        shards.push(Shard {
            path: PathBuf::from(&shard_url),
            header,
        });
    }
    let mut warnings = Vec::new();
    let total: u64 = shards.iter().map(|s| s.header.tensors.len() as u64).sum();
    match shards[0]
        .header
        .metadata
        .get_u64("split.tensors.count")
        .ok()
        .flatten()
    {
        Some(t) if t != total => {
            return Err(mismatch(
                &url,
                format!("split.tensors.count is \"{t}\" but the shards hold {total} tensors"),
            ));
        }
        Some(_) => {}
        None => warnings.push("split.tensors.count is absent from the first shard".into()),
    }
    Ok(Opened {
        artifact: Artifact {
            path: PathBuf::from(&url),
            shards,
            warnings,
            known_as: None,
        },
        transfer: Some(client.transfer(u64::from(n))),
        notes,
        urls: Vec::new(),
        mlx: None,
        has_gguf: true,
    })
}

/// Load a metadata array that the reader left in the file, for a local or remote artifact.
pub fn load_array_any(spec: &Path, key: &str) -> Result<Vec<Value>, OpenError> {
    if !is_remote(spec) {
        return load_array_inner(spec, key);
    }
    // As an opening: a panic while reading from a server is one line, not the process.
    quiet_panics(|| load_array_inner(spec, key)).unwrap_or_else(|p| {
        Err(OpenError::Internal(format!(
            "{}: reading key {key:?} stopped on an internal error ({}); please report it",
            http::redact(&spec.display().to_string()),
            panic_text(&p)
        )))
    })
}

fn load_array_inner(spec: &Path, key: &str) -> Result<Vec<Value>, OpenError> {
    let opened = open_any(spec)?;
    let a = &opened.artifact;
    if !is_remote(spec) {
        return a
            .load_array(key)
            .map_err(|e| OpenError::Array(e.to_string()));
    }
    let entry = a
        .metadata()
        .get(key)
        .ok_or_else(|| OpenError::Array(format!("metadata key {key:?} is missing")))?;
    match &entry.value {
        Value::Array { items, .. } => Ok(items.clone()),
        Value::Skipped(s) => {
            let client = hf::client();
            let shard = &a.shards[0];
            let shown = shard.path.display().to_string();
            let url = opened
                .urls
                .first()
                .cloned()
                .unwrap_or_else(|| shown.clone());
            let rr = RangeReader::open(&client, &url)
                .map_err(|e| OpenError::Remote(http::redact(&e.to_string()).into_owned()))?;
            load_array(rr, shard.header.file_len, shard.header.endian, key, s).map_err(|e| {
                OpenError::Remote(format!("{shown}: {}", http::redact(&e.to_string())))
            })
        }
        other => Err(OpenError::Array(format!(
            "metadata key {key:?} is {}, not an array",
            other.type_description()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Source {
        Source::parse(Path::new(s))
    }

    #[test]
    fn a_panic_inside_a_remote_read_is_caught_as_text() {
        let r = quiet_panics(|| -> u32 { panic!("bad \u{1b}[2J reply") });
        let p = r.unwrap_err();
        assert_eq!(panic_text(&p), "bad \\x1b[2J reply");
        assert_eq!(quiet_panics(|| 7).unwrap(), 7);
        assert!(!QUIET.with(|q| q.get()));
    }

    #[test]
    fn credentials_are_redacted_everywhere_in_a_line() {
        assert_eq!(
            http::redact("http://u:pw@h:1/a and https://x@y/b?c=d@e"),
            "http://REDACTED@h:1/a and https://REDACTED@y/b?c=d@e"
        );
        assert_eq!(http::redact("no url@here"), "no url@here");
        assert_eq!(http::host_of("http://u:p@h.co:8/x"), Some("h.co:8"));
        assert!(confined("a/b.gguf").is_ok());
        for bad in ["", "/a", "a/../b", "a//b", "./a", "a\\b", "c:/x"] {
            assert!(confined(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sources() {
        assert_eq!(
            p("unsloth/Qwen3-32B-GGUF:Q4_K_M"),
            Source::HfQuant {
                repo: "unsloth/Qwen3-32B-GGUF".into(),
                revision: "main".into(),
                quant: "Q4_K_M".into()
            }
        );
        assert_eq!(
            p("o/r@v1.0:q8_0"),
            Source::HfQuant {
                repo: "o/r".into(),
                revision: "v1.0".into(),
                quant: "q8_0".into()
            }
        );
        assert_eq!(
            p("hf://o/r@dev/sub/m.gguf"),
            Source::HfFile {
                repo: "o/r".into(),
                revision: "dev".into(),
                path: "sub/m.gguf".into()
            }
        );
        assert_eq!(
            p("https://x/y.gguf"),
            Source::Url("https://x/y.gguf".into())
        );
        assert_eq!(p("ollama:qwen3:32b"), Source::Ollama("qwen3:32b".into()));
        assert_eq!(p("models/m.gguf"), Source::Local("models/m.gguf".into()));
        assert_eq!(p("/a/b/c:Q4"), Source::Local("/a/b/c:Q4".into()));
        // A repository named alone: its default quant, its safetensors model, or both.
        assert_eq!(
            p("mlx-community/Qwen3-0.6B-4bit"),
            Source::HfRepo {
                repo: "mlx-community/Qwen3-0.6B-4bit".into(),
                revision: "main".into()
            }
        );
        assert_eq!(
            p("hf://o/r@v2"),
            Source::HfRepo {
                repo: "o/r".into(),
                revision: "v2".into()
            }
        );
        for local in ["nope/m.safetensors", "./o/r", "a/b/c", "o/config.json"] {
            assert_eq!(p(local), Source::Local(local.into()), "{local}");
        }
        assert_eq!(
            sibling_url(
                "https://h/o/r/resolve/main/a-00001-of-00002.gguf?x=1",
                "a-00002-of-00002.gguf"
            ),
            "https://h/o/r/resolve/main/a-00002-of-00002.gguf?x=1"
        );
    }
}
