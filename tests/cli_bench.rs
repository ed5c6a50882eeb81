//! `llmbound bench`, `check --from-bench` and `machine detect` from the command line, on the
//! real H200 runs (the header-only copy of the synthetic Qwen3-8B file, made full-size sparse).

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn llmbound(config: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", config);
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

fn qwen3_8b(dir: &Path) -> PathBuf {
    let p = dir.join("qwen3-8b-q8_0-synth.gguf");
    std::fs::copy(fixture("h200/qwen3-8b-q8_0-synth.gguf-header"), &p).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(8_703_585_952)
        .unwrap();
    p
}

#[test]
fn h200_rows_are_below_their_ceilings() {
    let dir = tempfile::tempdir().unwrap();
    let g = qwen3_8b(dir.path());
    let out = llmbound(dir.path())
        .args(["bench", fixture("h200/bench_f16.json").to_str().unwrap()])
        .args([fixture("h200/bench_q8_0.json").to_str().unwrap()])
        .args([
            "--gguf",
            g.to_str().unwrap(),
            "--machine",
            "h200-measured",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = j["rows"].as_array().unwrap();
    let tg: Vec<_> = rows.iter().filter(|r| r["test"] == "tg").collect();
    assert_eq!(tg.len(), 6);
    for r in &tg {
        assert_eq!(r["within_ceiling"], true);
        let e = r["efficiency"].as_f64().unwrap();
        assert!(e > 0.2 && e < 0.5, "{e}");
    }
    // f16 at depth 0: 4.8e12 / (8,042,340,608 + 64 × 147,456) = 596.1 t/s
    let d0 = tg
        .iter()
        .find(|r| r["n_depth"] == 0 && r["type_k"] == "f16")
        .unwrap();
    let c = d0["ceiling_tokens_per_second"].as_f64().unwrap();
    assert!(
        (c - 4.8e12 / (8_042_340_608.0 + 64.0 * 147_456.0)).abs() < 0.01,
        "{c}"
    );
    assert_eq!(j["impossible_rows"], 0);
}

#[test]
fn a_doctored_row_exits_3_and_names_the_assumptions() {
    let dir = tempfile::tempdir().unwrap();
    let g = qwen3_8b(dir.path());
    let text = std::fs::read_to_string(fixture("h200/bench_f16.json")).unwrap();
    let mut rows: serde_json::Value = serde_json::from_str(&text).unwrap();
    for r in rows.as_array_mut().unwrap() {
        if r["n_gen"] == 128 && r["n_prompt"] == 0 && r["n_depth"] == 0 {
            r["avg_ts"] = serde_json::json!(700.0);
            r["samples_ts"] = serde_json::json!([700.0]);
        }
    }
    let doctored = dir.path().join("doctored.json");
    std::fs::write(&doctored, serde_json::to_string(&rows).unwrap()).unwrap();
    for cmd in [
        vec!["bench", doctored.to_str().unwrap()],
        vec!["check", "--from-bench", doctored.to_str().unwrap()],
    ] {
        let out = llmbound(dir.path())
            .args(&cmd)
            .args(["--gguf", g.to_str().unwrap(), "--machine", "h200-measured"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{cmd:?}");
        let t = String::from_utf8(out.stdout).unwrap();
        assert!(t.contains("IMPOSSIBLE"), "{t}");
        assert!(t.contains("faster tier"), "{t}");
    }
}

#[test]
fn bad_bench_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.json");
    std::fs::write(&p, "[{\"n_prompt\": 0,").unwrap();
    let out = llmbound(dir.path())
        .args(["bench", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("broken.json"), "{err}");
}

#[test]
fn the_llama_cpp_command_reproduces_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = llmbound(dir.path())
        .args([
            "report",
            "--scenario",
            "qwen3-32b-rtx-4090-partial",
            "--sequences",
            "2",
            "--cache-type-v",
            "q8_0",
        ])
        .args(["--kv-unified", "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["llama_cpp_command"],
        "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 65536 -np 2 -ctk f16 -ctv q8_0 -fa on -ngl 50 -ub 512 -kvu -fit off"
    );
}
