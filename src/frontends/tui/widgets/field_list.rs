//! The rows of an input pane: `label  value  [slider]  tag`, one per cell from
//! `layout::field_cells`, the selected one highlighted.

use crate::tui::fields::{Row, Tag};
use crate::tui::format::fit;
use crate::tui::layout;
use crate::tui::theme::Theme;
use crate::tui::widgets::Slider;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// A list of field rows.
pub struct FieldList<'a> {
    /// Rows.
    pub rows: &'a [Row],
    /// Index of the selected row.
    pub selected: usize,
    /// The row the view keeps in sight ([`layout::field_cells`]'s anchor): the selected row,
    /// or a row below it so read-only rows after the last field can be read.
    pub anchor: usize,
    /// The pane has the focus.
    pub focused: bool,
    /// Width of the label column.
    pub label_width: u16,
    /// Styles.
    pub theme: Theme,
}

fn tag_span(tag: &Tag, t: Theme) -> Span<'static> {
    match tag {
        Tag::Prov(p) => Span::styled(p.label().to_string(), t.provenance(*p)),
        Tag::Note(s) => Span::styled(s.clone(), t.label()),
        Tag::Warn(s) => Span::styled(s.clone(), t.warn()),
    }
}

impl Widget for FieldList<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        for (i, full) in layout::field_cells(area, self.rows.len(), self.anchor) {
            // A cell with a column to its right keeps its last cell blank, so a tag at its
            // end ("needs -fa") never runs into the next column's label.
            let cell = if full.right() < area.right() {
                Rect {
                    width: full.width.saturating_sub(1),
                    ..full
                }
            } else {
                full
            };
            let row = &self.rows[i];
            let selected = i == self.selected && row.field.is_some();
            let base = if selected && self.focused {
                t.selected()
            } else if selected {
                t.selected_unfocused()
            } else {
                Style::new()
            };
            buf.set_style(full, base);
            if row.heading {
                Line::from(Span::styled(row.label.clone(), t.heading())).render(cell, buf);
                continue;
            }
            let mut tag = row.tag.as_ref().map(|x| tag_span(x, t));
            // A slider keeps at least 6 cells: a long value (the largest context) shortens a
            // warning tag to its mark rather than hiding the slider.
            if row.slider.is_some()
                && let Some(Tag::Warn(_)) = &row.tag
            {
                let need = self.label_width as usize
                    + row.value.chars().count()
                    + 8
                    + tag.as_ref().map_or(0, |s| s.width() + 1);
                if need > cell.width as usize {
                    tag = Some(Span::styled("!", t.warn()));
                }
            }
            let tag_w = tag.as_ref().map_or(0, |s| s.width() as u16 + 1);
            // A label longer than the column ("fp16-acc16 @gpu0") keeps one space before its
            // value rather than running into it.
            let label_w = self
                .label_width
                .max(row.label.chars().count() as u16 + 1)
                .min(cell.width);
            let label = Span::styled(
                format!("{:<w$}", row.label, w = label_w as usize),
                t.label(),
            );
            let room = cell.width.saturating_sub(label_w + tag_w) as usize;
            let value_text = fit(&row.value, room);
            let value = Span::styled(
                value_text,
                if row.field.is_some() {
                    t.text()
                } else {
                    t.label()
                },
            );
            let value_w = value.width() as u16;
            Line::from(vec![label, value]).style(base).render(cell, buf);
            if let Some(tag) = tag
                && cell.width > tag_w
            {
                let r = Rect {
                    x: cell.right() - tag_w + 1,
                    y: cell.y,
                    width: tag_w - 1,
                    height: 1,
                };
                Line::from(tag).style(base).render(r, buf);
            }
            if let Some(pos) = row.slider {
                let start = cell.x + label_w + value_w + 1;
                let end = cell.right().saturating_sub(tag_w + 1);
                if end > start + 4 {
                    Slider { pos, theme: t }.render(
                        Rect {
                            x: start,
                            y: cell.y,
                            width: end - start,
                            height: 1,
                        },
                        buf,
                    );
                }
            }
        }
    }
}
