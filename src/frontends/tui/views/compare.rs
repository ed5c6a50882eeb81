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
    /// The machine's own placement: `-ngl` all, or the most layers that fit.
    Ngl,
    /// The context per sequence the machine was evaluated at (shown when machines differ:
    /// Ollama's default context follows each machine's VRAM).
    Context,
    /// Headroom.
    Headroom,
    /// Largest context.
    MaxContext,
    /// Short-context ceiling (inventory when the header is known, else file mode).
    Short,
    /// Ceiling at the context the rows rank by (inventory when known, else file mode).
    Full,
    /// Full-context ceiling with perfect overlap.
    Overlap,
    /// File mode at the context: the rate if every byte of the file is read per token.
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
    pub const ALL: [Col; 13] = [
        Col::Fits,
        Col::Ngl,
        Col::Context,
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
    /// Header: plain words (the unit is in the view's title line).
    pub fn title(self) -> &'static str {
        match self {
            Col::Fits => "fits",
            Col::Ngl => "-ngl",
            Col::Context => "context",
            Col::Headroom => "free GiB",
            Col::MaxContext => "max context",
            Col::Short => "short ctx",
            Col::Full => "at context",
            Col::Overlap => "overlapped",
            Col::Inventory => "every byte",
            Col::Prefill => "prefill",
            Col::CapacityTier => "fullest tier",
            Col::DecodeTier => "slowest tier",
            Col::Basis => "bandwidth",
        }
    }
    /// Cells the column takes: its figures, and its title with room for the sort mark (a
    /// right-aligned `short ctx↓` keeps its first letter).
    pub fn width(self) -> u16 {
        self.cells().max(self.title().chars().count() as u16 + 1)
    }
    fn cells(self) -> u16 {
        match self {
            Col::Fits => 4,
            Col::Ngl => 7,
            Col::Context => 9,
            Col::Headroom => 9,
            Col::MaxContext => 11,
            Col::Short => 9,
            Col::Full => 10,
            Col::Overlap => 10,
            Col::Inventory => 10,
            Col::Prefill => 8,
            Col::CapacityTier => 12,
            Col::DecodeTier => 12,
            Col::Basis => 9,
        }
    }
    /// The column is a number (right-aligned, sorted by value).
    pub fn is_number(self) -> bool {
        self.higher_is_better() || self == Col::Context
    }
    /// The column is a number where more is better (the best fitting machine is marked).
    pub fn higher_is_better(self) -> bool {
        !matches!(
            self,
            Col::Fits | Col::Context | Col::CapacityTier | Col::DecodeTier | Col::Basis
        )
    }
    fn numeric(self, f: &CompareFigures) -> f64 {
        match self {
            Col::Fits => f.fits as u8 as f64,
            Col::Ngl => f.gpu_layers.map_or(0.0, f64::from),
            Col::Context => f.context_tokens as f64,
            Col::Headroom => f.headroom_bytes as f64,
            Col::MaxContext => f.max_context_tokens.map_or(f64::INFINITY, |m| m as f64),
            Col::Short => f.ceiling_short_tokens_per_second,
            Col::Full => f.ceiling_tokens_per_second,
            Col::Overlap => f.overlapped_tokens_per_second,
            Col::Inventory => f.full_tokens_per_second,
            Col::Prefill => f.prefill_tokens_per_second.unwrap_or(0.0),
            Col::CapacityTier | Col::DecodeTier | Col::Basis => 0.0,
        }
    }
    /// A rate column's cells are whole numbers when any machine's figure there reaches
    /// 10,000 (`whole`), so one column never mixes `17,657` with `4,087.79`.
    fn rate(self) -> bool {
        matches!(
            self,
            Col::Short | Col::Full | Col::Overlap | Col::Inventory | Col::Prefill
        )
    }
    fn text(self, f: &CompareFigures, whole: bool) -> String {
        let column_rate = |tps: f64| column_rate(tps, whole);
        match self {
            Col::Fits => if f.fits { "yes" } else { "NO" }.into(),
            Col::Ngl => match f.gpu_layers {
                Some(n) if n < f.all_gpu_layers => format!("{n}/{}", f.all_gpu_layers),
                Some(_) => "all".into(),
                None => "—".into(),
            },
            Col::Context => units::fmt_tokens(f.context_tokens),
            Col::Headroom => {
                crate::tui::format::grouped(f.headroom_bytes as f64 / units::GIB as f64, 3)
            }
            Col::MaxContext => f
                .max_context_tokens
                .map_or("no limit".into(), units::fmt_tokens),
            Col::Short => column_rate(f.ceiling_short_tokens_per_second),
            Col::Full => column_rate(f.ceiling_tokens_per_second),
            Col::Overlap => column_rate(f.overlapped_tokens_per_second),
            Col::Inventory => column_rate(f.full_tokens_per_second),
            Col::Prefill => f
                .prefill_tokens_per_second
                .map_or("none".into(), column_rate),
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

/// Machines that can be marked at once (two or three to set side by side).
pub const MAX_MARKED: usize = 3;

/// The view's state.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareView {
    /// One row per machine (current first).
    pub rows: Vec<CompareRow>,
    /// The current machine's id.
    pub current: String,
    /// The current machine has unsaved edits.
    pub current_edited: bool,
    /// Ids of the user's saved machine profiles (tagged "saved").
    pub saved: Vec<String>,
    /// Row order (indices into `rows`): filtered, then sorted.
    pub order: Vec<usize>,
    /// Selected row (index into `order`).
    pub selected: usize,
    /// Selected column.
    pub column: usize,
    /// Hidden columns.
    pub hidden: Vec<Col>,
    /// Sort column and descending.
    pub sort: Option<(Col, bool)>,
    /// Marked machine ids (Space), at most `MAX_MARKED`.
    pub marked: Vec<String>,
    /// Show only the marked machines (`f`).
    pub only_marked: bool,
    /// Text filter (`/`): machines whose id (the text the machine column shows) contains it,
    /// case-insensitive.
    pub filter: String,
    /// A one-line note (why a mark was refused).
    pub note: Option<String>,
    /// The machines are at their own contexts (`compare::at_own_contexts`: Ollama's default
    /// by VRAM), so the context column shows each one's.
    pub own_contexts: bool,
}

impl Default for CompareView {
    fn default() -> Self {
        CompareView {
            rows: Vec::new(),
            current: String::new(),
            current_edited: false,
            saved: Vec::new(),
            order: Vec::new(),
            selected: 0,
            column: 0,
            hidden: vec![Col::Context, Col::Inventory, Col::Prefill],
            sort: None,
            marked: Vec::new(),
            only_marked: false,
            filter: String::new(),
            note: None,
            own_contexts: false,
        }
    }
}

impl CompareView {
    /// New rows (after a change); `own_contexts` as [`Self::own_contexts`].
    pub fn set_rows(&mut self, rows: Vec<CompareRow>, current: &str, own_contexts: bool) {
        self.rows = rows;
        self.own_contexts = own_contexts;
        if own_contexts {
            self.hidden.retain(|c| *c != Col::Context);
        }
        self.current = current.to_string();
        self.marked
            .retain(|id| self.rows.iter().any(|r| &r.machine_id == id));
        self.resort();
    }

    /// Set the text filter.
    pub fn set_filter(&mut self, text: String) {
        self.filter = text;
        self.selected = 0;
        self.resort();
    }

    fn shown(&self, r: &CompareRow) -> bool {
        let f = self.filter.trim().to_lowercase();
        (!self.only_marked || self.marked.is_empty() || self.marked.contains(&r.machine_id))
            && (f.is_empty() || r.machine_id.to_lowercase().contains(&f))
    }

    fn resort(&mut self) {
        let mut order: Vec<usize> = (0..self.rows.len())
            .filter(|i| self.shown(&self.rows[*i]))
            .collect();
        // Machines that fit first, then those that do not, then those that cannot be
        // evaluated; within each group the chosen column's order.
        let group = |i: &usize| match &self.rows[*i].outcome {
            Ok(f) if f.fits => 0,
            Ok(_) => 1,
            Err(_) => 2,
        };
        let sort = self.sort;
        order.sort_by(|a, b| {
            let g = group(a).cmp(&group(b));
            let o = match (sort, &self.rows[*a].outcome, &self.rows[*b].outcome) {
                (Some((col, desc)), Ok(x), Ok(y)) => {
                    let o = if col.is_number() {
                        col.numeric(x).total_cmp(&col.numeric(y))
                    } else {
                        col.text(x, false).cmp(&col.text(y, false))
                    };
                    if desc { o.reverse() } else { o }
                }
                _ => Ordering::Equal,
            };
            g.then(o).then(a.cmp(b))
        });
        self.order = order;
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
    }

    /// Put the cursor on the machine in use (when the view opens).
    pub fn select_current(&mut self) {
        if let Some(i) = (self.order.iter()).position(|i| self.rows[*i].machine_id == self.current)
        {
            self.selected = i;
        }
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

    /// The best value of a column among the machines that fit (None: no such number).
    pub fn best(&self, col: Col) -> Option<f64> {
        if !col.higher_is_better() {
            return None;
        }
        self.order
            .iter()
            .filter_map(|i| self.rows[*i].outcome.as_ref().ok())
            .filter(|f| f.fits)
            .map(|f| col.numeric(f))
            .filter(|x| x.is_finite() && *x > 0.0)
            .max_by(f64::total_cmp)
    }

    /// The visible columns that fit in `width` cells beside the machine column, starting so
    /// that the selected column is shown: (first visible index, columns).
    pub fn window(&self, width: u16) -> (usize, Vec<Col>) {
        let vis = self.visible();
        let sel = Col::ALL[self.column];
        let target = vis.iter().position(|c| *c == sel).unwrap_or_else(|| {
            vis.iter()
                .position(|c| Col::ALL.iter().position(|x| x == c) > Some(self.column))
                .unwrap_or(vis.len().saturating_sub(1))
        });
        let fits_from = |first: usize| {
            let mut used = MACHINE_WIDTH;
            let mut cols = Vec::new();
            for c in &vis[first..] {
                if used + c.width() + 1 > width {
                    break;
                }
                used += c.width() + 1;
                cols.push(*c);
            }
            cols
        };
        let mut first = 0;
        while first < target && fits_from(first).len() <= target - first {
            first += 1;
        }
        (first, fits_from(first))
    }

    /// Move, choose, mark and sort.
    pub fn update(&mut self, a: Action) {
        self.note = None;
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
                if let Some(id) = self.selected_machine() {
                    if self.marked.contains(&id) {
                        self.marked.retain(|x| *x != id);
                        if self.marked.is_empty() {
                            self.only_marked = false;
                        }
                        self.resort();
                    } else if self.marked.len() >= MAX_MARKED {
                        self.note = Some(format!(
                            "at most {MAX_MARKED} machines can be marked: unmark one first (Space)"
                        ));
                    } else {
                        self.marked.push(id);
                    }
                }
            }
            Action::Filter => {
                if self.marked.is_empty() {
                    self.note = Some("mark machines with Space first".into());
                } else {
                    self.only_marked = !self.only_marked;
                    self.selected = 0;
                    self.resort();
                }
            }
            Action::HideColumn => {
                let c = Col::ALL[self.column];
                if self.hidden.contains(&c) {
                    self.hidden.retain(|x| *x != c);
                } else {
                    self.hidden.push(c);
                    // Rows are never ordered by a column that is not shown.
                    if self.sort.is_some_and(|(s, _)| s == c) {
                        self.sort = None;
                        self.note = Some(format!(
                            "{} hidden: rows back in their first order",
                            c.title()
                        ));
                        self.resort();
                    }
                }
            }
            Action::Reverse if self.hidden.contains(&Col::ALL[self.column]) => {
                self.note = Some(format!(
                    "{} is hidden: - shows it, then r sorts by it",
                    Col::ALL[self.column].title()
                ));
            }
            Action::Reverse => {
                let c = Col::ALL[self.column];
                self.sort = match self.sort {
                    Some((s, desc)) if s == c => Some((c, !desc)),
                    _ => Some((c, c.higher_is_better())),
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

/// A tokens/s cell: two decimals, or whole when the column holds a figure of 10,000 or more
/// (`★17,202` fits 9 cells with its best-mark; the decimals of a five-digit ceiling say
/// nothing, and the column keeps one format: `4,088` beside `17,657`, not `4,087.79`).
fn column_rate(tps: f64, whole: bool) -> String {
    if whole && tps.is_finite() && tps >= 1.0 {
        crate::tui::format::grouped(tps, 0)
    } else {
        crate::tui::format::rate(tps)
    }
}

/// The mark of the machine in use (the legend names it).
pub const IN_USE: &str = "◆";

/// Cells of the machine column.
const MACHINE_WIDTH: u16 = 28;

/// The compare view, drawn.
pub struct CompareScreen<'a> {
    /// State.
    pub view: &'a CompareView,
    /// What is compared (scenario name).
    pub subject: String,
    /// A machine chosen with Enter while the current one has unsaved edits (the app's modal
    /// asks y/n; this view words the question).
    pub pending: Option<&'a str>,
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
        ]))
        .render(head, buf);
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(t.label());
        let inner = block.inner(body);
        let (first, cols) = v.window(inner.width);
        let vis = v.visible();
        let sel = Col::ALL[v.column];
        let mut spans = vec![
            Span::styled("column ", t.label()),
            Span::styled(sel.title(), t.selected()),
            Span::styled(
                if v.hidden.contains(&sel) {
                    " (hidden) "
                } else {
                    " "
                },
                t.label(),
            ),
        ];
        spans.push(Span::styled(
            format!(
                "· columns {}–{} of {}{}{}",
                (first + 1).min(vis.len()),
                first + cols.len(),
                vis.len(),
                if first > 0 { " ◂" } else { "" },
                if first + cols.len() < vis.len() {
                    " ▸"
                } else {
                    ""
                }
            ),
            t.label(),
        ));
        let shown = if v.only_marked && !v.marked.is_empty() {
            " · marked only".to_string()
        } else {
            String::new()
        };
        spans.push(Span::styled(
            format!(
                " · row {} of {}{}{shown}{}",
                if v.order.is_empty() {
                    0
                } else {
                    v.selected + 1
                },
                v.order.len(),
                if v.order.len() < v.rows.len() {
                    format!(" (of {})", v.rows.len())
                } else {
                    String::new()
                },
                if v.filter.is_empty() {
                    String::new()
                } else {
                    format!(" · filter \"{}\"", v.filter)
                }
            ),
            t.label(),
        ));
        // Cut with "…" when the line is wider than the view.
        let mut room = picker.width as usize;
        let spans: Vec<Span> = spans
            .into_iter()
            .map(|sp| {
                let text = crate::tui::format::fit(&sp.content, room);
                room = room.saturating_sub(text.chars().count());
                Span::styled(text, sp.style)
            })
            .collect();
        Paragraph::new(Line::from(spans)).render(picker, buf);
        block.render(body, buf);
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
        let mut header = vec![Line::from(Span::styled("machine", t.label()))];
        header.extend(cols.iter().map(|c| {
            let style = if sel == *c { t.key() } else { t.label() };
            let line = Line::from(Span::styled(
                format!("{}{}", c.title(), sort_mark(*c)),
                style,
            ));
            if c.is_number() {
                line.right_aligned()
            } else {
                line
            }
        }));
        let best: Vec<Option<f64>> = cols.iter().map(|c| v.best(*c)).collect();
        // Over every machine, not just those shown, so filtering never changes a format.
        let whole: Vec<bool> = (cols.iter())
            .map(|c| {
                c.rate()
                    && (v.rows.iter()).any(|r| {
                        r.outcome
                            .as_ref()
                            .is_ok_and(|f| c.numeric(f).is_finite() && c.numeric(f) >= 10_000.0)
                    })
            })
            .collect();
        let name_width = inner
            .width
            .saturating_sub(cols.iter().map(|c| c.width() + 1).sum::<u16>())
            as usize;
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
                let mark = if v.marked.contains(&r.machine_id) {
                    "●"
                } else {
                    " "
                };
                // The machine in use: a mark unlike the cursor (the highlighted row).
                let here = if r.machine_id == v.current {
                    IN_USE
                } else {
                    " "
                };
                let tag = if r.machine_id == v.current && v.current_edited {
                    " (edited)"
                } else if v.saved.contains(&r.machine_id) {
                    " (saved)"
                } else {
                    ""
                };
                // The id gives way (…) before the tag does, so "saved" shows at 80 columns.
                let room = name_width.saturating_sub(3 + tag.chars().count());
                let id = if room == 0 && !r.machine_id.is_empty() {
                    "…".to_string()
                } else {
                    crate::tui::format::fit(&r.machine_id, room)
                };
                let mut cells = vec![Line::from(vec![
                    Span::raw(format!("{mark}{here} ")),
                    Span::raw(id),
                    Span::styled(tag, t.label()),
                ])];
                match &r.outcome {
                    Ok(f) => {
                        for ((c, b), w) in cols.iter().zip(&best).zip(&whole) {
                            let text = c.text(f, *w);
                            let is_best = f.fits && b.is_some_and(|b| c.numeric(f) == b);
                            let style = match c {
                                Col::Fits | Col::Headroom if !f.fits => t.bad(),
                                _ if is_best => t.ok(),
                                Col::Full | Col::Short => t.figure(),
                                _ => t.text(),
                            };
                            let text = if is_best { format!("★{text}") } else { text };
                            let line = Line::from(Span::styled(text, style));
                            cells.push(if c.is_number() {
                                line.right_aligned()
                            } else {
                                line
                            });
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
        let first_line = if let Some(id) = self.pending {
            Line::from(Span::styled(
                format!(
                    "Use {id}? The current machine's unsaved edits are dropped (s on the Machine pane saves them). y / n"
                ),
                t.warn(),
            ))
        } else if let Some(n) = &v.note {
            Line::from(Span::styled(n.clone(), t.warn()))
        } else {
            Line::from(Span::styled(
                wrap2(&legend(v, &cols), foot.width as usize),
                t.label(),
            ))
        };
        // The keys are in the footer below, generated from the keymap with every view's.
        Paragraph::new(vec![first_line])
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(foot, buf);
    }
}

/// The line under the table: what the figures are, and a word for each mark and column on
/// screen (never one that is scrolled off or hidden).
pub fn legend(v: &CompareView, cols: &[Col]) -> String {
    let figures =
        |f: fn(&CompareFigures) -> bool| v.rows.iter().any(|r| r.outcome.as_ref().is_ok_and(f));
    // Upper bounds only when counted from the tensor inventory; else every figure is file
    // mode and says so.
    let mut parts = vec![if figures(|f| f.ceiling_is_upper_bound) {
        "upper bounds in tokens/s, not predictions".to_string()
    } else {
        "tokens/s if every byte is read (file mode: no inventory, not upper bounds)".to_string()
    }];
    let on = |c: Col| cols.contains(&c);
    if on(Col::Inventory) {
        parts.push("every byte: file mode".into());
    }
    if on(Col::Ngl) {
        parts.push("-ngl: each machine's own".into());
    }
    if on(Col::Context) {
        parts.push("context: Ollama's, by VRAM".into());
    }
    parts.push(format!("{IN_USE} in use"));
    if !v.marked.is_empty() {
        parts.push("● marked".into());
    }
    if cols.iter().any(|c| v.best(*c).is_some()) {
        parts.push("★ best that fits".into());
    }
    parts.push("non-fitting last".into());
    if on(Col::Basis) && figures(|f| f.optimistic_vendor) {
        parts.push("spec* = vendor bandwidth".into());
    }
    parts.join(" · ")
}

/// `text` in at most two lines of `width` (words kept whole; a cut ends in "…"), joined by
/// a space, so that wrapping it at `width` gives the same two lines.
fn wrap2(text: &str, width: usize) -> String {
    let mut lines = crate::tui::format::wrap_words(text.split(' '), width);
    if lines.len() > 2 {
        let rest = lines[1..].join(" ");
        lines.truncate(1);
        lines.push(crate::tui::format::fit(&rest, width));
    }
    lines.join(" ")
}
