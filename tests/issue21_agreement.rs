//! `models`, `report` and `inspect` agree on every file: what one refuses the others refuse
//! with the same one-line reason and exit code, and every warning one prints the others print
//! (a file that opens only with a warning is never an unmarked "fits" row).

use assert_cmd::Command;
use llmbound::gguf::GgmlType;
use std::path::{Path, PathBuf};

#[path = "support/fixtures.rs"]
mod fixtures;

fn llmbound() -> Command {
    Command::cargo_bin("llmbound").unwrap()
}

/// What one command said about a file: its exit code and every line it printed.
struct Said {
    code: Option<i32>,
    text: String,
}

fn run(args: &[&str], file: &Path) -> Said {
    let out = llmbound().args(args).arg(file).output().unwrap();
    Said {
        code: out.status.code(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The files of the issue: sound, tensor data cut short, a zero-sized dimension, a removed
/// and an unknown tensor type — each alone in its own directory (for `models --dir`).
fn files(root: &Path) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    let mut put = |name: &'static str, bytes: Vec<u8>, cut: u64| {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("{name}.gguf"));
        let len = bytes.len() as u64;
        std::fs::write(&p, bytes).unwrap();
        if cut > 0 {
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(len - cut).unwrap();
        }
        out.push((name, p));
    };
    put("sound", fixtures::tiny("Sound", 2).to_bytes(), 0);
    put("partial", fixtures::tiny("Partial", 2).to_bytes(), 1_000);
    put(
        "zero-dim",
        fixtures::tiny("Zero dim", 2)
            .tensor("blk.0.extra.weight", GgmlType::F32, &[128, 0])
            .to_bytes(),
        0,
    );
    put(
        "removed-type",
        fixtures::tiny("Removed type", 2)
            .tensor("blk.0.extra.weight", GgmlType(4), &[128, 4])
            .to_bytes(),
        0,
    );
    put(
        "unknown-type",
        fixtures::tiny("Unknown type", 2)
            .tensor("blk.0.extra.weight", GgmlType(250), &[128, 4])
            .to_bytes(),
        0,
    );
    out
}

/// The warnings `inspect` prints ("warning: …" lines).
fn inspect_warnings(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("warning: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn models_report_and_inspect_agree_on_errors_and_warnings_for_every_file() {
    let d = tempfile::tempdir().unwrap();
    for (name, file) in files(d.path()) {
        let inspect = run(&["inspect"], &file);
        let report = run(&["report", "--gguf"], &file);
        let out = llmbound()
            .args(["models", "--only-dirs", "--format", "json", "--dir"])
            .arg(file.parent().unwrap())
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: models JSON: {e}"));
        let rows = j["models"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{name}: {j}");
        let row = &rows[0];
        let refused = inspect.code != Some(0);
        // What one refuses the others refuse, with the same exit code and reason line.
        assert_eq!(
            report.code, inspect.code,
            "{name}: report {} / inspect {}",
            report.text, inspect.text
        );
        if refused {
            let reason = inspect
                .text
                .lines()
                .find(|l| l.contains("error: "))
                .unwrap_or_else(|| panic!("{name}: no error line in {}", inspect.text))
                .to_string();
            assert!(report.text.contains(&reason), "{name}: {}", report.text);
            let why = reason.rsplit("error: ").next().unwrap();
            let why = why.split_once(".gguf: ").map_or(why, |(_, w)| w);
            assert!(row["fits"].is_null(), "{name}: {row}");
            assert!(
                row["error"].as_str().is_some_and(|e| e.contains(why)),
                "{name}: {row} against {why:?}"
            );
            continue;
        }
        assert!(row["error"].is_null(), "{name}: {row}");
        // Every warning of one is a warning of the others.
        let warned = inspect_warnings(&inspect.text);
        let listed: Vec<String> = row["warnings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        for w in &warned {
            assert!(
                report.text.contains(w.as_str()),
                "{name}: report lacks {w:?}"
            );
            assert!(
                listed.iter().any(|l| l.contains(w.as_str())),
                "{name}: models lacks {w:?}: {row}"
            );
        }
        for l in &listed {
            assert!(
                warned.iter().any(|w| l.contains(w.as_str())),
                "{name}: models warns {l:?}, inspect does not: {}",
                inspect.text
            );
        }
        if name != "sound" {
            assert!(!warned.is_empty(), "{name}: no warning: {}", inspect.text);
        }
    }
}
