//! Holding llama-bench rows against the bounds: each row becomes a scenario (the base scenario
//! with the row's cache types, placement and retained length), `core::evaluate` gives its
//! ceilings, and the observed rate is compared with them (docs/bounds.md §4, §5, §8). No I/O.

use super::parse::{BenchRow, FlashAttn, RowSource, TestKind};
use crate::core::cache::CacheType;
use crate::core::claim::{Assumption, ClaimOutcome};
use crate::core::decode::{Ceiling, CeilingKind};
use crate::core::roofline::{LimitedBy, PrefillBound};
use crate::core::scenario::{Scenario, TierKind};
use crate::core::units::{self, Provenance};
use crate::core::{Report, check_claim, evaluate as evaluate_scenario};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

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

/// An observed decode rate against its ceilings.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeComparison {
    /// The observed rate held against the ceilings (`avg_ts`), tokens/s.
    pub observed_tokens_per_second: f64,
    /// The highest ceiling (inventory bytes, fewest experts, highest bandwidth on record, at
    /// the retained mean): the one that can call a rate impossible. `None` without an inventory.
    pub ceiling: Option<CeilingFigure>,
    /// Without an inventory: the highest ceiling from file bytes, which cannot decide.
    pub ceiling_without_inventory: Option<CeilingFigure>,
    /// Inventory mode at the headline bandwidth (the measured figure when the profile has one).
    pub headline_ceiling: Option<CeilingFigure>,
    /// File mode (W_read = W) at the headline bandwidth, at the retained mean.
    pub file_ceiling: CeilingFigure,
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
}

/// An observed prompt-processing rate against the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefillComparison {
    /// Prompt rows S (`n_prompt`).
    pub prompt_rows: u64,
    /// Compute path the scenario names.
    pub compute_path: String,
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
    pub name: String,
    /// `n_prompt`.
    pub n_prompt: u64,
    /// `n_gen`.
    pub n_gen: u64,
    /// `n_depth`.
    pub n_depth: u64,
    /// K cache type as evaluated.
    pub type_k: String,
    /// V cache type as evaluated.
    pub type_v: String,
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
    /// Notes on how the row was matched to a scenario.
    pub notes: Vec<String>,
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
    let mut add_note = |text: String, row: usize| match note_index.get(&text) {
        Some(&i) => {
            let rows = &mut notes[i].rows;
            if rows.last() != Some(&row) {
                rows.push(row);
            }
        }
        None => {
            note_index.insert(text.clone(), notes.len());
            notes.push(Note {
                text,
                rows: vec![row],
            });
        }
    };
    let mut artifacts: Vec<ArtifactCheck> = Vec::new();
    let mut artifact_index: HashMap<(u64, u64), usize> = HashMap::new();
    let mut reports: HashMap<String, Rc<Result<Report, String>>> = HashMap::new();
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
        let r = evaluate_row(row, base, artifacts[a].matches, &mut reports);
        for n in &r.notes {
            add_note(n.clone(), index);
        }
        out.push(r);
    }
    for a in artifacts.iter().filter(|a| !a.matches) {
        for &r in &a.rows {
            add_note(a.detail.clone(), r);
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
    for r in rows {
        if !files.contains(&r.source.file) {
            files.push(r.source.file.clone());
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

fn parse_cache_type(
    name: Option<&str>,
    which: &str,
    notes: &mut Vec<String>,
) -> Result<CacheType, String> {
    match name {
        None => {
            notes.push(format!("{which} is not recorded: llama.cpp's default f16 assumed"));
            Ok(CacheType::F16)
        }
        Some(n) => CacheType::parse(n).ok_or_else(|| {
            format!(
                "{which} \"{n}\" is not a cache type llmbound knows ({})",
                CacheType::names_list()
            )
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

/// The base scenario with the row's settings.
fn row_scenario(
    row: &BenchRow,
    base: &Scenario,
    notes: &mut Vec<String>,
) -> Result<Scenario, String> {
    let mut s = base.clone();
    s.name = format!("{} — {}", base.name, row.test_name());
    s.cache.type_k = parse_cache_type(row.type_k.as_deref(), "type_k", notes)?;
    s.cache.type_v = parse_cache_type(row.type_v.as_deref(), "type_v", notes)?;
    match row.flash_attn {
        Some(FlashAttn::On) => s.cache.flash_attn = true,
        Some(FlashAttn::Off) => s.cache.flash_attn = false,
        Some(FlashAttn::Auto) => {
            // The cache bytes do not depend on it; llama.cpp turns it on where supported.
            s.cache.flash_attn = true;
        }
        None => {}
    }
    s.cache.sequences = 1;
    s.cache.context = retained(row);
    if let Some(u) = row.n_ubatch.filter(|u| *u > 0) {
        s.cache.ubatch = u;
    }
    if row.n_prompt > 0 {
        s.prompt_rows = row.n_prompt;
    }
    // `-ngl` that puts every layer on the accelerator (L + 1, derived once in core).
    let all = i64::from(crate::core::tiers::all_gpu_layers(&s.model));
    let accels = s.machine.accelerators();
    let cpu_only_run = row
        .backends
        .as_deref()
        .is_some_and(|b| b.trim().eq_ignore_ascii_case("cpu"))
        || row.gpu_info.as_deref().is_some_and(|g| g.trim().is_empty()) && row.backends.is_none();
    if let Some(n) = row.n_gpu_layers {
        s.offload.gpu_layers = if cpu_only_run && !accels.is_empty() {
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
    }
    if let Some(b) = row.no_kv_offload {
        s.offload.no_kv_offload = b;
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
                s.machine.id
            ));
        }
    } else {
        let has_host = s
            .machine
            .tiers
            .iter()
            .any(|t| matches!(t.kind, TierKind::Host | TierKind::Unified));
        let partial = matches!(s.offload.gpu_layers, Some(n) if i64::from(n) < all);
        if (partial || s.offload.no_kv_offload) && !has_host {
            notes.push(format!(
                "machine \"{}\" has no host tier: what the run kept in host memory is counted at the accelerator's bandwidth, which can only raise the ceiling",
                s.machine.id
            ));
        }
        let split = row.split_mode.as_deref().unwrap_or("layer");
        if split == "none" && accels.len() > 1 {
            let main = row.main_gpu.unwrap_or(0).max(0) as usize;
            let mut one_hot = vec![0.0; accels.len()];
            one_hot[main.min(accels.len() - 1)] = 1.0;
            s.offload.tensor_split = Some(one_hot);
        } else if let Some(ts) = row.tensor_split.as_deref() {
            let parts: Vec<f64> = ts
                .split(['/', ','])
                .filter_map(|p| p.trim().parse::<f64>().ok())
                .collect();
            if parts.iter().any(|x| *x > 0.0) && parts.iter().all(|x| x.is_finite() && *x >= 0.0) {
                s.offload.tensor_split = Some(parts);
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
    Ok(s)
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

fn decode_comparison(
    row: &BenchRow,
    r: &Report,
    artifact_ok: bool,
    notes: &mut Vec<String>,
) -> DecodeComparison {
    let tps = row.avg_ts;
    let d = &r.decode;
    let highest = figure(r, &d.highest, true);
    if highest.overlapped {
        notes.push(
            "several memory tiers: the highest ceiling is the perfect-overlap rate (max over tiers of Q_i / BW_i), the rate no schedule can beat".into(),
        );
    }
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
    let file = figure(r, &d.full_context, false);
    let headline = d
        .inventory_full_context
        .as_ref()
        .map(|c| figure(r, c, false));
    DecodeComparison {
        observed_tokens_per_second: tps,
        above_measured_ceiling: above_measured,
        efficiency: decides.then(|| tps / highest.tokens_per_second),
        headline_efficiency: headline.as_ref().map(|h| tps / h.tokens_per_second),
        file_efficiency: tps / file.tokens_per_second,
        within_ceiling: !above_highest,
        impossible,
        exceeded,
        assumptions,
        outcome,
        ceiling_without_inventory: (!decides).then(|| highest.clone()),
        ceiling: decides.then_some(highest),
        headline_ceiling: headline,
        file_ceiling: file,
    }
}

fn prefill_comparison(row: &BenchRow, r: &Report, notes: &mut Vec<String>) -> PrefillComparison {
    let rf = &r.roofline;
    let ceiling = rf.prefill_ceiling_tokens_per_second;
    if ceiling.is_some() && row.n_depth > 0 {
        notes.push(
            "prefill at a depth: the ceiling counts the prompt's attention from an empty cache, so at depth it is higher than a tight bound"
                .into(),
        );
    }
    PrefillComparison {
        prompt_rows: rf.prompt_rows,
        compute_path: rf.compute_path.clone(),
        intensity: rf.prefill_intensity,
        machine_balance: rf.machine_balance,
        ceiling_tokens_per_second: ceiling,
        limited_by: rf.prefill_limited_by,
        bound: rf.prefill_bound,
        efficiency: ceiling.map(|c| row.avg_ts / c),
        within_ceiling: ceiling.map(|c| row.avg_ts <= c),
    }
}

fn evaluate_row(
    row: &BenchRow,
    base: &Scenario,
    artifact_ok: bool,
    reports: &mut HashMap<String, Rc<Result<Report, String>>>,
) -> RowReport {
    let mut notes = Vec::new();
    let test = row.test();
    let mut rep = RowReport {
        source: row.source.clone(),
        test,
        name: row.test_name(),
        n_prompt: row.n_prompt,
        n_gen: row.n_gen,
        n_depth: row.n_depth,
        type_k: row.type_k.clone().unwrap_or_else(|| "f16".into()),
        type_v: row.type_v.clone().unwrap_or_else(|| "f16".into()),
        flash_attn: row.flash_attn,
        n_gpu_layers: row.n_gpu_layers,
        n_threads: row.n_threads,
        observed_tokens_per_second: row.avg_ts,
        best_sample_tokens_per_second: row.best_sample_ts(),
        stddev_tokens_per_second: row.stddev_ts,
        retained_tokens: None,
        artifact_matches: artifact_ok,
        decode: None,
        prefill: None,
        notes: Vec::new(),
        error: None,
    };
    if test == TestKind::Combined {
        rep.notes.push(
            "pg: avg_ts counts the prompt and the generated tokens over the whole run, so it is neither a decode nor a prefill rate and is never compared with a ceiling"
                .into(),
        );
        return rep;
    }
    let scenario = match row_scenario(row, base, &mut notes) {
        Ok(s) => s,
        Err(e) => {
            rep.error = Some(e);
            rep.notes = notes;
            return rep;
        }
    };
    rep.retained_tokens = Some(scenario.cache.context);
    // Rows that differ only in their measured rates (repetitions, a long sweep) describe the
    // same scenario: evaluate each distinct scenario once. The key is the scenario's full
    // `Debug` text, so two rows share a report only when every input is the same.
    let key = format!("{scenario:?}");
    let evaluated = match reports.get(&key) {
        Some(r) => r.clone(),
        None => {
            let r = Rc::new(evaluate_scenario(&scenario).map_err(|e| e.to_string()));
            reports.insert(key, r.clone());
            r
        }
    };
    match evaluated.as_ref() {
        Ok(r) => match test {
            TestKind::Generation => {
                rep.decode = Some(decode_comparison(row, r, artifact_ok, &mut notes))
            }
            _ => rep.prefill = Some(prefill_comparison(row, r, &mut notes)),
        },
        Err(e) => rep.error = Some(format!("the row's scenario cannot be evaluated: {e}")),
    }
    rep.notes = notes;
    rep
}

fn distinct<F: Fn(&BenchRow) -> Option<String>>(rows: &[BenchRow], f: F) -> (Vec<String>, bool) {
    let mut vals: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut all = true;
    for r in rows {
        match f(r) {
            Some(v) => {
                if !seen.contains(&v) {
                    seen.insert(v.clone());
                    vals.push(v);
                }
            }
            None => all = false,
        }
    }
    (vals, all)
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
    let (backends, _) = distinct(rows, |r| r.backends.clone().filter(|b| !b.is_empty()));
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
    let (commits, all) = distinct(rows, |r| {
        r.build_commit
            .clone()
            .filter(|c| !c.trim().is_empty() && c.trim() != "unknown")
    });
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
    let (ngl, all) = distinct(rows, |r| {
        r.n_gpu_layers.map(|n| {
            if n < 0 {
                "all (-1)".into()
            } else {
                n.to_string()
            }
        })
    });
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
    let (tests, _) = distinct(rows, |r| {
        let mut x = r.clone();
        x.n_depth = 0;
        Some(x.test_name())
    });
    let (depths, _) = distinct(rows, |r| Some(units::fmt_tokens(r.n_depth)));
    present.push(field(
        "prompt and generated lengths",
        Some(format!(
            "{}; depths {}",
            tests.join(", "),
            depths.join(", ")
        )),
        "n_prompt, n_gen, n_depth",
    ));
    let (batch, all) = distinct(rows, |r| match (r.n_batch, r.n_ubatch) {
        (Some(b), Some(u)) => Some(format!("n_batch {b}, n_ubatch {u}")),
        _ => None,
    });
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
    let (types, all) = distinct(rows, |r| match (&r.type_k, &r.type_v) {
        (Some(k), Some(v)) => Some(format!("{k}/{v}")),
        _ => None,
    });
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
    let (fa, all) = distinct(rows, |r| r.flash_attn.map(|f| f.label().to_string()));
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
    let (machine, _) = distinct(rows, |r| {
        let cpu = r.cpu_info.clone().filter(|c| !c.is_empty());
        let gpu = r.gpu_info.clone().filter(|c| !c.is_empty());
        match (cpu, gpu) {
            (Some(c), Some(g)) => Some(format!("{c} + {g}")),
            (Some(c), None) => Some(c),
            (None, Some(g)) => Some(g),
            (None, None) => None,
        }
    });
    if !machine.is_empty() {
        present.push(field("machine", Some(join(machine)), "cpu_info, gpu_info"));
    }
    let (dates, _) = distinct(rows, |r| {
        r.test_time.as_ref().map(|t| t.chars().take(10).collect())
    });
    if !dates.is_empty() {
        present.push(field("date", Some(join(dates)), "test_time"));
    }
    (present, missing)
}
