//! The explorer's state types: views, the modal (prompts and questions), messages and
//! claims. Data only; `App` holds them.

use super::*;

/// A full-screen view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The panes.
    Main,
    /// The tensor inventory browser.
    Tensors,
    /// The metadata view.
    Metadata,
    /// Compare machines.
    Compare,
    /// llama-bench results against this scenario's ceilings.
    Bench,
    /// Every model on this machine.
    Library,
    /// The plan llama.cpp would choose, per device.
    Devices,
}

/// A one-line message at the bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The text.
    pub text: String,
    /// An error (shown in the bad style).
    pub error: bool,
}

/// What a line being typed is for.
#[derive(Debug, Clone, PartialEq)]
pub enum InputTarget {
    /// A field of the focused pane.
    Field(Field),
    /// The path of a GGUF file to open.
    OpenPath,
    /// The path of a llama-bench results file to import.
    BenchPath,
    /// The id under which to save a profile.
    SaveId(SaveKind),
    /// Incremental search in the tensor view.
    TensorSearch,
    /// Incremental search in the metadata view.
    MetadataSearch,
    /// Filter of the compare view.
    CompareFilter,
    /// A folder of models to add to the library view.
    LibraryDir,
    /// The model profile picker.
    ModelProfile,
    /// The scenario profile picker.
    ScenarioProfile,
    /// The weights size of a model profile that pins no artifact (its id).
    ModelBytes(String),
}

/// A line being typed.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    /// What it is for.
    pub target: InputTarget,
    /// The prompt shown before it.
    pub prompt: String,
    /// The text so far.
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
    /// The opening value is selected: the first typed character replaces it.
    pub selected: bool,
    /// A picker's choices (filtered by the text); empty for a plain line.
    pub choices: Vec<String>,
    /// The highlighted row among the filtered choices.
    pub pick: usize,
    /// Tab-completion candidates of a path prompt, listed above the line.
    pub candidates: Vec<String>,
    /// The history entry shown (None: the line being typed).
    pub history_at: Option<usize>,
    /// The line being typed, kept while history is browsed.
    pub draft: String,
}

/// What waits for the user's answer, over the current view: at most one at a time.
#[derive(Debug, Clone, PartialEq)]
pub enum Modal {
    /// Nothing: keys go to the view.
    None,
    /// The help overlay, scrolled to this row.
    Help(usize),
    /// The log of past messages, scrolled to this line (`views::messages`).
    Log(usize),
    /// A line being typed (a value, a path, a search, a picker).
    Input(Input),
    /// A y/n before overwriting a saved profile.
    Confirm(Confirm),
    /// A profile switch that would drop unsaved edits, waiting for y/n. `compare`: the
    /// machine was chosen in the compare view (which words the question; yes returns to the
    /// panes).
    Switch {
        /// The profile to switch to.
        to: Switch,
        /// Chosen in the compare view.
        compare: bool,
    },
}

/// A question waiting for y or n.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    /// The question.
    pub question: String,
    /// What to save if the answer is yes.
    pub kind: SaveKind,
    /// The id.
    pub id: String,
}

/// A claimed rate and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// As typed.
    pub text: String,
    /// The check against the current report.
    pub check: ClaimCheck,
}
