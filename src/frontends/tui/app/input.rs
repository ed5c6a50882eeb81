//! The explorer's prompts: starting a typed line, keys while typing, and what an accepted
//! line does. Part of `App`; never draws.

use super::*;

impl App {
    pub(crate) fn begin_edit(&mut self, f: Field) {
        if f == Field::MachineProfile {
            let mut picker = Input::picker(
                InputTarget::Field(f),
                "machine (type to filter): ",
                pick::rows(&self.ws.catalog().machines),
            );
            // The current machine is highlighted until something is typed.
            picker.pick = picker
                .choices
                .iter()
                .position(|c| pick::id_of(c) == self.ws.scenario().machine.id)
                .unwrap_or(0);
            self.modal = Modal::Input(picker);
            return;
        }
        let text = match f {
            Field::Claim => self
                .claim
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_default(),
            // Opens on the current value, selected: typing replaces it, ←→ Home End edit it.
            Field::Setting(k) => fields::edit_text(&self.ws, k),
            Field::MachineProfile => self.ws.scenario().machine.id.clone(),
        };
        self.modal = Modal::Input(Input::new(
            InputTarget::Field(f),
            format!("{}: ", f.name()),
            text,
        ));
    }

    pub(crate) fn update_input(&mut self, mut input: Input, action: Action) {
        match action {
            Action::Input(c) => {
                input.insert(c);
                self.on_input_changed(&input);
                self.modal = Modal::Input(input);
            }
            Action::Paste(t) => {
                input.paste(&t);
                self.on_input_changed(&input);
                self.modal = Modal::Input(input);
            }
            Action::Backspace => {
                input.backspace();
                self.on_input_changed(&input);
                self.modal = Modal::Input(input);
            }
            Action::Line(k) => {
                input.key(k, self.history.of(&input.target));
                self.on_input_changed(&input);
                self.modal = Modal::Input(input);
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
                if matches!(
                    input.target,
                    InputTarget::OpenPath | InputTarget::BenchPath | InputTarget::LibraryDir
                ) {
                    let exts: &[&str] = if input.target == InputTarget::BenchPath {
                        &[".json", ".jsonl"]
                    } else if input.target == InputTarget::LibraryDir {
                        &[]
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
                self.modal = Modal::Input(input);
            }
            Action::SetText(t) => {
                input.set(t);
                self.on_input_changed(&input);
                self.submit_input(input);
            }
            Action::Quit => self.quit = true,
            Action::Resize(w, h) => {
                self.screen = Rect::new(0, 0, w, h);
                self.modal = Modal::Input(input);
            }
            _ => self.modal = Modal::Input(input),
        }
    }

    pub(crate) fn on_input_changed(&mut self, input: &Input) {
        match input.target {
            InputTarget::TensorSearch => self
                .tensors
                .set_search(input.text.clone(), self.file.inventory()),
            InputTarget::MetadataSearch => {
                let rows = self.file.metadata_rows();
                self.metadata.set_search(input.text.clone(), rows);
                self.metadata.search_arrays(rows, &self.file.arrays);
            }
            InputTarget::CompareFilter => self.compare.set_filter(input.text.clone()),
            _ => {}
        }
    }

    pub(crate) fn submit_input(&mut self, mut input: Input) {
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
            InputTarget::LibraryDir => match self.library.add_dir(&input.text, self.ws.catalog()) {
                Ok(m) => self.info(m),
                Err(e) => self.error(e),
            },
            InputTarget::ModelProfile => {
                self.request_switch(Switch::Model(pick::id_of(&input.text)))
            }
            InputTarget::ModelBytes(id) => self.select_model(&id, Some(input.text.trim())),
            InputTarget::ScenarioProfile => {
                self.request_switch(Switch::Scenario(pick::id_of(&input.text)))
            }
            InputTarget::TensorSearch
            | InputTarget::MetadataSearch
            | InputTarget::CompareFilter => {}
        }
    }
}
