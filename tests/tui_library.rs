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
    app.set_hash_cache(None);
    app.set_library_roots(stores(root));
    app.update(Action::Resize(120, 36));
    app.update(Action::Library);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.view(), View::Library);
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
    assert!(!app.library().scanning());
    assert_eq!(app.library().rows.len(), 3);
    snap("library", &app);

    // Rows follow the context: a larger context means a lower ceiling at N.
    let before = app.library().rows[0].outcome.clone().unwrap();
    app.update(Action::DoubleContext);
    let after = app.library().rows[0].outcome.clone().unwrap();
    assert!(after.full_tokens_per_second < before.full_tokens_per_second);
    assert!(column(&app, "ctx 8,192").contains("Library"));

    // Sort by name, then open the selected model with Enter.
    while app.library().sort != llmbound::library::SortKey::Name {
        app.update(Action::Reverse);
    }
    let names: Vec<String> = app
        .library()
        .rows
        .iter()
        .map(|r| app.library().scanned[r.index].found.name.clone())
        .collect();
    assert_eq!(names, ["Big/big-Q8_0.gguf", "small-Q8_0.gguf", "tiny:3b"]);
    app.update(Action::End);
    app.update(Action::Edit);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.view(), View::Main);
    let blob = d.path().join(format!("ollama/blobs/sha256-{SHA}"));
    assert_eq!(
        app.ws().report().artifact.bytes,
        std::fs::metadata(&blob).unwrap().len()
    );
    assert_eq!(app.ws().scenario().model.layers.len(), 3);
}

fn type_line(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(Action::Input(c));
    }
}

#[test]
fn a_folder_the_user_names_is_added_to_the_library() {
    let d = tempfile::tempdir().unwrap();
    let mut app = app(d.path());
    assert_eq!(app.library().rows.len(), 3);
    // A folder with two more models, one of them a copy of a model listed already through a
    // link (listed once), and a folder inside the one searched already.
    let more = d.path().join("extra models");
    std::fs::create_dir_all(more.join("sub")).unwrap();
    fixtures::tiny("Extra One", 5)
        .write_file(&more.join("extra-one-Q8_0.gguf"), Data::Zeros)
        .unwrap();
    fixtures::tiny("Extra Two", 6)
        .write_file(&more.join("sub/extra-two-Q8_0.gguf"), Data::Zeros)
        .unwrap();
    std::os::unix::fs::symlink(
        d.path().join("models/small-Q8_0.gguf"),
        more.join("same-as-small.gguf"),
    )
    .unwrap();

    // `a` asks for the folder; Tab completes it; Enter scans it on a worker.
    app.update(Action::AddFolder);
    let prompt = draw(&app, 120, 36).to_string();
    assert!(prompt.contains("add a folder of GGUF models"), "{prompt}");
    type_line(&mut app, &format!("{}/ex", d.path().display()));
    app.update(Action::Complete);
    assert_eq!(
        app.input().unwrap().text,
        format!("{}/extra models/", d.path().display())
    );
    app.update(Action::Submit);
    assert!(app.input().is_none());
    app.wait_for_jobs(Duration::from_secs(30));
    assert!(!app.library().scanning());
    let mut names: Vec<String> = app
        .library()
        .rows
        .iter()
        .map(|r| app.library().scanned[r.index].found.name.clone())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "Big/big-Q8_0.gguf",
            "extra-one-Q8_0.gguf",
            "small-Q8_0.gguf",
            "sub/extra-two-Q8_0.gguf",
            "tiny:3b"
        ]
    );
    let s = draw(&app, 120, 36).to_string();
    assert!(s.contains("Library · row 1 of 5 "), "{s}");
    assert!(s.contains("extra models: 2 more models"), "{s}");
    // That is news until the next key in the library, and when the view opens again.
    app.update(Action::Down);
    assert_eq!(app.library().note, None);
    app.update(Action::Home);
    // The new rows follow the scenario like the others.
    let row = column(&app, "extra-one-Q8_0.gguf");
    app.update(Action::DoubleContext);
    assert_ne!(column(&app, "extra-one-Q8_0.gguf"), row);

    // The same folder again, and a name that is not a folder: one line each, nothing scanned.
    for (text, want) in [
        (format!("{}", more.display()), "in the library already"),
        ("/no/such/folder".to_string(), "is not a folder"),
    ] {
        app.update(Action::AddFolder);
        type_line(&mut app, &text);
        app.update(Action::Submit);
        assert!(!app.library().scanning());
        let m = app.message().cloned().expect("a message");
        assert!(m.error && m.text.contains(want), "{}", m.text);
    }
    assert_eq!(app.library().rows.len(), 5);
    // Nothing was written: the configuration folder stays as it was.
    assert!(!d.path().join("config").exists());
}

/// The keys as a person presses them: `L` opens the library from anywhere, `a` in it asks for
/// a folder; `l` stays the vim-style → of the panes, tensor and compare views (hjkl).
#[test]
fn the_library_keys() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use llmbound::tui::keymap::{Context, Keymap};
    let k = Keymap::builtin();
    let key = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    for ctx in Context::ALL {
        if ctx != Context::Global {
            assert_eq!(k.action(&key('L'), ctx), Some(Action::Library), "{ctx:?}");
        }
    }
    assert_eq!(
        k.action(&key('a'), Context::Library),
        Some(Action::AddFolder)
    );
    assert_eq!(k.action(&key('a'), Context::Main), None);
    for ctx in [Context::Main, Context::Tensors, Context::Compare] {
        assert_eq!(k.action(&key('l'), ctx), Some(Action::Right), "{ctx:?}");
    }
}

#[test]
fn a_folder_added_before_the_first_scan_ends_is_scanned_too() {
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().join("config"))),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_library_roots(stores(d.path()));
    let more = d.path().join("more");
    std::fs::create_dir_all(&more).unwrap();
    fixtures::tiny("Extra", 4)
        .write_file(&more.join("extra-Q8_0.gguf"), Data::Zeros)
        .unwrap();
    app.update(Action::Library);
    // While the first scan runs (or before it is polled), a folder is added.
    app.update(Action::AddFolder);
    type_line(&mut app, &more.display().to_string());
    app.update(Action::Submit);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.library().rows.len(), 4, "{:?}", app.library().problems);
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
    app.set_library_roots(vec![(Store::Folder, empty.clone())]);
    app.update(Action::Library);
    app.wait_for_jobs(Duration::from_secs(30));
    let s = draw(&app, 120, 36).to_string();
    assert!(s.contains("no GGUF models in"), "{s}");
    // (Issue 19) The title says the list is empty, not "row 0 of 0".
    assert!(s.contains("Library · no models · "), "{s}");
    assert!(!s.contains("row 0 of 0"), "{s}");
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

/// Kills the tmux session when the test ends, however it ends.
struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let o = std::process::Command::new("tmux")
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", &self.0];
        a.extend(keys);
        self.run(&a);
    }
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.0])
    }
    fn wait_for(&self, text: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "\"{text}\" did not appear:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .output();
    }
}

/// `a` in the library view of the real binary in tmux: type a folder, Tab-complete it, Enter;
/// its model is listed and opens in the panes (LLMBOUND_E2E=1 and tmux; otherwise skipped).
#[test]
fn adding_a_folder_end_to_end_in_tmux() {
    if std::env::var("LLMBOUND_E2E").ok().as_deref() != Some("1") {
        skipped!("set LLMBOUND_E2E=1 to run the library's add-a-folder check in tmux");
        return;
    }
    if !std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skipped!("tmux is not on PATH");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("my-models");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = fixtures::tiny("Mine", 3)
        .write_file(&dir.join("mine-Q8_0.gguf"), Data::Zeros)
        .unwrap();
    let t = Tmux(format!("llmbound-i12-add-{}", std::process::id()));
    let h = home.path().display().to_string();
    let cmd = format!(
        "env -u LLAMA_CACHE -u OLLAMA_MODELS -u XDG_CACHE_HOME -u HF_HOME -u HF_HUB_CACHE -u LLMBOUND_AUTO_HASH HOME='{h}' LLMBOUND_CONFIG_DIR='{h}/config' NO_COLOR=1 '{}' --machine epyc-zen5-2vcpu-vm -c 4096",
        env!("CARGO_BIN_EXE_llmbound")
    );
    t.run(&[
        "new-session",
        "-d",
        "-s",
        &t.0,
        "-x",
        "120",
        "-y",
        "36",
        &cmd,
    ]);
    t.wait_for("Artifact");
    t.keys(&["L"]);
    t.wait_for("no model folders on this machine");
    t.keys(&["a"]);
    t.wait_for("add a folder of GGUF models");
    t.keys(&["-l", &format!("{h}/my-mo")]);
    t.keys(&["Tab"]);
    t.wait_for("my-models/");
    t.keys(&["Enter"]);
    t.wait_for("1 more model");
    let s = t.wait_for("Library · row 1 of 1 ");
    assert!(s.contains("mine-Q8_0.gguf"), "{s}");
    t.keys(&["Enter"]);
    t.wait_for(&format!(
        "{} bytes",
        llmbound::core::units::group_digits(bytes as u128)
    ));
    t.keys(&["q"]);
}

/// Issue 19, library: an error row shows its file name and reason; Enter on it shows the
/// whole reason and stays in the library; sizes in a unit that shows them (never
/// `0.000 GB`); `row x of N`; the open model is marked; at 80×24 the title and the line
/// under the table end in "…" when cut, and the hidden columns are named.
#[test]
fn library_rows_say_what_they_are() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("models/broken-Q4_K_M.gguf");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, b"GGUF\x03\x00\x00\x00").unwrap();
    let mut app = app(d.path());
    assert_eq!(app.library().rows.len(), 4);
    let at = |app: &App| {
        app.library()
            .rows
            .iter()
            .position(|r| r.outcome.is_err())
            .unwrap()
    };
    let wide = column(&app, "broken-Q4_K_M.gguf");
    assert!(wide.contains("error: "), "{wide}");
    let text = draw(&app, 80, 24).to_string();
    assert!(!text.contains("0.000 GB"), "{text}");
    assert!(text.contains(" MiB") && !text.contains(" GB "), "{text}");
    assert!(text.contains("row 1 of 4"), "{text}");
    assert!(text.contains("store, arch"), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("broken-Q4_K_M.gguf"))
        .unwrap();
    assert!(row.contains("error: "), "{text}");
    // The line under the table fits 80 columns, or ends in "…".
    let under = text.lines().rev().nth(1).unwrap();
    assert!(under.ends_with(" \"") || under.ends_with("…\""), "{text}");
    // Enter on the error row: the whole reason, over the library.
    let n = at(&app);
    app.update(Action::Home);
    for _ in 0..n {
        app.update(Action::Down);
    }
    app.update(Action::Edit);
    assert_eq!(app.view(), View::Library);
    let m = app.message().unwrap();
    assert!(
        m.error && m.text.contains("broken-Q4_K_M.gguf"),
        "{}",
        m.text
    );
    assert!(matches!(app.modal(), llmbound::tui::app::Modal::Log(_)));
    app.update(Action::Back);
    // Open a good model; back in the library its row is marked.
    app.update(Action::Home);
    let good = app.library().selected_path().unwrap();
    app.update(Action::Edit);
    app.wait_for_jobs(Duration::from_secs(30));
    assert_eq!(app.view(), View::Main);
    app.update(Action::Library);
    app.wait_for_jobs(Duration::from_secs(30));
    let name = app.library().scanned[app.library().rows[0].index]
        .found
        .name
        .clone();
    let text = draw(&app, 120, 36).to_string();
    let row = text.lines().find(|l| l.contains(&name)).unwrap();
    assert!(row.contains("◆ "), "{good:?}\n{text}");
    assert!(text.contains("◆ open"), "{text}");
}
