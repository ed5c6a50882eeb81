//! The panes of the main screen, one struct per pane borrowing what it shows. They format
//! figures (with `core::units`) and place them; they compute no bound.

pub mod artifact;
pub mod bounds;
pub mod claim;
pub mod inputs;
pub mod scroll;

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
    // Words across spans: pieces that meet without a space between them (a legend's symbol
    // and its name, a number and its unit) form one word, broken only where a space was.
    let mut words: Vec<Vec<Span<'static>>> = Vec::new();
    let mut open = false;
    for span in line.spans {
        let style = span.style;
        for piece in keep_units(&span.content) {
            let ends = piece.ends_with(' ');
            let starts = piece.starts_with(' ');
            match words.last_mut() {
                Some(w) if open && !starts => w.push(Span::styled(piece, style)),
                _ => words.push(vec![Span::styled(piece, style)]),
            }
            open = !ends;
        }
    }
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for word in words {
        let w: usize = word.iter().map(|s| s.content.chars().count()).sum();
        let text: String = word.iter().map(|s| s.content.as_ref()).collect();
        let trimmed = text.trim_end().chars().count();
        if used + trimmed > width && used > 0 {
            out.push(Line::from(std::mem::take(&mut cur)));
            used = 0;
        }
        // Words longer than the width are cut.
        let mut room = width;
        for s in word {
            let c: String = s.content.chars().take(room).collect();
            room -= c.chars().count();
            cur.push(Span::styled(c, s.style));
        }
        used += w.min(width);
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(Line::from(cur));
    }
    out
}

/// Units that stay on the line of their number when a line wraps (`2.125 GiB`, not `2.125` /
/// `GiB`).
const UNITS: [&str; 14] = [
    "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "kB", "MB", "GB", "TB", "MB/s", "GB/s", "TB/s",
    "tokens",
];

/// The words of a span as `split_inclusive(' ')` gives them, except that a number and the
/// unit after it are one word.
fn keep_units(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in s.split_inclusive(' ') {
        let unit = w.trim_end();
        let unit = unit.trim_end_matches([',', ')', ';', '.', ':']);
        let glue = UNITS.contains(&unit)
            && out.last().is_some_and(|p| {
                p.ends_with(' ')
                    && p.trim_end()
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_ascii_digit())
            });
        match out.last_mut() {
            Some(p) if glue => p.push_str(w),
            _ => out.push(w.to_string()),
        }
    }
    out
}
