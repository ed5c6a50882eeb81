//! Text prompts: the opening value is selected (typing replaces it), editing keys, history,
//! the machine picker and Tab completion, driven by actions and drawn into a `TestBackend`.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::build::ScenarioOptions;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use llmbound::tui::fields::{Field, Pane};
use llmbound::tui::prompt::LineKey;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn app_in(dir: &Path) -> App {
    let mut app = App::new(
        Catalog::load_with(Some(dir.to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.hash_cache = None;
    app
}

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().clone()
}

fn snap(name: &str, app: &App) {
    insta::assert_snapshot!(format!("{name}_120x36"), draw(app, 120, 36));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
}

fn type_text(app: &mut App, s: &str) {
    for c in s.chars() {
        app.update(Action::Input(c));
    }
}

fn bench_fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

#[test]
fn a_second_claim_replaces_the_first() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Search);
    type_text(&mut app, "10");
    app.update(Action::Submit);
    assert_eq!(app.claim.as_ref().unwrap().text, "10");
    // `/` again opens on "10", selected: typing replaces it (it used to check 10500).
    app.update(Action::Search);
    assert_eq!(app.input.as_ref().unwrap().text, "10");
    assert!(app.input.as_ref().unwrap().selected);
    type_text(&mut app, "500");
    app.update(Action::Submit);
    assert_eq!(app.claim.as_ref().unwrap().text, "500");
    assert_eq!(app.claim.as_ref().unwrap().check.tokens_per_second, 500.0);
}

#[test]
fn the_bench_prompt_replaces_the_previous_path() {
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("qwen3-8b-synth-h200".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let f16 = bench_fixture("h200/bench_f16.json");
    app.update(Action::Bench);
    type_text(&mut app, &f16.display().to_string());
    app.update(Action::Submit);
    assert_eq!(app.view, View::Bench);
    app.update(Action::Bench);
    type_text(&mut app, "/nonexistent/other.json");
    app.update(Action::Submit);
    let m = app.message.as_ref().unwrap();
    assert!(
        m.text.contains("\"/nonexistent/other.json\""),
        "the typed path replaces the old one: {}",
        m.text
    );
}

#[test]
fn the_open_prompt_replaces_the_open_file() {
    let Ok(gguf) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!("skipped: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::OpenPath(PathBuf::from(&gguf)));
    app.wait_for_jobs(Duration::from_secs(60));
    assert!(app.file.loaded.is_some());
    app.update(Action::Open);
    assert_eq!(app.input.as_ref().unwrap().text, gguf);
    type_text(&mut app, "/nonexistent/x.gguf");
    assert_eq!(app.input.as_ref().unwrap().text, "/nonexistent/x.gguf");
    // Moving the cursor keeps the value instead: End then Ctrl-W edits the old path.
    app.update(Action::Back);
    app.update(Action::Open);
    app.update(Action::Line(LineKey::End));
    app.update(Action::Line(LineKey::DeleteToStart));
    assert_eq!(app.input.as_ref().unwrap().text, "");
}

#[test]
fn editing_keys_and_history() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Search);
    type_text(&mut app, "12 tok");
    app.update(Action::Line(LineKey::DeleteWord));
    assert_eq!(app.input.as_ref().unwrap().text, "12 ");
    app.update(Action::Line(LineKey::Home));
    type_text(&mut app, "1");
    assert_eq!(app.input.as_ref().unwrap().text, "112 ");
    app.update(Action::Line(LineKey::DeleteToEnd));
    assert_eq!(app.input.as_ref().unwrap().text, "1");
    app.update(Action::Line(LineKey::DeleteToStart));
    assert_eq!(app.input.as_ref().unwrap().text, "");
    type_text(&mut app, "20");
    app.update(Action::Submit);
    app.update(Action::Search);
    type_text(&mut app, "30");
    app.update(Action::Submit);
    app.update(Action::Search);
    app.update(Action::Line(LineKey::Up));
    assert_eq!(app.input.as_ref().unwrap().text, "30");
    app.update(Action::Line(LineKey::Up));
    assert_eq!(app.input.as_ref().unwrap().text, "20");
    app.update(Action::Submit);
    assert_eq!(app.claim.as_ref().unwrap().text, "20");
}

fn open_machine_picker(app: &mut App) {
    for _ in 0..6 {
        if app.focus == Pane::Machine {
            break;
        }
        app.update(Action::NextPane);
    }
    app.update(Action::Home);
    assert_eq!(
        app.selected_field(Pane::Machine),
        Some(Field::MachineProfile)
    );
    app.update(Action::Edit);
}

#[test]
fn the_machine_picker_filters_and_picks() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    open_machine_picker(&mut app);
    let i = app.input.as_ref().unwrap();
    assert!(i.text.is_empty(), "the line holds only what is typed");
    assert_eq!(i.filtered().len(), app.catalog.machines.len());
    type_text(&mut app, "4090");
    let f: Vec<String> = app
        .input
        .as_ref()
        .unwrap()
        .filtered()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        !f.is_empty() && f.iter().all(|s| s.contains("4090")),
        "{f:?}"
    );
    app.update(Action::Submit);
    assert_eq!(app.scenario.machine.id, f[0]);
}

#[test]
fn snapshot_machine_picker() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    open_machine_picker(&mut app);
    type_text(&mut app, "rtx");
    app.update(Action::Line(LineKey::Down));
    snap("machine_picker", &app);
}

#[test]
fn snapshot_selected_claim_prompt() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Search);
    type_text(&mut app, "10");
    app.update(Action::Submit);
    app.update(Action::Search);
    snap("claim_prompt_selected", &app);
}

#[test]
fn tab_lists_the_candidates() {
    let d = tempfile::tempdir().unwrap();
    for n in ["alpha-q4.gguf", "alpha-q8.gguf", "alpha.txt"] {
        std::fs::write(d.path().join(n), "x").unwrap();
    }
    let cfg = tempfile::tempdir().unwrap();
    let mut app = app_in(cfg.path());
    app.update(Action::Open);
    type_text(&mut app, &format!("{}/al", d.path().display()));
    app.update(Action::Complete);
    let i = app.input.as_ref().unwrap();
    assert_eq!(i.text, format!("{}/alpha-q", d.path().display()));
    assert_eq!(i.candidates, vec!["alpha-q4.gguf", "alpha-q8.gguf"]);
    let s = draw(&app, 80, 24).to_string();
    assert!(
        s.contains("alpha-q4.gguf") && s.contains("2 matches"),
        "{s}"
    );
    // The bench prompt completes JSON files, not GGUF ones.
    app.update(Action::Back);
    std::fs::write(d.path().join("run.jsonl"), "x").unwrap();
    app.update(Action::Bench);
    type_text(&mut app, &format!("{}/r", d.path().display()));
    app.update(Action::Complete);
    let i = app.input.as_ref().unwrap();
    assert_eq!(i.text, format!("{}/run.jsonl", d.path().display()));
}

#[test]
fn terminal_keys_reach_the_line_editor() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use llmbound::tui::event::key_action;
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Search);
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    let plain = |k| KeyEvent::new(k, KeyModifiers::NONE);
    let cases = [
        (ctrl('u'), Action::Line(LineKey::DeleteToStart)),
        (ctrl('w'), Action::Line(LineKey::DeleteWord)),
        (ctrl('k'), Action::Line(LineKey::DeleteToEnd)),
        (ctrl('a'), Action::Line(LineKey::Home)),
        (ctrl('e'), Action::Line(LineKey::End)),
        (plain(KeyCode::Left), Action::Line(LineKey::Left)),
        (plain(KeyCode::Right), Action::Line(LineKey::Right)),
        (plain(KeyCode::Home), Action::Line(LineKey::Home)),
        (plain(KeyCode::End), Action::Line(LineKey::End)),
        (plain(KeyCode::Up), Action::Line(LineKey::Up)),
        (plain(KeyCode::Down), Action::Line(LineKey::Down)),
        (plain(KeyCode::Delete), Action::Line(LineKey::Delete)),
        (plain(KeyCode::Tab), Action::Complete),
        (plain(KeyCode::Char('q')), Action::Input('q')),
    ];
    for (k, want) in cases {
        assert_eq!(key_action(&app, &k), Some(want), "{k:?}");
    }
    // Outside a prompt Ctrl-U is the keymap's page up again.
    app.update(Action::Back);
    assert_eq!(key_action(&app, &ctrl('u')), Some(Action::PageUp));
}
