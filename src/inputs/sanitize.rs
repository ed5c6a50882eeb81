//! Terminal-safe text: every string that comes from a file (GGUF metadata, tensor names,
//! profile names and notes, llama-bench fields, paths) passes through here before a text or
//! markdown exporter writes it. Control characters are shown escaped, never emitted: a GGUF
//! `general.name` of `ESC[2J` must not clear the screen, a tensor name with `\r\n` must not
//! forge a table row.
//!
//! Hand-written rather than a crate: the crates that strip ANSI sequences (`strip-ansi-escapes`,
//! `vte`) *remove* them, which hides what the file really holds, and leave bare C0/C1 bytes and
//! bidi overrides alone; we want every such character kept visible as an escape.
//! Depends on: nothing.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// True for a character that must never reach a terminal raw inside a one-line field:
/// C0 controls (ESC, BEL, CR, LF, TAB, …), DEL, C1 controls U+0080–U+009F (8-bit CSI/OSC),
/// the Unicode line/paragraph separators and the bidi embeddings, overrides and isolates
/// (the "Trojan Source" characters).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// JSON text with every unsafe character that serde_json leaves raw (C1 controls, line and
/// paragraph separators, bidi controls: `is_unsafe` above U+007F) written as a `\uXXXX`
/// escape. Such characters can only stand inside JSON strings, where the escape means the
/// same character, so the document's value is unchanged.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| c as u32 > 0x7f && is_unsafe(c)) {
        return Cow::Borrowed(json);
    }
    use fmt::Write;
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c as u32 > 0x7f && is_unsafe(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Longest error line shown, in characters; the rest is cut with a count of what was cut.
pub const MAX_ERROR_CHARS: usize = 2000;

/// `line` cut to `MAX_ERROR_CHARS` characters (an error naming 10,000 files stays one
/// readable line).
pub fn error_line(line: &str) -> Cow<'_, str> {
    let n = line.chars().count();
    if n <= MAX_ERROR_CHARS {
        return Cow::Borrowed(line);
    }
    let head: String = line.chars().take(MAX_ERROR_CHARS).collect();
    Cow::Owned(format!(
        "{head}… ({} more characters cut)",
        n - MAX_ERROR_CHARS
    ))
}

fn push_escaped(out: &mut String, c: char) {
    use fmt::Write;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape(s: &str, markdown: bool) -> Cow<'_, str> {
    let needs = |c: char| is_unsafe(c) || (markdown && c == '|');
    if !s.chars().any(needs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) {
            push_escaped(&mut out, c);
        } else if markdown && c == '|' {
            out.push_str("\\|");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A one-line field for plain text output: control characters (including CR and LF) and
/// bidi overrides shown as `\x1b`, `\r`, `\n`, `\u{202e}`. Ordinary text is returned as is.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// A one-line field for a markdown table cell: as [`text`], and `|` escaped as `\|`.
pub fn markdown(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// A field for `text` or `markdown` output, chosen by a flag (exporters that share code).
pub fn field(s: &str, markdown: bool) -> Cow<'_, str> {
    escape(s, markdown)
}

/// A path for plain text output (lossy for non-UTF-8 bytes, then escaped as [`text`]).
pub fn path(p: &Path) -> String {
    text(&p.to_string_lossy()).into_owned()
}

/// A `Display` wrapper: `format!("{}", Text(name))` writes `name` escaped as [`text`].
#[derive(Clone, Copy, Debug)]
pub struct Text<'a>(pub &'a str);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&text(self.0))
    }
}

/// A `Display` wrapper: `format!("{}", Md(cell))` writes `cell` escaped as [`markdown`].
#[derive(Clone, Copy, Debug)]
pub struct Md<'a>(pub &'a str);

impl fmt::Display for Md<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&markdown(self.0))
    }
}

/// Escape every unsafe character of a whole multi-line message except the line breaks
/// themselves (for text that is already laid out in lines by us).
pub fn lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c != '\n' && is_unsafe(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// TOML text we serialised (`profiles show`, `machine detect`): the serialiser escapes C0
/// controls but leaves C1 controls and bidi overrides raw inside strings; those are written
/// as TOML `\uXXXX` escapes so the output stays valid TOML and terminal-safe.
pub fn toml(s: &str) -> Cow<'_, str> {
    use fmt::Write;
    if !s.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c != '\n' && is_unsafe(c) {
            let _ = write!(out, "\\u{:04X}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(text("gemma-3 270m · Q4_K_M"), Cow::Borrowed(_)));
        assert_eq!(markdown("a|b"), "a\\|b");
    }

    #[test]
    fn every_control_is_escaped() {
        let hostile = "\x1b[2J\x1b[31m\x1b]0;pwned\x07x\r\ny\x7f\u{9b}31m\u{9d}\u{202e}z\t";
        let t = text(hostile);
        assert!(!t.chars().any(is_unsafe), "{t:?}");
        assert_eq!(
            t,
            "\\x1b[2J\\x1b[31m\\x1b]0;pwned\\x07x\\r\\ny\\x7f\\x9b31m\\x9d\\u{202e}z\\t"
        );
        assert!(!markdown(hostile).chars().any(is_unsafe));
    }

    #[test]
    fn lines_keeps_line_breaks_only() {
        assert_eq!(lines("a\x1b\nb\r"), "a\\x1b\nb\\r");
    }

    #[test]
    fn toml_escapes_stay_valid_toml() {
        assert_eq!(toml("name = \"a\u{9b}b\"\n"), "name = \"a\\u009Bb\"\n");
    }

    #[test]
    fn display_wrappers_pad() {
        assert_eq!(format!("[{:<6}]", Text("a\x07")), "[a\\x07 ]");
        assert_eq!(format!("{}", Md("|")), "\\|");
    }
}
