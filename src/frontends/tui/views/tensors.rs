//! The tensor inventory browser: every tensor of the file in a table, sortable by any column,
//! filtered by type, searched by name, grouped by layer or type with rollups. The row order is
//! computed on change; drawing touches only the visible rows.

use crate::core::units;
use crate::tui::action::Action;
use crate::tui::file::TensorItem;
use crate::tui::layout;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, Widget};
use std::cmp::Ordering;
use std::collections::HashMap;

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Column {
    /// Tensor name.
    Name,
    /// Type.
    Type,
    /// Shape.
    Shape,
    /// Elements.
    Elements,
    /// Data offset (file order).
    #[default]
    Offset,
    /// Bytes.
    Bytes,
    /// Bits per weight.
    Bits,
    /// What a decode step reads.
    Counted,
}

impl Column {
    /// Every column, left to right.
    pub const ALL: [Column; 8] = [
        Column::Name,
        Column::Type,
        Column::Shape,
        Column::Elements,
        Column::Bytes,
        Column::Bits,
        Column::Offset,
        Column::Counted,
    ];
    /// Header text.
    pub fn title(self) -> &'static str {
        match self {
            Column::Name => "name",
            Column::Type => "type",
            Column::Shape => "shape",
            Column::Elements => "elements",
            Column::Bytes => "bytes",
            Column::Bits => "bits/w",
            Column::Offset => "offset",
            Column::Counted => "read per token",
        }
    }
}

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grouping {
    /// One table.
    #[default]
    None,
    /// By layer (`blk.N`), tensors outside layers last.
    Layer,
    /// By type.
    Type,
}

/// A line of the table.
#[derive(Debug, Clone, PartialEq)]
pub enum TableLine {
    /// A tensor (index into the inventory).
    Tensor(usize),
    /// A group heading with its rollup.
    Group {
        /// Group name.
        label: String,
        /// Tensors.
        count: usize,
        /// Σ elements.
        elements: u64,
        /// Σ bytes.
        bytes: u64,
        /// Share of the file's tensor bytes, 0–1.
        share: f64,
    },
}

/// The browser's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorView {
    /// Sort column.
    pub sort: Column,
    /// Descending.
    pub reverse: bool,
    /// Only this type.
    pub filter: Option<String>,
    /// Grouping.
    pub group: Grouping,
    /// Name search (case-insensitive substring).
    pub search: String,
    /// The lines in order.
    pub lines: Vec<TableLine>,
    /// Selected line.
    pub selected: usize,
    /// Tensors shown (after filter and search).
    pub shown: usize,
    /// Σ bytes of all tensors.
    pub total_bytes: u64,
    /// Σ elements of the tensors shown (after filter and search, folded or not).
    pub shown_elements: u64,
    /// Σ bytes of the tensors shown (after filter and search, folded or not).
    pub shown_bytes: u64,
    /// The longest "read per token" entry of the file, in characters (at most 36).
    pub counted_width: u16,
    /// The longest type of the file, in characters (at most 16: MLX's `affine q4 g64`).
    pub type_width: u16,
    /// Labels of the folded groups (their tensors are hidden).
    pub collapsed: Vec<String>,
}

fn cmp_tensors(a: &TensorItem, b: &TensorItem, col: Column) -> Ordering {
    match col {
        Column::Name => natural(&a.name, &b.name),
        Column::Type => a.type_name.cmp(&b.type_name),
        Column::Shape => a.shape.cmp(&b.shape),
        Column::Elements => a.elements.cmp(&b.elements),
        Column::Bytes => a.bytes.cmp(&b.bytes),
        Column::Bits => a
            .bits_per_weight
            .unwrap_or(0.0)
            .total_cmp(&b.bits_per_weight.unwrap_or(0.0)),
        Column::Offset => (a.shard, a.offset).cmp(&(b.shard, b.offset)),
        Column::Counted => a.counted.cmp(&b.counted),
    }
}

/// Compare names with numbers in numeric order (`blk.2` before `blk.10`).
fn natural(a: &str, b: &str) -> Ordering {
    let key = |s: &str| -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut text = String::new();
        let mut num = String::new();
        for c in s.chars() {
            if c.is_ascii_digit() {
                num.push(c);
            } else {
                if !num.is_empty() {
                    out.push((std::mem::take(&mut text), num.parse().unwrap_or(0)));
                    num.clear();
                }
                text.push(c);
            }
        }
        out.push((text, num.parse().unwrap_or(0)));
        out
    };
    key(a).cmp(&key(b))
}

impl TensorView {
    /// The types in the file, most bytes first (the filter cycles through them).
    fn types(inv: &[TensorItem]) -> Vec<String> {
        let mut t: Vec<(String, u64)> = Vec::new();
        for x in inv {
            match t.iter_mut().find(|(n, _)| *n == x.type_name) {
                Some(e) => e.1 += x.bytes.unwrap_or(0),
                None => t.push((x.type_name.clone(), x.bytes.unwrap_or(0))),
            }
        }
        t.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        t.into_iter().map(|(n, _)| n).collect()
    }

    /// Recompute the lines after a change of sort, filter, grouping or search.
    pub fn rebuild(&mut self, inv: &[TensorItem]) {
        self.total_bytes = inv.iter().filter_map(|t| t.bytes).sum();
        let needle = self.search.to_lowercase();
        let mut idx: Vec<usize> = (0..inv.len())
            .filter(|i| self.filter.as_ref().is_none_or(|f| inv[*i].type_name == *f))
            .filter(|i| needle.is_empty() || inv[*i].name.to_lowercase().contains(&needle))
            .collect();
        idx.sort_by(|a, b| {
            let o = cmp_tensors(&inv[*a], &inv[*b], self.sort).then(a.cmp(b));
            if self.reverse { o.reverse() } else { o }
        });
        self.shown = idx.len();
        self.shown_elements = idx.iter().map(|i| inv[*i].elements).sum();
        self.shown_bytes = idx.iter().map(|i| inv[*i].bytes.unwrap_or(0)).sum();
        self.counted_width = inv
            .iter()
            .map(|t| t.counted.chars().count())
            .max()
            .unwrap_or(0)
            .min(36) as u16;
        self.type_width = inv
            .iter()
            .map(|t| t.type_name.chars().count())
            .max()
            .unwrap_or(0)
            .min(16) as u16;
        let total = self.total_bytes.max(1) as f64;
        self.lines = match self.group {
            Grouping::None => idx.into_iter().map(TableLine::Tensor).collect(),
            Grouping::Layer | Grouping::Type => {
                let key = |t: &TensorItem| match self.group {
                    Grouping::Layer => match t.layer {
                        Some(l) => (0u8, l as u64, String::new()),
                        None => (1, 0, String::new()),
                    },
                    _ => (0, 0, t.type_name.clone()),
                };
                // One pass: each tensor goes to its group through a map (the sorted order is
                // kept inside each group), then the groups are put in key order. Linear in the
                // tensors plus k log k in the groups, where searching a list of keys and
                // filtering every tensor once per group was quadratic.
                let mut slot: HashMap<(u8, u64, String), usize> = HashMap::new();
                let mut groups: Vec<((u8, u64, String), Vec<usize>)> = Vec::new();
                for &i in &idx {
                    let k = key(&inv[i]);
                    let g = *slot.entry(k.clone()).or_insert_with(|| {
                        groups.push((k, Vec::new()));
                        groups.len() - 1
                    });
                    groups[g].1.push(i);
                }
                groups.sort_by(|a, b| a.0.cmp(&b.0));
                let mut out = Vec::with_capacity(idx.len() + groups.len());
                for ((kind, layer, type_name), members) in groups {
                    let label = match (self.group, kind) {
                        (Grouping::Layer, 0) => format!("layer {layer}"),
                        (Grouping::Layer, _) => "outside layers".to_string(),
                        _ => type_name,
                    };
                    let bytes: u64 = members.iter().filter_map(|i| inv[*i].bytes).sum();
                    out.push(TableLine::Group {
                        label,
                        count: members.len(),
                        elements: members.iter().map(|i| inv[*i].elements).sum(),
                        bytes,
                        share: bytes as f64 / total,
                    });
                    out.extend(members.into_iter().map(TableLine::Tensor));
                }
                out
            }
        };
        self.fold();
        self.selected = self.selected.min(self.lines.len().saturating_sub(1));
    }

    /// Hide the tensors of folded groups (after `rebuild`).
    fn fold(&mut self) {
        if self.collapsed.is_empty() {
            return;
        }
        let mut hide = false;
        let collapsed = &self.collapsed;
        self.lines.retain(|l| match l {
            TableLine::Group { label, .. } => {
                hide = collapsed.contains(label);
                true
            }
            TableLine::Tensor(_) => !hide,
        });
    }

    /// Fold or unfold the group of the selected line (Space); the heading stays selected.
    pub fn toggle_fold(&mut self, inv: &[TensorItem]) {
        let end = (self.selected + 1).min(self.lines.len());
        let Some(label) = self.lines[..end].iter().rev().find_map(|l| match l {
            TableLine::Group { label, .. } => Some(label.clone()),
            _ => None,
        }) else {
            return;
        };
        if let Some(i) = self.collapsed.iter().position(|c| *c == label) {
            self.collapsed.remove(i);
        } else {
            self.collapsed.push(label.clone());
        }
        self.rebuild(inv);
        if let Some(i) = self
            .lines
            .iter()
            .position(|l| matches!(l, TableLine::Group { label: g, .. } if *g == label))
        {
            self.selected = i;
        }
    }

    /// The tensors the filter and search let through: (count, Σ elements, Σ bytes), whether
    /// or not their group is folded (as of the last `rebuild`).
    pub fn shown_totals(&self) -> (usize, u64, u64) {
        (self.shown, self.shown_elements, self.shown_bytes)
    }

    /// "row N of M" for the footer.
    pub fn position(&self) -> String {
        format!(
            "row {} of {}",
            units::group_digits((self.selected + 1).min(self.lines.len()) as u128),
            units::group_digits(self.lines.len() as u128)
        )
    }

    /// Set the search text (incremental).
    pub fn set_search(&mut self, s: String, inv: &[TensorItem]) {
        self.search = s;
        self.selected = 0;
        self.rebuild(inv);
    }

    /// Move, sort, filter, group.
    pub fn update(&mut self, a: Action, inv: &[TensorItem], screen: Rect) {
        let page = screen.height.saturating_sub(6).max(1) as i64;
        let last = self.lines.len().saturating_sub(1) as i64;
        let mv = |s: &mut Self, d: i64| {
            s.selected = (s.selected as i64 + d).clamp(0, last.max(0)) as usize
        };
        match a {
            Action::Up => mv(self, -1),
            Action::Down => mv(self, 1),
            Action::PageUp => mv(self, -page),
            Action::PageDown => mv(self, page),
            Action::Home => self.selected = 0,
            Action::End => self.selected = last.max(0) as usize,
            Action::Scroll(_, _, d) => mv(self, d as i64 * 3),
            Action::Left | Action::Right => {
                let i = Column::ALL
                    .iter()
                    .position(|c| *c == self.sort)
                    .unwrap_or(0) as i32;
                let d = if a == Action::Left { -1 } else { 1 };
                self.sort = Column::ALL[(i + d).rem_euclid(Column::ALL.len() as i32) as usize];
                self.reverse = matches!(self.sort, Column::Elements | Column::Bytes | Column::Bits);
                self.rebuild(inv);
            }
            Action::Reverse => {
                self.reverse = !self.reverse;
                self.rebuild(inv);
            }
            Action::Filter => {
                let types = Self::types(inv);
                self.filter = match &self.filter {
                    None => types.first().cloned(),
                    Some(f) => {
                        let i = types.iter().position(|t| t == f);
                        i.and_then(|i| types.get(i + 1).cloned())
                    }
                };
                self.selected = 0;
                self.rebuild(inv);
            }
            Action::Toggle => self.toggle_fold(inv),
            Action::Group => {
                self.collapsed.clear();
                self.group = match self.group {
                    Grouping::None => Grouping::Layer,
                    Grouping::Layer => Grouping::Type,
                    Grouping::Type => Grouping::None,
                };
                self.selected = 0;
                self.rebuild(inv);
            }
            Action::Click(_, y) => {
                // The table body starts 3 rows below the top (header line, border, column titles).
                let body_top = 3u16;
                if y >= body_top {
                    let h = screen.height.saturating_sub(6) as usize;
                    let off = layout::scroll_offset(self.selected, h, self.lines.len());
                    let i = off + (y - body_top) as usize;
                    if i < self.lines.len() {
                        self.selected = i;
                    }
                }
            }
            _ => {}
        }
    }
}

/// A column's width: its fixed width, widened to its title with the sort arrow and (for
/// "read per token") to the longest entry of the file.
fn col_width(c: Column, v: &TensorView) -> u16 {
    let title = c.title().chars().count() as u16 + 1;
    let content = match c {
        Column::Counted => v.counted_width,
        Column::Type => v.type_width,
        _ => 0,
    };
    width(c).max(title).max(content)
}

fn width(c: Column) -> u16 {
    match c {
        Column::Name => 24,
        Column::Type => 7,
        Column::Shape => 13,
        Column::Elements => 12,
        Column::Bytes => 13,
        Column::Bits => 6,
        Column::Offset => 13,
        Column::Counted => 16,
    }
}

/// `s` in at most `w` columns, ending in "…" when cut (whole when there is no width).
fn cut_end(s: &str, w: usize) -> String {
    if w == 0 {
        return s.to_string();
    }
    crate::tui::format::fit(s, w)
}

fn right_aligned(c: Column) -> bool {
    matches!(
        c,
        Column::Elements | Column::Bytes | Column::Bits | Column::Offset
    )
}

/// The browser, drawn.
pub struct TensorsScreen<'a> {
    /// State.
    pub view: &'a TensorView,
    /// Tensors.
    pub inv: &'a [TensorItem],
    /// File name.
    pub file_name: Option<&'a str>,
    /// Styles.
    pub theme: Theme,
}

impl Widget for TensorsScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let v = self.view;
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Fill(1),
            Constraint::Length(1),
        ])
        .areas(area);
        let Some(file) = self.file_name else {
            super::render_no_file("Tensor inventory", t, area, buf);
            return;
        };
        let dir = if v.reverse { "↓" } else { "↑" };
        let filter = v.filter.clone().unwrap_or_else(|| "all types".into());
        let group = match v.group {
            Grouping::None => "none",
            Grouping::Layer => "by layer",
            Grouping::Type => "by type",
        };
        // The keys in brackets go first when the line is short (the bottom line has them),
        // so the state is never cut mid-part ("Q8_0 (f) ·").
        let header = |keys: bool, file: &str| {
            let k = |s: &'static str| if keys { s } else { "" };
            let mut spans = vec![
                Span::styled(format!("Tensors · {file} "), t.heading()),
                Span::styled(format!("{} of {}", v.shown, self.inv.len()), t.figure()),
                Span::styled(
                    format!(" · sort {} {dir}{}", v.sort.title(), k(" (←→ r)")),
                    t.label(),
                ),
                Span::styled(format!(" · {filter}{}", k(" (f)")), t.label()),
                Span::styled(format!(" · group {group}{}", k(" (Enter)")), t.label()),
            ];
            if !v.search.is_empty() {
                spans.push(Span::styled(format!(" · /{}", v.search), t.input()));
            }
            Line::from(spans)
        };
        let w = head.width as usize;
        let mut line = header(true, file);
        if line.width() > w {
            line = header(false, file);
        }
        if line.width() > w {
            // Then the file name is shortened (it is the one part the reader already knows).
            let over = line.width() - w;
            let keep = file.chars().count().saturating_sub(over + 1).max(8);
            let short: String = file.chars().take(keep).collect::<String>() + "…";
            line = header(false, &short);
        }
        Paragraph::new(line).render(head, buf);
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(t.label());
        let inner = block.inner(body);
        block.render(body, buf);
        let h = inner.height.saturating_sub(1) as usize;
        let off = layout::scroll_offset(v.selected, h, v.lines.len());
        // Columns that fit beside a name column of at least 24 cells, dropping the least
        // needed first.
        let mut cols: Vec<Column> = Column::ALL.to_vec();
        for drop in [
            Column::Offset,
            Column::Elements,
            Column::Shape,
            Column::Counted,
            Column::Bits,
        ] {
            let need: u16 = 24
                + cols
                    .iter()
                    .filter(|c| **c != Column::Name)
                    .map(|c| col_width(*c, v) + 1)
                    .sum::<u16>();
            if need <= inner.width {
                break;
            }
            cols.retain(|c| *c != drop);
        }
        let widths: Vec<Constraint> = cols
            .iter()
            .map(|c| {
                if *c == Column::Name {
                    Constraint::Fill(1)
                } else {
                    Constraint::Length(col_width(*c, v))
                }
            })
            .collect();
        // The name column takes what the others leave; a longer name ends in "…" (never cut
        // silently: "post_attention_norm.weig" read as a name).
        let name_w = inner.width.saturating_sub(
            cols.iter()
                .filter(|c| **c != Column::Name)
                .map(|c| col_width(*c, v) + 1)
                .sum::<u16>(),
        ) as usize;
        let type_w = col_width(Column::Type, v) as usize;
        let header = Row::new(cols.iter().map(|c| {
            let mut s = c.title().to_string();
            if *c == v.sort {
                s.push_str(dir);
            }
            let style = if *c == v.sort { t.key() } else { t.label() };
            let line = Line::from(Span::styled(s, style));
            if right_aligned(*c) {
                line.right_aligned()
            } else {
                line
            }
        }));
        let rows: Vec<Row> = v
            .lines
            .iter()
            .enumerate()
            .skip(off)
            .take(h)
            .map(|(i, line)| {
                let selected = i == v.selected;
                match line {
                    TableLine::Tensor(k) => {
                        let x = &self.inv[*k];
                        let cell = |c: Column| -> Line<'static> {
                            let text = match c {
                                Column::Name => cut_end(&x.name, name_w),
                                Column::Type => cut_end(&x.type_name, type_w),
                                Column::Shape => x
                                    .shape
                                    .iter()
                                    .map(|d| d.to_string())
                                    .collect::<Vec<_>>()
                                    .join(" × "),
                                Column::Elements => units::group_digits(x.elements as u128),
                                Column::Bytes => x
                                    .bytes
                                    .map_or("?".into(), |b| units::group_digits(b as u128)),
                                Column::Bits => {
                                    x.bits_per_weight.map_or("—".into(), |b| format!("{b:.2}"))
                                }
                                Column::Offset => units::group_digits(x.offset as u128),
                                Column::Counted => x.counted.clone(),
                            };
                            let l = Line::from(text);
                            if right_aligned(c) {
                                l.right_aligned()
                            } else {
                                l
                            }
                        };
                        Row::new(cols.iter().map(|c| cell(*c))).style(if selected {
                            t.selected()
                        } else {
                            t.text()
                        })
                    }
                    TableLine::Group {
                        label,
                        count,
                        elements,
                        bytes,
                        share,
                    } => {
                        let cell = |c: Column| -> Line<'static> {
                            match c {
                                Column::Name => {
                                    let mark = if v.collapsed.contains(label) {
                                        "▸"
                                    } else {
                                        "▾"
                                    };
                                    Line::from(format!("{mark} {label} · {count} tensors"))
                                }
                                Column::Elements => {
                                    Line::from(units::group_digits(*elements as u128))
                                        .right_aligned()
                                }
                                Column::Bytes => {
                                    Line::from(units::group_digits(*bytes as u128)).right_aligned()
                                }
                                // Labelled in the cell: the column's title is about tensors.
                                Column::Counted => {
                                    Line::from(format!("{:.1}% of bytes", share * 100.0))
                                }
                                _ => Line::raw(""),
                            }
                        };
                        Row::new(cols.iter().map(|c| cell(*c))).style(if selected {
                            t.selected()
                        } else {
                            t.heading()
                        })
                    }
                }
            })
            .collect();
        Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .render(inner, buf);
        Paragraph::new(footer_line(v, self.inv, t)).render(foot, buf);
    }
}

/// The footer: the position, and the totals of the tensors the filter and search show.
fn footer_line(v: &TensorView, inv: &[TensorItem], t: Theme) -> Line<'static> {
    let (n, _, bytes) = v.shown_totals();
    let which = if n == inv.len() {
        format!("all {} tensors", units::group_digits(n as u128))
    } else {
        format!(
            "{} of {} tensors",
            units::group_digits(n as u128),
            units::group_digits(inv.len() as u128)
        )
    };
    Line::from(vec![
        Span::styled(format!("{} · ", v.position()), t.figure()),
        Span::styled(
            format!(
                "Σ {} bytes = {} in {which}",
                units::group_digits(bytes as u128),
                crate::tui::format::bytes(bytes)
            ),
            t.label(),
        ),
    ])
}
