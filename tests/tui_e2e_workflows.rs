//! Runs tests/e2e/workflows.sh (the three workflows walked in tmux: tune context and cache
//! type, browse the gemma GGUF, compare saved machines) at 80×24 and at 120×36, when
//! `LLMBOUND_E2E=1`, tmux is on PATH and `LLMBOUND_GEMMA_GGUF` names the gemma file;
//! otherwise it prints why it was skipped. With `LLMBOUND_E2E_CAPTURES=DIR` every step's
//! screen is written to DIR/<step>_<W>x<H>.txt.

#[macro_use]
#[path = "support/skip.rs"]
mod skip;

use std::path::Path;
use std::process::Command;

fn walk(w: u16, h: u16) {
    if std::env::var("LLMBOUND_E2E").ok().as_deref() != Some("1") {
        skipped!("set LLMBOUND_E2E=1 to run tests/e2e/workflows.sh at {w}x{h}");
        return;
    }
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skipped!("tmux is not on PATH");
        return;
    }
    let Ok(gguf) = std::env::var("LLMBOUND_GEMMA_GGUF") else {
        skipped!("set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF");
        return;
    };
    let bin = std::env::var("LLMBOUND_E2E_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_llmbound").to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/workflows.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg(&bin)
        .arg(w.to_string())
        .arg(h.to_string())
        .arg(&gguf);
    if let Ok(dir) = std::env::var("LLMBOUND_E2E_CAPTURES") {
        cmd.env("CAPTURES", dir);
    }
    let out = cmd.output().expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "workflows at {w}x{h} failed:\n{text}");
    eprintln!("{text}");
}

#[test]
fn workflows_at_80x24() {
    walk(80, 24);
}

#[test]
fn workflows_at_120x36() {
    walk(120, 36);
}
