//! Hostile numbers (issue 10, items 8–12): a measured bandwidth with no peak never calls a
//! real rate impossible; tensor splits normalise without overflow; physical inputs have
//! plausible ranges; model shapes llama.cpp cannot run are refused where they enter; byte
//! figures beyond 2^64 are refused instead of printed saturated.

use assert_cmd::Command;
use llmbound::gguf::writer::{self, Data, GgufWriter};
use llmbound::gguf::{GgmlType, Value};
use std::path::{Path, PathBuf};

fn llmbound(config: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", config.join("config"));
    c.env("XDG_CACHE_HOME", config.join("cache"));
    c.env("NO_COLOR", "1");
    c
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let o = llmbound(dir).args(args).output().unwrap();
    let out = Out {
        code: o.status.code(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    };
    no_long_numbers(&out.stdout);
    no_long_numbers(&out.stderr);
    out
}

/// "No 300-digit numbers anywhere": no run of more than 25 digits (2^64 has 20).
fn no_long_numbers(text: &str) {
    let mut run = 0;
    for c in text.chars() {
        if c.is_ascii_digit() {
            run += 1;
            assert!(run <= 25, "a {run}+ digit number in: {text}");
        } else if c != ',' {
            run = 0;
        }
    }
}

fn bench_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

/// The real gemma-3-270m GGUF (`LLMBOUND_GEMMA_GGUF`), else the committed header copy grown
/// back to its size (sparse): same metadata and tensor inventory.
fn gemma(dir: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("LLMBOUND_GEMMA_GGUF") {
        return PathBuf::from(p);
    }
    eprintln!("note: LLMBOUND_GEMMA_GGUF is unset; using the committed header-only copy");
    let p = dir.join("gemma-3-270m-q4_k_m.gguf");
    std::fs::copy(bench_fixture("cpu/gemma-3-270m-q4_k_m.gguf-header"), &p).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(253_113_024)
        .unwrap();
    p
}

/// A machine profile with one host tier of 24 GiB and `bandwidth` with `provenance`.
fn machine(dir: &Path, id: &str, bandwidth: &str, provenance: &str) -> PathBuf {
    let extra = if provenance == "measured" {
        ", date = \"2026-11-30\", method = \"llmbound detect --quick on a loaded machine\""
    } else {
        ""
    };
    let p = dir.join(format!("{id}.toml"));
    std::fs::write(
        &p,
        format!(
            "id = \"{id}\"\nname = \"{id}\"\n[[tier]]\nname = \"host\"\nkind = \"host\"\n\
             capacity = {{ value = 25769803776, provenance = \"measured\" }}\n\
             bandwidth = {{ value = \"{bandwidth}\", provenance = \"{provenance}\"{extra} }}\n"
        ),
    )
    .unwrap();
    p
}

// ---------------------------------------------------------------- item 8

/// The report of the issue: 8.39 GB/s measured on a busy machine, 91.56 t/s observed.
#[test]
fn a_rate_above_a_measured_only_ceiling_is_not_impossible() {
    let dir = tempfile::tempdir().unwrap();
    let g = gemma(dir.path());
    let g = g.to_str().unwrap();
    let low = machine(dir.path(), "busy-box", "8.39 GB/s", "measured");
    let args = |m: &Path| -> Vec<String> {
        let m = m.to_str().unwrap();
        [
            "check",
            "--tokens-per-second",
            "91.56",
            "-c",
            "64",
            "--machine",
            m,
            "--gguf",
            g,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let owned = args(&low);
    let a: Vec<&str> = owned.iter().map(String::as_str).collect();
    let o = run(dir.path(), &a);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout.starts_with(
            "above the measured ceiling (34.02 tokens/s at a short context, 33.86 at 64 tokens)"
        ),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("does not describe this path"));
    assert!(!o.stdout.contains("IMPOSSIBLE"));
    let mut j = a.clone();
    j.extend(["--format", "json"]);
    let o = run(dir.path(), &j);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "above-measured-ceiling");
    assert_eq!(v["impossible"], false);

    // The same figure stated as a peak (derived) decides: impossible, exit 3.
    let peak = machine(dir.path(), "peak-box", "8.39 GB/s", "derived");
    let owned = args(&peak);
    let a: Vec<&str> = owned.iter().map(String::as_str).collect();
    let o = run(dir.path(), &a);
    assert_eq!(o.code, Some(3), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.starts_with("IMPOSSIBLE"), "{}", o.stdout);
}

/// `bench` of the shipped CPU runs against the busy-machine profile: exit 0, every decode row
/// above the measured ceiling; against a peak of the same figure: exit 3.
#[test]
fn shipped_cpu_runs_against_a_low_measured_figure() {
    let dir = tempfile::tempdir().unwrap();
    let g = gemma(dir.path());
    let files: Vec<PathBuf> = [
        "cpu/gemma3-270m_t1_f16.json",
        "cpu/gemma3-270m_t1_q8_0.json",
        "cpu/gemma3-270m_t2_f16.json",
        "cpu/gemma3-270m_t2_q8_0.json",
    ]
    .iter()
    .map(|f| bench_fixture(f))
    .collect();
    for (id, provenance, code) in [("busy-box", "measured", 0), ("peak-box", "derived", 3)] {
        let m = machine(dir.path(), id, "8.39 GB/s", provenance);
        let mut args: Vec<&str> = vec!["bench"];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        args.extend([
            "--machine",
            m.to_str().unwrap(),
            "--gguf",
            g.to_str().unwrap(),
        ]);
        let o = run(dir.path(), &args);
        assert_eq!(o.code, Some(code), "{provenance}: {}{}", o.stdout, o.stderr);
        args.extend(["--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&run(dir.path(), &args).stdout).unwrap();
        let tg = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["test"] == "tg" || r["n_gen"].as_u64().unwrap_or(0) > 0)
            .count();
        assert!(tg > 0);
        if provenance == "measured" {
            assert!(
                o.stdout.contains("above the measured ceiling"),
                "{}",
                o.stdout
            );
            assert_eq!(v["impossible_rows"], 0);
            assert!(v["rows_above_measured_ceiling"].as_u64().unwrap() > 0);
        } else {
            assert!(o.stdout.contains("IMPOSSIBLE"), "{}", o.stdout);
            assert!(v["impossible_rows"].as_u64().unwrap() > 0);
        }
    }
    // The shipped profile of that VM (64.5 GB/s, measured on a quiet machine): all within.
    let mut args: Vec<&str> = vec!["bench"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend([
        "--machine",
        "epyc-zen5-2vcpu-vm",
        "--gguf",
        g.to_str().unwrap(),
    ]);
    let o = run(dir.path(), &args);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(!o.stdout.contains("above the measured ceiling"));
}

// ---------------------------------------------------------------- item 9

#[test]
fn huge_tensor_split_is_the_even_split() {
    let dir = tempfile::tempdir().unwrap();
    let layers = |split: &str| -> (Vec<u64>, bool, String) {
        let o = run(
            dir.path(),
            &[
                "report",
                "--machine",
                "desktop-dual-rtx-3090",
                "--tensor-split",
                split,
                "--format",
                "json",
            ],
        );
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let l = v["capacity"]["tiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["layers"].as_u64().unwrap())
            .collect();
        (
            l,
            v["capacity"]["fits"].as_bool().unwrap(),
            v["llama_cpp_command"].as_str().unwrap().to_string(),
        )
    };
    let (even, fits, _) = layers("1,1");
    assert_eq!(&even[..2], &[33, 31]);
    assert!(fits);
    let (huge, fits, cmd) = layers("1e308,1e308");
    assert_eq!(huge, even);
    assert!(fits);
    assert!(cmd.contains("-ts 1,1 "), "{cmd}");
    let (tiny, _, _) = layers("1e-320,1e-320");
    assert_eq!(tiny, even);
}

#[test]
fn bad_tensor_splits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (split, want) in [
        (
            "1,1,1",
            "tensor split lists 3 proportions but the machine has 2 accelerators",
        ),
        ("-1,1", "proportion 1 is negative"),
        ("0,0", "are all 0"),
        ("1,inf", "proportion 2 is not a finite number"),
    ] {
        let o = run(
            dir.path(),
            &[
                "report",
                "--machine",
                "desktop-dual-rtx-3090",
                &format!("--tensor-split={split}"),
            ],
        );
        assert_eq!(o.code, Some(1), "{split}: {}", o.stdout);
        assert!(o.stderr.contains(want), "{split}: {}", o.stderr);
    }
}

// ---------------------------------------------------------------- item 10

#[test]
fn physical_inputs_have_plausible_ranges() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec!["report", "--bandwidth", "1e-300 GB/s"],
            "\"1e-300 GB/s\": below the plausible range (a bandwidth must be between 1 MB/s and 100 TB/s)",
        ),
        (
            vec!["report", "--bandwidth", "1e308 GB/s"],
            "\"1e308 GB/s\": above the plausible range",
        ),
        (
            vec!["report", "--bandwidth", "1e308"],
            "above the plausible range",
        ),
        (
            vec!["report", "--memory", "2000 TB"],
            "capacity 2,000,000,000,000,000 bytes is above the plausible range",
        ),
        (
            vec!["report", "--memory", "1000"],
            "below the plausible range",
        ),
        (
            vec!["check", "--tokens-per-second", "1e300"],
            "above the plausible range (a decode rate must be between",
        ),
        (
            vec!["check", "--tokens-per-second", "1e-300"],
            "below the plausible range",
        ),
        (vec!["report", "-c", "5000000000"], "u32 context"),
        (
            vec!["report", "--sequences", "100000"],
            "above llama.cpp's limit",
        ),
    ] {
        let o = run(dir.path(), &args);
        assert_eq!(o.code, Some(1), "{args:?}: {}", o.stdout);
        assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
        assert!(!o.stderr.contains("must be positive"), "{}", o.stderr);
        assert!(!o.stdout.contains("0 B/s"));
    }
    // The ends of the range are accepted, and print short numbers.
    for bw in ["1 MB/s", "100 TB/s"] {
        let o = run(dir.path(), &["report", "--bandwidth", bw]);
        assert_eq!(o.code, Some(0), "{bw}: {}", o.stderr);
    }
}

// ---------------------------------------------------------------- item 11

fn tiny_gguf(dir: &Path, name: &str, heads: u32, kv: u32, embd: u32) -> PathBuf {
    let w = GgufWriter::new()
        .kv("general.architecture", writer::string("llama"))
        .kv("general.name", writer::string("Tiny"))
        .kv("llama.block_count", Value::U32(2))
        .kv("llama.embedding_length", Value::U32(embd))
        .kv("llama.context_length", Value::U32(4096))
        .kv("llama.attention.head_count", Value::U32(heads))
        .kv("llama.attention.head_count_kv", Value::U32(kv))
        .kv(
            "tokenizer.ggml.tokens",
            writer::string_array((0..100).map(|i| format!("t{i}"))),
        )
        .tensor("token_embd.weight", GgmlType::F32, &[64, 100])
        .tensor("blk.0.attn_q.weight", GgmlType::F32, &[64, 64])
        .tensor("blk.1.attn_q.weight", GgmlType::F32, &[64, 64]);
    let p = dir.join(name);
    w.write_file(&p, Data::Zeros).unwrap();
    p
}

#[test]
fn gguf_shapes_llama_cpp_cannot_run_are_refused_with_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, heads, kv, embd, want) in [
        (
            "zero-heads.gguf",
            0,
            1,
            64,
            "llama.attention.head_count = 0",
        ),
        (
            "kv-above.gguf",
            4,
            8,
            64,
            "llama.attention.head_count_kv = 8 is more than the 4 query heads",
        ),
        (
            "kv-3.gguf",
            8,
            3,
            64,
            "llama.attention.head_count_kv = 3 does not divide the 8 query heads",
        ),
        ("zero-embd.gguf", 4, 2, 0, "llama.embedding_length = 0"),
    ] {
        let p = tiny_gguf(dir.path(), name, heads, kv, embd);
        let o = run(dir.path(), &["report", "--gguf", p.to_str().unwrap()]);
        assert_eq!(o.code, Some(1), "{name}: {}", o.stdout);
        assert!(o.stderr.contains(want), "{name}: {}", o.stderr);
        assert!(
            o.stderr.contains(name),
            "{name} names the file: {}",
            o.stderr
        );
        assert!(!o.stdout.contains("fits"), "{}", o.stdout);
    }
    let ok = tiny_gguf(dir.path(), "ok.gguf", 4, 2, 64);
    let o = run(dir.path(), &["report", "--gguf", ok.to_str().unwrap()]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}

#[test]
fn the_shared_shape_check_refuses_what_llama_cpp_refuses() {
    use llmbound::core::model::{ArchFigures, ModelShape, PerLayer};
    use llmbound::core::shape_check::{ShapeFigure, ShapeProblem, check_figures};
    use llmbound::core::units::Provenance;
    let fig = |h: PerLayer, kv: PerLayer, head_dim: Option<u32>, embd: u64| ArchFigures {
        architecture: "llama".into(),
        layers: 2,
        head_count: h,
        head_count_kv: kv,
        key_length: head_dim,
        value_length: head_dim,
        embedding_length: embd,
        vocab_size: 100,
        native_context: None,
        sliding_window: None,
        sliding_pattern: None,
        chunk_size: None,
        mla: None,
        moe: None,
        ssm: None,
        recurrent_layers: None,
        tied_embeddings: true,
        keys: Default::default(),
    };
    use PerLayer::{List, Uniform};
    let e = check_figures(&fig(Uniform(8), List(vec![2, 16]), None, 512)).unwrap_err();
    assert_eq!(e.figure, ShapeFigure::HeadCountKv);
    assert_eq!(e.layer, Some(1));
    assert!(matches!(e.problem, ShapeProblem::KvAboveHeads { .. }));
    let e = check_figures(&fig(Uniform(8), Uniform(2), Some(0), 512)).unwrap_err();
    assert_eq!(
        (e.figure, e.problem),
        (ShapeFigure::KeyLength, ShapeProblem::Zero)
    );
    // embedding_length / head_count = 0 with no explicit head size.
    let e = check_figures(&fig(Uniform(8), Uniform(2), None, 4)).unwrap_err();
    assert!(matches!(e.problem, ShapeProblem::DerivedZero { .. }));
    // Layers without KV heads (recurrent, attention-free) need no query heads.
    check_figures(&fig(List(vec![0, 8]), List(vec![0, 2]), None, 512)).unwrap();
    // The explorer's edits go through the same check (ModelShape::from_figures).
    let err = ModelShape::from_figures(
        "x",
        &fig(Uniform(8), Uniform(3), None, 512),
        Provenance::User,
    )
    .unwrap_err();
    assert!(err.0.contains("does not divide"), "{err}");
}

// ---------------------------------------------------------------- item 12

#[test]
fn byte_figures_beyond_2_pow_64_are_refused_not_saturated() {
    let dir = tempfile::tempdir().unwrap();
    let model = |name: &str, layers: u32, heads: u32| -> PathBuf {
        let p = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &p,
            format!(
                "id = \"{name}\"\nname = \"{name}\"\narchitecture = \"llama\"\nlayers = {layers}\n\
                 attention-heads = {heads}\nkv-heads = {heads}\nhead-dim = {heads}\n\
                 hidden-size = 4096\nvocab-size = 1000\n"
            ),
        )
        .unwrap();
        p
    };
    let big = model("big", 1000, 65536);
    let o = run(
        dir.path(),
        &[
            "report",
            "--model",
            big.to_str().unwrap(),
            "--artifact-bytes",
            "1000000",
            "-c",
            "4000000000",
        ],
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(
        o.stderr
            .contains("the KV cache would be about 6.872e22 bytes, which exceeds the representable range of 2^64 − 1 bytes"),
        "{}",
        o.stderr
    );
    assert!(!o.stdout.contains("18,446,744,073,709,551,615"));
    assert!(!o.stderr.contains("18,446,744,073,709,551,615"));
    // Per token beyond the 1/32-byte units, even at one token of context.
    let huge = model("huge", 100_000, u32::MAX);
    let o = run(
        dir.path(),
        &[
            "report",
            "--model",
            huge.to_str().unwrap(),
            "--artifact-bytes",
            "1000000",
        ],
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(
        o.stderr.contains("the KV cache per token would be about"),
        "{}",
        o.stderr
    );
    // W + K + A beyond 2^64 with each part below it.
    let o = run(
        dir.path(),
        &[
            "report",
            "--artifact-bytes",
            "18000000000000000000",
            "--overhead",
            "1000000000000000000",
        ],
    );
    assert_eq!(o.code, Some(1), "{}", o.stdout);
    assert!(
        o.stderr.contains("(W + K + A) would be about"),
        "{}",
        o.stderr
    );
}

/// The explorer's claim follows the same rule, and refuses a rate out of range.
#[test]
fn explorer_claim_above_a_measured_only_ceiling() {
    use llmbound::build::ScenarioOptions;
    use llmbound::core::claim::ClaimOutcome;
    use llmbound::profile::Catalog;
    use llmbound::tui::Action;
    use llmbound::tui::app::App;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("machines")).unwrap();
    machine(
        &dir.path().join("machines"),
        "busy-box",
        "8.39 GB/s",
        "measured",
    );
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            machine: Some("busy-box".into()),
            ..ScenarioOptions::default()
        },
    )
    .unwrap();
    app.update(Action::Search);
    app.update(Action::SetText("100".into()));
    let c = app.claim().cloned().unwrap();
    assert_eq!(c.check.outcome, ClaimOutcome::AboveMeasured);
    assert!(!c.check.impossible);
    let verdict = llmbound::report::words::claim_verdict(&c.check);
    assert!(
        verdict.starts_with("above the measured ceiling"),
        "{verdict}"
    );
    app.update(Action::Search);
    app.update(Action::SetText("1e300".into()));
    let m = app.message().unwrap().text.clone();
    assert!(m.contains("above the plausible range"), "{m}");
}

/// A llama-bench row with an implausible rate is a one-line error naming file, line and row,
/// not a table of 300-digit efficiencies.
#[test]
fn bench_rows_with_implausible_rates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(bench_fixture("cpu/gemma3-270m_t2_f16.json")).unwrap();
    let mut rows: serde_json::Value = serde_json::from_str(&text).unwrap();
    rows[1]["avg_ts"] = serde_json::json!(1e300);
    let p = dir.path().join("huge.json");
    std::fs::write(&p, serde_json::to_string_pretty(&rows).unwrap()).unwrap();
    for cmd in [vec!["bench"], vec!["check", "--from-bench"]] {
        let mut args = cmd.clone();
        args.extend([p.to_str().unwrap(), "--machine", "epyc-zen5-2vcpu-vm"]);
        let o = run(dir.path(), &args);
        assert_eq!(o.code, Some(1), "{cmd:?}: {}", o.stdout);
        assert!(o.stderr.contains("huge.json:"), "{}", o.stderr);
        assert!(
            o.stderr.contains(
                "row 2: field \"avg_ts\" = 1.000e300 tokens/s is above the plausible range"
            ),
            "{}",
            o.stderr
        );
    }
}
