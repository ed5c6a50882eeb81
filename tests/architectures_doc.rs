//! docs/architectures.md is the architecture table of `core::arch` in words: one row per row
//! of the table, in its order; "not supported: <reason>" exactly where the table gives a
//! reason; the cache kind saying the table's memory kind (none, recurrent, hybrid), its
//! sliding-window rule and deepseek4's compressed caches; the compute-buffer column saying
//! the table's compute status; and every architecture of the oracle fixtures listed.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::core::arch::{self, ARCHITECTURES, LLAMA_CPP_BUILD, Memory};
use llmbound::core::runtime::ComputeStatus;
use std::collections::BTreeMap;
use std::path::Path;

/// (architecture → status) from the table rows `| `name` | status | kind | compute |`.
fn table() -> BTreeMap<String, String> {
    rows().into_iter().map(|r| (r.0, r.1)).collect()
}

/// The table rows of the document in order: (name, status, cache kind, compute buffer).
fn rows() -> Vec<(String, String, String, String)> {
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
            Some((
                name.to_string(),
                cells.get(2)?.to_string(),
                cells.get(3)?.to_string(),
                cells.get(4)?.to_string(),
            ))
        })
        .collect()
}

#[test]
fn one_row_per_row_of_the_table_in_its_order() {
    let doc: Vec<String> = rows().into_iter().map(|r| r.0).collect();
    let table: Vec<&str> = arch::names().collect();
    assert_eq!(doc, table, "docs/architectures.md rows against core::arch");
}

#[test]
fn unsupported_rows_match_the_core() {
    for (a, status, _, _) in rows() {
        let row = arch::lookup(&a).expect("a row of the table");
        match row.unsupported {
            Some(why) => assert_eq!(status, format!("not supported: {why}"), "{a}"),
            None => assert!(
                !status.starts_with("not supported"),
                "{a}: table says {status:?}"
            ),
        }
    }
}

#[test]
fn cache_kind_says_the_tables_memory_and_window_rule() {
    for (a, _, kind, _) in rows() {
        let row = arch::lookup(&a).expect("a row of the table");
        let k = kind.to_lowercase();
        assert_eq!(
            row.memory == Memory::None,
            k.starts_with("none"),
            "{a}: {kind}"
        );
        assert_eq!(
            row.memory == Memory::Recurrent,
            k.starts_with("recurrent"),
            "{a}: {kind}"
        );
        assert_eq!(
            row.memory == Memory::Hybrid,
            k.starts_with("hybrid"),
            "{a}: {kind}"
        );
        if row.swa.is_some() {
            assert!(
                k.contains("swa"),
                "{a}: a sliding-window rule, but {kind:?}"
            );
        }
        assert_eq!(
            row.compressed_kv,
            kind.contains("llama_kv_cache_dsv4"),
            "{a}: {kind}"
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

#[test]
fn compute_buffer_column_matches_the_core() {
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
    let doc = rows();
    assert_eq!(
        doc.len(),
        ARCHITECTURES.len(),
        "every row has a compute-buffer column"
    );
    for (a, _, _, c) in &doc {
        let want = match arch::lookup(a).expect("a row of the table").compute {
            ComputeStatus::UpperBound(why) => format!("upper bound: {why}"),
            ComputeStatus::Estimate {
                below_pct,
                above_pct,
                why,
            } => format!(
                "estimate: {why}, not replayed; measured {below_pct}% below to {above_pct}% above llama.cpp"
            ),
            ComputeStatus::Unchecked(missing) => {
                format!("unchecked: replayed from llama.cpp's source; {missing}")
            }
            ComputeStatus::Exact if with_fixture.contains(a) => {
                "replayed, within the band of a fixture".to_string()
            }
            ComputeStatus::Exact => "replayed, not yet fixture-checked".to_string(),
        };
        assert_eq!(c, &want, "{a}");
    }
}
