//! The input panes (Model, Cache & run, Machine): a title and a field list.

use crate::profile::file::MachineFile;
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
        // On the last field, the read-only rows after it (the Machine pane's notes) come into
        // view below it, as far as the pane holds them.
        let last_field = self.rows.iter().rposition(|r| r.field.is_some());
        let anchor = if last_field == Some(self.selected) {
            (self.selected + (inner.height as usize).saturating_sub(1))
                .min(self.rows.len().saturating_sub(1))
        } else {
            self.selected
        };
        // Rows the pane cannot show are said in its title (↑↓ reach them).
        let (above, below) = crate::tui::layout::hidden_rows(inner, self.rows.len(), anchor);
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
            anchor,
            focused: self.focused,
            label_width: 11,
            theme: self.theme,
        }
        .render(inner, buf);
    }
}

/// The Machine pane's last block: the profile's notes (what its figures assume: the CUDA
/// context to count as A, host RAM to edit) and, per tier, where its free memory comes from
/// (the Mac's GPU working set), word-wrapped to `width` cells. Read-only rows that ↓ scrolls
/// to; none when the profile has neither.
pub fn notes_rows(m: &MachineFile, width: usize) -> Vec<Row> {
    let mut paragraphs: Vec<String> = Vec::new();
    if !m.notes.trim().is_empty() {
        paragraphs.push(m.notes.trim().to_string());
    }
    for t in &m.tiers {
        if let Some(f) = &t.free
            && !f.source.trim().is_empty()
        {
            paragraphs.push(format!("{} free memory: {}", t.name, f.source.trim()));
        }
    }
    if paragraphs.is_empty() {
        return Vec::new();
    }
    let text = |label: String, heading: bool| Row {
        field: None,
        label,
        value: String::new(),
        tag: None,
        slider: None,
        heading,
    };
    let mut rows = vec![text("Notes (profile)".into(), true)];
    for p in paragraphs {
        rows.extend(wrap(&p, width.max(12)).into_iter().map(|l| text(l, false)));
    }
    rows
}

/// Words into lines of at most `width` characters (a longer word is cut with "…").
fn wrap(text: &str, width: usize) -> Vec<String> {
    let fit = crate::tui::format::fit;
    crate::tui::format::wrap_words(text.split_whitespace().map(|w| fit(w, width)), width)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn notes_wrap_at_words() {
        assert_eq!(
            wrap("the CUDA context and driver take some of it", 16),
            ["the CUDA context", "and driver take", "some of it"]
        );
        assert_eq!(wrap("recommendedMaxWorkingSetSize", 10), ["recommend…"]);
    }
}
