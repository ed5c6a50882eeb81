//! The bench view's header and status line say what the report's verdict says: a header
//! never calls every row within while the lines under it count rows above every ceiling
//! (the default scenario, Qwen3-32B on the M4 Pro, holds the H200's Qwen3-8B rows: every
//! decode row is above every ceiling computed from file bytes).

use llmbound::build::ScenarioOptions;
use llmbound::profile::Catalog;
use llmbound::tui::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bench")
        .join(rel)
}

#[test]
fn header_and_verdict_agree_when_rows_are_above_every_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(dir.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.import_bench(fixture("h200/bench_f16.json"));
    let headline = app.bench().headline.clone();
    assert!(
        headline.starts_with("3 of 3 decode rows are above every ceiling"),
        "{headline}"
    );
    assert!(!app.bench().all_within);
    // The report's verdict line (last lines of the text) is the same sentence.
    assert!(
        app.bench().lines.iter().any(|l| l.contains(&headline)),
        "{:?}",
        app.bench().lines
    );
    let mut t = Terminal::new(TestBackend::new(200, 36)).unwrap();
    t.draw(|f| f.render_widget(&app, f.area())).unwrap();
    let screen = t.backend().to_string();
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("3 of 3 decode rows are above every ceiling"),
        "{header}"
    );
    for contradiction in ["within its highest ceiling", "at or below"] {
        assert!(!screen.contains(contradiction), "{screen}");
    }
    let m = app.message().cloned().unwrap();
    assert_eq!(m.text, headline);
}

#[test]
fn header_says_within_only_when_every_row_is() {
    let cat = Catalog::builtin();
    let s = llmbound::profile::load::scenario(&cat, &cat.scenario("qwen3-8b-synth-h200").unwrap())
        .unwrap();
    let text = std::fs::read_to_string(fixture("h200/bench_f16.json")).unwrap();
    let rows = llmbound::bench::parse_str("bench_f16.json", &text).unwrap();
    let r = llmbound::bench::evaluate(&rows, &s, &Default::default());
    assert!(r.all_within());
    assert_eq!(
        llmbound::bench::headline(&r),
        "all 3 decode rows are below every ceiling"
    );
}
