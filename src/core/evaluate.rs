//! `evaluate(&Scenario) -> Report`: one pass over every bound, and the claim check.
//! Pure: no I/O, no other top-level module.

use super::claim::{Assumption, ClaimOutcome};
use super::decode::{self, BandwidthChoice, Ceiling, CeilingKind, CurvePoint, HighestBasis};
use super::kv::{self, KvCache};
use super::roofline::{self, Linear, LinearBasis, Roofline, RooflineInput};
use super::runtime::RuntimeBuffers;
use super::scenario::{Scenario, ScenarioError};
use super::tiers::{self, Layout, MemoryItem, TierLoad, WeightSplit, WeightsMode};
use super::units::{BytesPerSec, Provenance};
use super::weights::{self, ExpertCount};

/// The artifact figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactFigures {
    /// W: exact bytes over every file the scenario loads.
    pub bytes: u64,
    /// Provenance of W.
    pub provenance: Provenance,
    /// Parameter count used for the density.
    pub parameters: Option<u64>,
    /// Its provenance (spec when advertised, file when counted).
    pub parameters_provenance: Option<Provenance>,
    /// True when the count is the tensor element count from the file ("counted").
    pub parameters_counted: bool,
    /// File density 8W / P_total, bits per parameter.
    pub bits_per_parameter: Option<f64>,
}

/// One tier that cannot hold the runtime's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// Tier name.
    pub tier: String,
    /// Bytes missing (runtime total − capacity).
    pub bytes: u64,
    /// The item whose addition passes the capacity (model, context, output, compute, A).
    pub overflows_at: MemoryItem,
    /// The weights and the logical cache alone fit this tier (M − W − K ≥ 0): only then is it
    /// the allocated cache's padding that tips it.
    pub logical_cache_fits: bool,
}

/// The fit verdict as data; exporters word it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FitVerdict {
    /// Every used tier holds the weights, the allocated cache, the output and compute
    /// buffers and A.
    Fits {
        /// A was set by the user (else A = 0: other allocations must fit in what is free).
        user_counted: bool,
    },
    /// llama.cpp refuses the cache configuration before allocating anything (the memory
    /// figures beside it are what it would need).
    WillNotStart {
        /// Why, in llama.cpp's order of checks.
        refusals: Vec<super::kv::CacheRefusal>,
    },
    /// At least one tier does not.
    DoesNotFit {
        /// Per short tier.
        shortfalls: Vec<Shortfall>,
        /// The article's W + K + A would fit: the runtime's padding and buffers decide.
        article_fits: bool,
    },
}

/// The capacity check over the whole placement.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// W.
    pub weights_bytes: u64,
    /// K: logical attention cache plus recurrent state (the article's K).
    pub kv_bytes: u64,
    /// A.
    pub other_bytes: u64,
    /// W + K + A (the article's total).
    pub total_bytes: u64,
    /// M: capacity of the tiers the placement uses (Σ when several).
    pub memory_bytes: u64,
    /// M − W − K − A (may be negative); with several tiers, the limiting tier's headroom.
    pub headroom_bytes: i128,
    /// The article's check W + K + A ≤ M on every used tier.
    pub article_fits: bool,
    /// Every used tier holds the runtime's memory (allocated cache + buffers + A): the verdict.
    pub fits: bool,
    /// Largest context per sequence whose runtime memory fits (None: memory sets no limit),
    /// and whose cache tensors stay within their devices' tensor limits.
    pub max_context_tokens: Option<u64>,
    /// `max_context_tokens` is set by a device's tensor limit (a longer cache tensor is over
    /// it), not by memory.
    pub max_context_by_tensor_limit: bool,
    /// Largest logical context per sequence with W + K + A ≤ M (the article's figure).
    pub article_max_context_tokens: Option<u64>,
    /// The largest context is above the model's native context.
    pub max_context_exceeds_native: bool,
    /// The tier that limits (least free runtime memory).
    pub limiting_tier: String,
    /// Runtime memory summed over the used tiers, itemised.
    pub runtime_bytes: RuntimeTotals,
    /// Free memory beside the runtime's allocations (allocated cache, buffers, A) on the
    /// limiting tier: the smallest per-tier figure, never a sum over tiers (negative: short).
    /// The one "free memory" every front end shows.
    pub runtime_free_bytes: i128,
    /// The runtime buffers (output, compute), provenance derived (llama.cpp CPU model).
    pub buffers: RuntimeBuffers,
    /// Weakest provenance among W, K's model figures, M (and A when set).
    pub provenance: Provenance,
    /// The verdict.
    pub verdict: FitVerdict,
}

impl Capacity {
    /// Σ capacity − Σ runtime memory over the used tiers: the free figure of the summed
    /// `runtime_bytes` (the JSON memory object's), beside the limiting tier's
    /// `runtime_free_bytes`.
    pub fn summed_free_bytes(&self) -> i128 {
        // held against what llama.cpp may fill (a device's free memory, else the capacity)
        self.runtime_bytes.capacity_bytes as i128 - self.runtime_bytes.total_bytes as i128
    }

    /// The memory fits and llama.cpp accepts the cache configuration.
    pub fn starts_and_fits(&self) -> bool {
        self.fits && !self.refused()
    }

    /// llama.cpp will not start with these settings (the verdict says why); whether a shorter
    /// context would: [`Self::starts_at_no_context`].
    pub fn refused(&self) -> bool {
        matches!(self.verdict, FitVerdict::WillNotStart { .. })
    }
    /// llama.cpp will not start at any context (a refusal a shorter cache does not avoid): the
    /// largest context that fits is not a figure to show.
    pub fn starts_at_no_context(&self) -> bool {
        match &self.verdict {
            FitVerdict::WillNotStart { refusals } => {
                refusals.iter().any(|r| r.max_context().is_none())
            }
            _ => false,
        }
    }
}

/// Runtime memory summed over the used tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RuntimeTotals {
    /// Weights.
    pub model_bytes: u64,
    /// Allocated cache + recurrent state.
    pub context_bytes: u64,
    /// Output buffer.
    pub output_bytes: u64,
    /// Compute buffers (one per tier that runs part of the graph).
    pub compute_bytes: u64,
    /// A.
    pub user_bytes: u64,
    /// Σ.
    pub total_bytes: u64,
    /// Σ of what the used tiers let llama.cpp fill (a device's free memory, else the
    /// capacity): what the runtime total is held against.
    pub capacity_bytes: u64,
}

/// Decode ceilings.
#[derive(Debug, Clone, PartialEq)]
pub struct Decode {
    /// File mode, K_read = 0, headline bandwidth.
    pub short_context: Ceiling,
    /// File mode, K_read at N, headline bandwidth.
    pub full_context: Ceiling,
    /// Inventory mode (expected experts), short context. Without a tensor inventory, a MoE
    /// model's routed-expert bytes are estimated from its advertised active parameters
    /// (`inventory_estimated`).
    pub inventory_short_context: Option<Ceiling>,
    /// The inventory-mode ceilings are an estimate from the advertised active parameters
    /// (a MoE preset without a GGUF), not counted from a tensor inventory.
    pub inventory_estimated: bool,
    /// Inventory mode (expected experts), at N.
    pub inventory_full_context: Option<Ceiling>,
    /// The highest ceiling at N: fewest bytes (inventory, k experts) and the highest bandwidth
    /// on record; with several tiers its perfect-overlap rate is the one that decides. Only this
    /// one can call a rate impossible, and only with an inventory.
    pub highest: Ceiling,
    /// The same ceiling at a short context (K_read = 0): the highest ceiling of any context,
    /// in the same mode as `highest`. A rate below it is possible with few enough tokens
    /// retained (`ClaimCheck::max_context_tokens`).
    pub highest_short: Ceiling,
    /// The highest ceiling can call a rate impossible (there is a tensor inventory).
    pub highest_decides: bool,
    /// Ceiling over context.
    pub curve: Vec<CurvePoint>,
    /// The headline bandwidth uses a vendor figure.
    pub optimistic_vendor: bool,
}

/// Everything `evaluate` computes.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// The evaluated scenario (inputs echo).
    pub inputs: Scenario,
    /// Artifact figures.
    pub artifact: ArtifactFigures,
    /// KV cache.
    pub kv: KvCache,
    /// Capacity.
    pub capacity: Capacity,
    /// Placement.
    pub layout: Layout,
    /// Per-tier loads.
    pub tiers: Vec<TierLoad>,
    /// Weight split used for placement.
    pub split: WeightSplit,
    /// Decode ceilings.
    pub decode: Decode,
    /// Roofline and prefill.
    pub roofline: Roofline,
    /// Warnings about the inputs, as data (`report::words::warning` words them).
    pub warnings: Vec<Warning>,
    /// The plan llama.cpp would choose on the machine (`-fit`, or the flags with `-fit off`):
    /// devices, per-device memory, margins; the error is llama.cpp's refusal of the flags.
    pub plan: Result<super::plan::Plan, super::plan::PlanError>,
}

/// A warning about the inputs, as data: the exporters word it (`report::words::warning`).
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// What the model's reader guessed or noticed (the file's own note, carried as read).
    Model(String),
    /// A cache configuration llama.cpp refuses at start-up.
    CacheRefused(kv::CacheRefusal),
    /// The compute buffer of the architecture is an estimate (`ComputeStatus::Estimate`):
    /// part of its graph is not replayed and the figure came out on either side of
    /// llama.cpp's on the oracle fixtures, so llama.cpp may reserve more.
    ComputeEstimate {
        /// The architecture.
        architecture: String,
        /// What of its graph is not replayed.
        not_replayed: &'static str,
        /// Largest measured shortfall, % of llama.cpp's figure.
        below_pct: u32,
        /// Largest measured excess, % of llama.cpp's figure.
        above_pct: u32,
    },
    /// The compute buffer of the architecture is an upper bound, not a replay of its graph.
    ComputeUpperBound {
        /// The architecture.
        architecture: String,
        /// What the bound covers.
        bounded: &'static str,
    },
    /// The compute buffer of the architecture replays its graph as read from llama.cpp's
    /// source, but no llama.cpp figure checks it on both a small and a realistic shape.
    ComputeUnchecked {
        /// The architecture.
        architecture: String,
        /// Which check is missing.
        missing: &'static str,
    },
    /// The context is beyond the model's native context.
    BeyondNativeContext {
        /// Retained tokens per sequence.
        context_tokens: u64,
        /// The model's native context.
        native_tokens: u64,
    },
    /// The inventory's layer count differs from the model's: per-layer placement estimated.
    InventoryLayers {
        /// Layers in the tensor inventory.
        inventory: usize,
        /// Layers in the model shape.
        model: usize,
    },
}

impl Warning {
    /// A stable machine name for the kind (the JSON `kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::Model(_) => "model",
            Warning::CacheRefused(_) => "cache-refused",
            Warning::ComputeEstimate { .. } => "compute-estimate",
            Warning::ComputeUpperBound { .. } => "compute-upper-bound",
            Warning::ComputeUnchecked { .. } => "compute-unchecked",
            Warning::BeyondNativeContext { .. } => "beyond-native-context",
            Warning::InventoryLayers { .. } => "inventory-layers",
        }
    }
}

/// Linear parameters/bytes: from the inventory, else derived from advertised figures.
fn linear(s: &Scenario, w: u64) -> Option<Linear> {
    let experts = s.model.moe.map(|m| (m.experts, m.experts_used));
    if let Some(inv) = &s.inventory {
        let p = weights::inventory_linear_parameters(inv, experts);
        let frac = experts.map_or(1.0, |(n, k)| if n > 0 { k as f64 / n as f64 } else { 1.0 });
        let bytes = inv.linear_dense_bytes as f64 + inv.routed_expert_bytes() as f64 * frac;
        return Some(Linear {
            parameters: p,
            bytes,
            provenance: Provenance::File,
            basis: LinearBasis::Inventory,
        });
    }
    let total = s.model.parameters_advertised.as_ref()?;
    let used = s
        .model
        .active_parameters_advertised
        .as_ref()
        .map_or(total.value, |a| a.value) as f64;
    let emb = if s.model.tied_embeddings {
        0.0
    } else {
        (s.model.vocab_size * s.model.embedding_length) as f64
    };
    let p = (used - emb).max(0.0);
    Some(Linear {
        parameters: p,
        bytes: w as f64 * p / total.value as f64,
        provenance: Provenance::Derived,
        basis: if s.model.tied_embeddings {
            LinearBasis::AdvertisedTied
        } else {
            LinearBasis::AdvertisedMinusEmbedding
        },
    })
}

/// Run every bound of docs/bounds.md on a scenario.
pub fn evaluate(s: &Scenario) -> Result<Report, ScenarioError> {
    let mut r = evaluate_bounds(s)?;
    r.plan = super::plan::plan(s);
    // a cache tensor over its device's tensor limit: llama.cpp aborts reserving the graph
    if let Some(refusal) = r.plan.as_ref().ok().and_then(|p| p.cache_refusal()) {
        r.warnings.push(Warning::CacheRefused(refusal.clone()));
        let mut refusals = match &r.capacity.verdict {
            FitVerdict::WillNotStart { refusals } => refusals.clone(),
            _ => Vec::new(),
        };
        refusals.push(refusal);
        r.capacity.verdict = FitVerdict::WillNotStart { refusals };
    }
    // a longer context would put a cache tensor over its device's limit
    if let Ok(p) = &r.plan
        && let Some(cap) = p.cache_max_context
        && r.capacity.max_context_tokens.is_none_or(|m| m > cap)
    {
        r.capacity.max_context_tokens = Some(cap);
        r.capacity.max_context_by_tensor_limit = true;
        r.capacity.max_context_exceeds_native = s.model.native_context.is_some_and(|n| cap > n);
    }
    Ok(r)
}

/// The plan of a report made by [`evaluate_bounds`].
pub const PLAN_NOT_MADE: &str = "no plan: evaluated for the bounds only";

/// [`evaluate`] without llama.cpp's plan (`plan` is an error saying so): for searches that
/// evaluate many placements and read only the bounds (`gpu_layers`).
pub fn evaluate_bounds(s: &Scenario) -> Result<Report, ScenarioError> {
    s.validate()?;
    // A cache llmbound does not model is "not supported", never a number that may be low.
    if let Some(why) = &s.model.unsupported {
        return Err(ScenarioError(format!(
            "not supported: llmbound does not model the cache llama.cpp builds for \"{}\" ({why}), so it gives no figure rather than one that may be low",
            s.model.architecture
        )));
    }
    let mut warnings: Vec<Warning> = s
        .model
        .warnings
        .iter()
        .cloned()
        .map(Warning::Model)
        .collect();
    let w = s.weight_bytes();
    let w_prov = s.weight_provenance();
    let kv = kv::cache(&s.model, &s.cache);
    warnings.extend(kv.refusals.iter().cloned().map(Warning::CacheRefused));
    if let super::runtime::ComputeStatus::Estimate {
        below_pct,
        above_pct,
        why,
    } = super::runtime::compute_status(&s.model.architecture)
    {
        warnings.push(Warning::ComputeEstimate {
            architecture: s.model.architecture.clone(),
            not_replayed: why,
            below_pct,
            above_pct,
        });
    }
    if let super::runtime::ComputeStatus::Unchecked(missing) =
        super::runtime::compute_status(&s.model.architecture)
    {
        warnings.push(Warning::ComputeUnchecked {
            architecture: s.model.architecture.clone(),
            missing,
        });
    }
    if let Some(bounded) = super::runtime::compute_upper_bound(&s.model.architecture) {
        warnings.push(Warning::ComputeUpperBound {
            architecture: s.model.architecture.clone(),
            bounded,
        });
    }
    if let Some(native) = s.model.native_context
        && s.cache.context > native
    {
        warnings.push(Warning::BeyondNativeContext {
            context_tokens: s.cache.context,
            native_tokens: native,
        });
    }
    if let Some(inv) = &s.inventory
        && inv.layer_bytes.len() != s.model.layers.len()
    {
        warnings.push(Warning::InventoryLayers {
            inventory: inv.layer_bytes.len(),
            model: s.model.layers.len(),
        });
    }

    // Artifact density: advertised parameters first, else counted elements.
    let (params, pprov, counted) = match (&s.model.parameters_advertised, &s.inventory) {
        (Some(p), _) => (Some(p.value), Some(p.provenance), false),
        (None, Some(inv)) if inv.parameters > 0 => {
            (Some(inv.parameters), Some(Provenance::File), true)
        }
        _ => (None, None, false),
    };
    let artifact = ArtifactFigures {
        bytes: w,
        provenance: w_prov,
        parameters: params,
        parameters_provenance: pprov,
        parameters_counted: counted,
        bits_per_parameter: params.and_then(|p| super::units::bits_per_weight(w, p)),
    };

    let lay = tiers::layout(s);
    let split = tiers::weight_split(s);
    let buffers = tiers::buffers(s, &s.cache, &kv);
    let loads = tiers::loads(s, &lay, &split, &kv, &buffers);
    let used: Vec<&TierLoad> = loads.iter().filter(|t| t.used).collect();
    let k_total = kv.total_bytes();
    let a = s.other_bytes.value;
    let total = w.saturating_add(k_total).saturating_add(a);
    let memory: u64 = used
        .iter()
        .map(|t| t.capacity_bytes)
        .fold(0u64, |x, y| x.saturating_add(y));
    let fits = used.iter().all(|t| t.fits);
    let article_fits = used.iter().all(|t| t.headroom_bytes >= 0);
    let limiting = used
        .iter()
        .min_by_key(|t| t.memory.free_bytes)
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let max_ctx = used.iter().filter_map(|t| t.max_context_tokens).min();
    let article_max_ctx = used
        .iter()
        .filter_map(|t| t.article_max_context_tokens)
        .min();
    // One pool: M − W − K − A. Several: the limiting tier's headroom (a sum over tiers would
    // hide a full GPU behind free host memory).
    let headroom = used.iter().map(|t| t.headroom_bytes).min().unwrap_or(0);
    let mut cap_provs = vec![w_prov, s.model.provenance];
    cap_provs.extend(
        used.iter()
            .map(|t| s.machine.tiers[t.index].capacity.provenance),
    );
    if a > 0 {
        cap_provs.push(s.other_bytes.provenance);
    }
    let mut totals = RuntimeTotals::default();
    for t in &used {
        let m = &t.memory;
        totals.model_bytes = totals.model_bytes.saturating_add(m.model_bytes);
        totals.context_bytes = totals.context_bytes.saturating_add(m.context_bytes);
        totals.output_bytes = totals.output_bytes.saturating_add(m.output_bytes);
        totals.compute_bytes = totals.compute_bytes.saturating_add(m.compute_bytes);
        totals.user_bytes = totals.user_bytes.saturating_add(m.user_bytes);
        totals.total_bytes = totals.total_bytes.saturating_add(m.total_bytes);
        totals.capacity_bytes = totals.capacity_bytes.saturating_add(m.capacity_bytes);
    }
    let verdict = if !kv.refusals.is_empty() {
        FitVerdict::WillNotStart {
            refusals: kv.refusals.clone(),
        }
    } else if fits {
        FitVerdict::Fits {
            user_counted: a > 0,
        }
    } else {
        FitVerdict::DoesNotFit {
            shortfalls: used
                .iter()
                .filter(|t| !t.fits)
                .map(|t| Shortfall {
                    tier: t.name.clone(),
                    bytes: u64::try_from(-t.memory.free_bytes).unwrap_or(u64::MAX),
                    overflows_at: t.memory.overflows_at.unwrap_or(MemoryItem::Model),
                    logical_cache_fits: t.headroom_bytes + t.memory.user_bytes as i128 >= 0,
                })
                .collect(),
            article_fits,
        }
    };
    let capacity = Capacity {
        weights_bytes: w,
        kv_bytes: k_total,
        other_bytes: a,
        total_bytes: total,
        memory_bytes: memory,
        headroom_bytes: headroom,
        article_fits,
        fits,
        max_context_tokens: max_ctx,
        max_context_by_tensor_limit: false,
        article_max_context_tokens: article_max_ctx,
        max_context_exceeds_native: match (max_ctx, s.model.native_context) {
            (Some(m), Some(n)) => m > n,
            (None, Some(_)) => true,
            _ => false,
        },
        limiting_tier: limiting,
        runtime_free_bytes: used
            .iter()
            .map(|t| t.memory.free_bytes)
            .min()
            .unwrap_or(totals.capacity_bytes as i128 - totals.total_bytes as i128),
        runtime_bytes: totals,
        buffers,
        provenance: Provenance::weakest(cap_provs).unwrap_or(Provenance::User),
        verdict,
    };

    // Decode ceilings.
    let n = s.cache.context;
    let c = |mode, ex, bw, at| decode::ceiling(s, &lay, &split, mode, ex, bw, at);
    use BandwidthChoice::*;
    use WeightsMode::*;
    let short = c(File, ExpertCount::Expected, Headline, 0);
    let full = c(File, ExpertCount::Expected, Headline, n);
    let has_inv = s.inventory.is_some();
    // A MoE preset without a GGUF: inventory mode from the active-parameter estimate.
    let estimated = !has_inv && split.has_experts();
    let inv_mode = has_inv || estimated;
    let (inv_short, inv_full) = if inv_mode {
        (
            Some(c(Inventory, ExpertCount::Expected, Headline, 0)),
            Some(c(Inventory, ExpertCount::Expected, Headline, n)),
        )
    } else {
        (None, None)
    };
    let highest_mode = if inv_mode { Inventory } else { File };
    let highest = c(highest_mode, ExpertCount::Minimum, Highest, n);
    let highest_short = c(highest_mode, ExpertCount::Minimum, Highest, 0);
    let curve = decode::curve_contexts(n, s.model.native_context)
        .into_iter()
        .map(|at| CurvePoint {
            context_tokens: at,
            file_tokens_per_second: c(File, ExpertCount::Expected, Headline, at).tokens_per_second,
            inventory_tokens_per_second: inv_mode
                .then(|| c(Inventory, ExpertCount::Expected, Headline, at).tokens_per_second),
        })
        .collect();
    let optimistic_vendor = short.bandwidth_provenance == Provenance::Spec;

    // Roofline on the compute tier (or the tier moving most bytes).
    let compute = s.machine.compute_for(&s.compute_path);
    let bw_tier = compute
        .and_then(|cr| s.machine.tiers.iter().find(|t| t.name == cr.tier))
        .unwrap_or_else(|| &s.machine.tiers[full.main_tier]);
    let prefill_weights = inv_short.as_ref().unwrap_or(&short).weight_read_bytes;
    let roof: Roofline = roofline::roofline(RooflineInput {
        model: &s.model,
        linear: linear(s, w),
        sequences: s.cache.sequences,
        context: n,
        decode_bytes: full.step_bytes,
        prefill_weight_bytes: prefill_weights,
        kv_bytes_per_token: kv.bytes_per_token_all_layers,
        prompt_rows: s.prompt_rows,
        compute_path: &s.compute_path,
        compute: compute.map(|cr| (cr.rate.value, cr.rate.provenance)),
        bandwidth: bw_tier.headline_bandwidth().value.0,
    });

    Ok(Report {
        scenario: s.name.clone(),
        inputs: s.clone(),
        artifact,
        kv,
        capacity,
        layout: lay,
        tiers: loads,
        split,
        decode: Decode {
            short_context: short,
            full_context: full,
            inventory_short_context: inv_short,
            inventory_full_context: inv_full,
            inventory_estimated: estimated,
            highest,
            highest_short,
            highest_decides: has_inv,
            curve,
            optimistic_vendor,
        },
        roofline: roof,
        warnings,
        plan: Err(super::plan::PlanError(PLAN_NOT_MADE.into())),
    })
}

/// One ceiling held against an observed or claimed rate.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimLine {
    /// Which ceiling.
    pub kind: CeilingKind,
    /// The retained tokens per sequence it is computed at (0: short context).
    pub context_tokens: u64,
    /// Its value, tokens/s (the highest: its perfect-overlap rate).
    pub tokens_per_second: f64,
    /// The rate is above it.
    pub exceeded: bool,
    /// What would have to be false for a rate above it.
    pub assumptions: Vec<Assumption>,
}

/// The verdict on a claimed rate, as data (`report::words` words it).
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimCheck {
    /// The claimed or observed aggregate rate, tokens/s.
    pub tokens_per_second: f64,
    /// The scenario's retained tokens per sequence N: the assumption a rate above every
    /// ceiling at N while within a short-context one is decided by.
    pub context_tokens: u64,
    /// Sequences B (rates are aggregate over B).
    pub sequences: u64,
    /// Every ceiling, highest last.
    pub lines: Vec<ClaimLine>,
    /// Above the highest ceiling (and that ceiling can decide): `outcome.is_impossible()`.
    pub impossible: bool,
    /// Where the rate lands.
    pub outcome: ClaimOutcome,
    /// The highest ceiling's deciding rate (perfect overlap across tiers), tokens/s.
    pub highest_tokens_per_second: f64,
    /// The highest ceiling's bandwidth (highest on record of its main tier), bytes/s.
    pub highest_bandwidth: BytesPerSec,
    /// The highest ceiling of the same mode at a short context (K_read = 0), tokens/s: the
    /// highest of every ceiling, at any context.
    pub highest_short_tokens_per_second: f64,
    /// Above the highest ceiling at N but within it at a short context: the most retained
    /// tokens per sequence at which the highest ceiling still allows the rate (the ceiling
    /// inverted: bytes per token grow with context). None when the rate is within the
    /// highest ceiling at N, or above it at every context.
    pub max_context_tokens: Option<u64>,
}

impl ClaimCheck {
    /// The lines the rate is above.
    pub fn exceeded(&self) -> impl Iterator<Item = &ClaimLine> {
        self.lines.iter().filter(|l| l.exceeded)
    }

    /// Above the highest ceiling at N while within the highest one at a short context: the
    /// retained context decides (`max_context_tokens` retained tokens would allow the rate).
    pub fn context_decides(&self) -> bool {
        self.tokens_per_second > self.highest_tokens_per_second
            && self.tokens_per_second <= self.highest_short_tokens_per_second
    }

    /// The figures its verdict is worded from (`report::words::claim_sentence`).
    pub fn verdict(&self) -> super::claim::Verdict {
        super::claim::Verdict {
            outcome: self.outcome,
            tokens_per_second: self.tokens_per_second,
            sequences: self.sequences,
            context_tokens: self.context_tokens,
            highest_tokens_per_second: self.highest_tokens_per_second,
            highest_short_tokens_per_second: Some(self.highest_short_tokens_per_second),
            highest_bandwidth: self.highest_bandwidth,
            max_context_tokens: self.max_context_tokens,
            exceeded: self
                .exceeded()
                .map(|l| (l.kind, l.context_tokens))
                .collect(),
        }
    }
}

/// Hold a claimed or observed aggregate decode rate against every ceiling (docs/bounds.md §4).
pub fn check_claim(r: &Report, tps: f64) -> ClaimCheck {
    let n = r.inputs.cache.context;
    let d = &r.decode;
    let mut lines = Vec::new();
    let bw = |c: &Ceiling| Assumption::BandwidthDoesNotDescribePath {
        provenance: c.bandwidth_provenance,
        bandwidth: c.bandwidth,
    };
    let mut push = |kind: CeilingKind, at: u64, c: &Ceiling, extra: Vec<Assumption>| {
        let mut a = extra;
        a.push(bw(c));
        lines.push(ClaimLine {
            kind,
            context_tokens: at,
            tokens_per_second: c.tokens_per_second,
            exceeded: tps > c.tokens_per_second,
            assumptions: a,
        });
    };
    push(
        CeilingKind::FileFull,
        n,
        &d.full_context,
        vec![
            Assumption::NotAllFileBytesRead { detailed: true },
            Assumption::FewerTokensRetained { context_tokens: n },
        ],
    );
    push(
        CeilingKind::FileShort,
        0,
        &d.short_context,
        vec![Assumption::NotAllFileBytesRead { detailed: true }],
    );
    if let Some(c) = &d.inventory_full_context {
        let mut a = vec![Assumption::FewerTokensRetained { context_tokens: n }];
        if d.inventory_estimated {
            a.push(Assumption::RoutedShareNotAsAdvertised);
        }
        if r.inputs.model.moe.is_some() && r.inputs.cache.sequences > 1 {
            a.push(Assumption::SequencesSharedExperts);
        }
        push(
            CeilingKind::InventoryFull {
                estimated: d.inventory_estimated,
            },
            n,
            c,
            a,
        );
    }
    lines.extend(super::claim::placement_lines(r, tps));
    let h = &d.highest;
    // Several tiers: only perfect overlap gives a rate no schedule can beat.
    let h_rate = h.top_tokens_per_second();
    let above_highest = tps > h_rate;
    let basis = if d.highest_decides {
        HighestBasis::Inventory
    } else if d.inventory_estimated {
        HighestBasis::EstimatedActive
    } else {
        HighestBasis::FileBytes
    };
    let highest_assumptions = if d.highest_decides {
        vec![
            Assumption::RunIsNotScenario,
            Assumption::FasterTierServed,
            Assumption::MemoryAboveHighest {
                bandwidth: h.bandwidth,
            },
        ]
    } else {
        vec![
            Assumption::NotAllFileBytesRead { detailed: false },
            Assumption::FewerTokensRetained { context_tokens: n },
            Assumption::BandwidthAboveHighest {
                bandwidth: h.bandwidth,
            },
        ]
    };
    lines.push(ClaimLine {
        kind: CeilingKind::Highest { basis },
        context_tokens: n,
        tokens_per_second: h_rate,
        exceeded: above_highest,
        assumptions: highest_assumptions,
    });
    let outcome = ClaimOutcome::classify(
        above_highest,
        lines.iter().any(|l| l.exceeded),
        d.highest_decides,
        h.bandwidth_peak_known,
    );
    if outcome == ClaimOutcome::AboveMeasured
        && let Some(last) = lines.last_mut()
    {
        last.assumptions = measured_ceiling_assumptions(h);
    }
    let short_rate = d.highest_short.top_tokens_per_second().max(h_rate);
    let max_context_tokens = (above_highest && tps <= short_rate).then(|| {
        decode::max_context_at_rate(n, tps, |at| {
            decode::ceiling(
                &r.inputs,
                &r.layout,
                &r.split,
                h.mode,
                h.experts,
                h.bandwidth_choice,
                at,
            )
            .top_tokens_per_second()
        })
    });
    ClaimCheck {
        tokens_per_second: tps,
        context_tokens: n,
        sequences: r.inputs.cache.sequences.max(1),
        lines,
        impossible: outcome.is_impossible(),
        outcome,
        highest_tokens_per_second: h_rate,
        highest_bandwidth: h.bandwidth,
        highest_short_tokens_per_second: short_rate,
        max_context_tokens,
    }
}

/// What a rate above a ceiling built only on measured bandwidths says.
fn measured_ceiling_assumptions(h: &Ceiling) -> Vec<Assumption> {
    vec![
        Assumption::MeasuredBelowPath {
            bandwidth: h.bandwidth,
        },
        Assumption::AddPeakToProfile,
    ]
}
