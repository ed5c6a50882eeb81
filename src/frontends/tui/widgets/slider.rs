//! A one-line slider: `━━━━━●──────` with an optional reference mark `┆` (native context).

use crate::tui::fields::SliderPos;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

/// A slider at a position.
pub struct Slider {
    /// Where the knob and the mark are.
    pub pos: SliderPos,
    /// Styles.
    pub theme: Theme,
}

fn cell(fraction: f64, width: u16) -> u16 {
    ((fraction.clamp(0.0, 1.0) * (width.saturating_sub(1)) as f64).round() as u16)
        .min(width.saturating_sub(1))
}

impl Widget for Slider {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < 3 || area.height == 0 {
            return;
        }
        let knob = cell(self.pos.fraction, area.width);
        let mark = self.pos.marker.map(|m| cell(m, area.width));
        for i in 0..area.width {
            let (sym, style) = if i == knob {
                ("●", self.theme.figure())
            } else if Some(i) == mark {
                ("┆", self.theme.warn())
            } else if i < knob {
                ("━", self.theme.line_file())
            } else {
                ("─", self.theme.label())
            };
            buf[(area.x + i, area.y)].set_symbol(sym).set_style(style);
        }
    }
}
