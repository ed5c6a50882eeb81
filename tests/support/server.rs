//! A real HTTP/1.1 server on 127.0.0.1 for the remote tests, hand-rolled on `std::net` so a
//! test can make it misbehave (no range support, truncated bodies, redirect loops, HTML).
//! One request per connection (`Connection: close`), a thread per connection.
//!
//! Routes (files are registered by path under the repository `o/r`, `o/gated`):
//! - `/{repo}/resolve/main/{path}` → 302 to `/cdn/{repo}/{path}` (401 for `o/gated` without
//!   the bearer token `secret`), as the Hub's `resolve/` → CDN;
//! - `/cdn/{repo}/{path}` → the bytes, with `Range` and an `ETag`;
//! - `/api/models/{repo}/tree/main` → a JSON listing shaped like the Hub's, in pages of
//!   `set_listing_page(n)` entries with a `Link: <…&cursor=K>; rel="next"` header as the Hub
//!   paginates (all in one page by default); `o/linkloop`'s listing links to itself;
//! - `/plain/{repo}/{path}` → the bytes without range support (200, whole body);
//! - `/trunc/{repo}/{path}` → a 206 that promises the range and closes after 100 bytes;
//! - `/html` → an HTML page; `/loop` → a redirect to itself; `/stall` → no answer for 12 s;
//!   anything else → 404.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A served file: in memory, or read from disk range by range.
pub enum Body {
    /// Bytes in memory.
    Mem(Vec<u8>),
    /// A file on disk.
    File(std::path::PathBuf, u64),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Mem(v) => v.len() as u64,
            Body::File(_, n) => *n,
        }
    }
    /// Bytes a..end (exclusive).
    fn slice(&self, a: u64, end: u64) -> Vec<u8> {
        match self {
            Body::Mem(v) => v[a as usize..end as usize].to_vec(),
            Body::File(p, _) => {
                let mut f = std::fs::File::open(p).unwrap();
                f.seek(SeekFrom::Start(a)).unwrap();
                let mut out = vec![0; (end - a) as usize];
                f.read_exact(&mut out).unwrap();
                out
            }
        }
    }
}

type Files = Arc<Mutex<BTreeMap<String, Arc<Body>>>>;

/// The running server.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Body bytes sent so far (all routes), counted as each write starts.
    pub sent: Arc<AtomicU64>,
    /// Requests served.
    pub requests: Arc<AtomicU64>,
    files: Files,
    page: Arc<AtomicUsize>,
}

struct Req {
    path: String,
    range: Option<(u64, Option<u64>)>,
    auth: Option<String>,
}

fn read_req(s: &mut TcpStream) -> Option<Req> {
    let mut r = BufReader::new(s.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut range = None;
    let mut auth = None;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 || h == "\r\n" {
            break;
        }
        let (k, v) = h.split_once(':')?;
        let v = v.trim();
        match k.to_ascii_lowercase().as_str() {
            "range" => {
                let spec = v.strip_prefix("bytes=")?;
                let (a, b) = spec.split_once('-')?;
                range = Some((a.parse().ok()?, b.parse().ok()));
            }
            "authorization" => auth = Some(v.to_string()),
            _ => {}
        }
    }
    Some(Req { path, range, auth })
}

fn respond(
    s: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &[u8],
    sent: &AtomicU64,
) {
    let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let _ = s.write_all(head.as_bytes());
    // Counted before writing, so the count is never behind what a client has received.
    sent.fetch_add(body.len() as u64, Ordering::Relaxed);
    let _ = s.write_all(body);
    let _ = s.flush();
}

fn etag(data: &Body) -> String {
    // Not a hash: a tag from the length is enough for the tests.
    format!("\"{:016x}\"", data.len())
}

fn serve_bytes(s: &mut TcpStream, req: &Req, data: &Body, ranged: bool, sent: &AtomicU64) {
    let tag = etag(data);
    let len = data.len();
    match req.range {
        Some((a, b)) if ranged => {
            if a >= len {
                respond(
                    s,
                    "416 Range Not Satisfiable",
                    &[("Content-Range", format!("bytes */{len}"))],
                    b"",
                    sent,
                );
                return;
            }
            let end = b.unwrap_or(len - 1).min(len - 1);
            respond(
                s,
                "206 Partial Content",
                &[
                    ("Content-Range", format!("bytes {a}-{end}/{len}")),
                    ("Content-Type", "application/octet-stream".into()),
                    ("ETag", tag),
                    ("Accept-Ranges", "bytes".into()),
                ],
                &data.slice(a, end + 1),
                sent,
            );
        }
        _ => {
            // Whole body, written in pieces; the client may hang up early.
            let head = format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: {len}\r\nContent-Type: application/octet-stream\r\nETag: {tag}\r\n\r\n"
            );
            if s.write_all(head.as_bytes()).is_err() {
                return;
            }
            let mut at = 0;
            while at < len {
                let end = (at + 64 * 1024).min(len);
                sent.fetch_add(end - at, Ordering::Relaxed);
                if s.write_all(&data.slice(at, end)).is_err() {
                    return;
                }
                at = end;
            }
        }
    }
}

fn listing(files: &BTreeMap<String, Arc<Body>>, repo: &str) -> Vec<String> {
    let prefix = format!("{repo}/");
    let items: Vec<String> = files
        .iter()
        .filter_map(|(k, v)| {
            let p = k.strip_prefix(&prefix)?;
            Some(format!(
                "{{\"type\":\"file\",\"oid\":\"0\",\"size\":{},\"path\":\"{p}\",\"lfs\":{{\"oid\":\"0\",\"size\":{},\"pointerSize\":134}}}}",
                v.len(),
                v.len()
            ))
        })
        .collect();
    items
}

fn handle(mut s: TcpStream, files: Files, sent: Arc<AtomicU64>, page: usize, base: &str) {
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let Some(req) = read_req(&mut s) else { return };
    let path = req.path.split('?').next().unwrap_or("").to_string();
    let query = req.path.split_once('?').map(|(_, q)| q).unwrap_or("");
    let get = |k: &str| files.lock().unwrap().get(k).cloned();
    let not_found = |s: &mut TcpStream| {
        respond(
            s,
            "404 Not Found",
            &[("Content-Type", "application/json".into())],
            b"{\"error\":\"Entry not found\"}",
            &sent,
        )
    };
    if let Some(rest) = path.strip_prefix("/api/models/") {
        if let Some((repo, _)) = rest.split_once("/tree/") {
            if repo == "o/gated" && req.auth.as_deref() != Some("Bearer secret") {
                respond(
                    &mut s,
                    "401 Unauthorized",
                    &[],
                    b"{\"error\":\"Access to model o/gated is restricted.\"}",
                    &sent,
                );
                return;
            }
            if repo == "o/linkloop" {
                respond(
                    &mut s,
                    "200 OK",
                    &[
                        ("Content-Type", "application/json".into()),
                        ("Link", format!("<{base}{}>; rel=\"next\"", req.path)),
                    ],
                    b"[]",
                    &sent,
                );
                return;
            }
            let items = listing(&files.lock().unwrap(), repo);
            let cursor: usize = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("cursor="))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let size = if page == 0 { items.len().max(1) } else { page };
            let end = (cursor + size).min(items.len());
            let mut headers = vec![("Content-Type", "application/json".to_string())];
            if end < items.len() {
                headers.push((
                    "Link",
                    format!(
                        "<{base}/api/models/{repo}/tree/main?recursive=true&cursor={end}>; rel=\"next\""
                    ),
                ));
            }
            let body = format!("[{}]", items[cursor.min(end)..end].join(","));
            if items.is_empty() {
                respond(
                    &mut s,
                    "404 Not Found",
                    &[],
                    b"{\"error\":\"Repository not found\"}",
                    &sent,
                );
            } else {
                respond(&mut s, "200 OK", &headers, body.as_bytes(), &sent);
            }
            return;
        }
        not_found(&mut s);
        return;
    }
    if path == "/html" {
        respond(
            &mut s,
            "200 OK",
            &[("Content-Type", "text/html; charset=utf-8".into())],
            b"<!DOCTYPE html><html><body>Sign in</body></html>",
            &sent,
        );
        return;
    }
    if path == "/stall" {
        // Accept, read the request, answer nothing for longer than the client waits.
        std::thread::sleep(std::time::Duration::from_secs(12));
        return;
    }
    if path == "/loop" {
        respond(
            &mut s,
            "302 Found",
            &[("Location", "/loop".into())],
            b"",
            &sent,
        );
        return;
    }
    if let Some(rest) = path.strip_prefix("/cdn/") {
        match get(rest) {
            Some(d) => serve_bytes(&mut s, &req, &d, true, &sent),
            None => not_found(&mut s),
        }
        return;
    }
    if let Some(rest) = path.strip_prefix("/plain/") {
        match get(rest) {
            Some(d) => serve_bytes(&mut s, &req, &d, false, &sent),
            None => not_found(&mut s),
        }
        return;
    }
    if let Some(rest) = path.strip_prefix("/trunc/") {
        match get(rest) {
            Some(d) => {
                let (a, b) = req.range.unwrap_or((0, None));
                let end = b.unwrap_or(d.len() - 1).min(d.len() - 1);
                let head = format!(
                    "HTTP/1.1 206 Partial Content\r\nConnection: close\r\nContent-Range: bytes {a}-{end}/{}\r\nContent-Length: {}\r\n\r\n",
                    d.len(),
                    end - a + 1
                );
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(&d.slice(a, (a + 100).min(d.len())));
                sent.fetch_add(100, Ordering::Relaxed);
            }
            None => not_found(&mut s),
        }
        return;
    }
    // /{owner}/{repo}/resolve/{rev}/{path}
    let parts: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    if let [owner, repo, "resolve", _rev, file] = parts.as_slice() {
        let repo = format!("{owner}/{repo}");
        if repo == "o/gated" && req.auth.as_deref() != Some("Bearer secret") {
            respond(&mut s, "401 Unauthorized", &[("X-Error-Code", "GatedRepo".into())], b"{\"error\":\"Access to model o/gated is restricted. You must have access to it and be authenticated to access it. Please log in.\"}", &sent);
            return;
        }
        let key = format!("{repo}/{file}");
        if get(&key).is_some() {
            respond(
                &mut s,
                "302 Found",
                &[
                    ("Location", format!("/cdn/{key}")),
                    ("X-Linked-Etag", "\"linked\"".into()),
                ],
                b"",
                &sent,
            );
        } else {
            not_found(&mut s);
        }
        return;
    }
    not_found(&mut s);
}

impl Server {
    /// Start on a free loopback port.
    pub fn start() -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let files: Files = Arc::default();
        let sent = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(AtomicU64::new(0));
        let page = Arc::new(AtomicUsize::new(0));
        let (f, s2, r2, p2, b2) = (
            files.clone(),
            sent.clone(),
            requests.clone(),
            page.clone(),
            base.clone(),
        );
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { continue };
                r2.fetch_add(1, Ordering::Relaxed);
                let (f, s2, b2) = (f.clone(), s2.clone(), b2.clone());
                let page = p2.load(Ordering::Relaxed);
                std::thread::spawn(move || handle(c, f, s2, page, &b2));
            }
        });
        Server {
            base,
            sent,
            requests,
            files,
            page,
        }
    }

    /// Send listings in pages of `n` entries (0: all in one), linked as the Hub links them.
    pub fn set_listing_page(&self, n: usize) {
        self.page.store(n, Ordering::Relaxed);
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Serve `data` as `{repo}/{path}`.
    pub fn add(&self, repo_path: &str, data: Vec<u8>) {
        self.files
            .lock()
            .unwrap()
            .insert(repo_path.to_string(), Arc::new(Body::Mem(data)));
    }

    /// Serve the file at `path` as `{repo}/{path}`, read from disk per request.
    pub fn add_file(&self, repo_path: &str, path: &std::path::Path) {
        let len = std::fs::metadata(path).unwrap().len();
        self.files.lock().unwrap().insert(
            repo_path.to_string(),
            Arc::new(Body::File(path.to_path_buf(), len)),
        );
    }

    /// Body bytes sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}
