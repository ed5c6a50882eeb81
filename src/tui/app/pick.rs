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
        self.input = Some(p);
    }

    /// The model picker (`M`): every model profile, built-in and saved.
    pub(crate) fn begin_pick_model(&mut self) {
        let cur = self
            .model_file
            .as_ref()
            .map(|m| m.id.clone())
            .unwrap_or_default();
        let choices = rows(&self.catalog.models)
            .into_iter()
            .zip(&self.catalog.models)
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
        let cur = self
            .scenario_file
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or_default();
        let choices = rows(&self.catalog.scenarios);
        self.open_picker(
            InputTarget::ScenarioProfile,
            "scenario (type to filter): ",
            choices,
            &cur,
        );
    }

    /// What a switch would drop without saving, if anything.
    fn dropped_by(&self, sw: &Switch) -> Option<&'static str> {
        let machine = self.scenario.machine != self.base.machine || !self.machine_edits.is_empty();
        let model = !self.model_edits.fields.is_empty();
        match sw {
            Switch::Machine(_) if machine => Some("the machine's unsaved edits"),
            Switch::Model(_) if model => Some("the model's unsaved edits"),
            Switch::Scenario(_) if machine || model || self.scenario != self.base => {
                Some("every unsaved edit")
            }
            _ => None,
        }
    }

    /// Switch profile, asking first when unsaved edits would be lost.
    pub(crate) fn request_switch(&mut self, sw: Switch) {
        let same = match &sw {
            Switch::Machine(id) => *id == self.scenario.machine.id,
            Switch::Model(id) => self.model_file.as_ref().is_some_and(|m| m.id == *id),
            Switch::Scenario(id) => {
                self.scenario_file.as_ref().is_some_and(|s| s.id == *id)
                    && self.scenario == self.base
            }
        };
        if same {
            self.info("that is the current profile");
            return;
        }
        if self.dropped_by(&sw).is_some() {
            self.pending = Some(sw);
        } else {
            self.switch_to(sw);
        }
    }

    /// The y/n question of a pending switch.
    pub fn pending_question(&self) -> Option<String> {
        let sw = self.pending.as_ref()?;
        let (what, id) = match sw {
            Switch::Machine(id) => ("machine", id),
            Switch::Model(id) => ("model", id),
            Switch::Scenario(id) => ("scenario", id),
        };
        Some(format!(
            "switch {what} to {id} and drop {}? y/n",
            self.dropped_by(sw).unwrap_or("unsaved edits")
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
        let pins_none = self
            .catalog
            .models
            .iter()
            .find(|m| m.id == id)
            .is_some_and(|m| m.value.artifacts.is_empty());
        if pins_none && bytes.is_none() {
            self.input = Some(Input::new(
                InputTarget::ModelBytes(id.to_string()),
                format!("{id} pins no file: its GGUF size (bytes or 4.92 GB): "),
                String::new(),
            ));
            return;
        }
        let opts = ScenarioOptions {
            model: Some(id.to_string()),
            artifact_bytes: bytes.map(str::to_string),
            ..Default::default()
        };
        let fresh = match App::new(self.catalog.clone(), &opts) {
            Ok(a) => a,
            // The CLI's flag names mean nothing here: the size was typed in a prompt.
            Err(e) => {
                let e = e
                    .to_string()
                    .replace("--artifact-bytes", "size")
                    .replace("--model: ", "");
                return self.error(format!("model \"{id}\": {e}"));
            }
        };
        let u = self.undo_point();
        self.scenario.model = fresh.scenario.model;
        self.scenario.weights = fresh.scenario.weights;
        self.scenario.inventory = fresh.scenario.inventory;
        self.scenario.feed_forward = fresh.scenario.feed_forward;
        self.figures = fresh.figures;
        self.model_edits = ModelEdits::default();
        if self.recompute_or_undo(Some(u)) {
            self.model_file = fresh.model_file;
            self.pinned = fresh.pinned;
            self.model_base = Provenance::Spec;
            if self.scenario_file.is_none() {
                self.scenario_file = fresh.scenario_file;
            }
            if self.file.loaded.is_some() {
                self.close_file();
            }
            self.info(format!("model {id}; machine and cache settings kept"));
        }
    }

    /// Use another scenario profile: its model, machine and settings replace all of them.
    pub fn select_scenario(&mut self, id: &str) {
        let opts = ScenarioOptions {
            scenario: Some(id.to_string()),
            ..Default::default()
        };
        let fresh = match App::new(self.catalog.clone(), &opts) {
            Ok(a) => a,
            Err(e) => return self.error(format!("scenario \"{id}\": {e}")),
        };
        self.scenario = fresh.scenario;
        self.base = fresh.base;
        self.report = fresh.report;
        self.figures = fresh.figures;
        self.model_base = fresh.model_base;
        self.model_edits = fresh.model_edits;
        self.machine_edits = fresh.machine_edits;
        self.scenario_file = fresh.scenario_file;
        self.model_file = fresh.model_file;
        self.machine_file = fresh.machine_file;
        self.machine_origin = fresh.machine_origin;
        self.pinned = fresh.pinned;
        if self.file.loaded.is_some() {
            self.close_file();
        }
        self.recompute();
        self.info(format!("scenario {id}"));
    }
}
