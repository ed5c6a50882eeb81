//! The explorer's library view (L): models found on disk, scanned off the UI thread, rows
//! that follow the context, cache types and machine, and Enter opening a model in the panes.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

#[path = "support/fixtures.rs"]
mod fixtures;

use llmbound::build::ScenarioOptions;
use llmbound::gguf::writer::Data;
use llmbound::library::Store;
use llmbound::profile::Catalog;
use llmbound::tui::action::Action;
use llmbound::tui::app::{App, View};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use std::time::Duration;

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().clone()
}

fn snap(name: &str, app: &App) {
    insta::assert_snapshot!(format!("{name}_120x36"), draw(app, 120, 36));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
}

const SHA: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// An Ollama store and a folder of models under `root`.
fn stores(root: &Path) -> Vec<(Store, std::path::PathBuf)> {
    let ol = root.join("ollama");
    let blob = ol.join(format!("blobs/sha256-{SHA}"));
    std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
    fixtures::tiny("Tiny Ollama", 3)
        .write_file(&blob, Data::Zeros)
        .unwrap();
    let m = ol.join("manifests/registry.ollama.ai/library/tiny/3b");
    std::fs::create_dir_all(m.parent().unwrap()).unwrap();
    std::fs::write(
        &m,
        format!("{{\"layers\":[{{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:{SHA}\"}}]}}"),
    )
    .unwrap();
    let dir = root.join("models");
    for (name, layers) in [("small-Q8_0.gguf", 2), ("Big/big-Q8_0.gguf", 40)] {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        fixtures::tiny(name, layers)
            .write_file(&p, Data::Zeros)
            .unwrap();
    }
    let lm = dir.join("Big/mmproj-big-F16.gguf");
    fixtures::projector().write_file(&lm, Data::Zeros).unwrap();
    vec![(Store::Ollama, ol), (Store::Folder, dir)]
}

fn app(root: &Path) -> App {
    let mut app = App::new(
        Catalog::load_with(Some(root.join("config"))),
        &ScenarioOptions {
            machine: Some("epyc-zen5-2vcpu-vm".into()),
            context: Some(4096),
            ..Default::default()
        },
    )
    .unwrap();
    app.hash_cache = None;
    app.library.roots = Some(stores(root));
    app.update(Action::Resize(120, 36));
    app.update(Action::Library);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.view, View::Library);
    app
}

fn column(app: &App, name: &str) -> String {
    let s = draw(app, 120, 36).to_string();
    s.lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{s}"))
        .to_string()
}

#[test]
fn the_library_lists_every_model_and_follows_the_scenario() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app(d.path());
    assert!(!app.library.scanning());
    assert_eq!(app.library.rows.len(), 3);
    snap("library", &app);

    // Rows follow the context: a larger context means a lower ceiling at N.
    let before = app.library.rows[0].outcome.clone().unwrap();
    app.update(Action::DoubleContext);
    let after = app.library.rows[0].outcome.clone().unwrap();
    assert!(after.full_tokens_per_second < before.full_tokens_per_second);
    assert!(column(&app, "ctx 8,192").contains("Library"));

    // Sort by name, then open the selected model with Enter.
    while app.library.sort != llmbound::library::SortKey::Name {
        app.update(Action::Reverse);
    }
    let names: Vec<String> = app
        .library
        .rows
        .iter()
        .map(|r| app.library.scanned[r.index].found.name.clone())
        .collect();
    assert_eq!(names, ["Big/big-Q8_0.gguf", "small-Q8_0.gguf", "tiny:3b"]);
    app.update(Action::End);
    app.update(Action::Edit);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.view, View::Main);
    let blob = d.path().join(format!("ollama/blobs/sha256-{SHA}"));
    assert_eq!(
        app.report.artifact.bytes,
        std::fs::metadata(&blob).unwrap().len()
    );
    assert_eq!(app.scenario.model.layers.len(), 3);
}

#[test]
fn an_empty_library_says_where_it_looked() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().join("config"))),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.library.roots = Some(vec![(Store::Folder, empty.clone())]);
    app.update(Action::Library);
    app.wait_for_jobs(Duration::from_secs(30));
    let s = draw(&app, 120, 36).to_string();
    assert!(s.contains("no GGUF models in"), "{s}");
}

/// tests/e2e/library.sh: the library view in tmux with an Ollama store and an LM Studio
/// folder, read as a person would (LLMBOUND_E2E=1 and tmux; otherwise says it was skipped).
#[test]
fn library_end_to_end_in_tmux() {
    if std::env::var("LLMBOUND_E2E").ok().as_deref() != Some("1") {
        skipped!("skipped: set LLMBOUND_E2E=1 to run tests/e2e/library.sh");
        return;
    }
    let tmux = std::process::Command::new("tmux").arg("-V").output();
    if !tmux.is_ok_and(|o| o.status.success()) {
        skipped!("skipped: tmux is not on PATH");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/library.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_llmbound"))
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "tests/e2e/library.sh failed:\n{text}");
    eprintln!("{text}");
}
