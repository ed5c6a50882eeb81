//! MLX-LM as a runtime beside llama.cpp, on safetensors folders rebuilt from the MLX fixtures
//! (tests/fixtures/mlx, recorded from MLX itself by scripts/oracle/mlx/oracle.py):
//! - `report --model-dir DIR --format json|markdown` carry MLX's own cache bytes and W;
//! - `--gguf` beside `--model-dir` puts llama.cpp's figures and MLX-LM's side by side;
//! - the workspace and the explorer open an MLX folder the way they open a GGUF (start-up
//!   argument, `o`), with MLX-LM's plan and the runtime that applies;
//! - `owner/repo` and `hf://owner/repo` on an MLX repository read config.json and the
//!   safetensors header over HTTP range reads from a loopback server shaped like the Hub.

#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/server.rs"]
mod server;

use assert_cmd::Command;
use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Edit;
use llmbound::core::mlx::{self, Runtime};
use llmbound::gguf::writer::Data;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::App;
use llmbound::workspace::{Refusal, Workspace};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

fn fixture(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mlx")
        .join(name);
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// The llama GQA model quantized to 4 bits, group 64, as MLX saved it.
fn llama_q4() -> Value {
    let fx = fixture("llama_gqa.json");
    fx["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["quant"] == "q4g64")
        .unwrap()
        .clone()
}

/// MLX's cache bytes after a prompt of `prompt` tokens with the default cache.
fn mlx_cache_bytes(art: &Value, prompt: u64) -> u64 {
    art["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prompt"] == prompt && r["cache_kind"] == "default")
        .unwrap()["cache_bytes"]
        .as_u64()
        .unwrap()
}

/// The safetensors file (exact header MLX wrote, sparse data) and config.json of `art`.
fn files_of(art: &Value) -> (Vec<u8>, u64, String) {
    let header = art["header"].as_str().unwrap();
    let mut head = (header.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(header.as_bytes());
    (
        head,
        art["file_bytes"].as_u64().unwrap(),
        serde_json::to_string(&art["config"]).unwrap(),
    )
}

fn rebuild(art: &Value, dir: &Path) {
    let (head, len, config) = files_of(art);
    let mut f = fs::File::create(dir.join("model.safetensors")).unwrap();
    f.write_all(&head).unwrap();
    f.set_len(len).unwrap();
    fs::write(dir.join("config.json"), config).unwrap();
}

fn llmbound(home: &Path) -> Command {
    let mut c = Command::cargo_bin("llmbound").unwrap();
    c.env("LLMBOUND_CONFIG_DIR", home.join("config"))
        .env("HOME", home)
        .env("HF_HOME", home.join("hf"))
        .env("LLMBOUND_HTTP_TIMEOUT", "5")
        .env_remove("HF_TOKEN")
        .env_remove("HUGGING_FACE_HUB_TOKEN")
        .env_remove("HF_TOKEN_PATH")
        .env("NO_COLOR", "1");
    c
}

fn run_ok(c: &mut Command) -> (String, String) {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[test]
fn report_json_and_markdown_carry_mlx_figures() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("llama-q4");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let w = art["file_bytes"].as_u64().unwrap();
    let (out, _) = run_ok(llmbound(d.path()).args([
        "report",
        "--model-dir",
        dir.to_str().unwrap(),
        "--context",
        "1000",
        "--format",
        "json",
    ]));
    let j = json(&out);
    assert_eq!(j["schema"], "llmbound-mlx-report/1");
    assert_eq!(j["runtime"], "mlx-lm");
    assert_eq!(j["weights"]["bytes"], w);
    assert_eq!(j["context_tokens"], 1000);
    // MLX's own figure: 1,024 cells of 4 layers × 2 heads × 64 wide K and V in bf16.
    assert_eq!(j["cache"]["bytes"], mlx_cache_bytes(&art, 1000));
    assert_eq!(j["cache"]["bytes"], 2_097_152);
    let m = &j["memory"];
    assert_eq!(
        m["total_bytes"].as_u64().unwrap(),
        w + 2_097_152 + m["activation_bytes"].as_u64().unwrap()
    );
    // The default M4 Pro's profile states the memory Metal reports free (its working set,
    // 36 GiB, derived): the verdict is held against that wired limit.
    assert_eq!(m["limit"]["kind"], "wired_limit");
    assert_eq!(m["fits"], true);
    // A tiny model on 36 GiB: every context up to the native one fits.
    assert_eq!(j["largest_context"]["tokens"], 16384);
    assert_eq!(j["largest_context"]["reaches_search_end"], true);
    assert_eq!(j["working_set"]["wired_limit_bytes"], 38_654_705_664u64);
    assert_eq!(j["working_set"]["provenance"], "derived");
    assert_eq!(j["side_by_side"], Value::Null);
    assert_eq!(j["decode"]["short_context"]["label"], "ceiling");
    assert!(
        j["decode"]["at_context"]["tokens_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    // The working set given: the verdict, against the wired limit.
    let (out, _) = run_ok(llmbound(d.path()).args([
        "report",
        "--model-dir",
        dir.to_str().unwrap(),
        "--context",
        "1000",
        "--working-set",
        "4000000",
        "--format",
        "json",
    ]));
    let j = json(&out);
    assert_eq!(j["working_set"]["provenance"], "user");
    assert_eq!(j["memory"]["limit"]["kind"], "wired_limit");
    let total = j["memory"]["total_bytes"].as_u64().unwrap();
    let want = if total <= 4_000_000 {
        "wired"
    } else if total <= 6_000_000 {
        "pages"
    } else {
        "over_limit"
    };
    assert_eq!(j["working_set"]["verdict"], want, "total {total}");
    assert_eq!(j["working_set"]["memory_limit_bytes"], 6_000_000);
    assert_eq!(j["memory"]["fits"], total <= 4_000_000);

    let (md, _) = run_ok(llmbound(d.path()).args([
        "report",
        "--model-dir",
        dir.to_str().unwrap(),
        "--context",
        "1000",
        "--format",
        "markdown",
    ]));
    assert!(md.starts_with("# MLX-LM plan: "), "{md}");
    assert!(md.contains("| W (files) | 1,636,914 |"), "{md}");
    assert!(
        md.contains("| cache at 1,000 tokens | 2,097,152 | 4 × KVCache |"),
        "{md}"
    );
    assert!(md.contains("mlx_lm.generate --model"), "{md}");
}

#[test]
fn llama_cpp_and_mlx_lm_side_by_side() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("llama-q4");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let gguf = d.path().join("tiny-Q4_K_M.gguf");
    let glen = fixtures::tiny("Tiny", 4)
        .write_file(&gguf, Data::Zeros)
        .unwrap();
    let args = |format: &'static str| {
        vec![
            "report".to_string(),
            "--model-dir".into(),
            dir.display().to_string(),
            "--gguf".into(),
            gguf.display().to_string(),
            "--context".into(),
            "1000".into(),
            "--format".into(),
            format.into(),
        ]
    };
    let (out, _) = run_ok(llmbound(d.path()).args(args("json")));
    let j = json(&out);
    let s = &j["side_by_side"];
    assert_eq!(s["context_tokens"], 1000);
    assert_eq!(s["llama_cpp"]["runtime"], "llama.cpp");
    assert_eq!(s["llama_cpp"]["weights_bytes"], glen);
    assert_eq!(s["mlx_lm"]["runtime"], "MLX-LM");
    assert_eq!(s["mlx_lm"]["weights_bytes"], art["file_bytes"]);
    assert_eq!(s["mlx_lm"]["cache_bytes"], 2_097_152);
    assert_eq!(s["mlx_lm"]["total_bytes"], j["memory"]["total_bytes"]);
    assert!(s["llama_cpp"]["cache_bytes"].as_u64().unwrap() > 0);
    assert!(
        s["llama_cpp_command"]
            .as_str()
            .unwrap()
            .starts_with("llama-server -m ")
    );
    // llama.cpp's figures are those of `report --gguf` alone on the same machine.
    let (alone, _) = run_ok(llmbound(d.path()).args([
        "report",
        "--gguf",
        gguf.to_str().unwrap(),
        "--machine",
        "macbook-pro-m4-pro-48gb",
        "--context",
        "1000",
        "--format",
        "json",
    ]));
    let a = json(&alone);
    assert_eq!(s["llama_cpp"]["total_bytes"], a["capacity"]["total_bytes"]);
    assert_eq!(
        s["llama_cpp"]["largest_context_tokens"],
        a["capacity"]["max_context_tokens"]
    );
    let (text, _) = run_ok(llmbound(d.path()).args(args("text")));
    assert!(text.contains("llama.cpp vs MLX-LM on "), "{text}");
    assert!(text.contains("llama.cpp launch  llama-server"), "{text}");
    assert!(text.contains("MLX-LM launch     mlx_lm.generate"), "{text}");
}

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

#[test]
fn the_workspace_and_the_explorer_open_an_mlx_folder() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("llama-q4");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let opts = ScenarioOptions {
        gguf: Some(dir.clone()),
        context: Some(1000),
        ..Default::default()
    };
    // The start-up argument.
    let cat = || Catalog::load_with(Some(d.path().join("config")));
    let mut ws = Workspace::new(cat(), &opts).unwrap();
    assert_eq!(ws.runtime(), Runtime::MlxLm);
    assert_eq!(ws.runtimes(), vec![Runtime::MlxLm]);
    let p = ws.mlx_plan().unwrap();
    assert_eq!(p.weights_bytes, art["file_bytes"].as_u64().unwrap());
    assert_eq!(
        p.memory.as_ref().unwrap().cache.bytes(),
        mlx_cache_bytes(&art, 1000)
    );
    // The panes show this model: its shape from config.json, its file as W.
    assert_eq!(ws.scenario().model.layers.len(), 4);
    assert_eq!(ws.scenario().model.architecture, "llama");
    assert_eq!(
        ws.report().artifact.bytes,
        art["file_bytes"].as_u64().unwrap()
    );
    // llama.cpp does not apply to a safetensors model alone.
    assert!(matches!(
        ws.apply(Edit::Runtime(Runtime::LlamaCpp)),
        Err(Refusal::Runtime(_))
    ));
    assert_eq!(ws.runtime(), Runtime::MlxLm);
    // The plan follows the scenario's context (one edit, recomputed with the report).
    ws.apply(Edit::Context(5000)).unwrap();
    // The q4 model keeps its cache in bf16, as the bf16 model of the same shape does: MLX
    // recorded 10,485,760 bytes after 5,000 tokens there.
    assert_eq!(
        ws.mlx_plan()
            .unwrap()
            .memory
            .as_ref()
            .unwrap()
            .cache
            .bytes(),
        mlx_cache_bytes(&fixture("llama_gqa.json")["artifacts"][0], 5000)
    );
    // The largest context: the last prompt whose total is within the limit. Metal's working
    // set follows the edited capacity (3/4 of it, the profile's share), so it limits first.
    let cap = 8_000_000;
    ws.apply(Edit::Capacity {
        tier: 0,
        bytes: cap,
    })
    .unwrap();
    let p = ws.mlx_plan().unwrap();
    assert_eq!(p.limit, mlx::PlanLimit::WiredLimit(cap / 4 * 3));
    let lim = p.limit.bytes();
    let n = p.largest_context.unwrap();
    let a = ws.mlx().unwrap();
    let input = mlx::PlanInput {
        layout: &a.layout,
        shape: a.shape,
        weights_bytes: a.weights_bytes(),
        weights_read_bytes: a.weights_read_bytes(),
        capacity: lim,
        bandwidth: 1.0,
        working_set: None,
        run: mlx::MlxRun::prompt(1),
        search_max: 16384,
    };
    assert!(mlx::memory_at(&input, n).unwrap().total <= lim);
    assert!(mlx::memory_at(&input, n + 1).unwrap().total > lim);
    assert!(n < 16384, "{n}");

    // Opening a GGUF: llama.cpp's figures, and the MLX model is closed.
    let gguf = d.path().join("tiny.gguf");
    fixtures::tiny("Tiny", 4)
        .write_file(&gguf, Data::Zeros)
        .unwrap();
    let o = llmbound::workspace::open::read(&gguf, llmbound::workspace::Rows::Totals).unwrap();
    ws.open(&o).unwrap();
    assert_eq!(ws.runtime(), Runtime::LlamaCpp);
    assert!(ws.mlx_plan().is_none());
    assert!(matches!(
        ws.apply(Edit::Runtime(Runtime::MlxLm)),
        Err(Refusal::Runtime(_))
    ));

    // The explorer: started on the folder, then `o` on it (the tensor view lists it).
    let mut app = App::new(cat(), &opts).unwrap();
    app.set_hash_cache(None);
    for (w, h) in [(80, 24), (120, 36)] {
        let s = draw(&app, w, h);
        assert!(s.contains("Bounds · MLX-LM"), "{w}×{h}:\n{s}");
        assert!(s.contains("runtime MLX-LM"), "{w}×{h}:\n{s}");
    }
    assert!(draw(&app, 120, 36).contains("cache at 1,000: 2,097,152 B"));
    app.update(Action::OpenPath(dir.clone()));
    app.wait_for_jobs(Duration::from_secs(30));
    let l = app
        .file()
        .loaded
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", app.message()));
    assert_eq!(l.total_bytes, art["file_bytes"].as_u64().unwrap());
    assert!(l.tensors.iter().any(|t| t.type_name == "affine q4 g64"));
    assert!(l.by_type.iter().any(|t| t.type_name == "affine q4 g64"));
    // The tensor view's shapes are the file's order (outermost first), as `inspect DIR` prints
    // them (the view had them reversed into GGUF's order: `256 × 1024` beside `1024×256`).
    let (listed, _) = run_ok(llmbound(d.path()).args(["inspect", dir.to_str().unwrap()]));
    let mut compared = 0;
    for t in l
        .tensors
        .iter()
        .filter(|t| t.shape.len() == 2 && t.shape[0] != t.shape[1])
    {
        let shape = format!("{}×{}", t.shape[0], t.shape[1]);
        let line = listed
            .lines()
            .find(|x| x.split_whitespace().next() == Some(t.name.as_str()))
            .unwrap_or_else(|| panic!("{} not in inspect:\n{listed}", t.name));
        assert!(
            line.contains(&shape),
            "{} is {shape} in the view: {line}",
            t.name
        );
        compared += 1;
    }
    assert!(compared >= 4, "{compared}");
    assert!(
        l.metadata
            .iter()
            .any(|m| m.key == "config.json: model_type")
    );
    assert_eq!(app.ws().runtime(), Runtime::MlxLm);
    assert!(!app.message().unwrap().error, "{:?}", app.message());
}

#[test]
fn mlx_repositories_over_http_range_reads() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("local");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let srv = server::Server::start();
    srv.add_file("o/mlx/model.safetensors", &dir.join("model.safetensors"));
    srv.add_file("o/mlx/config.json", &dir.join("config.json"));
    srv.add("o/mlx/README.md", b"# tiny".to_vec());
    let report = |name: &str| {
        let (out, err) = run_ok(
            llmbound(d.path())
                .env("HF_ENDPOINT", &srv.base)
                .args(["report", "--model-dir", name, "--context", "1000"])
                .args(["--format", "json"]),
        );
        (json(&out), err)
    };
    let (local, _) = report(dir.to_str().unwrap());
    for name in ["o/mlx", "hf://o/mlx"] {
        let (j, err) = report(name);
        for k in ["weights", "cache", "memory", "largest_context", "decode"] {
            assert_eq!(j[k], local[k], "{name}: {k}");
        }
        assert_eq!(j["model"]["folder"], "o/mlx");
        assert!(
            j["mlx_lm_command"]
                .as_str()
                .unwrap()
                .starts_with("mlx_lm.generate --model o/mlx ")
        );
        // Only the header and config.json cross the network: a few KB of a 1.6 MB file.
        let line = err
            .lines()
            .find(|l| l.contains("bytes transferred"))
            .unwrap_or_else(|| panic!("{err}"));
        let n: u64 = line
            .split("header read over HTTP: ")
            .nth(1)
            .unwrap()
            .split(" bytes")
            .next()
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap();
        let header = art["header"].as_str().unwrap().len() as u64;
        assert!(n >= header, "{n}");
        assert!(n <= 24 * 1024, "{name}: {n} bytes transferred");
    }
    // inspect lists the tensors of the remote model.
    let (out, _) = run_ok(
        llmbound(d.path())
            .env("HF_ENDPOINT", &srv.base)
            .args(["inspect", "o/mlx"]),
    );
    assert!(
        out.contains("model.layers.0.self_attn.q_proj.weight"),
        "{out}"
    );
    assert!(out.contains("affine q4 g64"), "{out}");

    // A header longer than the first fetch (2,000 tensors, ~110 KB): read on in ranges.
    let mut header = String::from("{");
    for i in 0..2000u64 {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(
            "\"model.t{i:05}.weight\":{{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[{},{}]}}",
            i * 16,
            i * 16 + 16
        ));
    }
    header.push('}');
    let mut big = (header.len() as u64).to_le_bytes().to_vec();
    big.extend_from_slice(header.as_bytes());
    big.resize(big.len() + 2000 * 16, 0);
    srv.add("o/big/model.safetensors", big);
    let (out, err) = run_ok(
        llmbound(d.path())
            .env("HF_ENDPOINT", &srv.base)
            .args(["inspect", "o/big"]),
    );
    assert!(out.contains("2000 tensors"), "{out}");
    assert!(out.contains("model.t01999.weight"), "{out}");
    assert!(err.contains("bytes transferred"), "{err}");

    // A repository with neither GGUF nor safetensors files: one line naming it.
    srv.add("o/empty/README.md", b"nothing".to_vec());
    let o = llmbound(d.path())
        .env("HF_ENDPOINT", &srv.base)
        .args(["report", "--model-dir", "o/empty"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("o/empty"), "{err}");

    // A hostile header claim over HTTP: refused from the first bytes, nothing allocated.
    let mut bad = (10_000_000_000u64).to_le_bytes().to_vec();
    bad.extend_from_slice(b"{}");
    srv.add("o/bad/model.safetensors", bad);
    let o = llmbound(d.path())
        .env("HF_ENDPOINT", &srv.base)
        .args(["report", "--model-dir", "o/bad"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("byte 0") && err.contains("10000000000"),
        "{err}"
    );
}

#[test]
fn models_lists_mlx_folders_of_the_hub_cache_and_lm_studio() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    // A hub-cache repository with both a GGUF and an MLX model, and an LM Studio MLX model.
    let snap = d.path().join("hub/models--o--both/snapshots/abc123");
    fs::create_dir_all(&snap).unwrap();
    rebuild(&art, &snap);
    let glen = fixtures::tiny("Tiny", 4)
        .write_file(&snap.join("tiny-Q4_K_M.gguf"), Data::Zeros)
        .unwrap();
    let lms = d.path().join(".lmstudio/models/mlx-community/llama-q4");
    fs::create_dir_all(&lms).unwrap();
    rebuild(&art, &lms);
    // A folder of safetensors without config.json is not a model MLX-LM loads.
    let stray = d.path().join(".lmstudio/models/other/no-config");
    fs::create_dir_all(&stray).unwrap();
    fs::write(stray.join("model.safetensors"), b"").unwrap();
    let (out, _) = run_ok(
        llmbound(d.path())
            .env("HF_HUB_CACHE", d.path().join("hub"))
            .env("OLLAMA_MODELS", d.path().join("no-ollama"))
            .env("LLAMA_CACHE", d.path().join("no-llama-cache"))
            .args(["models", "--context", "1000", "--format", "json"]),
    );
    let j = json(&out);
    let models = j["models"].as_array().unwrap();
    let find = |name: &str, runtime: &str| {
        models
            .iter()
            .find(|m| m["name"] == name && m["runtime"] == runtime)
            .unwrap_or_else(|| panic!("no {name} for {runtime} in {out}"))
    };
    let g = find("o/both/tiny-Q4_K_M.gguf", "llama.cpp");
    assert_eq!(g["file_bytes"], glen);
    let m = find("o/both", "MLX-LM");
    assert_eq!(m["store"], "hf-cache");
    assert_eq!(m["file_bytes"], art["file_bytes"]);
    assert_eq!(m["architecture"], "llama");
    assert_eq!(m["fits"], true);
    assert_eq!(m["decode_ceiling_is_upper_bound"], true);
    assert_eq!(m["error"], Value::Null);
    let l = find("mlx-community/llama-q4", "MLX-LM");
    assert_eq!(l["store"], "lm-studio");
    assert_eq!(l["file_bytes"], art["file_bytes"]);
    assert_eq!(l["max_context_tokens"], 16384);
    assert_eq!(models.len(), 3, "{out}");
    // The text table marks the MLX-LM rows.
    let (text, _) = run_ok(
        llmbound(d.path())
            .env("HF_HUB_CACHE", d.path().join("hub"))
            .env("OLLAMA_MODELS", d.path().join("no-ollama"))
            .env("LLAMA_CACHE", d.path().join("no-llama-cache"))
            .args(["models", "--context", "1000"]),
    );
    assert!(text.contains("o/both [MLX-LM]"), "{text}");
    assert!(text.contains("mlx-community/llama-q4 [MLX-LM]"), "{text}");
}

#[test]
fn a_repository_with_both_shows_both_runtimes() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("local");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let gguf = d.path().join("tiny-Q4_K_M.gguf");
    fixtures::tiny("Tiny", 4)
        .write_file(&gguf, Data::Zeros)
        .unwrap();
    let srv = server::Server::start();
    srv.add_file("o/both/tiny-Q4_K_M.gguf", &gguf);
    srv.add_file("o/both/model.safetensors", &dir.join("model.safetensors"));
    srv.add_file("o/both/config.json", &dir.join("config.json"));
    // Over HTTP: `owner/repo` reads the GGUF of the default quant and the safetensors model.
    let (out, err) = run_ok(
        llmbound(d.path())
            .env("HF_ENDPOINT", &srv.base)
            .args(["report", "--model-dir", "o/both", "--gguf", "o/both"])
            .args(["--context", "1000", "--format", "json"]),
    );
    let j = json(&out);
    let glen = fs::metadata(&gguf).unwrap().len();
    assert_eq!(
        j["side_by_side"]["llama_cpp"]["weights_bytes"], glen,
        "{err}"
    );
    assert_eq!(
        j["side_by_side"]["mlx_lm"]["weights_bytes"],
        art["file_bytes"]
    );
    assert_eq!(j["side_by_side"]["mlx_lm"]["cache_bytes"], 2_097_152);
    assert!(
        j["side_by_side"]["llama_cpp_command"]
            .as_str()
            .unwrap()
            .contains("-hf o/both"),
        "{out}"
    );
    // An opening with both (what `o/both` gives the workspace): llama.cpp's figures first,
    // MLX-LM's beside them, switchable.
    let mut o = llmbound::workspace::open::read(&gguf, llmbound::workspace::Rows::Totals).unwrap();
    o.mlx = Some(std::sync::Arc::new(
        llmbound::safetensors::plan::MlxArtifact::read(&dir).unwrap(),
    ));
    assert!(!o.is_mlx_only());
    let opts = ScenarioOptions {
        context: Some(1000),
        ..Default::default()
    };
    let mut ws = Workspace::new(Catalog::load_with(Some(d.path().join("config"))), &opts).unwrap();
    ws.open(&o).unwrap();
    assert_eq!(ws.runtime(), Runtime::LlamaCpp);
    assert_eq!(ws.runtimes(), vec![Runtime::LlamaCpp, Runtime::MlxLm]);
    assert_eq!(ws.report().artifact.bytes, glen);
    assert_eq!(
        ws.mlx_plan()
            .unwrap()
            .memory
            .as_ref()
            .unwrap()
            .cache
            .bytes(),
        mlx_cache_bytes(&art, 1000)
    );
    ws.apply(Edit::Runtime(Runtime::MlxLm)).unwrap();
    assert_eq!(ws.runtime(), Runtime::MlxLm);
    ws.apply(Edit::Runtime(Runtime::LlamaCpp)).unwrap();
    assert_eq!(ws.runtime(), Runtime::LlamaCpp);
    // Switched to MLX-LM (the one Edit the explorer's runtime row makes), the Bounds pane's
    // lines put llama.cpp's figures of the same repository beside MLX-LM's.
    let lines = llmbound::mlx_report::explorer_lines(
        ws.mlx().unwrap(),
        ws.mlx_plan().unwrap(),
        &ws.mlx_machine().unwrap(),
        Some(&mlx::llama_cpp_figures(ws.report())),
    );
    let text = lines.join("\n");
    assert!(text.contains("llama.cpp also applies"), "{text}");
    let row = lines
        .iter()
        .find(|l| l.starts_with("W (files)"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains(&format!("{} B", group(fs::metadata(&gguf).unwrap().len())))
            && row.contains("1,636,914 B"),
        "{row}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("largest context ")),
        "{text}"
    );
}

fn group(n: u64) -> String {
    llmbound::core::units::group_digits(n as u128)
}

/// Issue 18: after a GGUF, opening an MLX model of any architecture MLX-LM ships shows that
/// model: its files as W (no false "PARTIAL DOWNLOAD" or size against the previous model's
/// W), its shape where core holds it, else its config.json figures marked as MLX-LM's only;
/// never the previous model's name or rows.
#[test]
fn opening_any_mlx_architecture_shows_that_model() {
    let d = tempfile::tempdir().unwrap();
    let gguf = d.path().join("zyxwtiny.gguf");
    fixtures::tiny("Tiny", 4)
        .write_file(&gguf, Data::Zeros)
        .unwrap();
    let opts = ScenarioOptions {
        gguf: Some(gguf.clone()),
        context: Some(1000),
        ..Default::default()
    };
    let cat = || Catalog::load_with(Some(d.path().join("config")));
    let mut first = App::new(cat(), &opts).unwrap();
    first.set_hash_cache(None);
    assert!(draw(&first, 120, 36).to_lowercase().contains("zyxwtiny"));
    let old_w = first.ws().report().artifact.bytes;
    let mut opened = 0;
    for name in [
        "llama_gqa.json",
        "gemma3_swa.json",
        "qwen3_moe.json",
        "deepseek_v2_mla.json",
        "deepseek_v3_mla.json",
        "qwen3_next_hybrid.json",
        "llama_swa.json",
    ] {
        let fx = fixture(name);
        let art = &fx["artifacts"][0];
        let dir = d.path().join(name.trim_end_matches(".json"));
        fs::create_dir(&dir).unwrap();
        rebuild(art, &dir);
        let w = art["file_bytes"].as_u64().unwrap();
        let mut app = App::new(cat(), &opts).unwrap();
        app.set_hash_cache(None);
        app.update(Action::OpenPath(dir.clone()));
        app.wait_for_jobs(Duration::from_secs(30));
        if app.ws().mlx().is_none() {
            // MLX-LM's layout of this architecture is refused with its reason.
            let m = app
                .message()
                .unwrap_or_else(|| panic!("{name}: no message"));
            assert!(m.error, "{name}: {m:?}");
            println!("skipped {name}: {}", m.text);
            continue;
        }
        opened += 1;
        assert_eq!(app.ws().runtime(), Runtime::MlxLm, "{name}");
        assert_ne!(
            w, old_w,
            "{name}: the fixture must differ from the GGUF's W"
        );
        assert_eq!(app.ws().artifact_figures().bytes, w, "{name}");
        let shaped = app.ws().mlx_unshaped().is_none();
        for (cols, rows) in [(80, 24), (120, 36)] {
            let s = draw(&app, cols, rows);
            assert!(
                !s.contains("PARTIAL DOWNLOAD"),
                "{name} {cols}×{rows}:\n{s}"
            );
            assert!(
                s.contains(&group(w)),
                "{name} {cols}×{rows}: W {w} not shown:\n{s}"
            );
            assert!(
                !s.contains(&group(old_w)),
                "{name} {cols}×{rows}: the previous W shown:\n{s}"
            );
            assert!(s.contains("(MLX-LM)"), "{name} {cols}×{rows}:\n{s}");
            assert!(
                !s.to_lowercase().contains("zyxwtiny"),
                "{name} {cols}×{rows}: the previous model shown:\n{s}"
            );
            // At 80×24 the left column is one pane at a time (Cache & run first).
            if !shaped && cols == 120 {
                assert!(
                    s.contains("shape is MLX-LM's only"),
                    "{name} {cols}×{rows}:\n{s}"
                );
            }
        }
        if shaped {
            // The shape is the file's: its layer count and W are this model's.
            assert_eq!(app.ws().report().artifact.bytes, w, "{name}");
            assert_eq!(
                app.ws().scenario().model.layers.len() as u64,
                art["config"]["num_hidden_layers"].as_u64().unwrap(),
                "{name}"
            );
        }
    }
    assert!(opened >= 5, "only {opened} MLX fixtures opened");
}

/// Issue 18: the scenario's name keeps "(MLX-LM)" and the model open after an edit, whether
/// core holds the model's shape (llama) or not (gemma3's sliding window).
#[test]
fn the_mlx_name_survives_edits() {
    let d = tempfile::tempdir().unwrap();
    for name in ["llama_gqa.json", "gemma3_swa.json"] {
        let dir = d.path().join(name.trim_end_matches(".json"));
        fs::create_dir(&dir).unwrap();
        rebuild(&fixture(name)["artifacts"][0], &dir);
        let opts = ScenarioOptions {
            gguf: Some(dir.clone()),
            context: Some(1000),
            ..Default::default()
        };
        let mut ws =
            Workspace::new(Catalog::load_with(Some(d.path().join("config"))), &opts).unwrap();
        let opened = ws.scenario().name.clone();
        assert!(opened.contains("(MLX-LM)"), "{name}: {opened}");
        ws.apply(Edit::Context(5000)).unwrap();
        assert_eq!(ws.scenario().name, opened, "{name}");
        ws.apply(Edit::Sequences(2)).unwrap();
        assert_eq!(ws.scenario().name, opened, "{name}");
    }
}

/// Issue 18: `report --gguf DIR` on a safetensors model alone is MLX-LM's report of it, the
/// same bytes as `report --model-dir DIR`, rather than an error pointing at `--model-dir`.
#[test]
fn report_gguf_on_an_mlx_folder_is_its_mlx_report() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("gemma3");
    fs::create_dir(&dir).unwrap();
    rebuild(&fixture("gemma3_swa.json")["artifacts"][0], &dir);
    let run = |flag: &str| {
        run_ok(llmbound(d.path()).args([
            "report",
            flag,
            dir.to_str().unwrap(),
            "--context",
            "1000",
            "--format",
            "json",
        ]))
        .0
    };
    let by_gguf = run("--gguf");
    assert_eq!(json(&by_gguf)["runtime"], "mlx-lm");
    assert_eq!(by_gguf, run("--model-dir"));
}

/// Issue 18: a local folder holding a GGUF beside the safetensors model opens with both
/// runtimes (the workspace and `report --gguf DIR`, which puts them side by side, as
/// `--model-dir DIR --gguf DIR` does).
#[test]
fn a_local_folder_with_both_opens_with_both_runtimes() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("both");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let gguf = dir.join("tiny-Q4_K_M.gguf");
    fixtures::tiny("Tiny", 4)
        .write_file(&gguf, Data::Zeros)
        .unwrap();
    let opts = ScenarioOptions {
        gguf: Some(dir.clone()),
        context: Some(1000),
        ..Default::default()
    };
    let ws = Workspace::new(Catalog::load_with(Some(d.path().join("config"))), &opts).unwrap();
    assert_eq!(ws.runtimes(), vec![Runtime::LlamaCpp, Runtime::MlxLm]);
    assert_eq!(
        ws.report().artifact.bytes,
        fs::metadata(&gguf).unwrap().len()
    );
    let run = |args: &[&str]| {
        run_ok(llmbound(d.path()).arg("report").args(args).args([
            "--context",
            "1000",
            "--format",
            "json",
        ]))
        .0
    };
    let p = dir.to_str().unwrap();
    let by_gguf = run(&["--gguf", p]);
    let j = json(&by_gguf);
    assert_eq!(
        j["side_by_side"]["llama_cpp"]["weights_bytes"],
        fs::metadata(&gguf).unwrap().len()
    );
    assert_eq!(
        j["side_by_side"]["mlx_lm"]["weights_bytes"],
        art["file_bytes"]
    );
    assert_eq!(by_gguf, run(&["--model-dir", p, "--gguf", p]));
}

/// The explorer on an MLX folder (relative paths, so the screens are the same on every
/// machine): the safetensors model alone, and a folder with a GGUF beside it, first with
/// llama.cpp's figures, then switched to MLX-LM's with the runtime row.
#[test]
fn the_explorer_on_an_mlx_folder_at_80x24_and_120x36() {
    use llmbound::core::edit::Setting;
    use llmbound::tui::fields::Field;
    let base = Path::new("target/mlx-explorer");
    let only = base.join("llama-q4");
    let both = base.join("both");
    for d in [&only, &both] {
        fs::create_dir_all(d).unwrap();
        rebuild(&llama_q4(), d);
    }
    fixtures::tiny("Tiny", 4)
        .write_file(&both.join("tiny-Q4_K_M.gguf"), Data::Zeros)
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let app_on = |dir: &Path| {
        let mut app = App::new(
            Catalog::load_with(Some(home.path().join("config"))),
            &ScenarioOptions {
                gguf: Some(dir.to_path_buf()),
                context: Some(1000),
                ..Default::default()
            },
        )
        .unwrap();
        app.set_hash_cache(None);
        // As the binary starts: the start-up argument is opened on a worker (the Artifact
        // pane's file view).
        app.update(Action::OpenPath(dir.to_path_buf()));
        app.wait_for_jobs(Duration::from_secs(30));
        assert!(
            app.message().is_some_and(|m| !m.error),
            "{:?}",
            app.message()
        );
        app
    };
    let mut app = app_on(&only);
    for (w, h) in [(80, 24), (120, 36)] {
        app.update(Action::Resize(w, h));
        let s = draw(&app, w, h);
        // MLX-LM's rows, never llama.cpp's, and no runtime switch (one runtime applies).
        for row in ["kv bits", "kv group", "kv q start", "max kv"] {
            assert!(s.contains(row), "{w}×{h}: {row}\n{s}");
        }
        for row in ["K cache", "flash attn", "n_ubatch", "runtime    "] {
            assert!(!s.contains(row), "{w}×{h}: {row}\n{s}");
        }
        assert!(s.contains("Bounds · MLX-LM"), "{w}×{h}\n{s}");
        insta::assert_snapshot!(format!("mlx_explorer_mlx_only_{w}x{h}"), s);
    }
    // `o` says what it opens.
    app.update(Action::Open);
    let s = draw(&app, 120, 36);
    assert!(
        s.contains("open (GGUF, safetensors, MLX dir, URL, owner/repo, ollama:)"),
        "{s}"
    );
    let mut app = app_on(&both);
    for (w, h) in [(80, 24), (120, 36)] {
        app.update(Action::Resize(w, h));
        let s = draw(&app, w, h);
        assert!(s.contains("runtime    llama.cpp"), "{w}×{h}\n{s}");
        assert!(s.contains("Bounds · llama.cpp"), "{w}×{h}\n{s}");
        insta::assert_snapshot!(format!("mlx_explorer_both_llama_cpp_{w}x{h}"), s);
    }
    app.set_field(Field::Setting(Setting::Runtime), "MLX-LM");
    assert!(
        app.message().is_none_or(|m| !m.error),
        "{:?}",
        app.message()
    );
    app.set_field(Field::Setting(Setting::KvBits), "8");
    app.set_field(Field::Setting(Setting::QuantizedKvStart), "512");
    for (w, h) in [(80, 24), (120, 36)] {
        app.update(Action::Resize(w, h));
        let s = draw(&app, w, h);
        assert!(s.contains("runtime    MLX-LM"), "{w}×{h}\n{s}");
        assert!(!s.contains("K cache"), "{w}×{h}\n{s}");
        insta::assert_snapshot!(format!("mlx_explorer_both_mlx_lm_{w}x{h}"), s);
    }
    let s = draw(&app, 120, 36);
    assert!(s.contains("QuantizedKVCache"), "{s}");
    // N: MLX-LM's largest context, not llama.cpp's.
    let largest = app.ws().mlx_plan().unwrap().largest_context.unwrap();
    assert_ne!(
        Some(largest),
        app.ws().report().capacity.max_context_tokens,
        "the two runtimes' figures differ here"
    );
    app.update(Action::MaxContext);
    assert_eq!(app.ws().scenario().cache.context, largest);
    assert!(
        app.message()
            .is_some_and(|m| m.text.contains("the largest MLX-LM holds")),
        "{:?}",
        app.message()
    );
    // The launch line carries the settings (wrapped at the pane's edge).
    assert!(s.contains("--kv-bits"), "{s}");
    assert!(
        s.contains("8 --kv-group-size 64 --quantized-kv-start 512"),
        "{s}"
    );
}

/// Issue 18: a folder holding several GGUF models (not the shards of one) is never opened
/// as one of them: `report --gguf DIR`, `inspect DIR` and the explorer's `o` say which
/// there are and how to open one, in the same line. Beside a safetensors model, the folder
/// opens for MLX-LM and a note names the GGUFs.
#[test]
fn a_folder_with_several_ggufs_names_them_and_takes_none() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("two");
    fs::create_dir(&dir).unwrap();
    for name in ["a-Q8_0.gguf", "b-Q4_K_M.gguf", "mmproj-f16.gguf"] {
        fixtures::tiny("Tiny", 4)
            .write_file(&dir.join(name), Data::Zeros)
            .unwrap();
    }
    // The shards of one split model count once.
    for name in ["c-00001-of-00002.gguf", "c-00002-of-00002.gguf"] {
        fs::write(dir.join(name), b"").unwrap();
    }
    let p = dir.to_str().unwrap();
    let line = |args: &[&str]| {
        let o = llmbound(d.path()).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    };
    let want = format!(
        "{p} holds 3 GGUF models, not one: a-Q8_0.gguf, b-Q4_K_M.gguf, c-00001-of-00002.gguf; open one of them by its path (e.g. {p}/a-Q8_0.gguf)"
    );
    for args in [vec!["report", "--gguf", p], vec!["inspect", p]] {
        let e = line(&args);
        assert!(e.contains(&want), "{args:?}: {e}");
    }
    let mut app = App::new(
        Catalog::load_with(Some(d.path().join("config"))),
        &ScenarioOptions::default(),
    )
    .unwrap();
    let before = app.ws().scenario().clone();
    app.update(Action::OpenPath(dir.clone()));
    app.wait_for_jobs(Duration::from_secs(30));
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.contains(&want), "{m:?}");
    assert_eq!(app.ws().scenario(), &before, "nothing was taken");
    // One GGUF in a folder is that model.
    let one = d.path().join("one");
    fs::create_dir(&one).unwrap();
    fs::rename(dir.join("a-Q8_0.gguf"), one.join("a-Q8_0.gguf")).unwrap();
    let (out, _) = run_ok(llmbound(d.path()).args(["inspect", one.to_str().unwrap()]));
    assert!(out.contains("Tiny"), "{out}");
    // Beside a safetensors model: MLX-LM's report, and a note naming the GGUFs.
    rebuild(&llama_q4(), &dir);
    let (out, err) = run_ok(llmbound(d.path()).args(["report", "--gguf", p, "-c", "1000"]));
    assert!(out.contains("MLX-LM plan"), "{out}");
    assert!(
        err.contains("holds 2 GGUF models, not one: b-Q4_K_M.gguf, c-00001-of-00002.gguf"),
        "{err}"
    );
}

/// Split `art`'s safetensors file into two shards (the first half of its tensors by offset, then
/// the rest, each repacked from offset 0) with `model.safetensors.index.json`, as MLX saves a
/// model larger than its shard size. Returns the shard and index files' bytes by name.
fn sharded(art: &Value) -> Vec<(String, Vec<u8>)> {
    let header: serde_json::Map<String, Value> =
        serde_json::from_str(art["header"].as_str().unwrap()).unwrap();
    let meta = header.get("__metadata__").cloned();
    let mut tensors: Vec<(String, Value)> = header
        .into_iter()
        .filter(|(k, _)| k != "__metadata__")
        .collect();
    tensors.sort_by_key(|(_, t)| t["data_offsets"][0].as_u64().unwrap());
    let half = tensors.len() / 2;
    let names = [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ];
    let mut files = Vec::new();
    let mut weight_map = serde_json::Map::new();
    let mut total = 0;
    for (i, part) in [&tensors[..half], &tensors[half..]].into_iter().enumerate() {
        let mut h = serde_json::Map::new();
        if let Some(m) = &meta {
            h.insert("__metadata__".into(), m.clone());
        }
        let mut at = 0u64;
        for (name, t) in part {
            let off = &t["data_offsets"];
            let n = off[1].as_u64().unwrap() - off[0].as_u64().unwrap();
            let mut t = t.clone();
            t["data_offsets"] = serde_json::json!([at, at + n]);
            at += n;
            h.insert(name.clone(), t);
            weight_map.insert(name.clone(), Value::from(names[i]));
        }
        total += at;
        let text = serde_json::to_string(&Value::Object(h)).unwrap();
        let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(text.as_bytes());
        bytes.resize(bytes.len() + at as usize, 0);
        files.push((names[i].to_string(), bytes));
    }
    let index = serde_json::json!({"metadata": {"total_size": total}, "weight_map": weight_map});
    files.push((
        "model.safetensors.index.json".into(),
        serde_json::to_vec(&index).unwrap(),
    ));
    files
}

/// A sharded MLX repository (`model.safetensors.index.json` and two shards) over HTTP gives
/// the figures of the same folder on disk: W the sum of the shard files, the tensors of the
/// single-file model, MLX's cache; only the index, config.json and each shard's header cross
/// the network. The explorer opens a `.safetensors` URL as it opens a GGUF URL: MLX-LM's plan
/// in the Bounds pane, the file as W, its tensors in the tensor view.
#[test]
fn a_sharded_repository_and_a_safetensors_url_open_like_a_gguf() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("sharded");
    fs::create_dir(&dir).unwrap();
    let files = sharded(&art);
    let (_, _, config) = files_of(&art);
    let srv = server::Server::start();
    for (name, bytes) in &files {
        fs::write(dir.join(name), bytes).unwrap();
        srv.add(&format!("o/sharded/{name}"), bytes.clone());
    }
    fs::write(dir.join("config.json"), &config).unwrap();
    srv.add("o/sharded/config.json", config.clone().into_bytes());
    let single = d.path().join("single");
    fs::create_dir(&single).unwrap();
    rebuild(&art, &single);
    srv.add_file("o/mlx/model.safetensors", &single.join("model.safetensors"));
    srv.add_file("o/mlx/config.json", &single.join("config.json"));

    let report = |name: &str| {
        let (out, err) = run_ok(
            llmbound(d.path())
                .env("HF_ENDPOINT", &srv.base)
                .args(["report", "--model-dir", name, "--context", "1000"])
                .args(["--format", "json"]),
        );
        (json(&out), err)
    };
    let shard_bytes: u64 = files
        .iter()
        .filter(|(n, _)| n.ends_with(".safetensors"))
        .map(|(_, b)| b.len() as u64)
        .sum();
    let (local, _) = report(dir.to_str().unwrap());
    assert_eq!(local["weights"]["bytes"], shard_bytes);
    assert_eq!(local["cache"]["bytes"], mlx_cache_bytes(&art, 1000));
    let (one, _) = report(single.to_str().unwrap());
    assert_eq!(local["weights"]["encodings"], one["weights"]["encodings"]);
    assert_eq!(
        local["weights"]["read_bytes_per_token"],
        one["weights"]["read_bytes_per_token"]
    );
    let (remote, err) = report("o/sharded");
    for k in ["weights", "cache", "largest_context", "decode"] {
        assert_eq!(remote[k], local[k], "{k}");
    }
    assert!(
        err.contains("bytes transferred") && !err.contains("error"),
        "{err}"
    );
    // The headers, not the 1.6 MB of tensor data.
    assert!(srv.sent() < 64 * 1024, "{} bytes sent", srv.sent());

    // The explorer on a `.safetensors` URL, through the worker that opens a GGUF URL.
    let url = format!("{}/o/mlx/resolve/main/model.safetensors", srv.base);
    let home = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(home.path().join("config"))),
        &ScenarioOptions {
            context: Some(1000),
            ..Default::default()
        },
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::OpenPath(std::path::PathBuf::from(&url)));
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    let l = app
        .file()
        .loaded
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", app.message()));
    assert_eq!(l.total_bytes, art["file_bytes"].as_u64().unwrap());
    assert!(l.tensors.iter().any(|t| t.type_name == "affine q4 g64"));
    assert_eq!(app.ws().runtime(), Runtime::MlxLm);
    assert_eq!(
        app.ws().report().artifact.bytes,
        art["file_bytes"].as_u64().unwrap()
    );
    let s = draw(&app, 120, 36);
    assert!(s.contains("Bounds · MLX-LM"), "{s}");
    assert!(s.contains("cache at 1,000: 2,097,152 B"), "{s}");
    // The Artifact pane keeps each encoding's b/w; the tensor view names MLX's encodings in
    // full, even at 80 columns (it cut them to "affine").
    assert!(s.contains("q4 g64     30   1.547 MiB  99.7%   4.50"), "{s}");
    app.update(Action::Tensors);
    app.update(Action::Resize(80, 24));
    let s = draw(&app, 80, 24);
    assert!(s.contains("affine q4 g64"), "{s}");
}

/// `llmbound --gguf DIR --runtime mlx-lm --kv-bits 4` on a folder with a GGUF and an MLX
/// model: the explorer builds its scenario before the folder is open (on a worker), so the
/// flags that need the model are applied once it is (they were refused at start-up: "no
/// safetensors model is open"). The Artifact pane then says its GGUF is llama.cpp's.
#[test]
fn the_explorer_applies_runtime_and_mlx_flags_once_its_start_up_folder_is_open() {
    let art = llama_q4();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("both");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    fixtures::tiny("Tiny", 4)
        .write_file(&dir.join("tiny-Q4_K_M.gguf"), Data::Zeros)
        .unwrap();
    let opts = ScenarioOptions {
        context: Some(8000),
        runtime: Some("mlx-lm".into()),
        kv_bits: Some(4),
        ..Default::default()
    };
    // As `tui::event::run` starts: the scenario without them, then the folder opened.
    let (now, later) = opts.split_after_open().unwrap();
    assert_eq!(later.len(), 2);
    assert!(now.runtime.is_none() && now.kv_bits.is_none());
    let mut app = App::new(Catalog::load_with(Some(d.path().join("config"))), &now).unwrap();
    app.set_hash_cache(None);
    app.apply_after_open(later);
    app.update(Action::OpenPath(dir.clone()));
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(
        app.message().is_some_and(|m| !m.error),
        "{:?}",
        app.message()
    );
    assert_eq!(app.ws().runtime(), Runtime::MlxLm);
    assert_eq!(app.ws().scenario().mlx_lm.kv_bits, Some(4));
    let s = draw(&app, 120, 36);
    assert!(s.contains("Artifact · llama.cpp's GGUF"), "{s}");
    assert!(s.contains("(4 × QuantizedKVCache)"), "{s}");
    assert!(s.contains("--kv-bits 4"), "{s}");
    assert_eq!(app.ws().runtimes(), vec![Runtime::LlamaCpp, Runtime::MlxLm]);
    // A second open takes no start-up flags: the folder opens under llama.cpp, and the
    // Artifact pane is plainly the artifact again.
    app.update(Action::OpenPath(dir.clone()));
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.ws().runtime(), Runtime::LlamaCpp);
    let s = draw(&app, 120, 36);
    assert!(s.contains("╭ Artifact ─"), "{s}");
    assert!(!s.contains("llama.cpp's GGUF"), "{s}");
}

/// A model of the Hugging Face cache is named by its repository, not by its snapshot's
/// revision hash (the explorer's title and the scenario's name showed "abc123 (MLX-LM)").
#[test]
fn a_hub_cache_snapshot_is_named_by_its_repository() {
    use llmbound::workspace::open::mlx_path_name;
    let name = |p: &str| mlx_path_name(Path::new(p));
    assert_eq!(
        name("/h/.cache/huggingface/hub/models--mlx-community--Qwen3-8B-4bit/snapshots/abc123"),
        "mlx-community/Qwen3-8B-4bit"
    );
    assert_eq!(
        name("/h/hub/models--o--both/snapshots/abc123/mlx"),
        "o/both/mlx"
    );
    assert_eq!(name("/h/models/llama-q4"), "llama-q4");
    assert_eq!(name("/h/models--o--r/notes"), "notes");
}

/// MLX's refusal of a quantized cache on a head dimension the group does not divide: the
/// report gives MLX's own message, says which group size divides it, and exits 1; with that
/// group size the run is planned.
#[test]
fn a_refused_group_size_names_the_one_that_divides_the_head() {
    let fx = fixture("llama_hd32.json");
    let art = fx["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["quant"] == "q4g64")
        .unwrap()
        .clone();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("hd32");
    fs::create_dir(&dir).unwrap();
    rebuild(&art, &dir);
    let o = llmbound(d.path())
        .args(["report", "--model-dir"])
        .arg(&dir)
        .args(["-c", "6000", "--kv-bits", "8"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("divisible by the quantization group size 64")
            && out.contains("(--kv-group-size 32 divides the head dimension 32)"),
        "{out}"
    );
    let (out, _) = run_ok(
        llmbound(d.path())
            .args(["report", "--model-dir"])
            .arg(&dir)
            .args(["-c", "6000", "--kv-bits", "8", "--kv-group-size", "32"]),
    );
    assert!(out.contains("(2 × QuantizedKVCache)"), "{out}");
}
