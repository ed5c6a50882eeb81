//! The help overlay: every key of the keymap, by context.

use crate::tui::keymap::{Context, Keymap};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

/// The overlay.
pub struct HelpOverlay<'a> {
    /// Keys.
    pub keymap: &'a Keymap,
    /// Styles.
    pub theme: Theme,
}

impl HelpOverlay<'_> {
    fn lines(&self, key_w: usize, col_w: usize) -> Vec<Line<'static>> {
        let t = self.theme;
        let mut out = Vec::new();
        for ctx in Context::ALL {
            out.push(Line::from(Span::styled(
                ctx.title().to_string(),
                t.heading(),
            )));
            for b in self.keymap.bindings(ctx) {
                // A help text longer than its column ends in "…" rather than running into
                // the next column.
                let room = col_w.saturating_sub(key_w + 1);
                let help = crate::tui::format::fit(&b.help, room);
                out.push(Line::from(vec![
                    Span::styled(format!(" {:<key_w$}", Keymap::key_label(b)), t.key()),
                    Span::styled(help, t.text()),
                ]));
            }
        }
        out
    }
}

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let r = area;
        Clear.render(r, buf);
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(Line::from(Span::styled(" Keys · ? or Esc closes ", t.title(true))))
            .title_bottom(Line::from(Span::styled(
                if r.width >= 90 {
                    " mouse: click a pane or field, wheel scrolls · bounds are ceilings, not predictions "
                } else {
                    " mouse: click selects, wheel scrolls · ceilings, not predictions "
                },
                t.label(),
            )));
        let inner = block.inner(r);
        block.render(r, buf);
        let key_w = if inner.width >= 100 { 13 } else { 12 };
        let n = self.lines(key_w, usize::MAX).len();
        let fit = n.div_ceil(inner.height.max(1) as usize).max(1);
        let cols = if inner.width >= 100 { fit.max(2) } else { fit }.min(3);
        // One blank column between columns.
        let col_w = (inner.width as usize + 1) / cols - 1;
        let lines = self.lines(key_w, col_w);
        let per = lines.len().div_ceil(cols);
        let areas = Layout::horizontal(vec![Constraint::Fill(1); cols])
            .spacing(1)
            .split(inner);
        for (i, a) in areas.iter().enumerate() {
            let chunk: Vec<Line> = lines.iter().skip(i * per).take(per).cloned().collect();
            Paragraph::new(chunk).render(*a, buf);
        }
    }
}
