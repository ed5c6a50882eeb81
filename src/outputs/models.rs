//! `llmbound models`: the library as text, Markdown or JSON. The rows are data
//! (`LibraryRow`), serialised for JSON and worded once here for the text tables.
//! Depends on: build, compare, core, library, profile, report, sanitize, workspace.

use crate::core::scenario::Scenario;
use crate::core::units::{fmt_rate, fmt_tokens};
use crate::library::{self, Row, Scanned, SortKey};
use crate::sanitize;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// JSON schema name of `llmbound models --format json`.
pub const SCHEMA: &str = "llmbound-models/1";

/// The flags of `llmbound models` besides the scenario's.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ModelsArgs {
    /// Also look in this folder (repeatable).
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Only the folders given with --dir (skip the HF cache, Ollama, LM Studio, llama.cpp).
    #[arg(long = "only-dirs")]
    pub only_dirs: bool,
    /// Row order.
    #[arg(long, value_enum, default_value_t = SortKey::Fit)]
    pub sort: SortKey,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = LibFormat::Text)]
    pub format: LibFormat,
}

/// Output format of `llmbound models`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LibFormat {
    /// Aligned text.
    #[default]
    Text,
    /// A Markdown table.
    Markdown,
    /// JSON for scripts.
    Json,
}

/// One model as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryRow {
    /// Display name.
    pub name: String,
    /// Where it was found.
    pub store: library::Store,
    /// The file opened (first shard, Ollama blob).
    pub path: String,
    /// What `--gguf` takes to open it (`ollama:NAME` for an Ollama model, else the path).
    pub gguf: String,
    /// Shard files.
    pub shards: u32,
    /// Attached projector file.
    pub mmproj: Option<String>,
    /// The runtime its figures are for: `llama.cpp` (a GGUF; `gguf` opens it) or `MLX-LM` (a
    /// safetensors folder; `report --model-dir PATH` gives its plan).
    pub runtime: &'static str,
    /// `general.architecture` (a safetensors model's `model_type`).
    pub architecture: Option<String>,
    /// W: Σ shard bytes, exact (provenance file).
    pub file_bytes: Option<u64>,
    /// W plus the projector, bytes, as the scenario counts it.
    pub weights_bytes: Option<u64>,
    /// Tensor types by share of tensor bytes.
    pub quant_mix: String,
    /// W + K + A fits every used tier at the scenario's context.
    pub fits: Option<bool>,
    /// M − W − K − A, bytes.
    pub headroom_bytes: Option<i128>,
    /// Largest context per sequence that fits (null: unlimited or not evaluated).
    pub max_context_tokens: Option<u64>,
    /// Decode ceiling at short context, tokens/s: from the tensor inventory, an upper bound
    /// (never a benchmark), unless `decode_ceiling_is_upper_bound` is false.
    pub decode_ceiling_short_tokens_per_second: Option<f64>,
    /// Decode ceiling at the scenario's context, tokens/s, the figure rows are ranked by.
    pub decode_ceiling_tokens_per_second: Option<f64>,
    /// The decode ceilings are counted from the tensor inventory (upper bounds); false: file
    /// mode, the rate if every byte of the file is read per token (not an upper bound).
    pub decode_ceiling_is_upper_bound: Option<bool>,
    /// File mode at the scenario's context: the rate if every byte of the file is read per
    /// token, tokens/s (conditional, not an upper bound).
    pub every_byte_read_tokens_per_second: Option<f64>,
    /// `-ngl` the model was evaluated at on this machine: all layers, or the most that fit
    /// (null: the machine has no accelerator and host tier).
    pub gpu_layers: Option<u32>,
    /// Why the model could not be read or evaluated.
    pub error: Option<String>,
    /// What opening the file warned about (as `report` and `inspect` print it).
    pub warnings: Vec<String>,
}

/// The whole listing as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryJson {
    /// `llmbound-models/1`.
    pub schema: &'static str,
    /// llmbound version.
    pub version: &'static str,
    /// Machine profile id.
    pub machine: String,
    /// Context per sequence N.
    pub context_tokens: u64,
    /// K cache type.
    pub cache_type_k: String,
    /// V cache type.
    pub cache_type_v: String,
    /// Folders searched.
    pub searched: Vec<String>,
    /// Models in order.
    pub models: Vec<LibraryRow>,
    /// Manifests or files that could not be used.
    pub problems: Vec<String>,
}

/// The data rows in order.
pub fn rows_json(scanned: &[Scanned], rows: &[Row]) -> Vec<LibraryRow> {
    rows.iter()
        .map(|r| {
            let s = &scanned[r.index];
            let f = r.outcome.as_ref().ok();
            LibraryRow {
                name: s.found.name.clone(),
                store: s.found.store,
                path: s.found.path.display().to_string(),
                gguf: s.found.spec.display().to_string(),
                shards: s.found.shards,
                mmproj: s.found.mmproj.as_ref().map(|p| p.display().to_string()),
                runtime: s.found.runtime.name(),
                architecture: Some(s.architecture()).filter(|a| !a.is_empty()),
                file_bytes: s.file_bytes(),
                weights_bytes: f.map(|_| r.weights_bytes),
                quant_mix: s.quant_mix(),
                fits: f.map(|f| f.fits),
                headroom_bytes: f.map(|f| f.headroom_bytes),
                max_context_tokens: f.and_then(|f| f.max_context_tokens),
                decode_ceiling_short_tokens_per_second: f
                    .map(|f| f.ceiling_short_tokens_per_second),
                decode_ceiling_tokens_per_second: f.map(|f| f.ceiling_tokens_per_second),
                decode_ceiling_is_upper_bound: f.map(|f| f.ceiling_is_upper_bound),
                every_byte_read_tokens_per_second: f.map(|f| f.full_tokens_per_second),
                gpu_layers: f.and_then(|f| f.gpu_layers),
                error: r.outcome.as_ref().err().cloned(),
                warnings: r.warnings.clone(),
            }
        })
        .collect()
}

/// Text cells of one row: name, store, arch, size, quants, fits, max ctx, ceiling.
pub fn cells(s: &Scanned, r: &Row) -> [String; 8] {
    let f = r.outcome.as_ref().ok();
    let mm = if s.found.mmproj.is_some() {
        " +mmproj"
    } else {
        ""
    };
    let shards = if s.found.shards > 1 {
        format!(" ({} files)", s.found.shards)
    } else {
        String::new()
    };
    // A file that opened only with a warning is marked (the warnings follow the table).
    let warned = if r.warnings.is_empty() { "" } else { " (!)" };
    // A safetensors model's figures are MLX-LM's.
    let runtime = match s.found.runtime {
        crate::core::mlx::Runtime::MlxLm => " [MLX-LM]",
        crate::core::mlx::Runtime::LlamaCpp => "",
    };
    [
        sanitize::text(&format!("{}{shards}{mm}{runtime}{warned}", s.found.name)).into_owned(),
        s.found.store.label().to_string(),
        sanitize::text(&s.architecture()).into_owned(),
        // Bytes in the binary unit that shows them: a tiny file never reads `0.000 GB`.
        s.file_bytes()
            .map(crate::core::units::fmt_binary)
            .unwrap_or_else(|| "-".into()),
        sanitize::text(&s.quant_mix()).into_owned(),
        match f {
            Some(f) if f.fits => placement_note("fits", f),
            Some(f) => placement_note("no", f),
            None => "error".into(),
        },
        f.map(|f| match f.max_context_tokens {
            Some(0) => "none".into(),
            Some(n) if f.max_context_exceeds_native => format!("{}*", fmt_tokens(n)),
            Some(n) => fmt_tokens(n),
            None => "unlimited".into(),
        })
        .unwrap_or_else(|| "-".into()),
        f.map(|f| {
            if f.ceiling_is_upper_bound {
                fmt_rate(f.ceiling_tokens_per_second)
            } else {
                format!(
                    "{} if every byte is read",
                    fmt_rate(f.ceiling_tokens_per_second)
                )
            }
        })
        .unwrap_or_else(|| "-".into()),
    ]
}

/// "fits" / "no", with the placement when not every layer is on the accelerators.
fn placement_note(verdict: &str, f: &crate::compare::CompareFigures) -> String {
    match f.gpu_layers {
        Some(n) if n < f.all_gpu_layers => format!("{verdict} at -ngl {n}/{}", f.all_gpu_layers),
        _ => verdict.to_string(),
    }
}

/// Column titles of the table.
pub const HEADERS: [&str; 8] = [
    "model",
    "store",
    "arch",
    "file",
    "quant mix",
    "fits",
    "max context",
    "decode ceiling tok/s",
];

/// The listing of `llmbound models` as a document with three renderings.
pub struct ModelsDoc<'a> {
    /// The scenario every model is evaluated on.
    pub base: &'a Scenario,
    /// Folders searched.
    pub searched: &'a [String],
    /// Models found and read.
    pub scanned: &'a [Scanned],
    /// Rows in order.
    pub rows: &'a [Row],
    /// Manifests or files that could not be used.
    pub problems: &'a [String],
}

impl crate::report::Export for ModelsDoc<'_> {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn write_json(&self, mut w: &mut dyn Write) -> std::io::Result<()> {
        write(self, LibFormat::Json, &mut w)
    }
    fn write_styled(
        &self,
        style: crate::report::Style,
        mut w: &mut dyn Write,
    ) -> std::io::Result<()> {
        let f = if style == crate::report::Style::Markdown {
            LibFormat::Markdown
        } else {
            LibFormat::Text
        };
        write(self, f, &mut w)
    }
}

impl From<LibFormat> for crate::report::Format {
    fn from(f: LibFormat) -> Self {
        match f {
            LibFormat::Text => crate::report::Format::Text,
            LibFormat::Markdown => crate::report::Format::Markdown,
            LibFormat::Json => crate::report::Format::Json,
        }
    }
}

/// Write the listing in one format (called through [`crate::report::render`]).
fn write(doc: &ModelsDoc, format: LibFormat, out: &mut impl Write) -> std::io::Result<()> {
    let ModelsDoc {
        base,
        searched,
        scanned,
        rows,
        problems,
    } = *doc;
    if format == LibFormat::Json {
        let j = LibraryJson {
            schema: SCHEMA,
            version: env!("CARGO_PKG_VERSION"),
            machine: base.machine.id.clone(),
            context_tokens: base.cache.context,
            cache_type_k: base.cache.type_k.name().to_string(),
            cache_type_v: base.cache.type_v.name().to_string(),
            searched: searched.to_vec(),
            models: rows_json(scanned, rows),
            problems: problems.to_vec(),
        };
        return crate::report::export::json_to(&j, out);
    }
    let title = format!(
        "{} model{} on {} at context {} per sequence (K {}, V {}), each at its own placement (every layer on the GPU, or the most that fit: -ngl n/all); decode ceilings from the tensor inventory are upper bounds, never benchmarks; sizes in binary units (KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes); * = above the model's native context",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        base.machine.name,
        fmt_tokens(base.cache.context),
        base.cache.type_k.name(),
        base.cache.type_v.name()
    );
    let table: Vec<[String; 8]> = rows.iter().map(|r| cells(&scanned[r.index], r)).collect();
    if format == LibFormat::Markdown {
        writeln!(out, "{title}\n")?;
        writeln!(out, "| {} |", HEADERS.join(" | "))?;
        writeln!(out, "|{}", "---|".repeat(HEADERS.len()))?;
        for c in &table {
            let esc: Vec<_> = c.iter().map(|x| sanitize::markdown(x)).collect();
            writeln!(out, "| {} |", esc.join(" | "))?;
        }
    } else {
        writeln!(out, "{title}")?;
        let mut w = HEADERS.map(|h| h.chars().count());
        for c in &table {
            for (i, x) in c.iter().enumerate() {
                w[i] = w[i].max(x.chars().count());
            }
        }
        let line = |c: &[String]| {
            let mut s = String::new();
            for (i, x) in c.iter().enumerate() {
                let pad = w[i] - x.chars().count();
                // Numbers right-aligned.
                if matches!(i, 3 | 6 | 7) {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(x);
                } else {
                    s.push_str(x);
                    s.push_str(&" ".repeat(pad));
                }
                s.push_str("  ");
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&HEADERS.map(String::from)))?;
        for c in &table {
            writeln!(out, "{}", line(c))?;
        }
    }
    for r in rows {
        if let Err(e) = &r.outcome {
            writeln!(
                out,
                "{}: {}",
                sanitize::text(&scanned[r.index].found.name),
                sanitize::text(e)
            )?;
        }
        for wn in &r.warnings {
            writeln!(
                out,
                "{} (!): warning: {}",
                sanitize::text(&scanned[r.index].found.name),
                sanitize::text(wn)
            )?;
        }
    }
    for p in problems {
        writeln!(out, "skipped: {}", sanitize::text(p))?;
    }
    if rows.is_empty() {
        writeln!(
            out,
            "no GGUF models found in: {}; add a folder with --dir DIR (repeatable)",
            if searched.is_empty() {
                "(nothing to search)".to_string()
            } else {
                searched.join(", ")
            }
        )?;
    }
    Ok(())
}

/// Run `llmbound models`: discover, scan, evaluate on `base`, sort, write.
pub fn run_cli(
    cat: &crate::profile::Catalog,
    base: &Scenario,
    args: &ModelsArgs,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let roots = library::roots(&args.dirs, !args.only_dirs);
    let searched: Vec<String> = roots
        .iter()
        .filter(|(_, p)| p.is_dir())
        .map(|(_, p)| p.display().to_string())
        .collect();
    let (found, problems) = library::discover(&roots);
    let scanned = library::scan(cat, found);
    let mut rows = library::evaluate(base, &scanned);
    library::sort(&mut rows, &scanned, args.sort);
    let doc = ModelsDoc {
        base,
        searched: &searched,
        scanned: &scanned,
        rows: &rows,
        problems: &problems,
    };
    crate::report::render(&doc, args.format.into(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_listing_says_how_to_add_a_folder() {
        let cat = crate::profile::Catalog::builtin();
        let base =
            crate::workspace::scenario(&cat, &crate::build::ScenarioOptions::default()).unwrap();
        let doc = ModelsDoc {
            base: &base,
            searched: &["/nowhere".to_string()],
            scanned: &[],
            rows: &[],
            problems: &[],
        };
        let mut out = Vec::new();
        crate::report::render(&doc, crate::report::Format::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("no GGUF models found in: /nowhere; add a folder with --dir DIR"),
            "{text}"
        );
    }
}
