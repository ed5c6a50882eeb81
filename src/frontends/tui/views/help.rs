//! The help overlay: every key of the keymap, by context, the keys of the view it was opened
//! from first.

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
    /// The view it was opened from: its keys come first.
    pub context: Context,
    /// Rows scrolled (↑↓ PgUp PgDn g G while it is open).
    pub scroll: usize,
    /// Set to the last useful scroll row when drawn, so the keys stop there.
    pub scroll_end: Option<&'a std::cell::Cell<usize>>,
    /// Styles.
    pub theme: Theme,
}

impl HelpOverlay<'_> {
    fn lines(&self, key_w: usize, col_w: usize) -> Vec<Line<'static>> {
        let t = self.theme;
        let mut out = Vec::new();
        // This view's keys first, then the ones that work everywhere, then the other views'.
        let mut order = vec![self.context];
        for c in std::iter::once(Context::Global).chain(Context::ALL) {
            if !order.contains(&c) {
                order.push(c);
            }
        }
        for ctx in order {
            let title = if ctx == self.context && ctx != Context::Global {
                format!("{} · this view", ctx.title())
            } else {
                ctx.title().to_string()
            };
            out.push(Line::from(Span::styled(title, t.heading())));
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
        out.push(Line::from(Span::styled(
            "Questions (y/n)".to_string(),
            t.heading(),
        )));
        for (keys, help) in Keymap::ANSWERS {
            let room = col_w.saturating_sub(key_w + 1);
            out.push(Line::from(vec![
                Span::styled(format!(" {keys:<key_w$}"), t.key()),
                Span::styled(crate::tui::format::fit(help, room), t.text()),
            ]));
        }
        out
    }
}

impl Widget for HelpOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let r = area;
        Clear.render(r, buf);
        let inner = Block::new().borders(Borders::ALL).inner(r);
        let key_w = if inner.width >= 100 { 13 } else { 12 };
        let n = self.lines(key_w, usize::MAX).len();
        // As many columns as the rows need, up to three, but none narrower than 40 cells (a
        // help text keeps its words); what does not fit scrolls.
        let fit = n.div_ceil(inner.height.max(1) as usize).max(1);
        let widest = ((inner.width as usize + 1) / 41).max(1);
        let cols = if inner.width >= 100 { fit.max(2) } else { fit }
            .min(3)
            .min(widest);
        // One blank column between columns.
        let col_w = (inner.width as usize + 1) / cols - 1;
        let lines = self.lines(key_w, col_w);
        let per = lines.len().div_ceil(cols);
        let h = inner.height as usize;
        let last = per.saturating_sub(h);
        if let Some(end) = self.scroll_end {
            end.set(last);
        }
        let at = self.scroll.min(last);
        let title = if last > 0 {
            format!(
                " Keys · rows {}–{} of {} (↑↓ PgUp PgDn g G) · ? or Esc closes ",
                at + 1,
                (at + h).min(per),
                per
            )
        } else {
            " Keys · ? or Esc closes ".to_string()
        };
        let block = Block::new()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(t.border(true))
            .title(Line::from(Span::styled(title, t.title(true))))
            .title_bottom(Line::from(Span::styled(
                if r.width >= 90 {
                    " mouse: click a pane or field, wheel scrolls · bounds are ceilings, not predictions "
                } else {
                    " mouse: click selects, wheel scrolls · ceilings, not predictions "
                },
                t.label(),
            )));
        block.render(r, buf);
        let areas = Layout::horizontal(vec![Constraint::Fill(1); cols])
            .spacing(1)
            .split(inner);
        for (i, a) in areas.iter().enumerate() {
            let chunk: Vec<Line> = lines
                .iter()
                .skip(i * per)
                .take(per)
                .skip(at)
                .take(h)
                .cloned()
                .collect();
            Paragraph::new(chunk).render(*a, buf);
        }
    }
}
