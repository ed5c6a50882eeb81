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
    /// Blocks scrolled (↑↓ with the pane focused; `panes::scroll`).
    pub scroll: u16,
    /// Set to the last useful scroll position when drawn, so the keys stop there.
    pub scroll_end: Option<&'a std::cell::Cell<u16>>,
    /// Styles.
    pub theme: Theme,
}

impl Widget for ClaimPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let inner = super::block("Claim", self.focused, t).inner(area);
        let Some(c) = self.claim else {
            super::block("Claim", self.focused, t).render(area, buf);
            if let Some(end) = self.scroll_end {
                end.set(0);
            }
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
        // Blocks that scroll whole: each headline line, the hint, each ceiling with the first
        // assumption it falsifies (a lead-in never ends a page alone), then each further
        // assumption on its own, so a long list fills the page instead of leaving its rows
        // blank above `↓ N more`.
        let mut groups: Vec<Vec<Line<'static>>> = headline(check, self.report, style, t)
            .into_iter()
            .map(|l| vec![l])
            .collect();
        if !self.focused && !exceeded.is_empty() {
            groups.push(vec![Line::from(Span::styled(
                "Tab here to read every assumption (↑↓ scroll)",
                t.label(),
            ))]);
        }
        for l in &check.lines {
            if l.exceeded {
                let lead = Line::from(vec![
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
                ]);
                let item = |a: &String| {
                    Line::from(vec![Span::raw("   · "), Span::styled(a.clone(), t.label())])
                };
                let mut items = l.assumptions.iter();
                groups.push(
                    std::iter::once(lead)
                        .chain(items.next().map(item))
                        .collect(),
                );
                groups.extend(items.map(|a| vec![item(a)]));
            } else {
                groups.push(vec![Line::from(vec![
                    Span::styled("✓ within ", t.ok()),
                    Span::styled(
                        format!(
                            "{} ({})",
                            l.ceiling,
                            crate::tui::format::rate(l.tokens_per_second)
                        ),
                        t.label(),
                    ),
                ])]);
            }
        }
        let blocks: Vec<super::scroll::Block> = groups
            .into_iter()
            .map(|g| super::scroll::Block::group(g, inner.width))
            .collect();
        let page = super::scroll::page(&blocks, inner.height as usize, self.scroll as usize);
        if let Some(end) = self.scroll_end {
            end.set(page.last as u16);
        }
        Paragraph::new(page.lines.clone()).render(inner, buf);
        let mark = page.mark();
        let title = if mark.is_empty() {
            "Claim".to_string()
        } else {
            format!("Claim · {mark}")
        };
        super::block(title, self.focused, t).render(area, buf);
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
