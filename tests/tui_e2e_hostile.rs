//! Runs tests/e2e/hostile.sh (the explorer against a redirect to file:, a stalled server and
//! a 1 MiB bracketed paste, in tmux) when `tmux` and python3 are on PATH and `LLMBOUND_E2E=1`;
//! otherwise prints why it was skipped. The binary is
//! `LLMBOUND_E2E_BIN` when set, else this package's `llmbound`.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use std::path::Path;
use std::process::Command;

fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn explorer_against_hostile_input_in_tmux() {
    if std::env::var("LLMBOUND_E2E").ok().as_deref() != Some("1") {
        skipped!("skipped: set LLMBOUND_E2E=1 to run tests/e2e/hostile.sh");
        return;
    }
    if !have_tmux() {
        skipped!("skipped: tmux is not on PATH");
        return;
    }
    if !Command::new("python3")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skipped!("skipped: python3 (the loopback server) is not on PATH");
        return;
    }
    let bin = std::env::var("LLMBOUND_E2E_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_llmbound").to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/hostile.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&bin)
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "tests/e2e/hostile.sh failed:\n{text}");
    eprintln!("{text}");
}
