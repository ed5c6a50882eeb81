//! The panes of the main screen, one struct per pane borrowing what it shows. They format
//! figures (with `core::units`) and place them; they compute no bound.

pub mod artifact;
pub mod bounds;
pub mod claim;
pub mod inputs;

use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

/// The bordered block of a pane.
pub fn block<'a>(title: impl Into<String>, focused: bool, theme: Theme) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused { BorderType::Thick } else { BorderType::Rounded })
        .border_style(theme.border(focused))
        .title(Line::from(Span::styled(format!(" {} ", title.into()), theme.title(focused))))
}
