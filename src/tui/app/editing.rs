//! The explorer's edits: a key or typed value becomes a `core::edit::Edit` (through
//! `fields`), applied by the one edit function, then one recompute that goes back to the
//! previous valid scenario when the new one cannot be evaluated. Part of `App`.

use super::*;

impl App {
    pub(crate) fn undo_point(&self) -> Undo {
        Undo {
            scenario: self.scenario.clone(),
            figures: self.figures.clone(),
            model_edits: self.model_edits.clone(),
            machine_edits: self.machine_edits.clone(),
        }
    }

    pub(crate) fn restore(&mut self, u: Undo) {
        self.scenario = u.scenario;
        self.figures = u.figures;
        self.model_edits = u.model_edits;
        self.machine_edits = u.machine_edits;
    }

    pub(crate) fn step_field(&mut self, f: Field, dir: i32) {
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
            self.request_switch(Switch::Machine(id));
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
                self.refused(e);
            }
        }
    }

    /// A refused edit: the message line says why; a model shape llama.cpp could not run is
    /// also shown in the Model pane under the field.
    pub(crate) fn refused(&mut self, e: fields::FieldError) {
        match &e {
            fields::FieldError::Refused(_, crate::core::edit::EditError::Shape(m)) => {
                self.model_refusal = Some(m.clone());
                self.error(format!("model: {m}"));
            }
            _ => self.error(e.to_string()),
        }
    }

    pub(crate) fn mark_edit(&mut self, f: Field) {
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
            Field::MachineProfile => {
                return self.request_switch(Switch::Machine(pick::id_of(text)));
            }
            _ => {}
        }
        // Enter on the value the prompt opened with changes nothing (and marks nothing `user`).
        if text.trim() == fields::edit_text(&self.scenario, &self.figures, f) {
            return;
        }
        let u = self.undo_point();
        match fields::set(&mut self.scenario, &mut self.figures, f, text) {
            Ok(()) => {
                self.mark_edit(f);
                self.recompute_or_undo(Some(u));
            }
            Err(e) => {
                self.restore(u);
                self.refused(e);
            }
        }
    }

    pub(crate) fn set_claim(&mut self, text: &str) {
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
        let origin = MachineOrigin::of(&entry.origin);
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
    pub(crate) fn jump_to_max_gpu_layers(&mut self) {
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
    pub(crate) fn recompute_or_undo(&mut self, undo: Option<Undo>) -> bool {
        if let Err(e) = self.rebuild_model() {
            if let Some(u) = undo {
                self.restore(u);
            }
            self.model_refusal = Some(e.trim_start_matches("model: ").to_string());
            self.error(e);
            return false;
        }
        self.model_refusal = None;
        // The name is the loaded one while the scenario is what was loaded, else derived.
        self.scenario.name = if self.scenario.same_subject(&self.base) {
            self.base.name.clone()
        } else {
            self.scenario.derived_name()
        };
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
    pub(crate) fn rebuild_model(&mut self) -> Result<(), String> {
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
}
