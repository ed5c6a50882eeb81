//! The explorer: a terminal app over one scenario. `App` (no terminal) owns the scenario and
//! its report; panes and views only read them; `run` owns the terminal, the event loop and
//! restoring the terminal on quit, error, panic and Ctrl-C.
//! Depends on: bench, build, compare, core, gguf, library, mlx_report, models, profile, remote, report, safetensors, sanitize, workspace.

pub mod action;
pub mod adapter;
pub mod app;
pub mod complete;
pub mod event;
pub mod fields;
pub mod file;
pub mod footer;
pub mod format;
pub mod jobs;
pub mod keymap;
pub mod layout;
pub mod panes;
pub mod plot;
pub mod prompt;
pub mod render;
pub mod tabs;
pub mod theme;
pub mod views;
pub mod widgets;

pub use action::Action;
pub use app::App;

use std::path::PathBuf;

/// How the explorer starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// The scenario (profiles and overrides), as for the reports.
    pub scenario: crate::build::ScenarioOptions,
    /// A GGUF file to open at start (its model, bytes and inventory replace the profile's).
    pub gguf: Option<PathBuf>,
}

/// Run the explorer until the user quits. Install `color_eyre` first (the binary does).
pub fn run(opts: Options) -> color_eyre::Result<()> {
    event::run(opts)
}
