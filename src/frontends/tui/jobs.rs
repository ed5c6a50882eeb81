//! The explorer's background work as the app sees it: opening a file, hashing it, loading a
//! metadata array, scanning the library. The jobs run on worker threads (`tui::file::Jobs`,
//! `views::library`); this module starts them and takes their messages. Never draws.

use super::app::App;
use super::file::{self, Job, JobMessage};
use super::views::metadata::MetadataView;
use super::views::tensors::TensorView;
use std::path::PathBuf;

impl App {
    /// Take a finished library scan; true when one arrived.
    pub(crate) fn poll_library(&mut self) -> bool {
        if self.library.poll() {
            self.library.refresh(self.ws.scenario());
            true
        } else {
            false
        }
    }

    pub(crate) fn open_path(&mut self, p: PathBuf) {
        self.info(format!("opening {} …", p.display()));
        self.file.open(p, &mut self.jobs);
    }

    pub(crate) fn start_hash(&mut self) {
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

    pub(crate) fn on_job(&mut self, m: JobMessage) {
        match m {
            JobMessage::Opened(result) => match *result {
                Ok(loaded) => self.apply_loaded(loaded),
                Err(e) => self.error(e),
            },
            JobMessage::Hash(h) => {
                // Through info/error, so the message it replaces (why hashing started) stays
                // in the log (@).
                if let Some(m) = self.file.on_hash(h, self.ws.pinned()) {
                    if m.error {
                        self.error(m.text);
                    } else {
                        self.info(m.text);
                    }
                }
            }
            JobMessage::Array(key, result) => self.file.on_array(key, result),
        }
    }

    /// Use an opened file: the workspace takes its model, W and inventory (files loaded beside
    /// the model, the machine and the settings stay).
    pub fn apply_loaded(&mut self, loaded: file::Loaded) {
        let after_open = std::mem::take(&mut self.after_open);
        match self.ws.open(&loaded.opened) {
            Err(crate::workspace::Refusal::NoModel(e)) => {
                // Browse the file; the bounds keep the scenario they had.
                let msg = format!(
                    "opened {}: tensors (t) and metadata (m) are shown, but the bounds keep the previous model: {e}",
                    loaded.file_name
                );
                self.show_file(loaded);
                self.file.refused = Some(e.to_string());
                self.error(msg);
            }
            Ok(()) => {
                // The start-up flags that needed this model (`--runtime`, MLX-LM's settings).
                let refused: Vec<String> = after_open
                    .into_iter()
                    .filter_map(|(flag, e)| self.ws.apply(e).err().map(|r| format!("{flag}: {r}")))
                    .collect();
                self.after_change();
                let name = loaded.file_name.clone();
                let notes = loaded.opened.notes.join("; ");
                // A local file whose size matches a pinned artifact: hashed on opening (unless
                // LLMBOUND_AUTO_HASH=off), and the status line says why.
                let pinned = (self.ws.pinned())
                    .filter(|p| p.sha256.is_some() && !crate::remote::is_remote(&loaded.path))
                    .map(|p| p.id.clone());
                self.show_file(loaded);
                let opened = if notes.is_empty() {
                    format!("opened {name}")
                } else {
                    format!("opened {name} · {notes}")
                };
                match pinned {
                    Some(id) if self.auto_hash => {
                        self.info(format!(
                            "{opened} · hashing: its size matches the pinned artifact {id} (x cancels; LLMBOUND_AUTO_HASH=off stops this)"
                        ));
                        if let Err(e) = (self.file).start_hash(&mut self.jobs, self.hash_cache.clone())
                        {
                            self.error(e);
                        }
                    }
                    Some(id) => self.info(format!(
                        "{opened} · its size matches the pinned artifact {id}: Enter on the Artifact pane hashes it"
                    )),
                    None => self.info(opened),
                }
                if !refused.is_empty() {
                    self.error(refused.join("; "));
                }
            }
            Err(r) => {
                self.file.open_failed();
                self.refused(r);
            }
        }
    }

    /// Make a read file the one the views browse.
    pub(crate) fn show_file(&mut self, loaded: file::Loaded) {
        self.tensors = TensorView::default();
        self.metadata = MetadataView::default();
        self.tensors.data_start = super::views::tensors::data_starts(&loaded);
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
