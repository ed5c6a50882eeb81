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
/// carries them raw.
pub fn json_to<T: serde::Serialize + ?Sized>(value: &T, w: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(64 * 1024);
    serde_json::to_writer_pretty(&mut buf, value)?;
    match String::from_utf8(buf) {
        Ok(s) => w.write_all(crate::sanitize::json_safe(&s).as_bytes())?,
        Err(e) => w.write_all(e.as_bytes())?,
    }
    writeln!(w)
}

/// `report`: a scenario's worksheet.
pub struct ReportDoc<'a> {
    /// The evaluated scenario.
    pub report: &'a crate::core::Report,
    /// The model path the llama.cpp command names.
    pub model_path: &'a str,
}

impl Export for ReportDoc<'_> {
    fn schema(&self) -> &'static str {
        super::json::SCHEMA
    }
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        json_to(&super::to_json(self.report, self.model_path), w)
    }
    fn write_styled(&self, style: Style, mut w: &mut dyn Write) -> io::Result<()> {
        super::write_worksheet(self.report, self.model_path, style, &mut w)
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
