//! `y`: the llama.cpp launch line of the scenario, to the terminal's clipboard (OSC 52, sent
//! by the event loop) and in the message line (in full with `@`). Part of `App`.

use super::*;

/// Whether the terminal is one that takes OSC 52 (the Linux console and `dumb` do not).
pub(super) fn terminal_copies() -> bool {
    match std::env::var("TERM") {
        Ok(t) => !t.is_empty() && t != "dumb" && t != "linux",
        Err(_) => false,
    }
}

/// Standard base64 (RFC 4648, with padding), as OSC 52 carries its text.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (c.get(1).copied().unwrap_or(0) as u32) << 8
            | c.get(2).copied().unwrap_or(0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The OSC 52 sequence that puts `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

impl App {
    /// The llama.cpp command line of the scenario (the open file's path, or the model
    /// profile's file).
    pub fn launch_line(&self) -> String {
        let path = match &self.file.loaded {
            Some(l) => crate::workspace::open::llama_cpp_model_path(&l.path),
            None => (self.ws.scenario().weights.first())
                .map(|w| w.file.clone())
                .unwrap_or_default(),
        };
        crate::report::llama_cpp_command(self.ws.report(), &path)
    }

    pub(crate) fn copy_launch(&mut self) {
        let line = self.launch_line();
        if self.osc52 {
            self.clipboard = Some(line.clone());
            // Whether the terminal took it cannot be known: say what was sent.
            let tmux = if std::env::var_os("TMUX").is_some() {
                "; in tmux: set -g set-clipboard on"
            } else {
                ""
            };
            self.info(format!(
                "launch line sent to the clipboard (OSC 52{tmux}; @ shows it in full): {line}"
            ));
        } else {
            self.info(format!(
                "this terminal cannot take a copy (no OSC 52); the launch line (@ shows it in full): {line}"
            ));
        }
    }

    /// Text for the terminal's clipboard, once (the event loop sends it as OSC 52).
    pub fn take_clipboard(&mut self) -> Option<String> {
        self.clipboard.take()
    }

    /// Whether `y` sends OSC 52 (default: from `TERM`).
    pub fn set_osc52(&mut self, on: bool) {
        self.osc52 = on;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }

    #[test]
    fn y_copies_the_launch_line_or_shows_it() {
        let mut app = App::new(
            crate::profile::Catalog::builtin(),
            &crate::build::ScenarioOptions::default(),
        )
        .unwrap();
        app.set_osc52(true);
        app.update(Action::CopyLaunch);
        let line = app.take_clipboard().expect("a copy");
        assert!(line.starts_with("llama-server "), "{line}");
        assert!(app.message().unwrap().text.contains(&line));
        assert_eq!(app.take_clipboard(), None);
        app.set_osc52(false);
        app.update(Action::CopyLaunch);
        assert_eq!(app.take_clipboard(), None);
        let m = &app.message().unwrap().text;
        assert!(m.contains("cannot take a copy") && m.contains(&line), "{m}");
    }
}
