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

/// Values of an expanded array shown at most.
pub const EXPANDED_MAX: usize = 2000;

/// The view's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetadataView {
    /// Key search (case-insensitive substring).
    pub search: String,
    /// Indices of the keys shown.
    pub shown: Vec<usize>,
    /// Selected key (index into `shown`).
    pub selected: usize,
    /// The expanded key.
    pub expanded: Option<String>,
}

impl MetadataView {
    /// Recompute the shown keys.
    pub fn rebuild(&mut self, rows: &[MetaItem]) {
        let needle = self.search.to_lowercase();
        self.shown = (0..rows.len())
            .filter(|i| needle.is_empty() || rows[*i].key.to_lowercase().contains(&needle))
            .collect();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    /// Set the search text (incremental).
    pub fn set_search(&mut self, s: String, rows: &[MetaItem]) {
        self.search = s;
        self.selected = 0;
        self.rebuild(rows);
    }

    /// The selected key, if it is an array that can expand.
    pub fn selected_key(&self, rows: &[MetaItem]) -> Option<String> {
        let r = &rows[*self.shown.get(self.selected)?];
        r.array_len.map(|_| r.key.clone())
    }

    /// Move the selection.
    pub fn update(&mut self, a: Action, rows: &[MetaItem], screen: Rect) {
        if self.shown.is_empty() && !rows.is_empty() && self.search.is_empty() {
            self.rebuild(rows);
        }
        let page = screen.height.saturating_sub(6).max(1) as i64;
        let last = self.shown.len().saturating_sub(1) as i64;
        let mv = |s: &mut Self, d: i64| {
            s.selected = (s.selected as i64 + d).clamp(0, last.max(0)) as usize
        };
        match a {
            Action::Up => mv(self, -1),
            Action::Down => mv(self, 1),
            Action::PageUp => mv(self, -page),
            Action::PageDown => mv(self, page),
            Action::Home => self.selected = 0,
            Action::End => self.selected = last.max(0) as usize,
            Action::Scroll(_, _, d) => mv(self, d as i64 * 3),
            _ => {}
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
        // Lines: one per shown key; the expanded key is followed by its values.
        let mut lines: Vec<Line> = Vec::new();
        let off = layout::scroll_offset(v.selected, h.saturating_sub(2).max(1), v.shown.len());
        for (si, ri) in v.shown.iter().enumerate().skip(off) {
            if lines.len() >= h {
                break;
            }
            let r = &self.rows[*ri];
            let style = if si == v.selected {
                t.selected()
            } else {
                t.text()
            };
            let mark = match (r.array_len, v.expanded.as_deref() == Some(r.key.as_str())) {
                (Some(_), true) => "▾ ",
                (Some(_), false) => "▸ ",
                _ => "  ",
            };
            lines.push(
                Line::from(vec![
                    Span::raw(mark),
                    Span::styled(format!("{:<key_w$} ", r.key), t.heading()),
                    Span::styled(format!("{:<16} ", r.type_name), t.label()),
                    Span::raw(r.value.clone()),
                ])
                .style(style),
            );
            if v.expanded.as_deref() == Some(r.key.as_str()) {
                match self.expanded {
                    None => lines.push(Line::from(Span::styled("    loading…", t.label()))),
                    Some(Err(e)) => {
                        lines.push(Line::from(Span::styled(format!("    {e}"), t.bad())))
                    }
                    Some(Ok(values)) => {
                        let room = h.saturating_sub(lines.len()).saturating_sub(1);
                        for (k, val) in values.iter().take(room.min(EXPANDED_MAX)).enumerate() {
                            lines.push(Line::from(vec![
                                Span::styled(format!("    [{k:>6}] "), t.label()),
                                Span::raw(val.clone()),
                            ]));
                        }
                        if values.len() > room.min(EXPANDED_MAX) {
                            lines.push(Line::from(Span::styled(
                                format!("    … {} more", values.len() - room.min(EXPANDED_MAX)),
                                t.label(),
                            )));
                        }
                    }
                }
            }
        }
        Paragraph::new(lines).render(inner, buf);
        Paragraph::new(Line::from(Span::styled(
            "↑↓ move  Enter expand an array  / search keys  Esc back",
            t.label(),
        )))
        .render(foot, buf);
    }
}
