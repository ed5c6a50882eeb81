//! A hostile world, round 2: servers that redirect to `file:`, trickle bytes, claim absurd
//! sizes, rate-limit, list names outside their repository; header caches with FIFOs, planted
//! symbolic links and poisoned entries; tokens and credentials that must never be shown.
//! Every server is a scripted loopback server (127.0.0.1, bounded in requests and time).
//! Each case: exit 1 with one line naming the URL (or the right figures), within a stated
//! time, nothing secret in any output, no file written outside llmbound's own names.

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/scripted.rs"]
mod scripted;

use assert_cmd::Command;
use scripted::{Req, Scripted, respond, serve};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn llmbound(home: &Path, endpoint: &str) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", home.join("config"))
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("HF_HOME", home.join("hf"))
        .env("HF_ENDPOINT", endpoint)
        .env("OLLAMA_MODELS", home.join("ollama"))
        .env("LLMBOUND_HTTP_TIMEOUT", "5")
        .env_remove("LLMBOUND_HEADER_CACHE")
        .env_remove("HF_TOKEN")
        .env_remove("HUGGING_FACE_HUB_TOKEN")
        .env_remove("HF_TOKEN_PATH")
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(40));
    c
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    secs: f64,
}

fn run(c: &mut Command) -> Run {
    let t = Instant::now();
    let o = c.output().unwrap();
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        secs: t.elapsed().as_secs_f64(),
    }
}

/// Exit 1 and one error line (notes aside), no panic, within `secs`; the line.
fn one_line(r: &Run, secs: f64) -> String {
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.secs < secs, "took {:.1} s: {}", r.secs, r.stderr);
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("llmbound: note"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    eprintln!("({:.1} s) {}", r.secs, lines[0]);
    lines[0].to_string()
}

fn tiny() -> Vec<u8> {
    fixtures::tiny("Tiny", 2).to_bytes()
}

#[test]
fn redirects_to_other_schemes_or_without_location_are_one_line_never_a_panic() {
    let home = tempfile::tempdir().unwrap();
    let data = Arc::new(tiny());
    let d = data.clone();
    // Ten failing opens (each source opened once: 1 connection, 9 for the loop) and the
    // relative redirect's reads.
    let srv = Scripted::start(40, move |req: &Req, s: &mut TcpStream| {
        let p = req.path.as_str();
        let to = |s: &mut TcpStream, loc: &str| {
            respond(s, "302 Found", &[("Location", loc.to_string())], b"")
        };
        match p {
            "/file" => to(s, "file:///etc/passwd"),
            "/data" => to(s, "data:,x"),
            "/nohost" => to(s, "http:///x.gguf"),
            "/noloc" => respond(s, "302 Found", &[], b""),
            "/loop" => to(s, "/loop"),
            "/a/start" => to(s, "../b/m.gguf"),
            "/b/m.gguf" => serve(req, s, &d, "\"t\""),
            _ => respond(s, "404 Not Found", &[], b""),
        }
    });
    let b = &srv.base;
    for (path, want) in [
        ("/file", "not an http(s) URL with a host"),
        ("/data", "not an http(s) URL with a host"),
        ("/nohost", "not an http(s) URL with a host"),
        ("/noloc", "without a Location header"),
        ("/loop", "redirect loop"),
    ] {
        for cmd in [
            vec!["inspect".to_string(), format!("{b}{path}")],
            vec![
                "report".to_string(),
                "--machine".into(),
                "epyc-zen5-2vcpu-vm".into(),
                "--gguf".into(),
                format!("{b}{path}"),
            ],
        ] {
            let e = one_line(&run(llmbound(home.path(), b).args(&cmd)), 20.0);
            assert!(e.contains(want) && e.contains(path), "{path}: {e}");
        }
    }
    // A relative Location is resolved against the URL that sent it.
    let r = run(llmbound(home.path(), b).args(["inspect", &format!("{b}/a/start")]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("Tiny"), "{}", r.stdout);
}

#[test]
fn a_trickling_or_stalled_server_ends_at_the_deadline_naming_url_and_bytes() {
    let home = tempfile::tempdir().unwrap();
    let srv = Scripted::start(10, |req: &Req, s: &mut TcpStream| match req.path.as_str() {
        "/trickle" => {
            let _ = s.write_all(
                b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-262143/1000000\r\nContent-Length: 262144\r\n\r\nGGUF",
            );
            for _ in 0..12 {
                std::thread::sleep(Duration::from_millis(500));
                if s.write_all(b"\0").is_err() {
                    return;
                }
            }
        }
        "/slowhead" => {
            for b in b"HTTP/1.1 200 OK\r\n".iter().cycle().take(40) {
                std::thread::sleep(Duration::from_millis(300));
                if s.write_all(&[*b]).is_err() {
                    return;
                }
            }
        }
        _ => std::thread::sleep(Duration::from_secs(8)),
    });
    let b = &srv.base;
    for path in ["/trickle", "/slowhead", "/stall"] {
        let e = one_line(
            &run(llmbound(home.path(), b)
                .env("LLMBOUND_HTTP_TIMEOUT", "2")
                .args(["inspect", &format!("{b}{path}")])),
            6.0,
        );
        assert!(e.contains(path) && e.contains("timed out"), "{e}");
        assert!(e.contains("bytes"), "{e}");
    }
    // The budget of one opening bounds it too, and says so.
    let e = one_line(
        &run(llmbound(home.path(), b)
            .env("LLMBOUND_HTTP_TIMEOUT", "30")
            .env("LLMBOUND_HTTP_BUDGET", "2")
            .args(["inspect", &format!("{b}/stall")])),
        6.0,
    );
    assert!(e.contains("LLMBOUND_HTTP_BUDGET"), "{e}");
    // A limit that is not a number is an error, not a silent default.
    for (var, v) in [
        ("LLMBOUND_HTTP_TIMEOUT", "abc"),
        ("LLMBOUND_HTTP_TIMEOUT", "0"),
        ("LLMBOUND_HTTP_BUDGET", "-1"),
        ("LLMBOUND_REMOTE_HEADER_CAP", "1e9"),
        ("LLMBOUND_MAX_SHARDS", "many"),
    ] {
        let e = one_line(
            &run(llmbound(home.path(), b)
                .env(var, v)
                .args(["inspect", &format!("{b}/stall")])),
            5.0,
        );
        assert!(e.contains(var) && e.contains(v), "{e}");
    }
}

/// A GGUF start claiming `tensors` tensors, then nothing useful.
fn claims(tensors: u64) -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&tensors.to_le_bytes());
    v.extend_from_slice(&0u64.to_le_bytes());
    v.resize(300_000, 7);
    v
}

#[test]
fn absurd_sizes_and_counts_are_refused_against_the_header_cap() {
    let home = tempfile::tempdir().unwrap();
    let huge = Arc::new(claims(1_000_000_000_000));
    let h = huge.clone();
    let real = Arc::new(tiny());
    let r2 = real.clone();
    let srv = Scripted::start(30, move |req: &Req, s: &mut TcpStream| {
        let (a, b) = req
            .range
            .map_or((0, 262_143), |(a, b)| (a, b.unwrap_or(a + 262_143)));
        let total = match req.path.as_str() {
            // 1 PB, under the absurd-size limit: the count is checked against the cap.
            "/pb" => 1_000_000_000_000_000u64,
            "/max" => u64::MAX,
            _ => {
                serve(req, s, &r2, "\"r\"");
                return;
            }
        };
        // Whatever range is asked for, answer it with the claimed total.
        let end = b.min(a + 299_999).min(total - 1);
        let body: Vec<u8> = (a..=end)
            .map(|i| *h.get(i as usize).unwrap_or(&7))
            .collect();
        respond(
            s,
            "206 Partial Content",
            &[("Content-Range", format!("bytes {a}-{end}/{total}"))],
            &body,
        );
    });
    let b = &srv.base;
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", &format!("{b}/pb")])),
        10.0,
    );
    assert!(
        e.contains("tensor count") && e.contains("LLMBOUND_REMOTE_HEADER_CAP"),
        "{e}"
    );
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", &format!("{b}/max")])),
        10.0,
    );
    assert!(
        e.contains("18446744073709551615") && e.contains("1 PiB"),
        "{e}"
    );
    // A real header longer than a (lowered) cap stops at the cap, naming it.
    let e = one_line(
        &run(llmbound(home.path(), b)
            .env("LLMBOUND_REMOTE_HEADER_CAP", "4096")
            .args(["inspect", &format!("{b}/real")])),
        10.0,
    );
    assert!(
        e.contains("LLMBOUND_REMOTE_HEADER_CAP") && e.contains("/real"),
        "{e}"
    );
    let r = run(llmbound(home.path(), b).args(["inspect", &format!("{b}/real")]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn tokens_and_credentials_never_reach_any_output() {
    let home = tempfile::tempdir().unwrap();
    let data = Arc::new(tiny());
    let d = data.clone();
    let srv = Scripted::start(60, move |req: &Req, s: &mut TcpStream| {
        if req.path.starts_with("/api/models/o/r/tree") {
            let body = format!(
                "[{{\"type\":\"file\",\"path\":\"Tiny-Q8_0.gguf\",\"size\":{}}}]",
                d.len()
            );
            respond(
                s,
                "200 OK",
                &[("Content-Type", "application/json".into())],
                body.as_bytes(),
            );
        } else if req.path.contains("Tiny-Q8_0.gguf") {
            serve(req, s, &d, "\"t\"");
        } else {
            respond(s, "404 Not Found", &[], b"{\"error\":\"nope\"}");
        }
    });
    let b = &srv.base;
    let secret = "hunter2secret";
    // A token a header cannot carry is refused by name, never quoted.
    for bad in [
        format!("{secret}\u{1}x"),
        format!("{secret}\r\nX-Evil: 1"),
        format!("{secret} x"),
        format!("{secret}é"),
    ] {
        let r = run(llmbound(home.path(), b)
            .env("HF_TOKEN", &bad)
            .args(["inspect", "o/r:Q8_0"]));
        let e = one_line(&r, 10.0);
        assert!(e.contains("HF_TOKEN"), "{e}");
        assert!(
            !r.stderr.contains(secret) && !r.stdout.contains(secret),
            "{}",
            r.stderr
        );
    }
    // A bad token stops only the requests that would carry it (to the Hub's host).
    let r = run(llmbound(home.path(), "http://localhost:9")
        .env("HF_TOKEN", format!("{secret} x"))
        .args(["inspect", &format!("{b}/Tiny-Q8_0.gguf")]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // The same from a token file.
    std::fs::create_dir_all(home.path().join("hf")).unwrap();
    std::fs::write(home.path().join("hf/token"), format!("{secret}\u{7f}\n")).unwrap();
    let r = run(llmbound(home.path(), b).args(["inspect", "o/r:Q8_0"]));
    one_line(&r, 10.0);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
    std::fs::remove_file(home.path().join("hf/token")).unwrap();

    // Credentials in a URL or HF_ENDPOINT: never shown, in errors or on stdout.
    let host = b.strip_prefix("http://").unwrap();
    let with_pw = format!("http://user:{secret}@{host}");
    for (endpoint, spec) in [
        (b.clone(), format!("{with_pw}/missing.gguf")),
        (with_pw.clone(), "hf://o/r/missing.gguf".to_string()),
        (with_pw.clone(), "o/r:Q4_K_M".to_string()),
    ] {
        let r = run(llmbound(home.path(), &endpoint).args(["inspect", &spec]));
        one_line(&r, 10.0);
        assert!(!r.stderr.contains(secret), "{}", r.stderr);
    }
    for args in [
        vec!["inspect".to_string(), format!("{with_pw}/Tiny-Q8_0.gguf")],
        vec![
            "inspect".into(),
            "--format".into(),
            "json".into(),
            format!("{with_pw}/Tiny-Q8_0.gguf"),
        ],
        vec![
            "report".into(),
            "--machine".into(),
            "epyc-zen5-2vcpu-vm".into(),
            "--gguf".into(),
            format!("{with_pw}/Tiny-Q8_0.gguf"),
        ],
        vec![
            "report".into(),
            "--machine".into(),
            "epyc-zen5-2vcpu-vm".into(),
            "--format".into(),
            "json".into(),
            "--gguf".into(),
            "o/r:Q8_0".into(),
        ],
    ] {
        let r = run(llmbound(home.path(), &with_pw).args(&args));
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert!(
            !r.stdout.contains(secret) && !r.stderr.contains(secret),
            "{args:?}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// A file of `home`'s header cache that is an entry (`*.bin`).
fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// A header longer than the first range (256 KiB) with the tensor infos after the padding:
/// a change there is invisible to a check of the first range only.
fn long_header() -> Vec<u8> {
    fixtures::tiny("Long", 2)
        .kv(
            "x.pad",
            llmbound::gguf::writer::string_array((0..40_000).map(|i| format!("pad{i:08}"))),
        )
        .to_bytes()
}

#[test]
fn header_cache_entries_are_bounded_exclusive_and_authenticated() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("hc");
    let data = Arc::new(long_header());
    let d = data.clone();
    let srv = Scripted::start(200, move |req: &Req, s: &mut TcpStream| {
        serve(req, s, &d, "\"e1\"");
    });
    let b = &srv.base;
    let url = format!("{b}/m.gguf");
    let inspect = |extra: &[(&str, &str)]| {
        let mut c = llmbound(home.path(), b);
        c.env("LLMBOUND_HEADER_CACHE", &cache)
            .args(["inspect", "--format", "json", &url]);
        for (k, v) in extra {
            c.env(k, v);
        }
        run(&mut c)
    };
    let clean = inspect(&[]);
    assert_eq!(clean.code, Some(0), "{}", clean.stderr);
    let files = entries(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    let entry = files[0].clone();
    assert!(entry.extension().is_some_and(|e| e == "bin"), "{entry:?}");
    // The key is in the configuration folder, not the shared cache folder.
    assert!(home.path().join("config/header-cache.key").is_file());
    // A second reading uses the entry: one request.
    let before = srv.requests();
    let again = inspect(&[]);
    assert_eq!(again.stdout, clean.stdout);
    assert_eq!(srv.requests() - before, 1);

    // 7: a poisoned entry (tensor infos changed past the first range, self-consistently as
    // far as the old cache could tell) is never used: the figures are the server's.
    let mut raw = std::fs::read(&entry).unwrap();
    let needle = b"blk.1.ffn_down.weight";
    let at = raw
        .windows(needle.len())
        .rposition(|w| w == needle)
        .expect("a tensor name in the entry");
    assert!(
        at > 300_000,
        "the tensor infos sit after the first range ({at})"
    );
    // The first dimension (512) of that tensor becomes 1024.
    let dim = at + needle.len() + 4;
    raw[dim..dim + 8].copy_from_slice(&1024u64.to_le_bytes());
    std::fs::write(&entry, &raw).unwrap();
    let before = srv.requests();
    let r = inspect(&[]);
    assert_eq!(
        r.stdout, clean.stdout,
        "a poisoned entry changed the figures"
    );
    assert!(srv.requests() - before > 1, "the poisoned entry was used");
    // An entry written under another user's key (another configuration folder) is not used.
    let other = tempfile::tempdir().unwrap();
    std::fs::remove_file(&entry).unwrap();
    let r = run(llmbound(other.path(), b)
        .env("LLMBOUND_HEADER_CACHE", &cache)
        .args(["inspect", "--format", "json", &url]));
    assert_eq!(r.code, Some(0));
    let before = srv.requests();
    assert_eq!(inspect(&[]).stdout, clean.stdout);
    assert!(srv.requests() - before > 1, "another key's entry was used");

    // 5: an entry that is a FIFO, a link to /dev/zero or larger than the cap is not read.
    #[cfg(unix)]
    {
        std::fs::remove_file(&entry).ok();
        let st = std::process::Command::new("mkfifo")
            .arg(&entry)
            .status()
            .unwrap();
        assert!(st.success());
        let r = inspect(&[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(
            r.secs < 10.0,
            "a FIFO entry hung the read ({:.1} s)",
            r.secs
        );
        assert_eq!(r.stdout, clean.stdout);
        std::fs::remove_file(&entry).ok();
        std::os::unix::fs::symlink("/dev/zero", &entry).unwrap();
        let r = inspect(&[]);
        assert_eq!(r.stdout, clean.stdout);
        assert!(r.secs < 10.0, "{:.1} s", r.secs);
        std::fs::remove_file(&entry).ok();
        std::fs::write(&entry, vec![0u8; 2 << 20]).unwrap();
        // Larger than the (lowered) cap: not read, the header comes from the server.
        let r = inspect(&[("LLMBOUND_REMOTE_HEADER_CAP", "1048576")]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.stdout, clean.stdout);
    }

    // 6: a symbolic link planted where a temporary file could go is never followed.
    #[cfg(unix)]
    {
        for f in entries(&cache) {
            std::fs::remove_file(f).unwrap();
        }
        let victim = home.path().join("victim.txt");
        std::fs::write(&victim, "user data").unwrap();
        let stem = entry.file_name().unwrap().to_str().unwrap().to_string();
        for name in [
            format!("{stem}.tmp"),
            stem.replace(".bin", ".tmp"),
            format!(".{stem}.tmp"),
        ] {
            std::os::unix::fs::symlink(&victim, cache.join(name)).unwrap();
        }
        let r = inspect(&[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "user data");
        // Only the links planted and the new entry: no temporary file left.
        let names: Vec<String> = entries(&cache)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names.contains(&stem), "{names:?}");
    }
}

#[test]
fn split_models_are_capped_in_shards_and_requests() {
    let home = tempfile::tempdir().unwrap();
    let first = fixtures::tiny("Many", 1)
        .kv("split.no", llmbound::gguf::Value::U16(0))
        .kv("split.count", llmbound::gguf::Value::U16(65535))
        .to_bytes();
    let shards: Vec<Vec<u8>> = fixtures::split("Three", 1, 3)
        .iter()
        .map(|w| w.to_bytes())
        .collect();
    let (f, sh) = (Arc::new(first), Arc::new(shards));
    let srv = Scripted::start(60, move |req: &Req, s: &mut TcpStream| {
        let p = req.path.as_str();
        if p.ends_with("-00001-of-65535.gguf") {
            serve(req, s, &f, "\"m\"");
        } else if let Some(i) = (1..=3).find(|i| p.ends_with(&format!("-0000{i}-of-00003.gguf"))) {
            serve(req, s, &sh[i - 1], "\"s\"");
        } else {
            respond(s, "404 Not Found", &[], b"");
        }
    });
    let b = &srv.base;
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", &format!("{b}/m-00001-of-65535.gguf")])),
        10.0,
    );
    assert!(
        e.contains("65535") && e.contains("LLMBOUND_MAX_SHARDS"),
        "{e}"
    );
    assert!(srv.requests() <= 2, "{} requests", srv.requests());
    let url = format!("{b}/t-00001-of-00003.gguf");
    let r = run(llmbound(home.path(), b).args(["inspect", &url]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let e = one_line(
        &run(llmbound(home.path(), b)
            .env("LLMBOUND_MAX_REQUESTS", "2")
            .args(["inspect", &url])),
        10.0,
    );
    assert!(e.contains("LLMBOUND_MAX_REQUESTS"), "{e}");
    let e = one_line(
        &run(llmbound(home.path(), b)
            .env("LLMBOUND_MAX_SHARDS", "2")
            .args(["inspect", &url])),
        10.0,
    );
    assert!(e.contains("LLMBOUND_MAX_SHARDS"), "{e}");
}

#[test]
fn names_never_leave_their_repository_or_store() {
    let home = tempfile::tempdir().unwrap();
    let data = Arc::new(tiny());
    let d = data.clone();
    let srv = Scripted::start(40, move |req: &Req, s: &mut TcpStream| {
        if req.path.starts_with("/api/models/o/r/tree") {
            let body = "[{\"type\":\"file\",\"path\":\"../../../../other/repo/resolve/main/tiny-Q4_K_M.gguf\",\"size\":10}]";
            respond(
                s,
                "200 OK",
                &[("Content-Type", "application/json".into())],
                body.as_bytes(),
            );
        } else if req.path.contains("tiny-Q4_K_M.gguf") || req.path.contains("x.gguf") {
            serve(req, s, &d, "\"t\"");
        } else {
            respond(s, "404 Not Found", &[], b"");
        }
    });
    let b = &srv.base;
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", "o/r:Q4_K_M"])),
        10.0,
    );
    assert!(e.contains("not a path inside the repository"), "{e}");
    for spec in [
        "hf://o/r/../../x.gguf",
        "hf://o/r/./x.gguf",
        "hf://o/r//x.gguf",
        "hf://../r/x.gguf",
        "hf://o/r@../x.gguf",
    ] {
        let e = one_line(&run(llmbound(home.path(), b).args(["inspect", spec])), 10.0);
        assert!(
            e.contains("stay inside")
                || e.contains("not an owner/repository")
                || e.contains("not a revision"),
            "{spec}: {e}"
        );
    }
    // Only the listing was asked for: no file outside o/r was requested.
    assert!(srv.requests() <= 1, "{} requests", srv.requests());
    // Ollama names: a manifest outside the store is never read.
    std::fs::create_dir_all(home.path().join("ollama/manifests")).unwrap();
    std::fs::write(home.path().join("outside"), "{}").unwrap();
    for name in [
        "ollama:../..",
        "ollama:../../outside",
        "ollama:/etc/passwd",
        "ollama:a//b:c",
    ] {
        let e = one_line(&run(llmbound(home.path(), b).args(["inspect", name])), 10.0);
        assert!(e.contains("not a model name"), "{name}: {e}");
    }
}

#[test]
fn rate_limits_and_oversize_listings_are_said_as_they_are() {
    let home = tempfile::tempdir().unwrap();
    let data = Arc::new(tiny());
    let d = data.clone();
    let hits = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let h = hits.clone();
    let srv = Scripted::start(60, move |req: &Req, s: &mut TcpStream| {
        let p = req.path.as_str();
        if p.starts_with("/api/models/busy/") {
            respond(
                s,
                "429 Too Many Requests",
                &[("Retry-After", "1".into())],
                b"{\"error\":\"slow down\"}",
            );
        } else if p.starts_with("/api/models/flaky/r/tree") {
            // Rate-limited twice, then the listing.
            if h.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 2 {
                respond(
                    s,
                    "429 Too Many Requests",
                    &[("Retry-After", "0".into())],
                    b"",
                );
            } else {
                let body = format!(
                    "[{{\"type\":\"file\",\"path\":\"T-Q8_0.gguf\",\"size\":{}}}]",
                    d.len()
                );
                respond(s, "200 OK", &[], body.as_bytes());
            }
        } else if p.starts_with("/api/models/big/") {
            // 40 MB of listing.
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 40000000\r\n\r\n[");
            let chunk = vec![b' '; 1 << 20];
            for _ in 0..40 {
                if s.write_all(&chunk).is_err() {
                    return;
                }
            }
        } else if p.contains("T-Q8_0.gguf") {
            serve(req, s, &d, "\"t\"");
        } else {
            respond(s, "404 Not Found", &[], b"");
        }
    });
    let b = &srv.base;
    let r = run(llmbound(home.path(), b).args(["inspect", "flaky/r:Q8_0"]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", "busy/r:Q8_0"])),
        10.0,
    );
    assert!(e.contains("429") && e.contains("Retry-After: 1"), "{e}");
    assert!(!e.contains("404"), "{e}");
    let e = one_line(
        &run(llmbound(home.path(), b).args(["inspect", "big/r:Q8_0"])),
        15.0,
    );
    assert!(e.contains("larger than") && !e.contains("404"), "{e}");
}

#[test]
fn json_escapes_bidi_and_c1_and_error_lines_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("evil.gguf");
    std::fs::write(
        &p,
        fixtures::tiny("a\u{202e}b\u{85}c\u{2066}d", 1).to_bytes(),
    )
    .unwrap();
    let r = run(llmbound(dir.path(), "http://127.0.0.1:9")
        .args(["inspect", "--format", "json"])
        .arg(&p));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for c in ['\u{202e}', '\u{85}', '\u{2066}'] {
        assert!(!r.stdout.contains(c), "raw {c:?} in JSON");
    }
    assert!(
        r.stdout.contains("a\\u202eb\\u0085c\\u2066d"),
        "{}",
        r.stdout
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        v.to_string().contains("a\u{202e}b"),
        "the escape must keep the value"
    );
    // An error naming a 100,000-character name stays one line of bounded length.
    let long = format!("{}/{}", dir.path().display(), "n".repeat(100_000));
    let e = one_line(
        &run(llmbound(dir.path(), "http://127.0.0.1:9").args(["inspect", &long])),
        10.0,
    );
    assert!(
        e.chars().count() < 2_200,
        "{} characters",
        e.chars().count()
    );
    assert!(e.contains("characters cut"), "{e}");
}

#[test]
fn a_long_tensor_list_is_fetched_once() {
    // 20,000 tensors (more than the reader reserves without counting): about 900 KB of
    // header, read in three ranges (256 KiB, 512 KiB, 1 MiB). Walking the list twice, as
    // before, seeks back and fetches it again.
    let home = tempfile::tempdir().unwrap();
    let mut w = llmbound::gguf::writer::GgufWriter::new().kv(
        "general.architecture",
        llmbound::gguf::writer::string("llama"),
    );
    for i in 0..20_000 {
        w = w.tensor(&format!("t.{i:06}"), llmbound::gguf::GgmlType::F32, &[4]);
    }
    let data = Arc::new(w.to_bytes());
    let d = data.clone();
    let srv = Scripted::start(20, move |req: &Req, s: &mut TcpStream| {
        serve(req, s, &d, "\"l\"")
    });
    let b = &srv.base;
    let r = run(llmbound(home.path(), b).args(["inspect", &format!("{b}/long.gguf")]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(srv.requests(), 3, "{}", r.stderr);
}
