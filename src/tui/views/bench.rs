//! The llama-bench results view: the import's report for the current scenario, scrolled.
//! Reads the lines the app computed; no arithmetic here.

use crate::tui::app::BenchView;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

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
