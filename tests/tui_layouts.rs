//! The explorer's screens at the four sizes the layout is designed for (80×24, 100×30,
//! 120×36, 200×50): the main view (worked example; four sequences; the real gemma file open),
//! the compare view, and the tensor and metadata views of the gemma file. Each is an insta
//! snapshot drawn into ratatui's `TestBackend`. The gemma states need LLMBOUND_GEMMA_GGUF and
//! say so when skipped.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Setting;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::{App, View};
use llmbound::tui::fields::{Field, Pane};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::PathBuf;
use std::time::Duration;

const SIZES: [(u16, u16); 4] = [(80, 24), (100, 30), (120, 36), (200, 50)];

fn app() -> (App, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let mut app = App::new(
        Catalog::load_with(Some(d.path().to_path_buf())),
        &ScenarioOptions::default(),
    )
    .unwrap();
    app.set_hash_cache(None);
    (app, d)
}

fn gemma_app() -> Option<(App, tempfile::TempDir)> {
    let Ok(p) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!("set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF");
        return None;
    };
    let (mut app, d) = app();
    app.update(Action::OpenPath(PathBuf::from(p)));
    app.wait_for_jobs(Duration::from_secs(60));
    assert!(app.file().loaded.is_some(), "the gemma file opens");
    Some((app, d))
}

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
}

/// The snapshot, also written to LLMBOUND_DUMP_SCREENS/<name>.txt when that is set (to read
/// every screen without insta).
fn snap(name: String, s: String) {
    if let Ok(dir) = std::env::var("LLMBOUND_DUMP_SCREENS") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(format!("{dir}/{name}.txt"), &s);
    }
    insta::assert_snapshot!(name, s);
}

fn select(app: &mut App, pane: Pane, field: Field) {
    for _ in 0..6 {
        if app.focus() == pane {
            break;
        }
        app.update(Action::NextPane);
    }
    app.update(Action::Home);
    for _ in 0..40 {
        if app.selected_field(pane) == Some(field) {
            return;
        }
        app.update(Action::Down);
    }
    panic!("field {field:?} not found in {pane:?}");
}

fn snap_all(name: &str, app: &App) {
    for (w, h) in SIZES {
        snap(format!("{name}_{w}x{h}"), draw(app, w, h));
    }
}

#[test]
fn main_view() {
    let (app, _d) = app();
    snap_all("main", &app);
    for (w, h) in SIZES {
        let s = draw(&app, w, h);
        // What the issue found: labels running into text, a cut title, tabs into a box.
        for bad in [
            "rate)0",
            "rate)13T",
            "cacheroofline",
            "overlap      0",
            "Machine╭",
            "output+▒",
        ] {
            assert!(!s.contains(bad), "{w}x{h}: {bad:?} in\n{s}");
        }
        assert!(
            s.contains("Qwen3-32B Q4_K_M on a 48 GiB M4 Pro, 32,768 tokens, f16 cache"),
            "{w}x{h}: title cut\n{s}"
        );
        assert!(s.contains("9.63"), "{w}x{h}: the full-context ceiling\n{s}");
        // The claim hint is never cut.
        assert!(s.contains("Check a claim"), "{w}x{h}\n{s}");
        if w >= 120 {
            // The prefill intensity stays on its line.
            assert!(s.contains("prefill 1,662 (S=512)"), "{w}x{h}\n{s}");
        }
    }
}

#[test]
fn main_view_four_sequences() {
    let (mut app, _d) = app();
    select(&mut app, Pane::Cache, Field::Setting(Setting::Sequences));
    app.update(Action::SetText("4".into()));
    assert_eq!(app.ws().scenario().cache.sequences, 4);
    snap_all("main_four_sequences", &app);
    let s = draw(&app, 120, 36);
    for needle in [
        "Σ tok/s",
        "ms/step",
        "× 4 sequences",
        "per sequence × 4",
        "per sequence @ 32,768: 5.04 tokens/s",
    ] {
        assert!(s.contains(needle), "missing {needle:?}\n{s}");
    }
}

#[test]
fn compare_view() {
    let (mut app, _d) = app();
    app.update(Action::Compare);
    assert_eq!(app.view(), View::Compare);
    snap_all("compare", &app);
}

#[test]
fn main_view_with_the_gemma_file() {
    let Some((app, _d)) = gemma_app() else {
        return;
    };
    snap_all("main_gemma", &app);
    let s = draw(&app, 120, 36);
    // The per-type table: values under their headers, tiny totals in a unit that shows them.
    assert!(s.contains("type  tensors       bytes  share    b/w"), "{s}");
    assert!(s.contains("F32       109 218.500 KiB   0.1%  32.00"), "{s}");
    assert!(!s.contains("0.000 GiB"), "{s}");
}

#[test]
fn tensors_view() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    app.update(Action::Tensors);
    assert_eq!(app.view(), View::Tensors);
    snap_all("tensors", &app);
    // The header keeps every part whole at every size (it ended "(←→ r) · all types" at 80).
    for (w, h) in [(80, 24), (100, 30), (120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        let head = s.lines().next().unwrap_or("");
        assert!(
            {
                let h = head.trim_end_matches('"').trim_end();
                h.ends_with("group none") || h.ends_with("group none (Enter)")
            },
            "{w}x{h}: {head}"
        );
    }
    // A name longer than its column ends in "…", never cut silently.
    for (w, h) in [(80, 24), (100, 30), (120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        for l in s.lines().filter(|l| l.contains("post_attention_n")) {
            assert!(
                l.contains("post_attention_norm.weight ") || l.contains('…'),
                "{w}x{h}: {l}"
            );
        }
    }
}

#[test]
fn metadata_view() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    app.update(Action::Metadata);
    assert_eq!(app.view(), View::Metadata);
    snap_all("metadata", &app);
    // A long array's row says what Enter does, whole, at 100 columns and up (it was cut at
    // "Enter lo" at 120).
    for (w, h) in [(100, 30), (120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        let row = s
            .lines()
            .find(|l| l.contains("tokenizer.ggml.tokens "))
            .unwrap_or_else(|| panic!("{w}x{h}: no tokens row\n{s}"));
        assert!(
            row.contains("4,412,518 bytes unread · Enter loads"),
            "{w}x{h}: {row}"
        );
    }
}

#[test]
fn main_view_at_the_largest_context() {
    let (mut app, _d) = app();
    for _ in 0..40 {
        app.update(Action::DoubleContext);
    }
    let n = app.ws().scenario().cache.context;
    snap_all("main_largest_context", &app);
    let s = draw(&app, 120, 36);
    for bad in ["524288", "524258.405", "0.00 2062160.13", "1048576k"] {
        assert!(!s.contains(bad), "{bad:?}\n{s}");
    }
    assert!(s.contains("2,062,160"), "{s}");
    // The slider stays on screen at the maximum, its knob at the right end.
    let s = draw(&app, 120, 36);
    assert!(s.contains("━●"), "{s}");
    assert!(n >= 1 << 20, "{n}");
    // The warnings fold so both charts keep rows to draw in (at 120×36 the decode chart had
    // two rows and with more warnings none).
    for (w, h) in [(120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        let lines: Vec<&str> = s.lines().collect();
        let decode = lines
            .iter()
            .position(|l| l.contains(" by context"))
            .unwrap_or_else(|| panic!("{w}x{h}: no decode chart\n{s}"));
        let roof = lines
            .iter()
            // With no compute rate the second chart is titled as a bandwidth slope.
            .position(|l| {
                l.contains("roofline") || l.contains("slope only") || l.contains("y FLOP/s")
            })
            .unwrap_or_else(|| panic!("{w}x{h}: no roofline chart\n{s}"));
        let roof_axis = (roof..lines.len())
            .find(|&i| lines[i].contains("└─"))
            .unwrap_or(roof);
        assert!(
            roof - decode >= 7 && roof_axis - roof >= 4,
            "{w}x{h}: charts squeezed\n{s}"
        );
        assert!(s.contains("! context 2,147,483,648 is beyond"), "{s}");
    }
}

fn claim(app: &mut App, text: &str) {
    for _ in 0..6 {
        if app.focus() == Pane::Claim {
            break;
        }
        app.update(Action::NextPane);
    }
    app.update(Action::SetText(text.into()));
    assert!(app.claim().is_some(), "claim {text} taken");
}

fn snap_two(name: &str, app: &App) {
    for (w, h) in [(80, 24), (120, 36)] {
        snap(format!("{name}_{w}x{h}"), draw(app, w, h));
    }
}

#[test]
fn claims_without_a_file() {
    let (mut app, _d) = app();
    claim(&mut app, "12");
    snap_two("claim_12_without_file", &app);
    // 12 tokens/s is above every 32,768-token ceiling but within the short-context one: the
    // headline names the context and says so, never "above every ceiling".
    let s = draw(&app, 120, 36);
    assert!(
        s.contains("12.00 tokens/s checked at 32,768 tokens retained, spec bandwidth 273 GB/s"),
        "{s}"
    );
    assert!(
        s.contains("within it with at most 11,397 tokens retained"),
        "{s}"
    );
    assert!(!s.contains("above every ceiling"), "{s}");
    claim(&mut app, "500");
    snap_two("claim_500_without_file", &app);
    // Above every line, the short-context one included: the headline gives the 32,768-token
    // figure with its context and the short-context one (it read 9.63 alone, over a line of
    // 13.81 the rate also exceeds).
    let s = draw(&app, 200, 50);
    assert!(
        s.contains(
            "above every ceiling computed without a tensor inventory (13.81 tokens/s at a short context, 9.63 at 32,768 tokens)"
        ),
        "{s}"
    );
    // Esc dismisses the result.
    app.update(Action::Back);
    assert!(app.claim().is_none());
}

#[test]
fn claims_with_the_gemma_file() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    for tps in ["10", "500", "5000"] {
        claim(&mut app, tps);
        snap_two(&format!("claim_{tps}_gemma"), &app);
    }
}

#[test]
fn a_measured_bandwidth_is_not_also_measured_none() {
    let (mut app, _d) = app();
    app.select_machine("epyc-zen5-2vcpu-vm");
    let s = draw(&app, 120, 36);
    assert!(s.contains("64.5 GB/s"), "{s}");
    assert!(!s.contains("measured   none"), "{s}");
    assert!(s.contains("the bandwidth above"), "{s}");
}

#[test]
fn the_current_context_line_meets_the_curve_at_4k_and_8k() {
    let (mut app, _d) = app();
    for (text, n) in [("4096", "4,096"), ("8192", "8,192")] {
        select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
        app.update(Action::SetText(text.into()));
        let s = draw(&app, 120, 36);
        assert!(s.contains(&format!("file @ {n}")), "{s}");
        snap(format!("curve_now_{}", n.replace(',', "")), s.clone());
        // The drop line is drawn in the curve's own braille grid: the cell where the line
        // starts (its top) also holds the curve, so no cell of the line sits above or below
        // a gap. Find the chart's rows: the column of the line holds a braille cell in every
        // row from its top to the axis.
        let rows: Vec<&str> = s.lines().collect();
        let axis = rows
            .iter()
            .position(|r| r.contains("└────"))
            .expect("the curve's x axis");
        let above = rows[axis - 1];
        let col = above
            .char_indices()
            .filter(|(_, c)| ('\u{2800}'..='\u{28FF}').contains(c))
            .map(|(i, _)| i)
            .next()
            .expect("the drop line reaches the axis");
        let top = (0..axis)
            .rev()
            .take_while(|y| {
                rows[*y]
                    .get(col..)
                    .and_then(|r| r.chars().next())
                    .is_some_and(|c| ('\u{2800}'..='\u{28FF}').contains(&c))
            })
            .last()
            .expect("a drop line");
        assert!(top < axis - 1, "the line has a height\n{s}");
        // The cell at the top of the line is on the curve: the curve's row there is the
        // line's top row (the curve falls with context, so at the line's column it is the
        // highest braille cell of that column).
        let first_curve_row = (0..axis)
            .find(|y| {
                rows[*y]
                    .get(col..)
                    .and_then(|r| r.chars().next())
                    .is_some_and(|c| ('\u{2800}'..='\u{28FF}').contains(&c))
            })
            .expect("the column has braille");
        assert_eq!(
            first_curve_row, top,
            "a gap between the curve and the line\n{s}"
        );
    }
}

#[test]
fn the_decode_table_stays_aligned_at_six_digit_contexts() {
    let Some((mut app, _d)) = gemma_app() else {
        return;
    };
    select(&mut app, Pane::Cache, Field::Setting(Setting::Context));
    app.update(Action::SetText("131072".into()));
    let s = draw(&app, 120, 36);
    let lines: Vec<&str> = s.lines().collect();
    let col_end = |l: &str, pat: &str| {
        let i = l.find(pat).unwrap_or_else(|| panic!("{pat} in {l}"));
        l[..i + pat.len()].chars().count()
    };
    let head = lines
        .iter()
        .find(|l| l.contains("Decode ceiling"))
        .expect("the decode table");
    let row = lines
        .iter()
        .find(|l| l.contains("inventory @ 131,072"))
        .unwrap_or_else(|| panic!("{s}"));
    // Each figure ends under its column's header.
    let tail = &row[row.find("inventory @ 131,072").unwrap()..];
    let rate = tail.split_whitespace().nth(3).unwrap();
    let ms = tail.split_whitespace().nth(4).unwrap();
    assert_eq!(
        col_end(row, rate),
        col_end(head, "tokens/s"),
        "{head}\n{row}"
    );
    assert_eq!(col_end(row, ms), col_end(head, "ms/token"), "{head}\n{row}");
}
