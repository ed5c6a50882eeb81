//! Where things go on the screen: the pane rectangles for a terminal size, shared by the
//! renderer and the mouse (a click is mapped through the same rectangles that were drawn).
//! Pure: no terminal.

use super::fields::Pane;
use ratatui::layout::{Constraint, Layout, Rect};

/// Below this many columns the explorer says the terminal is too small.
pub const MIN_WIDTH: u16 = 80;
/// Below this many rows the explorer says the terminal is too small.
pub const MIN_HEIGHT: u16 = 24;
/// From this size on, every pane is visible at once.
pub const FULL_WIDTH: u16 = 120;
/// From this size on, every pane is visible at once.
pub const FULL_HEIGHT: u16 = 36;

/// The main screen's rectangles.
#[derive(Debug, Clone, PartialEq)]
pub struct MainLayout {
    /// Top line: name, scenario, hints.
    pub title: Rect,
    /// Bottom line: message or key hints.
    pub status: Rect,
    /// Every visible pane and its rectangle (border included).
    pub panes: Vec<(Pane, Rect)>,
    /// The compact layout (one input pane at a time, tabs above it).
    pub compact: bool,
    /// The tab line of the compact layout.
    pub tabs: Option<Rect>,
}

impl MainLayout {
    /// The rectangle of a pane, if visible.
    pub fn pane(&self, p: Pane) -> Option<Rect> {
        self.panes.iter().find(|(q, _)| *q == p).map(|(_, r)| *r)
    }
    /// The pane under a cell.
    pub fn pane_at(&self, x: u16, y: u16) -> Option<(Pane, Rect)> {
        self.panes
            .iter()
            .find(|(_, r)| x >= r.x && x < r.right() && y >= r.y && y < r.bottom())
            .copied()
    }
}

/// True when the area is below the minimum size.
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_WIDTH || area.height < MIN_HEIGHT
}

/// The input pane shown in the compact layout's left column.
pub fn compact_left(focus: Pane) -> Pane {
    match focus {
        Pane::Bounds | Pane::Claim => Pane::Cache,
        p => p,
    }
}

/// What the layout depends on besides the size and the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hints {
    /// A claim is shown (the Claim pane grows).
    pub claim: bool,
    /// Encodings in the opened file's per-type table (0: no file).
    pub encodings: usize,
}

/// The main screen's layout for an area (None below the minimum size).
pub fn main_layout(area: Rect, focus: Pane, hints: Hints) -> Option<MainLayout> {
    let claim_h = match (hints.claim, focus == Pane::Claim) {
        (false, _) => 3,
        (true, false) => 7,
        (true, true) => (area.height / 2).max(7),
    };
    // Artifact: 5 lines, then the per-type table (header, up to 4 types, "+n more").
    let artifact_h = if hints.encodings == 0 {
        10
    } else {
        2 + 6 + hints.encodings.min(4) as u16 + u16::from(hints.encodings > 4)
    };
    if too_small(area) {
        return None;
    }
    let [title, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT {
        let left_w = (area.width * 35 / 100).clamp(42, 60);
        let [left, right] =
            Layout::horizontal([Constraint::Length(left_w), Constraint::Fill(1)]).areas(body);
        // The Machine pane in focus takes the Model pane's rows (its title says how many it
        // hides), so the compute rates and notes are in view as in the compact layout.
        let model_h = if focus == Pane::Machine { 4 } else { 12 };
        let [artifact, model, machine] = Layout::vertical([
            Constraint::Length(artifact_h),
            Constraint::Length(model_h),
            Constraint::Fill(1),
        ])
        .areas(left);
        let [cache, bounds, claim] = Layout::vertical([
            Constraint::Length(8),
            Constraint::Fill(1),
            Constraint::Length(claim_h),
        ])
        .areas(right);
        return Some(MainLayout {
            title,
            status,
            panes: vec![
                (Pane::Artifact, artifact),
                (Pane::Model, model),
                (Pane::Machine, machine),
                (Pane::Cache, cache),
                (Pane::Bounds, bounds),
                (Pane::Claim, claim),
            ],
            compact: false,
            tabs: None,
        });
    }
    let [left, right] =
        Layout::horizontal([Constraint::Length(38), Constraint::Fill(1)]).areas(body);
    let [tabs, input] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(left);
    let [bounds, claim] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(claim_h)]).areas(right);
    Some(MainLayout {
        title,
        status,
        panes: vec![
            (compact_left(focus), input),
            (Pane::Bounds, bounds),
            (Pane::Claim, claim),
        ],
        compact: true,
        tabs: Some(tabs),
    })
}

/// The inside of a bordered pane.
pub fn inner(r: Rect) -> Rect {
    Rect {
        x: r.x.saturating_add(1),
        y: r.y.saturating_add(1),
        width: r.width.saturating_sub(2),
        height: r.height.saturating_sub(2),
    }
}

/// The first row shown so that `selected` is visible in `height` rows.
pub fn scroll_offset(selected: usize, height: usize, len: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    (selected + 1).saturating_sub(height).min(len - height)
}

/// Rows of a field list above and below what [`field_cells`] shows (the pane's title says so).
pub fn hidden_rows(inner: Rect, rows: usize, selected: usize) -> (usize, usize) {
    let cells = field_cells(inner, rows, selected);
    match (cells.first(), cells.last()) {
        (Some((a, _)), Some((b, _))) => (*a, rows - 1 - b),
        _ => (0, rows),
    }
}

/// Cells of a field list: one rectangle per field row, in two columns when the area is wide
/// and short (the Cache pane in the full layout). Rows past the area are not returned.
pub fn field_cells(inner: Rect, rows: usize, selected: usize) -> Vec<(usize, Rect)> {
    let h = inner.height as usize;
    if h == 0 {
        return vec![];
    }
    if rows > h && inner.width >= 70 {
        let per_col = rows.div_ceil(2).min(h);
        let col_w = inner.width / 2;
        // More rows than two columns hold: a page of two columns with the selected row on it.
        let page = per_col * 2;
        let first = (selected.min(rows - 1) / page) * page;
        return (first..rows.min(first + page))
            .map(|i| {
                let (col, row) = ((i - first) / per_col, (i - first) % per_col);
                (
                    i,
                    Rect {
                        x: inner.x + col as u16 * col_w,
                        y: inner.y + row as u16,
                        width: if col == 0 {
                            col_w - 1
                        } else {
                            inner.width - col_w
                        },
                        height: 1,
                    },
                )
            })
            .collect();
    }
    let off = scroll_offset(selected, h, rows);
    (off..rows.min(off + h))
        .map(|i| {
            (
                i,
                Rect {
                    x: inner.x,
                    y: inner.y + (i - off) as u16,
                    width: inner.width,
                    height: 1,
                },
            )
        })
        .collect()
}
