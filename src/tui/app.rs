//! The explorer's state: what the screens show and where the user is. The scenario belongs to
//! the workspace: `App::update(Action)` turns a key into one workspace call (an `Edit`, an
//! open, a switch, a save) and takes its report; background work (opening a file, hashing)
//! reports through `App::poll_jobs`. `App::new` needs no terminal.
//! Depends on core, profile, build, compare and workspace; never draws.

mod editing;
mod input;
mod pick;
mod route;
mod saving;
mod state;

use super::action::Action;
use super::fields::{self, Field, ModelEdits, Pane, Row};
use super::file::{FileState, Jobs};
use super::keymap::{Context, Keymap};
use super::layout;
use super::plot::Plots;
use super::theme::Theme;
use super::views::compare::CompareView;
use super::views::metadata::MetadataView;
use super::views::tensors::TensorView;
use crate::build::ScenarioOptions;
use crate::core::edit::Edit;
use crate::core::units;
use crate::core::{ClaimCheck, check_claim};
use crate::profile::{Catalog, Origin, load};
pub use crate::workspace::StartError;
use crate::workspace::Workspace;
use ratatui::layout::Rect;
use std::path::PathBuf;

pub use crate::workspace::{PinnedArtifact, SaveKind, Switch};
pub use state::{BenchView, Claim, Confirm, Input, InputTarget, Message, View};

/// The explorer: UI state only. The scenario, its report and everything they came from are
/// the workspace's (`crate::workspace::Workspace`); every change goes through it.
pub struct App {
    /// The scenario, its report and the profiles it came from.
    pub(crate) ws: Workspace,
    /// Chart coordinates of the report.
    pub plots: Plots,
    /// Why the last model edit was refused (shown in the Model pane until the next valid one).
    pub model_refusal: Option<String>,
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
    /// A profile switch that would drop unsaved edits, waiting for y/n.
    pub pending: Option<Switch>,
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
    pub(crate) jobs: Jobs,
}

impl App {
    /// The explorer on the scenario the options describe. Needs no terminal.
    pub fn new(catalog: Catalog, opts: &ScenarioOptions) -> Result<App, StartError> {
        let ws = Workspace::new(catalog, opts)?;
        let plots = Plots::from_report(ws.report());
        let mut app = App {
            ws,
            plots,
            model_refusal: None,
            focus: Pane::Cache,
            selected: Vec::new(),
            view: View::Main,
            help: false,
            input: None,
            confirm: None,
            pending: None,
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
        let errors = &app.ws.catalog().errors;
        if !errors.is_empty() {
            let n = errors.len();
            app.message = Some(Message {
                text: format!(
                    "{n} profile{} skipped: {}",
                    if n == 1 { "" } else { "s" },
                    errors[0]
                ),
                error: true,
            });
        }
        Ok(app)
    }

    /// The workspace: the scenario, its report and the profiles it came from (read-only; the
    /// explorer changes it through its actions).
    pub fn ws(&self) -> &Workspace {
        &self.ws
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
        let s = self.ws.scenario();
        if !self.ws.is_changed() {
            return s.name.clone();
        }
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
                let mut rows = fields::cache_rows(self.ws.scenario());
                fields::tag_max_gpu_layers(&mut rows, self.ws.max_gpu_layers());
                rows
            }
            Pane::Model => {
                let mut rows = fields::model_rows(
                    self.ws.scenario(),
                    self.ws.figures(),
                    &ModelEdits::of(&self.ws.model_edits()),
                    self.ws.model_base(),
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
            Pane::Machine => fields::machine_rows(
                self.ws.scenario(),
                self.ws.machine_origin(),
                &fields::fields_of(&self.ws.machine_edits()),
            ),
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

    pub(crate) fn select(&mut self, pane: Pane, f: Field) {
        self.selected.retain(|(p, _)| *p != pane);
        self.selected.push((pane, f));
    }

    pub(crate) fn move_selection(&mut self, dir: i32) {
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

    pub(crate) fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            error: true,
        });
    }

    pub(crate) fn info(&mut self, text: impl Into<String>) {
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
        if let Some(sw) = self.pending.take() {
            match action {
                Action::Yes => self.switch_to(sw),
                Action::Quit => self.quit = true,
                Action::Resize(w, h) => {
                    self.screen = Rect::new(0, 0, w, h);
                    self.pending = Some(sw);
                }
                _ => self.info("kept the current profile and its edits"),
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
                let n = fields::halve_or_double_context(
                    self.ws.scenario().cache.context,
                    action == Action::DoubleContext,
                );
                self.edit(Edit::Context(n));
            }
            Action::MaxGpuLayers => self.jump_to_max_gpu_layers(),
            Action::PickModel if self.view == View::Main => self.begin_pick_model(),
            Action::PickScenario if self.view == View::Main => self.begin_pick_scenario(),
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

    pub(crate) fn open_view(&mut self, v: View) {
        self.view = v;
        if v == View::Compare {
            self.refresh_compare();
        }
        if v == View::Library {
            self.refresh_library();
        }
    }

    pub(crate) fn update_main(&mut self, action: Action) {
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

    pub(crate) fn click(&mut self, x: u16, y: u16) {
        let Some(l) = layout::main_layout(self.screen, self.focus, self.layout_hints()) else {
            return;
        };
        if let Some(tabs) = l.tabs
            && y == tabs.y
            && x >= tabs.x
            && x < tabs.right()
        {
            if let Some(p) = super::tabs::at(tabs, x, y) {
                self.focus = p;
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
}

pub use super::complete::{complete_path, complete_path_in};
