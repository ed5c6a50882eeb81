//! One scenario's model, artifact and cache settings evaluated on several machines, side by
//! side: the rows of the explorer's compare view and of `llmbound compare`. Depends on
//! `core` only; no terminal, no I/O.
//! Depends on: core.

use crate::core::edit::Edit;
use crate::core::plan::PlanOrigin;
use crate::core::scenario::{Machine, Scenario, ScenarioError};
use crate::core::units::Provenance;
use crate::core::{Report, evaluate};

/// The figures a comparison shows for one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareFigures {
    /// The runtime's memory (weights, allocated cache, output and compute buffers, A) fits in
    /// every used tier.
    pub fits: bool,
    /// Free runtime memory on the limiting tier: M_i − (W_i + allocated cache + buffers + A_i),
    /// bytes (negative when it does not fit).
    pub headroom_bytes: i128,
    /// Largest context per sequence that fits (None: memory sets no limit).
    pub max_context_tokens: Option<u64>,
    /// That context is beyond the model's native context.
    pub max_context_exceeds_native: bool,
    /// The ceiling rows are ranked by and labelled with, at the scenario's context,
    /// tokens/s: when the tensor inventory is known, the highest ceiling `check` judges claims
    /// against (inventory bytes, fewest experts, the highest bandwidth on record, perfect
    /// overlap across tiers) — an upper bound — else the file-mode one, which holds only if
    /// every byte of the file is read per token (`ceiling_is_upper_bound` false).
    pub ceiling_tokens_per_second: f64,
    /// The same ceiling at a short context, tokens/s.
    pub ceiling_short_tokens_per_second: f64,
    /// The ranking ceiling is counted from the tensor inventory (an upper bound); false: file
    /// mode, "if every byte is read".
    pub ceiling_is_upper_bound: bool,
    /// `-ngl` this machine was evaluated at: its own placement, all layers or the most that
    /// fit (None: the machine has no accelerator and host tier, so there is nothing to place).
    pub gpu_layers: Option<u32>,
    /// `-ngl` that puts every layer on the accelerators (L + 1).
    pub all_gpu_layers: u32,
    /// How the placement was chosen: the `-fit` arguments llama.cpp prints for this machine,
    /// or why its plan could not be used.
    pub placement: String,
    /// Decode ceiling at short context (file mode), tokens/s.
    pub short_tokens_per_second: f64,
    /// Decode ceiling at the scenario's context (file mode, non-overlapped), tokens/s.
    pub full_tokens_per_second: f64,
    /// Same with perfect overlap between tiers, tokens/s.
    pub overlapped_tokens_per_second: f64,
    /// Time per token at the scenario's context, ms.
    pub full_ms_per_token: f64,
    /// Inventory-mode ceiling at the scenario's context, tokens/s (with a tensor inventory).
    pub inventory_full_tokens_per_second: Option<f64>,
    /// The tier with the least capacity headroom.
    pub capacity_tier: String,
    /// The tier whose bytes take longest per decode step at the scenario's context.
    pub decode_tier: String,
    /// Weakest provenance of the bandwidths the ceiling uses.
    pub bandwidth_provenance: Provenance,
    /// The ceiling rests on a vendor (spec) bandwidth: an optimistic vendor ceiling.
    pub optimistic_vendor: bool,
    /// Prefill ceiling for the scenario's prompt rows, tokens/s (only with a compute rate).
    pub prefill_tokens_per_second: Option<f64>,
    /// The context per sequence this machine was evaluated at (each machine's own under
    /// Ollama, whose default context follows the machine's VRAM), tokens.
    pub context_tokens: u64,
    /// The sequences it was evaluated at.
    pub sequences: u64,
}

impl CompareFigures {
    /// The figures of one report.
    pub fn of(r: &Report) -> CompareFigures {
        let full = &r.decode.full_context;
        let tiers = &r.inputs.machine.tiers;
        // The slowest tier is chosen once, in core (`Ceiling::slowest_tier`).
        let decode_tier = full
            .slowest_tier
            .and_then(|i| tiers.get(i))
            .map(|t| t.name.clone())
            .unwrap_or_default();
        let d = &r.decode;
        // With the tensor inventory, the highest ceiling `check` judges a claim against
        // (inventory bytes, fewest experts, the highest bandwidth on record, tiers
        // overlapped): a ranking called an upper bound is never below a ceiling the report
        // prints for the same row (a measured or typed bandwidth below the spec sheet's ranks
        // lower in the report's own rows, never in the bound).
        let (ranked, upper) = if r.inputs.inventory.is_some() && d.highest_decides {
            ((&d.highest, &d.highest_short), true)
        } else {
            ((full, &d.short_context), false)
        };
        let (ceiling, ceiling_short) = (
            ranked.0.top_tokens_per_second(),
            ranked.1.top_tokens_per_second(),
        );
        let all = crate::core::tiers::all_gpu_layers(&r.inputs.model);
        CompareFigures {
            ceiling_tokens_per_second: ceiling,
            ceiling_short_tokens_per_second: ceiling_short,
            ceiling_is_upper_bound: upper,
            gpu_layers: crate::core::gpu_layers::applies(&r.inputs).then_some(r.layout.gpu_layers),
            all_gpu_layers: all,
            placement: placement_statement(r),
            // A configuration llama.cpp refuses fits at no context.
            fits: r.capacity.starts_and_fits(),
            headroom_bytes: r
                .tiers
                .iter()
                .filter(|t| t.used)
                .map(|t| t.memory.free_bytes)
                .min()
                .unwrap_or(r.capacity.headroom_bytes),
            max_context_tokens: if r.capacity.starts_at_no_context() {
                Some(0)
            } else {
                r.capacity.max_context_tokens
            },
            max_context_exceeds_native: r.capacity.max_context_exceeds_native,
            short_tokens_per_second: r.decode.short_context.tokens_per_second,
            full_tokens_per_second: full.tokens_per_second,
            overlapped_tokens_per_second: full.overlapped_tokens_per_second,
            full_ms_per_token: full.ms_per_token,
            inventory_full_tokens_per_second: r
                .decode
                .inventory_full_context
                .as_ref()
                .map(|c| c.tokens_per_second),
            capacity_tier: r.capacity.limiting_tier.clone(),
            decode_tier,
            bandwidth_provenance: ranked.0.bandwidth_provenance,
            optimistic_vendor: if upper {
                ranked.0.bandwidth_provenance == Provenance::Spec
            } else {
                r.decode.optimistic_vendor
            },
            prefill_tokens_per_second: r.roofline.prefill_ceiling_tokens_per_second,
            context_tokens: r.inputs.cache.context,
            sequences: r.inputs.cache.sequences,
        }
    }
}

/// The placement a row was evaluated at, as the row states it.
fn placement_statement(r: &Report) -> String {
    match &r.plan {
        Ok(p) => match &p.origin {
            // -ot patterns the tier model does not place: the row is at the most whole
            // layers that fit, beside llama.cpp's own plan
            PlanOrigin::Fitted { arguments, .. }
                if !p.overrides.is_empty() && r.inputs.offload.overrides.is_empty() =>
            {
                format!(
                    "most layers that fit: -ngl {} (llama.cpp's -fit: {arguments})",
                    r.layout.gpu_layers
                )
            }
            PlanOrigin::Fitted { arguments, .. } => format!("-fit {arguments}"),
            PlanOrigin::FitRefused { .. } | PlanOrigin::FitOff => {
                format!("most layers that fit: -ngl {}", r.layout.gpu_layers)
            }
        },
        Err(e) => format!("llama.cpp refuses: {}", e.0),
    }
}

/// Some machine was evaluated at another context or sequence count than the scenario's (each
/// at Ollama's own plan for it): the rows' contexts must be stated per machine.
pub fn at_own_contexts(rows: &[CompareRow], s: &Scenario) -> bool {
    rows.iter().any(|r| {
        r.outcome
            .as_ref()
            .is_ok_and(|f| f.context_tokens != s.cache.context || f.sequences != s.cache.sequences)
    })
}

/// One machine of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// Machine profile id.
    pub machine_id: String,
    /// Its display name.
    pub machine_name: String,
    /// The figures, or why the scenario cannot be evaluated on it.
    pub outcome: Result<CompareFigures, ScenarioError>,
}

/// The scenario evaluated at the machine's own placement, as llama.cpp chooses it: the user's
/// placement flags dropped (llama.cpp's defaults: `-ngl auto`, `-fit on`), then the layers,
/// split and `-ot` patterns of the `-fit` plan (`core::plan`; the tiers follow the tensor
/// placement, `core::tiers`), else (no plan, or one the bounds find short) the most layers
/// that fit keeping llama.cpp's margin (`core::gpu_layers`); never another machine's `-ngl`
/// or split.
pub fn evaluate_placed(s: &Scenario) -> Result<Report, ScenarioError> {
    evaluation(&at_llama_cpp_defaults(s)?)
}

/// The scenario with the user's placement flags dropped: llama.cpp's defaults (`-ngl auto`,
/// `-fit on`, no `-ts`, `-sm layer`, `-mg 0`, no `-ot`, `--cpu-moe`, `--n-cpu-moe`,
/// `--n-cpu-ffn`).
pub fn at_llama_cpp_defaults(s: &Scenario) -> Result<Scenario, ScenarioError> {
    use crate::core::placement::{GpuLayers, SplitMode};
    crate::core::edit::applied(
        s,
        &[
            Edit::GpuLayers(None),
            Edit::Ngl(GpuLayers::Auto),
            Edit::TensorSplit(None),
            Edit::SplitMode(SplitMode::Layer),
            Edit::MainGpu(0),
            Edit::OverrideTensor(Vec::new()),
            Edit::CpuMoe(false),
            Edit::NCpuMoe(0),
            Edit::NCpuFfn(0),
            Edit::Fit(true),
        ],
    )
    .map_err(|e| ScenarioError(e.to_string()))
}

/// The one evaluation of a scenario, as llama.cpp would run it: the report, `check`, the
/// explorer (its bounds and claim panes), compare, models, the library and the llama-bench
/// import all evaluate through it. With the placement left to llama.cpp
/// ([`left_to_fit`]) the scenario is evaluated at the layers, split and `-ot` patterns of its
/// own `-fit` plan (else the most layers that fit keeping the margin),
/// so the headline, the claim verdict and the plan below them describe one placement; with
/// the user's own placement flags, at those flags (`core::evaluate`).
///
/// The report's `plan` is always llama.cpp's for the scenario as given (`-fit`'s arguments,
/// `-ot` patterns and the context it chose), also when the bounds fall back to the most
/// whole layers that fit.
pub fn evaluation(s: &Scenario) -> Result<Report, ScenarioError> {
    if !left_to_fit(s) {
        return evaluate(s);
    }
    let first = evaluate(s);
    let plan = first.as_ref().ok().map(|r| r.plan.clone());
    let mut r = at_the_plan(s, first)?;
    if let Some(p) = plan {
        r.plan = p;
    }
    Ok(r)
}

/// [`evaluation`]'s placement of a scenario left to `-fit`, given its first evaluation.
fn at_the_plan(
    s: &Scenario,
    first: Result<Report, ScenarioError>,
) -> Result<Report, ScenarioError> {
    let placed = |r: &Report| r.capacity.fits && crate::core::gpu_layers::keeps_margin(r);
    if first.as_ref().is_ok_and(placed) {
        return first;
    }
    // `-c 0`: the context -fit chose (reduced from the trained one), then its layers.
    let context_auto = s.offload.context_auto;
    let reduced = match &first {
        Ok(r) if context_auto => match &r.plan {
            Ok(p) if matches!(p.origin, PlanOrigin::Fitted { .. }) => {
                let streams = if s.cache.kv_unified {
                    1
                } else {
                    s.cache.sequences.max(1)
                };
                let per = u64::from(p.n_ctx) / streams;
                // a derived name follows the context (a profile's name stays)
                let renamed = s.name == s.derived_name();
                (per > 0 && per != s.cache.context)
                    .then(|| crate::core::edit::applied(s, &[Edit::FitContext(per)]).ok())
                    .flatten()
                    .map(|t| {
                        let name = if renamed {
                            t.derived_name()
                        } else {
                            t.name.clone()
                        };
                        crate::core::edit::applied(&t, &[Edit::Name(name)]).unwrap_or(t)
                    })
            }
            _ => None,
        },
        _ => None,
    };
    let (sc, first) = match &reduced {
        Some(t) => {
            let r = evaluate(t);
            if r.as_ref().is_ok_and(placed) {
                return r;
            }
            (t, r)
        }
        None => (s, first),
    };
    // no layers to move (no accelerator tier beside a host tier: the CPU alone, or one
    // unified pool): the plan's context is all -fit chooses
    if !crate::core::gpu_layers::applies(sc) {
        return first;
    }
    // nothing fits: the report is at llama.cpp's own plan (what it would load), so the verdict
    // names the memory that is short under it rather than under all layers on the devices
    let mut at_plan = None;
    if let Ok(r) = &first
        && let Ok(p) = &r.plan
        && matches!(p.origin, PlanOrigin::Fitted { .. })
    {
        let mut edits = vec![Edit::GpuLayers(Some(p.gpu_layers))];
        if p.tensor_split.iter().filter(|x| **x > 0).count() > 1 {
            edits.push(Edit::TensorSplit(Some(
                p.tensor_split.iter().map(|x| f64::from(*x)).collect(),
            )));
        }
        // the plan's -ot patterns: the tiers then follow the tensor placement (core::tiers)
        if !p.overrides.is_empty() {
            edits.push(Edit::OverrideTensor(p.override_args()));
        }
        if let Ok(t) = crate::core::edit::applied(sc, &edits)
            && let Ok(fitted) = evaluate(&t)
        {
            if fitted.capacity.fits {
                return Ok(fitted);
            }
            at_plan = Some(fitted);
        }
    }
    let Some(found) = most_layers_that_fit(sc) else {
        return at_plan.map_or(first, Ok);
    };
    // Confirmed by evaluate itself; if it disagrees, step down until it agrees.
    for n in (0..=found).rev() {
        let r = evaluate(&crate::core::gpu_layers::with_gpu_layers(sc, n));
        if r.as_ref().is_ok_and(placed) {
            return r;
        }
    }
    first
}

/// The user left the placement to llama.cpp: `-ngl auto`, `-fit on`, no `-ts`, `-sm`, `-ot`,
/// `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn` (then [`evaluate_placed`] is what llama.cpp
/// would run).
pub fn left_to_fit(s: &Scenario) -> bool {
    let o = &s.offload;
    o.ngl() == crate::core::placement::GpuLayers::Auto
        && o.fit
        && o.tensor_split.is_none()
        && o.split_mode == crate::core::placement::SplitMode::Layer
        && o.overrides.is_empty()
        && !o.cpu_moe
        && o.n_cpu_moe == 0
        && o.n_cpu_ffn == 0
}

/// The most `-ngl` that fits, found by bisection over 0 … L + 1 (a few evaluations per
/// machine, where `gpu_layers::max_gpu_layers` scans every value): only an `-ngl` that was
/// evaluated and fits is ever returned, so the row's "fits" is always true of its placement.
fn most_layers_that_fit(s: &Scenario) -> Option<u32> {
    let all = crate::core::tiers::all_gpu_layers(&s.model);
    // The search asks only whether every tier's runtime memory fits (no largest-context
    // solve per probe); `evaluate_placed` confirms the answer with `evaluate` itself.
    let quick = |n| {
        let sc = crate::core::gpu_layers::with_gpu_layers(s, n);
        sc.validate().is_ok() && {
            use crate::core::{kv, tiers};
            let lay = tiers::layout(&sc);
            let split = tiers::weight_split(&sc);
            let cache = kv::cache(&sc.model, &sc.cache);
            let buf = tiers::buffers(&sc, &sc.cache, &cache);
            let margin = sc
                .offload
                .fit_margins()
                .first()
                .map_or(crate::core::placement::DEFAULT_FIT_MARGIN.0, |b| b.0);
            tiers::memory(&sc, &lay, &split, &cache, &buf)
                .iter()
                .zip(&sc.machine.tiers)
                .all(|(m, t)| {
                    m.fits
                        && (t.kind != crate::core::scenario::TierKind::Accelerator
                            || m.total_bytes == 0
                            || m.free_bytes >= i128::from(margin))
                })
        }
    };
    search(all, quick)
}

/// Bisection over 0 … all for the largest n with `fits(n)` (all is known not to fit).
fn search(all: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    let (mut lo, mut hi) = match (fits(0), fits(1)) {
        (_, true) => (1, all),
        (true, false) => return Some(0),
        (false, false) => return None,
    };
    // lo fits, hi does not (all was tried by the caller).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// Evaluate the scenario (model, artifact, cache) on each machine in turn, each at its own
/// placement (`evaluate_placed`).
pub fn compare(s: &Scenario, machines: &[Machine]) -> Vec<CompareRow> {
    compare_scenarios(machines.iter().map(|m| (m, on_machine(s, m))).collect())
}

/// The scenario with `m` as its machine (the model, artifact and cache kept).
pub fn on_machine(s: &Scenario, m: &Machine) -> Result<Scenario, ScenarioError> {
    crate::core::edit::applied(s, &[Edit::Machine(Box::new(m.clone()))])
        .map_err(|e| ScenarioError(e.to_string()))
}

/// Evaluate one scenario per machine, each at its own placement: for a model whose runtime
/// chooses its settings by machine (Ollama's default context by VRAM), each machine's scenario
/// is built with that machine's own.
pub fn compare_scenarios(
    rows: Vec<(&Machine, Result<Scenario, ScenarioError>)>,
) -> Vec<CompareRow> {
    rows.into_iter()
        .map(|(m, sc)| CompareRow {
            machine_id: m.id.clone(),
            machine_name: m.name.clone(),
            outcome: sc.and_then(|sc| evaluate_placed(&sc).map(|r| CompareFigures::of(&r))),
        })
        .collect()
}
