//! The Claim pane: a claimed or observed tokens/s held against every ceiling
//! (`core::check_claim`), with the assumptions a rate above a ceiling falsifies.

use crate::core::Report;
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
    /// The report the claim was checked against (its context, sequences and bandwidth are
    /// the assumptions the headline names).
    pub report: &'a Report,
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
                (
                    "Check a claimed or observed tokens/s: press ",
                    " (or Enter here)",
                ),
                ("Check a claimed tokens/s: press ", " (or Enter here)"),
                ("Check a claimed tokens/s: press ", " or Enter"),
                ("Check a claim: press ", " or Enter"),
                ("Check a claim: ", ""),
            ]
            .into_iter()
            .find(|(l, r)| l.chars().count() + 1 + r.chars().count() <= inner.width as usize)
            .unwrap_or(("Check a claim: ", ""));
            Paragraph::new(Line::from(vec![
                Span::styled(lead, t.label()),
                Span::styled("/", t.key()),
                Span::styled(tail, t.label()),
            ]))
            .wrap(Wrap { trim: true })
            .render(inner, buf);
            return;
        };
        let check = &crate::report::words::claim(&c.check);
        let exceeded: Vec<_> = check.lines.iter().filter(|l| l.exceeded).collect();
        let style = if check.impossible {
            t.bad()
        } else if exceeded.is_empty() {
            t.ok()
        } else {
            t.warn()
        };
        let mut lines = headline(check, self.report, style, t);
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
                        format!(
                            "{} ({})",
                            l.ceiling,
                            crate::tui::format::rate(l.tokens_per_second)
                        ),
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
                        format!(
                            "{} ({})",
                            l.ceiling,
                            crate::tui::format::rate(l.tokens_per_second)
                        ),
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

/// The claim's headline: the report layer's own verdict (`report::words::claim_verdict`, the
/// sentence `llmbound check` prints, which names the retained context when it decides and never
/// contradicts the ✓/✗ lines), then the assumptions it was checked under: the retained
/// context, the sequences and the highest ceiling's bandwidth with its provenance.
fn headline(
    check: &crate::report::words::ClaimWords,
    r: &Report,
    style: ratatui::style::Style,
    t: Theme,
) -> Vec<Line<'static>> {
    let n = units::fmt_tokens(r.inputs.cache.context);
    let seqs = r.inputs.cache.sequences;
    let h = &r.decode.highest;
    let seq = if seqs > 1 {
        format!(" × {seqs} sequences (rates are their sum)")
    } else {
        String::new()
    };
    vec![
        Line::from(Span::styled(check.verdict.clone(), style)),
        Line::from(Span::styled(
            format!(
                "{} tokens/s checked at {n} tokens retained{seq}, {} bandwidth {}",
                crate::tui::format::rate(check.tokens_per_second),
                h.bandwidth_provenance.label(),
                units::fmt_bandwidth(h.bandwidth)
            ),
            t.label(),
        )),
    ]
}
