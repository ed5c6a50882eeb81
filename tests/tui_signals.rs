//! The explorer gives the terminal back on SIGTERM, SIGINT and SIGHUP (issue 10, item 15):
//! started under `sh -c` in tmux, signalled with `kill`, then the pane must be on the main
//! screen with the cursor shown, mouse capture off, and typed text echoing (not raw).
//! Runs when `tmux` is on PATH and `LLMBOUND_E2E=1`; otherwise prints why it was skipped.
//! The binary is `LLMBOUND_E2E_BIN` when set, else this package's `llmbound`.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(socket: &str, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if f() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("timed out waiting for {what}"))
}

/// The binary to drive in tmux, or `None` (with the reason printed) when the test is skipped.
fn e2e_bin(what: &str) -> Option<String> {
    if std::env::var("LLMBOUND_E2E").ok().as_deref() != Some("1") {
        skipped!("skipped: set LLMBOUND_E2E=1 to run {what} in tmux");
        return None;
    }
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skipped!("skipped: tmux is not on PATH");
        return None;
    }
    Some(
        std::env::var("LLMBOUND_E2E_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_llmbound").to_string()),
    )
}

fn child_of(pid: u32) -> Option<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn one_signal(bin: &str, signal: &str) -> Result<(), String> {
    let socket = format!("llmbound-sig-{}-{signal}", std::process::id());
    let config = tempfile::tempdir().unwrap();
    let cmd = format!(
        "sh -c 'LLMBOUND_CONFIG_DIR={} NO_COLOR=1 {bin}; echo EXITED; exec cat'",
        config.path().display()
    );
    tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "36",
            "-s",
            "s",
            &cmd,
        ],
    );
    let screen = || tmux(&socket, &["capture-pane", "-p", "-t", "s"]);
    let flags = || {
        tmux(
            &socket,
            &[
                "display",
                "-p",
                "-t",
                "s",
                "#{alternate_on} #{cursor_flag} #{mouse_any_flag}",
            ],
        )
    };
    let result = (|| {
        wait_until("the explorer to start", || flags().starts_with("1 0 1"))?;
        let sh: u32 = tmux(&socket, &["display", "-p", "-t", "s", "#{pane_pid}"])
            .trim()
            .parse()
            .map_err(|e| format!("pane pid: {e}"))?;
        let pid = child_of(sh).ok_or("no llmbound process under sh")?;
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .map_err(|e| e.to_string())?
            .success();
        if !ok {
            return Err("kill failed".into());
        }
        wait_until("the explorer to end", || screen().contains("EXITED"))?;
        let f = flags();
        if f.trim() != "0 1 0" {
            return Err(format!(
                "after SIG{signal}: alternate screen, cursor, mouse = \"{}\", want \"0 1 0\"",
                f.trim()
            ));
        }
        tmux(&socket, &["send-keys", "-t", "s", "typed-text-echoes"]);
        wait_until("typed text to echo", || {
            screen().contains("typed-text-echoes")
        })
        .map_err(|e| format!("after SIG{signal}: {e} (the terminal was left raw)"))
    })();
    let shown = screen();
    tmux(&socket, &["kill-server"]);
    result.map_err(|e| format!("{e}\n---- screen ----\n{shown}"))
}

#[test]
fn the_explorer_restores_the_terminal_on_signals() {
    let Some(bin) = e2e_bin("the signal test") else {
        return;
    };
    let failures: Vec<String> = ["TERM", "INT", "HUP"]
        .iter()
        .filter_map(|s| one_signal(&bin, s).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The terminal goes away under the explorer (tmux server killed): the process must end,
/// not spin on a terminal that reads end-of-file for ever.
#[test]
fn the_explorer_ends_when_its_terminal_goes_away() {
    let Some(bin) = e2e_bin("the hang-up test") else {
        return;
    };
    let socket = format!("llmbound-hup-{}", std::process::id());
    let config = tempfile::tempdir().unwrap();
    let cmd = format!(
        "env LLMBOUND_CONFIG_DIR={} NO_COLOR=1 {bin}",
        config.path().display()
    );
    tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
            "-s",
            "s",
            &cmd,
        ],
    );
    let flags = || tmux(&socket, &["display", "-p", "-t", "s", "#{alternate_on}"]);
    wait_until("the explorer to start", || flags().starts_with('1')).unwrap();
    let pid: u32 = tmux(&socket, &["display", "-p", "-t", "s", "#{pane_pid}"])
        .trim()
        .parse()
        .expect("pane pid");
    tmux(&socket, &["kill-server"]);
    let gone = wait_until("the explorer to end after its terminal went away", || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
    });
    if gone.is_err() {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    gone.unwrap();
}
