//! The JSON form of a `BenchReport`: serde structs that fix the field names of the contract.
//! Built from the report; no arithmetic beyond picking fields.

use super::eval::{BandwidthFigure, BenchReport, CeilingFigure, RowReport};
use crate::report::words;
use serde::Serialize;

/// Document kind and version of `bench --format json`.
pub const SCHEMA: &str = "llmbound-bench/1";
use std::io::{self, Write};

/// The whole import.
#[derive(Debug, Serialize)]
pub struct BenchJson<'a> {
    /// Document kind and its version: "llmbound-bench/1".
    pub schema: &'static str,
    /// llmbound version.
    pub version: &'static str,
    /// The import's headline (the same sentence as the text report's verdict).
    pub headline: String,
    /// Base scenario name.
    pub scenario: &'a str,
    /// Machine profile id.
    pub machine: &'a str,
    /// Machine display name.
    pub machine_name: &'a str,
    /// Model display name.
    pub model: &'a str,
    /// Artifact: the GGUF given, or the profile's file name.
    pub artifact: &'a str,
    /// The model shape and inventory came from the GGUF.
    pub artifact_from_gguf: bool,
    /// A tensor inventory is known, so the highest ceiling can call a rate impossible.
    pub has_inventory: bool,
    /// Files read.
    pub files: &'a [String],
    /// Bandwidth of the highest ceilings (the highest on record), bytes/s.
    pub bandwidth_bytes_per_second: Option<f64>,
    /// Its provenance (spec, measured, user, ...).
    pub bandwidth_provenance: Option<&'static str>,
    /// Its citation.
    pub bandwidth_source: Option<&'a str>,
    /// The tier.
    pub bandwidth_tier: Option<&'a str>,
    /// The headline bandwidth (measured when the profile has one), bytes/s.
    pub headline_bandwidth_bytes_per_second: Option<f64>,
    /// Its provenance.
    pub headline_bandwidth_provenance: Option<&'static str>,
    /// Every row (each built as it is written, so 200,000 rows are never held as JSON structs).
    pub rows: RowsJson<'a>,
    /// The run's artifacts against the scenario's.
    pub artifacts: Vec<ArtifactJson<'a>>,
    /// docs/bounds.md §8 fields the files have.
    pub record_fields_present: Vec<RecordJson<'a>>,
    /// docs/bounds.md §8 fields the files lack (names only).
    pub missing_record_fields: Vec<&'a str>,
    /// Why each is missing.
    pub missing_record_details: Vec<RecordJson<'a>>,
    /// Notes and the rows (1-based) they apply to.
    pub notes: Vec<NoteJson<'a>>,
    /// Decode rows above their highest ceiling.
    pub impossible_rows: usize,
    /// Decode rows above a lower ceiling only.
    pub rows_above_lower_ceiling: usize,
    /// Decode rows above every ceiling computed without an inventory (undecided).
    pub rows_above_without_inventory: usize,
    /// Decode rows above the highest ceiling whose run used another artifact (not judged).
    pub rows_above_other_artifact: usize,
    /// Decode rows above a highest ceiling built only on measured bandwidths (not impossible).
    pub rows_above_measured_ceiling: usize,
    /// 3 when a row is impossible, else 0.
    pub exit_code: i32,
}

/// The rows of a report, serialised one `RowJson` at a time.
#[derive(Debug, Clone, Copy)]
pub struct RowsJson<'a>(pub &'a [RowReport]);

impl Serialize for RowsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().enumerate().map(|(i, x)| row_json(i + 1, x)))
    }
}

/// One row.
#[derive(Debug, Serialize)]
pub struct RowJson<'a> {
    /// 1-based position in the report.
    pub index: usize,
    /// File it was read from.
    pub file: &'a str,
    /// 1-based row within the file.
    pub row: usize,
    /// Line where the row starts.
    pub line: usize,
    /// "pp", "tg" or "pg".
    pub test: &'static str,
    /// llama-bench's test name ("tg128 @ d4096").
    pub name: &'a str,
    /// `n_prompt`.
    pub n_prompt: u64,
    /// `n_gen`.
    pub n_gen: u64,
    /// `n_depth`.
    pub n_depth: u64,
    /// K cache type.
    pub type_k: &'a str,
    /// V cache type.
    pub type_v: &'a str,
    /// "auto", "on", "off" or null.
    pub flash_attn: Option<&'static str>,
    /// `n_gpu_layers`.
    pub n_gpu_layers: Option<i64>,
    /// `n_threads`.
    pub n_threads: Option<u64>,
    /// `avg_ts`, tokens/s.
    pub observed_tokens_per_second: f64,
    /// max(`samples_ts`), tokens/s.
    pub best_sample_tokens_per_second: Option<f64>,
    /// `stddev_ts`, tokens/s.
    pub stddev_tokens_per_second: Option<f64>,
    /// Retained tokens of the evaluated scenario.
    pub retained_tokens: Option<u64>,
    /// The highest (inventory-mode) decode ceiling, tokens/s; null for pp/pg and without an inventory.
    pub ceiling_tokens_per_second: Option<f64>,
    /// Its ms/token.
    pub ceiling_ms_per_token: Option<f64>,
    /// Its Q_step, bytes.
    pub ceiling_step_bytes: Option<u64>,
    /// Its W_read, bytes.
    pub ceiling_weight_read_bytes: Option<u64>,
    /// Its K_read, bytes.
    pub ceiling_kv_read_bytes: Option<u64>,
    /// Its bandwidth, bytes/s.
    pub ceiling_bandwidth_bytes_per_second: Option<f64>,
    /// Its bandwidth's provenance.
    pub ceiling_bandwidth_provenance: Option<&'static str>,
    /// Without an inventory: the highest ceiling from file bytes (cannot decide), tokens/s.
    pub ceiling_without_inventory_tokens_per_second: Option<f64>,
    /// Inventory mode at the headline bandwidth, tokens/s.
    pub headline_ceiling_tokens_per_second: Option<f64>,
    /// File mode (W_read = W) at the headline bandwidth, tokens/s.
    pub file_ceiling_tokens_per_second: Option<f64>,
    /// observed / ceiling_tokens_per_second.
    pub efficiency: Option<f64>,
    /// observed / headline_ceiling_tokens_per_second.
    pub headline_efficiency: Option<f64>,
    /// observed / file_ceiling_tokens_per_second.
    pub file_efficiency: Option<f64>,
    /// At or below the row's ceiling: decode rows the highest ceiling (from file bytes when
    /// there is no inventory, which cannot make a row impossible), pp rows the prefill ceiling;
    /// null where there is none (pg rows, pp rows without a compute rate).
    pub within_ceiling: Option<bool>,
    /// Above the highest ceiling with an inventory and a matching artifact.
    pub impossible: bool,
    /// Above a highest ceiling built only on measured bandwidths (not impossible).
    pub above_measured_ceiling: bool,
    /// Lower ceilings the rate is above.
    pub exceeded: Vec<ExceededJson>,
    /// Above the highest ceiling: what must be false.
    pub assumptions: Vec<String>,
    /// One-line verdict.
    pub verdict: Option<String>,
    /// Where the decode row lands: within, above-lower-ceiling, above-measured-ceiling,
    /// above-without-inventory, other-artifact or impossible.
    pub outcome: Option<&'static str>,
    /// Prefill intensity F/Q, FLOP/byte (pp rows).
    pub prefill_intensity_flop_per_byte: Option<f64>,
    /// Machine balance C/BW, FLOP/byte (pp rows with a compute rate).
    pub machine_balance_flop_per_byte: Option<f64>,
    /// Prefill ceiling, tokens/s (pp rows with a compute rate).
    pub prefill_ceiling_tokens_per_second: Option<f64>,
    /// observed / prefill ceiling.
    pub prefill_efficiency: Option<f64>,
    /// "compute" or "bandwidth".
    pub prefill_limited_by: Option<&'static str>,
    /// Compute path of the prefill bound.
    pub compute_path: Option<&'a str>,
    /// Why there is no prefill ceiling, or what limits it.
    pub prefill_reason: Option<String>,
    /// The run's artifact matches the scenario's.
    pub artifact_matches: bool,
    /// Notes on the matching.
    pub notes: &'a [String],
    /// Why the row could not be evaluated.
    pub error: Option<&'a str>,
}

/// A lower ceiling exceeded.
#[derive(Debug, Serialize)]
pub struct ExceededJson {
    /// Which ceiling.
    pub ceiling: String,
    /// Its value, tokens/s.
    pub tokens_per_second: f64,
    /// What must be false.
    pub assumptions: Vec<String>,
}

/// An artifact comparison.
#[derive(Debug, Serialize)]
pub struct ArtifactJson<'a> {
    /// `model_size`, bytes.
    pub model_size: u64,
    /// `model_n_params`.
    pub model_n_params: u64,
    /// Agrees with the scenario's artifact.
    pub matches: bool,
    /// What was compared.
    pub detail: &'a str,
    /// Rows.
    pub rows: &'a [usize],
}

/// A record field.
#[derive(Debug, Serialize)]
pub struct RecordJson<'a> {
    /// docs/bounds.md §8 name.
    pub field: &'a str,
    /// Value.
    pub value: Option<&'a str>,
    /// Source or reason.
    pub note: &'a str,
}

/// A note.
#[derive(Debug, Serialize)]
pub struct NoteJson<'a> {
    /// Text.
    pub text: &'a str,
    /// Rows.
    pub rows: &'a [usize],
}

fn bw_parts(
    b: Option<&BandwidthFigure>,
) -> (
    Option<f64>,
    Option<&'static str>,
    Option<&str>,
    Option<&str>,
) {
    match b {
        Some(b) => (
            Some(b.bytes_per_second),
            Some(b.provenance.label()),
            Some(b.source.as_str()),
            Some(b.tier.as_str()),
        ),
        None => (None, None, None, None),
    }
}

fn row_json(index: usize, r: &RowReport) -> RowJson<'_> {
    let d = r.decode.as_ref();
    let c: Option<&CeilingFigure> = d.and_then(|d| d.ceiling.as_deref());
    let p = r.prefill.as_ref();
    let within = match (d, p) {
        (Some(d), _) => Some(d.within_ceiling),
        (None, Some(p)) => p.within_ceiling,
        _ => None,
    };
    RowJson {
        index,
        file: &r.source.file,
        row: r.source.row,
        line: r.source.line,
        test: r.test.label(),
        name: &r.name,
        n_prompt: r.n_prompt,
        n_gen: r.n_gen,
        n_depth: r.n_depth,
        type_k: &r.type_k,
        type_v: &r.type_v,
        flash_attn: r.flash_attn.map(|f| f.label()),
        n_gpu_layers: r.n_gpu_layers,
        n_threads: r.n_threads,
        observed_tokens_per_second: r.observed_tokens_per_second,
        best_sample_tokens_per_second: r.best_sample_tokens_per_second,
        stddev_tokens_per_second: r.stddev_tokens_per_second,
        retained_tokens: r.retained_tokens,
        ceiling_tokens_per_second: c.map(|c| c.tokens_per_second),
        ceiling_ms_per_token: c.map(|c| c.ms_per_token),
        ceiling_step_bytes: c.map(|c| c.step_bytes),
        ceiling_weight_read_bytes: c.map(|c| c.weight_read_bytes),
        ceiling_kv_read_bytes: c.map(|c| c.kv_read_bytes),
        ceiling_bandwidth_bytes_per_second: c.map(|c| c.bandwidth.bytes_per_second),
        ceiling_bandwidth_provenance: c.map(|c| c.bandwidth.provenance.label()),
        ceiling_without_inventory_tokens_per_second: d
            .and_then(|d| d.ceiling_without_inventory.as_ref())
            .map(|c| c.tokens_per_second),
        headline_ceiling_tokens_per_second: d
            .and_then(|d| d.headline_ceiling.as_ref())
            .map(|c| c.tokens_per_second),
        file_ceiling_tokens_per_second: d.map(|d| d.file_ceiling.tokens_per_second),
        efficiency: d.and_then(|d| d.efficiency),
        headline_efficiency: d.and_then(|d| d.headline_efficiency),
        file_efficiency: d.map(|d| d.file_efficiency),
        within_ceiling: within,
        impossible: d.is_some_and(|d| d.impossible),
        above_measured_ceiling: d.is_some_and(|d| d.above_measured_ceiling),
        exceeded: d
            .map(|d| {
                d.exceeded
                    .iter()
                    .map(|e| ExceededJson {
                        ceiling: words::ceiling_name(e.kind, e.context_tokens),
                        tokens_per_second: e.tokens_per_second,
                        assumptions: words::assumptions(&e.assumptions),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        assumptions: d.map_or_else(Vec::new, |d| words::assumptions(&d.assumptions)),
        verdict: d.map(super::text::row_verdict),
        outcome: d.map(|d| d.outcome.label()),
        prefill_intensity_flop_per_byte: p.map(|p| p.intensity),
        machine_balance_flop_per_byte: p.and_then(|p| p.machine_balance),
        prefill_ceiling_tokens_per_second: p.and_then(|p| p.ceiling_tokens_per_second),
        prefill_efficiency: p.and_then(|p| p.efficiency),
        prefill_limited_by: p.and_then(|p| p.limited_by.map(|l| l.label())),
        compute_path: p.map(|p| &*p.compute_path),
        prefill_reason: p.map(|p| words::prefill_bound(p.bound, p.prompt_rows, &p.compute_path)),
        artifact_matches: r.artifact_matches,
        notes: &r.notes,
        error: r.error.as_deref(),
    }
}

impl<'a> From<&'a BenchReport> for BenchJson<'a> {
    fn from(r: &'a BenchReport) -> Self {
        let (bw, bwp, bws, bwt) = bw_parts(r.bandwidth.as_ref());
        let (hbw, hbwp, _, _) = bw_parts(r.headline_bandwidth.as_ref());
        let rec = |f: &'a super::eval::RecordField| RecordJson {
            field: &f.field,
            value: f.value.as_deref(),
            note: &f.note,
        };
        BenchJson {
            schema: SCHEMA,
            version: env!("CARGO_PKG_VERSION"),
            headline: super::text::headline(r),
            scenario: &r.scenario,
            machine: &r.machine_id,
            machine_name: &r.machine_name,
            model: &r.model,
            artifact: &r.artifact,
            artifact_from_gguf: r.from_gguf,
            has_inventory: r.has_inventory,
            files: &r.files,
            bandwidth_bytes_per_second: bw,
            bandwidth_provenance: bwp,
            bandwidth_source: bws,
            bandwidth_tier: bwt,
            headline_bandwidth_bytes_per_second: hbw,
            headline_bandwidth_provenance: hbwp,
            rows: RowsJson(&r.rows),
            artifacts: r
                .artifacts
                .iter()
                .map(|a| ArtifactJson {
                    model_size: a.model_size,
                    model_n_params: a.model_n_params,
                    matches: a.matches,
                    detail: &a.detail,
                    rows: &a.rows,
                })
                .collect(),
            record_fields_present: r.record_present.iter().map(rec).collect(),
            missing_record_fields: r.record_missing.iter().map(|f| f.field.as_str()).collect(),
            missing_record_details: r.record_missing.iter().map(rec).collect(),
            notes: r
                .notes
                .iter()
                .map(|n| NoteJson {
                    text: &n.text,
                    rows: &n.rows,
                })
                .collect(),
            impossible_rows: r.impossible_rows,
            rows_above_lower_ceiling: r.rows_above_lower_ceiling,
            rows_above_without_inventory: r.rows_above_without_inventory,
            rows_above_other_artifact: r.rows_above_other_artifact,
            rows_above_measured_ceiling: r.rows_above_measured_ceiling,
            exit_code: r.exit_code(),
        }
    }
}

/// Write the report as pretty JSON followed by a newline.
pub fn write_json(r: &BenchReport, w: &mut impl Write) -> io::Result<()> {
    // serde_json writes every key, number and indent separately: a buffer of its own type
    // keeps those small writes inlined instead of each going through the caller's writer
    // (often a `dyn Write`).
    // C1 controls and bidi overrides from the bench file are escaped as in every JSON output.
    let mut b =
        io::BufWriter::with_capacity(64 * 1024, crate::report::export::JsonSafe::new(&mut *w));
    serde_json::to_writer_pretty(&mut b, &BenchJson::from(r)).map_err(io::Error::other)?;
    writeln!(b)?;
    b.flush()?;
    b.into_inner().map_err(|e| e.into_error())?.finish()
}

impl crate::report::Export for BenchReport {
    fn schema(&self) -> &'static str {
        SCHEMA
    }
    fn write_json(&self, mut w: &mut dyn Write) -> io::Result<()> {
        write_json(self, &mut w)
    }
    fn write_styled(&self, style: crate::report::Style, mut w: &mut dyn Write) -> io::Result<()> {
        match style {
            crate::report::Style::Text => super::text::write_text(self, &mut w),
            crate::report::Style::Markdown => super::text::write_markdown(self, &mut w),
        }
    }
}
