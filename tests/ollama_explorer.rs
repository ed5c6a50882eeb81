//! The explorer opening `ollama:NAME` (its start-up argument, and `o`) takes Ollama's plan as
//! `report` does. The test runs itself again with `OLLAMA_MODELS` naming the store it wrote.

#[path = "support/fixtures.rs"]
mod fixtures;

use llmbound::core::placement::GpuLayers;
use llmbound::ollama::ContextSource;
use std::path::Path;

const MODEL: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const PARAMS: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// `library/<name>:latest`: the tiny llama GGUF (trained on 8,192 tokens) and a params layer.
fn store(root: &Path, name: &str, params: &str) {
    let blobs = root.join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    fixtures::tiny("Tiny", 2)
        .write_file(
            &blobs.join(format!("sha256-{MODEL}")),
            llmbound::gguf::writer::Data::Zeros,
        )
        .unwrap();
    std::fs::write(blobs.join(format!("sha256-{PARAMS}")), params).unwrap();
    let dir = root.join("manifests/registry.ollama.ai/library").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("latest"),
        format!(
            r#"{{"schemaVersion":2,"layers":[{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{MODEL}","size":4}},{{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:{PARAMS}","size":{}}}]}}"#,
            params.len()
        ),
    )
    .unwrap();
}

/// Ollama finds its store through OLLAMA_MODELS, read at each use: the test runs itself again
/// with it set (and `env_key` naming the store), so the variable never leaks into another test.
/// Returns the store in that second run; in the first, runs it and checks that it passed.
fn in_store(env_key: &str, test: &str, name: &str, params: &str) -> Option<String> {
    if let Ok(root) = std::env::var(env_key) {
        assert_eq!(std::env::var("OLLAMA_MODELS").ok(), Some(root.clone()));
        return Some(root);
    }
    let dir = tempfile::tempdir().unwrap();
    store(dir.path(), name, params);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(env_key, dir.path())
        .env("OLLAMA_MODELS", dir.path())
        .env_remove("OLLAMA_CONTEXT_LENGTH")
        .env_remove("OLLAMA_NUM_PARALLEL")
        .env_remove("OLLAMA_GPU_OVERHEAD")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && log.contains("1 passed"),
        "{log}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    None
}

/// A workspace on the RTX 4090 desktop with `gguf` open, its catalog, and the empty user
/// profile folder it reads (kept alive with it).
fn on_rtx_4090(
    gguf: &str,
) -> (
    tempfile::TempDir,
    llmbound::profile::Catalog,
    llmbound::workspace::Workspace,
) {
    let cfg = tempfile::tempdir().unwrap();
    let cat = llmbound::profile::Catalog::load_with(Some(cfg.path().to_path_buf()));
    let opts = llmbound::build::ScenarioOptions {
        gguf: Some(gguf.into()),
        machine: Some("desktop-rtx-4090".into()),
        ..Default::default()
    };
    let ws = llmbound::workspace::Workspace::new(cat.clone(), &opts).unwrap();
    (cfg, cat, ws)
}

#[test]
fn the_explorer_opens_an_ollama_model_at_ollamas_plan() {
    if in_store(
        "LLMBOUND_TEST_OLLAMA_STORE",
        "the_explorer_opens_an_ollama_model_at_ollamas_plan",
        "tuned",
        r#"{"num_ctx":2048,"num_gpu":1}"#,
    )
    .is_none()
    {
        return;
    }
    let (_cfg, cat, mut ws) = on_rtx_4090("ollama:tuned");
    assert_eq!(ws.scenario().cache.context, 2048);
    assert_eq!(ws.scenario().offload.ngl(), GpuLayers::Count(1));
    assert_eq!(ws.report().layout.gpu_layers, 1);
    let o = ws.ollama().unwrap();
    assert_eq!(o.plan.context_source, ContextSource::Modelfile);
    let params = vec![
        "/set parameter num_ctx 2048".to_string(),
        "/set parameter num_gpu 1".to_string(),
    ];
    assert_eq!(o.reproduce(), params);
    // an edit in the explorer moves the parameters that reproduce the scenario
    ws.apply(llmbound::core::edit::Edit::Context(1024)).unwrap();
    assert_eq!(
        ws.ollama().unwrap().reproduce()[0],
        "/set parameter num_ctx 1024"
    );
    // `o` on the same name from the default scenario: Ollama's plan again
    let mut ws = llmbound::workspace::Workspace::new(
        cat,
        &llmbound::build::ScenarioOptions {
            machine: Some("desktop-rtx-4090".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(ws.ollama().is_none());
    let opened = llmbound::workspace::open::read(
        Path::new("ollama:tuned"),
        llmbound::workspace::Rows::Totals,
    )
    .unwrap();
    ws.open(&opened).unwrap();
    assert_eq!(ws.scenario().cache.context, 2048);
    assert_eq!(ws.ollama().unwrap().reproduce(), params);
}

/// Comparing machines with an Ollama model in the explorer puts each machine at Ollama's own
/// plan for it (its default context follows the VRAM: the tiny model's 8,192 trained tokens
/// on a 24 GiB card, 4,096 without a GPU), until the context is edited.
#[test]
fn the_explorers_compare_puts_each_machine_at_ollamas_context() {
    if in_store(
        "LLMBOUND_TEST_OLLAMA_COMPARE_STORE",
        "the_explorers_compare_puts_each_machine_at_ollamas_context",
        "plain",
        "{}",
    )
    .is_none()
    {
        return;
    }
    let (_cfg, cat, mut ws) = on_rtx_4090("ollama:plain");
    assert_eq!(ws.scenario().cache.context, 8192);
    let machines: Vec<_> = ["desktop-rtx-4090", "desktop-ddr5-cpu-only"]
        .iter()
        .map(|id| llmbound::profile::load::machine(&cat.machine(id).unwrap()))
        .collect();
    let contexts = |ws: &llmbound::workspace::Workspace| -> Vec<u64> {
        ws.compare(&machines)
            .iter()
            .map(|r| r.outcome.as_ref().unwrap().context_tokens)
            .collect()
    };
    assert_eq!(contexts(&ws), [8192, 4096]);
    // an edited context is the user's: every machine at it
    ws.apply(llmbound::core::edit::Edit::Context(2048)).unwrap();
    assert_eq!(contexts(&ws), [2048, 2048]);
}

/// The compare view with an Ollama model: its title says each machine is at Ollama's context
/// for it, and the context column (hidden otherwise) gives each one's.
#[test]
fn the_compare_view_shows_each_machines_ollama_context() {
    if in_store(
        "LLMBOUND_TEST_OLLAMA_VIEW_STORE",
        "the_compare_view_shows_each_machines_ollama_context",
        "plain",
        "{}",
    )
    .is_none()
    {
        return;
    }
    use llmbound::tui::Action;
    use llmbound::tui::views::compare::Col;
    let cfg = tempfile::tempdir().unwrap();
    let cat = llmbound::profile::Catalog::load_with(Some(cfg.path().to_path_buf()));
    let mut app = llmbound::tui::app::App::new(
        cat,
        &llmbound::build::ScenarioOptions {
            gguf: Some("ollama:plain".into()),
            machine: Some("desktop-rtx-4090".into()),
            ..Default::default()
        },
    )
    .unwrap();
    app.set_hash_cache(None);
    app.update(Action::Compare);
    let v = app.compare();
    assert!(!v.hidden.contains(&Col::Context), "{:?}", v.hidden);
    // a context is sorted by value, right-aligned, and never starred as "best"
    assert!(Col::Context.is_number() && !Col::Context.higher_is_better());
    let ctx = |id: &str| {
        v.rows
            .iter()
            .find(|r| r.machine_id == id)
            .and_then(|r| r.outcome.as_ref().ok())
            .map(|f| f.context_tokens)
    };
    assert_eq!(ctx("desktop-rtx-4090"), Some(8192));
    assert_eq!(ctx("desktop-ddr5-cpu-only"), Some(4096));
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 36)).unwrap();
    t.draw(|f| f.render_widget(&app, f.area())).unwrap();
    let screen = t.backend().to_string();
    assert!(
        screen.contains("Compare machines · Tiny · Ollama's context per machine · K f16 V f16"),
        "{screen}"
    );
    // the title names the per-machine context, so the column stands beside the placement,
    // on the first screen
    let header = screen
        .lines()
        .find(|l| l.contains("machine") && l.contains("fits"))
        .unwrap_or_default();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(words.get(2..4), Some(&["-ngl", "context"][..]), "{header}");
}
