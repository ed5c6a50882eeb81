//! The panes of the main screen, one struct per pane borrowing what it shows. They format
//! figures (with `core::units`) and place them; they compute no bound.

pub mod artifact;
pub mod bounds;
pub mod claim;
pub mod inputs;

use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

/// The bordered block of a pane.
pub fn block<'a>(title: impl Into<String>, focused: bool, theme: Theme) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(theme.border(focused))
        .title(Line::from(Span::styled(
            format!(" {} ", title.into()),
            theme.title(focused),
        )))
}

/// Greedy word wrap of styled spans to `width` cells (so a pane knows how many rows a
/// paragraph takes). Words longer than the width are cut.
pub fn wrap_line(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    let width = width.max(1) as usize;
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for span in line.spans {
        let style = span.style;
        for word in span.content.split_inclusive(' ') {
            let w = word.chars().count();
            let trimmed = word.trim_end().chars().count();
            if used + trimmed > width && used > 0 {
                out.push(Line::from(std::mem::take(&mut cur)));
                used = 0;
            }
            let word: String = word.chars().take(width).collect();
            used += w.min(width);
            cur.push(Span::styled(word, style));
        }
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(Line::from(cur));
    }
    out
}
