//! The message log (`@`): every message the status line showed this session, newest last,
//! each in full (wrapped to the width), so a line the status bar had to cut with "…" is
//! never lost. An overlay over the current view; it scrolls, and its title says which lines
//! are shown. Reads the app's log; no arithmetic on figures here.

use crate::tui::app::Message;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

/// The most messages kept (the oldest go first).
pub const KEEP: usize = 500;

/// Every message as lines of at most `width` characters (words wrapped; a word longer than
/// the width is cut into pieces), each line with whether its message was an error.
pub fn wrapped(log: &[Message], width: usize) -> Vec<(String, bool)> {
    let width = width.max(1);
    let mut out = Vec::new();
    for m in log {
        let mut cur = String::new();
        for word in m.text.split_whitespace() {
            let mut word: Vec<char> = word.chars().collect();
            loop {
                let n = cur.chars().count();
                let room = if n == 0 {
                    width
                } else {
                    width.saturating_sub(n + 1)
                };
                if word.len() <= room {
                    if n > 0 {
                        cur.push(' ');
                    }
                    cur.extend(word.iter());
                    break;
                }
                if n > 0 {
                    out.push((std::mem::take(&mut cur), m.error));
                    continue;
                }
                // A word wider than the whole line: cut it.
                let rest = word.split_off(width);
                out.push((word.iter().collect(), m.error));
                word = rest;
            }
        }
        out.push((cur, m.error));
    }
    out
}

/// The width the log's text has inside its border at a terminal `area`.
pub fn text_width(area: Rect) -> usize {
    area.width.saturating_sub(2) as usize
}

/// The rows of text the log shows at once in `area`.
pub fn page(area: Rect) -> usize {
    area.height.saturating_sub(2).max(1) as usize
}

/// The first line shown when the log is scrolled to `scroll` (the last page at most).
pub fn first_line(total: usize, page: usize, scroll: usize) -> usize {
    scroll.min(total.saturating_sub(page))
}

/// The overlay.
pub struct MessagesOverlay<'a> {
    /// The log, oldest first.
    pub log: &'a [Message],
    /// First line asked for (clamped to the last page).
    pub scroll: usize,
    /// Styles.
    pub theme: Theme,
}

impl Widget for MessagesOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        Clear.render(area, buf);
        let lines = wrapped(self.log, text_width(area));
        let page = page(area);
        let first = first_line(lines.len(), page, self.scroll);
        let last = (first + page).min(lines.len());
        let title = if lines.is_empty() {
            " Messages · none yet · @ or Esc closes ".to_string()
        } else {
            format!(
                " Messages · lines {}–{last} of {} · ↑↓ PgUp PgDn g G · @ or Esc closes ",
                first + 1,
                lines.len()
            )
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(Line::from(Span::styled(
                crate::tui::format::fit(&title, area.width.saturating_sub(2) as usize),
                t.title(true),
            )));
        let inner = block.inner(area);
        block.render(area, buf);
        let shown: Vec<Line> = lines[first..last]
            .iter()
            .map(|(s, error)| {
                Line::from(Span::styled(
                    s.clone(),
                    if *error { t.bad() } else { t.ok() },
                ))
            })
            .collect();
        Paragraph::new(shown).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> Message {
        Message {
            text: text.into(),
            error: false,
        }
    }

    #[test]
    fn wrapping_keeps_every_character_of_every_message() {
        let log = [
            m("model: qwen3.attention.head_count_kv = 9 does not divide the 32 query heads"),
            m(&"x".repeat(25)),
            m(""),
        ];
        let lines = wrapped(&log, 10);
        assert!(
            lines.iter().all(|(l, _)| l.chars().count() <= 10),
            "{lines:?}"
        );
        let joined: String = lines.iter().map(|(l, _)| l.replace(' ', "")).collect();
        let want: String = log.iter().map(|m| m.text.replace(' ', "")).collect();
        assert_eq!(joined, want);
        assert_eq!(
            lines.last().unwrap().0,
            "",
            "an empty message is one empty line"
        );
    }

    #[test]
    fn the_last_page_is_as_far_as_it_scrolls() {
        assert_eq!(first_line(50, 20, 1000), 30);
        assert_eq!(first_line(5, 20, 3), 0);
        assert_eq!(first_line(50, 20, 7), 7);
    }
}
