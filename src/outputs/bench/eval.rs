//! Holding llama-bench rows against the bounds: each row becomes a scenario (the base scenario
//! with the row's cache types, placement and retained length), `core::evaluate` gives its
//! ceilings, and the observed rate is compared with them (docs/bounds.md §4, §5, §8). No I/O.

use super::parse::{BenchRow, FlashAttn, RowSource, TestKind};
use crate::compare::evaluation as evaluate_scenario;
use crate::core::cache::CacheType;
use crate::core::claim::{Assumption, ClaimOutcome};
use crate::core::decode::{Ceiling, CeilingKind};
use crate::core::edit::Edit;
use crate::core::roofline::{LimitedBy, PrefillBound};
use crate::core::scenario::{Scenario, TierKind};
use crate::core::units::{self, Provenance};
use crate::core::{Report, check_claim};
use compact_str::CompactString;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

/// What the caller knows about the artifact beyond the base scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchOptions {
    /// The base scenario's model shape and inventory were read from this GGUF (`--gguf`).
    pub gguf: Option<String>,
    /// SHA-256 of that artifact, when the caller hashed it (fills the record's artifact hash).
    pub artifact_sha256: Option<String>,
}

/// A bandwidth figure and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthFigure {
    /// Bytes/s.
    pub bytes_per_second: f64,
    /// Provenance of the figure.
    pub provenance: Provenance,
    /// Its citation (document, date, method).
    pub source: String,
    /// The tier it belongs to.
    pub tier: String,
}

/// One decode ceiling as the import reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct CeilingFigure {
    /// Aggregate ceiling, tokens/s (one sequence: the per-sequence ceiling).
    pub tokens_per_second: f64,
    /// Time per token at the ceiling, ms.
    pub ms_per_token: f64,
    /// Q_step = W_read + K_read, bytes per token.
    pub step_bytes: u64,
    /// W_read, bytes per token.
    pub weight_read_bytes: u64,
    /// K_read at the retained length, bytes per token.
    pub kv_read_bytes: u64,
    /// Bandwidth of the tier moving the most bytes.
    pub bandwidth: BandwidthFigure,
    /// Weakest provenance among the ceiling's inputs.
    pub provenance: Provenance,
    /// The perfect-overlap rate across several tiers was used (the highest ceiling's deciding rate).
    pub overlapped: bool,
}

/// A lower ceiling a decode rate is above.
#[derive(Debug, Clone, PartialEq)]
pub struct ExceededCeiling {
    /// Which ceiling.
    pub kind: CeilingKind,
    /// Retained tokens it is computed at (0: short context).
    pub context_tokens: u64,
    /// Its value, tokens/s.
    pub tokens_per_second: f64,
    /// What must be false for a rate above it.
    pub assumptions: Vec<Assumption>,
}

/// Where one decode row lands: core's claim outcome, except that a rate above the highest
/// ceiling of a run that used another artifact is not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowOutcome {
    /// Core's outcome for the row's rate.
    Claim(ClaimOutcome),
    /// Above the highest ceiling, but the run's artifact differs from the scenario's.
    OtherArtifact,
}

impl RowOutcome {
    /// A stable lower-case label for JSON.
    pub fn label(self) -> &'static str {
        match self {
            RowOutcome::Claim(o) => o.label(),
            RowOutcome::OtherArtifact => "other-artifact",
        }
    }
}

/// An observed decode rate against its ceilings. The ceiling figures are shared by every
/// row of the same scenario (`Arc`): they do not depend on the observed rate.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeComparison {
    /// The observed rate held against the ceilings (`avg_ts`), tokens/s.
    pub observed_tokens_per_second: f64,
    /// The highest ceiling (inventory bytes, fewest experts, highest bandwidth on record, at
    /// the retained mean): the one that can call a rate impossible. `None` without an inventory.
    pub ceiling: Option<Arc<CeilingFigure>>,
    /// Without an inventory: the highest ceiling from file bytes, which cannot decide.
    pub ceiling_without_inventory: Option<Arc<CeilingFigure>>,
    /// Inventory mode at the headline bandwidth (the measured figure when the profile has one).
    pub headline_ceiling: Option<Arc<CeilingFigure>>,
    /// File mode (W_read = W) at the headline bandwidth, at the retained mean.
    pub file_ceiling: Arc<CeilingFigure>,
    /// observed / highest ceiling.
    pub efficiency: Option<f64>,
    /// observed / inventory ceiling at the headline bandwidth.
    pub headline_efficiency: Option<f64>,
    /// observed / file ceiling.
    pub file_efficiency: f64,
    /// The observed rate is at or below the highest ceiling computed.
    pub within_ceiling: bool,
    /// Above the highest ceiling, with an inventory and the run's artifact matching: a
    /// falsification.
    pub impossible: bool,
    /// Above the highest ceiling, whose bandwidth is measured with no peak on record: the
    /// measured figure does not describe this path (reported, not impossible).
    pub above_measured_ceiling: bool,
    /// Lower ceilings the rate is above (reported, not impossible).
    pub exceeded: Vec<ExceededCeiling>,
    /// Above the highest ceiling: what must then be false.
    pub assumptions: Vec<Assumption>,
    /// Where the row lands (the exporters word it).
    pub outcome: RowOutcome,
    /// Above the highest ceiling at the row's context but within it at a short context: the
    /// most retained tokens per sequence at which the rate is within it
    /// (`core::ClaimCheck::max_context_tokens`).
    pub max_context_tokens: Option<u64>,
    /// The retained tokens per sequence the row is judged at.
    pub context_tokens: u64,
}

/// An observed prompt-processing rate against the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefillComparison {
    /// Prompt rows S (`n_prompt`).
    pub prompt_rows: u64,
    /// Compute path the scenario names.
    pub compute_path: Arc<str>,
    /// Prefill arithmetic intensity F / Q, FLOP/byte.
    pub intensity: f64,
    /// Machine balance C / BW, FLOP/byte (with a compute rate).
    pub machine_balance: Option<f64>,
    /// Prefill ceiling, tokens/s (only with a compute rate for the path).
    pub ceiling_tokens_per_second: Option<f64>,
    /// What limits the ceiling (with one).
    pub limited_by: Option<LimitedBy>,
    /// Why there is no ceiling, or what limits it (the exporters word it).
    pub bound: PrefillBound,
    /// observed / prefill ceiling.
    pub efficiency: Option<f64>,
    /// observed ≤ prefill ceiling (with a ceiling).
    pub within_ceiling: Option<bool>,
}

/// One llama-bench row and what the bounds say about it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowReport {
    /// Where it was read.
    pub source: RowSource,
    /// pp, tg or pg.
    pub test: TestKind,
    /// llama-bench's name for the test (`tg128 @ d4096`).
    pub name: CompactString,
    /// `n_prompt`.
    pub n_prompt: u64,
    /// `n_gen`.
    pub n_gen: u64,
    /// `n_depth`.
    pub n_depth: u64,
    /// K cache type as evaluated.
    pub type_k: CompactString,
    /// V cache type as evaluated.
    pub type_v: CompactString,
    /// `flash_attn`.
    pub flash_attn: Option<FlashAttn>,
    /// `n_gpu_layers` as recorded.
    pub n_gpu_layers: Option<i64>,
    /// `n_threads`.
    pub n_threads: Option<u64>,
    /// `avg_ts`: the mean over repetitions, tokens/s (pg: prompt and generated tokens together).
    pub observed_tokens_per_second: f64,
    /// The best repetition (`max(samples_ts)`), tokens/s.
    pub best_sample_tokens_per_second: Option<f64>,
    /// `stddev_ts`, tokens/s.
    pub stddev_tokens_per_second: Option<f64>,
    /// Retained tokens per sequence of the evaluated scenario: decode n_depth + n_gen / 2 (the
    /// mean over the run), prefill n_depth + n_prompt (at the end of the prompt).
    pub retained_tokens: Option<u64>,
    /// The run's artifact matches the scenario's (tensor bytes and parameters).
    pub artifact_matches: bool,
    /// Decode comparison (tg rows).
    pub decode: Option<DecodeComparison>,
    /// Prefill comparison (pp rows).
    pub prefill: Option<PrefillComparison>,
    /// Notes on how the row was matched to a scenario (shared by the rows of one scenario).
    pub notes: Arc<[String]>,
    /// Why the row could not be evaluated.
    pub error: Option<String>,
}

/// How a run's artifact compares with the scenario's.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactCheck {
    /// `model_size` (Σ tensor bytes).
    pub model_size: u64,
    /// `model_n_params`.
    pub model_n_params: u64,
    /// The run's artifact agrees with the scenario's.
    pub matches: bool,
    /// What was compared and how it came out.
    pub detail: String,
    /// Rows (1-based over the report) with these figures.
    pub rows: Vec<usize>,
}

/// One field of docs/bounds.md §8's measurement record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordField {
    /// The field as docs/bounds.md §8 names it.
    pub field: String,
    /// Its value, when the file has it.
    pub value: Option<String>,
    /// Why it is missing, or where the value comes from.
    pub note: String,
}

/// A note shared by several rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The note.
    pub text: String,
    /// Rows (1-based over the report) it applies to.
    pub rows: Vec<usize>,
}

/// Everything the import found.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// Base scenario name.
    pub scenario: String,
    /// Machine profile id.
    pub machine_id: String,
    /// Machine display name.
    pub machine_name: String,
    /// Model display name.
    pub model: String,
    /// The artifact the scenario names (file label) or the GGUF given.
    pub artifact: String,
    /// The artifact's shape and inventory came from a GGUF.
    pub from_gguf: bool,
    /// The scenario has a tensor inventory, so the highest ceiling can call a rate impossible.
    pub has_inventory: bool,
    /// Files read.
    pub files: Vec<String>,
    /// The bandwidth of the highest ceilings (highest on record for the tier).
    pub bandwidth: Option<BandwidthFigure>,
    /// The headline bandwidth (measured when the profile has one, else stated).
    pub headline_bandwidth: Option<BandwidthFigure>,
    /// Every row, in file order.
    pub rows: Vec<RowReport>,
    /// The run's artifacts against the scenario's.
    pub artifacts: Vec<ArtifactCheck>,
    /// docs/bounds.md §8 fields the files have.
    pub record_present: Vec<RecordField>,
    /// docs/bounds.md §8 fields the files lack (never invented).
    pub record_missing: Vec<RecordField>,
    /// Notes, each with the rows it applies to.
    pub notes: Vec<Note>,
    /// Decode rows above their highest ceiling (a falsification; the CLI exits 3).
    pub impossible_rows: usize,
    /// Decode rows above a lower ceiling only.
    pub rows_above_lower_ceiling: usize,
    /// Decode rows above the highest ceiling computed without an inventory (undecided).
    pub rows_above_without_inventory: usize,
    /// Decode rows above the highest ceiling whose run used another artifact (not judged).
    pub rows_above_other_artifact: usize,
    /// Decode rows above a highest ceiling built only on measured bandwidths (the figure does
    /// not describe the path; not impossible).
    pub rows_above_measured_ceiling: usize,
    /// Distinct row scenarios built and evaluated: pp and tg rows that differ only in their
    /// measured rates share one (not part of the JSON form).
    pub distinct_scenarios: usize,
}

impl BenchReport {
    /// Every decode row is at or below every ceiling (no row above any ceiling).
    pub fn all_within(&self) -> bool {
        self.impossible_rows == 0
            && self.rows_above_lower_ceiling == 0
            && self.rows_above_without_inventory == 0
            && self.rows_above_other_artifact == 0
            && self.rows_above_measured_ceiling == 0
    }

    /// The process exit code a CLI should use: 3 when a row is impossible, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.impossible_rows > 0 {
            crate::exit::IMPOSSIBLE
        } else {
            crate::exit::OK
        }
    }
}

/// Tensor bytes a GGUF header may add to `model_size` (metadata, tokenizer, alignment padding)
/// before a profile artifact and a run are taken to be different files.
pub const MAX_HEADER_BYTES: u64 = 64 << 20;
/// Relative tolerance between an advertised (rounded) parameter count and a counted one.
pub const ADVERTISED_PARAMETER_TOLERANCE: f64 = 0.05;

/// Hold every row against the scenario its settings describe. `base` carries the model, the
/// artifact (and, with `--gguf`, its inventory), the machine and the user's overrides; each row
/// replaces the cache types, flash attention, placement, retained length and prompt rows.
pub fn evaluate(rows: &[BenchRow], base: &Scenario, opts: &BenchOptions) -> BenchReport {
    // Notes and artifacts are found through maps, and each row carries only whether its
    // artifact matched: finding them by scanning (and cloning an artifact's growing row list
    // for every row) made a large file quadratic in its rows.
    let mut notes: Vec<Note> = Vec::new();
    let mut note_index: HashMap<String, usize> = HashMap::new();
    let mut artifacts: Vec<ArtifactCheck> = Vec::new();
    let mut artifact_index: HashMap<(u64, u64), usize> = HashMap::new();
    // Each distinct row scenario is built, evaluated and worded once; its rows share the
    // result (names, notes, ceiling figures) and add only what depends on their own rates.
    let mut prepared: Vec<Prepared> = Vec::new();
    let mut prepared_index: HashMap<RowKey<'_>, usize> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let index = i + 1;
        let a = *artifact_index
            .entry((row.model_size, row.model_n_params))
            .or_insert_with(|| {
                artifacts.push(check_artifact(row, base));
                artifacts.len() - 1
            });
        artifacts[a].rows.push(index);
        let p = *prepared_index.entry(RowKey::of(row)).or_insert_with(|| {
            prepared.push(prepare(row, base));
            prepared.len() - 1
        });
        let p = &mut prepared[p];
        let r = evaluate_row(row, p, artifacts[a].matches);
        // Each note's place in the report is found once per scenario by its text.
        let ids = p.note_ids.get_or_insert_with(|| {
            p.notes
                .iter()
                .map(|n| note_id(&mut notes, &mut note_index, n))
                .collect()
        });
        for &id in ids.iter() {
            add_row(&mut notes[id], index);
        }
        out.push(r);
    }
    for a in artifacts.iter().filter(|a| !a.matches) {
        let id = note_id(&mut notes, &mut note_index, &a.detail);
        for &r in &a.rows {
            add_row(&mut notes[id], r);
        }
    }
    for n in &mut notes {
        // Rows arrive in order except when an artifact note meets a row note of the same text.
        if !n.rows.is_sorted() {
            n.rows.sort_unstable();
            n.rows.dedup();
        }
    }
    let first_decode = out.iter().find_map(|r| r.decode.as_ref());
    let (bandwidth, headline) = match first_decode {
        Some(d) => {
            let highest = d.ceiling.as_ref().or(d.ceiling_without_inventory.as_ref());
            (
                highest.map(|c| c.bandwidth.clone()),
                Some(
                    d.headline_ceiling
                        .as_ref()
                        .unwrap_or(&d.file_ceiling)
                        .bandwidth
                        .clone(),
                ),
            )
        }
        None => base_bandwidths(base),
    };
    let decode_rows = out.iter().filter_map(|r| r.decode.as_ref());
    let (mut impossible, mut lower, mut undecided, mut other) = (0, 0, 0, 0);
    let mut measured = 0;
    for d in decode_rows {
        if d.impossible {
            impossible += 1;
        } else if d.above_measured_ceiling {
            measured += 1;
        } else if !d.within_ceiling && d.ceiling.is_none() {
            undecided += 1;
        } else if !d.within_ceiling {
            other += 1;
        } else if !d.exceeded.is_empty() {
            lower += 1;
        }
    }
    let (record_present, record_missing) = record(rows, opts);
    let mut files: Vec<String> = Vec::new();
    let mut last_file: Option<&str> = None;
    for r in rows {
        // Rows come file by file: only a change of file needs the search.
        let f = &*r.source.file;
        if last_file != Some(f) {
            last_file = Some(f);
            if !files.iter().any(|x| x == f) {
                files.push(f.to_owned());
            }
        }
    }
    BenchReport {
        scenario: base.name.clone(),
        machine_id: base.machine.id.clone(),
        machine_name: base.machine.name.clone(),
        model: base.model.name.clone(),
        artifact: opts
            .gguf
            .clone()
            .unwrap_or_else(|| base.weights.first().map(|w| w.label()).unwrap_or_default()),
        from_gguf: opts.gguf.is_some(),
        has_inventory: base.inventory.is_some(),
        files,
        bandwidth,
        headline_bandwidth: headline,
        rows: out,
        artifacts,
        record_present,
        record_missing,
        notes,
        impossible_rows: impossible,
        rows_above_lower_ceiling: lower,
        rows_above_without_inventory: undecided,
        rows_above_other_artifact: other,
        rows_above_measured_ceiling: measured,
        distinct_scenarios: prepared
            .iter()
            .filter(|p| !matches!(p.result, Shared::Combined))
            .count(),
    }
}

/// The index of the note with this text, added (with no rows yet) when it is new.
fn note_id(notes: &mut Vec<Note>, index: &mut HashMap<String, usize>, text: &str) -> usize {
    if let Some(&i) = index.get(text) {
        return i;
    }
    index.insert(text.to_owned(), notes.len());
    notes.push(Note {
        text: text.to_owned(),
        rows: Vec::new(),
    });
    notes.len() - 1
}

/// Row `row` to a note (rows come in order; a row is listed once).
fn add_row(n: &mut Note, row: usize) {
    if n.rows.last() != Some(&row) {
        n.rows.push(row);
    }
}

fn base_bandwidths(base: &Scenario) -> (Option<BandwidthFigure>, Option<BandwidthFigure>) {
    let Ok(r) = evaluate_scenario(base) else {
        return (None, None);
    };
    (
        Some(figure(&r, &r.decode.highest, true).bandwidth),
        Some(figure(&r, &r.decode.full_context, false).bandwidth),
    )
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    b > 0.0 && ((a - b) / b).abs() <= tol
}

/// Compare the run's `model_size` / `model_n_params` with the scenario's artifact.
fn check_artifact(row: &BenchRow, base: &Scenario) -> ArtifactCheck {
    let size = row.model_size;
    let params = row.model_n_params;
    let g = |n: u64| units::group_digits(n as u128);
    let (matches, detail) = match &base.inventory {
        Some(inv) => {
            let size_ok = inv.tensor_bytes == size;
            let params_ok = inv.parameters == params;
            if size_ok && params_ok {
                (
                    true,
                    format!(
                        "model_size {} bytes and model_n_params {} equal the GGUF's tensor bytes and element count",
                        g(size),
                        g(params)
                    ),
                )
            } else {
                let mut parts = Vec::new();
                if !size_ok {
                    parts.push(format!(
                        "model_size {} bytes differs from the scenario artifact's tensor bytes {}",
                        g(size),
                        g(inv.tensor_bytes)
                    ));
                }
                if !params_ok {
                    parts.push(format!(
                        "model_n_params {} differs from its element count {}",
                        g(params),
                        g(inv.parameters)
                    ));
                }
                (
                    false,
                    format!(
                        "{}: the run used another artifact, so its rows are not judged impossible",
                        parts.join("; ")
                    ),
                )
            }
        }
        None => {
            let w = base.weight_bytes();
            let size_ok = size <= w && w - size <= MAX_HEADER_BYTES;
            let params_ok = match &base.model.parameters_advertised {
                Some(p) => close(
                    params as f64,
                    p.value as f64,
                    ADVERTISED_PARAMETER_TOLERANCE,
                ),
                None => true,
            };
            let adv = base
                .model
                .parameters_advertised
                .as_ref()
                .map_or("no advertised count".to_string(), |p| {
                    format!("advertised {}", g(p.value))
                });
            if size_ok && params_ok {
                (
                    true,
                    format!(
                        "model_size {} bytes fits the artifact's {} bytes (W − model_size = {} bytes of header) and model_n_params {} agrees with the model ({adv}); without the GGUF this is consistency, not identity",
                        g(size),
                        g(w),
                        g(w - size),
                        g(params)
                    ),
                )
            } else {
                let mut parts = Vec::new();
                if !size_ok {
                    parts.push(format!(
                        "model_size {} bytes (tensor bytes) does not fit the scenario artifact of {} bytes with at most {} of header",
                        g(size),
                        g(w),
                        units::exact_binary(MAX_HEADER_BYTES)
                    ));
                }
                if !params_ok {
                    parts.push(format!(
                        "model_n_params {} is more than {:.0}% from the model's {adv}",
                        g(params),
                        ADVERTISED_PARAMETER_TOLERANCE * 100.0
                    ));
                }
                (
                    false,
                    format!(
                        "{}: the run used another artifact than \"{}\", so its rows are not judged",
                        parts.join("; "),
                        base.weights.first().map_or("", |w| w.file.as_str())
                    ),
                )
            }
        }
    };
    ArtifactCheck {
        model_size: size,
        model_n_params: params,
        matches,
        detail,
        rows: Vec::new(),
    }
}

/// A llama-bench row the scenario cannot take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RowError {
    /// A K or V cache type llmbound does not know.
    #[error("{which} \"{name}\" is not a cache type llmbound knows ({known})")]
    UnknownCacheType {
        /// `type_k` or `type_v`.
        which: &'static str,
        /// The type the row names.
        name: String,
        /// The types llmbound knows.
        known: String,
    },
    /// The row's settings do not apply to the base scenario.
    #[error("{0}")]
    Edit(#[from] crate::core::edit::EditError),
}

fn parse_cache_type(
    name: Option<&str>,
    which: &'static str,
    notes: &mut Vec<String>,
) -> Result<CacheType, RowError> {
    match name {
        None => {
            notes.push(format!(
                "{which} is not recorded: llama.cpp's default f16 assumed"
            ));
            Ok(CacheType::F16)
        }
        Some(n) => CacheType::parse(n).ok_or_else(|| RowError::UnknownCacheType {
            which,
            name: n.to_string(),
            known: CacheType::names_list(),
        }),
    }
}

fn retained(row: &BenchRow) -> u64 {
    match row.test() {
        TestKind::Generation => row.n_depth + row.n_gen / 2,
        TestKind::Prompt => row.n_depth + row.n_prompt,
        TestKind::Combined => row.n_depth + row.n_prompt + row.n_gen / 2,
    }
    .max(1)
}

/// The base scenario with the row's settings: the row becomes the same `Edit`s a user's
/// flags would make, applied to a copy by `core::edit::applied`.
fn row_scenario(
    row: &BenchRow,
    base: &Scenario,
    notes: &mut Vec<String>,
) -> Result<Scenario, RowError> {
    let (edits, row_notes) = row_edits(row, base)?;
    notes.extend(row_notes);
    Ok(crate::core::edit::applied(base, &edits)?)
}

/// The edits a llama-bench row makes to the base scenario, and the notes on what the run did
/// that the scenario cannot say.
pub fn row_edits(row: &BenchRow, base: &Scenario) -> Result<(Vec<Edit>, Vec<String>), RowError> {
    let mut notes = Vec::new();
    let mut edits = vec![Edit::Name(format!("{} — {}", base.name, row.test_name()))];
    edits.push(Edit::CacheTypeK(parse_cache_type(
        row.type_k.as_deref(),
        "type_k",
        &mut notes,
    )?));
    edits.push(Edit::CacheTypeV(parse_cache_type(
        row.type_v.as_deref(),
        "type_v",
        &mut notes,
    )?));
    match row.flash_attn {
        Some(FlashAttn::On) => edits.push(Edit::FlashAttn(true)),
        Some(FlashAttn::Off) => edits.push(Edit::FlashAttn(false)),
        Some(FlashAttn::Auto) => {
            // The cache bytes do not depend on it; llama.cpp turns it on where supported.
            edits.push(Edit::FlashAttn(true));
        }
        None => {}
    }
    edits.push(Edit::Sequences(1));
    edits.push(Edit::Context(retained(row)));
    if let Some(u) = row.n_ubatch.filter(|u| *u > 0) {
        edits.push(Edit::Ubatch(u));
    }
    if row.n_prompt > 0 {
        edits.push(Edit::PromptRows(row.n_prompt));
    }
    // `-ngl` that puts every layer on the accelerator (L + 1, derived once in core).
    let all = i64::from(crate::core::tiers::all_gpu_layers(&base.model));
    let accels = base.machine.accelerators();
    let cpu_only_run = row
        .backends
        .as_deref()
        .is_some_and(|b| b.trim().eq_ignore_ascii_case("cpu"))
        || row.gpu_info.as_deref().is_some_and(|g| g.trim().is_empty()) && row.backends.is_none();
    let mut gpu_layers = base.offload.gpu_layers;
    if let Some(n) = row.n_gpu_layers {
        gpu_layers = if cpu_only_run && !accels.is_empty() {
            notes.push(format!(
                "the run used the CPU backend only (backends \"{}\"): every layer counted in host memory",
                row.backends.as_deref().unwrap_or("")
            ));
            Some(0)
        } else if n < 0 || n >= all {
            None
        } else {
            Some(n as u32)
        };
        // llama-bench places the layers it is given and never fits: every layer is `-ngl
        // all`, so the plan (and its ceilings) is the placement the run used.
        edits.push(match gpu_layers {
            None => Edit::Ngl(crate::core::placement::GpuLayers::All),
            Some(_) => Edit::GpuLayers(gpu_layers),
        });
    }
    let mut no_kv_offload = base.offload.no_kv_offload;
    if let Some(b) = row.no_kv_offload {
        no_kv_offload = b;
        edits.push(Edit::NoKvOffload(b));
    }
    let gpu = row
        .gpu_info
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty());
    if accels.is_empty() {
        if let (Some(g), false) = (gpu, cpu_only_run)
            && row.n_gpu_layers != Some(0)
        {
            notes.push(format!(
                "the run used GPU \"{g}\" but machine \"{}\" has no accelerator tier: the ceilings describe the profile's memory, not the run's",
                base.machine.id
            ));
        }
    } else {
        let has_host = base
            .machine
            .tiers
            .iter()
            .any(|t| matches!(t.kind, TierKind::Host | TierKind::Unified));
        let partial = matches!(gpu_layers, Some(n) if i64::from(n) < all);
        if (partial || no_kv_offload) && !has_host {
            notes.push(format!(
                "machine \"{}\" has no host tier: what the run kept in host memory is counted at the accelerator's bandwidth, which can only raise the ceiling",
                base.machine.id
            ));
        }
        let split = row.split_mode.as_deref().unwrap_or("layer");
        if split == "none" && accels.len() > 1 {
            let main = row.main_gpu.unwrap_or(0).max(0) as usize;
            let mut one_hot = vec![0.0; accels.len()];
            one_hot[main.min(accels.len() - 1)] = 1.0;
            edits.push(Edit::TensorSplit(Some(one_hot)));
        } else if let Some(ts) = row.tensor_split.as_deref() {
            let parts: Vec<f64> = ts
                .split(['/', ','])
                .filter_map(|p| p.trim().parse::<f64>().ok())
                .collect();
            if parts.iter().any(|x| *x > 0.0) && parts.iter().all(|x| x.is_finite() && *x >= 0.0) {
                edits.push(Edit::TensorSplit(Some(parts)));
            }
        }
    }
    if let Some(n) = row.n_cpu_moe.filter(|n| *n > 0) {
        notes.push(format!(
            "n_cpu_moe {n}: the run kept the routed experts of the first {n} layers in host memory; llmbound counts them with their layers, which can only raise the ceiling"
        ));
    }
    if let Some(o) = row
        .tensor_buft_overrides
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty() && *o != "none")
    {
        notes.push(format!(
            "tensor_buft_overrides \"{o}\" are not modelled: the tensors they move are counted where their layer sits"
        ));
    }
    Ok((edits, notes))
}

/// A ceiling as reported; `top` takes the perfect-overlap rate across tiers (the highest
/// ceiling's deciding rate, `Ceiling::top_tokens_per_second`).
fn figure(r: &Report, c: &Ceiling, top: bool) -> CeilingFigure {
    use crate::core::decode::BandwidthChoice;
    let tier = &r.inputs.machine.tiers[c
        .main_tier
        .min(r.inputs.machine.tiers.len().saturating_sub(1))];
    let bw = match c.bandwidth_choice {
        BandwidthChoice::Headline => tier.headline_bandwidth(),
        BandwidthChoice::Highest => tier.highest_bandwidth(),
    };
    let tps = if top {
        c.top_tokens_per_second()
    } else {
        c.tokens_per_second
    };
    let overlapped = top && c.overlapped_tokens_per_second > c.tokens_per_second;
    CeilingFigure {
        tokens_per_second: tps,
        // Core's step time (one sequence: per token); the overlapped one for the top rate.
        ms_per_token: if overlapped {
            c.seconds_per_step_overlapped * 1e3
        } else {
            c.ms_per_token
        },
        step_bytes: c.step_bytes,
        weight_read_bytes: c.weight_read_bytes,
        kv_read_bytes: c.kv_read_bytes,
        bandwidth: BandwidthFigure {
            bytes_per_second: c.bandwidth.0,
            provenance: c.bandwidth_provenance,
            source: bw.source.clone(),
            tier: tier.name.clone(),
        },
        provenance: c.provenance,
        overlapped,
    }
}

/// A decode row's rate against its scenario's ceilings (the ceiling figures are the
/// scenario's, shared).
fn decode_comparison(row: &BenchRow, s: &DecodeShared, artifact_ok: bool) -> DecodeComparison {
    let tps = row.avg_ts;
    let r = &s.report;
    let d = &r.decode;
    let highest = &s.highest;
    let claim = check_claim(r, tps);
    let decides = d.highest_decides;
    // Core classifies the rate once; the import only adds that a run of another artifact
    // is not judged.
    let outcome = match claim.outcome {
        ClaimOutcome::Impossible if !artifact_ok => RowOutcome::OtherArtifact,
        o => RowOutcome::Claim(o),
    };
    let above_highest = claim.lines.last().is_some_and(|l| l.exceeded);
    let above_measured = outcome == RowOutcome::Claim(ClaimOutcome::AboveMeasured);
    let impossible = outcome == RowOutcome::Claim(ClaimOutcome::Impossible);
    let (lower_lines, highest_line) = claim.lines.split_at(claim.lines.len().saturating_sub(1));
    let exceeded: Vec<ExceededCeiling> = lower_lines
        .iter()
        .filter(|l| l.exceeded)
        .map(|l| ExceededCeiling {
            kind: l.kind,
            context_tokens: l.context_tokens,
            tokens_per_second: l.tokens_per_second,
            assumptions: l.assumptions.clone(),
        })
        .collect();
    let assumptions = if above_highest {
        highest_line
            .first()
            .map(|l| l.assumptions.clone())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    DecodeComparison {
        observed_tokens_per_second: tps,
        above_measured_ceiling: above_measured,
        efficiency: decides.then(|| tps / highest.tokens_per_second),
        headline_efficiency: s.headline.as_ref().map(|h| tps / h.tokens_per_second),
        file_efficiency: tps / s.file.tokens_per_second,
        within_ceiling: !above_highest,
        impossible,
        exceeded,
        assumptions,
        outcome,
        max_context_tokens: claim.max_context_tokens,
        context_tokens: claim.context_tokens,
        ceiling_without_inventory: (!decides).then(|| highest.clone()),
        ceiling: decides.then(|| highest.clone()),
        headline_ceiling: s.headline.clone(),
        file_ceiling: s.file.clone(),
    }
}

/// What a decode row's scenario gives every row of it: the report (for the claim check) and
/// the ceiling figures.
struct DecodeShared {
    report: Report,
    highest: Arc<CeilingFigure>,
    file: Arc<CeilingFigure>,
    headline: Option<Arc<CeilingFigure>>,
}

impl DecodeShared {
    fn new(r: Report, notes: &mut Vec<String>) -> DecodeShared {
        let d = &r.decode;
        let highest = figure(&r, &d.highest, true);
        if highest.overlapped {
            notes.push(
                "several memory tiers: the highest ceiling is the perfect-overlap rate (max over tiers of Q_i / BW_i), the rate no schedule can beat".into(),
            );
        }
        let file = figure(&r, &d.full_context, false);
        let headline = d
            .inventory_full_context
            .as_ref()
            .map(|c| Arc::new(figure(&r, c, false)));
        DecodeShared {
            highest: Arc::new(highest),
            file: Arc::new(file),
            headline,
            report: r,
        }
    }
}

/// A prompt row's scenario against the roofline, without the row's rate (`efficiency` and
/// `within_ceiling` unset).
fn prefill_shared(n_depth: u64, r: &Report, notes: &mut Vec<String>) -> PrefillComparison {
    let rf = &r.roofline;
    let ceiling = rf.prefill_ceiling_tokens_per_second;
    if ceiling.is_some() && n_depth > 0 {
        notes.push(
            "prefill at a depth: the ceiling counts the prompt's attention from an empty cache, so at depth it is higher than a tight bound"
                .into(),
        );
    }
    PrefillComparison {
        prompt_rows: rf.prompt_rows,
        compute_path: Arc::from(rf.compute_path.as_str()),
        intensity: rf.prefill_intensity,
        machine_balance: rf.machine_balance,
        ceiling_tokens_per_second: ceiling,
        limited_by: rf.prefill_limited_by,
        bound: rf.prefill_bound,
        efficiency: None,
        within_ceiling: None,
    }
}

/// A prompt row's rate against its scenario's prefill ceiling.
fn prefill_comparison(row: &BenchRow, shared: &PrefillComparison) -> PrefillComparison {
    let ceiling = shared.ceiling_tokens_per_second;
    PrefillComparison {
        efficiency: ceiling.map(|c| row.avg_ts / c),
        within_ceiling: ceiling.map(|c| row.avg_ts <= c),
        ..shared.clone()
    }
}

/// What `row_scenario` reads from a row, and what names the row: rows with equal keys
/// (repetitions, a sweep that varies only the measured rates) describe the same scenario,
/// evaluated once. Every field `row_scenario`, `retained`, `test_name` and the comparisons'
/// notes read is here, so a shared result is never a wrong one. Borrowed from the rows: a
/// key costs no allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RowKey<'a> {
    n_prompt: u64,
    n_gen: u64,
    n_depth: u64,
    type_k: Option<&'a str>,
    type_v: Option<&'a str>,
    flash_attn: Option<FlashAttn>,
    n_ubatch: Option<u64>,
    backends: Option<&'a str>,
    gpu_info: Option<&'a str>,
    n_gpu_layers: Option<i64>,
    no_kv_offload: Option<bool>,
    split_mode: Option<&'a str>,
    main_gpu: Option<i64>,
    tensor_split: Option<&'a str>,
    n_cpu_moe: Option<i64>,
    tensor_buft_overrides: Option<&'a str>,
}

impl<'a> RowKey<'a> {
    fn of(row: &'a BenchRow) -> RowKey<'a> {
        RowKey {
            n_prompt: row.n_prompt,
            n_gen: row.n_gen,
            n_depth: row.n_depth,
            type_k: row.type_k.as_deref(),
            type_v: row.type_v.as_deref(),
            flash_attn: row.flash_attn,
            n_ubatch: row.n_ubatch,
            backends: row.backends.as_deref(),
            gpu_info: row.gpu_info.as_deref(),
            n_gpu_layers: row.n_gpu_layers,
            no_kv_offload: row.no_kv_offload,
            split_mode: row.split_mode.as_deref(),
            main_gpu: row.main_gpu,
            tensor_split: row.tensor_split.as_deref(),
            n_cpu_moe: row.n_cpu_moe,
            tensor_buft_overrides: row.tensor_buft_overrides.as_deref(),
        }
    }
}

/// What the rows of one scenario (one [`RowKey`]) share: their name and cache types as
/// reported, the notes, the retained length and the evaluated scenario (or why there is none).
struct Prepared {
    name: CompactString,
    type_k: CompactString,
    type_v: CompactString,
    notes: Arc<[String]>,
    /// The notes' indices in the report, found at the scenario's first row.
    note_ids: Option<Vec<usize>>,
    retained: Option<u64>,
    result: Shared,
}

/// The evaluated scenario of a [`Prepared`].
enum Shared {
    /// A pg row: observed only, never evaluated.
    Combined,
    /// A tg row's ceilings.
    Decode(Box<DecodeShared>),
    /// A pp row's roofline.
    Prefill(PrefillComparison),
    /// Why the row could not be evaluated.
    Error(String),
}

fn prepare(row: &BenchRow, base: &Scenario) -> Prepared {
    let test = row.test();
    let mut notes = Vec::new();
    let mut retained_tokens = None;
    let result = if test == TestKind::Combined {
        notes.push(
            "pg: avg_ts counts the prompt and the generated tokens over the whole run, so it is neither a decode nor a prefill rate and is never compared with a ceiling"
                .into(),
        );
        Shared::Combined
    } else {
        match row_scenario(row, base, &mut notes) {
            Err(e) => Shared::Error(e.to_string()),
            Ok(scenario) => {
                retained_tokens = Some(scenario.cache.context);
                match evaluate_scenario(&scenario) {
                    Err(e) => Shared::Error(format!("the row's scenario cannot be evaluated: {e}")),
                    Ok(r) => match test {
                        TestKind::Generation => {
                            Shared::Decode(Box::new(DecodeShared::new(r, &mut notes)))
                        }
                        _ => Shared::Prefill(prefill_shared(row.n_depth, &r, &mut notes)),
                    },
                }
            }
        }
    };
    Prepared {
        name: CompactString::from(row.test_name()),
        type_k: CompactString::from(row.type_k.as_deref().unwrap_or("f16")),
        type_v: CompactString::from(row.type_v.as_deref().unwrap_or("f16")),
        notes: notes.into(),
        note_ids: None,
        retained: retained_tokens,
        result,
    }
}

fn evaluate_row(row: &BenchRow, p: &Prepared, artifact_ok: bool) -> RowReport {
    let mut rep = RowReport {
        source: row.source.clone(),
        test: row.test(),
        name: p.name.clone(),
        n_prompt: row.n_prompt,
        n_gen: row.n_gen,
        n_depth: row.n_depth,
        type_k: p.type_k.clone(),
        type_v: p.type_v.clone(),
        flash_attn: row.flash_attn,
        n_gpu_layers: row.n_gpu_layers,
        n_threads: row.n_threads,
        observed_tokens_per_second: row.avg_ts,
        best_sample_tokens_per_second: row.best_sample_ts(),
        stddev_tokens_per_second: row.stddev_ts,
        retained_tokens: p.retained,
        artifact_matches: artifact_ok,
        decode: None,
        prefill: None,
        notes: p.notes.clone(),
        error: None,
    };
    match &p.result {
        Shared::Combined => {}
        Shared::Decode(d) => rep.decode = Some(decode_comparison(row, d, artifact_ok)),
        Shared::Prefill(s) => rep.prefill = Some(prefill_comparison(row, s)),
        Shared::Error(e) => rep.error = Some(e.clone()),
    }
    rep
}

/// The distinct values of a field over the rows, in first-seen order, and whether every row
/// has one. `key` gives a row's value in a cheap form (borrowed or `Copy`), `show` words a
/// key (once per distinct key, never per row); keys worded alike are listed once.
fn distinct<'a, K, F, G>(rows: &'a [BenchRow], key: F, show: G) -> (Vec<String>, bool)
where
    K: Hash + Eq + Clone,
    F: Fn(&'a BenchRow) -> Option<K>,
    G: Fn(&K) -> String,
{
    let mut vals: Vec<String> = Vec::new();
    let mut seen_keys: HashSet<K> = HashSet::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut last: Option<K> = None;
    let mut all = true;
    for r in rows {
        match key(r) {
            Some(k) => {
                // Rows repeat their neighbour's value: skip the set for a repeat.
                if last.as_ref() == Some(&k) {
                    continue;
                }
                last = Some(k.clone());
                if seen_keys.insert(k.clone()) {
                    let v = show(&k);
                    if !seen.contains(&v) {
                        seen.insert(v.clone());
                        vals.push(v);
                    }
                }
            }
            None => all = false,
        }
    }
    (vals, all)
}

/// The first `n` characters of `s`, borrowed.
fn first_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

fn field(name: &str, value: Option<String>, note: impl Into<String>) -> RecordField {
    RecordField {
        field: name.into(),
        value,
        note: note.into(),
    }
}

/// docs/bounds.md §8's record: which fields the files have and which they lack.
fn record(rows: &[BenchRow], opts: &BenchOptions) -> (Vec<RecordField>, Vec<RecordField>) {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    let join = |v: Vec<String>| v.join("; ");
    match &opts.artifact_sha256 {
        Some(h) => present.push(field(
            "artifact hash",
            Some(format!("sha256 {h}")),
            "hashed by llmbound from the GGUF given; llama-bench does not record it",
        )),
        None => missing.push(field(
            "artifact hash",
            None,
            "llama-bench records model_filename, model_type and model_size, not a hash (give the GGUF to hash it)",
        )),
    }
    let (backends, _) = distinct(
        rows,
        |r| r.backends.as_deref().filter(|b| !b.is_empty()),
        |b| b.to_string(),
    );
    if backends.is_empty() {
        missing.push(field("runtime", None, "no backends field"));
    } else {
        present.push(field(
            "runtime",
            Some(format!(
                "llama.cpp llama-bench, backends {}",
                join(backends)
            )),
            "backends",
        ));
    }
    let (commits, all) = distinct(
        rows,
        |r| {
            r.build_commit
                .as_deref()
                .filter(|c| !c.trim().is_empty() && c.trim() != "unknown")
        },
        |c| c.to_string(),
    );
    if commits.is_empty() || !all {
        let why = if rows
            .iter()
            .any(|r| r.build_commit.as_deref() == Some("unknown"))
        {
            "build_commit is \"unknown\" (llama.cpp built outside a git checkout)"
        } else {
            "no build_commit field"
        };
        missing.push(field("runtime commit", None, why));
    } else {
        present.push(field("runtime commit", Some(join(commits)), "build_commit"));
    }
    let (ngl, all) = distinct(
        rows,
        |r| r.n_gpu_layers,
        |&n| {
            if n < 0 {
                "all (-1)".into()
            } else {
                n.to_string()
            }
        },
    );
    if all {
        present.push(field(
            "layers on the accelerator",
            Some(join(ngl)),
            "n_gpu_layers (counts the output layer)",
        ));
    } else {
        missing.push(field(
            "layers on the accelerator",
            None,
            "no n_gpu_layers field",
        ));
    }
    let (tests, _) = distinct(
        rows,
        |r| Some((r.n_prompt, r.n_gen)),
        |&(p, g)| super::parse::test_name(p, g, 0),
    );
    let (depths, _) = distinct(rows, |r| Some(r.n_depth), |&d| units::fmt_tokens(d));
    present.push(field(
        "prompt and generated lengths",
        Some(format!(
            "{}; depths {}",
            tests.join(", "),
            depths.join(", ")
        )),
        "n_prompt, n_gen, n_depth",
    ));
    let (batch, all) = distinct(
        rows,
        |r| match (r.n_batch, r.n_ubatch) {
            (Some(b), Some(u)) => Some((b, u)),
            _ => None,
        },
        |(b, u)| format!("n_batch {b}, n_ubatch {u}"),
    );
    if all {
        present.push(field(
            "batch and concurrency",
            Some(format!("{}; one sequence", join(batch))),
            "n_batch, n_ubatch; llama-bench runs one sequence",
        ));
    } else {
        missing.push(field(
            "batch and concurrency",
            None,
            "no n_batch / n_ubatch fields",
        ));
    }
    let (types, all) = distinct(
        rows,
        |r| match (r.type_k.as_deref(), r.type_v.as_deref()) {
            (Some(k), Some(v)) => Some((k, v)),
            _ => None,
        },
        |(k, v)| format!("{k}/{v}"),
    );
    if all {
        present.push(field(
            "K/V cache types",
            Some(join(types)),
            "type_k, type_v",
        ));
    } else {
        missing.push(field(
            "K/V cache types",
            None,
            "no type_k / type_v fields (f16 assumed)",
        ));
    }
    let (fa, all) = distinct(rows, |r| r.flash_attn, |f| f.label().to_string());
    if !all {
        missing.push(field(
            "flash-attention setting",
            None,
            "no flash_attn field",
        ));
    } else if rows.iter().any(|r| r.flash_attn == Some(FlashAttn::Auto)) {
        missing.push(field(
            "flash-attention setting",
            None,
            "flash_attn is -1 (auto): what llama.cpp chose is not recorded",
        ));
    } else {
        present.push(field(
            "flash-attention setting",
            Some(join(fa)),
            "flash_attn",
        ));
    }
    missing.push(field(
        "peak resident memory",
        None,
        "llama-bench does not record it",
    ));
    let pp = rows.iter().filter(|r| r.test() == TestKind::Prompt).count();
    let tg = rows
        .iter()
        .filter(|r| r.test() == TestKind::Generation)
        .count();
    if pp > 0 {
        present.push(field(
            "prompt-processing rate",
            Some(format!("{pp} pp rows")),
            "avg_ts, samples_ts",
        ));
    } else {
        missing.push(field(
            "prompt-processing rate",
            None,
            "no pp test in the file",
        ));
    }
    if tg > 0 {
        present.push(field(
            "generation rate",
            Some(format!("{tg} tg rows")),
            "avg_ts, samples_ts",
        ));
    } else {
        missing.push(field("generation rate", None, "no tg test in the file"));
    }
    let (machine, _) = distinct(
        rows,
        |r| {
            let cpu = r.cpu_info.as_deref().filter(|c| !c.is_empty());
            let gpu = r.gpu_info.as_deref().filter(|c| !c.is_empty());
            (cpu.is_some() || gpu.is_some()).then_some((cpu, gpu))
        },
        |k| match *k {
            (Some(c), Some(g)) => format!("{c} + {g}"),
            (Some(c), None) => c.to_string(),
            (None, Some(g)) => g.to_string(),
            (None, None) => String::new(),
        },
    );
    if !machine.is_empty() {
        present.push(field("machine", Some(join(machine)), "cpu_info, gpu_info"));
    }
    let (dates, _) = distinct(
        rows,
        |r| r.test_time.as_deref().map(|t| first_chars(t, 10)),
        |d| d.to_string(),
    );
    if !dates.is_empty() {
        present.push(field("date", Some(join(dates)), "test_time"));
    }
    (present, missing)
}
