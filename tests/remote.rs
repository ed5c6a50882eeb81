//! Remote GGUF over HTTP range reads, against a real HTTP server on 127.0.0.1: the figures
//! equal the local file's byte for byte, only the header is transferred, split models are
//! found shard by shard, and every misbehaving server is one clear line (nothing hangs).

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/server.rs"]
mod server;

use assert_cmd::Command;
use llmbound::gguf::writer::Data;
use llmbound::remote::http::MAX_FETCH_BYTES;
use server::Server;
use std::path::{Path, PathBuf};

fn llmbound(home: &Path, srv: &Server) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", home.join("config"))
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("HF_HOME", home.join("hf"))
        .env("HF_ENDPOINT", &srv.base)
        .env("LLMBOUND_HTTP_TIMEOUT", "5")
        .env_remove("HF_TOKEN")
        .env_remove("HUGGING_FACE_HUB_TOKEN")
        .env_remove("HF_TOKEN_PATH")
        .env("NO_COLOR", "1");
    c
}

fn gemma() -> Option<PathBuf> {
    let p = PathBuf::from(std::env::var_os("LLMBOUND_GEMMA_GGUF")?);
    if p.is_file() { Some(p) } else { None }
}

/// The JSON of a command with the file's name written the same way for local and remote.
fn json_of(out: &[u8], replace: &[(&str, &str)]) -> String {
    let mut s = String::from_utf8(out.to_vec()).unwrap();
    for (a, b) in replace {
        s = s.replace(a, b);
    }
    s
}

/// "… N bytes transferred …" from the note on stderr.
fn transferred(stderr: &[u8]) -> u64 {
    let s = String::from_utf8_lossy(stderr);
    let line = s
        .lines()
        .find(|l| l.contains("bytes transferred"))
        .unwrap_or_else(|| panic!("no transfer note in {s}"));
    let n = line
        .split("header read over HTTP: ")
        .nth(1)
        .unwrap()
        .split(" bytes")
        .next()
        .unwrap();
    n.replace(',', "").parse().unwrap()
}

/// Equal texts, or the first line that differs. The llama.cpp command names a remote model
/// the way llama.cpp takes it (`-mu URL`, `-hf owner/repo:QUANT`) where the local file has
/// `-m FILE`: the flag is set aside here (tested in `report::tests`), everything else is equal.
fn same(got: &str, want: &str, what: &str) {
    let got = &got
        .replace("llama-server -mu ", "llama-server -m ")
        .replace("llama-server -hf ", "llama-server -m ");
    if got != want {
        let (i, (g, w)) = got
            .lines()
            .zip(want.lines())
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .unwrap_or((0, ("(length)", "(length)")));
        panic!("{what}: line {i} differs:\n got: {g}\nwant: {w}");
    }
}

fn run_ok(c: &mut Command) -> (Vec<u8>, Vec<u8>) {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (o.stdout, o.stderr)
}

fn one_line_error(c: &mut Command) -> String {
    let start = std::time::Instant::now();
    let o = c.output().unwrap();
    assert!(start.elapsed().as_secs() < 30, "took {:?}", start.elapsed());
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("llmbound: note"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn gemma_over_http_equals_the_local_file_byte_for_byte() {
    let Some(local) = gemma() else {
        skipped!("SKIPPED: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m Q4_K_M GGUF");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    let name = local.file_name().unwrap().to_str().unwrap().to_string();
    let name = name.as_str();
    srv.add_file(&format!("o/r/{name}"), &local);
    let header = llmbound::gguf::open(&local).unwrap();
    let data_start = header.header().data_start;
    let local_s = local.display().to_string();

    let args = [
        "--machine",
        "epyc-zen5-2vcpu-vm",
        "-c",
        "4096",
        "--format",
        "json",
    ];
    let (want, _) = run_ok(
        llmbound(home.path(), &srv)
            .arg("report")
            .args(args)
            .arg("--gguf")
            .arg(&local),
    );
    let want = json_of(&want, &[(&local_s, "FILE")]);
    let (inspect_want, _) = run_ok(
        llmbound(home.path(), &srv)
            .args(["inspect", "--format", "json"])
            .arg(&local),
    );
    let inspect_want = json_of(&inspect_want, &[(&local_s, "FILE")]);

    for spec in [
        format!("{}/o/r/resolve/main/{name}", srv.base),
        format!("hf://o/r/{name}"),
        format!("hf://o/r@main/{name}"),
        "o/r:Q4_K_M".to_string(),
        "o/r:q4_k_m".to_string(),
    ] {
        let url = format!("{}/o/r/resolve/main/{name}", srv.base);
        let before = srv.sent();
        let (got, err) = run_ok(
            llmbound(home.path(), &srv)
                .arg("report")
                .args(args)
                .arg("--gguf")
                .arg(&spec),
        );
        let mut got = json_of(&got, &[(&url, "FILE"), (&spec, "FILE")]);
        got = got.replace(
            &format!("\"model_path\": \"{spec}\""),
            "\"model_path\": \"FILE\"",
        );
        same(&got, &want, &format!("report JSON for {spec}"));
        let bytes = transferred(&err);
        let sent = srv.sent() - before;
        assert!(sent >= bytes, "server sent {sent}, client counted {bytes}");
        assert!(
            bytes < data_start + MAX_FETCH_BYTES,
            "{spec}: {bytes} bytes for a {data_start}-byte header"
        );
        eprintln!(
            "{spec}: {bytes} bytes transferred for a header of {data_start} bytes ({})",
            String::from_utf8_lossy(&err).trim()
        );
    }
    let url = format!("{}/o/r/resolve/main/{name}", srv.base);
    // compare over several machines takes the remote file as report does.
    let cmp = [
        "compare",
        "--machine",
        "epyc-zen5-2vcpu-vm",
        "--machine",
        "macbook-pro-m4-pro-48gb",
        "-c",
        "4096",
        "--format",
        "json",
        "--gguf",
    ];
    let (cmp_want, _) = run_ok(llmbound(home.path(), &srv).args(cmp).arg(&local));
    let (cmp_got, err) = run_ok(llmbound(home.path(), &srv).args(cmp).arg(&url));
    same(
        &json_of(&cmp_got, &[(&url, "FILE")]),
        &json_of(&cmp_want, &[(&local_s, "FILE")]),
        "compare JSON",
    );
    assert!(transferred(&err) < data_start + MAX_FETCH_BYTES);
    let (got, _) = run_ok(
        llmbound(home.path(), &srv)
            .args(["inspect", "--format", "json"])
            .arg(&url),
    );
    same(
        &json_of(&got, &[(&url, "FILE")]),
        &inspect_want,
        "inspect JSON",
    );

    // The optional header cache (URL + ETag): a second reading needs only the first request.
    let cache = home.path().join("header-cache");
    let spec = format!("hf://o/r/{name}");
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (got, err) = run_ok(
            llmbound(home.path(), &srv)
                .env("LLMBOUND_HEADER_CACHE", &cache)
                .arg("report")
                .args(args)
                .arg("--gguf")
                .arg(&spec),
        );
        runs.push((got, transferred(&err)));
    }
    assert_eq!(runs[0].0, runs[1].0);
    assert!(runs[0].1 > data_start, "{}", runs[0].1);
    assert_eq!(runs[1].1, llmbound::remote::http::FIRST_FETCH_BYTES);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);

    // A long array left in the file is loaded with range reads too (the explorer's Enter).
    let local_tokens = llmbound::gguf::open(&local)
        .unwrap()
        .load_array("tokenizer.ggml.tokens")
        .unwrap();
    let remote_tokens =
        llmbound::remote::load_array_any(Path::new(&url), "tokenizer.ggml.tokens").unwrap();
    assert_eq!(remote_tokens, local_tokens);

    // A server without range support: the header is read from the start of the stream.
    let plain = format!("{}/plain/o/r/{name}", srv.base);
    let (got, err) = run_ok(
        llmbound(home.path(), &srv)
            .arg("report")
            .args(args)
            .arg("--gguf")
            .arg(&plain),
    );
    same(
        &json_of(&got, &[(&plain, "FILE")]).replace(
            &format!("\"model_path\": \"{plain}\""),
            "\"model_path\": \"FILE\"",
        ),
        &want,
        "report JSON without range support",
    );
    let e = String::from_utf8_lossy(&err);
    assert!(e.contains("does not support range requests"), "{e}");
    assert!(transferred(&err) < data_start + MAX_FETCH_BYTES);
}

#[test]
fn split_models_are_read_shard_by_shard() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start();
    let mut sizes = 0;
    for (i, w) in fixtures::split("Tiny Split", 4, 3).iter().enumerate() {
        let name = format!("Tiny-Q8_0-{:05}-of-00003.gguf", i + 1);
        let p = dir.path().join(&name);
        sizes += w.write_file(&p, Data::Zeros).unwrap();
        srv.add(&format!("o/r/Q8_0/{name}"), std::fs::read(&p).unwrap());
    }
    let local = dir.path().join("Tiny-Q8_0-00001-of-00003.gguf");
    let args = [
        "--machine",
        "epyc-zen5-2vcpu-vm",
        "-c",
        "2048",
        "--format",
        "json",
    ];
    let (want, _) = run_ok(
        llmbound(home.path(), &srv)
            .arg("report")
            .args(args)
            .arg("--gguf")
            .arg(&local),
    );
    let d = dir.path().display().to_string();
    let want = json_of(
        &want,
        &[
            (&d, "DIR"),
            (
                &local.display().to_string(),
                "DIR/Tiny-Q8_0-00001-of-00003.gguf",
            ),
        ],
    );
    let base = format!("{}/o/r/resolve/main/Q8_0", srv.base);
    let (got, err) = run_ok(
        llmbound(home.path(), &srv)
            .arg("report")
            .args(args)
            .args(["--gguf", "o/r:Q8_0"]),
    );
    let got =
        json_of(&got, &[(&base, "DIR")]).replace("o/r:Q8_0", "DIR/Tiny-Q8_0-00001-of-00003.gguf");
    same(&got, &want, "split report JSON");
    assert!(String::from_utf8_lossy(&err).contains("for 3 files totalling"));
    let (j, _) =
        run_ok(llmbound(home.path(), &srv).args(["inspect", "--format", "json", "o/r:Q8_0"]));
    let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(v["file"]["shards"].as_array().map(|a| a.len()), Some(3));
    assert_eq!(v["file"]["bytes"].as_u64(), Some(sizes));
}

#[test]
fn quant_picking_and_gated_repos() {
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    let bytes = fixtures::tiny("Tiny", 2).to_bytes();
    for q in ["Q4_K_M", "Q8_0", "UD-Q4_K_XL"] {
        srv.add(&format!("o/r/Tiny-{q}.gguf"), bytes.clone());
    }
    srv.add("o/r/mmproj-F16.gguf", fixtures::projector().to_bytes());
    srv.add("o/gated/Tiny-Q4_K_M.gguf", bytes.clone());

    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/r:Q5_K_M"]));
    assert!(e.contains("no GGUF file for quant \"Q5_K_M\""), "{e}");
    assert!(e.contains("Q4_K_M, Q8_0, UD-Q4_K_XL"), "{e}");
    run_ok(llmbound(home.path(), &srv).args(["inspect", "o/r:Q4_K_XL"]));

    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/gated:Q4_K_M"]));
    assert!(
        e.contains("401") && e.contains("gated") && e.contains("HF_TOKEN"),
        "{e}"
    );
    let e = one_line_error(
        llmbound(home.path(), &srv).args(["inspect", "hf://o/gated/Tiny-Q4_K_M.gguf"]),
    );
    assert!(e.contains("401") && e.contains("gated"), "{e}");
    // A wrong token is named by where it came from.
    let e = one_line_error(
        llmbound(home.path(), &srv)
            .env("HF_TOKEN", "wrong")
            .args(["inspect", "hf://o/gated/Tiny-Q4_K_M.gguf"]),
    );
    assert!(e.contains("token from HF_TOKEN was refused"), "{e}");
    // The right token, from the environment or from the token file.
    run_ok(
        llmbound(home.path(), &srv)
            .env("HF_TOKEN", "secret")
            .args(["inspect", "o/gated:Q4_K_M"]),
    );
    std::fs::create_dir_all(home.path().join("hf")).unwrap();
    std::fs::write(home.path().join("hf/token"), "secret\n").unwrap();
    run_ok(llmbound(home.path(), &srv).args(["inspect", "hf://o/gated/Tiny-Q4_K_M.gguf"]));
    std::fs::remove_file(home.path().join("hf/token")).unwrap();

    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "hf://o/r/Nope.gguf"]));
    assert!(e.contains("404") && e.contains("Tiny-Q8_0.gguf"), "{e}");
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "nobody/none:Q4_K_M"]));
    assert!(e.contains("404"), "{e}");
    // Hashing needs the bytes.
    let e = one_line_error(llmbound(home.path(), &srv).args(["hash", "o/r:Q8_0"]));
    assert!(e.contains("needs the file on disk"), "{e}");
}

/// The explorer started with `--gguf URL` does what `cli.rs` and `tui/event.rs` do: build the
/// scenario with the file (checking the options before the terminal is taken), then open the
/// file on a worker. The header must cross the network once.
fn explorer_reads_the_header_once(srv: &Server, url: &str, file_len: u64, header_len: u64) {
    use llmbound::build::ScenarioOptions;
    use llmbound::tui::{Action, App};
    let home = tempfile::tempdir().unwrap();
    let cat = llmbound::profile::Catalog::load_with(Some(home.path().join("config")));
    let opts = ScenarioOptions {
        machine: Some("epyc-zen5-2vcpu-vm".into()),
        context: Some(4096),
        ..Default::default()
    };
    let before = srv.sent();
    let checked = llmbound::workspace::scenario(
        &cat,
        &ScenarioOptions {
            gguf: Some(PathBuf::from(url)),
            ..opts.clone()
        },
    )
    .unwrap();
    let once = srv.sent() - before;
    assert!(once > 0);
    assert!(
        once < header_len + MAX_FETCH_BYTES,
        "{once} bytes for a {header_len}-byte header"
    );
    let mut app = App::new(cat, &opts).unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(PathBuf::from(url)));
    app.wait_for_jobs(std::time::Duration::from_secs(30));
    let loaded = app
        .file()
        .loaded
        .as_ref()
        .expect("the explorer opened the URL");
    assert_eq!(loaded.total_bytes, file_len);
    assert_eq!(app.ws().report().artifact.bytes, file_len);
    assert_eq!(app.ws().scenario().weights, checked.weights);
    assert_eq!(
        srv.sent() - before,
        once,
        "{url}: the explorer read the header again"
    );
    // The note the panes show says what the one reading cost.
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains(&format!("{} bytes transferred", group(once)))),
        "{:?}",
        loaded.warnings
    );
}

fn group(n: u64) -> String {
    llmbound::core::units::group_digits(n as u128)
}

#[test]
fn the_explorer_reads_a_remote_header_once() {
    let srv = Server::start();
    let tiny = fixtures::tiny("Tiny", 2).to_bytes();
    let len = tiny.len() as u64;
    srv.add("o/r/Tiny-Q8_0.gguf", tiny);
    let url = format!("{}/o/r/resolve/main/Tiny-Q8_0.gguf", srv.base);
    explorer_reads_the_header_once(&srv, &url, len, len);
    let Some(local) = gemma() else {
        skipped!("(gemma part) set LLMBOUND_GEMMA_GGUF to the gemma-3-270m Q4_K_M GGUF");
        return;
    };
    srv.add_file("o/r/gemma.gguf", &local);
    let a = llmbound::gguf::open(&local).unwrap();
    let url = format!("{}/o/r/resolve/main/gemma.gguf", srv.base);
    explorer_reads_the_header_once(&srv, &url, a.file_bytes(), a.header().data_start);
}

#[test]
fn long_listings_are_followed_page_by_page() {
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    srv.set_listing_page(4);
    for i in 0..13 {
        srv.add(&format!("o/r/a{i:02}-notes.txt"), b"x".to_vec());
    }
    // Sorted last, so only the fourth page of four names it.
    srv.add(
        "o/r/zz/Tiny-Q6_K.gguf",
        fixtures::tiny("Tiny", 2).to_bytes(),
    );
    let before = srv.requests();
    let (out, _) = run_ok(llmbound(home.path(), &srv).args(["inspect", "o/r:Q6_K"]));
    assert!(String::from_utf8_lossy(&out).contains("Tiny"));
    // Four listing pages, the resolve/ redirect and one range read.
    assert_eq!(srv.requests() - before, 6);
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/r:Q2_K"]));
    assert!(e.contains("quants there: Q6_K"), "{e}");

    // A next-page link back to a page already read is one line, not a loop.
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/linkloop:Q4_K_M"]));
    assert!(e.contains("points back to a page already read"), "{e}");

    // The number of pages is capped.
    srv.set_listing_page(1);
    for i in 0..llmbound::remote::hf::MAX_LISTING_PAGES {
        srv.add(&format!("o/huge/f{i:03}.txt"), b"x".to_vec());
    }
    srv.add("o/huge/zz-Q8_0.gguf", b"x".to_vec());
    let before = srv.requests();
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/huge:Q8_0"]));
    assert!(e.contains("goes on past 100 pages"), "{e}");
    assert_eq!(
        srv.requests() - before,
        llmbound::remote::hf::MAX_LISTING_PAGES as u64
    );
}

#[test]
fn a_header_longer_than_the_no_range_cap_is_one_line() {
    use llmbound::remote::http::NO_RANGE_CAP_BYTES;
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    // A metadata string longer than the cap: the header goes on past it.
    let big = "x".repeat(NO_RANGE_CAP_BYTES as usize + 1024);
    let w =
        fixtures::tiny("Long", 1).kv("general.description", llmbound::gguf::writer::string(&big));
    drop(big);
    srv.add("o/r/Long-Q8_0.gguf", w.to_bytes());
    let before = srv.sent();
    let e = one_line_error(
        llmbound(home.path(), &srv)
            .args(["inspect", &format!("{}/plain/o/r/Long-Q8_0.gguf", srv.base)]),
    );
    assert!(
        e.contains("does not support range requests") && e.contains("download the file"),
        "{e}"
    );
    // The client stopped at the cap (the server may have written a little more before it
    // noticed the connection closing).
    let sent = srv.sent() - before;
    assert!(sent <= NO_RANGE_CAP_BYTES + 4 * 1024 * 1024, "{sent}");
    // With range support the same file needs more than the default header cap (64 MiB)…
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", "o/r:Q8_0"]));
    assert!(e.contains("LLMBOUND_REMOTE_HEADER_CAP"), "{e}");
    // … and is read when the cap is raised.
    run_ok(
        llmbound(home.path(), &srv)
            .env("LLMBOUND_REMOTE_HEADER_CAP", "134217728")
            .args(["inspect", "o/r:Q8_0"]),
    );
}

/// The issue's "done when" command, against a loopback server shaped like the Hub (HF_ENDPOINT):
/// `report --gguf unsloth/Qwen3-32B-GGUF:Q4_K_M --machine macbook-pro-m4-pro-48gb -c 32768`
/// picks the Q4_K_M file among the repository's quants and prints the same worksheet as the
/// local file.
#[test]
fn the_issue_command_against_a_hub_shaped_server() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start();
    srv.set_listing_page(3);
    let repo = "unsloth/Qwen3-32B-GGUF";
    let model = fixtures::tiny("Qwen3-32B", 8);
    let local = dir.path().join("Qwen3-32B-Q4_K_M.gguf");
    model.write_file(&local, Data::Zeros).unwrap();
    let bytes = std::fs::read(&local).unwrap();
    for f in [
        ".gitattributes",
        "README.md",
        "Qwen3-32B-Q4_K_M.gguf",
        "Qwen3-32B-Q4_K_S.gguf",
        "Qwen3-32B-UD-Q4_K_XL.gguf",
        "Qwen3-32B-Q8_0.gguf",
        "BF16/Qwen3-32B-BF16-00001-of-00002.gguf",
        "BF16/Qwen3-32B-BF16-00002-of-00002.gguf",
        "mmproj-F16.gguf",
    ] {
        let body = if f.ends_with(".gguf") {
            bytes.clone()
        } else {
            b"text".to_vec()
        };
        srv.add(&format!("{repo}/{f}"), body);
    }
    let args = ["--machine", "macbook-pro-m4-pro-48gb", "-c", "32768"];
    let (want, _) = run_ok(
        llmbound(home.path(), &srv)
            .arg("report")
            .arg("--gguf")
            .arg(&local)
            .args(args),
    );
    let (got, err) = run_ok(
        llmbound(home.path(), &srv)
            .args(["report", "--gguf", &format!("{repo}:Q4_K_M")])
            .args(args),
    );
    let url = format!("{}/{repo}/resolve/main/Qwen3-32B-Q4_K_M.gguf", srv.base);
    let got = String::from_utf8(got)
        .unwrap()
        .replace(&url, "FILE")
        .replace(&format!("{repo}:Q4_K_M"), "FILE");
    let want = String::from_utf8(want)
        .unwrap()
        .replace(&local.display().to_string(), "FILE");
    same(&got, &want, "the worksheet");
    let err = String::from_utf8_lossy(&err);
    assert!(
        err.contains("unsloth/Qwen3-32B-GGUF:Q4_K_M is Qwen3-32B-Q4_K_M.gguf"),
        "{err}"
    );
}

#[test]
fn misbehaving_servers_are_one_line_each() {
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    srv.add("o/r/Tiny-Q8_0.gguf", fixtures::tiny("Tiny", 2).to_bytes());
    let b = &srv.base;

    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", &format!("{b}/html")]));
    assert!(e.contains("HTML page"), "{e}");
    let e = one_line_error(llmbound(home.path(), &srv).args(["inspect", &format!("{b}/loop")]));
    assert!(e.contains("redirect loop"), "{e}");
    let e = one_line_error(
        llmbound(home.path(), &srv).args(["inspect", &format!("{b}/trunc/o/r/Tiny-Q8_0.gguf")]),
    );
    assert!(e.contains("truncated response"), "{e}");
    let e = one_line_error(
        llmbound(home.path(), &srv)
            .env("LLMBOUND_HTTP_TIMEOUT", "2")
            .args(["inspect", &format!("{b}/stall")]),
    );
    assert!(
        e.contains("/stall") && e.to_lowercase().contains("timed out"),
        "{e}"
    );
    let e = one_line_error(llmbound(home.path(), &srv).args([
        "report",
        "--gguf",
        "http://127.0.0.1:9/x.gguf",
    ]));
    assert!(e.contains("http://127.0.0.1:9/x.gguf"), "{e}");
    // No range support on a small file: read from the stream, and said so.
    let (_, err) = run_ok(
        llmbound(home.path(), &srv).args(["inspect", &format!("{b}/plain/o/r/Tiny-Q8_0.gguf")]),
    );
    assert!(String::from_utf8_lossy(&err).contains("does not support range requests"));
}

#[test]
fn presets_without_an_artifact_name_public_gguf_repos() {
    let home = tempfile::tempdir().unwrap();
    let srv = Server::start();
    let e = one_line_error(llmbound(home.path(), &srv).args(["report", "--model", "gpt-oss-20b"]));
    assert!(e.contains("--gguf ggml-org/gpt-oss-20b-GGUF:MXFP4"), "{e}");
    assert!(e.contains("--artifact-bytes"), "{e}");
    // Every suggested repository is a remote name `--gguf` reads, with a citation.
    let cat = llmbound::profile::Catalog::load_with(Some(home.path().join("config")));
    let mut n = 0;
    for m in &cat.models {
        for r in &m.value.gguf_repos {
            assert!(
                llmbound::remote::is_remote(Path::new(&r.spec)),
                "{}",
                r.spec
            );
            assert!(!r.source.is_empty());
            n += 1;
        }
    }
    assert!(n >= 3);
}
