//! The explorer driven by actions, without a terminal, and drawn into a `TestBackend`.

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Setting;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use llmbound::tui::fields::{Field, Pane};
use llmbound::tui::keymap::Keymap;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;

fn app_in(dir: &Path) -> App {
    App::new(
        Catalog::load_with(Some(dir.to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap()
}

fn app() -> (App, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (app_in(dir.path()), dir)
}

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().clone()
}

fn screen_text(app: &App, w: u16, h: u16) -> String {
    draw(app, w, h).to_string()
}

fn focus(app: &mut App, pane: Pane) {
    for _ in 0..6 {
        if app.focus() == pane {
            return;
        }
        app.update(Action::NextPane);
    }
}

fn select(app: &mut App, pane: Pane, field: Field) {
    focus(app, pane);
    app.update(Action::Home);
    for _ in 0..40 {
        if app.selected_field(pane) == Some(field) {
            return;
        }
        app.update(Action::Down);
    }
    panic!("field {field:?} not found in {pane:?}");
}

#[test]
fn default_scenario_shows_the_worked_example() {
    let (app, _d) = app();
    let d = &app.ws().report().decode;
    assert_eq!(format!("{:.2}", d.short_context.tokens_per_second), "13.81");
    assert_eq!(format!("{:.2}", d.full_context.tokens_per_second), "9.63");
    let s = screen_text(&app, 120, 36);
    for needle in [
        "13.81",
        "72.39",
        "9.63",
        "103.85",
        "19,762,149,024 bytes",
        "18.405 GiB",
        "262,144 bytes/token = 256 KiB",
        "8 GiB at 32,768 tokens",
        "23,187,523,936 bytes = 21.595 GiB",
        "optimistic vendor ceiling",
        "4.820",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    assert!(s.contains("Prefill ceiling none"), "{s}");
}

#[test]
fn brackets_halve_and_double_the_context_from_anywhere() {
    let (mut app, _d) = app();
    focus(&mut app, Pane::Machine);
    app.update(Action::HalveContext);
    assert_eq!(app.ws().scenario().cache.context, 16_384);
    assert_eq!(
        format!(
            "{:.2}",
            app.ws().report().decode.full_context.tokens_per_second
        ),
        "11.35"
    );
    let s = screen_text(&app, 120, 36);
    assert!(s.contains("16,384") && s.contains("11.35"), "{s}");
    app.update(Action::DoubleContext);
    app.update(Action::DoubleContext);
    assert_eq!(app.ws().scenario().cache.context, 65_536);
    assert!(
        app.ws()
            .report()
            .warnings
            .iter()
            .any(|w| matches!(w, llmbound::core::Warning::BeyondNativeContext { .. }))
    );
}

#[test]
fn context_steps_are_fine_between_powers_of_two() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::Right);
    assert_eq!(app.ws().scenario().cache.context, 40_960);
    app.update(Action::Left);
    app.update(Action::Left);
    assert_eq!(app.ws().scenario().cache.context, 28_672);
}

#[test]
fn bad_input_keeps_the_previous_scenario_and_says_why() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    // 0 is llama.cpp's `-c 0`: the trained context (32,768 here), which -fit may reduce
    app.update(Action::Edit);
    app.update(Action::SetText("0".into()));
    assert!(app.ws().scenario().offload.context_auto);
    assert_eq!(app.ws().scenario().cache.context, 32_768);
    for (text, part) in [
        ("abc", "not a number"),
        ("1000000000000000", "u32 context"),
        ("-5", "number"),
        ("1e400", "too large"),
        ("", "type a number"),
    ] {
        app.update(Action::Edit);
        app.update(Action::SetText(text.into()));
        assert_eq!(app.ws().scenario().cache.context, 32_768, "{text}");
        let m = app.message().cloned().expect("a message");
        assert!(m.error && m.text.contains(part), "{text:?}: {}", m.text);
        assert!(!m.text.contains('\n'));
    }
    select(&mut app, Pane::Cache, Field::Setting(Setting::Sequences));
    app.update(Action::SetText("100000".into()));
    assert_eq!(app.ws().scenario().cache.sequences, 1);
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("0".into()));
    assert_eq!(
        app.ws().scenario().machine.tiers[0].capacity.value,
        51_539_607_552
    );
    select(&mut app, Pane::Model, Field::Setting(Setting::Layers));
    app.update(Action::SetText("0".into()));
    assert_eq!(app.ws().scenario().model.layers.len(), 64);
}

#[test]
fn typing_goes_through_the_input_line() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::Edit);
    assert!(app.is_typing());
    for c in "8192".chars() {
        app.update(Action::Input(c));
    }
    app.update(Action::Submit);
    assert!(!app.is_typing());
    assert_eq!(app.ws().scenario().cache.context, 8192);
    app.update(Action::Edit);
    app.update(Action::Input('9'));
    app.update(Action::Back);
    assert_eq!(app.ws().scenario().cache.context, 8192);
    app.update(Action::Edit);
    app.update(Action::SetText("32k".into()));
    assert_eq!(app.ws().scenario().cache.context, 32_768);
}

#[test]
fn editing_a_model_figure_makes_it_user() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Model, Field::Setting(Setting::KvHeads));
    app.update(Action::SetText("4".into()));
    assert_eq!(app.ws().report().kv.bytes_per_token, 131_072);
    let rows = app.rows(Pane::Model);
    let kv = rows
        .iter()
        .find(|r| r.field == Some(Field::Setting(Setting::KvHeads)))
        .unwrap();
    assert_eq!(
        kv.tag,
        Some(llmbound::tui::fields::Tag::Prov(
            llmbound::core::units::Provenance::User
        ))
    );
    let layers = rows
        .iter()
        .find(|r| r.field == Some(Field::Setting(Setting::Layers)))
        .unwrap();
    assert_eq!(
        layers.tag,
        Some(llmbound::tui::fields::Tag::Prov(
            llmbound::core::units::Provenance::Spec
        ))
    );
    assert_eq!(
        app.ws().report().capacity.provenance,
        llmbound::core::units::Provenance::User
    );
}

#[test]
fn switching_machines_recomputes_and_shows_gpu_layers() {
    let (mut app, _d) = app();
    app.update(Action::SelectMachine("desktop-rtx-4090".into()));
    assert_eq!(app.ws().scenario().machine.id, "desktop-rtx-4090");
    assert!(
        app.rows(Pane::Cache)
            .iter()
            .any(|r| r.field == Some(Field::Setting(Setting::GpuLayers)))
    );
    select(&mut app, Pane::Cache, Field::Setting(Setting::GpuLayers));
    app.update(Action::SetText("50".into()));
    assert_eq!(app.ws().scenario().offload.gpu_layers, Some(50));
    let d = &app.ws().report().decode.full_context;
    assert!(d.overlapped_tokens_per_second > d.tokens_per_second);
    app.update(Action::SelectMachine("no-such-machine".into()));
    assert_eq!(app.ws().scenario().machine.id, "desktop-rtx-4090");
    assert!(app.message().unwrap().text.contains("unknown machine"));
}

#[test]
fn a_claim_is_checked_at_once() {
    let (mut app, _d) = app();
    app.update(Action::Search);
    assert!(app.is_typing());
    app.update(Action::SetText("12".into()));
    let c = app.claim().cloned().unwrap();
    assert!(!c.check.impossible);
    assert!(c.check.lines.iter().any(|l| l.exceeded));
    let s = screen_text(&app, 120, 36);
    assert!(s.contains("12.00 tokens/s"), "{s}");
    // A later change re-checks the same claim.
    app.update(Action::HalveContext);
    let c2 = app.claim().cloned().unwrap();
    assert_eq!(c2.check.tokens_per_second, 12.0);
    app.update(Action::Search);
    app.update(Action::SetText("fast".into()));
    assert!(app.message().unwrap().error);
}

#[test]
fn saving_a_machine_never_overwrites_silently_and_reloads() {
    let (mut app, dir) = app();
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("64 GiB".into()));
    app.update(Action::Save);
    assert!(app.is_typing());
    app.update(Action::SetText("my-mac".into()));
    let path = dir.path().join("machines/my-mac.toml");
    assert!(path.exists(), "{:?}", app.message());
    // Saving again under the same id asks first.
    app.update(Action::Save);
    app.update(Action::SetText("my-mac".into()));
    assert!(app.confirm().is_some());
    app.update(Action::No);
    assert!(app.confirm().is_none());
    app.update(Action::Save);
    app.update(Action::SetText("my-mac".into()));
    app.update(Action::Yes);
    assert!(app.message().unwrap().text.contains("saved"));
    // The next start sees it.
    let again = app_in(dir.path());
    let m = again
        .ws()
        .catalog()
        .machines
        .iter()
        .find(|m| m.id == "my-mac")
        .expect("saved machine reloads");
    assert_eq!(m.value.tiers[0].capacity.value.value, 64 << 30);
}

#[test]
fn saving_a_scenario_saves_the_edited_machine_with_it() {
    let (mut app, dir) = app();
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Bandwidth(0)),
    );
    app.update(Action::SetText("300 GB/s".into()));
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::SetText("8192".into()));
    app.update(Action::Save);
    app.update(Action::SetText("mine".into()));
    assert!(
        dir.path().join("scenarios/mine.toml").exists(),
        "{:?}",
        app.message()
    );
    assert!(dir.path().join("machines/mine.toml").exists());
    let again = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("mine".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(again.ws().scenario().cache.context, 8192);
    assert_eq!(
        again.ws().scenario().machine.tiers[0].bandwidth.value.0,
        300e9
    );
}

#[test]
fn a_broken_profile_is_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("machines")).unwrap();
    std::fs::write(
        dir.path().join("machines/broken.toml"),
        "id = \"broken\"\nname = 3\n",
    )
    .unwrap();
    let app = app_in(dir.path());
    let m = app.message().cloned().unwrap();
    assert!(m.error && m.text.contains("broken.toml"), "{}", m.text);
    assert!(app.ws().catalog().machines.iter().all(|x| x.id != "broken"));
}

#[test]
fn compare_evaluates_every_machine() {
    let (mut app, _d) = app();
    app.update(Action::Compare);
    assert_eq!(app.view(), View::Compare);
    assert_eq!(app.compare().rows.len(), app.ws().catalog().machines.len());
    assert_eq!(app.compare().rows[0].machine_id, "macbook-pro-m4-pro-48gb");
    // Sorting by the ceiling at the context puts the fastest first (column 6, after fits,
    // -ngl, free, max context and the short-context ceiling).
    for _ in 0..5 {
        app.update(Action::Right);
    }
    app.update(Action::Reverse);
    let first = app.compare().order[0];
    let best = app.compare().rows[first]
        .outcome
        .as_ref()
        .unwrap()
        .ceiling_tokens_per_second;
    assert!(
        app.compare()
            .rows
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok())
            .all(|f| f.ceiling_tokens_per_second <= best)
    );
    // Enter uses the selected machine.
    let chosen = app.compare().rows[first].machine_id.clone();
    app.update(Action::Edit);
    assert_eq!(app.view(), View::Main);
    assert_eq!(app.ws().scenario().machine.id, chosen);
}

#[test]
fn compare_helper_is_pure() {
    let (app, _d) = app();
    let machines: Vec<_> = app
        .ws()
        .catalog()
        .machines
        .iter()
        .map(|e| llmbound::profile::load::machine(&e.value))
        .collect();
    let rows = llmbound::compare::compare(app.ws().scenario(), &machines);
    assert_eq!(rows.len(), machines.len());
    let mac = rows
        .iter()
        .find(|r| r.machine_id == "macbook-pro-m4-pro-48gb")
        .unwrap();
    let f = mac.outcome.as_ref().unwrap();
    assert!(f.fits && f.optimistic_vendor);
    assert_eq!(format!("{:.2}", f.full_tokens_per_second), "9.63");
}

#[test]
fn mouse_selects_panes_and_fields() {
    let (mut app, _d) = app();
    app.update(Action::Resize(120, 36));
    // The Model pane's "KV heads" row: left column, third field row (pane top at y = 10).
    app.update(Action::Click(5, 14));
    assert_eq!(app.focus(), Pane::Model);
    assert_eq!(
        app.selected_field(Pane::Model),
        Some(Field::Setting(Setting::KvHeads))
    );
    // A click in the Bounds pane focuses it.
    app.update(Action::Click(80, 20));
    assert_eq!(app.focus(), Pane::Bounds);
    app.update(Action::Scroll(5, 14, 1));
    assert_eq!(app.focus(), Pane::Model);
}

#[test]
fn help_and_views_open_and_close() {
    let (mut app, _d) = app();
    app.update(Action::Help);
    assert!(app.help_shown());
    app.update(Action::Back);
    assert!(!app.help_shown());
    for (a, v) in [
        (Action::Tensors, View::Tensors),
        (Action::Metadata, View::Metadata),
        (Action::Compare, View::Compare),
    ] {
        app.update(a);
        assert_eq!(app.view(), v);
        app.update(Action::Back);
        assert_eq!(app.view(), View::Main);
    }
    app.update(Action::Quit);
    assert!(app.quit_requested());
}

#[test]
fn drawing_never_panics_at_any_size() {
    let (mut app, _d) = app();
    app.update(Action::Search);
    app.update(Action::SetText("30".into()));
    for view in [
        Action::Back,
        Action::Compare,
        Action::Tensors,
        Action::Metadata,
        Action::Help,
    ] {
        app.update(Action::Back);
        app.update(view);
        for (w, h) in [
            (1, 1),
            (20, 5),
            (79, 23),
            (80, 24),
            (100, 30),
            (119, 35),
            (120, 36),
            (200, 60),
            (300, 100),
        ] {
            let s = screen_text(&app, w, h);
            if w < 80 || h < 24 {
                assert!(s.contains("needs at least 80×24") || w < 40, "{w}×{h}: {s}");
            }
        }
    }
}

#[test]
fn a_long_random_walk_never_panics() {
    let (mut app, _d) = app();
    let actions = [
        Action::NextPane,
        Action::PrevPane,
        Action::Up,
        Action::Down,
        Action::Left,
        Action::Right,
        Action::Toggle,
        Action::HalveContext,
        Action::DoubleContext,
        Action::Compare,
        Action::Back,
        Action::Tensors,
        Action::Metadata,
        Action::Help,
        Action::PageDown,
        Action::End,
        Action::Home,
        Action::CancelHash,
        Action::Reverse,
        Action::Filter,
        Action::Group,
    ];
    let mut x: u64 = 0x2545F4914F6CDD1D;
    for _ in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = actions[(x % actions.len() as u64) as usize].clone();
        app.update(a);
        if x.is_multiple_of(97) {
            let _ = screen_text(&app, 120, 36);
        }
    }
    assert!(app.ws().report().decode.short_context.tokens_per_second > 0.0);
}

#[test]
fn the_keymap_parses_and_binds_the_issue_keys() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use llmbound::tui::keymap::Context;
    let k = Keymap::builtin();
    let key = |c: KeyCode| KeyEvent::new(c, KeyModifiers::NONE);
    let main = Context::Main;
    for (code, action) in [
        (KeyCode::Char('q'), Action::Quit),
        (KeyCode::Char('?'), Action::Help),
        (KeyCode::Tab, Action::NextPane),
        (KeyCode::BackTab, Action::PrevPane),
        (KeyCode::Char('h'), Action::Left),
        (KeyCode::Char('j'), Action::Down),
        (KeyCode::Char('k'), Action::Up),
        (KeyCode::Char('l'), Action::Right),
        (KeyCode::Enter, Action::Edit),
        (KeyCode::Char('['), Action::HalveContext),
        (KeyCode::Char(']'), Action::DoubleContext),
        (KeyCode::Char('t'), Action::Tensors),
        (KeyCode::Char('c'), Action::Compare),
        (KeyCode::Char('m'), Action::Metadata),
        (KeyCode::Char('s'), Action::Save),
        (KeyCode::Char('o'), Action::Open),
        (KeyCode::Char('/'), Action::Search),
        (KeyCode::Char('x'), Action::CancelHash),
        (KeyCode::Esc, Action::Back),
    ] {
        assert_eq!(k.action(&key(code), main), Some(action), "{code:?}");
    }
    assert_eq!(
        k.action(
            &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            main
        ),
        Some(Action::Quit)
    );
    assert_eq!(
        k.action(&key(KeyCode::Char('r')), Context::Tensors),
        Some(Action::Reverse)
    );
    assert_eq!(
        k.action(&key(KeyCode::Char('q')), Context::Tensors),
        Some(Action::Quit)
    );
}

#[test]
fn docs_keys_md_is_generated_from_the_keymap() {
    let want = Keymap::builtin().markdown();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/keys.md");
    if std::env::var_os("UPDATE_KEYS_DOC").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/keys.md is out of date: run with UPDATE_KEYS_DOC=1"
    );
}

// ---- snapshots: one per state, at 120×36 and 80×24 ----

fn snap(name: &str, app: &App) {
    insta::assert_snapshot!(format!("{name}_120x36"), draw(app, 120, 36));
    insta::assert_snapshot!(format!("{name}_80x24"), draw(app, 80, 24));
}

#[test]
fn snapshot_default() {
    let (app, _d) = app();
    snap("default", &app);
}

#[test]
fn snapshot_after_double_context() {
    let (mut app, _d) = app();
    app.update(Action::DoubleContext);
    snap("after_double_context", &app);
}

#[test]
fn snapshot_compare() {
    let (mut app, _d) = app();
    app.update(Action::Compare);
    snap("compare", &app);
}

#[test]
fn snapshot_help() {
    let (mut app, _d) = app();
    app.update(Action::Help);
    snap("help", &app);
}

#[test]
fn snapshot_capacity_overflow() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::SetText("262144".into()));
    assert!(!app.ws().report().capacity.fits);
    snap("capacity_overflow", &app);
}

#[test]
fn snapshot_invalid_value() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::Edit);
    app.update(Action::SetText("1000000000000000".into()));
    snap("invalid_value", &app);
}

#[test]
fn snapshot_partial_offload() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("qwen3-32b-rtx-4090-partial".into()),
            ..Default::default()
        },
    )
    .unwrap();
    snap("partial_offload", &app);
}

#[test]
fn no_color_uses_no_colour() {
    use llmbound::tui::theme::Theme;
    use ratatui::style::Color;
    let (mut app, _d) = app();
    app.set_theme(Theme { color: false });
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::SetText("262144".into()));
    for (w, h) in [(120, 36), (80, 24)] {
        let b = draw(&app, w, h);
        for c in b.buffer().content() {
            assert_eq!(c.fg, Color::Reset, "{w}×{h}: {:?}", c.symbol());
            assert_eq!(c.bg, Color::Reset);
        }
    }
    app.set_theme(Theme { color: true });
    let b = draw(&app, 120, 36);
    assert!(b.buffer().content().iter().any(|c| c.fg == Color::Red));
}

#[test]
fn snapshot_claim() {
    let (mut app, _d) = app();
    app.update(Action::Search);
    app.update(Action::SetText("15".into()));
    snap("claim", &app);
}

fn bench_fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

#[test]
fn bench_results_follow_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("qwen3-8b-synth-h200".into()),
            machine: Some("h200-measured".into()),
            ..Default::default()
        },
    )
    .unwrap();
    app.update(Action::Bench);
    let f16 = bench_fixture("h200/bench_f16.json");
    app.update(Action::SetText(f16.display().to_string()));
    assert_eq!(app.view(), View::Bench);
    assert_eq!(app.bench().impossible_rows, 0);
    let text = app.bench().lines.join("\n");
    assert!(text.contains("within"), "{text}");
    // A tenth of the bandwidth puts every decode row above its ceilings, at once (undecided:
    // the profile scenario has no tensor inventory).
    app.update(Action::Back);
    let tenth = app.ws().scenario().machine.tiers[0].bandwidth.value.0 / 10.0;
    // A stated bandwidth drops the tier's measured figure.
    app.set_field(
        llmbound::tui::fields::Field::Setting(Setting::Bandwidth(0)),
        &format!("{} GB/s", tenth / 1e9),
    );
    let text = app.bench().lines.join("\n");
    assert_eq!(
        text.matches("above (no inventory: undecided)").count(),
        3,
        "{text}"
    );
    // a broken file is a one-line message, the view keeps the last import
    app.update(Action::Bench);
    app.update(Action::SetText("/nonexistent/bench.json".into()));
    let m = app.message().unwrap();
    assert!(m.error && m.text.contains("/nonexistent/bench.json") && !m.text.contains('\n'));
    assert_eq!(app.bench().path.as_deref(), Some(f16.as_path()));
}

#[test]
fn snapshot_bench() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("qwen3-8b-synth-h200".into()),
            ..Default::default()
        },
    )
    .unwrap();
    app.update(Action::Bench);
    app.update(Action::SetText(
        "tests/fixtures/bench/h200/bench_f16.json".into(),
    ));
    snap("bench", &app);
}

#[test]
fn no_drawn_cell_holds_a_control_or_bidi_character() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("machines")).unwrap();
    let hostile = "\\u001B[2J\\u009B31m\\u202Eevil\\u2066x\\u0007";
    std::fs::write(
        dir.path().join("machines/evil.toml"),
        format!(
            "id = \"evil\"\nname = \"{hostile}\"\n[[tier]]\nname = \"{hostile}\"\nkind = \"host\"\ncapacity = {{ value = 68719476736, provenance = \"spec\", source = \"{hostile}\" }}\nbandwidth = {{ value = \"100 GB/s\", provenance = \"spec\", source = \"{hostile}\" }}\n"
        ),
    )
    .unwrap();
    let app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            machine: Some("evil".into()),
            ..ScenarioOptions::default()
        },
    )
    .unwrap();
    let b = draw(&app, 120, 36);
    let shown = b.to_string();
    assert!(shown.contains("evil"), "{shown}");
    for cell in b.buffer().content() {
        assert!(
            !cell.symbol().chars().any(llmbound::sanitize::is_unsafe),
            "cell {:?} in\n{shown}",
            cell.symbol()
        );
    }
}

#[test]
fn n_jumps_to_the_most_gpu_layers_that_fit() {
    use llmbound::core::gpu_layers::fits_at;
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions {
            scenario: Some("qwen3-32b-rtx-4090-partial".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let m = app.ws().max_gpu_layers().cloned().unwrap();
    let n = m.gpu_layers.unwrap();
    assert!(screen_text(&app, 120, 36).contains(&format!("max {n} (n)")));
    app.update(Action::MaxGpuLayers);
    assert_eq!(app.ws().scenario().offload.gpu_layers, Some(n));
    assert!(app.ws().report().capacity.fits);
    // the next layer would pass llama.cpp's 1024 MiB margin on the card (or not fit at all)
    let next = llmbound::core::gpu_layers::with_gpu_layers(app.ws().scenario(), n + 1);
    assert!(
        !fits_at(app.ws().scenario(), n + 1)
            || !llmbound::core::gpu_layers::keeps_margin(&llmbound::core::evaluate(&next).unwrap())
    );
    snap("max_gpu_layers", &app);
}

#[test]
fn compare_marks_filters_sorts_fitting_first_and_asks_before_dropping_edits() {
    let (mut app, dir) = app();
    // A saved machine is tagged in the comparison.
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("64 GiB".into()));
    app.update(Action::Save);
    app.update(Action::SetText("my-mac".into()));
    let mut app = app_in(dir.path());
    app.update(Action::Compare);
    assert!(app.compare().saved.contains(&"my-mac".to_string()));
    assert!(screen_text(&app, 120, 36).contains("my-mac (saved)"));
    // Plain column names.
    let text = screen_text(&app, 120, 36);
    for cryptic in [" tight", " slow ", " basis"] {
        assert!(!text.contains(cryptic), "{cryptic:?} in\n{text}");
    }
    // Sort by free memory: machines that fit first, those that do not after them.
    app.update(Action::Right);
    app.update(Action::Reverse);
    let fits: Vec<bool> = app
        .compare()
        .order
        .iter()
        .map(|i| {
            app.compare().rows[*i]
                .outcome
                .as_ref()
                .is_ok_and(|f| f.fits)
        })
        .collect();
    assert!(
        fits.contains(&false),
        "the default scenario does not fit everywhere"
    );
    assert!(fits.windows(2).all(|w| w[0] || !w[1]), "{fits:?}");
    // Reversed: still fitting first.
    app.update(Action::Reverse);
    let fits: Vec<bool> = app
        .compare()
        .order
        .iter()
        .map(|i| {
            app.compare().rows[*i]
                .outcome
                .as_ref()
                .is_ok_and(|f| f.fits)
        })
        .collect();
    assert!(fits.windows(2).all(|w| w[0] || !w[1]), "{fits:?}");
    // Mark three, a fourth is refused; f shows only the marked ones.
    for _ in 0..3 {
        app.update(Action::Toggle);
        app.update(Action::Down);
    }
    app.update(Action::Toggle);
    assert_eq!(app.compare().marked.len(), 3);
    assert!(app.compare().note.is_some());
    app.update(Action::Filter);
    assert_eq!(app.compare().order.len(), 3);
    snap("compare_marked", &app);
    app.update(Action::Filter);
    // `/` filters by id or name.
    app.update(Action::Search);
    assert!(app.is_typing());
    for c in "rtx".chars() {
        app.update(Action::Input(c));
    }
    assert!(!app.compare().order.is_empty());
    assert!(
        app.compare()
            .order
            .iter()
            .all(|i| app.compare().rows[*i].machine_id.contains("rtx"))
    );
    app.update(Action::Submit);
    // Columns scroll at 80: the last column is reachable.
    app.update(Action::Home);
    for _ in 0..11 {
        app.update(Action::Right);
    }
    let narrow = screen_text(&app, 80, 24);
    let header = narrow.lines().find(|l| l.starts_with("\"machine")).unwrap();
    assert!(header.contains("bandwidth"), "{narrow}");
    assert!(narrow.contains("◂"), "{narrow}");
    snap("compare_scrolled", &app);
    // Edit the machine, then choose another in compare: asked first; n keeps the edits.
    // (The first Esc clears the filter, the second leaves.)
    app.update(Action::Back);
    app.update(Action::Back);
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Bandwidth(0)),
    );
    app.update(Action::SetText("300 GB/s".into()));
    let edited = app.ws().scenario().machine.clone();
    app.update(Action::Compare);
    let other = app
        .compare()
        .order
        .iter()
        .position(|i| app.compare().rows[*i].machine_id != app.ws().scenario().machine.id)
        .unwrap();
    while app.compare().selected != other {
        app.update(Action::Down);
    }
    app.update(Action::Edit);
    assert!(app.compare_switch().is_some());
    assert!(screen_text(&app, 120, 36).contains("unsaved edits are dropped"));
    app.update(Action::No);
    assert_eq!(app.ws().scenario().machine, edited);
    assert_eq!(app.view(), View::Compare);
    app.update(Action::Edit);
    app.update(Action::Yes);
    assert_ne!(app.ws().scenario().machine.id, edited.id);
    assert_eq!(app.view(), View::Main);
}

#[test]
fn model_pane_refuses_impossible_kv_heads_and_says_why_in_the_pane() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Model, Field::Setting(Setting::KvHeads));
    app.update(Action::SetText("3".into()));
    assert_eq!(
        app.ws().scenario().model.layers[0].head_count_kv,
        8,
        "refused, kept"
    );
    let why = app.model_refusal().map(str::to_string).unwrap();
    assert!(why.contains("does not divide the 64 query heads"), "{why}");
    app.update(Action::SetText("100".into()));
    let why = app.model_refusal().map(str::to_string).unwrap();
    assert!(why.contains("more than the 64 query heads"), "{why}");
    let text = screen_text(&app, 120, 36);
    assert!(text.contains("refused"), "{text}");
    assert!(text.contains("more than the 64 query"), "{text}");
    snap("model_refused", &app);
    // A valid edit clears the reason.
    app.update(Action::SetText("16".into()));
    assert!(app.model_refusal().is_none());
    assert_eq!(app.ws().scenario().model.layers[0].head_count_kv, 16);
}

#[test]
fn a_window_typed_on_qwen3_is_shown_as_not_applied() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Model, Field::Setting(Setting::Window));
    app.update(Action::SetText("4096".into()));
    let rows = app.rows(Pane::Model);
    let w = rows
        .iter()
        .find(|r| r.field == Some(Field::Setting(Setting::Window)))
        .unwrap();
    assert_eq!(w.value, "4,096 not applied");
    assert!(screen_text(&app, 120, 36).contains("window     4,096 not applied"));
}

#[test]
fn a_saved_machine_keeps_its_product_name_and_notes_its_edits() {
    let (mut app, dir) = app();
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("64 GiB".into()));
    let name = app.ws().machine_profile("x").name;
    assert_eq!(
        name,
        "MacBook Pro 14-inch (2024), M4 Pro, 48 GB unified memory (edited: unified 64.000 GiB)"
    );
    app.update(Action::Save);
    app.update(Action::SetText("my-mac".into()));
    // Reloaded and edited again: the note follows the edits, never piles up or goes stale.
    let mut app = app_in(dir.path());
    app.select_machine("my-mac");
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("96 GiB".into()));
    let name = app.ws().machine_profile("my-mac").name;
    assert_eq!(
        name,
        "MacBook Pro 14-inch (2024), M4 Pro, 48 GB unified memory (edited: unified 96.000 GiB)"
    );
}

#[test]
fn compare_keeps_the_saved_tag_of_a_long_id_at_80_columns() {
    let (mut app, dir) = app();
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("64 GiB".into()));
    app.update(Action::Save);
    app.update(Action::SetText("macbook-pro-m4-pro-48gb-with-64gib".into()));
    let mut app = app_in(dir.path());
    app.update(Action::Compare);
    // Every machine fits at its own placement now, so the saved one may sit below the fold:
    // filter to it.
    app.update(Action::Search);
    for c in "with-64".chars() {
        app.update(Action::Input(c));
    }
    app.update(Action::Submit);
    let text = screen_text(&app, 80, 24);
    // The id is cut (the -ngl column takes its share), never the tag.
    let row = text
        .lines()
        .find(|l| l.contains("macbook-pro-m"))
        .unwrap_or("");
    assert!(row.contains("… (saved)"), "{text}");
}

/// Claims are read as people paste them: llama.cpp's own "t/s", "tok/s", "tokens/s".
#[test]
fn claims_take_the_units_people_paste() {
    let (mut app, _d) = app();
    for text in ["30", "30 t/s", "30t/s", "30tok/s", "30 tokens/s", "30 TPS"] {
        app.update(Action::Search);
        app.update(Action::SetText(text.into()));
        let c = app
            .claim()
            .unwrap_or_else(|| panic!("{text}: {:?}", app.message()));
        assert_eq!(c.check.tokens_per_second, 30.0, "{text}");
    }
    app.update(Action::Search);
    app.update(Action::SetText("thirty".into()));
    assert!(app.message().is_some_and(|m| m.error));
}

/// A message wider than the status line ends in "…"; `@` opens every message of the session
/// in full (a refused model edit's long reason included), scrolls, and closes with Esc.
#[test]
fn the_message_log_keeps_every_message_in_full() {
    let (mut app, _d) = app();
    app.update(Action::Resize(80, 24));
    app.update(Action::MaxContext);
    assert!(app.message().is_some());
    app.set_field(Field::Setting(Setting::KvHeads), "9");
    let long = app.message().cloned().unwrap();
    assert!(long.error && long.text.chars().count() > 80, "{long:?}");
    let bottom = screen_text(&app, 80, 24);
    let status = bottom.lines().nth(23).unwrap().trim_matches('"').trim_end();
    assert!(status.ends_with('…'), "{status}");
    app.update(Action::Messages);
    assert!(app.modal() != &llmbound::tui::app::Modal::None);
    let log = app.log();
    assert!(log.len() >= 2, "{log:?}");
    assert_eq!(log.last().unwrap().text, long.text);
    insta::assert_snapshot!("message_log_80x24", draw(&app, 80, 24));
    let shown = screen_text(&app, 80, 24).replace(['│', '"', '\n'], " ");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&shown).contains(&words(&long.text)), "{shown}");
    app.update(Action::Home);
    insta::assert_snapshot!("message_log_top_120x36", draw(&app, 120, 36));
    app.update(Action::Back);
    assert_eq!(app.modal(), &llmbound::tui::app::Modal::None);
}

/// Issue 19, compare: the cursor starts on the machine in use, which is marked unlike the
/// cursor (◆, named in the legend); `/` matches only the text the machine column shows and
/// Esc clears it; a sorted column keeps its header whole; rows are never sorted by a hidden
/// column; `row x of N`; the legend names only columns on screen; no line repeats the
/// footer's keys.
#[test]
fn compare_starts_on_the_machine_in_use_and_reads_as_shown() {
    let (mut app, _d) = app();
    // A machine that does not fit sits below those that fit: not on the first row.
    app.select_machine("epyc-zen5-2vcpu-vm");
    app.update(Action::Compare);
    let c = app.compare();
    assert_ne!(c.order.len(), 0);
    assert_eq!(c.selected_machine().as_deref(), Some("epyc-zen5-2vcpu-vm"));
    assert!(c.selected > 0, "the machine in use is not on row 1 here");
    let wide = screen_text(&app, 120, 36);
    assert!(!wide.contains('▶'), "{wide}");
    assert!(wide.contains("◆ epyc-zen5-2vcpu-vm"), "{wide}");
    assert!(wide.contains("◆ in use"), "{wide}");
    assert!(
        wide.contains(&format!("row {} of {}", c.selected + 1, c.order.len())),
        "{wide}"
    );
    // The legend at 80 columns names no column that is off screen or hidden.
    let narrow = screen_text(&app, 80, 24);
    for off in ["every byte:", "spec*", "bandwidth"] {
        assert!(!narrow.contains(off), "{off:?} in\n{narrow}");
    }
    // The keys are said once, in the footer.
    let big = screen_text(&app, 200, 50);
    assert_eq!(big.matches("marked only").count(), 1, "{big}");

    // Sorted by the short-context column: its header keeps its first letter.
    for _ in 0..5 {
        app.update(Action::Right);
    }
    app.update(Action::Reverse);
    assert!(app.compare().sort.is_some());
    let wide = screen_text(&app, 120, 36);
    assert!(wide.contains("short ctx↓"), "{wide}");
    // Hiding it drops the sort; r on a hidden column does not sort by it.
    app.update(Action::HideColumn);
    assert_eq!(app.compare().sort, None);
    app.update(Action::Reverse);
    assert_eq!(app.compare().sort, None);
    assert!(
        app.compare()
            .note
            .as_deref()
            .unwrap_or("")
            .contains("hidden")
    );
    app.update(Action::HideColumn);

    // A word of a machine's name that no column shows matches nothing.
    app.update(Action::Search);
    for ch in "geforce".chars() {
        app.update(Action::Input(ch));
    }
    app.update(Action::Submit);
    assert!(app.compare().order.is_empty(), "{:?}", app.compare().order);
    // Esc clears the filter and stays in the view; again, it leaves.
    app.update(Action::Back);
    assert_eq!(app.view(), View::Compare);
    assert!(app.compare().filter.is_empty());
    assert_eq!(app.compare().order.len(), app.compare().rows.len());
    app.update(Action::Back);
    assert_eq!(app.view(), View::Main);
}

/// Issue 19: after `s` saves the machine, the header no longer says "edited" and choosing
/// another machine in compare asks nothing; the saved name keeps the product's name.
#[test]
fn a_saved_machine_is_no_longer_edited() {
    let (mut app, _d) = app();
    select(
        &mut app,
        Pane::Machine,
        Field::Setting(Setting::Capacity(0)),
    );
    app.update(Action::SetText("40 GiB".into()));
    assert!(app.title().contains("edited"));
    app.update(Action::Save);
    app.update(Action::SetText("my-mac".into()));
    assert!(!app.title().contains("edited"), "{}", app.title());
    // The header names the saved machine, not the scenario's 48 GiB one.
    assert!(app.title().contains("my-mac"), "{}", app.title());
    assert!(
        !screen_text(&app, 80, 24)
            .lines()
            .next()
            .unwrap()
            .contains("edited")
    );
    let saved = (app.ws().catalog().machines.iter())
        .find(|e| e.id == "my-mac")
        .map(|e| e.value.name.clone())
        .unwrap();
    assert!(
        saved.starts_with("MacBook Pro 14-inch (2024), M4 Pro, 48 GB unified memory (edited: "),
        "{saved}"
    );
    app.update(Action::Compare);
    while app.compare().selected_machine().as_deref() == Some("my-mac") {
        app.update(Action::Down);
    }
    app.update(Action::Edit);
    assert!(app.compare_switch().is_none());
    assert_eq!(app.view(), View::Main);
}

/// Issue 19: `?` shows the keys of the view it is opened from first.
#[test]
fn help_opens_on_the_views_own_keys() {
    let (mut app, _d) = app();
    app.update(Action::Compare);
    app.update(Action::Help);
    let text = screen_text(&app, 80, 24);
    let first = text.lines().nth(1).unwrap_or("");
    assert!(first.contains("Compare machines (c) · this view"), "{text}");
    app.update(Action::Back);
    app.update(Action::Back);
    app.update(Action::Help);
    let text = screen_text(&app, 80, 24);
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or("")
            .contains("Panes · this view"),
        "{text}"
    );
}

/// (Issue 19, header slips) An edited scenario's title says "edited" first (a narrow title
/// cuts the machine id, not that word) and counts in words that agree with the numbers.
#[test]
fn the_edited_title_leads_with_edited_and_agrees_in_number() {
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.update(Action::HalveContext);
    let title = app.title();
    assert!(title.starts_with("edited · "), "{title}");
    assert!(title.contains(" tokens × 1 sequence · "), "{title}");
    assert!(!title.contains("  "), "{title}");
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    t.draw(|f| f.render_widget(&app, f.area())).unwrap();
    let top = t.backend().to_string();
    let first = top.lines().next().unwrap_or("");
    assert!(first.contains("edited · "), "{first}");
}

/// (Issue 19, no number in two formats) A compare column keeps one format: with the H200's
/// five-digit ceiling in it, every rate of that column is whole (`4,088`, never `4,087.79`
/// beside `17,657`).
#[test]
fn a_compare_column_keeps_one_number_format() {
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions {
            model: Some("gemma-3-270m".into()),
            ..ScenarioOptions::default()
        },
    )
    .unwrap();
    app.update(Action::Compare);
    let s = screen_text(&app, 200, 50);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("yes")).collect();
    assert!(rows.len() > 10, "{s}");
    let five_digit = regex::Regex::new(r"\b[0-9]{2},[0-9]{3}\b").unwrap();
    assert!(rows.iter().any(|l| five_digit.is_match(l)), "{s}");
    // No rate cell with decimals beside a whole five-digit one: the ceilings here are all
    // whole numbers.
    let decimals = regex::Regex::new(r"[0-9],[0-9]{3}\.[0-9]{2}\b").unwrap();
    for l in &rows {
        assert!(!decimals.is_match(l), "{l}\n{s}");
    }
}
