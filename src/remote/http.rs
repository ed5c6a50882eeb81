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
/// Seconds to wait to connect and between bytes, unless `LLMBOUND_HTTP_TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 30;

static STDERR_PROGRESS: AtomicBool = AtomicBool::new(false);

/// The optional header cache: a folder named by `LLMBOUND_HEADER_CACHE` (off when unset).
/// Each file holds the first bytes of one remote file, keyed by its URL and ETag, so a second
/// reading of an unchanged file needs only the first request (which returns the ETag).
pub fn header_cache_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("LLMBOUND_HEADER_CACHE")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

fn cache_file(url: &str, etag: &str) -> Option<std::path::PathBuf> {
    use sha2::{Digest, Sha256};
    let dir = header_cache_dir()?;
    let mut h = Sha256::new();
    h.update(url.as_bytes());
    h.update(b"\n");
    h.update(etag.as_bytes());
    Some(dir.join(format!("{}.bin", crate::gguf::hash::hex(&h.finalize()))))
}

/// Cached prefixes larger than this are not written (headers are a few MB).
const MAX_CACHED_BYTES: u64 = 256 * 1024 * 1024;

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

/// An HTTP client with the time-outs, redirect limit and (for one host) the bearer token.
pub struct Client {
    agent: ureq::Agent,
    /// (token, where it came from) and the host it may be sent to.
    auth: Option<(String, String, String)>,
    /// Counters for this client's reads.
    pub stats: Stats,
    started: Instant,
    shown_progress: AtomicBool,
}

/// The host (with port) of an http(s) URL.
pub fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&rest[..end])
}

fn timeout() -> Duration {
    let s = std::env::var("LLMBOUND_HTTP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(DEFAULT_TIMEOUT_S);
    Duration::from_secs(s)
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
    let lower = target.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return target.to_string();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(base.len(), |i| scheme_end + i);
    if target.starts_with('/') {
        return format!("{}{target}", &base[..host_end]);
    }
    let path = base[host_end..].split(['?', '#']).next().unwrap_or("");
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    format!("{}{dir}/{target}", &base[..host_end])
}

impl Client {
    /// A client that sends `token` (with a note on where it came from) only to `auth_host`.
    pub fn new(token: Option<(String, String)>, auth_host: Option<String>) -> Client {
        let t = timeout();
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(t)
            .timeout_read(t)
            .timeout_write(t)
            .redirects(MAX_REDIRECTS)
            .user_agent(concat!("llmbound/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent,
            auth: match (token, auth_host) {
                (Some((t, from)), Some(h)) => Some((t, from, h)),
                _ => None,
            },
            stats: Stats::default(),
            started: Instant::now(),
            shown_progress: AtomicBool::new(false),
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

    /// GET `url`, optionally a byte range (inclusive). Error statuses come back as
    /// `RemoteError::Status`; a redirect loop, time-out or refused connection as one line each.
    pub fn get(&self, url: &str, range: Option<(u64, u64)>) -> Result<Reply, RemoteError> {
        let mut req = self.agent.get(url);
        if let Some((a, b)) = range {
            req = req.set("Range", &format!("bytes={a}-{b}"));
        }
        if let Some((token, _, host)) = &self.auth
            && host_of(url) == Some(host.as_str())
        {
            req = req.set("Authorization", &format!("Bearer {token}"));
        }
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let resp = match req.call() {
            Ok(r) => r,
            Err(ureq::Error::Status(code, r)) => {
                let final_url = r.get_url().to_string();
                let body = r.into_string().unwrap_or_default();
                return Err(RemoteError::Status {
                    url: final_url,
                    code,
                    body: body.chars().take(300).collect(),
                    token: self.token_source().map(str::to_string),
                });
            }
            Err(ureq::Error::Transport(t)) => {
                return Err(match t.kind() {
                    ureq::ErrorKind::TooManyRedirects => RemoteError::RedirectLoop {
                        url: url.to_string(),
                        limit: MAX_REDIRECTS,
                    },
                    kind => {
                        let source = std::error::Error::source(&t).map(|e| e.to_string());
                        let detail = match (t.message(), source) {
                            (Some(m), Some(s)) if !m.contains(&s) => format!("{m}: {s}"),
                            (Some(m), _) => m.to_string(),
                            (None, Some(s)) => s,
                            (None, None) => kind.to_string(),
                        };
                        let hint = match kind {
                            ureq::ErrorKind::Dns => {
                                " (no network, or a wrong host or HF_ENDPOINT?)"
                            }
                            ureq::ErrorKind::ConnectionFailed => {
                                " (nothing answers there: no network, or a wrong host or port?)"
                            }
                            _ => "",
                        };
                        RemoteError::Transport {
                            url: url.to_string(),
                            message: format!("{detail}{hint}"),
                        }
                    }
                });
            }
        };
        if (300..400).contains(&resp.status()) {
            return Err(RemoteError::RedirectLoop {
                url: url.to_string(),
                limit: MAX_REDIRECTS,
            });
        }
        let header = |n: &str| resp.header(n).map(str::to_string);
        Ok(Reply {
            status: resp.status(),
            final_url: resp.get_url().to_string(),
            content_type: header("content-type").unwrap_or_default(),
            range: header("content-range").and_then(|v| parse_content_range(&v)),
            length: header("content-length").and_then(|v| v.trim().parse().ok()),
            etag: header("etag").or_else(|| header("x-linked-etag")),
            next_link: next_link(&resp.all("link"), resp.get_url()),
            body: resp.into_reader(),
        })
    }

    fn progress(&self, what: &str) {
        if !STDERR_PROGRESS.load(Ordering::Relaxed) || self.started.elapsed().as_millis() < 700 {
            return;
        }
        self.shown_progress.store(true, Ordering::Relaxed);
        eprint!(
            "\r  reading {what} over HTTP: {} bytes in {} requests, {:.1} s   ",
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
/// `MAX_FETCH_BYTES`). A server without range support is read as a stream from byte 0, at
/// most `NO_RANGE_CAP_BYTES`.
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
    mode: Mode,
    buf: Vec<u8>,
    buf_start: u64,
    pos: u64,
    step: u64,
    /// Bytes 0.. of the file as fetched contiguously (for the header cache).
    prefix: Vec<u8>,
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
                    "timed out after {} bytes of a {want}-byte range at byte {offset}",
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

impl<'c> RangeReader<'c> {
    /// Open `url`: one ranged GET for the first `FIRST_FETCH_BYTES`, which also gives the
    /// complete size (`Content-Range`), the URL after redirects and the ETag.
    pub fn open(client: &'c Client, url: &str) -> Result<RangeReader<'c>, RemoteError> {
        let reply = match client.get(url, Some((0, FIRST_FETCH_BYTES - 1))) {
            Err(RemoteError::Status { code: 416, .. }) => {
                // Range not satisfiable for byte 0: an empty file.
                return Ok(RangeReader {
                    client,
                    url: url.to_string(),
                    named: url.to_string(),
                    len: 0,
                    etag: None,
                    streamed: false,
                    mode: Mode::Ranged,
                    buf: Vec::new(),
                    buf_start: 0,
                    pos: 0,
                    step: FIRST_FETCH_BYTES,
                    prefix: Vec::new(),
                    cached: false,
                });
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
                if first != 0 || last < first {
                    return Err(RemoteError::BadRange {
                        url: url.to_string(),
                        detail: format!(
                            "asked for bytes 0-{} and got {first}-{last}",
                            FIRST_FETCH_BYTES - 1
                        ),
                    });
                }
                let want = (last - first + 1).min(total);
                let buf = read_body(reply.body, want, url, 0)?;
                client
                    .stats
                    .bytes
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                // A cached prefix of the same URL and ETag serves the reads it covers.
                let cached = etag
                    .as_deref()
                    .and_then(|e| cache_file(url, e))
                    .and_then(|p| std::fs::read(p).ok())
                    .filter(|c| c.len() >= buf.len() && c[..buf.len()] == buf[..]);
                let (buf, cached) = match cached {
                    Some(c) => (c, true),
                    None => (buf, false),
                };
                Ok(RangeReader {
                    client,
                    url: final_url,
                    named: url.to_string(),
                    len: total,
                    etag,
                    streamed: false,
                    mode: Mode::Ranged,
                    prefix: buf.clone(),
                    buf,
                    buf_start: 0,
                    pos: 0,
                    step: FIRST_FETCH_BYTES * 2,
                    cached,
                })
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
                let mut r = RangeReader {
                    client,
                    url: final_url,
                    named: url.to_string(),
                    len,
                    etag,
                    streamed: true,
                    mode: Mode::Stream(reply.body),
                    buf: Vec::new(),
                    buf_start: 0,
                    pos: 0,
                    step: FIRST_FETCH_BYTES,
                    prefix: Vec::new(),
                    cached: false,
                };
                r.stream_to(FIRST_FETCH_BYTES.min(len))
                    .map_err(|e| unwrap_remote(e, url))?;
                Ok(r)
            }
            (s, _) => Err(RemoteError::Status {
                url: url.to_string(),
                code: s,
                body: String::new(),
                token: None,
            }),
        }
    }

    /// Read the stream on until `end` (exclusive) is buffered, or fail past the cap.
    fn stream_to(&mut self, end: u64) -> io::Result<()> {
        let end = end.min(self.len);
        if end > NO_RANGE_CAP_BYTES {
            return Err(io::Error::other(RemoteError::NoRangeCap {
                url: self.named.clone(),
                cap: NO_RANGE_CAP_BYTES,
                offset: end,
            }));
        }
        let Mode::Stream(body) = &mut self.mode else {
            return Ok(());
        };
        let have = self.buf.len() as u64;
        if end <= have {
            return Ok(());
        }
        // Read at least one step ahead so small reads do not mean small system calls.
        let target = (have + self.step)
            .max(end)
            .min(self.len)
            .min(NO_RANGE_CAP_BYTES);
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
        let n = self.step.min(self.len - pos);
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
                if pos == self.prefix.len() as u64 && !self.cached {
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
        let (Some(etag), false) = (&self.etag, self.cached) else {
            return;
        };
        if self.prefix.is_empty() || self.prefix.len() as u64 > MAX_CACHED_BYTES {
            return;
        }
        if let Some(p) = cache_file(&self.named, etag) {
            if let Some(d) = p.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            let tmp = p.with_extension("tmp");
            if std::fs::write(&tmp, &self.prefix).is_ok() {
                let _ = std::fs::rename(&tmp, &p);
            }
        }
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
