//! Saving from the explorer: the id prompt and the y/n before an overwrite; the profiles
//! themselves are built and written by the workspace. Part of `App`.

use super::*;
use crate::workspace::Refusal;

impl App {
    pub(crate) fn begin_save(&mut self, kind: SaveKind) {
        if let Some(why) = self.ws.cannot_save(kind) {
            self.error(why);
            return;
        }
        let what = if kind == SaveKind::Machine {
            "machine"
        } else {
            "scenario"
        };
        self.modal = Modal::Input(Input::new(
            InputTarget::SaveId(kind),
            format!("save {what} as (id): "),
            self.ws.default_save_id(kind),
        ));
    }

    pub(crate) fn save(&mut self, kind: SaveKind, id: &str, overwrite: bool) {
        match self.ws.save(kind, id, overwrite) {
            Ok(paths) => {
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                self.after_change();
                self.info(format!("saved {}", names.join(", ")));
            }
            Err(Refusal::Profile(crate::profile::ProfileError::Exists { path })) => {
                self.modal = Modal::Confirm(Confirm {
                    question: format!("{path} exists. Overwrite? (y/n)"),
                    kind,
                    id: id.to_string(),
                });
            }
            Err(Refusal::CannotSave(why)) => self.error(why),
            Err(e) => self.error(format!("not saved: {e}")),
        }
    }
}
