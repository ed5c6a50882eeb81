//! The wording of the verdicts core returns as data (capacity, claim outcomes — one sentence
//! for `check`, the llama-bench rows and the explorer —, ceiling names, assumptions, what
//! limits prefill, the report's warnings) and of the runtime memory items, shared by the text,
//! markdown and JSON reports and the explorer. Numbers come from `core::units`' one formatter
//! set. Depends on `core` only.

use crate::core::claim::{Assumption, ClaimOutcome, Verdict};
use crate::core::decode::{CeilingKind, HighestBasis};
use crate::core::evaluate::{Capacity, ClaimCheck, FitVerdict, Warning};
use crate::core::roofline::{LinearBasis, PrefillBound, Roofline};
use crate::core::tiers::MemoryItem;
use crate::core::units;

/// Exact bytes, then the binary unit that suits them (`core::units`' one formatter set).
pub use crate::core::units::bytes_scaled;
/// Tokens/s in a sentence (`core::units`' one rate format: `1,078.57`, `0.00365`).
pub use crate::core::units::fmt_rate as rate;

/// A warning about the inputs in words: the one wording of text, markdown, JSON and the
/// explorer.
pub fn warning(w: &Warning) -> String {
    match w {
        Warning::Model(text) => text.clone(),
        Warning::CacheRefused(r) => r.to_string(),
        Warning::ComputeEstimate {
            architecture,
            not_replayed,
            below_pct,
            above_pct,
        } => format!(
            "the compute buffer of {architecture} is an estimate, neither exact nor a bound ({not_replayed} is not replayed): on llama.cpp's own figures it came out between {below_pct}% below and {above_pct}% above, so leave extra free memory"
        ),
        Warning::ComputeUpperBound {
            architecture,
            bounded,
        } => format!(
            "the compute buffer of {architecture} is an upper bound, not a replay of its graph (bounded: {bounded}): it may be higher than llama.cpp reserves"
        ),
        Warning::ComputeUnchecked {
            architecture,
            missing,
        } => format!(
            "the compute buffer of {architecture} replays its graph as read from llama.cpp's source but is not yet checked against llama.cpp on both a small and a realistic shape ({missing}): it may be off either way, so leave extra free memory"
        ),
        Warning::BeyondNativeContext {
            context_tokens,
            native_tokens,
        } => format!(
            "context {} is beyond the model's native {} tokens",
            units::fmt_tokens(*context_tokens),
            units::fmt_tokens(*native_tokens)
        ),
        Warning::InventoryLayers { inventory, model } => format!(
            "the inventory has {inventory} layers but the model {model}: per-layer placement estimated"
        ),
    }
}

/// Every warning of a list, in words.
pub fn warnings(ws: &[Warning]) -> Vec<String> {
    ws.iter().map(warning).collect()
}

/// What a ceiling on a vendor's (spec) bandwidth is called, everywhere it is named.
pub const VENDOR_CEILING: &str = "optimistic vendor ceiling";

/// `-fit` without devices kept a context the host cannot hold: its projection leaves out the
/// weights in `CPU_REPACK` (`repack` the figure, formatted).
pub fn fit_left_out_repack(repack: &str) -> String {
    format!(
        "llama.cpp's -fit leaves the {repack} of weights in CPU_REPACK out of its projection of system memory, so it keeps this context although the host is short"
    )
}

/// What a device's tensor limit leaves to the host in the prompt graph, in one sentence
/// (`device`: its buffer name): the text report, JSON's `host_runs.sentence` and the explorer's
/// Devices view.
pub fn limited_ops(device: &str, lo: &crate::core::placement::LimitedOps) -> String {
    let (what, hint) = limited_ops_parts(device, lo);
    match hint {
        Some(h) => format!("{what} ({h})"),
        None => what,
    }
}

/// [`limited_ops`] in its two parts: what the host runs, and (with FFN layers) the weights
/// copied and the `-ub` that avoids it — two lines where a view wraps them.
pub fn limited_ops_parts(
    device: &str,
    lo: &crate::core::placement::LimitedOps,
) -> (String, Option<String>) {
    let mut parts = Vec::new();
    if lo.ffn_layers > 0 {
        parts.push(format!(
            "the FFN of {} (activations {})",
            plural(u64::from(lo.ffn_layers), "layer"),
            units::fmt_binary(lo.ffn_tensor)
        ));
    }
    if lo.attention_layers > 0 {
        parts.push(format!(
            "the attention of {} (a tensor of {})",
            plural(u64::from(lo.attention_layers), "layer"),
            units::fmt_binary(lo.attention_tensor)
        ));
    }
    let what = format!(
        "prompt processing at -ub {}: the host runs {}, over {device}'s {} tensor limit",
        lo.rows,
        parts.join(" and "),
        units::fmt_binary(lo.limit)
    );
    let hint = (lo.ffn_layers > 0).then(|| {
        // (the flag as llama.cpp takes it: no digit grouping)
        let copied = match lo.ffn_weights_copied {
            0 => String::new(),
            n if n == lo.ffn_layers => "the FFN weights copied to the host each ubatch; ".into(),
            n => format!(
                "the FFN weights of {} copied to the host each ubatch; ",
                plural(u64::from(n), "layer")
            ),
        };
        format!(
            "{copied}-ub {} or less keeps the FFN on the device",
            lo.ffn_max_ubatch
        )
    });
    (what, hint)
}

/// `1 layer`, `62 layers`, `1,024 dry-run projections`: a count and its noun, the count in the
/// one digit grouping.
pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{} {word}s", units::fmt_tokens(n))
    }
}

/// A ceiling's label by its bandwidth's provenance: a spec bandwidth makes it an
/// [`VENDOR_CEILING`], any other a "ceiling".
pub fn ceiling_label(bandwidth: crate::core::units::Provenance) -> &'static str {
    if bandwidth == crate::core::units::Provenance::Spec {
        VENDOR_CEILING
    } else {
        "ceiling"
    }
}

/// The provenance of the buffers when the tiers follow the tensor placement.
pub const PLACED_BUFFERS_PROVENANCE: &str = "derived (llama.cpp placement): each device's compute buffer as the scheduler splits the graph, the host's beside them (see Placement)";
/// What the runtime's memory figures are and where they come from.
pub const BUFFERS_PROVENANCE: &str = "derived (llama.cpp model): output and compute buffers as llama.cpp's CPU backend reserves them; GPU backends reserve differently";

/// The reason beside a compute buffer that is an estimate: what is not replayed and the error
/// measured against llama.cpp's own figures.
pub fn compute_estimate(below_pct: u32, above_pct: u32, why: &str) -> String {
    format!(
        "an estimate, neither exact nor a bound: {why} is not replayed; on the llama.cpp fixtures it came out between {below_pct}% below and {above_pct}% above llama.cpp's figure"
    )
}

/// The reason beside a compute buffer whose replay no llama.cpp figure checks yet.
pub fn compute_unchecked(missing: &str) -> String {
    format!(
        "replayed from llama.cpp's source, not yet checked against llama.cpp on both a small and a realistic shape ({missing}): it may be off either way"
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
    let n = plural(context_tokens, "token");
    match kind {
        CeilingKind::FileShort => "file mode, short context".into(),
        CeilingKind::FileFull => format!("file mode, {n}"),
        CeilingKind::InventoryShort => "inventory mode, short context".into(),
        CeilingKind::InventoryFull { estimated } => format!(
            "inventory mode{}, {n}",
            if estimated {
                " (estimate from active parameters)"
            } else {
                ""
            }
        ),
        CeilingKind::Placement { overlap: false } => {
            format!("plan's placement, memories one after another (sum bound), {n}")
        }
        CeilingKind::Placement { overlap: true } => {
            format!("plan's placement, the slowest memory alone (overlap bound), {n}")
        }
        CeilingKind::Highest {
            basis: HighestBasis::Inventory,
        } => format!("highest: inventory bytes, fewest experts, highest bandwidth on record, {n}"),
        CeilingKind::Highest {
            basis: HighestBasis::EstimatedActive,
        } => format!(
            "highest without a tensor inventory: estimated active bytes, fewest experts, highest bandwidth on record, {n}"
        ),
        CeilingKind::Highest {
            basis: HighestBasis::FileBytes,
        } => format!(
            "highest without a tensor inventory: file bytes, highest bandwidth on record, {n}"
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
        Assumption::MemoriesOverlapped => "the memories were read at the same time, not one after another as -sm layer takes the devices at batch one".into(),
        Assumption::PlacementNotAsPlanned => "the run placed the tensors otherwise than this plan (another -ngl, -ts or -ot)".into(),
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

/// The claim check's headline.
pub fn claim_verdict(c: &ClaimCheck) -> String {
    claim_sentence(&c.verdict())
}

/// A claim verdict in words: the one vocabulary of `check`, the llama-bench rows and the
/// explorer. It quotes the highest ceilings only (one mode: inventory when the header is
/// known), each with its context. Above the highest ceiling at N while within it at a short
/// context, it says how far the claim reaches: impossible (or above) with N tokens retained,
/// possible with at most M retained (`Verdict::max_context_tokens`).
pub fn claim_sentence(v: &Verdict) -> String {
    let h = rate(v.highest_tokens_per_second);
    let n = plural(v.context_tokens, "token");
    let tps = rate(v.tokens_per_second);
    let agg = across_sequences(v.sequences);
    // Both highest figures, each with its context, when they differ.
    let both = match v.highest_short_tokens_per_second {
        Some(s) if s > v.highest_tokens_per_second => {
            format!("{} tokens/s at a short context, {h} at {n}", rate(s))
        }
        _ => format!("{h} tokens/s"),
    };
    let short = v
        .highest_short_tokens_per_second
        .map(|s| {
            format!(
                " (the highest ceiling at a short context is {} tokens/s)",
                rate(s)
            )
        })
        .unwrap_or_default();
    // How far the claim reaches; where nothing can be called impossible, nothing is called
    // possible either: "within it".
    let reach_as = |word: &str| match v.max_context_tokens {
        Some(0) => format!("{word} only with no tokens retained{short}"),
        Some(m) => format!(
            "{word} with at most {} tokens retained{short}",
            units::fmt_tokens(m)
        ),
        None => String::new(),
    };
    let reach = reach_as("possible");
    let within = reach_as("within it");
    let decides = v.context_decides();
    match v.outcome {
        ClaimOutcome::AboveMeasured if decides => format!(
            "above the measured ceiling with {n} retained ({h} tokens/s{agg}): the measured bandwidth ({}) does not describe this path, not impossible (no peak bandwidth is on record for the tier); {within}",
            units::fmt_bandwidth(v.highest_bandwidth)
        ),
        ClaimOutcome::AboveMeasured => format!(
            "above the measured ceiling ({both}{agg}): the measured bandwidth ({}) does not describe this path, not impossible (no peak bandwidth is on record for the tier)",
            units::fmt_bandwidth(v.highest_bandwidth)
        ),
        ClaimOutcome::Impossible if decides => format!(
            "IMPOSSIBLE with {n} retained: {tps} tokens/s{agg} is above the highest ceiling at {n} ({h} tokens/s); {reach}"
        ),
        ClaimOutcome::Impossible => format!(
            "IMPOSSIBLE: {tps} tokens/s{agg} is above the highest ceiling at every context ({both})"
        ),
        ClaimOutcome::AboveWithoutInventory if decides => format!(
            "above the ceiling at {n} computed without a tensor inventory ({h} tokens/s{agg}); {within}; open the GGUF to decide whether it is impossible"
        ),
        ClaimOutcome::AboveWithoutInventory => format!(
            "above every ceiling computed without a tensor inventory ({both}{agg}): open the GGUF to decide whether it is impossible"
        ),
        ClaimOutcome::AboveLower => above_lower(
            v.exceeded
                .iter()
                .map(|&(kind, context)| ceiling_name(kind, context)),
        ),
        ClaimOutcome::Within => {
            "within every ceiling: possible (a rate below a ceiling identifies no cause)".into()
        }
    }
}

/// The verdict of a rate above the ceilings `names` (each worded by `ceiling_name`) but below
/// the highest: the claim report's and the bench rows' one sentence.
pub fn above_lower(names: impl IntoIterator<Item = String>) -> String {
    let names: Vec<String> = names
        .into_iter()
        .map(|n| format!("the {n} ceiling"))
        .collect();
    let listed = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    };
    let there = if names.len() > 1 {
        "under each"
    } else {
        "there"
    };
    format!("possible, but above {listed}: an assumption listed {there} is false")
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

    /// One token is one token (a context of 1, as the claim verdicts' property test reaches).
    #[test]
    fn a_ceiling_at_one_token_is_singular() {
        use crate::core::decode::CeilingKind;
        assert_eq!(
            super::ceiling_name(CeilingKind::FileFull, 1),
            "file mode, 1 token"
        );
        assert_eq!(
            super::ceiling_name(CeilingKind::FileFull, 32_768),
            "file mode, 32,768 tokens"
        );
    }

    #[test]
    fn a_rate_above_several_lower_ceilings_names_each() {
        let one = super::above_lower(["file mode, short context".to_string()]);
        assert_eq!(
            one,
            "possible, but above the file mode, short context ceiling: an assumption listed there is false"
        );
        let three = super::above_lower(["a, 1", "b, 2", "c, 3"].map(String::from));
        assert_eq!(
            three,
            "possible, but above the a, 1 ceiling, the b, 2 ceiling and the c, 3 ceiling: an assumption listed under each is false"
        );
    }

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

    /// The limit sentence in its two parts (the Devices view's two lines, neither cut at 80
    /// columns) is the report's sentence; without FFN layers there is no `-ub` hint.
    #[test]
    fn the_limit_sentence_splits_into_what_and_how_to_avoid_it() {
        let lo = crate::core::placement::LimitedOps {
            limit: 128 << 20,
            rows: 2048,
            attention_layers: 62,
            attention_tensor: 8 << 30,
            ffn_layers: 62,
            ffn_tensor: 21_504 * 2048 * 4,
            ffn_weights_copied: 19,
            ffn_max_ubatch: 1560,
        };
        let (what, hint) = super::limited_ops_parts("Vulkan0", &lo);
        let hint = hint.expect("a hint with FFN layers");
        assert_eq!(
            super::limited_ops("Vulkan0", &lo),
            format!("{what} ({hint})")
        );
        assert!(
            what.starts_with("prompt processing at -ub 2048: the host runs the FFN of 62 layers")
        );
        assert!(
            what.ends_with("over Vulkan0's 128.000 MiB tensor limit"),
            "{what}"
        );
        assert_eq!(
            hint,
            "the FFN weights of 19 layers copied to the host each ubatch; -ub 1560 or less keeps the FFN on the device"
        );
        let attention_only = crate::core::placement::LimitedOps {
            ffn_layers: 0,
            ffn_weights_copied: 0,
            ..lo
        };
        assert_eq!(super::limited_ops_parts("Vulkan0", &attention_only).1, None);
    }
}
