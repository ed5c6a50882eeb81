//! The explorer's edits: a key or typed value becomes a `core::edit::Edit` (through
//! `fields`), given to the workspace, which applies it with the one edit function and
//! evaluates, or refuses it and stays as it was. Part of `App`.

use super::*;
use crate::workspace::Refusal;

impl App {
    /// Give one edit to the workspace; the views follow its report. Returns success.
    pub(crate) fn edit(&mut self, e: Edit) -> bool {
        match self.ws.apply(e) {
            Ok(()) => {
                self.after_change();
                true
            }
            Err(r) => {
                self.refused(r);
                false
            }
        }
    }

    pub(crate) fn step_field(&mut self, f: Field, dir: i32) {
        if f == Field::MachineProfile {
            let ids: Vec<String> = (self.ws.catalog().machines.iter())
                .map(|m| m.id.clone())
                .collect();
            if ids.is_empty() {
                return;
            }
            let i = ids
                .iter()
                .position(|id| *id == self.ws.scenario().machine.id)
                .map_or(0, |i| i as i32 + dir);
            let id = ids[i.rem_euclid(ids.len() as i32) as usize].clone();
            self.request_switch(Switch::Machine(id));
            return;
        }
        let Field::Setting(k) = f else {
            return;
        };
        match fields::step_edit(&self.ws, k, dir) {
            Some(e) => {
                self.edit_field(f, e);
            }
            None => self.info(format!("Enter to type the {}", f.name())),
        }
    }

    fn edit_field(&mut self, f: Field, e: Edit) {
        match self.ws.apply(e) {
            Ok(()) => self.after_change(),
            Err(Refusal::Edit(err)) => {
                self.refused_field(fields::FieldError::Refused(f.short(), err))
            }
            Err(r) => self.refused(r),
        }
    }

    /// A refused change: the message line says why.
    pub(crate) fn refused(&mut self, r: Refusal) {
        match r {
            Refusal::Edit(e @ crate::core::edit::EditError::Shape(_)) => {
                self.refused_field(fields::FieldError::Refused("model", e))
            }
            other => self.error(other.to_string()),
        }
    }

    /// A refused field value: the message line says why; a model shape llama.cpp could not run
    /// is also shown in the Model pane under the field, as "model: …".
    fn refused_field(&mut self, e: fields::FieldError) {
        if let fields::FieldError::Refused(_, crate::core::edit::EditError::Shape(m)) = &e {
            self.model_refusal = Some(m.clone());
            return self.error(format!("model: {m}"));
        }
        self.error(e.to_string())
    }

    /// Set a field from text (as typed and accepted); a bad value leaves the scenario as it was.
    pub fn set_field(&mut self, f: Field, text: &str) {
        let k = match f {
            Field::Claim => return self.set_claim(text),
            Field::MachineProfile => {
                return self.request_switch(Switch::Machine(pick::id_of(text)));
            }
            Field::Setting(k) => k,
        };
        // Enter on the value the prompt opened with changes nothing (and marks nothing `user`).
        if text.trim() == fields::edit_text(&self.ws, k) {
            return;
        }
        match fields::parse_edit(&self.ws, k, text) {
            Ok(e) => self.edit_field(f, e),
            Err(e) => self.refused_field(e),
        }
    }

    pub(crate) fn set_claim(&mut self, text: &str) {
        let t = text.trim();
        if t.is_empty() {
            self.claim = None;
            return;
        }
        // As llama.cpp and people write a rate: "30", "30 t/s", "30tok/s", "30 tokens/s" (the
        // CLI's `check` reads it with the same parser).
        match crate::core::units::parse_tokens_per_second(t) {
            Ok(v) => {
                self.claim = Some(Claim {
                    text: t.to_string(),
                    check: check_claim(self.ws.report(), v),
                });
                self.claim_scroll = 0;
            }
            Err(e) => self.error(format!("claim: \"{t}\" is {e}")),
        }
    }

    /// Switch machine profile by id.
    pub fn select_machine(&mut self, id: &str) {
        match self.ws.switch(&Switch::Machine(id.to_string()), None) {
            Ok(()) => self.after_change(),
            Err(r) => self.refused(r),
        }
    }

    /// Evaluate the scenario again and bring the views up to date (the report is the
    /// workspace's, always of its current scenario).
    pub fn recompute(&mut self) -> bool {
        self.after_change();
        true
    }

    /// Set `-ngl` to the most GPU layers that fit, and say the decode ceiling there.
    pub(crate) fn jump_to_max_gpu_layers(&mut self) {
        match self.ws.apply_max_gpu_layers() {
            Ok(m) => {
                self.after_change();
                self.info(crate::report::text::max_gpu_layers_line(
                    &m,
                    self.ws.scenario().cache.sequences,
                ));
            }
            Err(r @ Refusal::NoOffload) => self.info(r.to_string()),
            Err(r) => self.refused(r),
        }
    }

    /// Set the context to the largest that fits (the Bounds pane's figure), and say so.
    pub(crate) fn jump_to_max_context(&mut self) {
        let now = self.ws.scenario().cache.context;
        if self.ws.runtime() == crate::core::mlx::Runtime::MlxLm {
            // MLX-LM's figures: its plan's largest context, not llama.cpp's.
            let largest = self
                .ws
                .mlx_plan()
                .map(|p| (p.memory.is_err(), p.largest_context));
            match largest {
                None => self.info("MLX-LM: no plan (the machine has no memory tier)"),
                Some((true, _)) => self.info("no context: MLX-LM refuses this run"),
                Some((false, None)) => {
                    self.info("no context fits: MLX-LM's weights and activations alone do not fit")
                }
                Some((false, Some(n))) if n == now => self.info(format!(
                    "context {} tokens is the largest MLX-LM holds",
                    units::fmt_tokens(n)
                )),
                Some((false, Some(n))) => {
                    if self.edit(Edit::Context(n)) {
                        self.info(format!(
                            "context {} tokens: the largest MLX-LM holds",
                            units::fmt_tokens(n)
                        ));
                    }
                }
            }
            return;
        }
        let c = &self.ws.report().capacity;
        match c.max_context_tokens {
            _ if c.starts_at_no_context() => {
                self.info("no context fits: llama.cpp will not start with these settings")
            }
            None => self.info("memory sets no limit on the context"),
            Some(0) => self.info("no context fits: the weights and buffers alone do not fit"),
            Some(n) if n == now => self.info(format!(
                "context {} tokens is the largest that fits",
                units::fmt_tokens(n)
            )),
            Some(n) => {
                if self.edit(Edit::Context(n)) {
                    self.info(format!(
                        "context {} tokens: the largest that fits",
                        units::fmt_tokens(n)
                    ));
                }
            }
        }
    }

    /// The workspace changed: charts, claim and the open views follow its report.
    pub(crate) fn after_change(&mut self) {
        self.model_refusal = None;
        self.plots = Plots::from_report(self.ws.report());
        if let Some(c) = &self.claim {
            let tps = c.check.tokens_per_second;
            self.claim = Some(Claim {
                text: c.text.clone(),
                check: check_claim(self.ws.report(), tps),
            });
        }
        if self.view == View::Compare {
            self.refresh_compare();
        }
        if self.view == View::Library {
            self.refresh_library();
        }
        self.refresh_bench();
    }
}
