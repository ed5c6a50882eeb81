//! The outcome of holding a claimed or observed decode rate against the ceilings, as data.
//! A ceiling calls a rate impossible only when it is the highest one, computed from the
//! tensor inventory, and every tier it reads has a peak figure on record (spec, derived or
//! user-stated): a *measured* bandwidth is a rate some kernel reached, not a limit of the
//! memory, so a rate above a ceiling built only on measured figures says the figure does not
//! describe the run's path (measured under load, another kernel) — never "impossible".
//! The placement's own ceilings (`placement_lines`) join the report's in every claim check.
//! Pure: no I/O, no other top-level module.

use super::decode::CeilingKind;
use super::evaluate::{ClaimLine, Report};
use super::scenario::TierKind;
use super::units::{BytesPerSec, Provenance};

/// What would have to be false for a rate above a ceiling (the exporters word each one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Assumption {
    /// Not every byte of the file is read per token (`detailed`: say why: the token
    /// embedding is one row per token, unused experts are not read).
    NotAllFileBytesRead {
        /// Give the reasons.
        detailed: bool,
    },
    /// Fewer than N tokens were retained.
    FewerTokensRetained {
        /// N.
        context_tokens: u64,
    },
    /// The bandwidth figure does not describe the path, or bytes came from a faster tier.
    BandwidthDoesNotDescribePath {
        /// Provenance of the figure.
        provenance: Provenance,
        /// The figure, bytes/s.
        bandwidth: BytesPerSec,
    },
    /// The routed-expert share is not what the advertised active parameters imply.
    RoutedShareNotAsAdvertised,
    /// The sequences shared more experts than the expected number of distinct experts.
    SequencesSharedExperts,
    /// The run is not the scenario (another artifact, fewer retained tokens, smaller batch).
    RunIsNotScenario,
    /// Bytes were served from a faster tier (on-chip cache) than any counted.
    FasterTierServed,
    /// The memory moved more than the highest bandwidth on record.
    MemoryAboveHighest {
        /// That bandwidth, bytes/s.
        bandwidth: BytesPerSec,
    },
    /// The bandwidth exceeded the highest on record (a ceiling without an inventory).
    BandwidthAboveHighest {
        /// That bandwidth, bytes/s.
        bandwidth: BytesPerSec,
    },
    /// The measured bandwidth is below what this path reaches.
    MeasuredBelowPath {
        /// The measured figure, bytes/s.
        bandwidth: BytesPerSec,
    },
    /// Add the memory's peak to the profile to decide.
    AddPeakToProfile,
    /// The memories were read at the same time, not one after another (the placement's sum
    /// bound: `-sm layer` takes the devices in turn at batch one).
    MemoriesOverlapped,
    /// The run placed the tensors otherwise than the plan (another `-ngl`, `-ts`, `-ot`).
    PlacementNotAsPlanned,
}

/// Where a rate lands against the ceilings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimOutcome {
    /// At or below every ceiling: possible (identifies no cause).
    Within,
    /// Above a lower ceiling but not the highest: an assumption of that ceiling is false.
    AboveLower,
    /// Above the highest ceiling, whose bandwidth is a measured figure with no peak on record
    /// for a tier it reads: the measured figure does not describe this path. Not impossible.
    AboveMeasured,
    /// Above the highest ceiling computed without a tensor inventory: undecided.
    AboveWithoutInventory,
    /// Above the highest ceiling from the inventory and peak bandwidths: impossible.
    Impossible,
}

impl ClaimOutcome {
    /// Classify a rate: above the highest ceiling or not, above a lower one, whether the
    /// highest ceiling has an inventory (`decides`), whether its bandwidths are peaks.
    pub fn classify(
        above_highest: bool,
        above_lower: bool,
        decides: bool,
        peak_known: bool,
    ) -> ClaimOutcome {
        match (above_highest, above_lower) {
            (false, false) => ClaimOutcome::Within,
            (false, true) => ClaimOutcome::AboveLower,
            (true, _) if !peak_known => ClaimOutcome::AboveMeasured,
            (true, _) if !decides => ClaimOutcome::AboveWithoutInventory,
            (true, _) => ClaimOutcome::Impossible,
        }
    }

    /// The rate falsifies the scenario (the CLI exits 3).
    pub fn is_impossible(self) -> bool {
        self == ClaimOutcome::Impossible
    }

    /// A stable lower-case label for JSON.
    pub fn label(self) -> &'static str {
        match self {
            ClaimOutcome::Within => "within",
            ClaimOutcome::AboveLower => "above-lower-ceiling",
            ClaimOutcome::AboveMeasured => "above-measured-ceiling",
            ClaimOutcome::AboveWithoutInventory => "above-without-inventory",
            ClaimOutcome::Impossible => "impossible",
        }
    }
}

/// The figures a claim verdict is worded from: one shape for `check`, the llama-bench rows and
/// the explorer, so the three say the same sentence for the same outcome (`report::words`
/// words it).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Where the rate lands.
    pub outcome: ClaimOutcome,
    /// The rate held against the ceilings, tokens/s (aggregate over the sequences).
    pub tokens_per_second: f64,
    /// Sequences B the rate is aggregate over.
    pub sequences: u64,
    /// Retained tokens per sequence the rate is judged at.
    pub context_tokens: u64,
    /// The highest ceiling at that context, tokens/s.
    pub highest_tokens_per_second: f64,
    /// The highest ceiling at a short context, when it was computed.
    pub highest_short_tokens_per_second: Option<f64>,
    /// The bandwidth of the highest ceiling.
    pub highest_bandwidth: BytesPerSec,
    /// The most retained tokens per sequence at which the rate is within the highest ceiling,
    /// when the context decides.
    pub max_context_tokens: Option<u64>,
    /// The lower ceilings the rate is above: (kind, context tokens; 0 = short context).
    pub exceeded: Vec<(super::decode::CeilingKind, u64)>,
}

impl Verdict {
    /// Above the highest ceiling at its context, within it at a short context (as far as that
    /// is known), with the largest context that keeps it within: the context decides.
    pub fn context_decides(&self) -> bool {
        self.max_context_tokens.is_some()
            && self.tokens_per_second > self.highest_tokens_per_second
            && self
                .highest_short_tokens_per_second
                .is_none_or(|s| self.tokens_per_second <= s)
    }
}

/// The ceilings of the placement the report was evaluated at (its plan: the `-fit` plan
/// when the placement is left to llama.cpp, else the user's flags), held against `tps`: the
/// sum bound (memories one after another) and the overlap bound (the slowest memory alone),
/// each at the scenario's retained tokens. Lower ceilings: a rate above them says an
/// assumption of the placement is false, never that the rate is impossible (the highest
/// ceiling decides that). None when llama.cpp refuses the flags or no memory moves a byte.
pub fn placement_lines(r: &Report, tps: f64) -> Vec<ClaimLine> {
    let Ok(p) = &r.plan else {
        return Vec::new();
    };
    let c = &p.ceilings;
    if !(c.tokens_per_second.is_finite() && c.overlapped_tokens_per_second.is_finite()) {
        return Vec::new();
    }
    let tiers = &r.inputs.machine.tiers;
    // The bandwidth (with its own provenance) of the memory the step waits on longest.
    let mut slowest = (
        c.host_seconds,
        tiers
            .iter()
            .find(|t| t.kind == TierKind::Host)
            .map(|t| t.headline_bandwidth()),
    );
    for (d, secs) in p.devices.iter().zip(&c.device_seconds) {
        if *secs > slowest.0 {
            slowest = (*secs, tiers.get(d.tier).map(|t| t.headline_bandwidth()));
        }
    }
    if c.link_seconds > slowest.0
        && let Some(l) = r.inputs.machine.links.iter().find(|l| {
            p.devices
                .iter()
                .any(|d| d.backend == "rpc" && l.tiers.contains(&d.tier_name))
        })
    {
        slowest = (c.link_seconds, Some(&l.bandwidth));
    }
    let path = Assumption::BandwidthDoesNotDescribePath {
        provenance: slowest.1.map_or(c.provenance, |b| b.provenance),
        bandwidth: slowest.1.map_or(BytesPerSec(0.0), |b| b.value),
    };
    let n = r.inputs.cache.context;
    let line = |overlap: bool, rate: f64, assumptions: Vec<Assumption>| ClaimLine {
        kind: CeilingKind::Placement { overlap },
        context_tokens: n,
        tokens_per_second: rate,
        exceeded: tps > rate,
        assumptions,
    };
    vec![
        line(
            false,
            c.tokens_per_second,
            vec![
                Assumption::MemoriesOverlapped,
                Assumption::PlacementNotAsPlanned,
                path,
            ],
        ),
        line(
            true,
            c.overlapped_tokens_per_second,
            vec![Assumption::PlacementNotAsPlanned, path],
        ),
    ]
}
