//! One JSON snapshot per command (report, check, compare, inspect, bench, hash, models): each document
//! carries its `schema` and the llmbound `version`. Temporary paths are replaced by `[dir]` and
//! the version by `[version]` after it is checked against the crate's.

use assert_cmd::Command;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, Value};
use std::path::{Path, PathBuf};

fn llmbound(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", dir.join("config"));
    c.env("XDG_CACHE_HOME", dir.join("cache"));
    c.env("HOME", dir);
    c.env("NO_COLOR", "1");
    c
}

/// A small llama-shaped model written by the test.
fn model(dir: &Path) -> PathBuf {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("Tiny Llama"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(64))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(4))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..256).map(|i| format!("t{i}"))),
        )
        .tensor("token_embd.weight", GgmlType::Q8_0, &[64, 256])
        .tensor("output_norm.weight", GgmlType::F32, &[64]);
    for l in 0..2 {
        for (n, dims) in [
            ("attn_q", [64u64, 64]),
            ("attn_k", [64, 32]),
            ("attn_v", [64, 32]),
            ("attn_output", [64, 64]),
            ("ffn_gate", [64, 128]),
            ("ffn_up", [64, 128]),
            ("ffn_down", [128, 64]),
        ] {
            w = w.tensor(&format!("blk.{l}.{n}.weight"), GgmlType::Q8_0, &dims);
        }
        w = w.tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[64]);
    }
    let p = dir.join("tiny-llama.gguf");
    w.write_file(&p, Data::Zeros).unwrap();
    p
}

/// Run, check schema and version, and return the JSON with paths and version masked.
fn json(dir: &Path, args: &[&str], schema: &str, code: i32) -> String {
    let o = llmbound(dir).args(args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], schema, "{text}");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"), "{text}");
    let d = dir.display().to_string();
    text.replace(&d, "[dir]").replacen(
        &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"version\": \"[version]\"",
        1,
    )
}

#[test]
fn report_json() {
    let dir = tempfile::tempdir().unwrap();
    let t = json(
        dir.path(),
        &["report", "--format", "json"],
        "llmbound-report/1",
        0,
    );
    insta::assert_snapshot!("report_json", t);
}

#[test]
fn check_json() {
    let dir = tempfile::tempdir().unwrap();
    // 12 tokens/s at 32,768 tokens: above the ceiling at N, within the short-context one.
    let t = json(
        dir.path(),
        &["check", "--tokens-per-second", "12", "--format", "json"],
        "llmbound-claim/1",
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(v["context_decides"], true);
    assert!(
        v["verdict"]
            .as_str()
            .unwrap()
            .contains("within it with at most 11,397 tokens retained")
    );
    assert_eq!(v["max_context_tokens"], 11_397);
    insta::assert_snapshot!("check_json", t);
}

#[test]
fn compare_json() {
    let dir = tempfile::tempdir().unwrap();
    let t = json(
        dir.path(),
        &[
            "compare",
            "--machine",
            "macbook-pro-m4-pro-48gb",
            "--machine",
            "desktop-rtx-4090",
            "--machine",
            "mac-studio-m2-ultra-192gb",
            "--format",
            "json",
        ],
        "llmbound-compare/1",
        0,
    );
    insta::assert_snapshot!("compare_json", t);
}

#[test]
fn inspect_json() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let t = json(
        dir.path(),
        &["inspect", m.to_str().unwrap(), "--format", "json"],
        "llmbound-inspect/1",
        0,
    );
    insta::assert_snapshot!("inspect_json", t);
}

#[test]
fn models_json() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("models");
    std::fs::create_dir_all(&lib).unwrap();
    model(&lib);
    let t = json(
        dir.path(),
        &[
            "models",
            "--only-dirs",
            "--dir",
            lib.to_str().unwrap(),
            "--machine",
            "epyc-zen5-2vcpu-vm",
            "-c",
            "4096",
            "--format",
            "json",
        ],
        "llmbound-models/1",
        0,
    );
    insta::assert_snapshot!("models_json", t);
}

#[test]
fn hash_json() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let t = json(
        dir.path(),
        &[
            "hash",
            "--no-cache",
            m.to_str().unwrap(),
            "--format",
            "json",
        ],
        "llmbound-hash/1",
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(v["outcome"]["kind"], "not-pinned");
    // The read time changes from run to run.
    let t = regex_free_mask(&t, "\"read_at_s\": ");
    insta::assert_snapshot!("hash_json", t);
}

#[test]
fn hash_text_and_markdown_agree_with_json() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let run = |f: &str| {
        let o = llmbound(dir.path())
            .args(["hash", "--no-cache", m.to_str().unwrap(), "--format", f])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        String::from_utf8(o.stdout).unwrap()
    };
    let j: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let sha = j["files"][0]["sha256"].as_str().unwrap().to_string();
    let verdict = j["verdict"].as_str().unwrap().to_string();
    let text = run("text");
    assert!(text.starts_with(&format!("{sha}  ")), "{text}");
    assert!(text.ends_with(&format!("{verdict}\n")), "{text}");
    let md = run("markdown");
    assert!(md.contains(&format!("`{sha}`")), "{md}");
    assert!(md.contains(&format!("**{verdict}**")), "{md}");
}

#[test]
fn bench_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/h200/bench_f16.json");
    let o = llmbound(dir.path())
        .args([
            "bench",
            f.to_str().unwrap(),
            "--scenario",
            "qwen3-8b-synth-h200",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout)
        .unwrap()
        .replace(env!("CARGO_MANIFEST_DIR"), "[repo]");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "llmbound-bench/1");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    let text = text.replacen(
        &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"version\": \"[version]\"",
        1,
    );
    insta::assert_snapshot!("bench_json", text);
}

/// Replace the number after every `key` with `[masked]`.
fn regex_free_mask(text: &str, key: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(key) {
        let (head, tail) = rest.split_at(i + key.len());
        out.push_str(head);
        let end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        if end > 0 {
            out.push_str("\"[masked]\"");
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}
