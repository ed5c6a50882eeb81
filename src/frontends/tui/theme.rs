//! Styles of the explorer. Colours are the terminal's own named ones on its default
//! background (readable on dark and light themes); with `NO_COLOR` set, only bold, dim,
//! reverse and underline are used. Depends on ratatui's style types only.

use crate::core::units::Provenance;
use ratatui::style::{Color, Modifier, Style};

/// The explorer's styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Colours allowed (false when `NO_COLOR` is set and not empty).
    pub color: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::from_env()
    }
}

impl Theme {
    /// Honour `NO_COLOR` (https://no-color.org): present and not empty disables colour.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// Plain text.
    pub fn text(self) -> Style {
        Style::new()
    }
    /// Labels and secondary text.
    pub fn label(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }
    /// Headings inside panes.
    pub fn heading(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    /// A headline number (the ceilings).
    pub fn figure(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    /// A pane border.
    pub fn border(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            self.label()
        }
    }
    /// A pane title.
    pub fn title(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Cyan)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }
    /// The selected row of the focused pane.
    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    /// The selected row of a pane that is not focused.
    pub fn selected_unfocused(self) -> Style {
        Style::new().add_modifier(Modifier::UNDERLINED)
    }
    /// Good news (fits, verified).
    pub fn ok(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }
    /// Bad news (does not fit, MISMATCH, impossible).
    pub fn bad(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    /// A caution (optimistic vendor ceiling, beyond native context).
    pub fn warn(self) -> Style {
        self.fg(Color::Magenta)
    }
    /// The line being typed.
    pub fn input(self) -> Style {
        Style::new().add_modifier(Modifier::UNDERLINED | Modifier::BOLD)
    }
    /// Key names in hints.
    pub fn key(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    /// A provenance tag.
    pub fn provenance(self, p: Provenance) -> Style {
        match p {
            Provenance::User => self.fg(Color::Magenta),
            Provenance::Spec => self.fg(Color::Yellow).add_modifier(Modifier::DIM),
            Provenance::Derived => self.label(),
            Provenance::Measured => self.fg(Color::Green),
            Provenance::File => self.fg(Color::Blue).add_modifier(Modifier::BOLD),
        }
    }
    /// The weights segment of a memory bar.
    pub fn bar_weights(self) -> Style {
        self.fg(Color::Blue)
    }
    /// The KV segment of a memory bar.
    pub fn bar_kv(self) -> Style {
        self.fg(Color::Cyan)
    }
    /// The compute-buffer segment of a memory bar.
    pub fn bar_compute(self) -> Style {
        self.fg(Color::Yellow)
    }
    /// The output-buffer segment of a memory bar.
    pub fn bar_output(self) -> Style {
        self.fg(Color::Green)
    }
    /// The other-allocations segment of a memory bar.
    pub fn bar_other(self) -> Style {
        self.fg(Color::Magenta)
    }
    /// The free part of a memory bar.
    pub fn bar_free(self) -> Style {
        self.label()
    }
    /// The part of a memory bar beyond the capacity.
    pub fn bar_over(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    /// Chart lines: file mode.
    pub fn line_file(self) -> Style {
        self.fg(Color::Cyan)
    }
    /// Chart lines: inventory mode.
    pub fn line_inventory(self) -> Style {
        self.fg(Color::Green)
    }
    /// Chart: the current point.
    pub fn marker(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
}
