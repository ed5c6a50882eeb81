//! The Bounds and Claim panes scroll in whole blocks (issue 19): the title says how many rows
//! are above and below (`↑ N more` / `↓ N more`), the decode table never shows rows without
//! its header, scrolling stops where the last block is in view, and Home/g and End/G go to the
//! ends. Drawn into ratatui's `TestBackend` at 80×24 and 120×36.

use llmbound::build::ScenarioOptions;
use llmbound::core::edit::Setting;
use llmbound::profile::Catalog;
use llmbound::tui::Action;
use llmbound::tui::app::App;
use llmbound::tui::fields::{Field, Pane};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

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

fn draw(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(app, f.area())).unwrap();
    t.backend().to_string()
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

fn four_sequences(app: &mut App) {
    focus(app, Pane::Cache);
    app.update(Action::Home);
    for _ in 0..40 {
        if app.selected_field(Pane::Cache) == Some(Field::Setting(Setting::Sequences)) {
            break;
        }
        app.update(Action::Down);
    }
    app.update(Action::SetText("4".into()));
    assert_eq!(app.ws().scenario().cache.sequences, 4);
}

/// The title row of the pane whose title starts with `name`.
fn title(screen: &str, name: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(&format!(" {name} ")) || l.contains(&format!(" {name} · ")))
        .unwrap_or_else(|| panic!("no {name} title\n{screen}"))
        .to_string()
}

/// The rows inside a pane, from its top border's column to its right border (the panes
/// beside it left out), down to its bottom border.
fn pane_body(screen: &str, name: &str) -> Vec<String> {
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let top = rows
        .iter()
        .position(|l| l.iter().collect::<String>().contains(&format!(" {name}")))
        .unwrap();
    let col = rows[top]
        .iter()
        .position(|c| *c == '┏' || *c == '╭')
        .unwrap();
    rows[top + 1..]
        .iter()
        .take_while(|l| !matches!(l.get(col), Some('┗' | '╰')))
        .map(|l| {
            let end = l
                .iter()
                .rposition(|c| matches!(c, '┃' | '│'))
                .unwrap_or(col);
            l[col + 1..end.max(col + 1)].iter().collect()
        })
        .collect()
}

/// Every position from the top to one step past the end: the screens, in order.
fn walk(app: &mut App, w: u16, h: u16) -> Vec<String> {
    app.update(Action::Home);
    let mut out = vec![draw(app, w, h)];
    for _ in 0..40 {
        app.update(Action::Down);
        let s = draw(app, w, h);
        let same = out.last() == Some(&s);
        out.push(s);
        if same {
            break;
        }
    }
    out
}

#[test]
fn the_bounds_pane_marks_what_is_below_and_stops_at_the_end() {
    for (w, h) in [(80, 24), (120, 36)] {
        let (mut app, _d) = app();
        four_sequences(&mut app);
        focus(&mut app, Pane::Bounds);
        let screens = walk(&mut app, w, h);
        let first = &screens[0];
        assert!(
            title(first, "Bounds").contains("↓") && title(first, "Bounds").contains("more"),
            "{w}x{h}: the first page marks the rows below\n{first}"
        );
        let last = screens.last().unwrap();
        // Scrolling stopped: the last two draws are the same, well before 40 steps.
        assert!(
            screens.len() < 40,
            "{w}x{h}: j runs on ({} steps)",
            screens.len()
        );
        assert_eq!(&screens[screens.len() - 2], last, "{w}x{h}");
        let t = title(last, "Bounds");
        assert!(
            t.contains("↑") && !t.contains("↓"),
            "{w}x{h}: at the end\n{last}"
        );
        assert!(
            last.contains("crossover S*"),
            "{w}x{h}: the last line is reachable\n{last}"
        );
        for s in &screens {
            // A decode row is never shown without the table's header.
            if s.contains("file, short") || s.contains("file @ 32") {
                assert!(s.contains("Decode ceiling"), "{w}x{h}: orphan rows\n{s}");
            }
            if s.contains("Decode ceiling") {
                assert!(s.contains("file @ 32"), "{w}x{h}: orphan header\n{s}");
            }
        }
        // Home (g) goes back to the top; End (G) to the end.
        app.update(Action::Home);
        assert_eq!(&draw(&app, w, h), first, "{w}x{h}: Home");
        app.update(Action::End);
        assert_eq!(&draw(&app, w, h), last, "{w}x{h}: End");
        app.update(Action::Up);
        assert_ne!(
            &draw(&app, w, h),
            last,
            "{w}x{h}: one step back from the end moves"
        );
    }
}

/// The default scenario with a claimed rate (tokens/s) checked in the focused Claim pane.
fn claim_app(rate: &str) -> (App, tempfile::TempDir) {
    let (mut app, d) = app();
    focus(&mut app, Pane::Claim);
    app.update(Action::SetText(rate.into()));
    assert!(app.claim().is_some());
    (app, d)
}

#[test]
fn the_claim_pane_scrolls_whole_lists_and_marks_them() {
    let (w, h) = (80, 24);
    let (mut app, _d) = claim_app("20");
    let screens = walk(&mut app, w, h);
    let first = &screens[0];
    assert!(
        title(first, "Claim").contains("↓"),
        "marks the rest\n{first}"
    );
    assert!(screens.len() < 40, "j runs on");
    let last = screens.last().unwrap();
    assert!(!title(last, "Claim").contains("↓"), "at the end\n{last}");
    for s in &screens {
        // The pane never ends on a list's lead-in with its items below the fold.
        let body = pane_body(s, "Claim");
        let shown: Vec<&String> = body.iter().filter(|l| !l.trim().is_empty()).collect();
        if let Some(l) = shown.last() {
            assert!(!l.contains("one of these is false:"), "orphan lead-in\n{s}");
        }
    }
    app.update(Action::Home);
    assert_eq!(&draw(&app, w, h), first, "Home");
}

#[test]
fn the_help_scrolls_at_80x24_with_its_position_and_no_cut_words() {
    let (mut app, _d) = app();
    app.update(Action::Help);
    assert!(app.help_shown());
    let first = draw(&app, 80, 24);
    let top = first.lines().next().unwrap().to_string();
    assert!(
        top.contains("rows 1–"),
        "the title says which rows\n{first}"
    );
    // Help texts are whole at 80 wide: few end in "…".
    let cut = first.matches('…').count();
    assert!(cut <= 3, "{cut} help texts cut\n{first}");
    let mut last = first.clone();
    for _ in 0..200 {
        app.update(Action::Down);
        let s = draw(&app, 80, 24);
        if s == last {
            break;
        }
        last = s;
    }
    assert_ne!(last, first, "Down scrolls the help");
    for needle in ["Questions (y/n)", "drop edits"] {
        assert!(
            last.contains(needle),
            "missing {needle:?} at the end\n{last}"
        );
    }
    app.update(Action::Home);
    assert_eq!(draw(&app, 80, 24), first, "Home");
    app.update(Action::End);
    assert_eq!(draw(&app, 80, 24), last, "End");
    assert!(app.help_shown(), "scrolling keeps the help open");
    app.update(Action::Back);
    assert!(!app.help_shown());
}

#[test]
fn search_is_listed_for_every_view_that_has_it() {
    let (mut app, _d) = app();
    app.update(Action::Help);
    let s = draw(&app, 200, 50);
    // `/` is bound (and listed) in each view where it searches, with what it does there.
    for line in [
        "type a claimed rate (tokens/s)",
        "search tensor names (Esc clears)",
        "search keys (Esc clears)",
        "filter machines by the text shown (Esc clears)",
    ] {
        assert!(s.contains(line), "{line:?} in\n{s}");
    }
}

/// (Issue 19, roofline) Not scrolling, but the same pane: decode and prefill have glyphs of
/// their own, and with no compute rate the chart is not called a roofline.
#[test]
fn the_roofline_names_its_glyphs_and_is_not_called_one_without_a_roof() {
    let (app, _d) = app();
    // The default machine has no compute rate for the path.
    let s = draw(&app, 200, 50);
    assert!(s.contains("no compute rate: bandwidth slope only"), "{s}");
    assert!(!s.contains("roofline"), "{s}");
    let (mut app, _d) = app_with_rate();
    let s = draw(&app, 200, 50);
    assert!(
        s.contains("roofline, log-log: y FLOP/s, x FLOP/byte (█ decode, • prefill)"),
        "{s}"
    );
    assert!(
        s.contains('•'),
        "the prefill point is drawn with its own glyph\n{s}"
    );
    app.update(Action::Home);
}

fn app_with_rate() -> (App, tempfile::TempDir) {
    let (mut app, d) = app();
    app.update(Action::SelectMachine("desktop-rtx-4090".into()));
    (app, d)
}

/// (Issue 19, roofline axes) At every size the roofline names both axes: the labels
/// (`1.6P`, `0.3 100 32k`) carry no unit, so the title says y is FLOP/s and x FLOP/byte.
#[test]
fn the_roofline_names_its_axes_at_every_width() {
    for with_rate in [false, true] {
        let (app, _d) = if with_rate { app_with_rate() } else { app() };
        for (w, h) in [(100, 30), (120, 36), (160, 40), (200, 50)] {
            let s = draw(&app, w, h);
            let Some(title) = s.lines().find(|l| {
                l.contains("roofline") || l.contains("slope only") || l.contains("FLOP/s")
            }) else {
                // The charts need 13 rows; say which sizes have none rather than pass silently.
                eprintln!("{w}x{h}: no roofline chart at this size");
                continue;
            };
            assert!(
                title.contains("FLOP/s")
                    && (title.contains("x FLOP/byte") || title.contains("FLOP/B")),
                "{w}x{h} (rate {with_rate}): {title}"
            );
        }
    }
}

/// (Issue 19, bar labels) Every figure of every bar row reads to three significant digits
/// (`X 0.00226` beside `X 0.380`, never `X 0.38`); `0` only for zero.
#[test]
fn bar_figures_share_one_precision() {
    // The scenario: RTX 4090, 4 sequences (a GPU bar and a host bar).
    let d = tempfile::tempdir().unwrap();
    let opts = ScenarioOptions {
        machine: Some("desktop-rtx-4090".into()),
        sequences: Some(4),
        ..ScenarioOptions::default()
    };
    let mut app = App::new(Catalog::load_with(Some(d.path().to_path_buf())), &opts).unwrap();
    app.set_hash_cache(None);
    let mut seen = 0;
    for (w, h) in [(80, 24), (120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        for line in s.lines().filter(|l| l.contains(" W ") && l.contains(" / ")) {
            let bar = &line[line.find(" W ").unwrap()..];
            let words: Vec<&str> = bar.split_whitespace().collect();
            for pair in words.windows(2) {
                if !matches!(pair[0], "W" | "C" | "X" | "A" | "/") {
                    continue;
                }
                let fig = pair[1].trim_end_matches(['│', '┃']);
                if fig == "0" {
                    continue;
                }
                let digits: String = fig.chars().filter(|c| c.is_ascii_digit()).collect();
                let significant = digits.trim_start_matches('0');
                let whole = fig.split('.').next().unwrap_or("").replace(',', "");
                assert!(
                    significant.len() == 3 || (whole.len() >= 4 && !fig.contains('.')),
                    "{w}x{h}: {fig} in {line}"
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "bar figures found: {seen}");
}

/// (Issue 19, Machine pane) The focused Machine pane shows the compute rates at 120×36 as it
/// does at 80×24, and the profile's notes (the CUDA context to count as A; the Mac's GPU
/// working set) are reachable: on the last field they come into view below it.
#[test]
fn the_machine_pane_shows_compute_rates_and_notes() {
    let (mut app, _d) = app_with_rate();
    focus(&mut app, Pane::Machine);
    for (w, h) in [(80, 24), (120, 36)] {
        let s = draw(&app, w, h);
        assert!(s.contains("fp16 @gpu0 165.2 TFLOP/s"), "{w}x{h}\n{s}");
        assert!(s.contains("int8 @gpu0 660.6 TFLOP/s"), "{w}x{h}\n{s}");
    }
    for _ in 0..40 {
        app.update(Action::Down);
    }
    for (w, h) in [(80, 24), (120, 36), (200, 50)] {
        let s = draw(&app, w, h);
        assert!(s.contains("Notes (profile)"), "{w}x{h}\n{s}");
        assert!(s.contains("the CUDA context"), "{w}x{h}\n{s}");
    }
    // The Mac's working set: where its free memory comes from is a note too.
    let (mut mac, _d2) = self::app();
    focus(&mut mac, Pane::Machine);
    for _ in 0..40 {
        mac.update(Action::Down);
    }
    let s = draw(&mac, 200, 50);
    assert!(s.contains("recommendedMaxWorkingSetSize"), "{s}");
}

/// At 80×24 the Bounds pane's scrolling tail (runtime, headroom, KV per token, warnings)
/// moves by whole logical lines: a wrapped line's second row never shows without its first
/// (the page started on "working set · buffers 389.349 MiB" under the pinned "(> native) ·
/// W+K+A alone 121,221"), and a line cut at the fold is not shown in part.
#[test]
fn the_bounds_tail_never_shows_half_a_wrapped_line() {
    let (mut app, _d) = app();
    focus(&mut app, Pane::Bounds);
    let screens = walk(&mut app, 80, 24);
    assert!(screens.len() > 3, "{}", screens.len());
    // (first row, its continuation) of the two wrapped lines of the default scenario's tail
    let pairs = [
        (
            "runtime 9.164 GiB free of the 36 GiB",
            "working set · buffers",
        ),
        (
            "W+K+A headroom 23,187,523,936 bytes =",
            "21.595 GiB of the 48 GiB",
        ),
    ];
    for s in &screens {
        let rows: Vec<&str> = s.lines().collect();
        for (i, row) in rows.iter().enumerate() {
            for (first, second) in pairs {
                if row.contains(second) {
                    assert!(
                        i > 0 && rows[i - 1].contains(first),
                        "a continuation row without its first:\n{s}"
                    );
                }
                if row.contains(first) {
                    assert!(
                        rows.get(i + 1).is_some_and(|r| r.contains(second)),
                        "a line cut at the fold:\n{s}"
                    );
                }
            }
        }
    }
}

/// A long list of assumptions fills the Claim pane instead of leaving its rows blank above
/// `↓ N more`: the lead-in keeps its first item, each further item scrolls on its own, so at
/// 120×36 (a lead-in of two rows, items of one or two) at most three rows stay blank (the
/// whole list was one block before: four blank rows on the first page).
#[test]
fn the_claim_pane_fills_its_rows_before_marking_more() {
    let (w, h) = (120, 36);
    let (mut app, _d) = claim_app("12");
    let screens = walk(&mut app, w, h);
    assert!(screens.len() > 1, "the claim scrolls at {w}×{h}");
    for s in &screens {
        if !title(s, "Claim").contains('↓') {
            continue;
        }
        let body = pane_body(s, "Claim");
        let blank_foot = body
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        assert!(blank_foot <= 3, "{blank_foot} blank rows above ↓ more\n{s}");
    }
}
