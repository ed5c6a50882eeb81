//! Ollama's plan (issue 22 item 4): the Modelfile's parameters from a store the test writes,
//! Ollama's default context by total VRAM, its clamps, and the parameters that reproduce a plan.

use std::path::Path;

#[path = "support/fixtures.rs"]
mod fixtures;

use llmbound::core::placement::GpuLayers;
use llmbound::ollama::{
    ContextSource, ModelfileParams, OllamaError, OllamaSettings, default_context, plan,
    read_params, reproduce, resolve_in, total_vram,
};

const GIB: u64 = 1 << 30;
const MODEL: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// A params digest per model name (its bytes in hex, padded to 64 digits).
fn params_digest(name: &str) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{hex:0<64}")
}

/// A store with `library/<name>:latest` whose manifest names a model blob and, when given, a
/// params layer with that JSON.
fn store(root: &Path, name: &str, params: Option<&str>) {
    let blobs = root.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::write(blobs.join(format!("sha256-{MODEL}")), b"GGUF").unwrap();
    let mut layers = vec![format!(
        r#"{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{MODEL}","size":4}}"#
    )];
    if let Some(p) = params {
        let d = params_digest(name);
        std::fs::write(blobs.join(format!("sha256-{d}")), p).unwrap();
        layers.push(format!(
            r#"{{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:{d}","size":{}}}"#,
            p.len()
        ));
    }
    let dir = root.join("manifests/registry.ollama.ai/library").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("latest"),
        format!(r#"{{"schemaVersion":2,"layers":[{}]}}"#, layers.join(",")),
    )
    .unwrap();
}

fn settings(total_vram: u64) -> OllamaSettings {
    OllamaSettings {
        total_vram,
        context_length: None,
        num_parallel: 1,
        vision: false,
        n_ctx_train: 262_144,
    }
}

#[test]
fn default_context_by_total_vram() {
    assert_eq!(default_context(47 * GIB), 262_144);
    assert_eq!(default_context(47 * GIB - 1), 32_768);
    assert_eq!(default_context(23 * GIB), 32_768);
    assert_eq!(default_context(23 * GIB - 1), 4096);
    assert_eq!(default_context(0), 4096);
    // two 24 GiB cards: 48 GiB; with 1 GiB of OLLAMA_GPU_OVERHEAD each, 46 GiB
    assert_eq!(total_vram(&[24 * GIB, 24 * GIB], 0), 48 * GIB);
    assert_eq!(
        default_context(total_vram(&[24 * GIB, 24 * GIB], 0)),
        262_144
    );
    assert_eq!(
        default_context(total_vram(&[24 * GIB, 24 * GIB], GIB)),
        32_768
    );
    // an overhead above a card's memory counts that card as none
    assert_eq!(total_vram(&[8 * GIB], 9 * GIB), 0);
}

#[test]
fn modelfile_parameters_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    store(
        dir.path(),
        "tuned",
        Some(r#"{"num_ctx":8192,"num_gpu":20,"stop":["<|im_end|>"],"temperature":0.6}"#),
    );
    store(dir.path(), "plain", None);
    let m = resolve_in(dir.path(), "tuned").unwrap();
    assert!(m.params.is_some());
    let p = read_params(&m).unwrap();
    assert_eq!(
        p,
        ModelfileParams {
            num_ctx: Some(8192),
            num_gpu: Some(20)
        }
    );
    // the Modelfile wins over the VRAM default; -c is num_ctx × parallel requests
    let s = OllamaSettings {
        num_parallel: 2,
        ..settings(48 * GIB)
    };
    let pl = plan(&p, &s);
    assert_eq!(pl.num_ctx, 8192);
    assert_eq!(pl.context_source, ContextSource::Modelfile);
    assert_eq!(pl.llama_ctx, 16_384);
    assert_eq!(pl.gpu_layers, GpuLayers::Count(20));
    assert_eq!(
        reproduce(pl.llama_ctx, pl.parallel, pl.gpu_layers),
        vec![
            "/set parameter num_ctx 8192".to_string(),
            "/set parameter num_gpu 20".to_string()
        ]
    );
    // no params layer: nothing set, the default by VRAM, -ngl left to -fit
    let m = resolve_in(dir.path(), "plain").unwrap();
    let p = read_params(&m).unwrap();
    assert_eq!(p, ModelfileParams::default());
    let pl = plan(&p, &settings(24 * GIB));
    assert_eq!(
        (pl.num_ctx, pl.context_source, pl.gpu_layers),
        (32_768, ContextSource::VramDefault, GpuLayers::Auto)
    );
    assert_eq!(
        reproduce(pl.llama_ctx, pl.parallel, pl.gpu_layers),
        vec!["/set parameter num_ctx 32768".to_string()]
    );
}

#[test]
fn ollama_clamps_the_context() {
    let none = ModelfileParams::default();
    // at most the trained context
    let s = OllamaSettings {
        n_ctx_train: 40_960,
        ..settings(80 * GIB)
    };
    assert_eq!(plan(&none, &s).num_ctx, 40_960);
    // OLLAMA_CONTEXT_LENGTH over the default, the Modelfile over both
    let s = OllamaSettings {
        context_length: Some(16_384),
        ..settings(8 * GIB)
    };
    let pl = plan(&none, &s);
    assert_eq!(
        (pl.num_ctx, pl.context_source),
        (16_384, ContextSource::Environment)
    );
    let mf = ModelfileParams {
        num_ctx: Some(2),
        num_gpu: Some(0),
    };
    let pl = plan(&mf, &s);
    assert_eq!(
        (pl.num_ctx, pl.context_source),
        (4, ContextSource::Modelfile)
    );
    assert_eq!(pl.gpu_layers, GpuLayers::Count(0));
    // a projector: at least 2048; num_gpu -1 leaves -ngl to -fit
    let mf = ModelfileParams {
        num_ctx: Some(512),
        num_gpu: Some(-1),
    };
    let pl = plan(&mf, &OllamaSettings { vision: true, ..s });
    assert_eq!((pl.num_ctx, pl.gpu_layers), (2048, GpuLayers::Auto));
}

#[test]
fn bad_params_layers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), "words", Some(r#"{"num_ctx":"big"}"#));
    store(dir.path(), "frac", Some(r#"{"num_gpu":1.5}"#));
    store(dir.path(), "list", Some(r#"[1,2]"#));
    for (name, says) in [
        ("words", "num_ctx is \"big\", not a whole number"),
        ("frac", "num_gpu is 1.5, not a whole number"),
        ("list", "not a JSON object"),
    ] {
        let m = resolve_in(dir.path(), name).unwrap();
        let e = read_params(&m).unwrap_err();
        assert!(matches!(e, OllamaError::BadParams { .. }), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    // a manifest naming a params blob that is missing
    store(dir.path(), "gone", Some("{}"));
    std::fs::remove_file(
        dir.path()
            .join(format!("blobs/sha256-{}", params_digest("gone"))),
    )
    .unwrap();
    let e = resolve_in(dir.path(), "gone").unwrap_err();
    assert!(matches!(e, OllamaError::MissingBlob { .. }), "{e}");
}

/// Ollama always passes `-c`: llama.cpp's `-fit` then keeps that context and fits the layers,
/// where without `-c` it would shrink the trained context instead.
#[test]
fn the_plan_is_llama_cpps_fit_at_ollamas_context() {
    use llmbound::core::placement::{
        Backend, ContextFigures, Device, FitSettings, PlacementModel, PlacementSettings, fit,
    };
    use llmbound::core::units::Bytes;
    // 8 layers of 512 MiB, a 64 MiB embedding and output, trained on 131,072 tokens; the
    // cache is 4 KiB per token per layer (512 MiB per layer at 131,072)
    let mut t: Vec<(String, u64)> = vec![("token_embd.weight".into(), 64 << 20)];
    for il in 0..8 {
        t.push((format!("blk.{il}.attn_q.weight"), 256 << 20));
        t.push((format!("blk.{il}.ffn_up.weight"), 256 << 20));
    }
    t.push(("output.weight".into(), 64 << 20));
    let m = PlacementModel::from_tensors(
        t.iter().map(|(n, b)| (n.as_str(), *b)),
        8,
        0,
        131_072,
        false,
    );
    let d = [Device {
        buffer_name: "CUDA0".into(),
        backend: Backend::Cuda,
        free: Bytes(8 * GIB),
        total: Bytes(8 * GIB),
        max_tensor: None,
    }];
    let ctx = |n: u32| ContextFigures {
        layer_bytes: vec![u64::from(n) * 4096; 8],
        ..Default::default()
    };
    // llama.cpp alone: -c unset, so -fit shrinks the context and keeps every layer
    let own = fit(
        &m,
        &d,
        &PlacementSettings::default(),
        &FitSettings::default(),
        &ctx,
    )
    .unwrap();
    assert!(own.n_ctx < 131_072, "{}", own.arguments());
    assert_eq!(own.placement.gpu_layers, 9, "{}", own.arguments());
    // Ollama with the Modelfile's num_ctx 131072 on this 8 GiB card: -c 131072, fewer layers
    let mf = ModelfileParams {
        num_ctx: Some(131_072),
        num_gpu: None,
    };
    let pl = plan(
        &mf,
        &OllamaSettings {
            n_ctx_train: 131_072,
            ..settings(8 * GIB)
        },
    );
    let (mut ps, mut fs) = (PlacementSettings::default(), FitSettings::default());
    pl.apply(&mut ps, &mut fs);
    let ol = fit(&m, &d, &ps, &fs, &ctx).unwrap();
    assert_eq!(ol.n_ctx, 131_072, "{}", ol.arguments());
    // 7 GiB after the margin: the output (64 MiB) and 6 layers of 1 GiB (weights and cache)
    assert_eq!(ol.placement.gpu_layers, 7, "{}", ol.arguments());
    // the VRAM default on 8 GiB (4096 tokens): every layer fits
    let pl = plan(&ModelfileParams::default(), &settings(8 * GIB));
    let (mut ps, mut fs) = (PlacementSettings::default(), FitSettings::default());
    pl.apply(&mut ps, &mut fs);
    let ol = fit(&m, &d, &ps, &fs, &ctx).unwrap();
    assert_eq!(
        (ol.n_ctx, ol.placement.gpu_layers),
        (4096, 9),
        "{}",
        ol.arguments()
    );
}

/// A store whose `library/<name>:latest` model blob is the tiny llama GGUF (trained on 8,192
/// tokens), with a params layer when given.
pub fn gguf_store(root: &Path, name: &str, params: Option<&str>) {
    store(root, name, params);
    fixtures::tiny("Tiny", 2)
        .write_file(
            &root.join("blobs").join(format!("sha256-{MODEL}")),
            llmbound::gguf::writer::Data::Zeros,
        )
        .unwrap();
}

fn report_json(store: &Path, args: &[&str]) -> serde_json::Value {
    let cfg = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"))
        .arg("report")
        .args(args)
        .args(["--format", "json"])
        .env("LLMBOUND_CONFIG_DIR", cfg.path())
        .env("OLLAMA_MODELS", store)
        .env_remove("OLLAMA_CONTEXT_LENGTH")
        .env_remove("OLLAMA_NUM_PARALLEL")
        .env_remove("OLLAMA_GPU_OVERHEAD")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `report --gguf ollama:NAME` runs at Ollama's plan: the context by total VRAM (a machine
/// without a GPU: 4,096), the Modelfile's num_ctx and num_gpu over it, the options over both;
/// the report shows the Ollama parameters that reproduce it.
#[test]
fn an_ollama_model_is_reported_at_ollamas_plan() {
    let dir = tempfile::tempdir().unwrap();
    gguf_store(dir.path(), "plain", None);
    gguf_store(dir.path(), "tuned", Some(r#"{"num_ctx":2048,"num_gpu":1}"#));
    // no GPU: total VRAM 0, Ollama's default 4,096 tokens
    let v = report_json(
        dir.path(),
        &[
            "--gguf",
            "ollama:plain",
            "--machine",
            "desktop-ddr5-cpu-only",
        ],
    );
    assert_eq!(v["settings"]["context"], 4096, "{}", v["settings"]);
    let o = &v["ollama"];
    assert_eq!(o["name"], "plain");
    assert_eq!(o["total_vram_bytes"], 0);
    assert_eq!(o["context_source"], "vram-default");
    assert_eq!(o["ollama_num_ctx"], 4096);
    assert_eq!(o["llama_ctx"], 4096);
    assert_eq!(o["gpu_layers"], "auto");
    assert_eq!(o["as_ollama_defaults"], true);
    assert_eq!(
        o["reproduce"],
        serde_json::json!(["/set parameter num_ctx 4096"])
    );
    // 24 GiB of VRAM: 32,768, clamped to the trained 8,192
    let v = report_json(
        dir.path(),
        &["--gguf", "ollama:plain", "--machine", "desktop-rtx-4090"],
    );
    assert_eq!(v["settings"]["context"], 8192);
    assert_eq!(v["ollama"]["total_vram_bytes"], 24u64 << 30);
    assert_eq!(v["ollama"]["ollama_num_ctx"], 8192);
    // the Modelfile: num_ctx 2048, num_gpu 1 (-ngl 1: the output layer only)
    let v = report_json(
        dir.path(),
        &["--gguf", "ollama:tuned", "--machine", "desktop-rtx-4090"],
    );
    assert_eq!(v["settings"]["context"], 2048);
    let o = &v["ollama"];
    assert_eq!(o["context_source"], "modelfile");
    assert_eq!(o["modelfile_num_gpu"], 1);
    assert_eq!(o["gpu_layers"], "1");
    assert_eq!(v["placement"]["gpu_layers"], 1, "{}", v["placement"]);
    assert_eq!(
        o["reproduce"],
        serde_json::json!(["/set parameter num_ctx 2048", "/set parameter num_gpu 1"])
    );
    // the options win, and the parameters follow them
    let v = report_json(
        dir.path(),
        &[
            "--gguf",
            "ollama:tuned",
            "--machine",
            "desktop-rtx-4090",
            "--context",
            "1024",
            "-ngl",
            "auto",
        ],
    );
    assert_eq!(v["settings"]["context"], 1024);
    let o = &v["ollama"];
    assert_eq!(o["as_ollama_defaults"], false);
    assert_eq!(o["ollama_num_ctx"], 2048);
    assert_eq!(
        o["reproduce"],
        serde_json::json!(["/set parameter num_ctx 1024"])
    );
    // the text report has an Ollama section with the same parameters
    let cfg = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"))
        .args([
            "report",
            "--gguf",
            "ollama:tuned",
            "--machine",
            "desktop-rtx-4090",
        ])
        .env("LLMBOUND_CONFIG_DIR", cfg.path())
        .env("OLLAMA_MODELS", dir.path())
        .env_remove("OLLAMA_CONTEXT_LENGTH")
        .env_remove("OLLAMA_NUM_PARALLEL")
        .env_remove("OLLAMA_GPU_OVERHEAD")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\nOllama\n"), "{text}");
    assert!(
        text.contains("/set parameter num_ctx 2048 · /set parameter num_gpu 1"),
        "{text}"
    );
    assert!(text.contains("the Modelfile's num_ctx"), "{text}");
    // a model that is not Ollama's has no Ollama section
    let v = report_json(dir.path(), &["--machine", "desktop-rtx-4090"]);
    assert!(v.get("ollama").is_none());
}

/// A store whose `library/<name>:latest` model blob is the tiny llama GGUF trained on
/// 262,144 tokens (so Ollama's default by total VRAM is not clamped), with a params layer
/// when given.
fn long_store(root: &Path, name: &str, params: Option<&str>) {
    store(root, name, params);
    fixtures::tiny_trained("Long", 2, 262_144)
        .write_file(
            &root.join("blobs").join(format!("sha256-{MODEL}")),
            llmbound::gguf::writer::Data::Zeros,
        )
        .unwrap();
}

/// `llmbound report` on an Ollama store with the given environment (Ollama's own variables
/// removed unless given), its stdout.
fn run_report(store: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    run_command(store, "report", args, env)
}

/// `llmbound COMMAND` on an Ollama store, as [`run_report`].
fn run_command(store: &Path, command: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let cfg = tempfile::tempdir().unwrap();
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_llmbound"));
    c.arg(command)
        .args(args)
        .env("LLMBOUND_CONFIG_DIR", cfg.path())
        .env("OLLAMA_MODELS", store)
        .env_remove("OLLAMA_CONTEXT_LENGTH")
        .env_remove("OLLAMA_NUM_PARALLEL")
        .env_remove("OLLAMA_GPU_OVERHEAD")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run_json(store: &Path, args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    serde_json::from_str(&run_report(store, &a, env)).unwrap()
}

/// Ollama's default context follows the machine's total VRAM (≥ 47 GiB → 262,144, ≥ 23 GiB →
/// 32,768, else 4,096): two 24 GiB cards, one, a 16 GiB card, no GPU, and a Mac whose VRAM is
/// Metal's working set (36 GiB of the 48 GB M4 Pro; 47 GiB when the wired limit raises it).
#[test]
fn ollamas_context_follows_the_machines_total_vram() {
    let dir = tempfile::tempdir().unwrap();
    long_store(dir.path(), "long", None);
    let m = "ollama:long";
    for (args, vram, ctx) in [
        (
            vec!["--machine", "desktop-dual-rtx-3090"],
            48 * GIB,
            262_144,
        ),
        (vec!["--machine", "desktop-rtx-4090"], 24 * GIB, 32_768),
        (
            vec!["--machine", "desktop-rtx-4090", "--memory", "16GiB"],
            16 * GIB,
            4096,
        ),
        (vec!["--machine", "desktop-ddr5-cpu-only"], 0, 4096),
        (
            vec!["--machine", "macbook-pro-m4-pro-48gb"],
            36 * GIB,
            32_768,
        ),
        (
            vec![
                "--machine",
                "macbook-pro-m4-pro-48gb",
                "--device-free",
                "47GiB",
            ],
            47 * GIB,
            262_144,
        ),
    ] {
        let mut a = vec!["--gguf", m];
        a.extend(args.iter().copied());
        let v = run_json(dir.path(), &a, &[]);
        let o = &v["ollama"];
        assert_eq!(o["total_vram_bytes"], vram, "{args:?}: {o}");
        assert_eq!(o["context_source"], "vram-default", "{args:?}: {o}");
        assert_eq!(o["ollama_num_ctx"], ctx, "{args:?}: {o}");
        assert_eq!(o["llama_ctx"], ctx, "{args:?}: {o}");
        assert_eq!(v["settings"]["context"], ctx, "{args:?}: {}", v["settings"]);
        assert_eq!(o["gpu_layers"], "auto", "{args:?}: {o}");
        assert_eq!(o["as_ollama_defaults"], true, "{args:?}: {o}");
        assert_eq!(
            o["reproduce"],
            serde_json::json!([format!("/set parameter num_ctx {ctx}")]),
            "{args:?}: {o}"
        );
    }
    // OLLAMA_GPU_OVERHEAD is taken from each GPU: two 24 GiB cards less 1 GiB each, 46 GiB
    let v = run_json(
        dir.path(),
        &["--gguf", m, "--machine", "desktop-dual-rtx-3090"],
        &[("OLLAMA_GPU_OVERHEAD", &GIB.to_string())],
    );
    assert_eq!(v["ollama"]["total_vram_bytes"], 46 * GIB);
    assert_eq!(v["ollama"]["ollama_num_ctx"], 32_768);
    // OLLAMA_CONTEXT_LENGTH over the default
    let v = run_json(
        dir.path(),
        &["--gguf", m, "--machine", "desktop-dual-rtx-3090"],
        &[("OLLAMA_CONTEXT_LENGTH", "65536")],
    );
    assert_eq!(v["ollama"]["context_source"], "environment");
    assert_eq!(v["settings"]["context"], 65_536);
}

/// A Modelfile's num_ctx and num_gpu over the VRAM default, with parallel requests: the plan
/// is llama-server's `-c num_ctx × parallel` and `-ngl num_gpu`, and the report prints the
/// Ollama parameters that reproduce it (text and JSON).
#[test]
fn a_modelfiles_parameters_set_the_plan_and_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    long_store(
        dir.path(),
        "tuned",
        Some(r#"{"num_ctx":65536,"num_gpu":2,"temperature":0.7}"#),
    );
    let a = [
        "--gguf",
        "ollama:tuned",
        "--machine",
        "desktop-dual-rtx-3090",
    ];
    let env = [("OLLAMA_NUM_PARALLEL", "2")];
    let v = run_json(dir.path(), &a, &env);
    let o = &v["ollama"];
    assert_eq!(o["modelfile_num_ctx"], 65_536, "{o}");
    assert_eq!(o["modelfile_num_gpu"], 2, "{o}");
    assert_eq!(o["context_source"], "modelfile", "{o}");
    assert_eq!(o["ollama_num_ctx"], 65_536, "{o}");
    assert_eq!(o["ollama_parallel"], 2, "{o}");
    assert_eq!(o["llama_ctx"], 131_072, "{o}");
    assert_eq!(o["ollama_gpu_layers"], "2", "{o}");
    assert_eq!(o["gpu_layers"], "2", "{o}");
    assert_eq!(o["as_ollama_defaults"], true, "{o}");
    assert_eq!(v["settings"]["context"], 65_536, "{}", v["settings"]);
    assert_eq!(v["placement"]["gpu_layers"], 2, "{}", v["placement"]);
    assert_eq!(
        o["reproduce"],
        serde_json::json!(["/set parameter num_ctx 65536", "/set parameter num_gpu 2"]),
        "{o}"
    );
    let text = run_report(dir.path(), &a, &env);
    for part in [
        "\nOllama\n",
        "model",
        "ollama:tuned",
        "num_ctx 65,536 per request × 2 parallel requests = -c 131,072: the Modelfile's num_ctx",
        "-ngl 2 from the Modelfile's num_gpu",
        "/set parameter num_ctx 65536 · /set parameter num_gpu 2",
        "OLLAMA_NUM_PARALLEL=2 in the server's environment",
    ] {
        assert!(text.contains(part), "{part:?} not in:\n{text}");
    }
}

/// `llmbound compare` with an Ollama model: each machine at Ollama's own default context for
/// its VRAM (two 24 GiB cards 262,144, one 32,768, no GPU 4,096), never the first machine's;
/// the text says so in its title and gives each row's context in the placement column.
#[test]
fn compare_runs_each_machine_at_ollamas_context_for_it() {
    let dir = tempfile::tempdir().unwrap();
    long_store(dir.path(), "long", None);
    let run = |format: &str| {
        run_command(
            dir.path(),
            "compare",
            &[
                "--gguf",
                "ollama:long",
                "--machine",
                "desktop-rtx-4090",
                "--machine",
                "desktop-dual-rtx-3090",
                "--machine",
                "desktop-ddr5-cpu-only",
                "--format",
                format,
            ],
            &[],
        )
    };
    let v: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let ctx: Vec<(String, u64)> = v["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["machine"].as_str().unwrap().to_string(),
                m["context_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ctx,
        [
            ("desktop-rtx-4090".to_string(), 32_768),
            ("desktop-dual-rtx-3090".to_string(), 262_144),
            ("desktop-ddr5-cpu-only".to_string(), 4096),
        ]
    );
    let text = run("text");
    assert!(text.contains("at each machine's own context"), "{text}");
    assert!(text.contains("at 262,144 tokens: "), "{text}");
    assert!(text.contains("at 4,096 tokens: "), "{text}");
}
