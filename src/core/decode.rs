//! Decode ceilings: bytes moved per step over the bandwidth of the tiers they come from,
//! aggregate over B sequences and per sequence, non-overlapped and overlapped (docs/bounds.md §4, §6).
//! Pure: no I/O, no other top-level module.

use super::scenario::Scenario;
use super::tiers::{Layout, WeightSplit, WeightsMode, step_bytes};
use super::units::{BytesPerSec, Provenance};
use super::weights::ExpertCount;

/// Which bandwidth figure of each tier a ceiling uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthChoice {
    /// The measured figure when the profile has one, else the stated one.
    Headline,
    /// The highest figure on record (stated peak or measured).
    Highest,
}

/// One decode ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    /// How the weights were counted.
    pub mode: WeightsMode,
    /// How routed experts were counted.
    pub experts: ExpertCount,
    /// Which bandwidth was used.
    pub bandwidth_choice: BandwidthChoice,
    /// Retained tokens per sequence whose cache is read (0 = short context).
    pub context_tokens: u64,
    /// Bytes moved per step from each tier (index = machine tier).
    pub tier_bytes: Vec<u64>,
    /// Σ bytes per step Q_step = W_read + K_read.
    pub step_bytes: u64,
    /// Weight bytes of Q_step.
    pub weight_read_bytes: u64,
    /// KV (and recurrent state) bytes of Q_step.
    pub kv_read_bytes: u64,
    /// Seconds per step spent reading each tier, Q_i / BW_i (index = machine tier; 0 for a
    /// tier that moves nothing). `seconds_per_step` is their sum, the overlapped time their
    /// maximum: no front end divides bytes by a bandwidth again.
    pub tier_seconds: Vec<f64>,
    /// The main tier: the one moving the most bytes (the first on ties), index into the
    /// machine's tiers. Its bandwidth is `bandwidth`. Chosen here, once.
    pub main_tier: usize,
    /// The slowest tier: the one whose bytes take longest per step (the first on ties), or
    /// None when no tier moves a byte.
    pub slowest_tier: Option<usize>,
    /// Bandwidth of the tier moving the most bytes (single tier: the bandwidth), bytes/s.
    pub bandwidth: BytesPerSec,
    /// Provenance of the weakest bandwidth used.
    pub bandwidth_provenance: Provenance,
    /// Every tier moving bytes has a peak figure on record (a bandwidth whose provenance is
    /// not `measured`): only then can a rate above this ceiling be impossible
    /// (`claim::ClaimOutcome`).
    pub bandwidth_peak_known: bool,
    /// Non-overlapped step time Σ Q_i / BW_i, seconds.
    pub seconds_per_step: f64,
    /// Perfect-overlap step time max Q_i / BW_i, seconds.
    pub seconds_per_step_overlapped: f64,
    /// Aggregate ceiling over B sequences, tokens/s = B / Σ Q_i/BW_i.
    pub tokens_per_second: f64,
    /// Per-sequence ceiling, tokens/s = 1 / Σ Q_i/BW_i.
    pub per_sequence_tokens_per_second: f64,
    /// Aggregate ceiling with perfect overlap between tiers, tokens/s.
    pub overlapped_tokens_per_second: f64,
    /// Time per step (per token of each sequence), ms.
    pub ms_per_token: f64,
    /// Weakest provenance among W, the model figures and the bandwidths.
    pub provenance: Provenance,
}

/// Compute one ceiling.
pub fn ceiling(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    mode: WeightsMode,
    experts: ExpertCount,
    bw: BandwidthChoice,
    n: u64,
) -> Ceiling {
    let q = step_bytes(s, lay, split, mode, experts, n);
    let q_weights = step_bytes(s, lay, split, mode, experts, 0);
    let b = s.cache.sequences.max(1) as f64;
    let mut sum = 0.0f64;
    let mut max = 0.0f64;
    let mut provs = vec![s.weight_provenance(), s.model.provenance];
    if mode == WeightsMode::Inventory && s.inventory.is_some() {
        provs.push(Provenance::File);
    }
    let mut main_tier = 0usize;
    let mut tier_seconds = vec![0.0f64; q.len()];
    let mut slowest: Option<usize> = None;
    for (i, bytes) in q.iter().enumerate() {
        if *bytes == 0 {
            continue;
        }
        let tier = &s.machine.tiers[i];
        let sb = match bw {
            BandwidthChoice::Headline => tier.headline_bandwidth(),
            BandwidthChoice::Highest => tier.highest_bandwidth(),
        };
        provs.push(sb.provenance);
        let t = *bytes as f64 / sb.value.0;
        tier_seconds[i] = t;
        if slowest.is_none_or(|j| t > tier_seconds[j]) {
            slowest = Some(i);
        }
        sum += t;
        max = max.max(t);
        if *bytes > q[main_tier] {
            main_tier = i;
        }
    }
    let main = &s.machine.tiers[main_tier];
    let main_bw = match bw {
        BandwidthChoice::Headline => main.headline_bandwidth(),
        BandwidthChoice::Highest => main.highest_bandwidth(),
    };
    let step: u64 = q.iter().fold(0u64, |a, x| a.saturating_add(*x));
    let w_read: u64 = q_weights.iter().fold(0u64, |a, x| a.saturating_add(*x));
    let bw_prov =
        Provenance::weakest(q.iter().enumerate().filter(|(_, x)| **x > 0).map(|(i, _)| {
            let t = &s.machine.tiers[i];
            match bw {
                BandwidthChoice::Headline => t.headline_bandwidth().provenance,
                BandwidthChoice::Highest => t.highest_bandwidth().provenance,
            }
        }))
        .unwrap_or(main_bw.provenance);
    let peak_known = q
        .iter()
        .enumerate()
        .filter(|(_, x)| **x > 0)
        .all(|(i, _)| tier_has_peak(&s.machine.tiers[i]));
    let rate = |secs: f64| {
        if secs > 0.0 {
            1.0 / secs
        } else {
            f64::INFINITY
        }
    };
    Ceiling {
        mode,
        experts,
        bandwidth_choice: bw,
        context_tokens: n,
        tier_bytes: q,
        tier_seconds,
        main_tier,
        slowest_tier: slowest,
        step_bytes: step,
        weight_read_bytes: w_read,
        kv_read_bytes: step.saturating_sub(w_read),
        bandwidth: main_bw.value,
        bandwidth_provenance: bw_prov,
        bandwidth_peak_known: peak_known,
        seconds_per_step: sum,
        seconds_per_step_overlapped: max,
        tokens_per_second: b * rate(sum),
        per_sequence_tokens_per_second: rate(sum),
        overlapped_tokens_per_second: b * rate(max),
        ms_per_token: sum * 1e3,
        provenance: Provenance::weakest(provs).unwrap_or(Provenance::User),
    }
}

/// A tier has a peak figure on record: its stated bandwidth, or its measured one, carries a
/// provenance other than `measured` (spec, derived, user). The highest bandwidth on record is
/// at least that figure, so a rate above a ceiling built on it is above the peak too.
pub fn tier_has_peak(t: &super::scenario::Tier) -> bool {
    t.bandwidth.provenance != Provenance::Measured
        || t.measured_bandwidth
            .as_ref()
            .is_some_and(|m| m.provenance != Provenance::Measured)
}

/// Which of the report's ceilings a figure is (the exporters name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CeilingKind {
    /// File mode (every byte of the file per step), K_read = 0, headline bandwidth.
    FileShort,
    /// File mode at the scenario's retained tokens N, headline bandwidth.
    FileFull,
    /// Inventory mode (the tensors a token reads, expected experts), short context.
    InventoryShort,
    /// Inventory mode at N (`estimated`: from the advertised active parameters, no GGUF).
    InventoryFull {
        /// Estimated from the advertised active parameters (a MoE preset without a GGUF).
        estimated: bool,
    },
    /// The plan's placement at N (`core::plan`): each device's and the host's reads per
    /// token under the placement llama.cpp uses, at headline bandwidths, the RPC link a tier.
    Placement {
        /// The overlap bound (the slowest memory alone); false: the sum bound (the memories
        /// one after another).
        overlap: bool,
    },
    /// The highest ceiling at N: fewest bytes, fewest experts, highest bandwidth on record.
    Highest {
        /// What its bytes were counted from.
        basis: HighestBasis,
    },
}

/// What the highest ceiling's bytes were counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HighestBasis {
    /// The tensor inventory: the only basis that can call a rate impossible.
    Inventory,
    /// Estimated active bytes (MoE preset without a GGUF).
    EstimatedActive,
    /// File bytes (no inventory).
    FileBytes,
}

impl Ceiling {
    /// The rate no schedule can beat: perfect overlap between tiers (one tier: the ceiling).
    pub fn top_tokens_per_second(&self) -> f64 {
        self.overlapped_tokens_per_second
            .max(self.tokens_per_second)
    }
}

/// One point of the ceiling-over-context curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// Retained tokens per sequence.
    pub context_tokens: u64,
    /// File-mode aggregate ceiling, tokens/s.
    pub file_tokens_per_second: f64,
    /// Inventory-mode aggregate ceiling, tokens/s (when there is an inventory).
    pub inventory_tokens_per_second: Option<f64>,
}

/// The most retained tokens per sequence, at most `n - 1`, at which a ceiling `rate_at`
/// (non-increasing in the context: bytes per token grow with it) still allows `tps`; 0 when
/// only a short context does. The ceiling inverted by bisection over whole tokens, so the
/// answer is exact: `rate_at(m) >= tps` and `rate_at(m + 1) < tps`, or m = 0.
pub fn max_context_at_rate(n: u64, tps: f64, rate_at: impl Fn(u64) -> f64) -> u64 {
    if n == 0 || rate_at(n) >= tps {
        return n;
    }
    let (mut lo, mut hi) = (0u64, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if rate_at(mid) >= tps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Context lengths for the curve: powers of two from 256 up to max(native, N, 4096) plus N.
pub fn curve_contexts(n: u64, native: Option<u64>) -> Vec<u64> {
    let top = n
        .max(native.unwrap_or(0))
        .clamp(4096, super::scenario::MAX_CONTEXT);
    let mut v = vec![0u64];
    let mut x = 256u64;
    while x <= top {
        v.push(x);
        x *= 2;
    }
    if !v.contains(&n) {
        v.push(n);
    }
    if !v.contains(&top) {
        v.push(top);
    }
    v.sort_unstable();
    v
}
