//! The metadata view: every key of the file with its type and value; long arrays are
//! summarised and expand (loaded on a worker) with Enter.

use crate::tui::action::Action;
use crate::tui::file::MetaItem;
use crate::tui::layout;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

/// The view's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetadataView {
    /// Key search (case-insensitive substring).
    pub search: String,
    /// Indices of the keys shown.
    pub shown: Vec<usize>,
    /// Selected key (index into `shown`).
    pub selected: usize,
    /// The expanded key (an array or a long string).
    pub expanded: Option<String>,
    /// The cursor is on this value of the expanded key (None: on the key row).
    pub value_row: Option<usize>,
    /// Rows of the expanded value (set by the app before each move: the loaded array's
    /// length or the string's lines).
    pub expanded_len: usize,
}

impl MetadataView {
    /// Recompute the shown keys.
    pub fn rebuild(&mut self, rows: &[MetaItem]) {
        let needle = self.search.to_lowercase();
        self.shown = (0..rows.len())
            .filter(|i| needle.is_empty() || rows[*i].key.to_lowercase().contains(&needle))
            .collect();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
        self.value_row = None;
    }

    /// Set the search text (incremental).
    pub fn set_search(&mut self, s: String, rows: &[MetaItem]) {
        self.search = s;
        self.selected = 0;
        self.rebuild(rows);
    }

    /// The selected key, if it can expand (an array or a long string).
    pub fn selected_key(&self, rows: &[MetaItem]) -> Option<String> {
        let r = rows.get(*self.shown.get(self.selected)?)?;
        (r.array_len.is_some() || !r.text_lines.is_empty()).then(|| r.key.clone())
    }

    /// Whether the selected key is the expanded one.
    fn on_expanded(&self, rows: &[MetaItem]) -> bool {
        let key = self
            .shown
            .get(self.selected)
            .and_then(|i| rows.get(*i))
            .map(|r| r.key.as_str());
        key.is_some() && key == self.expanded.as_deref()
    }

    /// Position of the expanded key in `shown`.
    fn expanded_at(&self, rows: &[MetaItem]) -> Option<usize> {
        let k = self.expanded.as_deref()?;
        self.shown.iter().position(|i| rows[*i].key == k)
    }

    /// Rows of the flat list (keys, and the expanded key's values after it) and the cursor's
    /// place in it.
    pub fn flat(&self, rows: &[MetaItem]) -> (usize, usize) {
        let extra = if self.expanded_at(rows).is_some() {
            self.expanded_len
        } else {
            0
        };
        let total = self.shown.len() + extra;
        let cursor = match (self.expanded_at(rows), self.value_row) {
            (Some(e), Some(v)) if e == self.selected => e + 1 + v,
            (Some(e), _) if self.selected > e => self.selected + extra,
            _ => self.selected,
        };
        (cursor, total)
    }

    fn set_flat(&mut self, pos: usize, rows: &[MetaItem]) {
        let (_, total) = self.flat(rows);
        let pos = pos.min(total.saturating_sub(1));
        match self.expanded_at(rows) {
            Some(e) if self.expanded_len > 0 && pos > e && pos <= e + self.expanded_len => {
                self.selected = e;
                self.value_row = Some(pos - e - 1);
            }
            Some(e) if pos > e + self.expanded_len => {
                self.selected = pos - self.expanded_len;
                self.value_row = None;
            }
            _ => {
                self.selected = pos;
                self.value_row = None;
            }
        }
    }

    /// Collapse the expanded key, the cursor back on its row.
    pub fn collapse(&mut self, rows: &[MetaItem]) {
        if let Some(e) = self.expanded_at(rows) {
            self.selected = e;
        }
        self.expanded = None;
        self.value_row = None;
    }

    /// Move the selection: through the keys, and through the values of the expanded key
    /// (Home/End jump within those values while the cursor is in them; ← leaves them).
    pub fn update(&mut self, a: Action, rows: &[MetaItem], screen: Rect) {
        if self.shown.is_empty() && !rows.is_empty() && self.search.is_empty() {
            self.rebuild(rows);
        }
        let page = screen.height.saturating_sub(6).max(1) as i64;
        let (cur, total) = self.flat(rows);
        let mv = |s: &mut Self, d: i64| {
            let p = (cur as i64 + d).clamp(0, total.saturating_sub(1) as i64) as usize;
            s.set_flat(p, rows)
        };
        let in_values = self.value_row.is_some() && self.on_expanded(rows);
        match a {
            Action::Up => mv(self, -1),
            Action::Down => mv(self, 1),
            Action::PageUp => mv(self, -page),
            Action::PageDown => mv(self, page),
            Action::Home if in_values => self.value_row = Some(0),
            Action::End if in_values => self.value_row = Some(self.expanded_len.saturating_sub(1)),
            Action::Home => self.set_flat(0, rows),
            Action::End => self.set_flat(total.saturating_sub(1), rows),
            Action::Left if in_values => self.value_row = None,
            Action::Scroll(_, _, d) => mv(self, d as i64 * 3),
            _ => {}
        }
    }

    /// "key 3 of 40" or "value 1,024 of 262,144 · tokenizer.ggml.tokens".
    pub fn position(&self, rows: &[MetaItem]) -> String {
        match self.value_row {
            Some(v) if self.on_expanded(rows) => format!(
                "row {} of {} in {}",
                crate::core::units::group_digits(v as u128 + 1),
                crate::core::units::group_digits(self.expanded_len as u128),
                self.expanded.as_deref().unwrap_or("")
            ),
            _ => format!(
                "key {} of {}",
                (self.selected + 1).min(self.shown.len()),
                self.shown.len()
            ),
        }
    }
}

/// The metadata view, drawn.
pub struct MetadataScreen<'a> {
    /// State.
    pub view: &'a MetadataView,
    /// Keys.
    pub rows: &'a [MetaItem],
    /// The expanded array's values (or the error loading it; None while loading).
    pub expanded: Option<&'a Result<Vec<String>, String>>,
    /// File name.
    pub file_name: Option<&'a str>,
    /// Styles.
    pub theme: Theme,
}

impl Widget for MetadataScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let Some(file) = self.file_name else {
            super::render_no_file("Metadata", t, area, buf);
            return;
        };
        let mut spans = vec![
            Span::styled(format!("Metadata · {file} "), t.heading()),
            Span::styled(
                format!("{} of {} keys", v.shown.len(), self.rows.len()),
                t.figure(),
            ),
        ];
        if !v.search.is_empty() {
            spans.push(Span::styled(format!(" · /{}", v.search), t.input()));
        }
        Paragraph::new(Line::from(spans)).render(head, buf);
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(t.label());
        let inner = block.inner(body);
        block.render(body, buf);
        let h = inner.height as usize;
        let key_w = self
            .rows
            .iter()
            .map(|r| r.key.chars().count())
            .max()
            .unwrap_or(10)
            .min(44);
        // A flat list: one row per shown key, the expanded key followed by its values; only
        // the rows on screen are built (an array may hold 262,144 values).
        let exp_at = v
            .expanded
            .as_deref()
            .and_then(|k| v.shown.iter().position(|i| self.rows[*i].key == k));
        let exp_item = exp_at.map(|e| &self.rows[v.shown[e]]);
        let values: Option<&[String]> = match (exp_item, self.expanded) {
            (Some(r), _) if !r.text_lines.is_empty() => Some(&r.text_lines),
            (Some(_), Some(Ok(vals))) => Some(vals),
            _ => None,
        };
        // While an array loads (or failed), one row says so.
        let status_row: Option<Line> = match (exp_item, values, self.expanded) {
            (Some(_), None, Some(Err(e))) => {
                Some(Line::from(Span::styled(format!("    {e}"), t.bad())))
            }
            (Some(_), None, _) => Some(Line::from(Span::styled("    loading…", t.label()))),
            _ => None,
        };
        let extra = values.map_or(status_row.is_some() as usize, |x| x.len());
        let total = v.shown.len() + if exp_at.is_some() { extra } else { 0 };
        let (cursor, _) = v.flat(self.rows);
        let off = layout::scroll_offset(cursor, h, total);
        let idx_w = values.map_or(1, |x| x.len().to_string().len());
        let mut lines: Vec<Line> = Vec::new();
        for pos in off..total.min(off + h) {
            let (si, val) = match exp_at {
                Some(e) if pos > e && pos <= e + extra => (e, Some(pos - e - 1)),
                Some(e) if pos > e + extra => (pos - extra, None),
                _ => (pos, None),
            };
            let style = if pos == cursor {
                t.selected()
            } else {
                t.text()
            };
            if let Some(k) = val {
                match values {
                    Some(vals) => lines.push(
                        Line::from(vec![
                            Span::styled(format!("    [{k:>idx_w$}] "), t.label()),
                            Span::raw(vals[k].clone()),
                        ])
                        .style(style),
                    ),
                    None => lines.push(status_row.clone().unwrap_or_default()),
                }
                continue;
            }
            let r = &self.rows[v.shown[si]];
            let expandable = r.array_len.is_some() || !r.text_lines.is_empty();
            let mark = match (expandable, Some(si) == exp_at) {
                (true, true) => "▾ ",
                (true, false) => "▸ ",
                _ => "  ",
            };
            // An expanded array's row says what is below it (not "unread · Enter loads").
            let value = if Some(si) == exp_at && r.array_len.is_some() {
                match (values, self.expanded) {
                    (Some(vals), _) => format!(
                        "{} values below · Enter collapses",
                        crate::core::units::group_digits(vals.len() as u128)
                    ),
                    (None, Some(Err(_))) => "not read: the reason is below".into(),
                    _ => "loading…".into(),
                }
            } else {
                r.value.clone()
            };
            // A value longer than the room left ends in "…" (Enter shows it whole).
            let room = (inner.width as usize).saturating_sub(2 + key_w + 1 + 17);
            let value = if room > 1 {
                crate::tui::format::fit(&value, room)
            } else {
                value
            };
            lines.push(
                Line::from(vec![
                    Span::raw(mark),
                    Span::styled(format!("{:<key_w$} ", r.key), t.heading()),
                    Span::styled(format!("{:<16} ", r.type_name), t.label()),
                    Span::raw(value),
                ])
                .style(style),
            );
        }
        Paragraph::new(lines).render(inner, buf);
        Paragraph::new(Line::from(vec![
            Span::styled(format!("{} ", v.position(self.rows)), t.figure()),
            Span::styled(footer_keys(v.value_row.is_some()), t.label()),
        ]))
        .render(foot, buf);
    }
}

/// What Enter does where the cursor is (the footer; the bottom line lists every key).
fn footer_keys(in_values: bool) -> &'static str {
    if in_values {
        "· Enter back to the key"
    } else {
        "· Enter expands/collapses ▸"
    }
}
