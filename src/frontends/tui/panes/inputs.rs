//! The input panes (Model, Cache & run, Machine): a title and a field list.

use crate::tui::fields::{Pane, Row};
use crate::tui::theme::Theme;
use crate::tui::widgets::FieldList;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// One input pane.
pub struct InputPane<'a> {
    /// Which pane.
    pub pane: Pane,
    /// Title after the pane's name (architecture, machine id).
    pub subtitle: String,
    /// Its rows.
    pub rows: &'a [Row],
    /// Selected row.
    pub selected: usize,
    /// Focused.
    pub focused: bool,
    /// Styles.
    pub theme: Theme,
}

impl Widget for InputPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut title = if self.subtitle.is_empty() {
            self.pane.title().to_string()
        } else {
            format!("{} · {}", self.pane.title(), self.subtitle)
        };
        let inner = super::block(String::new(), self.focused, self.theme).inner(area);
        // Rows the pane cannot show are said in its title (↑↓ reach them).
        let (above, below) = crate::tui::layout::hidden_rows(inner, self.rows.len(), self.selected);
        if above > 0 {
            title.push_str(&format!(" · ↑ {above} more"));
        }
        if below > 0 {
            title.push_str(&format!(" · ↓ {below} more"));
        }
        let block = super::block(title, self.focused, self.theme);
        let inner = block.inner(area);
        block.render(area, buf);
        FieldList {
            rows: self.rows,
            selected: self.selected,
            focused: self.focused,
            label_width: 11,
            theme: self.theme,
        }
        .render(inner, buf);
    }
}
