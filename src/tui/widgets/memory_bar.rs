//! A capacity bar: weights `█`, KV cache `▓`, other allocations `▒`, free `░`; the part past
//! the capacity is drawn in the bad style (and `!` without colour).

use crate::tui::plot::TierBar;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// One tier's bar.
pub struct MemoryBar<'a> {
    /// The fractions.
    pub bar: &'a TierBar,
    /// Styles.
    pub theme: Theme,
}

impl Widget for MemoryBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let w = area.width as f64;
        let mut edges = [0u16; 4];
        let mut acc = 0.0;
        for (i, f) in self.bar.fractions.iter().enumerate() {
            acc += f;
            edges[i] = ((acc * w).round() as u16).min(area.width);
        }
        let cap = ((self.bar.capacity_fraction * w).round() as u16).min(area.width);
        let t = self.theme;
        for x in 0..area.width {
            let (sym, mut style) = if x < edges[0] {
                ("█", t.bar_weights())
            } else if x < edges[1] {
                ("▓", t.bar_kv())
            } else if x < edges[2] {
                ("▒", t.bar_other())
            } else {
                ("░", t.bar_free())
            };
            let sym = if !self.bar.fits && x == cap {
                style = t.bar_over();
                "┃"
            } else if !self.bar.fits && x > cap {
                style = t.bar_over();
                if t.color { sym } else { "!" }
            } else {
                sym
            };
            buf[(area.x + x, area.y)].set_symbol(sym).set_style(style);
        }
    }
}
