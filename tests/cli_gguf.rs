//! The CLI on GGUF files written by the test: inspect's JSON contract, report with inventory
//! ceilings, check calling a rate impossible (exit 3), hash verified / MISMATCH, hostile files.

use assert_cmd::Command;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, Value};
use std::path::{Path, PathBuf};

fn llmbound(config: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", config);
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c.env("NO_COLOR", "1");
    c
}

/// A small llama-shaped model: 4 layers, 8 heads, 2 KV heads, head dim 16, untied output.
fn model(dir: &Path, data: Data) -> PathBuf {
    let mut w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("Tiny Llama"))
        .kv("llama.block_count", Value::U32(4))
        .kv("llama.embedding_length", Value::U32(128))
        .kv("llama.context_length", Value::U32(8192))
        .kv("llama.attention.head_count", Value::U32(8))
        .kv("llama.attention.head_count_kv", Value::U32(2))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..2000).map(|i| format!("t{i}"))),
        )
        .tensor("token_embd.weight", GgmlType::Q8_0, &[128, 2000])
        .tensor("output_norm.weight", GgmlType::F32, &[128])
        .tensor("output.weight", GgmlType::Q6_K, &[256, 2000]);
    for l in 0..4 {
        for (n, dims) in [
            ("attn_q", [128u64, 128]),
            ("attn_k", [128, 32]),
            ("attn_v", [128, 32]),
            ("attn_output", [128, 128]),
            ("ffn_gate", [128, 512]),
            ("ffn_up", [128, 512]),
        ] {
            w = w.tensor(&format!("blk.{l}.{n}.weight"), GgmlType::Q8_0, &dims);
        }
        w = w
            .tensor(
                &format!("blk.{l}.ffn_down.weight"),
                GgmlType::Q4_K,
                &[512, 256],
            )
            .tensor(&format!("blk.{l}.attn_norm.weight"), GgmlType::F32, &[128]);
    }
    let p = dir.join("tiny-llama.gguf");
    w.write_file(&p, data).unwrap();
    p
}

#[test]
fn inspect_json_contract() {
    let dir = tempfile::tempdir().unwrap();
    let p = model(dir.path(), Data::Zeros);
    let out = llmbound(dir.path())
        .args([
            "inspect",
            p.to_str().unwrap(),
            "--format",
            "json",
            "--metadata",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["file"]["bytes"], std::fs::metadata(&p).unwrap().len());
    assert_eq!(j["file"]["shards"].as_array().unwrap().len(), 1);
    assert_eq!(j["tensor_count"], 3 + 4 * 8);
    assert_eq!(j["architecture"], "llama");
    let tensors = j["tensors"].as_array().unwrap();
    let embd = tensors
        .iter()
        .find(|t| t["name"] == "token_embd.weight")
        .unwrap();
    assert_eq!(embd["type"], "Q8_0");
    assert_eq!(embd["shape"], serde_json::json!([128, 2000]));
    assert_eq!(embd["elements"], 256_000);
    assert_eq!(embd["bytes"], 256_000 / 32 * 34);
    assert!(embd["offset"].is_u64());
    let by_type = j["by_type"].as_array().unwrap();
    let q8: &serde_json::Value = by_type.iter().find(|t| t["type"] == "Q8_0").unwrap();
    assert_eq!(q8["count"], 1 + 4 * 6);
    let params: u64 = tensors
        .iter()
        .map(|t| t["elements"].as_u64().unwrap())
        .sum();
    assert_eq!(j["parameters"], params);
    assert!(j["warnings"].as_array().unwrap().is_empty());
    assert!(
        j["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["key"] == "tokenizer.ggml.tokens")
    );
    // text and grouped forms
    for extra in [
        vec![],
        vec!["--group", "type"],
        vec!["--group", "layer", "--sort", "bytes"],
    ] {
        let mut a = vec!["inspect", p.to_str().unwrap()];
        a.extend(extra);
        let out = llmbound(dir.path()).args(&a).output().unwrap();
        assert!(out.status.success());
        let t = String::from_utf8(out.stdout).unwrap();
        assert!(
            t.contains("Q6_K") && t.contains("blk.3.ffn_down.weight"),
            "{t}"
        );
    }
}

#[test]
fn report_uses_the_file_and_its_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let p = model(dir.path(), Data::Zeros);
    let w = std::fs::metadata(&p).unwrap().len();
    let out = llmbound(dir.path())
        .args([
            "report",
            "--gguf",
            p.to_str().unwrap(),
            "--context",
            "4096",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["artifact"]["bytes"], w);
    assert_eq!(j["artifact"]["parameters_basis"], "counted");
    assert_eq!(j["artifact"]["parameters_provenance"], "file");
    // 4 layers × 2 KV heads × (16 + 16) × 2 bytes = 512 bytes/token
    assert_eq!(j["kv"]["bytes_per_token"], 512);
    assert_eq!(j["kv"]["bytes"], 512 * 4096);
    let inv = &j["decode"]["inventory"];
    // everything but the embedding, plus one 136-byte embedding row
    let embd = 256_000 / 32 * 34;
    let tensors: u64 = {
        let o = llmbound(dir.path())
            .args(["inspect", p.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        let i: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        i["tensor_bytes"].as_u64().unwrap()
    };
    assert_eq!(inv["read_bytes_per_token"], tensors - embd + 136);
    let bw = j["decode"]["bandwidth_bytes_per_second"].as_f64().unwrap();
    let want = bw / (tensors - embd + 136) as f64;
    assert!(
        (inv["short_context"]["tokens_per_second"].as_f64().unwrap() - want).abs() < 1e-6 * want
    );
    assert!(
        inv["short_context"]["tokens_per_second"].as_f64().unwrap()
            > j["decode"]["short_context"]["tokens_per_second"]
                .as_f64()
                .unwrap()
    );
    assert!(
        j["llama_cpp_command"]
            .as_str()
            .unwrap()
            .contains(p.to_str().unwrap())
    );
    // a projector adds to W
    let mm = dir.path().join("mmproj.gguf");
    std::fs::write(&mm, vec![0u8; 1000]).unwrap();
    let out = llmbound(dir.path())
        .args([
            "report",
            "--gguf",
            p.to_str().unwrap(),
            "--mmproj",
            mm.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["artifact"]["bytes"], w + 1000);
    assert!(
        j["llama_cpp_command"]
            .as_str()
            .unwrap()
            .contains("--mmproj")
    );
}

#[test]
fn check_calls_a_rate_impossible_only_above_the_highest_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let p = model(dir.path(), Data::Zeros);
    let json = |args: &[&str]| -> serde_json::Value {
        let out = llmbound(dir.path()).args(args).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let r = json(&[
        "report",
        "--gguf",
        p.to_str().unwrap(),
        "--context",
        "4096",
        "--format",
        "json",
    ]);
    let highest = r["decode"]["highest"]["tokens_per_second"]
        .as_f64()
        .unwrap();
    let file = r["decode"]["full_context"]["tokens_per_second"]
        .as_f64()
        .unwrap();
    assert!(highest > file);
    let above = format!("{}", highest * 1.01);
    let out = llmbound(dir.path())
        .args([
            "check",
            "--gguf",
            p.to_str().unwrap(),
            "--context",
            "4096",
            "--tokens-per-second",
            &above,
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("IMPOSSIBLE")
    );
    let between = format!("{}", (highest + file) / 2.0);
    let out = llmbound(dir.path())
        .args([
            "check",
            "--gguf",
            p.to_str().unwrap(),
            "--context",
            "4096",
            "--tokens-per-second",
            &between,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(t.starts_with("possible, but above"), "{t}");
}

#[test]
fn hash_verifies_against_a_pinned_profile() {
    let dir = tempfile::tempdir().unwrap();
    let p = model(dir.path(), Data::Zeros);
    let bytes = std::fs::metadata(&p).unwrap().len();
    let out = llmbound(dir.path())
        .args(["hash", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let t = String::from_utf8(out.stdout).unwrap();
    let sha = t.split_whitespace().next().unwrap().to_string();
    assert_eq!(sha.len(), 64);
    assert!(t.contains("not pinned"));
    let pin = |sha: &str| {
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        std::fs::write(
            dir.path().join("models/tiny.toml"),
            format!(
                "id = \"tiny\"\nname = \"Tiny\"\narchitecture = \"llama\"\nlayers = 4\nattention-heads = 8\nkv-heads = 2\nhidden-size = 128\nvocab-size = 2000\n[[artifact]]\nid = \"tiny-q8\"\nfile = \"tiny-llama.gguf\"\nbytes = {bytes}\nsha256 = \"{sha}\"\n"
            ),
        )
        .unwrap();
    };
    pin(&sha);
    let out = llmbound(dir.path())
        .args(["hash", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("verified: matches tiny / tiny-q8")
    );
    pin(&"0".repeat(64));
    let out = llmbound(dir.path())
        .args(["hash", "--no-cache", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8(out.stdout).unwrap().contains("MISMATCH"));
}

#[test]
fn hostile_and_wrong_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.gguf", vec![], "empty"),
        (
            "magic.gguf",
            b"PK\x03\x04 not a gguf at all".to_vec(),
            "zip",
        ),
        ("short.gguf", b"GGUF\x03\x00".to_vec(), "ends at byte 6"),
    ];
    for (name, bytes, want) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        for cmd in [
            vec!["inspect", p.to_str().unwrap()],
            vec!["report", "--gguf", p.to_str().unwrap()],
        ] {
            let out = llmbound(dir.path()).args(&cmd).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{name} {cmd:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
            assert!(err.to_lowercase().contains(want), "{name}: {err}");
            assert!(err.contains(name), "names the file: {err}");
        }
    }
    // a header whose tensors end past the end of the file: a partial download, still shown,
    // then exit 4 (incomplete file)
    let p = model(dir.path(), Data::HeaderOnly);
    let out = llmbound(dir.path())
        .args(["inspect", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("PARTIAL DOWNLOAD")
    );
    // a 20 GB sparse file opens from its header alone
    let big = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .tensor("token_embd.weight", GgmlType::F16, &[8192, 1_220_000]);
    let bp = dir.path().join("big.gguf");
    big.write_file(&bp, Data::Sparse).unwrap();
    let out = llmbound(dir.path())
        .args(["inspect", bp.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["file"]["bytes"].as_u64().unwrap() > 19_000_000_000);
}
