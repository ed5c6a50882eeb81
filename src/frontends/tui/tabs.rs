//! The pane tabs of the compact layout (" Artifact Model Cache & run Machine"): which
//! panes have a tab, the rectangle of each, and the tab under a mouse position. Drawing and
//! clicks use the same rectangles. Pure geometry; never draws.

use super::fields::Pane;
use ratatui::layout::Rect;

/// The panes with a tab, left to right.
pub const TABBED: [Pane; 4] = [Pane::Artifact, Pane::Model, Pane::Cache, Pane::Machine];

/// The text of a pane's tab (its title).
pub fn label(p: Pane) -> String {
    p.title().to_string()
}

/// Each tab's rectangle within the tab row `tabs`, clipped to it: one blank before the first,
/// one between tabs, and the last column left blank before the Bounds border.
pub fn rects(tabs: Rect) -> Vec<(Pane, Rect)> {
    let end = tabs.right().saturating_sub(1);
    let mut x = tabs.x.saturating_add(1);
    let mut out = Vec::new();
    for p in TABBED {
        let w = label(p).chars().count() as u16;
        let right = x.saturating_add(w).min(end);
        if x >= right {
            break;
        }
        out.push((p, Rect::new(x, tabs.y, right - x, tabs.height.min(1))));
        x = right.saturating_add(1);
    }
    out
}

/// The tab at (x, y), if any.
pub fn at(tabs: Rect, x: u16, y: u16) -> Option<Pane> {
    rects(tabs)
        .into_iter()
        .find(|(_, r)| y == r.y && x >= r.x && x < r.right())
        .map(|(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clicks_find_the_tab_drawn_there() {
        let row = Rect::new(2, 5, 60, 1);
        assert_eq!(at(row, 2, 5), None);
        assert_eq!(at(row, 3, 5), Some(Pane::Artifact));
        // "Artifact" is 8 columns from column 3, then a blank: column 12 is "Model".
        assert_eq!(at(row, 11, 5), None);
        assert_eq!(at(row, 12, 5), Some(Pane::Model));
        assert_eq!(at(row, 12, 6), None);
        let last = rects(row).last().copied().unwrap();
        assert_eq!(last.0, Pane::Machine);
        assert_eq!(at(row, last.1.right(), 5), None);
    }
}
