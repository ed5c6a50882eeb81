//! A hostile world (issue 10, items 1–4, 7, 13, 14): files carrying terminal escapes fed
//! through every command; FIFOs, devices and oversized inputs; a hash cache that must not be
//! fooled by `touch -r`, `mv` or a write during hashing; partial files; saving leftovers;
//! errors that name their file. Every file is written by the test.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use assert_cmd::Command;
use llmbound::gguf::hash::{HashCache, HashError, sha256_file_checked};
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, HashJob, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// This package's binary, or `LLMBOUND_TEST_BIN` (to show a case failing on an older build).
fn llmbound(config: &Path) -> Command {
    let mut c = match std::env::var_os("LLMBOUND_TEST_BIN") {
        Some(b) => Command::new(b),
        None => Command::cargo_bin("llmbound").unwrap(),
    };
    c.env("LLMBOUND_CONFIG_DIR", config);
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c.env("HOME", config);
    c.env("NO_COLOR", "1");
    c.timeout(Duration::from_secs(20));
    c
}

/// ESC/CSI clear screen and colour, OSC retitle ended by BEL, CR LF, DEL, C1 CSI and OSC,
/// a bidi override.
const HOSTILE: &str =
    "\x1b[2J\x1b[31mRED\x1b]0;pwned\x07\r\nforged | row\x7f\u{9b}31m\u{9d}0;t\u{202e}";

/// The raw bytes a terminal would act on: C0 except LF, DEL, C1 (UTF-8 C2 80–9F), bidi
/// controls (E2 80 8E/8F/AA–AE, E2 81 A6–A9), line/paragraph separators (E2 80 A8/A9).
fn raw_control(bytes: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(bytes);
    text.char_indices()
        .find(|&(_, c)| c != '\n' && llmbound::sanitize::is_unsafe(c))
        .map(|(i, _)| i)
}

fn assert_clean(what: &str, out: &std::process::Output) {
    for (name, b) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(i) = raw_control(b) {
            let t = String::from_utf8_lossy(b);
            panic!(
                "{what}: raw control character in {name} at {i}: {:?}",
                &t[i.saturating_sub(40)..(i + 40).min(t.len())]
            );
        }
    }
}

/// A llama-shaped GGUF whose strings are hostile: general.name, a metadata key and value, a
/// tensor name.
fn hostile_gguf(path: &Path) {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string(HOSTILE))
        .kv(&format!("general.{HOSTILE}"), writer::string(HOSTILE))
        .kv("llama.block_count", Value::U32(1))
        .kv("llama.embedding_length", Value::U32(64))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .tensor("token_embd.weight", GgmlType::F16, &[64, 100])
        .tensor(&format!("blk.0.{HOSTILE}"), GgmlType::F32, &[64]);
    for n in ["attn_q", "attn_output"] {
        w = w.tensor(&format!("blk.0.{n}.weight"), GgmlType::F16, &[64, 64]);
    }
    for n in ["attn_k", "attn_v"] {
        w = w.tensor(&format!("blk.0.{n}.weight"), GgmlType::F16, &[64, 32]);
    }
    w.write_file(path, Data::Zeros).unwrap();
}

fn toml_escaped(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_control() || (c as u32) > 0x7e => format!("\\u{:04X}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// Profiles whose names and notes are hostile, in the user's profile folder.
fn hostile_profiles(config: &Path, artifact_bytes: u64) {
    let h = toml_escaped(HOSTILE);
    fs::create_dir_all(config.join("machines")).unwrap();
    fs::create_dir_all(config.join("models")).unwrap();
    fs::create_dir_all(config.join("scenarios")).unwrap();
    for id in ["evil-a", "evil-b"] {
        fs::write(
            config.join(format!("machines/{id}.toml")),
            format!(
                "id = \"{id}\"\nname = \"{h}\"\nnotes = \"{h}\"\n[[tier]]\nname = \"{h}\"\nkind = \"host\"\ncapacity = {{ value = 68719476736, provenance = \"spec\", source = \"{h}\" }}\nbandwidth = {{ value = \"100 GB/s\", provenance = \"spec\", source = \"{h}\" }}\n"
            ),
        )
        .unwrap();
    }
    fs::write(
        config.join("models/evil.toml"),
        format!(
            "id = \"evil\"\nname = \"{h}\"\narchitecture = \"llama\"\nlayers = 1\nattention-heads = 4\nkv-heads = 2\nhidden-size = 64\nvocab-size = 100\n[[artifact]]\nid = \"evil-f16\"\nfile = \"{h}\"\nbytes = {artifact_bytes}\nsource = \"{h}\"\n"
        ),
    )
    .unwrap();
    fs::write(
        config.join("scenarios/evil.toml"),
        format!(
            "id = \"evil\"\nname = \"{h}\"\nmodel = \"evil\"\nartifact = \"evil-f16\"\nmachine = \"evil-a\"\ncontext = 4096\nsequences = 1\ncache-type-k = \"f16\"\ncache-type-v = \"f16\"\nflash-attn = true\nubatch = 512\nkv-unified = false\nswa-full = false\noverhead = 0\nprompt-rows = 512\ncompute-path = \"fp16\"\n"
        ),
    )
    .unwrap();
}

/// A llama-bench result file whose string fields are hostile.
fn hostile_bench(path: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench/cpu/gemma3-270m_t1_f16.json");
    let mut rows: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(src).unwrap()).unwrap();
    for r in rows.as_array_mut().unwrap() {
        for k in [
            "cpu_info",
            "gpu_info",
            "model_type",
            "model_filename",
            "build_commit",
            "backends",
        ] {
            r[k] = serde_json::Value::String(HOSTILE.into());
        }
    }
    fs::write(path, serde_json::to_vec(&rows).unwrap()).unwrap();
}

#[test]
fn no_raw_control_character_reaches_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The file's own name is hostile too (paths are printed).
    let g = d.join(format!("m{}.gguf", "\x1b[2J\x07\r\n"));
    hostile_gguf(&g);
    let bytes = fs::metadata(&g).unwrap().len();
    hostile_profiles(d, bytes);
    let bench = d.join("bench\x1b]0;x\x07.json");
    hostile_bench(&bench);
    let gs = g.to_str().unwrap();
    let bs = bench.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["inspect", gs],
        vec!["inspect", gs, "--metadata", "--format", "markdown"],
        vec!["inspect", gs, "--metadata", "--group", "layer"],
        vec!["inspect", gs, "--group", "type", "--format", "markdown"],
        vec!["report", "--gguf", gs, "--machine", "evil-a"],
        vec![
            "report",
            "--gguf",
            gs,
            "--machine",
            "evil-a",
            "--format",
            "markdown",
        ],
        vec!["report", "--scenario", "evil"],
        vec!["report", "--scenario", "evil", "--format", "markdown"],
        vec!["check", "--tokens-per-second", "1e6", "--scenario", "evil"],
        vec![
            "check",
            "--tokens-per-second",
            "1",
            "--scenario",
            "evil",
            "--format",
            "markdown",
        ],
        vec!["hash", gs],
        vec!["hash", gs],
        vec!["bench", bs, "--gguf", gs, "--machine", "evil-a"],
        vec!["bench", bs, "--machine", "evil-a", "--format", "markdown"],
        vec!["profiles", "list"],
        vec!["profiles", "show", "evil-a"],
        vec!["profiles", "show", "evil"],
        vec![
            "compare",
            "--scenario",
            "evil",
            "--machine",
            "evil-a",
            "--machine",
            "evil-b",
        ],
        vec![
            "compare",
            "--scenario",
            "evil",
            "--machine",
            "evil-a",
            "--machine",
            "evil-b",
            "--format",
            "markdown",
        ],
        // Errors that quote what they were given.
        vec!["inspect", "/nonexistent/\x1b[2J\x07.gguf"],
        vec!["report", "--machine", "\x1b]0;pwned\x07"],
        vec!["profiles", "show", "\x1b[2J"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let out = llmbound(d).args(args).output().unwrap();
        assert_clean(&format!("{args:?}"), &out);
        // The commands before the error cases ran to their report (the strings were shown).
        let error_case = i >= runs.len() - 3;
        assert_eq!(
            out.status.code() == Some(1),
            error_case,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The escapes are shown, not dropped.
    let out = llmbound(d).args(["inspect", gs]).output().unwrap();
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.contains("\\x1b[2J\\x1b[31mRED\\x1b]0;pwned\\x07\\r\\nforged"),
        "{t}"
    );
    assert!(
        !t.lines().any(|l| l.starts_with("forged")),
        "a forged row: {t}"
    );
    // Markdown cells keep their columns: the `|` of a name is escaped.
    let out = llmbound(d)
        .args(["inspect", gs, "--format", "markdown"])
        .output()
        .unwrap();
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(t.contains("forged \\| row"), "{t}");
}

#[cfg(unix)]
fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_before_open() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("f.gguf");
    mkfifo(&fifo);
    let toml = d.join("m.toml");
    mkfifo(&toml);
    let f = fifo.to_str().unwrap();
    let t = toml.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["inspect", f],
        vec!["hash", f],
        vec!["report", "--gguf", f],
        vec!["report", "--mmproj", f],
        vec!["report", "--draft", f],
        vec!["bench", f],
        vec!["report", "--machine", t],
        vec!["report", "--scenario", t],
        vec!["report", "--model", t],
        vec!["inspect", "/dev/zero"],
        vec!["hash", "/dev/zero"],
        vec!["report", "--gguf", "/dev/zero"],
        vec!["bench", "/dev/zero"],
        vec!["report", "--machine", "/dev/zero"],
        vec!["report", "--scenario", "/dev/zero"],
    ];
    for args in &cases {
        let out = llmbound(d).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_in_the_profile_folder_is_skipped_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("machines")).unwrap();
    mkfifo(&d.join("machines/stuck.toml"));
    // The hash cache as a FIFO, and as a link to /dev/zero, must not hang `hash` either.
    fs::create_dir_all(d.join("cache/llmbound")).unwrap();
    mkfifo(&d.join("cache/llmbound/hashes.json"));
    let g = d.join("m.gguf");
    hostile_gguf(&g);
    for args in [
        vec!["profiles", "list"],
        vec!["report"],
        vec!["hash", g.to_str().unwrap()],
    ] {
        let out = llmbound(d).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            err.contains("stuck.toml") && err.contains("not a regular file (a FIFO)"),
            "{args:?}: {err}"
        );
    }
    fs::remove_file(d.join("cache/llmbound/hashes.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("cache/llmbound/hashes.json")).unwrap();
    let out = llmbound(d)
        .args(["hash", g.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn oversized_text_inputs_are_refused_with_their_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = d.join("big.toml");
    // 278k tiers would take gigabytes to parse: refused by size before parsing.
    let tier = "[[tier]]\nname = \"t\"\nkind = \"host\"\ncapacity = 1\nbandwidth = \"1 GB/s\"\n";
    fs::write(&big, tier.repeat((2 << 20) / tier.len())).unwrap();
    let out = llmbound(d)
        .args(["report", "--machine", big.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("larger than the 1 MiB limit for a profile"),
        "{err}"
    );
    // Under the size cap but with absurd counts: refused by count.
    let many = d.join("many.toml");
    let mut src = String::from("id = \"many\"\nname = \"Many\"\n");
    for i in 0..100 {
        src.push_str(&format!(
            "[[tier]]\nname = \"t{i}\"\nkind = \"host\"\ncapacity = {{ value = 1073741824, provenance = \"spec\", source = \"x\" }}\nbandwidth = {{ value = \"1 GB/s\", provenance = \"spec\", source = \"x\" }}\n"
        ));
    }
    fs::write(&many, src).unwrap();
    let out = llmbound(d)
        .args(["report", "--machine", many.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("100 [[tier]] tables; a machine has at most 64"),
        "{err}"
    );
    // A bench file over 64 MiB (sparse: no disk used).
    let bench = d.join("big.json");
    fs::File::create(&bench)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    let out = llmbound(d)
        .args(["bench", bench.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("larger than the 64 MiB limit"), "{err}");
}

/// A tiny model file and a profile pinning its digest; the file's times set an hour back and
/// a pause so it is not "just changed" (a change in the same clock tick as a read is never
/// cached).
fn pinned(d: &Path) -> (PathBuf, String) {
    let g = d.join("g.gguf");
    hostile_gguf(&g);
    let sha = llmbound::gguf::hash::sha256_file(&g, &Default::default(), |_| {}).unwrap();
    let bytes = fs::metadata(&g).unwrap().len();
    fs::create_dir_all(d.join("models")).unwrap();
    fs::write(
        d.join("models/g.toml"),
        format!(
            "id = \"g\"\nname = \"G\"\narchitecture = \"llama\"\nlayers = 1\nattention-heads = 4\nkv-heads = 2\nhidden-size = 64\nvocab-size = 100\n[[artifact]]\nid = \"g-f16\"\nfile = \"g.gguf\"\nbytes = {bytes}\nsha256 = \"{sha}\"\n"
        ),
    )
    .unwrap();
    backdate(&g);
    std::thread::sleep(Duration::from_millis(1100));
    (g, sha)
}

fn backdate(p: &Path) {
    let t = std::time::SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_times(fs::FileTimes::new().set_modified(t).set_accessed(t))
        .unwrap();
}

fn hash_run(d: &Path, g: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = llmbound(d).arg("hash").args(extra).arg(g).output().unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_tampered_file_with_its_old_mtime_is_not_verified_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (g, _) = pinned(d);
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("verified: matches g / g-f16"), "{t}");
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("verified (cached, read in full 20"), "{t}");
    // (a) one byte changed, the modification time put back (`touch -r`).
    let mtime = fs::metadata(&g).unwrap().modified().unwrap();
    let mut bytes = fs::read(&g).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&g, &bytes).unwrap();
    fs::File::options()
        .write(true)
        .open(&g)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(fs::metadata(&g).unwrap().modified().unwrap(), mtime);
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(4), "{t}");
    assert!(t.contains("MISMATCH") && !t.contains("verified"), "{t}");
}

#[test]
fn another_file_moved_in_with_the_same_size_and_mtime_is_not_verified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (g, _) = pinned(d);
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(0), "{t}");
    // (b) a different file of the same size and modification time, moved over it.
    let other = d.join("other.gguf");
    let mut bytes = fs::read(&g).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&other, &bytes).unwrap();
    let m = fs::metadata(&g).unwrap().modified().unwrap();
    fs::File::options()
        .write(true)
        .open(&other)
        .unwrap()
        .set_modified(m)
        .unwrap();
    fs::rename(&other, &g).unwrap();
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(4), "{t}");
    assert!(t.contains("MISMATCH") && !t.contains("verified"), "{t}");
}

#[test]
fn a_write_during_hashing_is_reported_and_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.bin");
    fs::write(&p, vec![7u8; 3 << 20]).unwrap();
    backdate(&p);
    std::thread::sleep(Duration::from_millis(20));
    let mut wrote = false;
    // (c) 4 bytes written (size unchanged) after the first 1 MiB chunk was read.
    let r = sha256_file_checked(&p, &Default::default(), |_| {
        if !wrote {
            use std::io::{Seek, SeekFrom, Write};
            let mut f = fs::File::options().write(true).open(&p).unwrap();
            f.seek(SeekFrom::Start(2 << 20)).unwrap();
            f.write_all(b"EVIL").unwrap();
            wrote = true;
        }
    });
    assert!(matches!(r, Err(HashError::Changed { .. })), "{r:?}");
    // Through a job with a cache: an error, and nothing cached.
    fs::write(&p, vec![7u8; 3 << 20]).unwrap();
    let cache = HashCache::at(dir.path().join("hashes.json"));
    let job = HashJob::spawn_with_cache(vec![p.clone()], Some(cache.clone()));
    // A file changed just now is hashed but not cached (its change may share a clock tick
    // with a write during the read).
    let r = job.wait().unwrap();
    assert!(!r[0].from_cache);
    assert_eq!(cache.lookup(&p).unwrap(), None);
}

#[test]
fn a_fresh_no_cache_result_replaces_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (g, _) = pinned(d);
    assert_eq!(hash_run(d, &g, &[]).0, Some(0));
    // A stale entry for this very stat (as an old version could leave): --no-cache finds the
    // mismatch and replaces it, so the next cached run agrees.
    let cache = HashCache::at(d.join("cache/llmbound/hashes.json"));
    cache.store(&g, &"0".repeat(64)).unwrap();
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(4), "{t}");
    let (code, t) = hash_run(d, &g, &["--no-cache"]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("verified: matches"), "{t}");
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("verified (cached, read in full"), "{t}");
}

#[test]
fn hash_of_a_partial_file_says_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = d.join("cut.gguf");
    hostile_gguf(&g);
    let full = fs::metadata(&g).unwrap().len();
    fs::File::options()
        .write(true)
        .open(&g)
        .unwrap()
        .set_len(full - 1000)
        .unwrap();
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(4), "{t}");
    assert!(t.contains("incomplete: 1,000 bytes missing"), "{t}");
}

#[test]
fn saving_refuses_early_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A bad id and an existing profile are refused before any measurement (fast, exit 1).
    for id in ["Bad Id", "taken"] {
        fs::create_dir_all(d.join("machines")).unwrap();
        fs::write(d.join("machines/taken.toml"), "").unwrap();
        let t0 = std::time::Instant::now();
        let out = llmbound(d)
            .args(["machine", "detect", "--quick", "--save", id])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{id}: {err}");
        assert!(out.stdout.is_empty(), "{id}: measured first");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{id}: measured first"
        );
        assert!(
            err.contains("id \"Bad Id\"") || err.contains("already exists"),
            "{err}"
        );
    }
    // `machines` is a file: the error names it.
    let d2 = d.join("other");
    fs::create_dir_all(&d2).unwrap();
    fs::write(d2.join("machines"), "").unwrap();
    let out = llmbound(&d2)
        .args(["machine", "detect", "--quick", "--save", "box"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("other/machines") && err.contains("not a folder"),
        "{err}"
    );
    // Temp files of saves killed before their rename (dead PIDs) are cleaned.
    let m = d.join("machines");
    let dead = m.join(".box.toml.tmp-999999999");
    fs::write(&dead, "half").unwrap();
    let live = m.join(format!(".box.toml.tmp-{}", std::process::id()));
    fs::write(&live, "in progress").unwrap();
    let out = llmbound(d).args(["profiles", "list"]).output().unwrap();
    assert!(out.status.success());
    assert!(!dead.exists(), "a dead save's temp file is left");
    assert!(live.exists(), "a running save's temp file was removed");
}

#[test]
fn errors_name_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A GGUF without general.architecture.
    let g = d.join("noarch.gguf");
    GgufWriter::new()
        .kv("general.name", writer::string("x"))
        .tensor("token_embd.weight", GgmlType::F32, &[4, 4])
        .write_file(&g, Data::Zeros)
        .unwrap();
    let out = llmbound(d)
        .args(["report", "--gguf", g.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("{}: ", g.display())), "{err}");
    assert!(err.contains("general.architecture"), "{err}");
    // head_count_kv listing 3 layers for a 2-layer model.
    let g = d.join("kv.gguf");
    GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(64))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv(
            "llama.attention.head_count_kv",
            writer::u32_array(&[2, 2, 2]),
        )
        .tensor("token_embd.weight", GgmlType::F32, &[64, 4])
        .write_file(&g, Data::Zeros)
        .unwrap();
    let out = llmbound(d)
        .args(["report", "--gguf", g.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("{}: ", g.display())), "{err}");
    assert!(err.contains("lists 3 layers but the model has 2"), "{err}");
    // A scenario naming an unknown model: its file and line.
    let s = d.join("s.toml");
    fs::write(
        &s,
        "id = \"s\"\nname = \"S\"\nmodel = \"no-such-model\"\nartifact = \"a\"\nmachine = \"desktop-rtx-3090\"\ncontext = 4096\nsequences = 1\ncache-type-k = \"f16\"\ncache-type-v = \"f16\"\nflash-attn = true\nubatch = 512\nkv-unified = false\nswa-full = false\noverhead = 0\nprompt-rows = 512\ncompute-path = \"fp16\"\n",
    )
    .unwrap();
    let out = llmbound(d)
        .args(["report", "--scenario", s.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}:3: unknown model \"no-such-model\"",
            s.display()
        )),
        "{err}"
    );
}

#[test]
fn a_write_while_the_cli_hashes_is_not_verified_and_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1 GiB of tensor data, sparse: hashing takes about a second, the disk holds a few KiB.
    let g = d.join("big.gguf");
    let w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .tensor("t", GgmlType::F32, &[1 << 28]);
    w.write_file(&g, Data::Sparse).unwrap();
    backdate(&g);
    std::thread::sleep(Duration::from_millis(1100));
    let mut cmd = std::process::Command::new(match std::env::var_os("LLMBOUND_TEST_BIN") {
        Some(b) => PathBuf::from(b),
        None => assert_cmd::cargo::cargo_bin("llmbound"),
    });
    cmd.env("LLMBOUND_CONFIG_DIR", d)
        .env("XDG_CACHE_HOME", d.join("cache"))
        .arg("hash")
        .arg(&g)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    if child.try_wait().unwrap().is_some() {
        skipped!("skipped: hashing 1 GiB ended before the write (machine too fast for this check)");
        return;
    }
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = fs::File::options().write(true).open(&g).unwrap();
        f.seek(SeekFrom::Start(fs::metadata(&g).unwrap().len() - 4096))
            .unwrap();
        f.write_all(b"EVIL").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let t = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(4), "{t}");
    assert!(t.contains("changed while it was being read"), "{t}");
    // Nothing was cached against the new stat: the next run reads the file again.
    let (code, t) = hash_run(d, &g, &[]);
    assert_eq!(code, Some(0), "{t}");
    assert!(!t.contains("cached"), "{t}");
}
