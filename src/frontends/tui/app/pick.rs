//! The profile pickers: machine, model and scenario chosen from a filterable list, and the
//! question asked before a switch drops unsaved edits. Part of `App`; never draws.

use super::*;

/// The tag a saved (user) profile carries in a picker row.
const SAVED: &str = "  (saved)";

/// The tag of a model profile that pins no artifact (its file size is asked for).
const NO_FILE: &str = "  (no pinned file)";

/// The profile id of a picker row (without its tags).
pub(crate) fn id_of(row: &str) -> String {
    row.split("  (").next().unwrap_or(row).trim().to_string()
}

pub(crate) fn rows<T>(entries: &[crate::profile::load::Entry<T>]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e.origin {
            Origin::File(_) => format!("{}{SAVED}", e.id),
            _ => e.id.clone(),
        })
        .collect()
}

impl App {
    fn open_picker(&mut self, target: InputTarget, prompt: &str, choices: Vec<String>, cur: &str) {
        if choices.is_empty() {
            self.error("no profiles to choose from");
            return;
        }
        let mut p = Input::picker(target, prompt, choices);
        // The current profile is highlighted until something is typed.
        p.pick = p.choices.iter().position(|c| id_of(c) == cur).unwrap_or(0);
        self.modal = Modal::Input(p);
    }

    /// The model picker (`M`): every model profile, built-in and saved.
    pub(crate) fn begin_pick_model(&mut self) {
        let cur = (self.ws.model_file())
            .map(|m| m.id.clone())
            .unwrap_or_default();
        let models = &self.ws.catalog().models;
        let choices = rows(models)
            .into_iter()
            .zip(models)
            .map(|(r, m)| {
                if m.value.artifacts.is_empty() {
                    format!("{r}{NO_FILE}")
                } else {
                    r
                }
            })
            .collect();
        self.open_picker(
            InputTarget::ModelProfile,
            "model (type to filter): ",
            choices,
            &cur,
        );
    }

    /// The scenario picker (`S`): every scenario profile, built-in and saved.
    pub(crate) fn begin_pick_scenario(&mut self) {
        let cur = (self.ws.scenario_file())
            .map(|s| s.id.clone())
            .unwrap_or_default();
        let choices = rows(&self.ws.catalog().scenarios);
        self.open_picker(
            InputTarget::ScenarioProfile,
            "scenario (type to filter): ",
            choices,
            &cur,
        );
    }

    /// Switch profile, asking first when unsaved edits would be lost.
    pub(crate) fn request_switch(&mut self, sw: Switch) {
        if self.ws.is_current(&sw) {
            self.info("that is the current profile");
            return;
        }
        if self.ws.dropped_by(&sw).is_some() {
            self.modal = Modal::Switch {
                to: sw,
                compare: false,
            };
        } else {
            self.switch_to(sw);
        }
    }

    /// The y/n question of a pending switch.
    pub fn pending_question(&self) -> Option<String> {
        let Modal::Switch {
            to: sw,
            compare: false,
        } = &self.modal
        else {
            return None;
        };
        let (what, id) = match sw {
            Switch::Machine(id) => ("machine", id),
            Switch::Model(id) => ("model", id),
            Switch::Scenario(id) => ("scenario", id),
        };
        Some(format!(
            "switch {what} to {id} and drop {}? y/n",
            self.ws.dropped_by(sw).unwrap_or("unsaved edits")
        ))
    }

    /// Switch without asking.
    pub(crate) fn switch_to(&mut self, sw: Switch) {
        match sw {
            Switch::Machine(id) => self.select_machine(&id),
            Switch::Model(id) => self.select_model(&id, None),
            Switch::Scenario(id) => self.select_scenario(&id),
        }
    }

    /// Forget the opened GGUF file (its model is replaced by a profile's).
    fn close_file(&mut self) {
        self.file.cancel_hash();
        self.file = FileState::default();
        self.tensors = TensorView::default();
        self.metadata = MetadataView::default();
    }

    /// Use another model profile: its shape, artifact and bytes replace the current model;
    /// the machine (with its edits), cache and run settings stay.
    /// A profile that pins no artifact needs the weights' exact size: `bytes` is it as
    /// typed, else a prompt asks for it.
    pub fn select_model(&mut self, id: &str, bytes: Option<&str>) {
        if self.ws.pins_no_artifact(id) && bytes.is_none() {
            self.modal = Modal::Input(Input::new(
                InputTarget::ModelBytes(id.to_string()),
                format!("{id} pins no file: its GGUF size (bytes or 4.92 GB): "),
                String::new(),
            ));
            return;
        }
        match self.ws.switch(&Switch::Model(id.to_string()), bytes) {
            Ok(()) => {
                self.after_change();
                if self.file.loaded.is_some() {
                    self.close_file();
                }
                self.info(format!("model {id}; machine and cache settings kept"));
            }
            // The size was typed in a prompt: the CLI's flag names mean nothing here.
            Err(crate::workspace::Refusal::Build(crate::build::BuildError::Flag {
                flag,
                message,
            })) => self.error(if flag == "--artifact-bytes" {
                format!("model \"{id}\": size: {message}")
            } else {
                format!("model \"{id}\": {message}")
            }),
            Err(e) => self.error(format!("model \"{id}\": {e}")),
        }
    }

    /// Use another scenario profile: its model, machine and settings replace all of them.
    pub fn select_scenario(&mut self, id: &str) {
        match self.ws.switch(&Switch::Scenario(id.to_string()), None) {
            Ok(()) => {
                if self.file.loaded.is_some() {
                    self.close_file();
                }
                self.after_change();
                self.info(format!("scenario {id}"));
            }
            Err(e) => self.error(format!("scenario \"{id}\": {e}")),
        }
    }
}
