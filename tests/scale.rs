//! Large and hostile inputs that used to take quadratic time: group-by-layer in `inspect` and in
//! the explorer, llama-bench files of many rows; tensor offsets that llama.cpp refuses; a file
//! cut short. Sizes are chosen so the old code took minutes and the new takes milliseconds; the
//! wall bound in `guard` only stops a hang (timings belong to `benches/scale.rs`).

use assert_cmd::Command;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, TensorRow, open};
use llmbound::inspect::{self, Group, Sort};
use llmbound::tui::views::tensors::{Grouping, TableLine, TensorView};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Run `f` on a thread; fail when it has not finished within 10 s (a hang guard, not a timing).
fn guard<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    guard_secs(10, what, f)
}

/// As `guard`, with a longer bound for work that takes seconds in an unoptimised test build
/// on a busy machine (and took minutes before).
fn guard_secs<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what} did not finish within {secs} s (quadratic?)"))
}

fn llmbound(config: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", config);
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c.env("NO_COLOR", "1");
    c
}

/// `n` F32 tensors of 32 elements, `per_layer` to a layer, contiguous as llama.cpp writes them.
fn many_tensors(dir: &Path, n: usize, per_layer: usize) -> PathBuf {
    let mut w = GgufWriter::new().kv("general.architecture", writer::string("llama"));
    for i in 0..n {
        w = w.tensor(
            &format!("blk.{}.t{}.weight", i / per_layer, i % per_layer),
            GgmlType::F32,
            &[32],
        );
    }
    let p = dir.join(format!("many-{n}.gguf"));
    w.write_file(&p, Data::Sparse).unwrap();
    p
}

#[test]
fn inspect_groups_forty_thousand_layers_in_one_pass() {
    // 40,000 layers of one tensor each: the old listing filtered every tensor once per layer
    // (1.6 billion comparisons; 25,000 layers took 2.5 s in a release build, 200,000 > 120 s).
    let dir = tempfile::tempdir().unwrap();
    let p = many_tensors(dir.path(), 40_000, 1);
    let text = guard("inspect --group layer", move || {
        let a = open(&p).unwrap();
        let r = inspect::build(&a, Sort::Offset, false);
        let mut out = Vec::new();
        inspect::write_text(&r, Group::Layer, false, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    });
    // Every layer heading once, in order, each followed by its one tensor.
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("layer ")).collect();
    assert_eq!(headings.len(), 40_000);
    assert!(headings[39_999].starts_with("layer 39999: 1 tensors, 128 bytes"));
    assert_eq!(text.matches(".t0.weight ").count(), 40_000);
    let at = text.find("\nlayer 12345:").unwrap();
    assert!(
        text[at..]
            .lines()
            .nth(3)
            .unwrap()
            .contains("blk.12345.t0.weight")
    );
}

fn row(i: usize) -> TensorRow {
    TensorRow {
        name: format!("blk.{i}.attn_q.weight"),
        type_name: if i.is_multiple_of(2) { "Q4_K" } else { "Q6_K" }.into(),
        ggml_type: if i.is_multiple_of(2) {
            GgmlType::Q4_K
        } else {
            GgmlType::Q6_K
        },
        shape: vec![256, 4],
        elements: 1024,
        bytes: Some(576),
        bits_per_weight: Some(4.5),
        offset: i as u64 * 576,
        shard: 0,
        layer: Some(i as u32 % 65_535),
        role: llmbound::gguf::Role::Attention,
        linear: true,
        counted: "full".into(),
    }
}

#[test]
fn explorer_groups_a_hundred_thousand_layers_in_one_pass() {
    // The old rebuild searched a list of keys for every tensor and filtered all tensors once
    // per key: 100,000 layers froze the explorer for more than a minute.
    let inv: Vec<TensorRow> = (0..100_000).map(row).collect();
    let (lines, shown) = guard("TensorView::rebuild by layer", move || {
        let mut v = TensorView {
            group: Grouping::Layer,
            ..TensorView::default()
        };
        v.rebuild(&inv);
        (v.lines, v.shown)
    });
    assert_eq!(shown, 100_000);
    // 65,535 layer groups (indices wrap), in layer order, each heading before its tensors.
    let groups: Vec<&TableLine> = lines
        .iter()
        .filter(|l| matches!(l, TableLine::Group { .. }))
        .collect();
    assert_eq!(groups.len(), 65_535);
    assert_eq!(lines.len(), 100_000 + 65_535);
    match (&lines[0], &lines[1], &lines[2], &lines[3]) {
        (
            TableLine::Group { label, count, .. },
            TableLine::Tensor(0),
            TableLine::Tensor(65_535),
            TableLine::Group { label: next, .. },
        ) => {
            assert_eq!(
                (label.as_str(), *count, next.as_str()),
                ("layer 0", 2, "layer 1")
            );
        }
        other => panic!("unexpected first lines {other:?}"),
    }
}

#[test]
fn explorer_groups_by_type_as_before() {
    let inv: Vec<TensorRow> = (0..10).map(row).collect();
    let mut v = TensorView {
        group: Grouping::Type,
        ..TensorView::default()
    };
    v.rebuild(&inv);
    let labels: Vec<(String, usize)> = v
        .lines
        .iter()
        .filter_map(|l| match l {
            TableLine::Group { label, count, .. } => Some((label.clone(), *count)),
            TableLine::Tensor(_) => None,
        })
        .collect();
    assert_eq!(labels, [("Q4_K".to_string(), 5), ("Q6_K".to_string(), 5)]);
    assert_eq!(v.lines[1], TableLine::Tensor(0));
    assert_eq!(v.lines[2], TableLine::Tensor(2));
}

const BENCH_ROW: &str = r#"{
    "build_commit": "abc1234", "build_number": 1, "cpu_info": "AMD EPYC", "gpu_info": "",
    "backends": "CPU", "model_filename": "m.gguf", "model_type": "llama 1B Q4_K - Medium",
    "model_size": 100000000, "model_n_params": 200000000, "n_batch": 2048, "n_ubatch": 512,
    "n_threads": 1, "type_k": "f16", "type_v": "f16", "n_gpu_layers": 0, "flash_attn": 0,
    "n_prompt": 0, "n_gen": 128, "n_depth": 0, "test_time": "2026-11-30T01:23:11Z",
    "avg_ts": 10.5, "stddev_ts": 0.1, "samples_ts": [10.4, 10.6]
  }"#;

#[test]
fn bench_rows_carry_their_lines_in_one_pass() {
    // Each row's line used to be counted from the start of the file: 4,800 rows took 3.7 s,
    // 200,000 more than 20 s. 30,000 rows of 8 lines: the last starts on line 239,994.
    let n = 30_000;
    let text = format!("[\n  {}\n]\n", vec![BENCH_ROW; n].join(",\n  "));
    let rows = guard_secs(30, "parsing 30,000 llama-bench rows", move || {
        llmbound::bench::parse_str("big.json", &text).unwrap()
    });
    assert_eq!(rows.len(), n);
    assert_eq!(rows[0].source.line, 2);
    assert_eq!(rows[n - 1].source.line, 2 + 8 * (n - 1));
    assert_eq!(rows[n - 1].source.row, n);
    // The same rows as jsonl, one per line.
    let one = BENCH_ROW.replace('\n', " ");
    let text = vec![one.as_str(); n].join("\n");
    let rows = guard_secs(30, "parsing 30,000 jsonl rows", move || {
        llmbound::bench::parse_str("big.jsonl", &text).unwrap()
    });
    assert_eq!(rows[n - 1].source.line, n);
}

#[test]
fn bench_notes_and_artifacts_are_gathered_in_one_pass() {
    // Every row shares one artifact and its notes: the artifact's row list used to be copied
    // for every row (quadratic in time and memory: 200,000 rows took 1.49 GB).
    let n = 20_000;
    let text = format!("[\n  {}\n]\n", vec![BENCH_ROW; n].join(",\n  "));
    let rows = llmbound::bench::parse_str("big.json", &text).unwrap();
    let cat = llmbound::profile::Catalog::load();
    let base = llmbound::workspace::scenario(
        &cat,
        &llmbound::build::ScenarioOptions {
            scenario: Some("gemma-3-270m-cpu-vm".into()),
            ..Default::default()
        },
    );
    let Ok(base) = base else {
        panic!("the built-in scenario gemma-3-270m-cpu-vm is missing: {base:?}");
    };
    let r = guard_secs(30, "evaluating 20,000 llama-bench rows", move || {
        llmbound::bench::evaluate(&rows, &base, &Default::default())
    });
    assert_eq!(r.rows.len(), n);
    assert_eq!(r.artifacts.len(), 1);
    assert_eq!(r.artifacts[0].rows.len(), n);
    for note in &r.notes {
        assert!(note.rows.is_sorted(), "{}", note.text);
        assert!(note.rows.windows(2).all(|w| w[0] < w[1]), "{}", note.text);
    }
    // The artifact (100 MB) is not the scenario's: its note names every row once.
    let other = r
        .notes
        .iter()
        .find(|n| n.text == r.artifacts[0].detail)
        .expect("a note about the other artifact");
    assert_eq!(other.rows.len(), n);
}

#[test]
fn a_tensor_far_past_the_previous_one_is_refused_as_llama_cpp_does() {
    // A tensor at 1 TiB in a 221,184-byte file was a "partial download" with W = 1 TiB.
    let dir = tempfile::tempdir().unwrap();
    let w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .tensor_at("a", GgmlType::F32, &[32], 0)
        .tensor_at("far", GgmlType::F32, &[32], 1 << 40);
    let p = dir.path().join("far.gguf");
    // The header only: the offset, not the data, is what is tested.
    w.write_file(&p, Data::HeaderOnly).unwrap();
    let e = open(&p).unwrap_err().to_string();
    assert!(
        e.starts_with("tensor \"far\" at byte ")
            && e.contains("data offset \"1099511627776\" is not where the previous tensor's data ends (expected 128"),
        "{e}"
    );
    for cmd in [vec!["inspect"], vec!["report", "--gguf"]] {
        let out = llmbound(dir.path()).args(&cmd).arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("\"far\"") && err.contains("1099511627776"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    // A gap (offset beyond the aligned end) and a tensor before the previous one's end fail
    // the same way; the first tensor must start at 0.
    for (second, first_at) in [(256u64, 0u64), (96, 0), (128, 32)] {
        let b = GgufWriter::new()
            .tensor_at("a", GgmlType::F32, &[32], first_at)
            .tensor_at("b", GgmlType::F32, &[32], second)
            .to_bytes();
        let e = llmbound::gguf::read_header(std::io::Cursor::new(&b), b.len() as u64)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not where the previous tensor's data ends"),
            "{e}"
        );
    }
}

#[test]
fn a_file_cut_short_is_shown_then_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("cut"))
        .tensor("blk.0.a.weight", GgmlType::F32, &[1024])
        .tensor("blk.0.b.weight", GgmlType::F32, &[1024]);
    let p = dir.path().join("cut.gguf");
    let full = w.write_file(&p, Data::Zeros).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(full - 1000).unwrap();
    for format in ["text", "json"] {
        let out = llmbound(dir.path())
            .args(["inspect", "--format", format])
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4), "{format}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.contains("blk.0.b.weight"), "{stdout}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("incomplete: 1,000 bytes of tensor data are missing"),
            "{err}"
        );
    }
}

#[test]
fn bench_rows_of_one_scenario_share_its_evaluation_and_output_is_linear() {
    // 20,000 rows of 50 depths × pp/tg/pg × two K types: 200 distinct pp/tg scenarios, each
    // built and evaluated once, whose rows share its names, notes and ceiling figures; the
    // rows' repeated text fields are one copy each. Per-row evaluation or per-row copies of
    // what a scenario gives would show here as a count or a pointer, not as a timing. The
    // whole import and its three output forms run under a hang guard.
    use std::sync::Arc;
    let n = 20_000;
    let one = BENCH_ROW.replace('\n', " ");
    let lines: Vec<String> = (0..n)
        .map(|i| {
            let (p, g) = [(0, 128), (512, 0), (512, 128)][(i / 50) % 3];
            let k = ["f16", "q8_0"][(i / 150) % 2];
            one.replace("\"n_prompt\": 0", &format!("\"n_prompt\": {p}"))
                .replace("\"n_gen\": 128", &format!("\"n_gen\": {g}"))
                .replace(
                    "\"n_depth\": 0",
                    &format!("\"n_depth\": {}", (i % 50) * 512),
                )
                .replace("\"type_k\": \"f16\"", &format!("\"type_k\": \"{k}\""))
                .replace(
                    "\"avg_ts\": 10.5",
                    &format!("\"avg_ts\": {}", 10.0 + (i % 7) as f64),
                )
        })
        .collect();
    let text = lines.join("\n");
    let cat = llmbound::profile::Catalog::load();
    let base = llmbound::workspace::scenario(
        &cat,
        &llmbound::build::ScenarioOptions {
            scenario: Some("gemma-3-270m-cpu-vm".into()),
            ..Default::default()
        },
    )
    .expect("the built-in scenario gemma-3-270m-cpu-vm");
    let (rows, r, outs) = guard_secs(60, "importing 20,000 llama-bench rows", move || {
        let rows = llmbound::bench::parse_str("big.jsonl", &text).unwrap();
        let r = llmbound::bench::evaluate(&rows, &base, &Default::default());
        let mut outs = Vec::new();
        for f in [
            llmbound::bench::write_text,
            llmbound::bench::write_markdown,
            llmbound::bench::write_json,
        ] {
            let mut out = Vec::new();
            f(&r, &mut out).unwrap();
            outs.push(out);
        }
        (rows, r, outs)
    });
    assert_eq!(rows.len(), n);
    assert_eq!(r.rows.len(), n);
    assert_eq!(r.distinct_scenarios, 200);
    let same = |a: &llmbound::bench::BenchRow, b: &llmbound::bench::BenchRow| match (
        &a.cpu_info,
        &b.cpu_info,
    ) {
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        _ => false,
    };
    assert!(same(&rows[0], &rows[n - 1]), "cpu_info is copied per row");
    assert!(Arc::ptr_eq(&rows[0].source.file, &rows[n - 1].source.file));
    // Rows 300 apart have the same scenario; rows 1 apart do not.
    for i in [0, 50, 1_234] {
        let (a, b) = (&r.rows[i], &r.rows[i + 300]);
        assert_eq!((a.name.as_str(), a.test), (b.name.as_str(), b.test));
        assert!(
            Arc::ptr_eq(&a.notes, &b.notes),
            "row {i}: notes copied per row"
        );
        if let (Some(x), Some(y)) = (&a.decode, &b.decode) {
            assert!(
                Arc::ptr_eq(&x.file_ceiling, &y.file_ceiling),
                "row {i}: figures per row"
            );
        }
        assert_ne!(r.rows[i].retained_tokens, r.rows[i + 1].retained_tokens);
    }
    assert!(r.rows.iter().filter(|x| x.decode.is_some()).count() > n / 4);
    // Every row is in each output form.
    for out in &outs[..2] {
        assert!(String::from_utf8_lossy(out).lines().count() > n);
    }
    let json: serde_json::Value = serde_json::from_slice(&outs[2]).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), n);
    assert_eq!(json["rows"][n - 1]["index"], n);
}
