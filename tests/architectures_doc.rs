//! docs/architectures.md lists every architecture of the pinned llama.cpp build, every name
//! the GGUF reader knows and every architecture of the oracle fixtures, and its "not
//! supported" rows are exactly the architectures the core refuses to call exact.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::core::model::{LLAMA_CPP_ARCHITECTURES, LLAMA_CPP_BUILD, unsupported_reason};
use llmbound::gguf::arch::KNOWN_ARCHITECTURES;
use std::collections::BTreeMap;
use std::path::Path;

/// (architecture → status) from the table rows `| `name` | status | kind |`.
fn table() -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architectures.md"),
    )
    .expect("docs/architectures.md");
    assert!(
        doc.contains(&format!("b{LLAMA_CPP_BUILD}")),
        "the table states the pinned build b{LLAMA_CPP_BUILD}"
    );
    doc.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), cells.get(2)?.to_string()))
        })
        .collect()
}

#[test]
fn every_llama_cpp_architecture_is_listed() {
    let t = table();
    for a in LLAMA_CPP_ARCHITECTURES {
        assert!(t.contains_key(*a), "{a} missing from docs/architectures.md");
    }
    for a in KNOWN_ARCHITECTURES {
        assert!(t.contains_key(*a), "{a} missing from docs/architectures.md");
    }
    for a in t.keys() {
        assert!(
            LLAMA_CPP_ARCHITECTURES.contains(&a.as_str()),
            "{a} is in the table but not in the pinned build"
        );
    }
}

#[test]
fn unsupported_rows_match_the_core() {
    for (a, status) in table() {
        assert_eq!(
            status.starts_with("not supported"),
            unsupported_reason(&a).is_some(),
            "{a}: table says {status:?}"
        );
    }
}

/// Every string value under the fixtures' architecture list (an array of names, or objects
/// naming the architecture).
fn names(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| names(x, out)),
        serde_json::Value::Object(o) => {
            for key in ["architectures", "architecture", "name", "arch"] {
                if let Some(x) = o.get(key) {
                    names(x, out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn every_fixture_architecture_is_listed() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp/architectures.json");
    let Ok(text) = std::fs::read_to_string(&p) else {
        skipped!("SKIPPED: {} does not exist", p.display());
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&text).expect("architectures.json is JSON");
    let mut found = Vec::new();
    names(&v, &mut found);
    assert!(
        !found.is_empty(),
        "no architecture names in {}",
        p.display()
    );
    let t = table();
    for a in &found {
        assert!(
            t.contains_key(a),
            "fixture architecture {a} missing from docs/architectures.md"
        );
    }
    // A row that claims a fixture check names an architecture with a fixture.
    let with_fixture: Vec<String> = v["architectures"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|r| r["status"] == "fixture")
                .filter_map(|r| r["arch"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for (a, status) in &t {
        if status.contains("checked against a fixture") {
            assert!(
                with_fixture.contains(a),
                "{a} claims a fixture check but has no fixture"
            );
        }
    }
}

/// (architecture → compute-buffer column) from the four-column table rows.
fn compute_column() -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architectures.md"),
    )
    .expect("docs/architectures.md");
    doc.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), cells.get(4)?.to_string()))
        })
        .collect()
}

#[test]
fn compute_buffer_column_matches_the_core() {
    use llmbound::core::runtime::{self, ComputeStatus};
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-cpp/architectures.json");
    let text = std::fs::read_to_string(&p).expect("architectures.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("architectures.json is JSON");
    let with_fixture: Vec<String> = v["architectures"]
        .as_array()
        .expect("architectures array")
        .iter()
        .filter(|r| r["status"] == "fixture")
        .filter_map(|r| r["arch"].as_str().map(String::from))
        .collect();
    let col = compute_column();
    assert!(
        col.len() >= LLAMA_CPP_ARCHITECTURES.len(),
        "every row has a compute-buffer column"
    );
    for (a, c) in &col {
        match runtime::compute_status(a) {
            ComputeStatus::UpperBound(why) => assert_eq!(
                c,
                &format!("upper bound: {why}"),
                "{a}: the table must say it is an upper bound, and why"
            ),
            ComputeStatus::Exact => {
                let want = if with_fixture.contains(a) {
                    "replayed, within the band of a fixture"
                } else {
                    "replayed, not yet fixture-checked"
                };
                assert_eq!(c, want, "{a}");
            }
        }
        assert!(
            runtime::compute_not_modelled(a).is_none(),
            "{a}: no architecture may be listed as erring low"
        );
    }
    for (a, _) in runtime::COMPUTE_UPPER_BOUND {
        assert!(col.contains_key(*a), "{a} missing from the table");
    }
}
