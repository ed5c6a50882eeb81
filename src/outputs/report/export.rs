//! One exporter per output format over the same documents: every command's output (report,
//! check, compare, inspect, bench, hash) is a document that writes itself as text, markdown
//! or JSON, and `render` is the one place a format is chosen. JSON documents carry `schema`
//! ("llmbound-<command>/<n>") and `version` (the llmbound version). Writers never print.

use super::{Format, Style};
use std::io::{self, Write};

/// The llmbound version every JSON document carries.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A document with three renderings.
pub trait Export {
    /// Its JSON form's `schema` ("llmbound-report/1", …).
    fn schema(&self) -> &'static str;
    /// Write the JSON form (pretty, one trailing newline), `schema` and `version` included.
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()>;
    /// Write the text or markdown form.
    fn write_styled(&self, style: Style, w: &mut dyn Write) -> io::Result<()>;
}

/// Write a document in a format: the one dispatch on the output format.
pub fn render<D: Export + ?Sized>(doc: &D, format: Format, w: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Json => doc.write_json(w),
        Format::Text => doc.write_styled(Style::Text, w),
        Format::Markdown => doc.write_styled(Style::Markdown, w),
    }
}

/// A document in a format, as a string.
pub fn render_string<D: Export + ?Sized>(doc: &D, format: Format) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = render(doc, format, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Pretty JSON of a serialisable value and a newline.
/// serde_json escapes only C0 controls: C1 controls and bidi overrides from a file (a GGUF
/// name with U+202E) are escaped here too (`crate::sanitize::json_safe`), so no JSON output
/// carries them raw. Streamed (through `JsonSafe`), never held whole in memory.
pub fn json_to<T: serde::Serialize + ?Sized>(value: &T, w: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, JsonSafe::new(&mut *w));
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    let inner = out.into_inner().map_err(|e| e.into_error())?;
    inner.finish()
}

/// A writer that passes JSON text on with `sanitize::json_safe` applied, keeping the bytes of a
/// character split between two writes until the rest arrives.
pub struct JsonSafe<W: Write> {
    inner: W,
    carry: Vec<u8>,
}

impl<W: Write> JsonSafe<W> {
    /// Wrap `inner`.
    pub fn new(inner: W) -> Self {
        JsonSafe {
            inner,
            carry: Vec::new(),
        }
    }

    /// Write what is left (an incomplete character at the very end is passed on as it is).
    pub fn finish(mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.carry);
        self.inner.write_all(&rest)?;
        self.inner.flush()
    }
}

impl<W: Write> Write for JsonSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.carry.extend_from_slice(buf);
        let bytes = std::mem::take(&mut self.carry);
        let (done, rest) = match std::str::from_utf8(&bytes) {
            Ok(s) => (s.len(), 0),
            // An incomplete character at the end waits for the next write.
            Err(e) if e.error_len().is_none() => (e.valid_up_to(), bytes.len() - e.valid_up_to()),
            // Not UTF-8 (serde_json never writes that): passed on unchanged.
            Err(_) => (bytes.len(), 0),
        };
        match std::str::from_utf8(&bytes[..done]) {
            Ok(s) => self
                .inner
                .write_all(crate::sanitize::json_safe(s).as_bytes())?,
            Err(_) => self.inner.write_all(&bytes[..done])?,
        }
        self.carry.extend_from_slice(&bytes[bytes.len() - rest..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `report`: a scenario's worksheet.
pub struct ReportDoc<'a> {
    /// The evaluated scenario.
    pub report: &'a crate::core::Report,
    /// The model path the llama.cpp command names.
    pub model_path: &'a str,
    /// Ollama's plan, for an `ollama:NAME` model.
    pub ollama: Option<&'a crate::workspace::OllamaRun>,
}

impl Export for ReportDoc<'_> {
    fn schema(&self) -> &'static str {
        super::json::SCHEMA
    }
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut j = super::to_json(self.report, self.model_path);
        j.ollama = self.ollama.map(super::json::OllamaJson::from);
        json_to(&j, w)
    }
    fn write_styled(&self, style: Style, mut w: &mut dyn Write) -> io::Result<()> {
        super::text::write_worksheet_with(self.report, self.model_path, self.ollama, style, &mut w)
    }
}

/// `check`: a claimed rate against every ceiling.
impl Export for crate::core::ClaimCheck {
    fn schema(&self) -> &'static str {
        super::json::CLAIM_SCHEMA
    }
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        json_to(&super::json::ClaimJson::from(self), w)
    }
    fn write_styled(&self, style: Style, mut w: &mut dyn Write) -> io::Result<()> {
        super::write_check(self, style, &mut w)
    }
}

#[cfg(test)]
mod json_safe_tests {
    use super::*;

    #[test]
    fn a_character_split_between_writes_is_still_escaped() {
        let text = "{\"n\": \"a\u{202e}b\u{85}c\"}";
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            let mut out = Vec::new();
            let mut w = JsonSafe::new(&mut out);
            w.write_all(&bytes[..cut]).unwrap();
            w.write_all(&bytes[cut..]).unwrap();
            w.finish().unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "{\"n\": \"a\\u202eb\\u0085c\"}",
                "cut at {cut}"
            );
        }
    }
}
