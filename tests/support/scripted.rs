//! A scripted HTTP/1.1 server on 127.0.0.1 for the hostile-server tests: each test gives a
//! closure that answers a request by writing whatever bytes it likes (a redirect to
//! `file:///etc/passwd`, a body at 1 byte a second, a 429). Bounded: at most `max_requests`
//! connections are served, none after 60 s, and the server stops when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A request as the handler sees it.
pub struct Req {
    /// The request target (`/path?query`).
    pub path: String,
    /// `Range: bytes=a-b`, when sent.
    pub range: Option<(u64, Option<u64>)>,
    /// `Authorization`, when sent.
    pub auth: Option<String>,
}

/// The running server.
pub struct Scripted {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Connections accepted.
    pub requests: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn read_req(s: &TcpStream) -> Option<Req> {
    let mut r = BufReader::new(s.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let (mut range, mut auth) = (None, None);
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 || h == "\r\n" {
            break;
        }
        let Some((k, v)) = h.split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k.to_ascii_lowercase().as_str() {
            "range" => {
                range = v.strip_prefix("bytes=").and_then(|spec| {
                    let (a, b) = spec.split_once('-')?;
                    Some((a.parse().ok()?, b.parse().ok()))
                })
            }
            "authorization" => auth = Some(v.to_string()),
            _ => {}
        }
    }
    Some(Req { path, range, auth })
}

impl Scripted {
    /// Serve at most `max_requests` connections with `handler`.
    pub fn start(
        max_requests: u64,
        handler: impl Fn(&Req, &mut TcpStream) + Send + Sync + 'static,
    ) -> Scripted {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let requests = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r2, s2) = (requests.clone(), stop.clone());
        let handler = Arc::new(handler);
        std::thread::spawn(move || {
            let started = Instant::now();
            while !s2.load(Ordering::Relaxed)
                && started.elapsed() < Duration::from_secs(60)
                && r2.load(Ordering::Relaxed) < max_requests
            {
                match l.accept() {
                    Ok((mut c, _)) => {
                        r2.fetch_add(1, Ordering::Relaxed);
                        let _ = c.set_nonblocking(false);
                        let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                        let _ = c.set_write_timeout(Some(Duration::from_secs(5)));
                        let h = handler.clone();
                        std::thread::spawn(move || {
                            if let Some(req) = read_req(&c) {
                                h(&req, &mut c);
                            }
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Scripted {
            base,
            requests,
            stop,
        }
    }

    /// Connections accepted so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

/// Write a whole response (`Connection: close`, `Content-Length` of `body` unless given).
pub fn respond(s: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
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
    let _ = s.write_all(body);
    let _ = s.flush();
}

/// Answer a range request from `data` (206, with an ETag), or the whole of it (200).
pub fn serve(req: &Req, s: &mut TcpStream, data: &[u8], etag: &str) {
    let len = data.len() as u64;
    match req.range {
        Some((a, b)) if a < len => {
            let end = b.unwrap_or(len - 1).min(len - 1);
            respond(
                s,
                "206 Partial Content",
                &[
                    ("Content-Range", format!("bytes {a}-{end}/{len}")),
                    ("ETag", etag.to_string()),
                ],
                &data[a as usize..=end as usize],
            );
        }
        Some(_) => respond(
            s,
            "416 Range Not Satisfiable",
            &[("Content-Range", format!("bytes */{len}"))],
            b"",
        ),
        None => respond(s, "200 OK", &[("ETag", etag.to_string())], data),
    }
}
