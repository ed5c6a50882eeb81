//! Compare machines: the current model and cache settings evaluated on every machine profile
//! (rows from `crate::compare`), with columns the user shows, hides and sorts by.

use crate::compare::{CompareFigures, CompareRow};
use crate::core::units;
use crate::tui::action::Action;
use crate::tui::layout;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, Widget};
use std::cmp::Ordering;

/// A column of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// Fits or not.
    Fits,
    /// Headroom.
    Headroom,
    /// Largest context.
    MaxContext,
    /// Short-context ceiling.
    Short,
    /// Full-context ceiling (non-overlapped).
    Full,
    /// Full-context ceiling with perfect overlap.
    Overlap,
    /// Inventory-mode ceiling.
    Inventory,
    /// Prefill ceiling.
    Prefill,
    /// Tier with the least headroom.
    CapacityTier,
    /// Tier that takes longest per step.
    DecodeTier,
    /// Bandwidth provenance (optimistic vendor ceiling or not).
    Basis,
}

impl Col {
    /// Every column, left to right.
    pub const ALL: [Col; 11] = [
        Col::Fits,
        Col::Headroom,
        Col::MaxContext,
        Col::Short,
        Col::Full,
        Col::Overlap,
        Col::Inventory,
        Col::Prefill,
        Col::CapacityTier,
        Col::DecodeTier,
        Col::Basis,
    ];
    /// Header.
    pub fn title(self) -> &'static str {
        match self {
            Col::Fits => "fits",
            Col::Headroom => "free",
            Col::MaxContext => "max ctx",
            Col::Short => "short",
            Col::Full => "at N",
            Col::Overlap => "overlap",
            Col::Inventory => "inventory",
            Col::Prefill => "prefill",
            Col::CapacityTier => "tight",
            Col::DecodeTier => "slow",
            Col::Basis => "basis",
        }
    }
    /// Cells the column takes.
    pub fn width(self) -> u16 {
        match self {
            Col::Fits => 4,
            Col::Headroom => 9,
            Col::MaxContext => 10,
            Col::Short => 7,
            Col::Full => 7,
            Col::Overlap => 7,
            Col::Inventory => 9,
            Col::Prefill => 8,
            Col::CapacityTier => 7,
            Col::DecodeTier => 7,
            Col::Basis => 8,
        }
    }
    fn numeric(self, f: &CompareFigures) -> f64 {
        match self {
            Col::Fits => f.fits as u8 as f64,
            Col::Headroom => f.headroom_bytes as f64,
            Col::MaxContext => f.max_context_tokens.map_or(f64::INFINITY, |m| m as f64),
            Col::Short => f.short_tokens_per_second,
            Col::Full => f.full_tokens_per_second,
            Col::Overlap => f.overlapped_tokens_per_second,
            Col::Inventory => f.inventory_full_tokens_per_second.unwrap_or(0.0),
            Col::Prefill => f.prefill_tokens_per_second.unwrap_or(0.0),
            Col::CapacityTier | Col::DecodeTier | Col::Basis => 0.0,
        }
    }
    fn text(self, f: &CompareFigures) -> String {
        match self {
            Col::Fits => if f.fits { "yes" } else { "NO" }.into(),
            Col::Headroom => units::fmt_gib_signed(f.headroom_bytes)
                .trim_end_matches(" GiB")
                .to_string(),
            Col::MaxContext => f
                .max_context_tokens
                .map_or("no limit".into(), units::fmt_tokens),
            Col::Short => units::fmt_rate(f.short_tokens_per_second),
            Col::Full => units::fmt_rate(f.full_tokens_per_second),
            Col::Overlap => units::fmt_rate(f.overlapped_tokens_per_second),
            Col::Inventory => f
                .inventory_full_tokens_per_second
                .map_or("—".into(), units::fmt_rate),
            Col::Prefill => f
                .prefill_tokens_per_second
                .map_or("none".into(), units::fmt_rate),
            Col::CapacityTier => f.capacity_tier.clone(),
            Col::DecodeTier => f.decode_tier.clone(),
            Col::Basis => {
                if f.optimistic_vendor {
                    "spec*".into()
                } else {
                    f.bandwidth_provenance.label().into()
                }
            }
        }
    }
}

/// The view's state.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareView {
    /// One row per machine (current first).
    pub rows: Vec<CompareRow>,
    /// The current machine's id.
    pub current: String,
    /// Row order (indices into `rows`).
    pub order: Vec<usize>,
    /// Selected row (index into `order`).
    pub selected: usize,
    /// Selected column.
    pub column: usize,
    /// Hidden columns.
    pub hidden: Vec<Col>,
    /// Sort column and descending.
    pub sort: Option<(Col, bool)>,
}

impl Default for CompareView {
    fn default() -> Self {
        CompareView {
            rows: Vec::new(),
            current: String::new(),
            order: Vec::new(),
            selected: 0,
            column: 0,
            hidden: vec![Col::Inventory, Col::Prefill],
            sort: None,
        }
    }
}

impl CompareView {
    /// New rows (after a change).
    pub fn set_rows(&mut self, rows: Vec<CompareRow>, current: &str) {
        self.rows = rows;
        self.current = current.to_string();
        self.resort();
    }

    fn resort(&mut self) {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        if let Some((col, desc)) = self.sort {
            order.sort_by(|a, b| {
                let fa = self.rows[*a].outcome.as_ref().ok();
                let fb = self.rows[*b].outcome.as_ref().ok();
                let o = match (fa, fb) {
                    (Some(x), Some(y)) => match col {
                        Col::CapacityTier | Col::DecodeTier | Col::Basis => {
                            col.text(x).cmp(&col.text(y))
                        }
                        _ => col.numeric(x).total_cmp(&col.numeric(y)),
                    },
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                };
                let o = if desc { o.reverse() } else { o };
                o.then(a.cmp(b))
            });
        }
        self.order = order;
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
    }

    /// The machine id of the selected row.
    pub fn selected_machine(&self) -> Option<String> {
        self.order
            .get(self.selected)
            .map(|i| self.rows[*i].machine_id.clone())
    }

    /// Visible columns.
    pub fn visible(&self) -> Vec<Col> {
        Col::ALL
            .iter()
            .copied()
            .filter(|c| !self.hidden.contains(c))
            .collect()
    }

    /// Move, choose and sort columns.
    pub fn update(&mut self, a: Action) {
        let last = self.order.len().saturating_sub(1) as i64;
        let mv = |s: &mut Self, d: i64| {
            s.selected = (s.selected as i64 + d).clamp(0, last.max(0)) as usize
        };
        match a {
            Action::Up => mv(self, -1),
            Action::Down => mv(self, 1),
            Action::PageUp | Action::Home => self.selected = 0,
            Action::PageDown | Action::End => self.selected = last.max(0) as usize,
            Action::Scroll(_, _, d) => mv(self, d as i64),
            Action::Left => self.column = (self.column + Col::ALL.len() - 1) % Col::ALL.len(),
            Action::Right => self.column = (self.column + 1) % Col::ALL.len(),
            Action::Toggle => {
                let c = Col::ALL[self.column];
                if self.hidden.contains(&c) {
                    self.hidden.retain(|x| *x != c);
                } else {
                    self.hidden.push(c);
                }
            }
            Action::Reverse => {
                let c = Col::ALL[self.column];
                self.sort = match self.sort {
                    Some((s, desc)) if s == c => Some((c, !desc)),
                    _ => Some((
                        c,
                        !matches!(c, Col::CapacityTier | Col::DecodeTier | Col::Basis),
                    )),
                };
                self.resort();
            }
            Action::Click(_, y) => {
                let body_top = 5u16;
                if y >= body_top {
                    let i = (y - body_top) as usize;
                    if i < self.order.len() {
                        self.selected = i;
                    }
                }
            }
            _ => {}
        }
    }
}

/// The compare view, drawn.
pub struct CompareScreen<'a> {
    /// State.
    pub view: &'a CompareView,
    /// What is compared (scenario name).
    pub subject: String,
    /// Styles.
    pub theme: Theme,
}

impl Widget for CompareScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let [head, picker, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(2),
        ])
        .areas(area);
        Paragraph::new(Line::from(vec![
            Span::styled("Compare machines · ", t.heading()),
            Span::styled(self.subject.clone(), t.text()),
            Span::styled(
                " · ▶ current · ceilings in tokens/s, headroom in GiB",
                t.label(),
            ),
        ]))
        .render(head, buf);
        let mut spans = vec![Span::styled("columns ", t.label())];
        for (i, c) in Col::ALL.iter().enumerate() {
            let on = !v.hidden.contains(c);
            let text = format!("[{}]{} ", if on { "x" } else { " " }, c.title());
            let style = if i == v.column {
                t.selected()
            } else if on {
                t.text()
            } else {
                t.label()
            };
            spans.push(Span::styled(text, style));
        }
        Paragraph::new(Line::from(spans)).render(picker, buf);
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(t.label());
        let inner = block.inner(body);
        block.render(body, buf);
        // Columns that fit beside a machine column of at least 24 cells.
        let mut cols = Vec::new();
        let mut used = 24u16;
        for c in v.visible() {
            if used + c.width() + 1 > inner.width {
                break;
            }
            used += c.width() + 1;
            cols.push(c);
        }
        let mut widths = vec![Constraint::Fill(1)];
        widths.extend(cols.iter().map(|c| Constraint::Length(c.width())));
        let sort_mark = |c: Col| match v.sort {
            Some((s, desc)) if s == c => {
                if desc {
                    "↓"
                } else {
                    "↑"
                }
            }
            _ => "",
        };
        let mut header = vec![Span::styled("machine", t.label())];
        header.extend(cols.iter().map(|c| {
            let style = if Col::ALL[v.column] == *c {
                t.key()
            } else {
                t.label()
            };
            Span::styled(format!("{}{}", c.title(), sort_mark(*c)), style)
        }));
        let h = inner.height.saturating_sub(1) as usize;
        let off = layout::scroll_offset(v.selected, h, v.order.len());
        let rows: Vec<Row> = v
            .order
            .iter()
            .enumerate()
            .skip(off)
            .take(h)
            .map(|(i, ri)| {
                let r = &v.rows[*ri];
                let name = if r.machine_id == v.current {
                    format!("▶ {}", r.machine_id)
                } else {
                    format!("  {}", r.machine_id)
                };
                let mut cells = vec![Line::from(name)];
                match &r.outcome {
                    Ok(f) => {
                        for c in &cols {
                            let text = c.text(f);
                            let style = match c {
                                Col::Fits | Col::Headroom if !f.fits => t.bad(),
                                Col::Full | Col::Short => t.figure(),
                                _ => t.text(),
                            };
                            let right = !matches!(
                                c,
                                Col::CapacityTier | Col::DecodeTier | Col::Basis | Col::Fits
                            );
                            let line = Line::from(Span::styled(text, style));
                            cells.push(if right { line.right_aligned() } else { line });
                        }
                    }
                    Err(e) => cells.push(Line::from(Span::styled(e.0.clone(), t.bad()))),
                }
                let style = if i == v.selected {
                    t.selected()
                } else {
                    t.text()
                };
                Row::new(cells).style(style)
            })
            .collect();
        Table::new(rows, widths)
            .header(Row::new(header))
            .column_spacing(1)
            .render(inner, buf);
        Paragraph::new(vec![
            Line::from(Span::styled(
                "Decode figures are ceilings, not predictions; spec* = optimistic vendor ceiling (spec bandwidth).",
                t.label(),
            )),
            Line::from(Span::styled(
                "↑↓ machine  ←→ column  Space show/hide  r sort  Enter use machine  Esc back",
                t.label(),
            )),
        ])
        .render(foot, buf);
    }
}
