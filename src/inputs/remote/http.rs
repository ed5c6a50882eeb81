//! HTTP(S) range reads: a `Read + Seek` over a remote file that fetches only the byte ranges
//! the GGUF reader asks for, a few hundred KiB first and geometrically more after, so reading
//! a header never downloads tensor data. Counts every byte transferred.
//! Depends on `ureq` (rustls) only; knows nothing about GGUF or Hugging Face.

use super::RemoteError;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// First range fetched from a file, bytes.
pub const FIRST_FETCH_BYTES: u64 = 256 * 1024;
/// Largest single range fetched (the step stops doubling here), bytes.
pub const MAX_FETCH_BYTES: u64 = 16 * 1024 * 1024;
/// A server that ignores `Range` is read from the start of its stream up to this many bytes.
pub const NO_RANGE_CAP_BYTES: u64 = 64 * 1024 * 1024;
/// Redirects followed before giving up (Hugging Face needs one: `resolve/` → CDN).
pub const MAX_REDIRECTS: u32 = 8;
/// Seconds one request may take in all (connect, answer and body), unless
/// `LLMBOUND_HTTP_TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 60;
/// Seconds one opening (every request of every shard, and the waits between retries) may take,
/// unless `LLMBOUND_HTTP_BUDGET` says otherwise.
pub const DEFAULT_BUDGET_S: u64 = 600;
/// Header bytes one remote file may need, unless `LLMBOUND_REMOTE_HEADER_CAP` says otherwise:
/// counts in the header are checked against this, not against the size the server claims.
pub const DEFAULT_HEADER_CAP_BYTES: u64 = 64 * 1024 * 1024;
/// Shards one split model may have, unless `LLMBOUND_MAX_SHARDS` says otherwise.
pub const DEFAULT_MAX_SHARDS: u64 = 256;
/// Requests one opening may make, unless `LLMBOUND_MAX_REQUESTS` says otherwise.
pub const DEFAULT_MAX_REQUESTS: u64 = 2048;
/// A remote file larger than this (1 PiB) is refused as an absurd size.
pub const MAX_REMOTE_FILE_BYTES: u64 = 1 << 50;
/// Times a 429 or 503 reply is retried (waiting as `Retry-After` says, within the budget).
pub const MAX_RETRIES: u32 = 3;
/// Longest wait before a retry, seconds (a longer `Retry-After` is an error at once).
pub const MAX_RETRY_WAIT_S: u64 = 30;

/// The limits of remote reads, from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deadline of one request.
    pub timeout: Duration,
    /// Deadline of one opening.
    pub budget: Duration,
    /// Header bytes one file may need.
    pub header_cap: u64,
    /// Shards of one split model.
    pub max_shards: u64,
    /// Requests of one opening.
    pub max_requests: u64,
}

/// A limit the environment sets that cannot be used: one line naming the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// Not a whole number in range.
    #[error("{var} is {value:?}: give a whole number of {unit} from 1 to {max}")]
    OutOfRange {
        /// The variable.
        var: &'static str,
        /// Its value (sanitised, at most 40 characters).
        value: String,
        /// What it counts.
        unit: &'static str,
        /// The largest value taken.
        max: u64,
    },
    /// Not UTF-8.
    #[error("{var} is not UTF-8: give a whole number of {unit}")]
    NotUtf8 {
        /// The variable.
        var: &'static str,
        /// What it counts.
        unit: &'static str,
    },
}

fn env_u64(
    var: &'static str,
    default: u64,
    max: u64,
    unit: &'static str,
) -> Result<u64, LimitError> {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Ok(default),
        Ok(v) if v.trim().is_empty() => Ok(default),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 && n <= max => Ok(n),
            _ => Err(LimitError::OutOfRange {
                var,
                value: crate::sanitize::text(&v.chars().take(40).collect::<String>()).into_owned(),
                unit,
                max,
            }),
        },
        Err(_) => Err(LimitError::NotUtf8 { var, unit }),
    }
}

impl Limits {
    /// The limits the environment sets, or a one-line error naming the variable.
    pub fn from_env() -> Result<Limits, LimitError> {
        Ok(Limits {
            timeout: Duration::from_secs(env_u64(
                "LLMBOUND_HTTP_TIMEOUT",
                DEFAULT_TIMEOUT_S,
                86_400,
                "seconds",
            )?),
            budget: Duration::from_secs(env_u64(
                "LLMBOUND_HTTP_BUDGET",
                DEFAULT_BUDGET_S,
                7 * 86_400,
                "seconds",
            )?),
            header_cap: env_u64(
                "LLMBOUND_REMOTE_HEADER_CAP",
                DEFAULT_HEADER_CAP_BYTES,
                1 << 40,
                "bytes",
            )?,
            max_shards: env_u64("LLMBOUND_MAX_SHARDS", DEFAULT_MAX_SHARDS, 99_999, "shards")?,
            max_requests: env_u64(
                "LLMBOUND_MAX_REQUESTS",
                DEFAULT_MAX_REQUESTS,
                1 << 32,
                "requests",
            )?,
        })
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
            budget: Duration::from_secs(DEFAULT_BUDGET_S),
            header_cap: DEFAULT_HEADER_CAP_BYTES,
            max_shards: DEFAULT_MAX_SHARDS,
            max_requests: DEFAULT_MAX_REQUESTS,
        }
    }
}

/// `url` with any `user:password@` taken out of its authority (and of every URL inside a
/// message), so credentials typed into a URL or `HF_ENDPOINT` are never shown.
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("REDACTED@");
                out.push_str(&authority[at + 1..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

static STDERR_PROGRESS: AtomicBool = AtomicBool::new(false);

/// The optional header cache folder (`LLMBOUND_HEADER_CACHE`; see `super::cache`).
pub fn header_cache_dir() -> Option<std::path::PathBuf> {
    super::cache::dir()
}

/// Let range reads print a progress line on stderr when a fetch is slow (the CLI turns this
/// on when stderr is a terminal; the explorer never does).
pub fn set_stderr_progress(on: bool) {
    STDERR_PROGRESS.store(on, Ordering::Relaxed);
}

/// Bytes and requests of one opening, over every file it read.
#[derive(Debug, Default)]
pub struct Stats {
    /// Body bytes received.
    pub bytes: AtomicU64,
    /// HTTP requests made (redirects not counted).
    pub requests: AtomicU64,
}

/// What an opening transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transfer {
    /// Body bytes received, over every request.
    pub bytes: u64,
    /// Requests made.
    pub requests: u64,
    /// Files read.
    pub files: u64,
}

/// An HTTP client with the limits (`Limits`), redirects followed by hand, and (for one host)
/// the bearer token.
pub struct Client {
    agent: ureq::Agent,
    /// (token, where it came from) and the host it may be sent to.
    auth: Option<(String, String, String)>,
    /// Why no request can be made (a bad limit variable, a token a header cannot carry).
    refused: Option<String>,
    /// Why the token cannot be sent, when it cannot.
    bad_token: Option<String>,
    /// The limits of this opening.
    pub limits: Limits,
    /// Counters for this client's reads.
    pub stats: Stats,
    started: Instant,
    shown_progress: AtomicBool,
    /// Requests sent, redirects and retries included (for `LLMBOUND_MAX_REQUESTS`).
    hops: AtomicU64,
    /// What the progress line says is being read ("shard 3 of 12").
    stage: std::sync::Mutex<String>,
}

/// The host (with port) of an http(s) URL, without any `user:password@`.
pub fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    Some(authority.rsplit_once('@').map_or(authority, |(_, h)| h))
}

/// True for an `http://` or `https://` URL with a host and nothing a request line cannot carry.
pub fn is_fetchable(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && host_of(url).is_some_and(|h| !h.is_empty() && !h.starts_with(':'))
        && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// A response's headers that matter here.
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// The URL after redirects.
    pub final_url: String,
    /// `Content-Type`.
    pub content_type: String,
    /// `Content-Range` parsed: (first, last, total).
    pub range: Option<(u64, u64, Option<u64>)>,
    /// `Content-Length`.
    pub length: Option<u64>,
    /// `ETag` (or Hugging Face's `X-Linked-Etag`).
    pub etag: Option<String>,
    /// `Location`, on a redirect.
    pub location: Option<String>,
    /// The `rel="next"` target of a `Link` header (a paginated listing), made absolute.
    pub next_link: Option<String>,
    /// The body.
    pub body: Box<dyn Read + Send + Sync>,
}

fn parse_content_range(v: &str) -> Option<(u64, u64, Option<u64>)> {
    let v = v.trim().strip_prefix("bytes")?.trim();
    let (span, total) = v.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    if span.trim() == "*" {
        return Some((0, 0, total));
    }
    let (a, b) = span.split_once('-')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?, total))
}

/// The `rel="next"` URL among `Link` header values (RFC 8288: `<url>; rel="next", <url>;
/// rel="prev"`), made absolute against `base` (the URL that answered).
pub fn next_link(values: &[&str], base: &str) -> Option<String> {
    for v in values {
        let mut rest = *v;
        while let Some(open) = rest.find('<') {
            let after = &rest[open + 1..];
            let close = after.find('>')?;
            let target = after[..close].trim();
            let params_end = after[close + 1..]
                .find('<')
                .map_or(after.len(), |i| close + 1 + i);
            let params = &after[close + 1..params_end];
            let is_next = params.split(';').any(|p| {
                p.trim()
                    .to_ascii_lowercase()
                    .strip_prefix("rel=")
                    .is_some_and(|r| r.trim_matches('"').split_whitespace().any(|x| x == "next"))
            });
            if is_next && !target.is_empty() {
                return Some(absolute_url(target, base));
            }
            rest = &after[params_end..];
        }
    }
    None
}

/// `target` made absolute against `base` (an absolute URL, `/path`, or a path beside `base`).
fn absolute_url(target: &str, base: &str) -> String {
    // Any `scheme:` (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`) is absolute:
    // `file:///etc/passwd` and `data:,x` stay what they are, to be refused by scheme.
    let scheme = target.split_once(':').map(|(s, _)| s).filter(|s| {
        let mut b = s.bytes();
        b.next().is_some_and(|c| c.is_ascii_alphabetic())
            && b.all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
    });
    if scheme.is_some() {
        return target.to_string();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    if let Some(rest) = target.strip_prefix("//") {
        // Scheme-relative: `//host/path`.
        return format!("{}{rest}", &base[..scheme_end]);
    }
    let host_end = base[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(base.len(), |i| scheme_end + i);
    if target.starts_with('/') {
        return format!("{}{target}", &base[..host_end]);
    }
    let path = base[host_end..].split(['?', '#']).next().unwrap_or("");
    if target.starts_with('?') {
        return format!("{}{path}{target}", &base[..host_end]);
    }
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    format!("{}{dir}/{target}", &base[..host_end])
}

/// A token a header can carry: visible ASCII only (no space, control byte or CR/LF), so it
/// is never refused by the client in a message that would quote it.
pub fn token_ok(t: &str) -> bool {
    !t.is_empty() && t.len() <= 4096 && t.bytes().all(|b| b.is_ascii_graphic())
}

/// Seconds a `Retry-After` header asks for (delta-seconds only; a date counts as absent).
fn retry_after(v: Option<&str>) -> Option<u64> {
    v?.trim().parse().ok()
}

impl Client {
    /// A client that sends `token` (with a note on where it came from) only to `auth_host`.
    /// A bad limit in the environment makes every request fail with one line naming the
    /// variable; a token a header cannot carry, every request that would carry it (naming
    /// where it came from, never quoting it).
    pub fn new(token: Option<(String, String)>, auth_host: Option<String>) -> Client {
        let (limits, refused) = match Limits::from_env() {
            Ok(l) => (l, None),
            Err(e) => (Limits::default(), Some(e.to_string())),
        };
        let bad_token = token.as_ref().filter(|(t, _)| !token_ok(t)).map(|(_, from)| {
            format!(
                "the Hugging Face token from {from} holds a character an HTTP header cannot carry (a space, control byte, line break or non-ASCII character): copy it again"
            )
        });
        // Redirects are followed here, not by ureq: ureq 2 unwraps the host of a `Location`
        // such as `file:///etc/passwd` or `data:,x` and panics, and it cannot tell a missing
        // `Location` from a loop. Keeping ureq 2 (with `redirects(0)`) avoids a new TLS stack.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(limits.timeout)
            .timeout(limits.timeout)
            .redirects(0)
            .user_agent(concat!("llmbound/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent,
            auth: match (token, auth_host) {
                (Some((t, from)), Some(h)) => Some((t, from, h)),
                _ => None,
            },
            refused,
            bad_token,
            limits,
            stats: Stats::default(),
            started: Instant::now(),
            shown_progress: AtomicBool::new(false),
            hops: AtomicU64::new(0),
            stage: std::sync::Mutex::new(String::new()),
        }
    }

    /// Where the token sent to the Hub came from, when one is.
    pub fn token_source(&self) -> Option<&str> {
        self.auth.as_ref().map(|(_, from, _)| from.as_str())
    }

    /// What this client transferred so far.
    pub fn transfer(&self, files: u64) -> Transfer {
        Transfer {
            bytes: self.stats.bytes.load(Ordering::Relaxed),
            requests: self.stats.requests.load(Ordering::Relaxed),
            files,
        }
    }

    /// Name what is being read, for the progress line ("shard 3 of 12").
    pub fn set_stage(&self, stage: String) {
        if let Ok(mut s) = self.stage.lock() {
            *s = stage;
        }
    }

    fn received(&self) -> String {
        format!(
            "{} bytes received in {} requests",
            crate::core::units::group_digits(self.stats.bytes.load(Ordering::Relaxed) as u128),
            self.stats.requests.load(Ordering::Relaxed)
        )
    }

    /// Time left of the opening's budget, or the error saying it ran out.
    fn budget_left(&self, url: &str) -> Result<Duration, RemoteError> {
        let left = self.limits.budget.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(RemoteError::Transport {
                url: url.to_string(),
                message: format!(
                    "gave up after the {} s budget of one opening (LLMBOUND_HTTP_BUDGET), {}",
                    self.limits.budget.as_secs(),
                    self.received()
                ),
            });
        }
        Ok(left)
    }

    /// GET `url`, optionally a byte range (inclusive), following redirects (http/https with a
    /// host only, at most `MAX_REDIRECTS`) and retrying 429/503 as `Retry-After` says within
    /// the budget. Error statuses come back as `RemoteError::Status`; everything else as one
    /// line naming the URL.
    pub fn get(&self, url: &str, range: Option<(u64, u64)>) -> Result<Reply, RemoteError> {
        if let Some(why) = &self.refused {
            return Err(RemoteError::Transport {
                url: url.to_string(),
                message: why.clone(),
            });
        }
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let mut retries = 0;
        loop {
            match self.get_following(url, range) {
                Err(RemoteError::Status {
                    code: code @ (429 | 503),
                    url: at,
                    body,
                    token,
                    retry_after: ra,
                }) => {
                    let wait = ra.unwrap_or(1u64 << retries);
                    let left = self.budget_left(url)?;
                    if retries >= MAX_RETRIES
                        || wait > MAX_RETRY_WAIT_S
                        || Duration::from_secs(wait) >= left
                    {
                        return Err(RemoteError::Status {
                            url: at,
                            code,
                            body,
                            token,
                            retry_after: ra,
                        });
                    }
                    retries += 1;
                    self.progress_note(&format!("HTTP {code}: waiting {wait} s to retry"));
                    std::thread::sleep(Duration::from_secs(wait));
                }
                other => return other,
            }
        }
    }

    fn get_following(&self, url: &str, range: Option<(u64, u64)>) -> Result<Reply, RemoteError> {
        let mut at = url.to_string();
        for hop in 0..=MAX_REDIRECTS {
            if !is_fetchable(&at) {
                return Err(RemoteError::Transport {
                    url: url.to_string(),
                    message: if hop == 0 {
                        "not an http(s) URL with a host".to_string()
                    } else {
                        format!(
                            "redirected to {:?}, which is not an http(s) URL with a host: refused",
                            crate::sanitize::text(&at.chars().take(200).collect::<String>())
                        )
                    },
                });
            }
            let reply = self.get_once(&at, range)?;
            if !(300..400).contains(&reply.status) {
                return Ok(reply);
            }
            let Some(loc) = reply.location.clone() else {
                return Err(RemoteError::Transport {
                    url: at,
                    message: format!(
                        "HTTP {} redirect without a Location header: the server says to go elsewhere but not where",
                        reply.status
                    ),
                });
            };
            at = absolute_url(loc.trim(), &at);
        }
        Err(RemoteError::RedirectLoop {
            url: url.to_string(),
            limit: MAX_REDIRECTS,
        })
    }

    fn get_once(&self, url: &str, range: Option<(u64, u64)>) -> Result<Reply, RemoteError> {
        let left = self.budget_left(url)?;
        let n = self.hops.fetch_add(1, Ordering::Relaxed) + 1;
        if n > self.limits.max_requests {
            return Err(RemoteError::Transport {
                url: url.to_string(),
                message: format!(
                    "more than {} requests in one opening (LLMBOUND_MAX_REQUESTS), {}",
                    self.limits.max_requests,
                    self.received()
                ),
            });
        }
        let mut req = self.agent.get(url).timeout(self.limits.timeout.min(left));
        if let Some((a, b)) = range {
            req = req.set("Range", &format!("bytes={a}-{b}"));
        }
        if let Some((token, _, host)) = &self.auth
            && host_of(url) == Some(host.as_str())
        {
            if let Some(why) = &self.bad_token {
                return Err(RemoteError::Transport {
                    url: url.to_string(),
                    message: why.clone(),
                });
            }
            req = req.set("Authorization", &format!("Bearer {token}"));
        }
        let resp = match req.call() {
            Ok(r) => r,
            Err(ureq::Error::Status(code, r)) => {
                let final_url = r.get_url().to_string();
                let ra = retry_after(r.header("retry-after"));
                // At most 4 KiB of an error body is read (the Hub explains itself there).
                let mut body = Vec::new();
                let _ = r.into_reader().take(4096).read_to_end(&mut body);
                return Err(RemoteError::Status {
                    url: final_url,
                    code,
                    body: String::from_utf8_lossy(&body).chars().take(300).collect(),
                    token: self.token_source().map(str::to_string),
                    retry_after: ra,
                });
            }
            Err(ureq::Error::Transport(t)) => {
                let kind = t.kind();
                let source = std::error::Error::source(&t).map(|e| e.to_string());
                let detail = match (t.message(), source) {
                    (Some(m), Some(s)) if !m.contains(&s) => format!("{m}: {s}"),
                    (Some(m), _) => m.to_string(),
                    (None, Some(s)) => s,
                    (None, None) => kind.to_string(),
                };
                let hint = match kind {
                    ureq::ErrorKind::Dns => " (no network, or a wrong host or HF_ENDPOINT?)",
                    ureq::ErrorKind::ConnectionFailed => {
                        " (nothing answers there: no network, or a wrong host or port?)"
                    }
                    _ => "",
                };
                let timed_out = detail.to_ascii_lowercase().contains("timed out");
                let after = if timed_out && left < self.limits.timeout {
                    format!(
                        " (the {} s budget of one opening, LLMBOUND_HTTP_BUDGET, ran out; {})",
                        self.limits.budget.as_secs(),
                        self.received()
                    )
                } else if timed_out {
                    format!(
                        " (the {} s deadline of one request, LLMBOUND_HTTP_TIMEOUT; {})",
                        self.limits.timeout.as_secs(),
                        self.received()
                    )
                } else {
                    String::new()
                };
                return Err(RemoteError::Transport {
                    url: url.to_string(),
                    message: format!("{detail}{hint}{after}"),
                });
            }
        };
        let header = |n: &str| resp.header(n).map(str::to_string);
        let range = match header("content-range") {
            None => None,
            Some(v) => Some(
                parse_content_range(&v).ok_or_else(|| RemoteError::BadRange {
                    url: url.to_string(),
                    detail: format!(
                        "Content-Range {:?} is not `bytes FIRST-LAST/TOTAL`",
                        crate::sanitize::text(&v.chars().take(80).collect::<String>())
                    ),
                })?,
            ),
        };
        Ok(Reply {
            status: resp.status(),
            final_url: url.to_string(),
            content_type: header("content-type").unwrap_or_default(),
            range,
            length: header("content-length").and_then(|v| v.trim().parse().ok()),
            etag: header("etag").or_else(|| header("x-linked-etag")),
            location: header("location"),
            next_link: next_link(&resp.all("link"), url),
            body: resp.into_reader(),
        })
    }

    fn progress_note(&self, what: &str) {
        if STDERR_PROGRESS.load(Ordering::Relaxed) {
            self.shown_progress.store(true, Ordering::Relaxed);
            eprint!("\r  {}   ", crate::sanitize::text(what));
        }
    }

    fn progress(&self, what: &str) {
        if !STDERR_PROGRESS.load(Ordering::Relaxed) || self.started.elapsed().as_millis() < 700 {
            return;
        }
        self.shown_progress.store(true, Ordering::Relaxed);
        let stage = self.stage.lock().map(|s| s.clone()).unwrap_or_default();
        let what = crate::sanitize::text(&redact(what)).into_owned();
        let what = if what.chars().count() > 60 {
            format!(
                "…{}",
                what.chars()
                    .rev()
                    .take(59)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<String>()
            )
        } else {
            what
        };
        eprint!(
            "\r  reading {what}{stage} over HTTP: {} bytes in {} requests, {:.1} s   ",
            crate::core::units::group_digits(self.stats.bytes.load(Ordering::Relaxed) as u128),
            self.stats.requests.load(Ordering::Relaxed),
            self.started.elapsed().as_secs_f64()
        );
    }

    /// Clear the progress line when one was shown.
    pub fn end_progress(&self) {
        if self.shown_progress.swap(false, Ordering::Relaxed) {
            eprint!("\r{}\r", " ".repeat(78));
        }
    }
}

/// How the bytes of a remote file arrive.
enum Mode {
    /// The server honours `Range`: fetch what is asked for.
    Ranged,
    /// The server sends the whole file from byte 0: keep what was read, up to the cap.
    Stream(Box<dyn Read + Send + Sync>),
}

/// A `Read + Seek` over a remote file. Reads are served from the last fetched range; a read
/// outside it fetches from there on, each fetch twice the last (`FIRST_FETCH_BYTES` up to
/// `MAX_FETCH_BYTES`). Nothing past the header cap (`Limits::header_cap`) is ever fetched. A
/// server without range support is read as a stream from byte 0, at most
/// `NO_RANGE_CAP_BYTES`. Bytes already used are dropped, unless the header cache is on (it
/// keeps the bytes from 0 to save them).
pub struct RangeReader<'c> {
    client: &'c Client,
    /// The URL after redirects (ranges go there directly).
    pub url: String,
    /// The URL the user named (for messages).
    pub named: String,
    /// Complete size of the file from the server, bytes.
    pub len: u64,
    /// The server's ETag, when it gave one.
    pub etag: Option<String>,
    /// True when the server ignored `Range` and the file is read as a stream.
    pub streamed: bool,
    /// Bytes from 0 this reader may fetch.
    pub cap: u64,
    mode: Mode,
    buf: Vec<u8>,
    buf_start: u64,
    pos: u64,
    step: u64,
    /// Bytes 0.. of the file as fetched contiguously (for the header cache; kept only when
    /// the cache is on).
    prefix: Vec<u8>,
    keep_prefix: bool,
    /// The prefix came from the cache.
    cached: bool,
}

fn read_body(
    mut body: impl Read,
    want: u64,
    url: &str,
    offset: u64,
) -> Result<Vec<u8>, RemoteError> {
    let mut out = Vec::with_capacity(want.min(MAX_FETCH_BYTES) as usize);
    let r = (&mut body).take(want).read_to_end(&mut out);
    let truncated = |got: u64| RemoteError::Truncated {
        url: url.to_string(),
        offset,
        got,
        wanted: want,
    };
    match r {
        Ok(_) if (out.len() as u64) < want => Err(truncated(out.len() as u64)),
        Ok(_) => Ok(out),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(truncated(out.len() as u64)),
        Err(e) if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock => {
            Err(RemoteError::Transport {
                url: url.to_string(),
                message: format!(
                    "timed out after {} bytes of a {want}-byte range at byte {offset} (the deadline of one request is LLMBOUND_HTTP_TIMEOUT)",
                    out.len()
                ),
            })
        }
        Err(e) => Err(RemoteError::Transport {
            url: url.to_string(),
            message: e.to_string(),
        }),
    }
}

fn absurd(url: &str, size: u64) -> RemoteError {
    RemoteError::BadRange {
        url: url.to_string(),
        detail: format!(
            "the server says the file is {size} bytes, more than the {MAX_REMOTE_FILE_BYTES} bytes (1 PiB) any GGUF is: refused"
        ),
    }
}

impl<'c> RangeReader<'c> {
    fn with(client: &'c Client, url: &str, final_url: String, len: u64, mode: Mode) -> Self {
        RangeReader {
            client,
            url: final_url,
            named: url.to_string(),
            len,
            etag: None,
            streamed: matches!(mode, Mode::Stream(_)),
            cap: client.limits.header_cap,
            mode,
            buf: Vec::new(),
            buf_start: 0,
            pos: 0,
            step: FIRST_FETCH_BYTES,
            prefix: Vec::new(),
            keep_prefix: false,
            cached: false,
        }
    }

    /// Open `url`: one ranged GET for the first `FIRST_FETCH_BYTES`, which also gives the
    /// complete size (`Content-Range`), the URL after redirects and the ETag.
    pub fn open(client: &'c Client, url: &str) -> Result<RangeReader<'c>, RemoteError> {
        RangeReader::open_with_first(client, url, FIRST_FETCH_BYTES)
    }

    /// [`RangeReader::open`] with a first fetch of `first` bytes (at least 1), each later
    /// fetch twice the last: a safetensors header, whose length its first 8 bytes give, is
    /// read in a few KB.
    pub fn open_with_first(
        client: &'c Client,
        url: &str,
        first: u64,
    ) -> Result<RangeReader<'c>, RemoteError> {
        let first_bytes = first.clamp(1, FIRST_FETCH_BYTES);
        let first_last = first_bytes.min(client.limits.header_cap).max(1) - 1;
        let reply = match client.get(url, Some((0, first_last))) {
            Err(RemoteError::Status { code: 416, .. }) => {
                // Range not satisfiable for byte 0: an empty file.
                return Ok(RangeReader::with(
                    client,
                    url,
                    url.to_string(),
                    0,
                    Mode::Ranged,
                ));
            }
            other => other?,
        };
        let ct = reply.content_type.to_ascii_lowercase();
        if ct.starts_with("text/html") || ct.starts_with("application/xhtml") {
            return Err(RemoteError::Html {
                url: url.to_string(),
                content_type: reply.content_type.clone(),
            });
        }
        let final_url = reply.final_url.clone();
        let etag = reply.etag.clone();
        match (reply.status, reply.range) {
            (206, Some((first, last, Some(total)))) => {
                if total > MAX_REMOTE_FILE_BYTES {
                    return Err(absurd(url, total));
                }
                if first != 0 || last < first || last > first_last {
                    return Err(RemoteError::BadRange {
                        url: url.to_string(),
                        detail: format!("asked for bytes 0-{first_last} and got {first}-{last}"),
                    });
                }
                let want = (last - first + 1).min(total);
                let buf = read_body(reply.body, want, url, 0)?;
                client
                    .stats
                    .bytes
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                let mut r = RangeReader::with(client, url, final_url, total, Mode::Ranged);
                r.step = first_bytes * 2;
                r.keep_prefix = etag.is_some() && super::cache::dir().is_some();
                // A cached header of the same URL, ETag and size, written by this user's
                // llmbound (its MAC checks) and starting with the bytes just fetched, serves
                // the reads it covers.
                let cached = etag.as_deref().and_then(|e| {
                    super::cache::load(
                        &super::cache::Key {
                            url,
                            etag: e,
                            size: total,
                        },
                        &buf,
                        r.cap,
                    )
                });
                match cached {
                    Some(c) => {
                        r.cached = true;
                        r.buf = c;
                    }
                    None => {
                        if r.keep_prefix {
                            r.prefix = buf.clone();
                        }
                        r.buf = buf;
                    }
                }
                r.etag = etag;
                Ok(r)
            }
            (206, _) => Err(RemoteError::BadRange {
                url: url.to_string(),
                detail: "a partial response without the complete size in Content-Range".into(),
            }),
            (200, _) => {
                let Some(len) = reply.length else {
                    return Err(RemoteError::NoLength {
                        url: url.to_string(),
                    });
                };
                if len > MAX_REMOTE_FILE_BYTES {
                    return Err(absurd(url, len));
                }
                let mut r =
                    RangeReader::with(client, url, final_url, len, Mode::Stream(reply.body));
                r.etag = etag;
                r.step = first_bytes;
                r.stream_to(first_bytes.min(len))
                    .map_err(|e| unwrap_remote(e, url))?;
                Ok(r)
            }
            (s, _) => Err(RemoteError::Status {
                url: url.to_string(),
                code: s,
                body: String::new(),
                token: None,
                retry_after: None,
            }),
        }
    }

    fn over_cap(&self, offset: u64) -> io::Error {
        io::Error::other(RemoteError::HeaderCap {
            url: self.named.clone(),
            cap: self.cap,
            offset,
        })
    }

    /// Read the stream on until `end` (exclusive) is buffered, or fail past the cap.
    fn stream_to(&mut self, end: u64) -> io::Result<()> {
        let end = end.min(self.len);
        let cap = NO_RANGE_CAP_BYTES.min(self.cap);
        if end > cap {
            return Err(if cap < NO_RANGE_CAP_BYTES {
                self.over_cap(end)
            } else {
                io::Error::other(RemoteError::NoRangeCap {
                    url: self.named.clone(),
                    cap: NO_RANGE_CAP_BYTES,
                    offset: end,
                })
            });
        }
        let Mode::Stream(body) = &mut self.mode else {
            return Ok(());
        };
        let have = self.buf.len() as u64;
        if end <= have {
            return Ok(());
        }
        // Read at least one step ahead so small reads do not mean small system calls.
        let target = (have + self.step).max(end).min(self.len).min(cap);
        self.step = (self.step * 2).min(MAX_FETCH_BYTES);
        let got = read_body(body, target - have, &self.named, have).map_err(io::Error::other)?;
        self.client
            .stats
            .bytes
            .fetch_add(got.len() as u64, Ordering::Relaxed);
        self.buf.extend_from_slice(&got);
        self.client.progress(&self.named);
        Ok(())
    }

    fn fetch_at(&mut self, pos: u64) -> io::Result<()> {
        if matches!(self.mode, Mode::Stream(_)) {
            return self.stream_to(pos + 1);
        }
        if pos >= self.cap {
            return Err(self.over_cap(pos));
        }
        let n = self.step.min(self.len - pos).min(self.cap - pos);
        self.step = (self.step * 2).min(MAX_FETCH_BYTES);
        let last = pos + n - 1;
        let reply = self
            .client
            .get(&self.url, Some((pos, last)))
            .map_err(io::Error::other)?;
        match (reply.status, reply.range) {
            (206, Some((first, l, _))) if first == pos && l >= first => {
                let want = l - first + 1;
                let buf = read_body(reply.body, want.min(n), &self.named, pos)
                    .map_err(io::Error::other)?;
                self.client
                    .stats
                    .bytes
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                if self.keep_prefix && pos == self.prefix.len() as u64 && !self.cached {
                    self.prefix.extend_from_slice(&buf);
                }
                self.buf = buf;
                self.buf_start = pos;
                self.client.progress(&self.named);
                Ok(())
            }
            (s, r) => Err(io::Error::other(RemoteError::BadRange {
                url: self.named.clone(),
                detail: format!(
                    "asked for bytes {pos}-{last} and got status {s} with Content-Range {}",
                    r.map(|(a, b, _)| format!("{a}-{b}"))
                        .unwrap_or_else(|| "absent".into())
                ),
            })),
        }
    }
}

impl RangeReader<'_> {
    /// Keep the bytes read from the start of the file in the header cache (when it is on, the
    /// server gave an ETag, and they were not from the cache already). Errors are ignored: the
    /// cache only saves transfers.
    pub fn save_to_cache(&self) {
        let (Some(etag), false, true) = (&self.etag, self.cached, self.keep_prefix) else {
            return;
        };
        if self.prefix.is_empty() {
            return;
        }
        super::cache::store(
            &super::cache::Key {
                url: &self.named,
                etag,
                size: self.len,
            },
            &self.prefix,
        );
    }
}

/// The remote error inside an I/O error from a `RangeReader`, or the I/O error as a transport one.
pub fn unwrap_remote(e: io::Error, url: &str) -> RemoteError {
    if e.get_ref().is_some_and(|i| i.is::<RemoteError>()) {
        match e.into_inner().map(|b| b.downcast::<RemoteError>()) {
            Some(Ok(r)) => *r,
            _ => RemoteError::Transport {
                url: url.to_string(),
                message: "read error".into(),
            },
        }
    } else {
        RemoteError::Transport {
            url: url.to_string(),
            message: e.to_string(),
        }
    }
}

impl Read for RangeReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len || out.is_empty() {
            return Ok(0);
        }
        let in_buf =
            self.pos >= self.buf_start && self.pos < self.buf_start + self.buf.len() as u64;
        if !in_buf {
            self.fetch_at(self.pos)?;
        }
        let at = (self.pos - self.buf_start) as usize;
        let n = out.len().min(self.buf.len().saturating_sub(at));
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let new = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        match new {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before byte 0",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range() {
        assert_eq!(
            parse_content_range("bytes 0-99/1000"),
            Some((0, 99, Some(1000)))
        );
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, 9, None)));
        assert_eq!(parse_content_range("bytes */0"), Some((0, 0, Some(0))));
        assert_eq!(parse_content_range("items 0-1/2"), None);
        assert_eq!(host_of("https://h.co:8080/a/b"), Some("h.co:8080"));
    }

    #[test]
    fn link_next() {
        let base = "https://hf.co/api/models/o/r/tree/main?recursive=true";
        assert_eq!(
            next_link(
                &["<https://hf.co/api/models/o/r/tree/main?recursive=true&cursor=abc>; rel=\"next\""],
                base
            )
            .as_deref(),
            Some("https://hf.co/api/models/o/r/tree/main?recursive=true&cursor=abc")
        );
        // Several links, relative targets, rel lists, another rel first.
        assert_eq!(
            next_link(
                &["</p?c=1>; rel=\"prev\", </p?c=3>; rel=\"next last\""],
                base
            )
            .as_deref(),
            Some("https://hf.co/p?c=3")
        );
        assert_eq!(
            next_link(&["<x?c=2>; rel=next"], base).as_deref(),
            Some("https://hf.co/api/models/o/r/tree/x?c=2")
        );
        assert_eq!(next_link(&["<https://a/b>; rel=\"prev\""], base), None);
        assert_eq!(next_link(&["garbage <unclosed"], base), None);
        assert_eq!(next_link(&[], base), None);
    }
}
