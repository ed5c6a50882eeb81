//! The full-screen views (tensor inventory, metadata, compare machines, llama-bench, library,
//! devices)
//! and the help and message-log overlays.

pub mod bench;
pub mod compare;
pub mod devices;
pub mod help;
pub mod library;
pub mod messages;
pub mod metadata;
pub mod tensors;

use super::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// What a file view shows when no GGUF file is open.
pub fn render_no_file(title: &str, theme: Theme, area: Rect, buf: &mut Buffer) {
    Paragraph::new(vec![
        Line::from(Span::styled(title.to_string(), theme.heading())),
        Line::raw(""),
        Line::from(Span::styled(
            "No GGUF file is open: the scenario comes from profiles. Press o to open one (Esc goes back).",
            theme.label(),
        )),
    ])
    .render(area, buf);
}
