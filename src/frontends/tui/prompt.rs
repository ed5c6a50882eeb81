//! The line editor of every text prompt: a value that opens selected (typing replaces it),
//! cursor keys and the readline kills (Ctrl-U/W/K, Ctrl-A/E), history per prompt (↑↓),
//! a filterable picker (machines) and a candidate list for Tab completion of paths.
//! Editing itself is `tui-input`'s (grapheme-aware, no terminal needed); this module keeps
//! the selection, picker and history around it. Draws only the picker/candidate box.

use super::app::{Input, InputTarget};
use super::layout;
use super::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};
use serde::{Deserialize, Serialize};
use tui_input::InputRequest;

/// Rows of the picker or candidate box at most.
pub const LIST_ROWS: usize = 8;

/// An editing key of the line being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKey {
    /// Cursor one character left.
    Left,
    /// Cursor one character right.
    Right,
    /// Cursor to the start (Home, Ctrl-A).
    Home,
    /// Cursor to the end (End, Ctrl-E).
    End,
    /// Delete the character under the cursor (Delete).
    Delete,
    /// Delete the word before the cursor (Ctrl-W).
    DeleteWord,
    /// Delete from the start to the cursor (Ctrl-U).
    DeleteToStart,
    /// Delete from the cursor to the end (Ctrl-K).
    DeleteToEnd,
    /// Previous history entry, or the picker row above.
    Up,
    /// Next history entry, or the picker row below.
    Down,
}

/// Longest line a prompt holds, in characters (a path or a number is far shorter; a 1 MiB
/// paste is cut here rather than typed out).
pub const MAX_PROMPT_CHARS: usize = 4096;

impl Input {
    /// A prompt opening on `text`, selected (the first typed character replaces it).
    pub fn new(target: InputTarget, prompt: impl Into<String>, text: String) -> Input {
        Input {
            target,
            prompt: prompt.into(),
            cursor: text.chars().count(),
            selected: !text.is_empty(),
            text,
            choices: Vec::new(),
            pick: 0,
            candidates: Vec::new(),
            history_at: None,
            draft: String::new(),
        }
    }

    /// A picker: `choices` filtered by what is typed; ↑↓ move, Enter takes the highlighted one.
    pub fn picker(target: InputTarget, prompt: impl Into<String>, choices: Vec<String>) -> Input {
        let mut i = Input::new(target, prompt, String::new());
        i.choices = choices;
        i
    }

    fn apply(&mut self, req: InputRequest) {
        let mut l = tui_input::Input::new(std::mem::take(&mut self.text)).with_cursor(self.cursor);
        l.handle(req);
        self.text = l.value().to_string();
        self.cursor = l.cursor();
    }

    fn drop_selection(&mut self) {
        if self.selected {
            self.selected = false;
            self.text.clear();
            self.cursor = 0;
        }
    }

    fn edited(&mut self) {
        self.pick = 0;
        self.candidates.clear();
    }

    /// Type a character (replacing the selected value); nothing past `MAX_PROMPT_CHARS`.
    pub fn insert(&mut self, c: char) {
        if !self.selected && self.text.chars().count() >= MAX_PROMPT_CHARS {
            return;
        }
        self.drop_selection();
        self.apply(InputRequest::InsertChar(c));
        self.edited();
    }

    /// Backspace (clears a selected value).
    pub fn backspace(&mut self) {
        if self.selected {
            self.drop_selection();
        } else {
            self.apply(InputRequest::DeletePrevChar);
        }
        self.edited();
    }

    /// Replace the whole line (completion, history), cursor at the end; at most
    /// `MAX_PROMPT_CHARS` are kept.
    pub fn set(&mut self, mut text: String) {
        if let Some((i, _)) = text.char_indices().nth(MAX_PROMPT_CHARS) {
            text.truncate(i);
        }
        self.cursor = text.chars().count();
        self.text = text;
        self.selected = false;
    }

    /// Insert pasted text at the cursor (replacing a selected value): line breaks and tabs
    /// become spaces, other control characters are dropped, and the line stops at
    /// `MAX_PROMPT_CHARS`.
    pub fn paste(&mut self, text: &str) {
        self.drop_selection();
        let room = MAX_PROMPT_CHARS.saturating_sub(self.text.chars().count());
        let clean = text
            .chars()
            .filter_map(|c| match c {
                '\n' | '\r' | '\t' => Some(' '),
                c if crate::sanitize::is_unsafe(c) => None,
                c => Some(c),
            })
            .take(room);
        for c in clean {
            self.apply(InputRequest::InsertChar(c));
        }
        self.edited();
    }

    /// An editing key; `history` is this prompt's history, oldest first.
    pub fn key(&mut self, k: LineKey, history: &[String]) {
        let req = match k {
            LineKey::Up | LineKey::Down if !self.choices.is_empty() => {
                let n = self.filtered().len();
                self.pick = if k == LineKey::Up {
                    self.pick.saturating_sub(1)
                } else {
                    (self.pick + 1).min(n.saturating_sub(1))
                };
                return;
            }
            LineKey::Up | LineKey::Down => {
                self.recall(k == LineKey::Up, history);
                return;
            }
            LineKey::Left => InputRequest::GoToPrevChar,
            LineKey::Right => InputRequest::GoToNextChar,
            LineKey::Home => InputRequest::GoToStart,
            LineKey::End => InputRequest::GoToEnd,
            LineKey::Delete => InputRequest::DeleteNextChar,
            LineKey::DeleteWord => InputRequest::DeletePrevWord,
            LineKey::DeleteToStart => InputRequest::DeleteFromStart,
            LineKey::DeleteToEnd => InputRequest::DeleteTillEnd,
        };
        let deletes = matches!(
            k,
            LineKey::Delete | LineKey::DeleteWord | LineKey::DeleteToStart | LineKey::DeleteToEnd
        );
        if self.selected && deletes {
            self.drop_selection();
        } else {
            // Moving the cursor keeps the value: the selection is gone, the text stays.
            self.selected = false;
            self.apply(req);
        }
        if deletes {
            self.edited();
        }
    }

    fn recall(&mut self, older: bool, history: &[String]) {
        if history.is_empty() {
            return;
        }
        let at = match (self.history_at, older) {
            (None, true) => {
                self.draft = self.text.clone();
                Some(history.len() - 1)
            }
            (None, false) => return,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) if i + 1 < history.len() => Some(i + 1),
            (Some(_), false) => None,
        };
        self.history_at = at;
        let text = match at {
            Some(i) => history[i].clone(),
            None => self.draft.clone(),
        };
        self.set(text);
        self.edited();
    }

    /// The choices that match what is typed (case-insensitive substring), in order.
    pub fn filtered(&self) -> Vec<&str> {
        let needle = if self.selected {
            String::new()
        } else {
            self.text.trim().to_lowercase()
        };
        self.choices
            .iter()
            .filter(|c| c.to_lowercase().contains(&needle))
            .map(String::as_str)
            .collect()
    }

    /// What Enter takes: the typed text, or in a picker the exact match or highlighted row.
    pub fn value(&self) -> String {
        if self.choices.is_empty() {
            return self.text.clone();
        }
        let typed = self.text.trim();
        if self.choices.iter().any(|c| c == typed) {
            return typed.to_string();
        }
        self.filtered()
            .get(self.pick)
            .map_or_else(|| typed.to_string(), |s| s.to_string())
    }

    /// The text as drawn in `width` columns: (before the cursor, after it), scrolled so the
    /// cursor stays visible.
    pub fn visible(&self, width: usize) -> (String, String) {
        let chars: Vec<char> = self.text.chars().collect();
        let cur = self.cursor.min(chars.len());
        let width = width.max(2);
        let start = cur.saturating_sub(width - 1);
        let before: String = chars[start..cur].iter().collect();
        let room = width - (cur - start);
        let after: String = chars[cur..].iter().take(room).collect();
        (before, after)
    }
}

/// Per-prompt history (accepted lines, oldest first, no repeats in a row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    entries: Vec<(String, Vec<String>)>,
}

/// Entries kept per prompt.
const HISTORY_MAX: usize = 50;

impl History {
    /// The history of one prompt.
    pub fn of(&self, target: &InputTarget) -> &[String] {
        let k = key_of(target);
        self.entries
            .iter()
            .find(|(n, _)| *n == k)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Remember an accepted line.
    pub fn push(&mut self, target: &InputTarget, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let k = key_of(target);
        let i = match self.entries.iter().position(|(n, _)| *n == k) {
            Some(i) => i,
            None => {
                self.entries.push((k, Vec::new()));
                self.entries.len() - 1
            }
        };
        let v = &mut self.entries[i].1;
        if v.last().map(String::as_str) != Some(text) {
            v.push(text.to_string());
        }
        if v.len() > HISTORY_MAX {
            v.remove(0);
        }
    }
}

fn key_of(t: &InputTarget) -> String {
    format!("{t:?}")
}

/// The picker's rows or the Tab candidates, in a box just above the bottom line of `area`.
pub fn render_list(i: &Input, area: Rect, t: Theme, buf: &mut Buffer) {
    let (rows, highlight, title): (Vec<&str>, Option<usize>, String) = if !i.choices.is_empty() {
        let f = i.filtered();
        let title = format!(" {} of {} · ↑↓ Enter ", f.len(), i.choices.len());
        (f, Some(i.pick), title)
    } else if !i.candidates.is_empty() {
        let title = format!(" {} matches · type more, Tab ", i.candidates.len());
        (
            i.candidates.iter().map(String::as_str).collect(),
            None,
            title,
        )
    } else {
        return;
    };
    if area.height < 4 {
        return;
    }
    let shown = rows.len().clamp(1, LIST_ROWS).min(area.height as usize - 3);
    let width = rows
        .iter()
        .map(|r| r.chars().count())
        .chain([title.chars().count()])
        .max()
        .unwrap_or(10)
        .saturating_add(4)
        .min(area.width as usize) as u16;
    let r = Rect {
        x: area.x,
        y: area.bottom() - 1 - (shown as u16 + 2),
        width,
        height: shown as u16 + 2,
    };
    let mut off = highlight.map_or(0, |h| layout::scroll_offset(h, shown, rows.len()));
    // The last row says "… N more" when rows follow: the highlight never sits under it.
    if let Some(h) = highlight
        && shown > 1
        && rows.len() > off + shown
        && h + 1 >= off + shown
    {
        off = h + 2 - shown;
    }
    let mut lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(off)
        .take(shown)
        .map(|(k, s)| {
            let style = if Some(k) == highlight {
                t.selected()
            } else {
                t.text()
            };
            Line::from(Span::styled(format!(" {s}"), style))
        })
        .collect();
    if rows.is_empty() {
        lines.push(Line::from(Span::styled(" nothing matches", t.label())));
    } else if rows.len() > off + shown && shown > 1 {
        let last = lines.len() - 1;
        lines[last] = Line::from(Span::styled(
            format!(" … {} more", rows.len() - off - shown + 1),
            t.label(),
        ));
    }
    Clear.render(r, buf);
    Paragraph::new(lines)
        .block(
            Block::new()
                .borders(Borders::ALL)
                .border_style(t.label())
                .title(Span::styled(title, t.label())),
        )
        .render(r, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field() -> Input {
        Input::new(
            InputTarget::Field(crate::tui::fields::Field::Claim),
            "claim: ",
            "10".into(),
        )
    }

    #[test]
    fn typing_replaces_the_opening_value() {
        let mut i = field();
        for c in "500".chars() {
            i.insert(c);
        }
        assert_eq!(i.text, "500");
    }

    #[test]
    fn a_cursor_key_keeps_the_value_and_edits_in_place() {
        let mut i = field();
        i.key(LineKey::Home, &[]);
        i.insert('1');
        assert_eq!(i.text, "110");
        i.key(LineKey::End, &[]);
        i.key(LineKey::DeleteToStart, &[]);
        assert_eq!(i.text, "");
    }

    #[test]
    fn ctrl_w_deletes_a_word_and_history_recalls() {
        let mut i = Input::new(InputTarget::OpenPath, "open: ", String::new());
        for c in "a/b c".chars() {
            i.insert(c);
        }
        i.key(LineKey::DeleteWord, &[]);
        assert_eq!(i.text, "a/b ");
        let h = vec!["one".to_string(), "two".to_string()];
        i.key(LineKey::Up, &h);
        assert_eq!(i.text, "two");
        i.key(LineKey::Up, &h);
        assert_eq!(i.text, "one");
        i.key(LineKey::Down, &h);
        i.key(LineKey::Down, &h);
        assert_eq!(i.text, "a/b ");
    }

    #[test]
    fn the_picker_filters_and_takes_the_highlighted_row() {
        let mut i = Input::picker(
            InputTarget::OpenPath,
            "machine: ",
            vec!["m4-max".into(), "rtx-4090".into(), "rtx-3090".into()],
        );
        i.insert('r');
        i.insert('t');
        assert_eq!(i.filtered(), vec!["rtx-4090", "rtx-3090"]);
        i.key(LineKey::Down, &[]);
        assert_eq!(i.value(), "rtx-3090");
    }

    #[test]
    fn the_highlighted_row_is_never_under_the_more_line() {
        let choices: Vec<String> = (0..13).map(|k| format!("choice-{k:02}")).collect();
        for pick in 0..13 {
            let mut i = Input::picker(InputTarget::OpenPath, "model: ", choices.clone());
            i.pick = pick;
            let area = Rect::new(0, 0, 60, 24);
            let mut buf = Buffer::empty(area);
            render_list(&i, area, crate::tui::theme::Theme::default(), &mut buf);
            let text: String = (0..area.height)
                .map(|y| {
                    (0..area.width)
                        .map(|x| buf[(x, y)].symbol().to_string())
                        .collect::<String>()
                        + "\n"
                })
                .collect();
            assert!(
                text.contains(&format!("choice-{pick:02}")),
                "{pick}:\n{text}"
            );
        }
    }

    #[test]
    fn the_visible_part_keeps_the_cursor_on_screen() {
        let mut i = Input::new(InputTarget::OpenPath, "", "abcdefghij".into());
        assert_eq!(i.visible(4), ("hij".into(), "".into()));
        i.key(LineKey::Home, &[]);
        assert_eq!(i.visible(4), ("".into(), "abcd".into()));
    }
}
