//! What the user asked for, independent of the key that asked: the keymap names these
//! (snake_case in `assets/keymap.toml`), mouse events and typed text carry data.
//! Depends on nothing but serde.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One step of the explorer's state machine. `App::update` consumes these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave the explorer (the terminal is restored).
    Quit,
    /// Show or hide the key list.
    Help,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Select the previous field or row.
    Up,
    /// Select the next field or row.
    Down,
    /// Decrease the selected value (or move left in a table).
    Left,
    /// Increase the selected value (or move right in a table).
    Right,
    /// Scroll a page up.
    PageUp,
    /// Scroll a page down.
    PageDown,
    /// First row.
    Home,
    /// Last row.
    End,
    /// Type an exact value for the selected field (or act on the selected row).
    Edit,
    /// Toggle the selected row (compare view) or the selected switch.
    Toggle,
    /// Halve the context length, from anywhere.
    HalveContext,
    /// Double the context length, from anywhere.
    DoubleContext,
    /// Set GPU layers (`-ngl`) to the most that fit.
    MaxGpuLayers,
    /// Set the context to the largest that fits.
    MaxContext,
    /// Open (or close) the log of past status messages.
    Messages,
    /// Choose another model profile (a filterable picker; machine and cache settings stay).
    PickModel,
    /// Choose another scenario profile, built-in or saved (a filterable picker).
    PickScenario,
    /// The tensor inventory browser.
    Tensors,
    /// Compare machines.
    Compare,
    /// Every model on this machine (the library view).
    Library,
    /// Add a folder of models to the library view (asks for it; this session only).
    AddFolder,
    /// The metadata view.
    Metadata,
    /// Import llama-bench results and hold them against this scenario's ceilings.
    Bench,
    /// The Devices view: the plan llama.cpp would choose, per device.
    Devices,
    /// Apply the fitted plan as explicit `-ngl`/`-ts`/`-ot` flags (`-fit off`).
    ApplyPlan,
    /// Save the current machine (Machine pane focused) or scenario as a profile.
    Save,
    /// Open another GGUF file (asks for its path).
    Open,
    /// Search (tensor and metadata views: by name; elsewhere: the claim field).
    Search,
    /// Cancel a running hash.
    CancelHash,
    /// Close a view, an overlay or an edit.
    Back,
    /// Reverse the sort order (tensor and compare views).
    Reverse,
    /// Cycle the type filter (tensor view).
    Filter,
    /// Show or hide the selected column (compare view).
    HideColumn,
    /// Cycle the grouping: none, by layer, by type (tensor view).
    Group,
    /// Start (or restart) hashing the open file.
    Hash,
    /// A character typed into the line being edited.
    Input(char),
    /// Delete the character before the cursor in the line being edited.
    Backspace,
    /// Accept the line being edited.
    Submit,
    /// An editing key of the line being edited (cursor, kills, history, picker rows).
    Line(super::prompt::LineKey),
    /// Complete the path being typed (Tab in the open prompt).
    Complete,
    /// Answer yes to a question (overwrite a saved profile).
    Yes,
    /// Answer no to a question.
    No,
    /// Set the selected field of the focused pane to this text, as if typed and accepted.
    SetText(String),
    /// Text pasted into the open prompt (bracketed paste): inserted at the cursor, not
    /// accepted; control characters dropped, at most `prompt::MAX_PROMPT_CHARS` kept.
    Paste(String),
    /// Open a GGUF file (off the UI thread).
    OpenPath(PathBuf),
    /// Switch to a machine profile by id.
    SelectMachine(String),
    /// The terminal has this many columns and rows.
    Resize(u16, u16),
    /// A mouse click at a cell.
    Click(u16, u16),
    /// Mouse wheel at a cell: negative scrolls up.
    Scroll(u16, u16, i8),
}
