//! Actions routed to the full-screen views (tensors, metadata, compare, bench, library) and
//! the views' refresh after a recompute. Part of `App`.

use super::*;

impl App {
    pub(crate) fn update_tensors(&mut self, action: Action) {
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
                self.modal = Modal::Input(Input::new(
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
                let headline = self.bench.headline.clone();
                if self.bench.impossible_rows > 0 {
                    self.error(headline);
                } else {
                    self.info(headline);
                }
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    /// Re-evaluate the imported rows against the current scenario.
    pub(crate) fn refresh_bench(&mut self) {
        if self.bench.path.is_none() {
            return;
        }
        let r = crate::bench::evaluate(
            &self.bench.rows,
            self.ws.scenario(),
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
        self.bench.headline = crate::bench::headline(&r);
        self.bench.all_within = r.all_within();
        self.bench.scroll = self
            .bench
            .scroll
            .min(self.bench.lines.len().saturating_sub(1));
    }

    pub(crate) fn update_bench(&mut self, action: Action) {
        match action {
            Action::Back => self.view = View::Main,
            other => {
                let page = self.screen.height.saturating_sub(4).max(1) as usize;
                self.bench.update(other, page);
            }
        }
    }

    pub(crate) fn update_metadata(&mut self, action: Action) {
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
                self.modal = Modal::Input(Input::new(
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
    pub(crate) fn metadata_expanded_len(&self) -> usize {
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

    pub(crate) fn update_compare(&mut self, action: Action) {
        match action {
            // Esc clears the filter first, then leaves.
            Action::Back if !self.compare.filter.is_empty() => {
                self.compare.set_filter(String::new());
                self.compare.select_current();
            }
            Action::Back => self.view = View::Main,
            Action::Edit => {
                if let Some(id) = self.compare.selected_machine() {
                    if id == self.ws.scenario().machine.id {
                        self.view = View::Main;
                    } else if self.ws.dropped_by(&Switch::Machine(id.clone())).is_some() {
                        // Choosing another machine drops the current one's unsaved edits.
                        self.modal = Modal::Switch {
                            to: Switch::Machine(id),
                            compare: true,
                        };
                    } else {
                        self.select_machine(&id);
                        self.view = View::Main;
                    }
                }
            }
            Action::Search => {
                self.modal = Modal::Input(Input::new(
                    InputTarget::CompareFilter,
                    "filter machines: ",
                    self.compare.filter.clone(),
                ));
            }
            other => self.compare.update(other),
        }
    }

    pub(crate) fn update_library(&mut self, action: Action) {
        match action {
            Action::Back => self.view = View::Main,
            Action::AddFolder => {
                self.modal = Modal::Input(Input::new(
                    InputTarget::LibraryDir,
                    "add a folder of GGUF models (Tab completes): ",
                    String::new(),
                ));
            }
            // An error row: the whole reason, in the message log over the library.
            Action::Edit if self.library.selected_error().is_some() => {
                if let Some(why) = self.library.selected_error() {
                    self.error(why);
                    self.modal = Modal::Log(self.log_lines());
                }
            }
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
            self.library.start_scan(self.ws.catalog());
        }
        self.library.refresh(self.ws.scenario());
    }

    /// Evaluate the scenario on the current machine and every profile in the catalogue.
    pub fn refresh_compare(&mut self) {
        let mut machines = vec![self.ws.scenario().machine.clone()];
        for e in &self.ws.catalog().machines {
            if e.id != self.ws.scenario().machine.id {
                machines.push(load::machine(&e.value));
            }
        }
        let rows = self.ws.compare(&machines);
        self.compare.saved = (self.ws.catalog().machines.iter())
            .filter(|e| matches!(e.origin, Origin::File(_)))
            .map(|e| e.id.clone())
            .collect();
        // Unsaved edits only: a machine just saved, or another chosen, is not "edited".
        self.compare.current_edited = !self.ws.machine_edits().is_empty();
        let own = crate::compare::at_own_contexts(&rows, self.ws.scenario());
        self.compare
            .set_rows(rows, &self.ws.scenario().machine.id, own);
    }
}
