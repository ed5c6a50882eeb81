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
    /// Search (case-insensitive substring) of key names, values, and the values of the
    /// arrays already read.
    pub search: String,
    /// Arrays the search could not look into: not read yet (Enter reads one).
    pub unread_arrays: usize,
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
        let hit = |r: &MetaItem| {
            needle.is_empty()
                || r.key.to_lowercase().contains(&needle)
                || value_text(r).to_lowercase().contains(&needle)
                || (r.text_lines.iter()).any(|l| l.to_lowercase().contains(&needle))
        };
        self.shown = (0..rows.len()).filter(|i| hit(&rows[*i])).collect();
        self.unread_arrays = 0;
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
        self.value_row = None;
    }

    /// Set the search text (incremental).
    pub fn set_search(&mut self, s: String, rows: &[MetaItem]) {
        self.search = s;
        self.selected = 0;
        self.rebuild(rows);
    }

    /// Search the arrays already read too (after [`set_search`](Self::set_search)): an
    /// array holding the text is listed, and the first one is opened with the cursor on its
    /// first matching value (a token string is found). Arrays not read yet are counted in
    /// [`unread_arrays`](Self::unread_arrays) so the header can say they were not searched.
    pub fn search_arrays(
        &mut self,
        rows: &[MetaItem],
        arrays: &[(String, Result<Vec<String>, String>)],
    ) {
        let needle = self.search.to_lowercase();
        if needle.is_empty() {
            return;
        }
        let mut first: Option<(usize, usize, usize)> = None;
        for (ri, r) in rows.iter().enumerate() {
            // Arrays of up to 12 values are listed whole on their row (searched above).
            if r.array_len.is_none_or(|n| n <= 12) {
                continue;
            }
            let Some((_, Ok(vals))) = arrays.iter().find(|(k, _)| *k == r.key) else {
                self.unread_arrays += 1;
                continue;
            };
            let Some(vi) = vals.iter().position(|v| v.to_lowercase().contains(&needle)) else {
                continue;
            };
            if !self.shown.contains(&ri) {
                self.shown.push(ri);
                self.shown.sort_unstable();
            }
            if first.is_none() {
                first = Some((ri, vi, vals.len()));
            }
        }
        if let Some((ri, vi, len)) = first {
            self.selected = self.shown.iter().position(|i| *i == ri).unwrap_or(0);
            self.expanded = Some(rows[ri].key.clone());
            self.expanded_len = len;
            self.value_row = Some(vi);
        }
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
            if v.unread_arrays > 0 {
                spans.push(Span::styled(
                    format!(
                        " · {} unread array{} not searched (Enter reads one)",
                        v.unread_arrays,
                        if v.unread_arrays == 1 { "" } else { "s" }
                    ),
                    t.label(),
                ));
            }
        }
        let head_line = Line::from(spans);
        let head_line = if head_line.width() > head.width as usize {
            // Cut with "…", never silently.
            let text: String = head_line.spans.iter().map(|s| s.content.as_ref()).collect();
            Line::from(Span::styled(
                crate::tui::format::fit(&text, head.width as usize),
                t.heading(),
            ))
        } else {
            head_line
        };
        Paragraph::new(head_line).render(head, buf);
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
                value_text(r)
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
                    Span::styled(
                        format!("{:<key_w$} ", crate::tui::format::fit(&r.key, key_w)),
                        t.heading(),
                    ),
                    Span::styled(
                        format!("{:<16} ", crate::tui::format::fit(&r.type_name, 16)),
                        t.label(),
                    ),
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

/// A key's value as the view shows it: `general.file_type` with its llama.cpp name
/// (`15 (MOSTLY_Q4_K_M)`), every other value as read.
pub fn value_text(r: &MetaItem) -> String {
    if r.key == "general.file_type"
        && let Some(name) = r.value.trim().parse::<u64>().ok().and_then(ftype_name)
    {
        return format!("{} ({name})", r.value.trim());
    }
    r.value.clone()
}

/// The name of a `general.file_type` value: llama.cpp's `enum llama_ftype` (llama.h, b11434)
/// without its `LLAMA_FTYPE_` prefix; `None` for a number it does not define (4–6 and 33–35
/// were removed).
pub fn ftype_name(v: u64) -> Option<&'static str> {
    Some(match v {
        0 => "ALL_F32",
        1 => "MOSTLY_F16",
        2 => "MOSTLY_Q4_0",
        3 => "MOSTLY_Q4_1",
        7 => "MOSTLY_Q8_0",
        8 => "MOSTLY_Q5_0",
        9 => "MOSTLY_Q5_1",
        10 => "MOSTLY_Q2_K",
        11 => "MOSTLY_Q3_K_S",
        12 => "MOSTLY_Q3_K_M",
        13 => "MOSTLY_Q3_K_L",
        14 => "MOSTLY_Q4_K_S",
        15 => "MOSTLY_Q4_K_M",
        16 => "MOSTLY_Q5_K_S",
        17 => "MOSTLY_Q5_K_M",
        18 => "MOSTLY_Q6_K",
        19 => "MOSTLY_IQ2_XXS",
        20 => "MOSTLY_IQ2_XS",
        21 => "MOSTLY_Q2_K_S",
        22 => "MOSTLY_IQ3_XS",
        23 => "MOSTLY_IQ3_XXS",
        24 => "MOSTLY_IQ1_S",
        25 => "MOSTLY_IQ4_NL",
        26 => "MOSTLY_IQ3_S",
        27 => "MOSTLY_IQ3_M",
        28 => "MOSTLY_IQ2_S",
        29 => "MOSTLY_IQ2_M",
        30 => "MOSTLY_IQ4_XS",
        31 => "MOSTLY_IQ1_M",
        32 => "MOSTLY_BF16",
        36 => "MOSTLY_TQ1_0",
        37 => "MOSTLY_TQ2_0",
        38 => "MOSTLY_MXFP4_MOE",
        39 => "MOSTLY_NVFP4",
        40 => "MOSTLY_Q1_0",
        41 => "MOSTLY_Q2_0",
        1024 => "GUESSED",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &str, value: &str) -> MetaItem {
        MetaItem {
            key: key.into(),
            type_name: "u32".into(),
            value: value.into(),
            array_len: None,
            text_lines: Vec::new(),
        }
    }

    #[test]
    fn file_type_is_named_as_llama_cpp_names_it() {
        assert_eq!(
            value_text(&item("general.file_type", "15")),
            "15 (MOSTLY_Q4_K_M)"
        );
        assert_eq!(
            value_text(&item("general.file_type", "7")),
            "7 (MOSTLY_Q8_0)"
        );
        // Removed numbers stay bare; other keys are untouched.
        assert_eq!(value_text(&item("general.file_type", "5")), "5");
        assert_eq!(value_text(&item("llama.block_count", "15")), "15");
    }

    #[test]
    fn search_finds_values_and_read_arrays() {
        let mut rows = vec![
            item("general.name", "\"Gemma 3 270m\""),
            item("general.file_type", "15"),
        ];
        let mut tokens = item("tokenizer.ggml.tokens", "4,412,518 bytes unread");
        tokens.array_len = Some(262_144);
        rows.push(tokens);
        let mut v = MetadataView::default();
        v.set_search("gemma 3".into(), &rows);
        assert_eq!(v.shown, vec![0]);
        v.set_search("q4_k_m".into(), &rows);
        assert_eq!(v.shown, vec![1]);
        // A token string: not found while the array is unread, and the header says so.
        v.set_search("<start_of_turn>".into(), &rows);
        v.search_arrays(&rows, &[]);
        assert!(v.shown.is_empty());
        assert_eq!(v.unread_arrays, 1);
        let read = vec![(
            "tokenizer.ggml.tokens".to_string(),
            Ok(vec![
                "<pad>".into(),
                "<eos>".into(),
                "<start_of_turn>".into(),
            ]),
        )];
        v.set_search("<start_of_turn>".into(), &rows);
        v.search_arrays(&rows, &read);
        assert_eq!(v.shown, vec![2]);
        assert_eq!(v.unread_arrays, 0);
        assert_eq!(v.expanded.as_deref(), Some("tokenizer.ggml.tokens"));
        assert_eq!(v.value_row, Some(2));
    }
}
