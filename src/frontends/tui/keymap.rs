//! Keys to actions: `assets/keymap.toml`, embedded with `include_str!`, parsed once. The same
//! table drives the help overlay and `docs/keys.md`. Depends on crossterm's key type and the
//! action enum only.

use super::action::Action;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

/// The embedded keymap.
pub const KEYMAP_TOML: &str = include_str!("../../../assets/keymap.toml");

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Context {
    /// Everywhere, unless the current view binds the same key.
    Global,
    /// The panes screen.
    Main,
    /// The tensor inventory browser.
    Tensors,
    /// The metadata view.
    Metadata,
    /// The compare-machines view.
    Compare,
    /// The llama-bench import view.
    Bench,
    /// The library view.
    Library,
    /// The Devices view.
    Devices,
}

impl Context {
    /// Heading used in the help overlay and docs.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Main => "Panes",
            Context::Tensors => "Tensor inventory (t)",
            Context::Metadata => "Metadata (m)",
            Context::Compare => "Compare machines (c)",
            Context::Bench => "llama-bench results (b)",
            Context::Library => "Library of models on this machine (L)",
            Context::Devices => "Devices (d)",
        }
    }
    /// Every context, in help order.
    pub const ALL: [Context; 8] = [
        Context::Global,
        Context::Main,
        Context::Tensors,
        Context::Metadata,
        Context::Compare,
        Context::Bench,
        Context::Library,
        Context::Devices,
    ];
}

/// One `[[key]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    /// Key names: `q`, `ctrl-c`, `tab`, `backtab`, `up`, `enter`, `space`, `[`.
    pub keys: Vec<String>,
    /// The action.
    pub action: Action,
    /// Where it applies.
    pub context: Context,
    /// One line for the help overlay.
    pub help: String,
    /// The word the footer shows beside the key (none: the key is in the help only). Keys
    /// next to each other in the footer with the same word share it (`↑↓ PgUp/Dn g G rows`).
    #[serde(default)]
    pub footer: Option<String>,
    /// The key as the footer shows it (default: the first key's label).
    #[serde(default)]
    pub footer_key: Option<String>,
    /// Views whose footer leaves this (global) key out although it works there.
    #[serde(default)]
    pub footer_not_in: Vec<Context>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeymapFile {
    key: Vec<Binding>,
}

/// A parsed key: code and whether Ctrl is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct KeySpec {
    code: KeyCode,
    ctrl: bool,
}

fn parse_key(s: &str) -> Result<KeySpec, String> {
    let (ctrl, name) = match s.strip_prefix("ctrl-") {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let code = match name {
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "enter" => KeyCode::Enter,
        "esc" => KeyCode::Esc,
        "space" => KeyCode::Char(' '),
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "backspace" => KeyCode::Backspace,
        one if one.chars().count() == 1 => KeyCode::Char(one.chars().next().unwrap_or(' ')),
        other => return Err(format!("unknown key \"{other}\" in the keymap")),
    };
    Ok(KeySpec { code, ctrl })
}

/// The keymap: bindings in file order.
#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<(Vec<KeySpec>, Binding)>,
}

impl Keymap {
    /// Parse a keymap text.
    pub fn parse(text: &str) -> Result<Keymap, String> {
        let file: KeymapFile = toml::from_str(text).map_err(|e| format!("keymap: {e}"))?;
        let mut bindings = Vec::with_capacity(file.key.len());
        for b in file.key {
            let specs = b
                .keys
                .iter()
                .map(|k| parse_key(k))
                .collect::<Result<Vec<_>, _>>()?;
            bindings.push((specs, b));
        }
        Ok(Keymap { bindings })
    }

    /// The embedded keymap (a test checks that it parses).
    pub fn builtin() -> Keymap {
        Keymap::parse(KEYMAP_TOML).expect("the embedded keymap parses")
    }

    /// The action bound to a key in a context (the context's own binding first, then global).
    pub fn action(&self, key: &KeyEvent, context: Context) -> Option<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let code = match key.code {
            // Shift-Tab arrives as BackTab on most terminals, as Tab + SHIFT on a few.
            KeyCode::Tab if key.modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            c => c,
        };
        let matches = |specs: &[KeySpec]| specs.iter().any(|s| s.code == code && s.ctrl == ctrl);
        let find = |ctx: Context| {
            self.bindings
                .iter()
                .find(|(specs, b)| b.context == ctx && matches(specs))
                .map(|(_, b)| b.action.clone())
        };
        if context == Context::Global {
            return find(Context::Global);
        }
        find(context).or_else(|| find(Context::Global))
    }

    /// Bindings of one context, for the help overlay.
    pub fn bindings(&self, context: Context) -> impl Iterator<Item = &Binding> {
        self.bindings
            .iter()
            .map(|(_, b)| b)
            .filter(move |b| b.context == context)
    }

    /// The bindings that work in `context`, in file order: its own, then the global ones whose
    /// keys it does not bind itself. The help's "this view" section and the footer read these.
    pub fn active(&self, context: Context) -> Vec<&Binding> {
        let own: Vec<&KeySpec> = (self.bindings.iter())
            .filter(|(_, b)| b.context == context)
            .flat_map(|(specs, _)| specs.iter())
            .collect();
        (self.bindings.iter())
            .filter(|(specs, b)| {
                b.context == context
                    || (b.context == Context::Global
                        && context != Context::Global
                        && !specs.iter().any(|s| own.contains(&s)))
            })
            .map(|(_, b)| b)
            .collect()
    }

    /// The footer of a view: (key, word) for each binding that works there and has a footer
    /// word, in file order, leaving out the key that opens the view itself and the keys the
    /// keymap keeps out of this view's footer; neighbours with the same word are merged.
    pub fn footer(&self, context: Context) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for b in self.active(context) {
            let Some(word) = &b.footer else { continue };
            if b.footer_not_in.contains(&context)
                || (b.context == Context::Global && opens(&b.action) == Some(context))
            {
                continue;
            }
            let key = match &b.footer_key {
                Some(k) => k.clone(),
                None => b.keys.first().map(|k| label(k)).unwrap_or_default(),
            };
            match out.last_mut() {
                Some((k, w)) if w == word => {
                    let padded = format!(" {k} ");
                    if !padded.contains(&format!(" {key} ")) {
                        k.push(' ');
                        k.push_str(&key);
                    }
                }
                _ => out.push((key, word.clone())),
            }
        }
        out
    }

    /// The keys of a binding as the help shows them: `↑ k`, `Ctrl-C`.
    pub fn key_label(binding: &Binding) -> String {
        binding
            .keys
            .iter()
            .map(|k| label(k))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Keys that answer a question rather than run an action, as (keys, what they do): the
    /// help overlay and docs/keys.md list them from here.
    pub const ANSWERS: [(&'static str, &'static str); 2] = [
        ("y", "yes (overwrite a saved profile; drop edits)"),
        ("n Esc", "no, when asked"),
    ];

    /// The key list as Markdown (docs/keys.md).
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "# Keys of the explorer\n\n\
             `llmbound` with no arguments opens the explorer on the default scenario;\n\
             `llmbound --gguf FILE [--machine ID] [--scenario ID]` opens it on a GGUF file or an MLX folder.\n\
             This list is generated from `assets/keymap.toml` (the help overlay, `?`, shows the same).\n\
             While a value is being typed, printable keys go into the line: `Enter` accepts, `Esc` cancels.\n\
             A prompt opens with its current value selected: typing replaces it, `←` `→` `Home` `End`\n\
             (`Ctrl-A` `Ctrl-E`) keep it and move the cursor; `Ctrl-U` `Ctrl-W` `Ctrl-K` delete to the start,\n\
             the word before the cursor, to the end; `↑` `↓` recall earlier lines of the same prompt, or move\n\
             in a picker list (machine, `M` model, `S` scenario; typing filters it). In the path prompts (`o`, `b`), `Tab` completes the path\n\
             and lists the candidates.\n\
             Mouse: a click selects a pane and a field; the wheel scrolls.\n",
        );
        for ctx in Context::ALL {
            out.push_str(&format!(
                "\n## {}\n\n| key | action |\n|---|---|\n",
                ctx.title()
            ));
            for b in self.bindings(ctx) {
                let keys = b
                    .keys
                    .iter()
                    .map(|k| format!("`{}`", label(k)))
                    .collect::<Vec<_>>()
                    .join(" ");
                out.push_str(&format!("| {keys} | {} |\n", b.help));
            }
        }
        out.push_str("\n## Questions (y/n)\n\n| key | action |\n|---|---|\n");
        for (keys, help) in Self::ANSWERS {
            let keys: Vec<String> = keys.split(' ').map(|k| format!("`{k}`")).collect();
            out.push_str(&format!("| {} | {help} |\n", keys.join(" ")));
        }
        out
    }
}

/// The view an action opens (its key is left out of that view's own footer).
fn opens(a: &Action) -> Option<Context> {
    Some(match a {
        Action::Tensors => Context::Tensors,
        Action::Metadata => Context::Metadata,
        Action::Compare => Context::Compare,
        Action::Library => Context::Library,
        Action::Bench => Context::Bench,
        Action::Devices => Context::Devices,
        _ => return None,
    })
}

fn label(k: &str) -> String {
    match k {
        "up" => "↑".into(),
        "down" => "↓".into(),
        "left" => "←".into(),
        "right" => "→".into(),
        "tab" => "Tab".into(),
        "backtab" => "Shift-Tab".into(),
        "enter" => "Enter".into(),
        "esc" => "Esc".into(),
        "space" => "Space".into(),
        "pageup" => "PgUp".into(),
        "pagedown" => "PgDn".into(),
        "home" => "Home".into(),
        "end" => "End".into(),
        other => match other.strip_prefix("ctrl-") {
            Some(rest) => format!("Ctrl-{}", rest.to_uppercase()),
            None => other.to_string(),
        },
    }
}
