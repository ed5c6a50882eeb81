//! The llama-bench results view: the import's report for the current scenario, scrolled.
//! Owns its state (`BenchView`) and its scrolling; reads the lines the app computed (the
//! import evaluated on the current scenario); no arithmetic here.

use crate::tui::action::Action;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use std::path::PathBuf;

/// The llama-bench results view: the import's text report for the current scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchView {
    /// The results file.
    pub path: Option<PathBuf>,
    /// The report's lines (computed when imported and on every recompute).
    pub lines: Vec<String>,
    /// First line shown.
    pub scroll: usize,
    /// Decode rows above their highest ceiling.
    pub impossible_rows: usize,
    /// The import's headline (`bench::headline`): the same sentence as the report's verdict.
    pub headline: String,
    /// Every decode row is within every ceiling (`BenchReport::all_within`).
    pub all_within: bool,
    /// The rows read from the file.
    pub rows: Vec<crate::bench::BenchRow>,
}

impl BenchView {
    /// Scroll by a key or the wheel; `page` rows at a time for PageUp/PageDown.
    pub fn update(&mut self, action: Action, page: usize) {
        let last = self.lines.len().saturating_sub(1);
        let s = &mut self.scroll;
        match action {
            Action::Up | Action::Scroll(_, _, -1) => *s = s.saturating_sub(1),
            Action::Down | Action::Scroll(_, _, 1) => *s = (*s + 1).min(last),
            Action::PageUp => *s = s.saturating_sub(page),
            Action::PageDown => *s = (*s + page).min(last),
            Action::Home => *s = 0,
            Action::End => *s = last,
            _ => {}
        }
    }
}

/// The full-screen bench view.
pub struct BenchScreen<'a> {
    /// The view state.
    pub view: &'a BenchView,
    /// Styles.
    pub theme: Theme,
}

impl Widget for BenchScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let [head, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
        let Some(path) = &v.path else {
            Paragraph::new(vec![
                Line::from(Span::styled("llama-bench results", t.heading())),
                Line::raw(""),
                Line::from(Span::styled(
                    "No results imported: press b (or Enter) and give a llama-bench -o json / jsonl file (Esc goes back).",
                    t.label(),
                )),
            ])
            .render(area, buf);
            return;
        };
        // The report's own headline, so the header never contradicts the verdict under it.
        let style = if v.impossible_rows > 0 {
            t.bad()
        } else if v.all_within {
            t.ok()
        } else {
            t.warn()
        };
        let verdict = Span::styled(v.headline.clone(), style);
        Paragraph::new(Line::from(vec![
            Span::styled(format!("llama-bench · {} · ", path.display()), t.heading()),
            verdict,
            Span::styled(
                format!("  · line {}/{} (↑↓ PgUp PgDn)", v.scroll + 1, v.lines.len()),
                t.label(),
            ),
        ]))
        .render(head, buf);
        let rows = body.height as usize;
        let lines: Vec<Line> = v
            .lines
            .iter()
            .skip(v.scroll)
            .take(rows)
            .map(|l| {
                if l.contains("IMPOSSIBLE") {
                    Line::from(Span::styled(l.clone(), t.bad()))
                } else {
                    Line::raw(l.clone())
                }
            })
            .collect();
        Paragraph::new(lines).render(body, buf);
    }
}
