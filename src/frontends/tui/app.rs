//! The explorer's state: what the screens show and where the user is. The scenario belongs to
//! the workspace: `App::update(Action)` turns a key into one workspace call (an `Edit`, an
//! open, a switch, a save) and takes its report; background work (opening a file, hashing)
//! reports through `App::poll_jobs`. `App::new` needs no terminal.
//! Depends on core, profile, build, compare and workspace; never draws.

mod copy;
mod editing;
mod input;
mod pick;
mod route;
mod saving;
mod state;

use super::action::Action;
use super::fields::{self, Field, Pane, Row};
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

pub use super::views::bench::BenchView;
pub use crate::workspace::{PinnedArtifact, SaveKind, Switch};
pub use copy::osc52;
pub use state::{Claim, Confirm, Input, InputTarget, Message, Modal, View};

/// The explorer: UI state only. The scenario, its report and everything they came from are
/// the workspace's (`crate::workspace::Workspace`); every change goes through it. `App`
/// routes actions: it holds the focus, the current view, the modal and the message line;
/// each full-screen view owns its state and its `update`; panes and views read through the
/// accessors below.
pub struct App {
    // Fields are private to the app; the few the background jobs (`tui::jobs`) take their
    // results into are visible to `tui` only. Everything else reads the accessors.
    /// The scenario, its report and the profiles it came from.
    pub(in crate::frontends::tui) ws: Workspace,
    /// Chart coordinates of the report.
    plots: Plots,
    /// Why the last model edit was refused (shown in the Model pane until the next valid one).
    model_refusal: Option<String>,
    /// Focused pane.
    focus: Pane,
    /// Selected field of each pane.
    selected: Vec<(Pane, Field)>,
    /// Current view.
    view: View,
    /// What waits for the user's answer: help, a line being typed, a y/n.
    modal: Modal,
    /// Bottom-line message.
    pub(in crate::frontends::tui) message: Option<Message>,
    /// Every message shown this session, oldest first (the `@` log).
    log: Vec<Message>,
    /// Claimed rate and verdict.
    claim: Option<Claim>,
    /// The opened GGUF file (and its loading / hashing state).
    pub(in crate::frontends::tui) file: FileState,
    /// The tensor view.
    pub(in crate::frontends::tui) tensors: TensorView,
    /// The metadata view.
    pub(in crate::frontends::tui) metadata: MetadataView,
    /// The compare view.
    compare: CompareView,
    /// The library view.
    pub(in crate::frontends::tui) library: super::views::library::LibraryView,
    /// The llama-bench results view.
    bench: BenchView,
    devices: super::views::devices::DevicesView,
    /// Keys.
    keymap: Keymap,
    /// Styles.
    theme: Theme,
    /// Terminal size (for mouse hit-testing).
    screen: Rect,
    /// Rows the Bounds pane's lower text is scrolled by (↑↓ with the pane focused).
    bounds_scroll: u16,
    /// The help overlay's last useful scroll row, set when it is drawn.
    help_scroll_end: std::cell::Cell<usize>,
    /// The Bounds pane's last useful scroll position, set when it is drawn.
    bounds_scroll_end: std::cell::Cell<u16>,
    /// Rows the Claim pane is scrolled by (↑↓ with the pane focused).
    claim_scroll: u16,
    /// The Claim pane's last useful scroll position, set when it is drawn.
    claim_scroll_end: std::cell::Cell<u16>,
    /// Where SHA-256 digests are remembered (None: never cached).
    pub(in crate::frontends::tui) hash_cache: Option<PathBuf>,
    /// Hash a local file on opening when its size matches a pinned artifact
    /// (`LLMBOUND_AUTO_HASH`, on unless set to `off`).
    pub(in crate::frontends::tui) auto_hash: bool,
    /// Set by `q`.
    quit: bool,
    /// Accepted lines of every prompt (↑↓ recall them).
    history: super::prompt::History,
    pub(in crate::frontends::tui) jobs: Jobs,
    /// Text waiting to be sent to the terminal's clipboard (OSC 52) by the event loop.
    clipboard: Option<String>,
    /// The terminal takes OSC 52 (false: `y` shows the line instead of claiming a copy).
    osc52: bool,
    /// Edits to make once the next file is open (the start-up `--runtime` and MLX-LM flags,
    /// which need the model), each with its flag.
    pub(in crate::frontends::tui) after_open: Vec<(&'static str, Edit)>,
}

impl App {
    /// Edits to make once the next file is open, as the start-up `--runtime` and MLX-LM flags
    /// are (they need the model, which is opened on a worker); a refused one is the status
    /// message, naming its flag.
    pub fn apply_after_open(&mut self, edits: Vec<(&'static str, Edit)>) {
        self.after_open = edits;
    }

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
            modal: Modal::None,
            message: None,
            log: Vec::new(),
            claim: None,
            file: FileState::default(),
            tensors: TensorView::default(),
            metadata: MetadataView::default(),
            compare: CompareView::default(),
            library: Default::default(),
            bench: BenchView::default(),
            devices: super::views::devices::DevicesView::default(),
            keymap: Keymap::builtin(),
            theme: Theme::from_env(),
            screen: Rect::new(0, 0, layout::FULL_WIDTH, layout::FULL_HEIGHT),
            bounds_scroll: 0,
            help_scroll_end: std::cell::Cell::new(usize::MAX),
            bounds_scroll_end: std::cell::Cell::new(u16::MAX),
            claim_scroll: 0,
            claim_scroll_end: std::cell::Cell::new(u16::MAX),
            hash_cache: super::adapter::default_hash_cache(),
            auto_hash: true,
            quit: false,
            history: Default::default(),
            jobs: Jobs::default(),
            clipboard: None,
            osc52: copy::terminal_copies(),
            after_open: Vec::new(),
        };
        match auto_hash_setting(std::env::var("LLMBOUND_AUTO_HASH").ok().as_deref()) {
            Ok(on) => app.auto_hash = on,
            Err(e) => app.error(e),
        }
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

    /// Chart coordinates of the report.
    pub fn plots(&self) -> &Plots {
        &self.plots
    }
    /// Why the last model edit was refused (until the next valid one).
    pub fn model_refusal(&self) -> Option<&str> {
        self.model_refusal.as_deref()
    }
    /// The focused pane.
    pub fn focus(&self) -> Pane {
        self.focus
    }
    /// The current view.
    pub fn view(&self) -> View {
        self.view
    }
    /// What waits for the user's answer.
    pub fn modal(&self) -> &Modal {
        &self.modal
    }
    /// The line being typed, if any.
    pub fn input(&self) -> Option<&Input> {
        match &self.modal {
            Modal::Input(i) => Some(i),
            _ => None,
        }
    }
    /// The y/n before an overwrite, if asked.
    pub fn confirm(&self) -> Option<&Confirm> {
        match &self.modal {
            Modal::Confirm(c) => Some(c),
            _ => None,
        }
    }
    /// A profile switch waiting for y/n, if any (from a picker or the compare view).
    pub fn pending_switch(&self) -> Option<&Switch> {
        match &self.modal {
            Modal::Switch { to, .. } => Some(to),
            _ => None,
        }
    }
    /// The machine chosen in the compare view, waiting for y/n.
    pub fn compare_switch(&self) -> Option<&str> {
        match &self.modal {
            Modal::Switch {
                to: Switch::Machine(id),
                compare: true,
            } => Some(id),
            _ => None,
        }
    }
    /// The help overlay is shown.
    pub fn help_shown(&self) -> bool {
        matches!(self.modal, Modal::Help(_))
    }
    /// The bottom-line message.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_ref()
    }
    /// Every message shown this session, oldest first (the current one last).
    pub fn log(&self) -> Vec<Message> {
        let mut v = self.log.clone();
        if let Some(m) = &self.message
            && v.last() != Some(m)
        {
            v.push(m.clone());
        }
        v
    }
    /// The claimed rate and its verdict.
    pub fn claim(&self) -> Option<&Claim> {
        self.claim.as_ref()
    }
    /// The opened GGUF file and its loading / hashing state.
    pub fn file(&self) -> &FileState {
        &self.file
    }
    /// The tensor view.
    pub fn tensors(&self) -> &TensorView {
        &self.tensors
    }
    /// The metadata view.
    pub fn metadata(&self) -> &MetadataView {
        &self.metadata
    }
    /// The compare view.
    pub fn compare(&self) -> &CompareView {
        &self.compare
    }
    /// The library view.
    pub fn library(&self) -> &super::views::library::LibraryView {
        &self.library
    }
    /// The Devices view's state.
    pub fn devices(&self) -> &super::views::devices::DevicesView {
        &self.devices
    }

    /// The Devices view's page at the current screen size (its body: all but the status row).
    fn devices_page(&self) -> super::panes::scroll::Page {
        let body = Rect::new(
            0,
            0,
            self.screen.width,
            self.screen.height.saturating_sub(1),
        );
        super::views::devices::page(
            &self.ws.report().plan,
            body,
            &self.theme,
            self.devices.scroll,
        )
    }

    fn update_devices(&mut self, action: Action) {
        use super::views::devices;
        let pg = self.devices_page();
        let page = pg.lines.len().max(1) as isize;
        match action {
            Action::Up => self.devices.scroll_by(-1, pg.last),
            Action::Down => self.devices.scroll_by(1, pg.last),
            Action::PageUp => self.devices.scroll_by(-page, pg.last),
            Action::PageDown => self.devices.scroll_by(page, pg.last),
            Action::Home => self.devices.scroll = 0,
            Action::End => self.devices.scroll = pg.last,
            Action::Back => self.view = View::Main,
            Action::ApplyPlan => match devices::fitted_edits(&self.ws.report().plan) {
                Some(edits) => {
                    let mut ok = true;
                    for e in edits {
                        ok = ok && self.edit(e);
                    }
                    if ok {
                        self.info("fitted plan applied: -fit off with its -ngl, -ts and -ot");
                    }
                }
                None => self.info("no fitted plan to apply (-fit off, or -fit gave up)"),
            },
            _ => {}
        }
    }

    /// The llama-bench results view.
    pub fn bench(&self) -> &BenchView {
        &self.bench
    }
    /// The keys.
    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }
    /// The styles.
    pub fn theme(&self) -> Theme {
        self.theme
    }
    /// The terminal size last seen.
    pub fn screen(&self) -> Rect {
        self.screen
    }
    /// Rows the Bounds pane's lower text is scrolled by.
    pub fn bounds_scroll(&self) -> u16 {
        self.bounds_scroll
    }
    /// Rows the Claim pane is scrolled by.
    pub fn claim_scroll(&self) -> u16 {
        self.claim_scroll
    }
    /// Where the help overlay's drawing says its scrolling ends.
    pub(crate) fn help_scroll_end(&self) -> &std::cell::Cell<usize> {
        &self.help_scroll_end
    }
    /// Where the Bounds pane's drawing says its scrolling ends.
    pub(crate) fn bounds_scroll_end(&self) -> &std::cell::Cell<u16> {
        &self.bounds_scroll_end
    }
    /// Where the Claim pane's drawing says its scrolling ends.
    pub(crate) fn claim_scroll_end(&self) -> &std::cell::Cell<u16> {
        &self.claim_scroll_end
    }
    /// `q` was pressed.
    pub fn quit_requested(&self) -> bool {
        self.quit
    }
    /// Use these styles (colour or not).
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }
    /// Hash a local file on opening when its size matches a pinned artifact (the default), or
    /// only on request (Enter on the Artifact pane).
    pub fn set_auto_hash(&mut self, on: bool) {
        self.auto_hash = on;
    }
    /// Remember SHA-256 digests here (`None`: never cache them).
    pub fn set_hash_cache(&mut self, dir: Option<PathBuf>) {
        self.hash_cache = dir;
    }
    /// Scan these stores for the library view instead of the platform's own.
    pub fn set_library_roots(&mut self, roots: Vec<(crate::library::Store, PathBuf)>) {
        self.library.roots = Some(roots);
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
            View::Devices => Context::Devices,
        }
    }

    /// The title: the scenario's name, or what it is now once edited ("edited" while an edit
    /// is unsaved; a machine saved under another id is named, not the scenario's).
    pub fn title(&self) -> String {
        let s = self.ws.scenario();
        let changed = self.ws.is_changed();
        let own_machine = (self.ws.scenario_file()).is_none_or(|f| f.machine == s.machine.id);
        if !changed && own_machine {
            return s.name.clone();
        }
        if s.runtime == crate::core::mlx::Runtime::MlxLm {
            // MLX-LM's figures: the model and machine by name (llama.cpp's cache types do
            // not apply).
            let n = s.cache.context;
            return format!(
                "{}{} · {} token{}",
                if changed { "edited · " } else { "" },
                s.name,
                units::fmt_tokens(n),
                if n == 1 { "" } else { "s" },
            );
        }
        // "edited" first, so a narrow title cuts the machine id, never the word that says the
        // figures are no longer the saved scenario's.
        let n = s.cache.context;
        let seqs = s.cache.sequences;
        format!(
            "{}{} · {} token{} × {} sequence{} · {}/{} · {}",
            if changed { "edited · " } else { "" },
            s.model.name,
            units::fmt_tokens(n),
            if n == 1 { "" } else { "s" },
            seqs,
            if seqs == 1 { "" } else { "s" },
            s.cache.type_k,
            s.cache.type_v,
            s.machine.id,
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
        matches!(self.modal, Modal::Input(_))
    }

    /// Rows of a pane, as shown.
    pub fn rows(&self, pane: Pane) -> Vec<Row> {
        match pane {
            Pane::Model => {
                let mut rows = fields::pane_rows(&self.ws, pane);
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
            Pane::Cache => fields::pane_rows(&self.ws, pane),
            Pane::Machine => {
                let mut rows = fields::pane_rows(&self.ws, pane);
                // The profile's notes last, wrapped to the pane (↓ reaches them).
                let id = &self.ws.scenario().machine.id;
                let width = layout::main_layout(self.screen, Pane::Machine, self.layout_hints())
                    .and_then(|l| l.panes.iter().find(|(p, _)| *p == Pane::Machine).copied())
                    .map_or(36, |(_, r)| layout::inner(r).width as usize);
                if let Some(m) = (self.ws.catalog().machines.iter()).find(|e| e.id == *id) {
                    rows.extend(super::panes::inputs::notes_rows(&m.value, width));
                }
                rows
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

    /// Keep the message shown in the log before it is replaced.
    fn remember_message(&mut self) {
        if let Some(m) = &self.message
            && self.log.last() != Some(m)
        {
            self.log.push(m.clone());
            if self.log.len() > super::views::messages::KEEP {
                self.log.remove(0);
            }
        }
    }

    /// Lines of the log at the current width.
    fn log_lines(&self) -> usize {
        let w = super::views::messages::text_width(self.screen);
        super::views::messages::wrapped(&self.log, w).len()
    }

    /// Keys while the log is open: scroll it, or close it.
    fn update_log(&mut self, scroll: usize, action: Action) {
        use super::views::messages::{first_line, page};
        if matches!(action, Action::Messages | Action::Back) {
            return;
        }
        let page = page(self.screen);
        let total = self.log_lines();
        let at = first_line(total, page, scroll);
        let last = total.saturating_sub(page);
        self.modal = Modal::Log(match action {
            Action::Quit => {
                self.quit = true;
                at
            }
            Action::Resize(w, h) => {
                self.screen = Rect::new(0, 0, w, h);
                at
            }
            Action::Up | Action::Scroll(_, _, -1) => at.saturating_sub(1),
            Action::Down | Action::Scroll(_, _, 1) => (at + 1).min(last),
            Action::PageUp => at.saturating_sub(page),
            Action::PageDown => (at + page).min(last),
            Action::Home => 0,
            Action::End => last,
            _ => at,
        });
    }

    pub(crate) fn error(&mut self, text: impl Into<String>) {
        self.remember_message();
        self.message = Some(Message {
            text: text.into(),
            error: true,
        });
    }

    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.remember_message();
        self.message = Some(Message {
            text: text.into(),
            error: false,
        });
    }

    /// Apply one action. Every change to the scenario ends with one `recompute()`.
    pub fn update(&mut self, action: Action) {
        self.remember_message();
        if !matches!(action, Action::Resize(..) | Action::Scroll(..)) {
            self.message = None;
        }
        match std::mem::replace(&mut self.modal, Modal::None) {
            Modal::None => {}
            Modal::Confirm(c) => {
                match action {
                    Action::Yes => self.save(c.kind, &c.id, true),
                    Action::No | Action::Back => self.info("not saved"),
                    other => {
                        if other == Action::Quit {
                            self.quit = true;
                        }
                        if let Action::Resize(w, h) = other {
                            self.screen = Rect::new(0, 0, w, h);
                        }
                        self.modal = Modal::Confirm(c);
                    }
                }
                return;
            }
            Modal::Switch { to, compare } => {
                match action {
                    Action::Yes => {
                        self.switch_to(to);
                        if compare {
                            self.view = View::Main;
                        }
                    }
                    Action::Quit => self.quit = true,
                    Action::Resize(w, h) => {
                        self.screen = Rect::new(0, 0, w, h);
                        self.modal = Modal::Switch { to, compare };
                    }
                    _ if compare => self.info("kept the current machine and its edits"),
                    _ => self.info("kept the current profile and its edits"),
                }
                return;
            }
            Modal::Input(input) => {
                self.update_input(input, action);
                return;
            }
            Modal::Log(scroll) => {
                self.update_log(scroll, action);
                return;
            }
            Modal::Help(at) => {
                match action {
                    Action::Help | Action::Back => {}
                    other => {
                        if other == Action::Quit {
                            self.quit = true;
                        }
                        if let Action::Resize(w, h) = other {
                            self.screen = Rect::new(0, 0, w, h);
                        }
                        // The overlay scrolls; the drawing says where it ends.
                        let end = self.help_scroll_end.get();
                        let to = match other {
                            Action::Up => at.saturating_sub(1),
                            Action::Down => at.saturating_add(1),
                            Action::PageUp => at.saturating_sub(10),
                            Action::PageDown => at.saturating_add(10),
                            Action::Home => 0,
                            Action::End => end,
                            _ => at,
                        };
                        self.modal = Modal::Help(to.min(end));
                    }
                }
                return;
            }
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.modal = Modal::Help(0),
            Action::Messages => {
                let lines = self.log_lines();
                self.modal = Modal::Log(lines);
            }
            Action::Resize(w, h) => self.screen = Rect::new(0, 0, w, h),
            Action::HalveContext | Action::DoubleContext => {
                let n = fields::halve_or_double_context(
                    self.ws.scenario().cache.context,
                    action == Action::DoubleContext,
                );
                self.edit(Edit::Context(n));
            }
            Action::MaxGpuLayers => self.jump_to_max_gpu_layers(),
            Action::MaxContext => self.jump_to_max_context(),
            Action::PickModel if self.view == View::Main => self.begin_pick_model(),
            Action::PickScenario if self.view == View::Main => self.begin_pick_scenario(),
            Action::Tensors => self.open_view(View::Tensors),
            Action::Metadata => self.open_view(View::Metadata),
            Action::Compare => self.open_view(View::Compare),
            Action::Library => self.open_view(View::Library),
            Action::Devices => self.open_view(View::Devices),
            Action::Bench => {
                self.modal = Modal::Input(Input::new(
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
                self.modal = Modal::Input(Input::new(
                    InputTarget::OpenPath,
                    "open (GGUF, safetensors, MLX dir, URL, owner/repo, ollama:): ",
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
            Action::CopyLaunch => self.copy_launch(),
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
                View::Devices => self.update_devices(other),
            },
        }
    }

    pub(crate) fn open_view(&mut self, v: View) {
        self.view = v;
        if v == View::Compare {
            self.refresh_compare();
            // The cursor starts on the machine in use.
            self.compare.select_current();
        }
        if v == View::Library {
            // What an earlier added folder brought is old news when the view opens again.
            if !self.library.scanning() {
                self.library.note = None;
            }
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
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Home
            | Action::End
                if matches!(self.focus, Pane::Bounds | Pane::Claim) =>
            {
                // Whole blocks (`panes::scroll`), stopping where the drawing said the last
                // block is in view.
                let (at, end) = if self.focus == Pane::Bounds {
                    (self.bounds_scroll, self.bounds_scroll_end.get())
                } else {
                    (self.claim_scroll, self.claim_scroll_end.get())
                };
                let to = match action {
                    Action::Up => at.saturating_sub(1),
                    Action::Down => at.saturating_add(1),
                    Action::PageUp => at.saturating_sub(5),
                    Action::PageDown => at.saturating_add(5),
                    Action::Home => 0,
                    _ => end,
                }
                .min(end);
                if self.focus == Pane::Bounds {
                    self.bounds_scroll = to;
                } else {
                    self.claim_scroll = to;
                }
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

/// `LLMBOUND_AUTO_HASH`: unset, `on`, `1`, `true` hash a file whose size matches a pinned
/// artifact as it opens; `off`, `0`, `false` leave it to Enter on the Artifact pane. Any other
/// value is an error naming the variable (hashing stays on), never a silent default.
pub fn auto_hash_setting(v: Option<&str>) -> Result<bool, String> {
    match v.map(|x| x.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "on" | "1" | "true" | "yes") => Ok(true),
        Some("off" | "0" | "false" | "no") => Ok(false),
        Some(_) => Err(format!(
            "LLMBOUND_AUTO_HASH=\"{}\" is neither on nor off; hashing on open stays on",
            v.unwrap_or_default()
        )),
    }
}
