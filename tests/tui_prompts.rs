//! Text prompts: the opening value is selected (typing replaces it), editing keys, history,
//! the machine picker and Tab completion, driven by actions and drawn into a `TestBackend`.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Setting;
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
    app.set_hash_cache(None);
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
    assert_eq!(app.claim().unwrap().text, "10");
    // `/` again opens on "10", selected: typing replaces it (it used to check 10500).
    app.update(Action::Search);
    assert_eq!(app.input().unwrap().text, "10");
    assert!(app.input().unwrap().selected);
    type_text(&mut app, "500");
    app.update(Action::Submit);
    assert_eq!(app.claim().unwrap().text, "500");
    assert_eq!(app.claim().unwrap().check.tokens_per_second, 500.0);
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
    assert_eq!(app.view(), View::Bench);
    app.update(Action::Bench);
    type_text(&mut app, "/nonexistent/other.json");
    app.update(Action::Submit);
    let m = app.message().unwrap();
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
    assert!(app.file().loaded.is_some());
    app.update(Action::Open);
    assert_eq!(app.input().unwrap().text, gguf);
    type_text(&mut app, "/nonexistent/x.gguf");
    assert_eq!(app.input().unwrap().text, "/nonexistent/x.gguf");
    // Moving the cursor keeps the value instead: End then Ctrl-W edits the old path.
    app.update(Action::Back);
    app.update(Action::Open);
    app.update(Action::Line(LineKey::End));
    app.update(Action::Line(LineKey::DeleteToStart));
    assert_eq!(app.input().unwrap().text, "");
}

#[test]
fn editing_keys_and_history() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Search);
    type_text(&mut app, "12 tok");
    app.update(Action::Line(LineKey::DeleteWord));
    assert_eq!(app.input().unwrap().text, "12 ");
    app.update(Action::Line(LineKey::Home));
    type_text(&mut app, "1");
    assert_eq!(app.input().unwrap().text, "112 ");
    app.update(Action::Line(LineKey::DeleteToEnd));
    assert_eq!(app.input().unwrap().text, "1");
    app.update(Action::Line(LineKey::DeleteToStart));
    assert_eq!(app.input().unwrap().text, "");
    type_text(&mut app, "20");
    app.update(Action::Submit);
    app.update(Action::Search);
    type_text(&mut app, "30");
    app.update(Action::Submit);
    app.update(Action::Search);
    app.update(Action::Line(LineKey::Up));
    assert_eq!(app.input().unwrap().text, "30");
    app.update(Action::Line(LineKey::Up));
    assert_eq!(app.input().unwrap().text, "20");
    app.update(Action::Submit);
    assert_eq!(app.claim().unwrap().text, "20");
}

fn open_machine_picker(app: &mut App) {
    for _ in 0..6 {
        if app.focus() == Pane::Machine {
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
    let i = app.input().unwrap();
    assert!(i.text.is_empty(), "the line holds only what is typed");
    assert_eq!(i.filtered().len(), app.ws().catalog().machines.len());
    type_text(&mut app, "4090");
    let f: Vec<String> = app
        .input()
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
    assert_eq!(app.ws().scenario().machine.id, f[0]);
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
    let i = app.input().unwrap();
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
    let i = app.input().unwrap();
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

fn focus(app: &mut App, pane: Pane) {
    for _ in 0..8 {
        if app.focus() == pane {
            return;
        }
        app.update(Action::NextPane);
    }
    panic!("pane {pane:?} not reached");
}

/// Select `f` in its pane (↓ from the top) and press Enter.
fn edit_field(app: &mut App, pane: Pane, f: Field) {
    focus(app, pane);
    app.update(Action::Home);
    for _ in 0..60 {
        if app.selected_field(pane) == Some(f) {
            app.update(Action::Edit);
            return;
        }
        app.update(Action::Down);
    }
    panic!("field {f:?} not found in {pane:?}");
}

#[test]
fn a_field_prompt_opens_on_its_current_value_selected() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    edit_field(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    let i = app.input().unwrap();
    assert_eq!(i.text, "48 GiB", "it used to open empty");
    assert!(i.selected);
    let s = draw(&app, 80, 24).to_string();
    assert!(s.contains("capacity (e.g. 48 GiB): 48 GiB"), "{s}");
    // The first typed character replaces the value.
    type_text(&mut app, "64 GiB");
    assert_eq!(app.input().unwrap().text, "64 GiB");
    app.update(Action::Submit);
    assert_eq!(
        app.ws().scenario().machine.tiers[0].capacity.value,
        64 << 30
    );
    // A cursor key keeps the value for editing: End, Backspace ×3, "GB".
    edit_field(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Bandwidth(0)),
    );
    assert_eq!(app.input().unwrap().text, "273 GB/s");
    app.update(Action::Line(LineKey::End));
    for _ in 0.."GB/s".len() {
        app.update(Action::Backspace);
    }
    app.update(Action::Line(LineKey::Home));
    app.update(Action::Line(LineKey::Delete));
    type_text(&mut app, "3");
    assert_eq!(app.input().unwrap().text, "373 ");
}

/// The figures a typed value can change (provenance aside: a typed value is `user`).
fn figures(s: &llmbound::core::scenario::Scenario) -> String {
    let tiers: Vec<_> = s
        .machine
        .tiers
        .iter()
        .map(|t| {
            (
                t.capacity.value,
                t.bandwidth.value.0,
                t.measured_bandwidth.as_ref().map(|m| m.value.0),
            )
        })
        .collect();
    let compute: Vec<_> = s.machine.compute.iter().map(|c| c.rate.value.0).collect();
    let m = &s.model;
    format!(
        "{:?}",
        (
            (&m.layers, m.native_context, &m.moe, &m.mla),
            m.parameters_advertised.as_ref().map(|p| p.value),
            (&s.cache, s.other_bytes.value, &s.offload, s.prompt_rows),
            (&s.compute_path, tiers, compute),
        )
    )
}

/// Every field of every pane opens on a value that, accepted unchanged, changes nothing.
#[test]
fn every_field_prompt_reads_back_to_the_same_scenario() {
    let d = tempfile::tempdir().unwrap();
    for scenario in [
        "default",
        "qwen3-32b-rtx-4090-partial",
        "gemma-3-270m-cpu-vm",
    ] {
        let mut app = App::new(
            Catalog::load_with(Some(d.path().to_path_buf())),
            &ScenarioOptions {
                scenario: Some(scenario.into()),
                ..Default::default()
            },
        )
        .unwrap();
        for pane in [Pane::Model, Pane::Cache, Pane::Machine] {
            focus(&mut app, pane);
            app.update(Action::Home);
            let mut seen = Vec::new();
            for _ in 0..60 {
                let Some(f) = app.selected_field(pane) else {
                    break;
                };
                if seen.contains(&f) {
                    break;
                }
                seen.push(f);
                if f != Field::MachineProfile {
                    let before = figures(app.ws().scenario());
                    app.update(Action::Edit);
                    // End keeps the value; a trailing space makes it a typed line that is
                    // parsed (not the untouched opening value).
                    app.update(Action::Line(LineKey::End));
                    app.update(Action::Input(' '));
                    let text = app.input().map(|i| i.text.clone());
                    app.update(Action::Submit);
                    assert!(
                        figures(app.ws().scenario()) == before,
                        "{scenario}: {f:?} opened on {text:?} and changed the scenario: {:?}",
                        app.message()
                    );
                }
                app.update(Action::Down);
            }
            assert!(seen.len() > 2, "{pane:?}: {seen:?}");
        }
    }
}

fn pick(app: &mut App, action: Action, filter: &str) {
    app.update(action);
    assert!(app.input().is_some(), "the picker opens");
    type_text(app, filter);
    app.update(Action::Submit);
}

#[test]
fn the_model_picker_switches_the_model_and_keeps_machine_and_cache() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::DoubleContext);
    let machine = app.ws().scenario().machine.clone();
    let cache = app.ws().scenario().cache.clone();
    app.update(Action::PickModel);
    let i = app.input().unwrap();
    assert_eq!(i.value(), "qwen3-32b", "the current model is highlighted");
    assert!(i.filtered().len() >= 10);
    type_text(&mut app, "llama-3.1");
    assert_eq!(
        app.input().unwrap().filtered(),
        vec!["llama-3.1-8b-instruct  (no pinned file)"]
    );
    app.update(Action::Submit);
    // It pins no GGUF: its size is asked for (as --artifact-bytes).
    let i = app.input().expect("the size prompt");
    assert!(
        i.prompt.contains("llama-3.1-8b-instruct pins no file"),
        "{}",
        i.prompt
    );
    type_text(&mut app, "4920734272");
    app.update(Action::Submit);
    assert_eq!(
        app.ws().model_file().unwrap().id,
        "llama-3.1-8b-instruct",
        "{:?}",
        app.message()
    );
    assert_eq!(app.ws().scenario().model.layer_count(), 32);
    assert_eq!(app.ws().scenario().machine, machine);
    assert_eq!(app.ws().scenario().cache, cache);
    assert_eq!(app.ws().scenario().weights[0].bytes.value, 4_920_734_272);
    pick(&mut app, Action::PickModel, "qwen3-8b");
    assert!(app.ws().pinned().unwrap().id.starts_with("qwen3-8b"));
    // Esc cancels a picker.
    app.update(Action::PickModel);
    type_text(&mut app, "phi");
    app.update(Action::Back);
    assert_eq!(app.ws().model_file().unwrap().id, "qwen3-8b");
}

#[test]
fn the_scenario_picker_lists_saved_scenarios_and_loads_one() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    // Save the current scenario under a new id: the picker tags it as saved.
    app.update(Action::DoubleContext);
    app.update(Action::Save);
    app.update(Action::SetText("my-long-run".into()));
    let mut app = app_in(d.path());
    app.update(Action::PickScenario);
    let rows: Vec<String> = app
        .input()
        .unwrap()
        .filtered()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        rows.contains(&"my-long-run  (saved)".to_string()),
        "{rows:?}"
    );
    type_text(&mut app, "4090");
    app.update(Action::Submit);
    assert_eq!(
        app.ws().scenario_file().unwrap().id,
        "qwen3-32b-rtx-4090-partial"
    );
    assert_eq!(app.ws().scenario().machine.id, "desktop-rtx-4090");
    // Its Machine pane at 80 columns: a compute label longer than the label column keeps a
    // space before its value (it read "@gpu0330.3 TFLOP/s").
    focus(&mut app, Pane::Machine);
    let s = draw(&app, 80, 24).to_string();
    assert!(s.contains("fp16-acc16 @gpu0 330.3 TFLOP/s"), "{s}");
    pick(&mut app, Action::PickScenario, "long-run");
    assert_eq!(app.ws().scenario_file().unwrap().id, "my-long-run");
    assert_eq!(app.ws().scenario().cache.context, 65536);
}

#[test]
fn a_switch_that_drops_edits_asks_first() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use llmbound::tui::event::key_action;
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    edit_field(&mut app, Pane::Model, Field::Setting(Setting::KvHeads));
    app.update(Action::SetText("4".into()));
    app.update(Action::Back);
    let shape = app.ws().scenario().model.clone();
    pick(&mut app, Action::PickModel, "qwen3-8b");
    assert!(
        app.pending_switch().is_some(),
        "a question, not a silent switch"
    );
    let q = app.pending_question().unwrap();
    assert!(
        q.contains("qwen3-8b") && q.contains("model's unsaved edits"),
        "{q}"
    );
    snap("switch_question", &app);
    let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
    assert_eq!(key_action(&app, &n), Some(Action::No));
    app.update(Action::No);
    assert_eq!(app.ws().scenario().model, shape, "n keeps the edits");
    pick(&mut app, Action::PickModel, "qwen3-8b");
    app.update(Action::Yes);
    assert_eq!(app.ws().model_file().unwrap().id, "qwen3-8b");
    // The machine picker asks too once the machine is edited.
    edit_field(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    type_text(&mut app, "64 GiB");
    app.update(Action::Submit);
    open_machine_picker(&mut app);
    type_text(&mut app, "4090");
    app.update(Action::Submit);
    assert!(
        app.pending_question()
            .unwrap()
            .contains("machine's unsaved edits")
    );
    app.update(Action::No);
    assert_eq!(
        app.ws().scenario().machine.tiers[0].capacity.value,
        64 << 30
    );
}

#[test]
fn snapshot_model_and_scenario_pickers() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::PickModel);
    type_text(&mut app, "qwen");
    snap("model_picker", &app);
    app.update(Action::Back);
    app.update(Action::PickScenario);
    snap("scenario_picker", &app);
}

#[test]
fn snapshot_capacity_prompt_selected() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    edit_field(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    snap("capacity_prompt_selected", &app);
}

#[test]
fn a_bad_size_for_a_model_without_a_file_is_refused_in_words() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    pick(&mut app, Action::PickModel, "phi-4");
    assert!(app.input().is_some(), "the size prompt");
    type_text(&mut app, "0");
    app.update(Action::Submit);
    let m = app.message().unwrap();
    assert!(m.error, "{m:?}");
    assert!(m.text.starts_with("model \"phi-4\": size"), "{}", m.text);
    assert!(!m.text.contains("--"), "{}", m.text);
    assert_eq!(app.ws().model_file().unwrap().id, "qwen3-32b");
}

#[test]
fn a_paste_goes_into_the_prompt_once_capped_and_clean() {
    use llmbound::tui::prompt::MAX_PROMPT_CHARS;
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    app.update(Action::Open);
    // The opening value is selected: a paste replaces it, and is not accepted.
    app.update(Action::Paste("/models/a\u{1b}[2J b\n.gguf".into()));
    let input = app.input().expect("the prompt stays open");
    assert_eq!(input.text, "/models/a[2J b .gguf");
    // A second paste goes in at the cursor.
    app.update(Action::Line(LineKey::Home));
    app.update(Action::Paste("x".into()));
    assert_eq!(app.input().unwrap().text, "x/models/a[2J b .gguf");
    // A 1 MiB paste is one action, cut at the cap, and quick.
    let t = std::time::Instant::now();
    app.update(Action::Paste("y".repeat(1 << 20)));
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(app.input().unwrap().text.chars().count(), MAX_PROMPT_CHARS);
    // Typing past the cap adds nothing; Esc still closes the prompt.
    type_text(&mut app, "zzz");
    assert_eq!(app.input().unwrap().text.chars().count(), MAX_PROMPT_CHARS);
    app.update(Action::Back);
    assert!(app.input().is_none());
}

#[test]
fn a_terminal_paste_event_becomes_one_paste_action() {
    use crossterm::event::Event;
    let d = tempfile::tempdir().unwrap();
    let mut app = app_in(d.path());
    let ev = Event::Paste("z".repeat(1 << 20));
    // Not typing: a paste does nothing.
    assert!(llmbound::tui::event::event_action(&app, &ev).is_none());
    app.update(Action::Open);
    match llmbound::tui::event::event_action(&app, &ev) {
        Some(Action::Paste(s)) => {
            assert!(s.chars().count() <= 2 * llmbound::tui::prompt::MAX_PROMPT_CHARS)
        }
        other => panic!("{other:?}"),
    }
}
