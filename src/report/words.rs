//! The wording of the verdicts core returns as data (capacity, claim outcomes, ceiling names,
//! assumptions, what limits prefill) and of the runtime memory items, shared by the text,
//! markdown and JSON reports and the explorer. Depends on `core` only.

use crate::core::claim::{Assumption, ClaimOutcome};
use crate::core::decode::{CeilingKind, HighestBasis};
use crate::core::evaluate::{Capacity, ClaimCheck, FitVerdict};
use crate::core::roofline::{LinearBasis, PrefillBound, Roofline};
use crate::core::tiers::MemoryItem;
use crate::core::units;

/// Exact bytes, then the binary unit that suits them (three decimals): `2,992,365,216 bytes
/// = 2.787 GiB`, `565,117,409,561,760 bytes = 513.968 TiB`, `3,145,728 bytes = 3.000 MiB`.
/// Never six-digit GiB in a headline.
pub fn bytes_scaled(n: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(50, "PiB"), (40, "TiB"), (30, "GiB"), (20, "MiB")];
    let exact = units::group_digits(n as u128);
    match UNITS.iter().find(|(shift, _)| n >= 1u64 << shift) {
        Some((shift, name)) => {
            let v = n as f64 / (1u64 << shift) as f64;
            format!("{exact} bytes = {v:.3} {name}")
        }
        None => format!("{exact} bytes"),
    }
}

/// What the runtime's memory figures are and where they come from.
pub const BUFFERS_PROVENANCE: &str = "derived (llama.cpp model): output and compute buffers as llama.cpp's CPU backend reserves them; GPU backends reserve differently";

/// The reason beside a compute buffer that is an estimate: what is not replayed and the error
/// measured against llama.cpp's own figures.
pub fn compute_estimate(below_pct: u32, above_pct: u32, why: &str) -> String {
    format!(
        "an estimate, neither exact nor a bound: {why} is not replayed; on the llama.cpp fixtures it came out between {below_pct}% below and {above_pct}% above llama.cpp's figure"
    )
}

/// Short name of a memory item.
pub fn item(i: MemoryItem) -> &'static str {
    match i {
        MemoryItem::Model => "model",
        MemoryItem::Context => "cache",
        MemoryItem::Output => "output",
        MemoryItem::Compute => "compute",
        MemoryItem::User => "A",
    }
}

/// Longer name of a memory item, for sentences.
pub fn item_long(i: MemoryItem) -> &'static str {
    match i {
        MemoryItem::Model => "the weights",
        MemoryItem::Context => "the allocated cache",
        MemoryItem::Output => "the output buffer",
        MemoryItem::Compute => "the compute buffer",
        MemoryItem::User => "the other allocations A",
    }
}

/// The capacity verdict in words.
pub fn verdict(c: &Capacity) -> String {
    match &c.verdict {
        FitVerdict::Fits {
            user_counted: false,
        } => "fits if everything else stays within the free memory (cache and buffers counted, A = 0)".into(),
        FitVerdict::Fits { user_counted: true } => {
            "fits, with the runtime buffers and the other allocations counted".into()
        }
        FitVerdict::WillNotStart { refusals } => refusals
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("; "),
        FitVerdict::DoesNotFit {
            shortfalls,
            article_fits,
        } => {
            let short: Vec<String> = shortfalls
                .iter()
                .map(|s| {
                    // The allocated cache tips it only when the logical cache alone fits.
                    let what = if s.overflows_at == MemoryItem::Context && !s.logical_cache_fits
                    {
                        "the cache tips it: the logical cache alone does not fit"
                    } else {
                        ""
                    };
                    if what.is_empty() {
                        format!(
                            "{} is short by {} ({} tips it)",
                            s.tier,
                            bytes_scaled(s.bytes),
                            item_long(s.overflows_at)
                        )
                    } else {
                        format!("{} is short by {} ({what})", s.tier, bytes_scaled(s.bytes))
                    }
                })
                .collect();
            let mut v = format!("does not fit: {}", short.join("; "));
            if *article_fits {
                v.push_str("; W + K + A alone would fit: llama.cpp's cache padding and buffers decide");
            }
            v
        }
    }
}

/// The name of a ceiling at `context_tokens` retained tokens per sequence.
pub fn ceiling_name(kind: CeilingKind, context_tokens: u64) -> String {
    let n = units::fmt_tokens(context_tokens);
    match kind {
        CeilingKind::FileShort => "file mode, short context".into(),
        CeilingKind::FileFull => format!("file mode, {n} tokens"),
        CeilingKind::InventoryShort => "inventory mode, short context".into(),
        CeilingKind::InventoryFull { estimated } => format!(
            "inventory mode{}, {n} tokens",
            if estimated {
                " (estimate from active parameters)"
            } else {
                ""
            }
        ),
        CeilingKind::Highest {
            basis: HighestBasis::Inventory,
        } => format!(
            "highest: inventory bytes, fewest experts, highest bandwidth on record, {n} tokens"
        ),
        CeilingKind::Highest {
            basis: HighestBasis::EstimatedActive,
        } => format!(
            "highest without a tensor inventory: estimated active bytes, fewest experts, highest bandwidth on record, {n} tokens"
        ),
        CeilingKind::Highest {
            basis: HighestBasis::FileBytes,
        } => format!(
            "highest without a tensor inventory: file bytes, highest bandwidth on record, {n} tokens"
        ),
    }
}

/// What the highest ceilings are computed from, for "the highest of …" lines.
pub fn highest_of(decides: bool, estimated: bool) -> &'static str {
    if decides {
        "inventory bytes, fewest experts, highest bandwidth on record"
    } else if estimated {
        "estimated active bytes, fewest experts, highest bandwidth on record; no tensor inventory"
    } else {
        "file bytes, highest bandwidth on record; no tensor inventory"
    }
}

/// One assumption a rate above a ceiling falsifies, in words.
pub fn assumption(a: &Assumption) -> String {
    match *a {
        Assumption::NotAllFileBytesRead { detailed: true } => "not all file bytes are read per token (the token embedding is one row per token; unused experts are not read)".into(),
        Assumption::NotAllFileBytesRead { detailed: false } => "not all file bytes are read per token".into(),
        Assumption::FewerTokensRetained { context_tokens } => format!(
            "fewer than {} tokens were retained",
            units::fmt_tokens(context_tokens)
        ),
        Assumption::BandwidthDoesNotDescribePath {
            provenance,
            bandwidth,
        } => format!(
            "the {} bandwidth ({}) does not describe the path, or bytes were reused from a faster tier (cache) than the one counted",
            provenance,
            units::fmt_bandwidth(bandwidth)
        ),
        Assumption::RoutedShareNotAsAdvertised => "the routed-expert share of the file is not what the advertised active parameters imply (an estimate: no tensor inventory)".into(),
        Assumption::SequencesSharedExperts => "the sequences shared more experts than the expected number of distinct experts".into(),
        Assumption::RunIsNotScenario => "the run is not the scenario: a different artifact, fewer retained tokens, or a smaller batch".into(),
        Assumption::FasterTierServed => "bytes were served from a faster tier (on-chip cache) than any counted".into(),
        Assumption::MemoryAboveHighest { bandwidth } => format!(
            "the memory moved more than the highest bandwidth on record ({})",
            units::fmt_bandwidth(bandwidth)
        ),
        Assumption::BandwidthAboveHighest { bandwidth } => format!(
            "the bandwidth exceeded the highest on record ({})",
            units::fmt_bandwidth(bandwidth)
        ),
        Assumption::MeasuredBelowPath { bandwidth } => format!(
            "the measured bandwidth ({}) is below what this path reaches: measured while other work shared the memory, with other threads, or with a slower kernel than the run's",
            units::fmt_bandwidth(bandwidth)
        ),
        Assumption::AddPeakToProfile => "add the memory's peak (provenance spec or derived: channels × 8 bytes × transfer rate) to the profile: a rate above a ceiling from the peak is impossible".into(),
    }
}

/// Every assumption of a list, in words.
pub fn assumptions(a: &[Assumption]) -> Vec<String> {
    a.iter().map(assumption).collect()
}

/// " across B sequences" when B > 1: a rate is aggregate over the sequences.
pub fn across_sequences(sequences: u64) -> String {
    if sequences > 1 {
        format!(" across {sequences} sequences")
    } else {
        String::new()
    }
}

/// Tokens/s in a sentence: as `units::fmt_rate`, with three significant digits below 0.01 so
/// a tiny ceiling never reads `0.00` beside the `0.00365` of the lines under it, and grouped
/// thousands from 1,000 (`1,078.57`, as the lines under it).
pub fn rate(tps: f64) -> String {
    if tps.is_finite() && tps > 0.0 && tps < 0.01 {
        let digits = (2 - tps.log10().floor() as i32).clamp(0, 12) as usize;
        let s = format!("{tps:.digits$}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if tps.is_finite() && (1_000.0..100_000.0).contains(&tps) {
        // Grouped as in the tables under the headline: 1,078.57.
        let s = format!("{tps:.2}");
        let (int, frac) = s.split_once('.').unwrap_or((&s, "00"));
        let int: u128 = int.parse().unwrap_or(0);
        return format!("{}.{frac}", units::group_digits(int));
    }
    units::fmt_rate(tps)
}

/// The claim check's headline. It quotes the highest ceilings only (one mode: inventory when
/// the header is known), each with its context. Above the highest ceiling at N while within
/// it at a short context, it says how far the claim reaches: impossible (or above) with N
/// tokens retained, possible with at most M retained (`ClaimCheck::max_context_tokens`).
pub fn claim_verdict(c: &ClaimCheck) -> String {
    let h = rate(c.highest_tokens_per_second);
    let hs = rate(c.highest_short_tokens_per_second);
    let n = units::fmt_tokens(c.context_tokens);
    let tps = rate(c.tokens_per_second);
    let agg = across_sequences(c.sequences);
    // Both highest figures, each with its context, when they differ.
    let both = if c.highest_short_tokens_per_second > c.highest_tokens_per_second {
        format!("{hs} tokens/s at a short context, {h} at {n} tokens")
    } else {
        format!("{h} tokens/s")
    };
    let reach = match c.max_context_tokens {
        Some(0) => format!(
            "possible only with no tokens retained (the highest ceiling at a short context is {hs} tokens/s)"
        ),
        Some(m) => format!(
            "possible with at most {} tokens retained (the highest ceiling at a short context is {hs} tokens/s)",
            units::fmt_tokens(m)
        ),
        None => String::new(),
    };
    // Where nothing can be called impossible, nothing is called possible either: "within it".
    let within = reach
        .replacen("possible only with", "within it only with", 1)
        .replacen("possible with", "within it with", 1);
    let decides = c.context_decides() && c.max_context_tokens.is_some();
    match c.outcome {
        ClaimOutcome::AboveMeasured if decides => format!(
            "above the measured ceiling with {n} tokens retained ({h} tokens/s{agg}): the measured bandwidth ({}) does not describe this path, not impossible (no peak bandwidth is on record for the tier); {within}",
            units::fmt_bandwidth(c.highest_bandwidth)
        ),
        ClaimOutcome::AboveMeasured => format!(
            "above the measured ceiling ({both}{agg}): the measured bandwidth ({}) does not describe this path, not impossible (no peak bandwidth is on record for the tier)",
            units::fmt_bandwidth(c.highest_bandwidth)
        ),
        ClaimOutcome::Impossible if decides => format!(
            "IMPOSSIBLE with {n} tokens retained: {tps} tokens/s{agg} is above the highest ceiling at {n} tokens ({h} tokens/s); {reach}"
        ),
        ClaimOutcome::Impossible => format!(
            "IMPOSSIBLE: {tps} tokens/s{agg} is above the highest ceiling at every context ({both})"
        ),
        ClaimOutcome::AboveWithoutInventory if decides => format!(
            "above the ceiling at {n} tokens computed without a tensor inventory ({h} tokens/s{agg}); {within}; open the GGUF to decide whether it is impossible"
        ),
        ClaimOutcome::AboveWithoutInventory => format!(
            "above every ceiling computed without a tensor inventory ({both}{agg}): open the GGUF to decide whether it is impossible"
        ),
        ClaimOutcome::AboveLower => {
            above_lower(c.exceeded().map(|l| ceiling_name(l.kind, l.context_tokens)))
        }
        ClaimOutcome::Within => {
            "within every ceiling: possible (a rate below a ceiling identifies no cause)".into()
        }
    }
}

/// The verdict of a rate above the ceilings `names` (each worded by `ceiling_name`) but below
/// the highest: the claim report's and the bench rows' one sentence.
pub fn above_lower(names: impl IntoIterator<Item = String>) -> String {
    let names: Vec<String> = names.into_iter().collect();
    format!(
        "possible, but above the {} ceiling: an assumption listed there is false",
        names.join(", the ")
    )
}

/// A claim check worded: the same shape as `core::ClaimCheck`, every label a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimWords {
    /// The rate checked, tokens/s (aggregate over the sequences).
    pub tokens_per_second: f64,
    /// Sequences B the rate is aggregate over.
    pub sequences: u64,
    /// Above the highest ceiling that can decide.
    pub impossible: bool,
    /// The headline.
    pub verdict: String,
    /// Every ceiling, highest last.
    pub lines: Vec<ClaimLineWords>,
}

/// One ceiling of a worded claim check.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimLineWords {
    /// Its name.
    pub ceiling: String,
    /// Its value, tokens/s.
    pub tokens_per_second: f64,
    /// The rate is above it.
    pub exceeded: bool,
    /// What a rate above it falsifies.
    pub assumptions: Vec<String>,
}

/// Word a claim check.
pub fn claim(c: &ClaimCheck) -> ClaimWords {
    ClaimWords {
        tokens_per_second: c.tokens_per_second,
        sequences: c.sequences,
        impossible: c.impossible,
        verdict: claim_verdict(c),
        lines: c
            .lines
            .iter()
            .map(|l| ClaimLineWords {
                ceiling: ceiling_name(l.kind, l.context_tokens),
                tokens_per_second: l.tokens_per_second,
                exceeded: l.exceeded,
                assumptions: assumptions(&l.assumptions),
            })
            .collect(),
    }
}

/// Why there is no prefill ceiling, or what limits it.
pub fn prefill_reason(r: &Roofline) -> String {
    prefill_bound(r.prefill_bound, r.prompt_rows, &r.compute_path)
}

/// A prefill bound in words, for S prompt rows on a compute path.
pub fn prefill_bound(bound: PrefillBound, prompt_rows: u64, compute_path: &str) -> String {
    match bound {
        PrefillBound::Limited(side) => format!(
            "prefill of {prompt_rows} rows is {}-limited on the \"{compute_path}\" path",
            side.label(),
        ),
        PrefillBound::NoLinearParameters => "no prefill ceiling: the linear parameter count is unknown (no inventory and no advertised parameters)".into(),
        PrefillBound::NoComputeRate => format!(
            "none: the profile has no sustained compute rate for this path (\"{compute_path}\")"
        ),
    }
}

/// Where the linear parameter count comes from, in words.
pub fn linear_basis(b: LinearBasis) -> &'static str {
    match b {
        LinearBasis::Inventory => "counted from the tensor inventory",
        LinearBasis::AdvertisedTied => {
            "advertised parameters (tied embedding counted once, as the output)"
        }
        LinearBasis::AdvertisedMinusEmbedding => {
            "advertised parameters minus the token embedding (vocab × hidden)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bytes_scaled;

    #[test]
    fn a_shortfall_reads_in_a_unit_that_suits_it() {
        assert_eq!(
            bytes_scaled(2_992_365_216),
            "2,992,365,216 bytes = 2.787 GiB"
        );
        assert_eq!(
            bytes_scaled(565_117_409_561_760),
            "565,117,409,561,760 bytes = 513.971 TiB"
        );
        assert_eq!(bytes_scaled(3 << 20), "3,145,728 bytes = 3.000 MiB");
        assert_eq!(bytes_scaled(1000), "1,000 bytes");
        assert_eq!(super::rate(0.003651), "0.00365");
        assert_eq!(super::rate(0.0000913), "0.0000913");
        assert_eq!(super::rate(13.814), "13.81");
        assert_eq!(super::rate(1078.571), "1,078.57");
        assert_eq!(super::rate(5000.0), "5,000.00");
        assert_eq!(super::rate(129_269.4), "129,269");
        assert_eq!(
            bytes_scaled(3 << 50),
            "3,377,699,720,527,872 bytes = 3.000 PiB"
        );
    }
}
