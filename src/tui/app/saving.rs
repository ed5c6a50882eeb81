//! Saving from the explorer: the id prompt, the profiles built by `profile::save`, and what
//! the app remembers after a save. Part of `App`.

use super::*;

impl App {
    pub(crate) fn begin_save(&mut self, kind: SaveKind) {
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
                if self.machine_origin == MachineOrigin::Saved {
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
        let name = if self.machine_edits.is_empty() {
            self.machine_file.name.clone()
        } else {
            fields::edited_machine_name(
                &self.machine_file.name,
                &load::machine(&self.machine_file),
                &self.scenario.machine,
                &self.machine_edits,
            )
        };
        let edited: Vec<MachineFigure> = (self.machine_edits.iter())
            .filter_map(|f| match *f {
                Field::Capacity(i) => Some(MachineFigure::Capacity(i)),
                Field::Bandwidth(i) => Some(MachineFigure::Bandwidth(i)),
                Field::Measured(i) => Some(MachineFigure::Measured(i)),
                Field::ComputeRate(i) => Some(MachineFigure::ComputeRate(i)),
                _ => None,
            })
            .collect();
        save::machine_profile(
            &self.machine_file,
            id,
            name,
            &self.scenario.machine,
            &edited,
        )
    }

    /// The model profile with the user's edits applied (None without a model profile).
    pub fn model_profile(&self, id: &str) -> Option<ModelFile> {
        let parameters = (self.model_edits.has(Field::Parameters))
            .then(|| {
                self.scenario
                    .model
                    .parameters_advertised
                    .as_ref()
                    .map(|p| p.value)
            })
            .flatten();
        Some(save::model_profile(
            self.model_file.as_ref()?,
            id,
            &self.figures,
            parameters,
        ))
    }

    /// The scenario profile of the current settings.
    pub fn scenario_profile(
        &self,
        id: &str,
        machine_id: &str,
        model_id: &str,
    ) -> Option<ScenarioFile> {
        let base = self.scenario_file.as_ref()?;
        let artifact = self
            .pinned
            .as_ref()
            .map_or(base.artifact.as_str(), |p| p.id.as_str());
        Some(save::scenario_profile(
            base,
            &self.scenario,
            id,
            artifact,
            machine_id,
            model_id,
        ))
    }

    pub(crate) fn save(&mut self, kind: SaveKind, id: &str, overwrite: bool) {
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
                    self.machine_origin = MachineOrigin::Saved;
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

    pub(crate) fn save_scenario(
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
}
