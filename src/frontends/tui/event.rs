//! The terminal side: enter and leave the alternate screen (`ratatui::init` / `restore`),
//! mouse capture, the event loop (keys and mouse to actions, worker messages, redraws), and
//! restoring the terminal on every way out.

use super::Options;
use super::action::Action;
use super::app::{App, Modal};
use super::prompt::LineKey;
use crate::profile::Catalog;
use color_eyre::eyre::{WrapErr, eyre};
use crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use crossterm::execute;
use std::time::Duration;

/// Translate a key press into an action, given what the app is doing.
pub fn key_action(app: &App, key: &KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    if matches!(app.modal(), Modal::Confirm(_) | Modal::Switch { .. }) {
        return match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Some(Action::Yes),
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => Some(Action::No),
            _ => None,
        };
    }
    if app.is_typing() {
        return match key.code {
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Esc => Some(Action::Back),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Tab => Some(Action::Complete),
            KeyCode::Char(c) if !ctrl => Some(Action::Input(c)),
            code => line_key(code, ctrl).map(Action::Line),
        };
    }
    app.keymap().action(key, app.key_context())
}

/// The editing keys of a prompt: readline's Ctrl keys and the cursor keys.
fn line_key(code: KeyCode, ctrl: bool) -> Option<LineKey> {
    Some(match (code, ctrl) {
        (KeyCode::Left, _) | (KeyCode::Char('b'), true) => LineKey::Left,
        (KeyCode::Right, _) | (KeyCode::Char('f'), true) => LineKey::Right,
        (KeyCode::Home, _) | (KeyCode::Char('a'), true) => LineKey::Home,
        (KeyCode::End, _) | (KeyCode::Char('e'), true) => LineKey::End,
        (KeyCode::Delete, _) | (KeyCode::Char('d'), true) => LineKey::Delete,
        (KeyCode::Char('w'), true) => LineKey::DeleteWord,
        (KeyCode::Char('u'), true) => LineKey::DeleteToStart,
        (KeyCode::Char('k'), true) => LineKey::DeleteToEnd,
        (KeyCode::Up, _) | (KeyCode::Char('p'), true) => LineKey::Up,
        (KeyCode::Down, _) | (KeyCode::Char('n'), true) => LineKey::Down,
        _ => return None,
    })
}

/// Translate a terminal event into an action.
pub fn event_action(app: &App, ev: &Event) -> Option<Action> {
    match ev {
        Event::Key(k) => key_action(app, k),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
            MouseEventKind::ScrollUp => Some(Action::Scroll(m.column, m.row, -1)),
            MouseEventKind::ScrollDown => Some(Action::Scroll(m.column, m.row, 1)),
            _ => None,
        },
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        // Bracketed paste: one event however long the paste, cut before it is copied on.
        Event::Paste(s) if app.is_typing() => Some(Action::Paste(
            s.chars()
                .take(super::prompt::MAX_PROMPT_CHARS * 2)
                .collect(),
        )),
        _ => None,
    }
}

fn leave() {
    // The cursor is shown here, not left to the terminal's drop: after a signal the process
    // ends before that runs.
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        crossterm::cursor::Show
    );
    ratatui::restore();
}

/// Build the app, take the terminal, loop, give the terminal back.
pub fn run(opts: Options) -> color_eyre::Result<()> {
    let catalog = Catalog::load();
    // `--runtime` and MLX-LM's flags need the model, which is opened on a worker: they are
    // applied once it is (the CLI checked them against it before the terminal was taken).
    let (scenario, after_open) = match &opts.gguf {
        Some(_) => opts.scenario.split_after_open().map_err(|e| eyre!("{e}"))?,
        None => (opts.scenario.clone(), Vec::new()),
    };
    let mut app = App::new(catalog, &scenario).map_err(|e| eyre!("{e}"))?;
    if let Some(p) = opts.gguf {
        app.apply_after_open(after_open);
        app.update(Action::OpenPath(p));
    }
    // Installed before the terminal turns raw, so a SIGTERM/SIGINT/SIGHUP at any moment ends
    // the loop and the terminal is given back below.
    let signals = signals::Watch::install();
    let mut terminal = ratatui::try_init().wrap_err("cannot set up the terminal")?;
    // ratatui's hook restores the screen on a panic; leave mouse capture too.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if super::file::in_job() {
            // Caught and reported by the job (see `file::Jobs::spawn`); the explorer goes on.
            return;
        }
        let _ = execute!(
            std::io::stdout(),
            DisableBracketedPaste,
            DisableMouseCapture
        );
        hook(info);
    }));
    // Bracketed paste: a paste is one `Event::Paste`, not a key event per character (a 1 MiB
    // paste froze the loop, and a long burst of keys merged the next Esc with the key after).
    let _ = execute!(std::io::stdout(), EnableMouseCapture, EnableBracketedPaste);
    let result = event_loop(&mut terminal, &mut app, &|| signals.pending());
    leave();
    // Ended by a signal: with the terminal restored, end as that signal would have.
    signals.finish();
    result
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    signalled: &dyn Fn() -> bool,
) -> color_eyre::Result<()> {
    let size = terminal.size()?;
    app.update(Action::Resize(size.width, size.height));
    let mut dirty = true;
    while !app.quit_requested() && !signalled() {
        if app.poll_jobs() {
            dirty = true;
        }
        if dirty {
            terminal.draw(|f| f.render_widget(&*app, f.area()))?;
            dirty = false;
        }
        let wait = if app.busy() {
            Duration::from_millis(50)
        } else {
            Duration::from_millis(250)
        };
        if event::poll(wait)? {
            // Handle every event already queued before drawing again.
            loop {
                let ev = event::read()?;
                if let Some(a) = event_action(app, &ev) {
                    app.update(a);
                }
                // `y`: the launch line to the terminal's clipboard.
                if let Some(text) = app.take_clipboard() {
                    use std::io::Write;
                    let mut out = std::io::stdout();
                    let _ = out.write_all(super::app::osc52(&text).as_bytes());
                    let _ = out.flush();
                }
                dirty = true;
                if app.quit_requested() || signalled() || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// SIGTERM, SIGINT and SIGHUP while the explorer runs: `signal-hook` sets a flag the event
/// loop checks (at least every 250 ms), the loop ends, the terminal is restored (raw mode
/// off, main screen, mouse capture off, cursor shown), then the process ends as the signal
/// would have. A second signal before that ends the process at once.
#[cfg(unix)]
mod signals {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::{SigId, flag, low_level};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    pub struct Watch {
        got: Arc<AtomicUsize>,
        ids: Vec<SigId>,
    }

    impl Watch {
        pub fn install() -> Watch {
            let got = Arc::new(AtomicUsize::new(0));
            let term = Arc::new(AtomicBool::new(false));
            let mut ids = Vec::new();
            for sig in [SIGTERM, SIGINT, SIGHUP] {
                // Order matters: the shutdown sees the flag only from the second signal on.
                ids.extend(
                    flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&term)).ok(),
                );
                ids.extend(flag::register(sig, Arc::clone(&term)).ok());
                ids.extend(flag::register_usize(sig, Arc::clone(&got), sig as usize).ok());
            }
            // crossterm's read spins on a terminal that has gone away (read(2) returning 0
            // for ever), so the loop may never look at the flag again: a watchdog gives the
            // loop half a second after a signal, then restores and ends the process itself.
            // The same when the terminal itself hangs up without a signal reaching us: the
            // session then has no controlling terminal, and /dev/tty no longer opens.
            let watched = Arc::clone(&got);
            let had_tty = std::fs::File::open("/dev/tty").is_ok();
            std::thread::spawn(move || {
                let mut ticks = 0u32;
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    ticks = ticks.wrapping_add(1);
                    if had_tty
                        && ticks.is_multiple_of(5)
                        && std::fs::File::open("/dev/tty").is_err()
                    {
                        // Nothing to restore on a terminal that is gone (and crossterm's reader
                        // lock is held by the spinning read).
                        std::process::exit(128 + SIGHUP);
                    }
                    let sig = watched.load(Ordering::SeqCst);
                    if sig != 0 {
                        std::thread::sleep(std::time::Duration::from_millis(500));
                        if std::fs::File::open("/dev/tty").is_ok() {
                            super::leave();
                        }
                        std::process::exit(128 + sig as i32);
                    }
                }
            });
            Watch { got, ids }
        }

        pub fn pending(&self) -> bool {
            self.got.load(Ordering::SeqCst) != 0
        }

        pub fn finish(self) {
            let sig = self.got.load(Ordering::SeqCst);
            for id in self.ids {
                low_level::unregister(id);
            }
            if sig != 0 {
                let _ = low_level::emulate_default_handler(sig as i32);
            }
        }
    }
}

/// No POSIX signals here: the loop ends only on quit.
#[cfg(not(unix))]
mod signals {
    pub struct Watch;

    impl Watch {
        pub fn install() -> Watch {
            Watch
        }

        pub fn pending(&self) -> bool {
            false
        }

        pub fn finish(self) {}
    }
}
