//! The Claim pane: a claimed or observed tokens/s held against every ceiling
//! (`core::check_claim`), with the assumptions a rate above a ceiling falsifies.

use crate::core::units;
use crate::tui::app::Claim;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// The Claim pane.
pub struct ClaimPane<'a> {
    /// The claim, if one was typed.
    pub claim: Option<&'a Claim>,
    /// Focused.
    pub focused: bool,
    /// Rows scrolled (↑↓ with the pane focused).
    pub scroll: u16,
    /// Styles.
    pub theme: Theme,
}

impl Widget for ClaimPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let block = super::block("Claim", self.focused, t);
        let inner = block.inner(area);
        block.render(area, buf);
        let Some(c) = self.claim else {
            // The longest wording that fits one row, so the hint is never cut.
            let (lead, tail) = [
                ("Check a claimed or observed tokens/s: press ", " (or Enter here)"),
                ("Check a claimed tokens/s: press ", " (or Enter here)"),
                ("Check a claimed tokens/s: press ", " or Enter"),
                ("Claimed tokens/s? ", ""),
            ]
            .into_iter()
            .find(|(l, r)| l.chars().count() + 1 + r.chars().count() <= inner.width as usize)
            .unwrap_or(("Claimed tokens/s? ", ""));
            Paragraph::new(Line::from(vec![
                Span::styled(lead, t.label()),
                Span::styled("/", t.key()),
                Span::styled(tail, t.label()),
            ]))
            .wrap(Wrap { trim: true })
            .render(inner, buf);
            return;
        };
        let check = &c.check;
        let exceeded: Vec<_> = check.lines.iter().filter(|l| l.exceeded).collect();
        let style = if check.impossible {
            t.bad()
        } else if exceeded.is_empty() {
            t.ok()
        } else {
            t.warn()
        };
        let mut lines = vec![Line::from(vec![
            Span::styled(
                format!("{} tokens/s: ", units::fmt_rate(check.tokens_per_second)),
                t.heading(),
            ),
            Span::styled(check.verdict.clone(), style),
        ])];
        if !self.focused && !exceeded.is_empty() {
            lines.push(Line::from(Span::styled(
                "Tab here to read every assumption (↑↓ scroll)",
                t.label(),
            )));
        }
        for l in &check.lines {
            if l.exceeded {
                lines.push(Line::from(vec![
                    Span::styled("✗ above ", t.bad()),
                    Span::styled(
                        format!("{} ({})", l.ceiling, units::fmt_rate(l.tokens_per_second)),
                        t.text(),
                    ),
                    Span::styled(" ⇒ one of these is false:", t.label()),
                ]));
                for a in &l.assumptions {
                    lines.push(Line::from(vec![
                        Span::raw("   · "),
                        Span::styled(a.clone(), t.label()),
                    ]));
                }
            } else {
                lines.push(Line::from(vec![
                    Span::styled("✓ within ", t.ok()),
                    Span::styled(
                        format!("{} ({})", l.ceiling, units::fmt_rate(l.tokens_per_second)),
                        t.label(),
                    ),
                ]));
            }
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((self.scroll, 0))
            .render(inner, buf);
    }
}
