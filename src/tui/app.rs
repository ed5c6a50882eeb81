//! The explorer's state: the scenario, the last report, and everything the screens show.
//! `App::new` needs no terminal; `App::update(Action)` changes the scenario and ends with one
//! `recompute()`; background work (opening a file, hashing) reports through `App::poll_jobs`.
//! Depends on core, profile, build and compare; never draws.

use super::action::Action;
use super::fields::{self, Field, ModelEdits, Pane, Row};
use super::file::{self, FileState, Job, JobMessage, Jobs};
use super::keymap::{Context, Keymap};
use super::layout;
use super::plot::Plots;
use super::theme::Theme;
use super::views::compare::CompareView;
use super::views::metadata::MetadataView;
use super::views::tensors::TensorView;
use crate::build::{self, BuildError, ScenarioOptions};
use crate::core::model::{ArchFigures, ModelShape};
use crate::core::scenario::Scenario;
use crate::core::units::{self, Provenance};
use crate::core::{ClaimCheck, Report, check_claim, evaluate};
use crate::profile::file::{
    CacheTypeLabel, ComputeFile, Figure, FlopsValue, MachineFile, ModelFile, ProvenanceLabel,
    RateValue, RawNumber, ScenarioFile, SizeValue,
};
use crate::profile::{Catalog, Origin, load};
use ratatui::layout::Rect;
use std::path::PathBuf;

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
}

/// The llama-bench results view: the import's text report for the current scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchView {
    /// The results file.
    pub path: Option<PathBuf>,
    /// The report's lines (computed when imported and on every recompute).
    pub lines: Vec<String>,
    /// First line shown.
    pub scroll: usize,
    /// Decode rows above their highest ceiling.
    pub impossible_rows: usize,
    /// The rows read from the file.
    pub rows: Vec<crate::bench::BenchRow>,
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

/// What `s` saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveKind {
    /// The machine profile.
    Machine,
    /// The scenario (and the edited machine and model with it).
    Scenario,
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

/// The profile artifact of the scenario (before or without a GGUF file).
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedArtifact {
    /// Artifact id in the model profile.
    pub id: String,
    /// File name.
    pub file: String,
    /// Exact bytes.
    pub bytes: u64,
    /// Pinned SHA-256.
    pub sha256: Option<String>,
    /// Quantization preset name.
    pub quantization: String,
}

/// Everything needed to undo a rejected change.
#[derive(Debug, Clone)]
struct Undo {
    scenario: Scenario,
    figures: ArchFigures,
    model_edits: ModelEdits,
    machine_edits: Vec<Field>,
}

/// The explorer.
pub struct App {
    /// Profiles (built-in and the user's).
    pub catalog: Catalog,
    /// The last valid scenario.
    pub scenario: Scenario,
    /// The scenario as loaded or last saved (the title says "edited" when they differ).
    pub base: Scenario,
    /// Its report.
    pub report: Report,
    /// Raw figures the model shape is built from (edited by the Model pane).
    pub figures: ArchFigures,
    /// Provenance of unedited model figures (spec from a profile, file from a GGUF).
    pub model_base: Provenance,
    /// Model figures the user changed.
    pub model_edits: ModelEdits,
    /// Machine fields the user changed.
    pub machine_edits: Vec<Field>,
    /// The scenario profile the explorer started from (None after opening a GGUF).
    pub scenario_file: Option<ScenarioFile>,
    /// The model profile (None after opening a GGUF).
    pub model_file: Option<ModelFile>,
    /// The machine profile as loaded (edits are applied when saving).
    pub machine_file: MachineFile,
    /// Where the machine profile came from ("built-in" or "saved").
    pub machine_origin: String,
    /// The profile artifact of the scenario.
    pub pinned: Option<PinnedArtifact>,
    /// Chart coordinates of the report.
    pub plots: Plots,
    /// Why the last model edit was refused (shown in the Model pane until the next valid one).
    pub model_refusal: Option<String>,
    /// The most GPU layers that fit (`core::gpu_layers`), recomputed with the report.
    pub max_gpu_layers: Option<crate::core::gpu_layers::MaxGpuLayers>,
    /// Focused pane.
    pub focus: Pane,
    /// Selected field of each pane.
    pub selected: Vec<(Pane, Field)>,
    /// Current view.
    pub view: View,
    /// Help overlay shown.
    pub help: bool,
    /// A line being typed.
    pub input: Option<Input>,
    /// A question waiting for y/n.
    pub confirm: Option<Confirm>,
    /// Bottom-line message.
    pub message: Option<Message>,
    /// Claimed rate and verdict.
    pub claim: Option<Claim>,
    /// The opened GGUF file (and its loading / hashing state).
    pub file: FileState,
    /// The tensor view's state.
    pub tensors: TensorView,
    /// The metadata view's state.
    pub metadata: MetadataView,
    /// The compare view's state.
    pub compare: CompareView,
    /// The library view's state.
    pub library: super::views::library::LibraryView,
    /// The llama-bench results view.
    pub bench: BenchView,
    /// Keys.
    pub keymap: Keymap,
    /// Styles.
    pub theme: Theme,
    /// Terminal size (for mouse hit-testing).
    pub screen: Rect,
    /// Rows the Bounds pane's lower text is scrolled by (↑↓ with the pane focused).
    pub bounds_scroll: u16,
    /// Rows the Claim pane is scrolled by (↑↓ with the pane focused).
    pub claim_scroll: u16,
    /// Where SHA-256 digests are remembered (None: never cached).
    pub hash_cache: Option<PathBuf>,
    /// Set by `q`.
    pub quit: bool,
    /// Accepted lines of every prompt (↑↓ recall them).
    pub history: super::prompt::History,
    jobs: Jobs,
}

fn origin_label(o: &Origin) -> String {
    match o {
        Origin::Builtin => "built-in".into(),
        Origin::File(_) => "saved".into(),
    }
}

/// Why the explorer cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The scenario options do not build a scenario.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The scenario builds but cannot be evaluated.
    #[error("{0}")]
    Evaluate(String),
}

impl App {
    /// The explorer on the scenario the options describe. Needs no terminal.
    pub fn new(catalog: Catalog, opts: &ScenarioOptions) -> Result<App, StartError> {
        let scenario = build::scenario(&catalog, opts)?;
        let report = evaluate(&scenario).map_err(|e| StartError::Evaluate(e.0))?;
        let scenario_file = catalog
            .scenario(opts.scenario.as_deref().unwrap_or("default"))
            .ok();
        let model_id = opts
            .model
            .clone()
            .or_else(|| scenario_file.as_ref().map(|s| s.model.clone()));
        let model_file = model_id.and_then(|id| catalog.model(&id).ok());
        let artifact_id = match (&opts.artifact, &opts.model) {
            (Some(a), _) => Some(a.clone()),
            (None, Some(_)) => model_file
                .as_ref()
                .and_then(|m| m.artifacts.first().map(|a| a.id.clone())),
            (None, None) => scenario_file.as_ref().map(|s| s.artifact.clone()),
        };
        let pinned = model_file.as_ref().and_then(|m| {
            m.artifacts
                .iter()
                .find(|a| Some(&a.id) == artifact_id.as_ref())
                .map(|a| PinnedArtifact {
                    id: a.id.clone(),
                    file: a.file.clone(),
                    bytes: a.bytes,
                    sha256: a.sha256.clone(),
                    quantization: a.quantization.clone(),
                })
        });
        let figures = match &model_file {
            Some(m) => load::arch_figures(m),
            None => figures_of(&scenario.model),
        };
        let machine_ref = opts
            .machine
            .clone()
            .or_else(|| scenario_file.as_ref().map(|s| s.machine.clone()))
            .unwrap_or_else(|| scenario.machine.id.clone());
        let machine_file = catalog
            .machine(&machine_ref)
            .map_err(|e| StartError::Build(BuildError::Profile(e)))?;
        let machine_origin = catalog
            .machines
            .iter()
            .find(|e| e.id == machine_file.id)
            .map_or("file".into(), |e| origin_label(&e.origin));
        let mut machine_edits = Vec::new();
        if opts.memory.is_some() || opts.bandwidth.is_some() {
            let idx = opts
                .tier
                .as_ref()
                .and_then(|t| scenario.machine.tiers.iter().position(|x| &x.name == t))
                .unwrap_or(0);
            if opts.memory.is_some() {
                machine_edits.push(Field::Capacity(idx));
            }
            if opts.bandwidth.is_some() {
                machine_edits.push(Field::Bandwidth(idx));
            }
        }
        let plots = Plots::from_report(&report);
        let max_gpu_layers = crate::core::gpu_layers::max_gpu_layers(&scenario);
        let mut app = App {
            catalog,
            base: scenario.clone(),
            scenario,
            report,
            figures,
            model_base: Provenance::Spec,
            model_edits: ModelEdits::default(),
            machine_edits,
            scenario_file,
            model_file,
            machine_file,
            machine_origin,
            pinned,
            plots,
            model_refusal: None,
            max_gpu_layers,
            focus: Pane::Cache,
            selected: Vec::new(),
            view: View::Main,
            help: false,
            input: None,
            confirm: None,
            message: None,
            claim: None,
            file: FileState::default(),
            tensors: TensorView::default(),
            metadata: MetadataView::default(),
            compare: CompareView::default(),
            library: Default::default(),
            bench: BenchView::default(),
            keymap: Keymap::builtin(),
            theme: Theme::from_env(),
            screen: Rect::new(0, 0, layout::FULL_WIDTH, layout::FULL_HEIGHT),
            bounds_scroll: 0,
            claim_scroll: 0,
            hash_cache: super::adapter::default_hash_cache(),
            quit: false,
            history: Default::default(),
            jobs: Jobs::default(),
        };
        if !app.catalog.errors.is_empty() {
            let n = app.catalog.errors.len();
            app.message = Some(Message {
                text: format!(
                    "{n} profile{} skipped: {}",
                    if n == 1 { "" } else { "s" },
                    app.catalog.errors[0]
                ),
                error: true,
            });
        }
        Ok(app)
    }

    /// The context the keymap uses now.
    pub fn key_context(&self) -> Context {
        match self.view {
            View::Main => Context::Main,
            View::Tensors => Context::Tensors,
            View::Metadata => Context::Metadata,
            View::Compare => Context::Compare,
            View::Bench => Context::Bench,
            View::Library => Context::Library,
        }
    }

    /// The title: the scenario's name, or what it is now once edited.
    pub fn title(&self) -> String {
        if self.scenario == self.base {
            return self.scenario.name.clone();
        }
        let s = &self.scenario;
        format!(
            "{} · {} tokens × {} · {}/{} · {} · edited",
            s.model.name,
            units::fmt_tokens(s.cache.context),
            s.cache.sequences,
            s.cache.type_k,
            s.cache.type_v,
            s.machine.id
        )
    }

    /// What the main layout depends on.
    pub fn layout_hints(&self) -> layout::Hints {
        layout::Hints {
            claim: self.claim.is_some(),
            encodings: self.file.loaded.as_ref().map_or(0, |l| l.by_type.len()),
        }
    }

    /// A line is being typed (printable keys go into it).
    pub fn is_typing(&self) -> bool {
        self.input.is_some()
    }

    /// Rows of a pane, as shown.
    pub fn rows(&self, pane: Pane) -> Vec<Row> {
        match pane {
            Pane::Cache => {
                let mut rows = fields::cache_rows(&self.scenario);
                fields::tag_max_gpu_layers(&mut rows, self.max_gpu_layers.as_ref());
                rows
            }
            Pane::Model => {
                let mut rows = fields::model_rows(
                    &self.scenario,
                    &self.figures,
                    &self.model_edits,
                    self.model_base,
                );
                if let Some(why) = &self.model_refusal {
                    // Under the field being edited, so the reason is in view beside it.
                    let f = (self.selected.iter()).find(|(p, _)| *p == Pane::Model);
                    let at = f
                        .and_then(|(_, f)| rows.iter().position(|r| r.field == Some(*f)))
                        .map_or(rows.len(), |i| i + 1);
                    rows.splice(at..at, fields::refusal_rows(why, 24));
                }
                rows
            }
            Pane::Machine => {
                fields::machine_rows(&self.scenario, &self.machine_origin, &self.machine_edits)
            }
            _ => Vec::new(),
        }
    }

    /// The selected field of a pane (the first selectable one when none was chosen).
    pub fn selected_field(&self, pane: Pane) -> Option<Field> {
        if pane == Pane::Claim {
            return Some(Field::Claim);
        }
        let rows = self.rows(pane);
        let chosen = self
            .selected
            .iter()
            .find(|(p, _)| *p == pane)
            .map(|(_, f)| *f);
        match chosen {
            Some(f) if rows.iter().any(|r| r.field == Some(f)) => Some(f),
            _ => rows.iter().find_map(|r| r.field),
        }
    }

    /// Index of the selected row of a pane.
    pub fn selected_row(&self, pane: Pane) -> usize {
        let f = self.selected_field(pane);
        self.rows(pane)
            .iter()
            .position(|r| r.field.is_some() && r.field == f)
            .unwrap_or(0)
    }

    fn select(&mut self, pane: Pane, f: Field) {
        self.selected.retain(|(p, _)| *p != pane);
        self.selected.push((pane, f));
    }

    fn move_selection(&mut self, dir: i32) {
        let rows = self.rows(self.focus);
        let selectable: Vec<Field> = rows.iter().filter_map(|r| r.field).collect();
        if selectable.is_empty() {
            return;
        }
        let cur = self.selected_field(self.focus);
        let i = selectable.iter().position(|f| Some(*f) == cur).unwrap_or(0) as i32;
        let j = (i + dir).clamp(0, selectable.len() as i32 - 1) as usize;
        self.select(self.focus, selectable[j]);
    }

    fn undo_point(&self) -> Undo {
        Undo {
            scenario: self.scenario.clone(),
            figures: self.figures.clone(),
            model_edits: self.model_edits.clone(),
            machine_edits: self.machine_edits.clone(),
        }
    }

    fn restore(&mut self, u: Undo) {
        self.scenario = u.scenario;
        self.figures = u.figures;
        self.model_edits = u.model_edits;
        self.machine_edits = u.machine_edits;
    }

    fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            error: true,
        });
    }

    fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            error: false,
        });
    }

    /// Apply one action. Every change to the scenario ends with one `recompute()`.
    pub fn update(&mut self, action: Action) {
        if !matches!(action, Action::Resize(..) | Action::Scroll(..)) {
            self.message = None;
        }
        if let Some(c) = self.confirm.clone() {
            match action {
                Action::Yes => {
                    self.confirm = None;
                    self.save(c.kind, &c.id, true);
                }
                Action::No | Action::Back => {
                    self.confirm = None;
                    self.info("not saved");
                }
                Action::Quit => self.quit = true,
                Action::Resize(w, h) => self.screen = Rect::new(0, 0, w, h),
                _ => {}
            }
            return;
        }
        if self.input.is_some() {
            self.update_input(action);
            return;
        }
        if self.help {
            match action {
                Action::Help | Action::Back => self.help = false,
                Action::Quit => self.quit = true,
                Action::Resize(w, h) => self.screen = Rect::new(0, 0, w, h),
                _ => {}
            }
            return;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.help = true,
            Action::Resize(w, h) => self.screen = Rect::new(0, 0, w, h),
            Action::HalveContext | Action::DoubleContext => {
                let u = self.undo_point();
                self.scenario.cache.context = fields::halve_or_double_context(
                    self.scenario.cache.context,
                    action == Action::DoubleContext,
                );
                self.recompute_or_undo(Some(u));
            }
            Action::MaxGpuLayers => self.jump_to_max_gpu_layers(),
            Action::Tensors => self.open_view(View::Tensors),
            Action::Metadata => self.open_view(View::Metadata),
            Action::Compare => self.open_view(View::Compare),
            Action::Library => self.open_view(View::Library),
            Action::Bench => {
                self.input = Some(Input::new(
                    InputTarget::BenchPath,
                    "llama-bench results (-o json / jsonl): ",
                    self.bench
                        .path
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                ));
            }
            Action::Open => {
                self.input = Some(Input::new(
                    InputTarget::OpenPath,
                    "open GGUF file: ",
                    self.file.path_text(),
                ));
            }
            Action::OpenPath(p) => self.open_path(p),
            Action::CancelHash => {
                if self.file.cancel_hash() {
                    self.info("hashing cancelled");
                } else {
                    self.info("no hash is running");
                }
            }
            Action::Hash => self.start_hash(),
            Action::SelectMachine(id) => self.select_machine(&id),
            Action::SetText(t) => {
                if let Some(f) = self.selected_field(self.focus) {
                    self.set_field(f, &t);
                }
            }
            other => match self.view {
                View::Main => self.update_main(other),
                View::Tensors => self.update_tensors(other),
                View::Metadata => self.update_metadata(other),
                View::Compare => self.update_compare(other),
                View::Bench => self.update_bench(other),
                View::Library => self.update_library(other),
            },
        }
    }

    fn open_view(&mut self, v: View) {
        self.view = v;
        if v == View::Compare {
            self.refresh_compare();
        }
        if v == View::Library {
            self.refresh_library();
        }
    }

    fn update_main(&mut self, action: Action) {
        match action {
            // Esc dismisses a claim result.
            Action::Back if self.claim.is_some() => {
                self.claim = None;
                self.claim_scroll = 0;
            }
            Action::Back => {}
            Action::NextPane | Action::PrevPane => {
                let i = Pane::ORDER
                    .iter()
                    .position(|p| *p == self.focus)
                    .unwrap_or(0) as i32;
                let d = if action == Action::NextPane { 1 } else { -1 };
                self.focus = Pane::ORDER[((i + d).rem_euclid(Pane::ORDER.len() as i32)) as usize];
            }
            Action::Up | Action::Down if self.focus == Pane::Bounds => {
                self.bounds_scroll = if action == Action::Up {
                    self.bounds_scroll.saturating_sub(1)
                } else {
                    (self.bounds_scroll + 1).min(30)
                };
            }
            Action::Up | Action::Down if self.focus == Pane::Claim => {
                self.claim_scroll = if action == Action::Up {
                    self.claim_scroll.saturating_sub(1)
                } else {
                    (self.claim_scroll + 1).min(40)
                };
            }
            Action::Up => self.move_selection(-1),
            Action::Down => self.move_selection(1),
            Action::PageUp | Action::Home => self.move_selection(-100),
            Action::PageDown | Action::End => self.move_selection(100),
            Action::Left | Action::Right | Action::Toggle => {
                let dir = if action == Action::Left { -1 } else { 1 };
                if let Some(f) = self.selected_field(self.focus) {
                    self.step_field(f, dir);
                }
            }
            Action::Edit => match self.focus {
                Pane::Artifact => self.start_hash(),
                Pane::Bounds => {}
                pane => {
                    if let Some(f) = self.selected_field(pane) {
                        self.begin_edit(f);
                    }
                }
            },
            Action::Search => {
                self.focus = Pane::Claim;
                self.begin_edit(Field::Claim);
            }
            Action::Save => {
                let kind = if self.focus == Pane::Machine {
                    SaveKind::Machine
                } else {
                    SaveKind::Scenario
                };
                self.begin_save(kind);
            }
            Action::Click(x, y) => self.click(x, y),
            Action::Scroll(x, y, d) => {
                if let Some(l) = layout::main_layout(self.screen, self.focus, self.layout_hints())
                    && let Some((p, _)) = l.pane_at(x, y)
                {
                    self.focus = p;
                    self.move_selection(d as i32);
                }
            }
            _ => {}
        }
    }

    fn click(&mut self, x: u16, y: u16) {
        let Some(l) = layout::main_layout(self.screen, self.focus, self.layout_hints()) else {
            return;
        };
        if let Some(tabs) = l.tabs
            && y == tabs.y
            && x >= tabs.x
            && x < tabs.right()
        {
            // Tabs are drawn as " Artifact  Model  Cache & run  Machine " in Pane::ORDER.
            let mut cx = tabs.x;
            for p in [Pane::Artifact, Pane::Model, Pane::Cache, Pane::Machine] {
                let w = p.title().len() as u16 + 2;
                if x >= cx && x < cx + w {
                    self.focus = p;
                    return;
                }
                cx += w;
            }
            return;
        }
        let Some((pane, rect)) = l.pane_at(x, y) else {
            return;
        };
        self.focus = pane;
        let rows = self.rows(pane);
        if rows.is_empty() {
            return;
        }
        let sel = self.selected_row(pane);
        for (i, cell) in layout::field_cells(layout::inner(rect), rows.len(), sel) {
            if y == cell.y
                && x >= cell.x
                && x < cell.right()
                && let Some(f) = rows[i].field
            {
                self.select(pane, f);
            }
        }
    }

    fn begin_edit(&mut self, f: Field) {
        if f == Field::MachineProfile {
            let mut picker = Input::picker(
                InputTarget::Field(f),
                "machine (type to filter): ",
                self.catalog.machines.iter().map(|m| m.id.clone()).collect(),
            );
            // The current machine is highlighted until something is typed.
            picker.pick = picker
                .choices
                .iter()
                .position(|c| *c == self.scenario.machine.id)
                .unwrap_or(0);
            self.input = Some(picker);
            return;
        }
        let text = match f {
            Field::Claim => self
                .claim
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        self.input = Some(Input::new(
            InputTarget::Field(f),
            format!("{}: ", f.name()),
            text,
        ));
    }

    fn update_input(&mut self, action: Action) {
        let Some(mut input) = self.input.take() else {
            return;
        };
        match action {
            Action::Input(c) => {
                input.insert(c);
                self.on_input_changed(&input);
                self.input = Some(input);
            }
            Action::Backspace => {
                input.backspace();
                self.on_input_changed(&input);
                self.input = Some(input);
            }
            Action::Line(k) => {
                input.key(k, self.history.of(&input.target));
                self.on_input_changed(&input);
                self.input = Some(input);
            }
            Action::Back => {
                if input.target == InputTarget::TensorSearch {
                    self.tensors
                        .set_search(String::new(), self.file.inventory());
                }
                if input.target == InputTarget::MetadataSearch {
                    self.metadata
                        .set_search(String::new(), self.file.metadata_rows());
                }
                if input.target == InputTarget::CompareFilter {
                    self.compare.set_filter(String::new());
                }
            }
            Action::Submit => self.submit_input(input),
            Action::Complete => {
                if matches!(input.target, InputTarget::OpenPath | InputTarget::BenchPath) {
                    let exts: &[&str] = if input.target == InputTarget::BenchPath {
                        &[".json", ".jsonl"]
                    } else {
                        &[".gguf"]
                    };
                    let (text, candidates) = complete_path_in(&input.text, exts);
                    input.set(text);
                    input.candidates = if candidates.len() > 1 {
                        candidates
                    } else {
                        Vec::new()
                    };
                }
                self.input = Some(input);
            }
            Action::SetText(t) => {
                input.set(t);
                self.on_input_changed(&input);
                self.submit_input(input);
            }
            Action::Quit => self.quit = true,
            Action::Resize(w, h) => {
                self.screen = Rect::new(0, 0, w, h);
                self.input = Some(input);
            }
            _ => self.input = Some(input),
        }
    }

    fn on_input_changed(&mut self, input: &Input) {
        match input.target {
            InputTarget::TensorSearch => self
                .tensors
                .set_search(input.text.clone(), self.file.inventory()),
            InputTarget::MetadataSearch => self
                .metadata
                .set_search(input.text.clone(), self.file.metadata_rows()),
            InputTarget::CompareFilter => self.compare.set_filter(input.text.clone()),
            _ => {}
        }
    }

    fn submit_input(&mut self, mut input: Input) {
        input.text = input.value();
        self.history.push(&input.target, &input.text);
        match input.target {
            InputTarget::Field(f) => self.set_field(f, &input.text),
            InputTarget::OpenPath => {
                let t = input.text.trim();
                if t.is_empty() {
                    self.error("no file named");
                } else {
                    self.open_path(PathBuf::from(t));
                }
            }
            InputTarget::BenchPath => {
                let t = input.text.trim();
                if t.is_empty() {
                    self.error("no file named");
                } else {
                    self.import_bench(PathBuf::from(t));
                }
            }
            InputTarget::SaveId(kind) => self.save(kind, input.text.trim(), false),
            InputTarget::TensorSearch
            | InputTarget::MetadataSearch
            | InputTarget::CompareFilter => {}
        }
    }

    fn step_field(&mut self, f: Field, dir: i32) {
        if f == Field::MachineProfile {
            let ids: Vec<String> = self.catalog.machines.iter().map(|m| m.id.clone()).collect();
            if ids.is_empty() {
                return;
            }
            let i = ids
                .iter()
                .position(|id| *id == self.scenario.machine.id)
                .map_or(0, |i| i as i32 + dir);
            let id = ids[i.rem_euclid(ids.len() as i32) as usize].clone();
            self.select_machine(&id);
            return;
        }
        if f == Field::Claim {
            return;
        }
        let u = self.undo_point();
        match fields::step(&mut self.scenario, &mut self.figures, f, dir) {
            Ok(true) => {
                self.mark_edit(f);
                self.recompute_or_undo(Some(u));
            }
            Ok(false) => self.info(format!("Enter to type the {}", f.name())),
            Err(e) => {
                self.restore(u);
                self.error(e);
            }
        }
    }

    fn mark_edit(&mut self, f: Field) {
        if f.is_model() {
            self.model_edits.mark(f);
        }
        if f.is_machine() && !self.machine_edits.contains(&f) {
            self.machine_edits.push(f);
        }
    }

    /// Set a field from text (as typed and accepted); a bad value leaves the scenario as it was.
    pub fn set_field(&mut self, f: Field, text: &str) {
        match f {
            Field::Claim => return self.set_claim(text),
            Field::MachineProfile => return self.select_machine(text.trim()),
            _ => {}
        }
        let u = self.undo_point();
        match fields::set(&mut self.scenario, &mut self.figures, f, text) {
            Ok(()) => {
                self.mark_edit(f);
                self.recompute_or_undo(Some(u));
            }
            Err(e) => {
                self.restore(u);
                self.error(e);
            }
        }
    }

    fn set_claim(&mut self, text: &str) {
        let t = text.trim();
        if t.is_empty() {
            self.claim = None;
            return;
        }
        let cleaned = t
            .trim_end_matches("tok/s")
            .trim_end_matches("tokens/s")
            .trim();
        match cleaned.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => {
                if let Err(e) = crate::core::units::check_tokens_per_second(v) {
                    self.error(format!("claim: \"{t}\" is {e}"));
                    return;
                }
                self.claim = Some(Claim {
                    text: t.to_string(),
                    check: check_claim(&self.report, v),
                });
                self.claim_scroll = 0;
            }
            _ => self.error(format!(
                "claim: \"{t}\" is not a positive number of tokens/s"
            )),
        }
    }

    /// Switch machine profile by id.
    pub fn select_machine(&mut self, id: &str) {
        let Some(entry) = self.catalog.machines.iter().find(|m| m.id == id) else {
            self.error(format!(
                "unknown machine \"{id}\"; known: {}",
                self.catalog
                    .machines
                    .iter()
                    .map(|m| m.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return;
        };
        let file = entry.value.clone();
        let origin = origin_label(&entry.origin);
        let u = self.undo_point();
        self.scenario.machine = load::machine(&file);
        self.machine_edits.clear();
        if self.recompute_or_undo(Some(u)) {
            self.machine_file = file;
            self.machine_origin = origin;
        }
    }

    /// Evaluate the scenario. On success the report, charts, claim and comparison follow; on
    /// failure the message says why. Returns success.
    pub fn recompute(&mut self) -> bool {
        self.recompute_or_undo(None)
    }

    /// Set `-ngl` to the most GPU layers that fit, and say the decode ceiling there.
    fn jump_to_max_gpu_layers(&mut self) {
        let Some(m) = self.max_gpu_layers.clone() else {
            self.info("GPU layers apply to a machine with an accelerator tier and a host tier");
            return;
        };
        let Some(n) = m.gpu_layers else {
            self.error("no -ngl fits: not even -ngl 0 (every layer in host memory)");
            return;
        };
        let u = self.undo_point();
        self.scenario.offload.gpu_layers = (n < m.all_layers).then_some(n);
        if self.recompute_or_undo(Some(u)) {
            self.info(crate::report::text::max_gpu_layers_line(
                &m,
                self.scenario.cache.sequences,
            ));
        }
    }

    /// `recompute`, going back to the undo point (the previous valid scenario) on failure.
    fn recompute_or_undo(&mut self, undo: Option<Undo>) -> bool {
        if let Err(e) = self.rebuild_model() {
            if let Some(u) = undo {
                self.restore(u);
            }
            self.model_refusal = Some(e.trim_start_matches("model: ").to_string());
            self.error(e);
            return false;
        }
        self.model_refusal = None;
        match evaluate(&self.scenario) {
            Ok(r) => {
                self.report = r;
                self.plots = Plots::from_report(&self.report);
                self.max_gpu_layers = crate::core::gpu_layers::max_gpu_layers(&self.scenario);
                if let Some(c) = &self.claim {
                    let tps = c.check.tokens_per_second;
                    self.claim = Some(Claim {
                        text: c.text.clone(),
                        check: check_claim(&self.report, tps),
                    });
                }
                if self.view == View::Compare {
                    self.refresh_compare();
                }
                if self.view == View::Library {
                    self.refresh_library();
                }
                self.refresh_bench();
                true
            }
            Err(e) => {
                if let Some(u) = undo {
                    self.restore(u);
                    let _ = self.rebuild_model();
                }
                self.error(e.0);
                false
            }
        }
    }

    /// Rebuild the model shape from the (possibly edited) figures.
    fn rebuild_model(&mut self) -> Result<(), String> {
        if self.model_edits.fields.is_empty() || self.model_edits.fields == [Field::Parameters] {
            if self.model_edits.has(Field::Parameters) {
                self.scenario.model.provenance = Provenance::User;
            }
            return Ok(());
        }
        let old = &self.scenario.model;
        let mut shape = ModelShape::from_figures(old.name.clone(), &self.figures, Provenance::User)
            .map_err(|e| format!("model: {}", e.0))?;
        shape.parameters_advertised = old.parameters_advertised.clone();
        shape.active_parameters_advertised = old.active_parameters_advertised.clone();
        self.scenario.model = shape;
        Ok(())
    }

    fn begin_save(&mut self, kind: SaveKind) {
        if self.catalog.user_dir.is_none() {
            self.error("no configuration directory: set LLMBOUND_CONFIG_DIR");
            return;
        }
        if kind == SaveKind::Scenario && self.scenario_file.is_none() {
            self.error("a scenario opened on a GGUF file cannot be saved as a profile: its model is the file (save the machine from the Machine pane)");
            return;
        }
        let default = match kind {
            SaveKind::Machine => {
                if self.machine_origin == "saved" {
                    self.machine_file.id.clone()
                } else {
                    format!("{}-mine", self.machine_file.id)
                }
            }
            SaveKind::Scenario => self
                .scenario_file
                .as_ref()
                .map_or("my-scenario".into(), |s| format!("{}-mine", s.id)),
        };
        let what = if kind == SaveKind::Machine {
            "machine"
        } else {
            "scenario"
        };
        self.input = Some(Input::new(
            InputTarget::SaveId(kind),
            format!("save {what} as (id): "),
            default,
        ));
    }

    /// The machine profile with the user's edits applied.
    pub fn machine_profile(&self, id: &str) -> MachineFile {
        let mut mf = self.machine_file.clone();
        let edited = |f: Field| self.machine_edits.contains(&f);
        let user = |source: &str| (ProvenanceLabel(Provenance::User), source.to_string());
        mf.id = id.to_string();
        if !self.machine_edits.is_empty() {
            mf.name =
                fields::edited_machine_name(&mf.name, &self.scenario.machine, &self.machine_edits);
        }
        for (i, t) in self.scenario.machine.tiers.iter().enumerate() {
            let Some(tf) = mf.tiers.get_mut(i) else {
                continue;
            };
            if edited(Field::Capacity(i)) {
                let (p, s) = user("edited in the explorer");
                tf.capacity = Figure {
                    value: SizeValue {
                        value: t.capacity.value,
                        raw: RawNumber::Text(format!("{} bytes", t.capacity.value)),
                    },
                    provenance: p,
                    source: s,
                    date: None,
                    method: None,
                };
            }
            if edited(Field::Bandwidth(i)) {
                let (p, s) = user("edited in the explorer");
                tf.bandwidth = Figure {
                    value: RateValue {
                        value: t.bandwidth.value,
                        raw: RawNumber::Text(units::fmt_bandwidth(t.bandwidth.value)),
                    },
                    provenance: p,
                    source: s,
                    date: None,
                    method: None,
                };
            }
            if edited(Field::Measured(i)) {
                tf.measured_bandwidth = t.measured_bandwidth.as_ref().map(|b| Figure {
                    value: RateValue {
                        value: b.value,
                        raw: RawNumber::Text(units::fmt_bandwidth(b.value)),
                    },
                    provenance: ProvenanceLabel(Provenance::Measured),
                    source: "typed in the explorer as a measured figure".into(),
                    date: None,
                    method: None,
                });
            }
        }
        for (i, c) in self.scenario.machine.compute.iter().enumerate() {
            if edited(Field::ComputeRate(i))
                && let Some(cf) = mf.compute.get_mut(i)
            {
                let (p, s) = user("edited in the explorer");
                *cf = ComputeFile {
                    path: c.path.clone(),
                    tier: c.tier.clone(),
                    rate: Figure {
                        value: FlopsValue {
                            value: c.rate.value,
                            raw: RawNumber::Text(units::fmt_flops(c.rate.value)),
                        },
                        provenance: p,
                        source: s,
                        date: None,
                        method: None,
                    },
                };
            }
        }
        mf
    }

    /// The model profile with the user's edits applied (None without a model profile).
    pub fn model_profile(&self, id: &str) -> Option<ModelFile> {
        let mut m = self.model_file.clone()?;
        m.id = id.to_string();
        if !m.name.ends_with("(edited)") {
            m.name = format!("{} (edited)", m.name);
        }
        let f = &self.figures;
        m.layers = f.layers;
        m.attention_heads = f.head_count.max();
        m.kv_heads = match &f.head_count_kv {
            crate::core::model::PerLayer::Uniform(n) => {
                crate::profile::file::HeadsFile::Uniform(*n)
            }
            crate::core::model::PerLayer::List(v) => {
                crate::profile::file::HeadsFile::List(v.clone())
            }
        };
        if f.key_length.is_some() || f.value_length.is_some() {
            if f.key_length == f.value_length {
                m.head_dim = f.key_length;
                m.key_length = None;
                m.value_length = None;
            } else {
                m.head_dim = None;
                m.key_length = f.key_length;
                m.value_length = f.value_length;
            }
        }
        m.sliding_window = f.sliding_window;
        m.native_context = f.native_context;
        if let (Some(mm), Some(fm)) = (m.moe.as_mut(), f.moe) {
            mm.experts = fm.experts;
            mm.experts_used = fm.experts_used;
        }
        if let (Some(ml), Some(fl)) = (m.mla.as_mut(), f.mla) {
            ml.kv_lora_rank = fl.kv_lora_rank;
            ml.rope_dim = fl.rope_dim;
        }
        if self.model_edits.has(Field::Parameters)
            && let Some(p) = &self.scenario.model.parameters_advertised
        {
            m.parameters = Some(Figure {
                value: p.value,
                provenance: ProvenanceLabel(Provenance::User),
                source: "typed in the explorer".into(),
                date: None,
                method: None,
            });
        }
        Some(m)
    }

    /// The scenario profile of the current settings.
    pub fn scenario_profile(
        &self,
        id: &str,
        machine_id: &str,
        model_id: &str,
    ) -> Option<ScenarioFile> {
        let base = self.scenario_file.as_ref()?;
        let s = &self.scenario;
        Some(ScenarioFile {
            id: id.to_string(),
            name: if base.id == id {
                base.name.clone()
            } else {
                format!("{} (saved from the explorer)", s.name)
            },
            model: model_id.to_string(),
            artifact: self
                .pinned
                .as_ref()
                .map_or(base.artifact.clone(), |p| p.id.clone()),
            machine: machine_id.to_string(),
            context: s.cache.context,
            sequences: s.cache.sequences,
            cache_type_k: CacheTypeLabel(s.cache.type_k),
            cache_type_v: CacheTypeLabel(s.cache.type_v),
            flash_attn: s.cache.flash_attn,
            ubatch: s.cache.ubatch,
            kv_unified: s.cache.kv_unified,
            swa_full: s.cache.swa_full,
            overhead: (s.other_bytes.value > 0).then_some(SizeValue {
                value: s.other_bytes.value,
                raw: RawNumber::Int(s.other_bytes.value as i64),
            }),
            gpu_layers: s.offload.gpu_layers,
            tensor_split: s.offload.tensor_split.clone(),
            no_kv_offload: s.offload.no_kv_offload,
            prompt_rows: s.prompt_rows,
            compute_path: s.compute_path.clone(),
            extra_files: base.extra_files.clone(),
        })
    }

    fn save(&mut self, kind: SaveKind, id: &str, overwrite: bool) {
        let Some(dir) = self.catalog.user_dir.clone() else {
            self.error("no configuration directory: set LLMBOUND_CONFIG_DIR");
            return;
        };
        let header = "# Saved from llmbound's explorer.\n";
        let result = match kind {
            SaveKind::Machine => {
                let mf = self.machine_profile(id);
                load::check_machine(id, "", &mf, None)
                    .and_then(|_| load::save(&dir, "machines", id, &mf, header, overwrite))
                    .map(|p| vec![p])
            }
            SaveKind::Scenario => self.save_scenario(&dir, id, header, overwrite),
        };
        match result {
            Ok(paths) => {
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                self.catalog = Catalog::load_with(Some(dir));
                if (kind == SaveKind::Machine || !self.machine_edits.is_empty())
                    && let Ok(mf) = self.catalog.machine(id)
                {
                    self.machine_file = mf;
                    self.machine_origin = "saved".into();
                    self.scenario.machine.id = id.to_string();
                    self.machine_edits.clear();
                }
                if kind == SaveKind::Scenario {
                    self.scenario.name = format!("{} ({id})", self.scenario.name);
                    self.base = self.scenario.clone();
                }
                self.info(format!("saved {}", names.join(", ")));
            }
            Err(crate::profile::ProfileError::Exists { path }) => {
                self.confirm = Some(Confirm {
                    question: format!("{path} exists. Overwrite? (y/n)"),
                    kind,
                    id: id.to_string(),
                });
            }
            Err(e) => self.error(format!("not saved: {e}")),
        }
    }

    fn save_scenario(
        &self,
        dir: &std::path::Path,
        id: &str,
        header: &str,
        overwrite: bool,
    ) -> Result<Vec<PathBuf>, crate::profile::ProfileError> {
        let mut paths = Vec::new();
        let mut machine_id = self.scenario.machine.id.clone();
        if !self.machine_edits.is_empty() {
            let mf = self.machine_profile(id);
            load::check_machine(id, "", &mf, None)?;
            paths.push(load::save(dir, "machines", id, &mf, header, overwrite)?);
            machine_id = id.to_string();
        }
        let mut model_id = self
            .scenario_file
            .as_ref()
            .map(|s| s.model.clone())
            .unwrap_or_default();
        if !self.model_edits.fields.is_empty()
            && let Some(m) = self.model_profile(id)
        {
            load::check_model(id, "", &m, None)?;
            paths.push(load::save(dir, "models", id, &m, header, overwrite)?);
            model_id = id.to_string();
        }
        let Some(sf) = self.scenario_profile(id, &machine_id, &model_id) else {
            return Ok(paths);
        };
        load::check_scenario(id, "", &sf, None)?;
        paths.push(load::save(dir, "scenarios", id, &sf, header, overwrite)?);
        Ok(paths)
    }

    fn update_tensors(&mut self, action: Action) {
        let inv = self.file.inventory();
        match action {
            Action::Back => {
                if self.tensors.search.is_empty() {
                    self.view = View::Main;
                } else {
                    self.tensors.set_search(String::new(), inv);
                }
            }
            Action::Search => {
                self.input = Some(Input::new(
                    InputTarget::TensorSearch,
                    "search tensors: ",
                    self.tensors.search.clone(),
                ));
            }
            other => self.tensors.update(other, inv, self.screen),
        }
    }

    /// Import a llama-bench results file and show its rows against this scenario's ceilings.
    pub fn import_bench(&mut self, path: PathBuf) {
        match crate::bench::load(&path) {
            Ok(rows) => {
                self.bench = BenchView {
                    path: Some(path),
                    rows,
                    ..BenchView::default()
                };
                self.refresh_bench();
                self.view = View::Bench;
                let n = self.bench.impossible_rows;
                if n > 0 {
                    self.error(format!(
                        "{n} decode row(s) above the highest ceiling: IMPOSSIBLE"
                    ));
                } else {
                    self.info("every decode row is at or below its highest ceiling");
                }
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    /// Re-evaluate the imported rows against the current scenario.
    fn refresh_bench(&mut self) {
        if self.bench.path.is_none() {
            return;
        }
        let r = crate::bench::evaluate(
            &self.bench.rows,
            &self.scenario,
            &crate::bench::BenchOptions {
                gguf: self
                    .file
                    .loaded
                    .as_ref()
                    .map(|f| f.path.display().to_string()),
                artifact_sha256: None,
            },
        );
        let mut out = Vec::new();
        if crate::bench::write_text(&r, &mut out).is_ok() {
            self.bench.lines = String::from_utf8_lossy(&out)
                .lines()
                .map(str::to_string)
                .collect();
        }
        self.bench.impossible_rows = r.impossible_rows;
        self.bench.scroll = self
            .bench
            .scroll
            .min(self.bench.lines.len().saturating_sub(1));
    }

    fn update_bench(&mut self, action: Action) {
        let page = self.screen.height.saturating_sub(4).max(1) as usize;
        let last = self.bench.lines.len().saturating_sub(1);
        let s = &mut self.bench.scroll;
        match action {
            Action::Back => self.view = View::Main,
            Action::Up | Action::Scroll(_, _, -1) => *s = s.saturating_sub(1),
            Action::Down | Action::Scroll(_, _, 1) => *s = (*s + 1).min(last),
            Action::PageUp => *s = s.saturating_sub(page),
            Action::PageDown => *s = (*s + page).min(last),
            Action::Home => *s = 0,
            Action::End => *s = last,
            _ => {}
        }
    }

    fn update_metadata(&mut self, action: Action) {
        match action {
            Action::Back => {
                if self.metadata.search.is_empty() {
                    self.view = View::Main;
                } else {
                    self.metadata
                        .set_search(String::new(), self.file.metadata_rows());
                }
            }
            Action::Search => {
                self.input = Some(Input::new(
                    InputTarget::MetadataSearch,
                    "search keys: ",
                    self.metadata.search.clone(),
                ));
            }
            Action::Toggle | Action::Edit => {
                if let Some(key) = self.metadata.selected_key(self.file.metadata_rows()) {
                    if self.metadata.expanded.as_deref() == Some(key.as_str()) {
                        self.metadata.collapse(self.file.metadata_rows());
                    } else {
                        self.metadata.expanded = Some(key.clone());
                        self.metadata.value_row = None;
                        let rows = self.file.metadata_rows();
                        if rows.iter().any(|r| r.key == key && r.array_len.is_some()) {
                            self.file.load_array(&key, &mut self.jobs);
                        }
                    }
                }
            }
            other => {
                self.metadata.expanded_len = self.metadata_expanded_len();
                self.metadata
                    .update(other, self.file.metadata_rows(), self.screen)
            }
        }
    }

    /// Rows of the expanded metadata value: the loaded array's length or the string's lines.
    fn metadata_expanded_len(&self) -> usize {
        let Some(k) = self.metadata.expanded.as_deref() else {
            return 0;
        };
        let rows = self.file.metadata_rows();
        match rows.iter().find(|r| r.key == k) {
            Some(r) if !r.text_lines.is_empty() => r.text_lines.len(),
            _ => match self.file.array(k) {
                Some(Ok(v)) => v.len(),
                _ => 0,
            },
        }
    }

    fn update_compare(&mut self, action: Action) {
        if let Some(id) = self.compare.pending_switch.take() {
            match action {
                Action::Yes => {
                    self.select_machine(&id);
                    self.view = View::Main;
                }
                Action::Quit => self.quit = true,
                _ => self.info("kept the current machine and its edits"),
            }
            return;
        }
        match action {
            Action::Back => self.view = View::Main,
            Action::Edit => {
                if let Some(id) = self.compare.selected_machine() {
                    if id == self.scenario.machine.id {
                        self.view = View::Main;
                    } else if self.scenario.machine != self.base.machine
                        || !self.machine_edits.is_empty()
                    {
                        // Choosing another machine drops the current one's unsaved edits.
                        self.compare.pending_switch = Some(id);
                    } else {
                        self.select_machine(&id);
                        self.view = View::Main;
                    }
                }
            }
            Action::Search => {
                self.input = Some(Input::new(
                    InputTarget::CompareFilter,
                    "filter machines: ",
                    self.compare.filter.clone(),
                ));
            }
            other => self.compare.update(other),
        }
    }

    fn update_library(&mut self, action: Action) {
        match action {
            Action::Back => self.view = View::Main,
            Action::Edit => {
                if let Some(p) = self.library.selected_path() {
                    self.view = View::Main;
                    self.open_path(p);
                }
            }
            other => {
                let page = self.screen.height.saturating_sub(6).max(1) as usize;
                if self.library.update(other, page) {
                    self.refresh_library();
                }
            }
        }
    }

    /// Evaluate every model of the library on the current scenario (scanning first if needed).
    pub fn refresh_library(&mut self) {
        if !self.library.scanned_once {
            self.library.start_scan(&self.catalog);
        }
        self.library.refresh(&self.scenario);
    }

    /// Take a finished library scan; true when one arrived.
    fn poll_library(&mut self) -> bool {
        if self.library.poll() {
            self.library.refresh(&self.scenario);
            true
        } else {
            false
        }
    }

    /// Evaluate the scenario on the current machine and every profile in the catalogue.
    pub fn refresh_compare(&mut self) {
        let mut machines = vec![self.scenario.machine.clone()];
        for e in &self.catalog.machines {
            if e.id != self.scenario.machine.id {
                machines.push(load::machine(&e.value));
            }
        }
        let rows = crate::compare::compare(&self.scenario, &machines);
        self.compare.saved = (self.catalog.machines.iter())
            .filter(|e| matches!(e.origin, Origin::File(_)))
            .map(|e| e.id.clone())
            .collect();
        // Unsaved edits only: a machine just saved, or another chosen, is not "edited".
        self.compare.current_edited = !self.machine_edits.is_empty();
        self.compare.set_rows(rows, &self.scenario.machine.id);
    }

    fn open_path(&mut self, p: PathBuf) {
        self.info(format!("opening {} …", p.display()));
        self.file.open(p, &mut self.jobs);
    }

    fn start_hash(&mut self) {
        match self
            .file
            .start_hash(&mut self.jobs, self.hash_cache.clone())
        {
            Ok(()) => self.info("hashing… (x cancels)"),
            Err(e) => self.error(e),
        }
    }

    /// Handle every finished or progressing background job; true when the screen changed.
    pub fn poll_jobs(&mut self) -> bool {
        let msgs = self.jobs.drain();
        let changed = !msgs.is_empty() | self.poll_library();
        for m in msgs {
            self.on_job(m);
        }
        changed
    }

    /// Wait (up to `timeout`) until no background job is running, handling their messages.
    pub fn wait_for_jobs(&mut self, timeout: std::time::Duration) {
        let start = std::time::Instant::now();
        while self.busy() && start.elapsed() < timeout {
            if self.poll_library() {
                continue;
            }
            for m in self.jobs.wait(std::time::Duration::from_millis(20)) {
                self.on_job(m);
            }
        }
        self.poll_jobs();
    }

    /// True while a background job runs (the event loop redraws more often).
    pub fn busy(&self) -> bool {
        self.jobs.running() > 0 || self.library.scanning()
    }

    fn on_job(&mut self, m: JobMessage) {
        match m {
            JobMessage::Opened(result) => match *result {
                Ok(loaded) => self.apply_loaded(loaded),
                Err(e) => self.error(e),
            },
            JobMessage::Hash(h) => {
                if let Some(text) = self.file.on_hash(h, self.pinned.as_ref()) {
                    self.message = Some(text);
                }
            }
            JobMessage::Array(key, result) => self.file.on_array(key, result),
        }
    }

    /// Use an opened file: its model shape, bytes and inventory replace the profile's.
    pub fn apply_loaded(&mut self, loaded: file::Loaded) {
        let (shape, figures) = match &loaded.model {
            Ok(m) => m.clone(),
            Err(e) => {
                // Browse the file; the bounds keep the scenario they had.
                let msg = format!(
                    "opened {}: tensors (t) and metadata (m) are shown, but the bounds keep the previous model: {e}",
                    loaded.file_name
                );
                self.show_file(loaded);
                self.error(msg);
                return;
            }
        };
        let u = self.undo_point();
        let mut shape = shape;
        shape.warnings.extend(loaded.warnings.iter().cloned());
        // Keep the advertised parameter count of a matching model profile (same artifact size).
        let matching = file::matching_profile(&self.catalog, loaded.total_bytes);
        shape.parameters_advertised = matching.as_ref().and_then(|(m, _)| {
            m.parameters
                .as_ref()
                .map(|p| crate::core::units::Sourced::new(p.value, p.provenance.0, p.citation()))
        });
        self.scenario.name = format!("{} on {}", loaded.file_name, self.scenario.machine.name);
        self.scenario.model = shape;
        self.scenario.weights = loaded.weights.clone();
        self.scenario.inventory = Some(loaded.core_inventory.clone());
        self.figures = figures;
        self.model_edits = ModelEdits::default();
        if self.recompute_or_undo(Some(u)) {
            self.model_base = Provenance::File;
            self.scenario_file = None;
            self.model_file = None;
            self.pinned = matching.map(|(_, a)| PinnedArtifact {
                id: a.id.clone(),
                file: a.file.clone(),
                bytes: a.bytes,
                sha256: a.sha256.clone(),
                quantization: a.quantization.clone(),
            });
            self.base = self.scenario.clone();
            let name = loaded.file_name.clone();
            let auto_hash = self.pinned.as_ref().is_some_and(|p| p.sha256.is_some())
                && !crate::remote::is_remote(&loaded.path);
            self.show_file(loaded);
            self.info(format!("opened {name}"));
            if auto_hash {
                self.start_hash();
            }
        } else {
            self.file.open_failed();
        }
    }

    /// Make a read file the one the views browse.
    fn show_file(&mut self, loaded: file::Loaded) {
        self.tensors = TensorView::default();
        self.metadata = MetadataView::default();
        self.file.set_loaded(loaded);
        self.tensors.rebuild(self.file.inventory());
        self.metadata.rebuild(self.file.metadata_rows());
    }

    /// Run a job synchronously (tests): start it and wait for it.
    pub fn run_now(&mut self, job: Job) {
        self.jobs.spawn(job);
        self.wait_for_jobs(std::time::Duration::from_secs(30));
    }
}

/// Complete a GGUF path: the common prefix of the matching files and folders, and a note
/// listing them when there are several (or saying none matches).
pub fn complete_path(text: &str) -> (String, Option<String>) {
    let (t, names) = complete_path_in(text, &[".gguf"]);
    let note = match names.len() {
        0 if std::fs::read_dir(path_dir(text)).is_err() => {
            Some(format!("no folder \"{}\"", path_dir(text)))
        }
        0 => Some("no GGUF file or folder matches".into()),
        1 => None,
        n => {
            let shown: Vec<&str> = names.iter().take(8).map(|s| s.as_str()).collect();
            let more = if n > 8 {
                format!(" … {} more", n - 8)
            } else {
                String::new()
            };
            Some(format!("{}{more}", shown.join("  ")))
        }
    };
    (t, note)
}

fn path_dir(text: &str) -> &str {
    match text.rfind('/') {
        Some(i) => &text[..=i],
        None => ".",
    }
}

/// Complete a path to the common prefix of the files ending in one of `exts` and folders
/// that start with it; returns the new text and the names that matched.
pub fn complete_path_in(text: &str, exts: &[&str]) -> (String, Vec<String>) {
    let (dir, prefix) = match text.rfind('/') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    let read_from = if dir.is_empty() { "." } else { dir };
    let Ok(entries) = std::fs::read_dir(read_from) else {
        return (text.to_string(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            (name.starts_with(prefix)
                && (is_dir || exts.iter().any(|x| name.ends_with(x)))
                && !name.starts_with('.'))
            .then(|| if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    match names.as_slice() {
        [] => (text.to_string(), Vec::new()),
        [one] => (format!("{dir}{one}"), names),
        many => {
            let mut common = many[0].clone();
            for n in many {
                while !n.starts_with(&common) {
                    common.pop();
                }
            }
            (format!("{dir}{common}"), names)
        }
    }
}

/// Raw figures recovered from a model shape (for a scenario without a model profile).
fn figures_of(m: &ModelShape) -> ArchFigures {
    use crate::core::model::PerLayer;
    // The full-attention head sizes (sliding layers may have their own, `keys`).
    let first = m
        .layers
        .iter()
        .find(|l| !matches!(l.attention, crate::core::model::Attention::Sliding { .. }))
        .or(m.layers.first());
    ArchFigures {
        architecture: m.architecture.clone(),
        layers: m.layer_count(),
        head_count: PerLayer::List(m.layers.iter().map(|l| l.head_count).collect()),
        head_count_kv: PerLayer::List(m.layers.iter().map(|l| l.head_count_kv).collect()),
        key_length: first.map(|l| l.key_length),
        value_length: first.map(|l| l.value_length),
        embedding_length: m.embedding_length,
        vocab_size: m.vocab_size,
        native_context: m.native_context,
        sliding_window: m.sliding_window(),
        sliding_pattern: Some(
            m.layers
                .iter()
                .map(|l| matches!(l.attention, crate::core::model::Attention::Sliding { .. }))
                .collect(),
        ),
        chunk_size: None,
        mla: m.mla,
        moe: m.moe,
        ssm: m.ssm,
        recurrent_layers: None,
        tied_embeddings: m.tied_embeddings,
        keys: m.keys.clone(),
    }
}
