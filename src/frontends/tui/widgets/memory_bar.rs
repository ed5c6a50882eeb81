//! A memory bar of the runtime's memory on one tier: model `█`, allocated cache `▓`, output
//! buffer `▄`, compute buffer `▒`, other allocations A `▞`, free `░`; the part past the
//! capacity is drawn in the bad style (and `!` without colour).

use crate::tui::plot::TierBar;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Widget;

/// Symbols of the segments, in bar order (model, cache, output, compute, A, free).
pub const SYMBOLS: [&str; 6] = ["█", "▓", "▄", "▒", "▞", "░"];

/// The style of each segment, in bar order.
pub fn styles(t: Theme) -> [Style; 6] {
    [
        t.bar_weights(),
        t.bar_kv(),
        t.bar_output(),
        t.bar_compute(),
        t.bar_other(),
        t.bar_free(),
    ]
}

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
        let mut edges = [0u16; 6];
        let mut acc = 0.0;
        for (i, f) in self.bar.fractions.iter().enumerate() {
            acc += f;
            edges[i] = ((acc * w).round() as u16).min(area.width);
        }
        let cap = ((self.bar.capacity_fraction * w).round() as u16).min(area.width);
        let t = self.theme;
        let st = styles(t);
        for x in 0..area.width {
            let seg = edges.iter().position(|e| x < *e).unwrap_or(5);
            let (sym, mut style) = (SYMBOLS[seg], st[seg]);
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
