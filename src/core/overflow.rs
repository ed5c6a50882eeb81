//! Byte figures beyond 2^64: checked before any bound is computed, so no report ever shows
//! saturated arithmetic (`18,446,744,073,709,551,615 bytes`) as if it were a result. The cache
//! figures are not recomputed here: `kv::cache_checked` runs `kv`'s own per-layer walk in
//! widened (u128, checked) arithmetic and names the first figure that does not fit; this
//! module adds the weights and the capacity sum around it. Typed outcome; `Display` words it
//! once. Pure: no I/O, no other top-level module.

use super::scenario::Scenario;
use std::fmt;

/// Which byte figure would not fit in 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteFigure {
    /// KV cache bytes per token (Σ over layers).
    KvPerToken,
    /// The logical KV cache at N over B sequences.
    KvCache,
    /// The KV cache llama.cpp allocates (padded cells).
    KvAllocated,
    /// The recurrent state over B sequences.
    RecurrentState,
    /// W: the files the runtime loads.
    Weights,
    /// W + K + A.
    Total,
}

impl ByteFigure {
    /// The figure in words.
    pub fn label(self) -> &'static str {
        match self {
            ByteFigure::KvPerToken => "the KV cache per token",
            ByteFigure::KvCache => "the KV cache",
            ByteFigure::KvAllocated => "the KV cache llama.cpp allocates",
            ByteFigure::RecurrentState => "the recurrent state",
            ByteFigure::Weights => "the weight files (W)",
            ByteFigure::Total => "weights + KV cache + other allocations (W + K + A)",
        }
    }
}

/// A byte figure beyond 2^64 − 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByteOverflow {
    /// Which figure.
    pub figure: ByteFigure,
    /// Its size, bytes, approximately (`f64::INFINITY` when even u128 overflowed).
    pub approx_bytes: f64,
}

impl fmt::Display for ByteOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = if self.approx_bytes.is_finite() {
            format!("about {:.3e} bytes", self.approx_bytes)
        } else {
            "more than 2^123 bytes".to_string()
        };
        let range = if self.figure == ByteFigure::KvPerToken {
            // Counted in 1/32-byte units (a q4_0 element is 4.5 bits) in 64 bits.
            "2^59 bytes per token (2^64 units of 1/32 byte)"
        } else {
            "2^64 − 1 bytes (16 EiB)"
        };
        write!(
            f,
            "{} would be {size}, which exceeds the representable range of {range}: no bound is computed",
            self.figure.label()
        )
    }
}

impl std::error::Error for ByteOverflow {}

const LIMIT: u128 = u64::MAX as u128;

fn over(figure: ByteFigure, value: Option<u128>) -> Result<u128, ByteOverflow> {
    match value {
        Some(v) if v <= LIMIT => Ok(v),
        Some(v) => Err(ByteOverflow {
            figure,
            approx_bytes: if figure == ByteFigure::KvPerToken {
                v as f64 / 32.0
            } else {
                v as f64
            },
        }),
        None => Err(ByteOverflow {
            figure,
            approx_bytes: f64::INFINITY,
        }),
    }
}

/// Check every byte figure of a scenario fits in 64 bits. The cache figures are those of
/// `kv::cache` itself: the same per-layer walk (windows, indexer caches, V padding, deepseek4's
/// compressed rows and compressor states, every kind of recurrent state), taken in widened
/// arithmetic by `kv::cache_checked`; this module adds only the sums around it.
pub fn check_scenario_bytes(s: &Scenario) -> Result<(), ByteOverflow> {
    let kv = super::kv::cache_checked(&s.model, &s.cache).map_err(|sat| ByteOverflow {
        figure: sat.figure,
        approx_bytes: match sat.value {
            Some(v) if sat.figure == ByteFigure::KvPerToken => v as f64 / 32.0,
            Some(v) => v as f64,
            None => f64::INFINITY,
        },
    })?;
    let weights = over(
        ByteFigure::Weights,
        s.weights
            .iter()
            .try_fold(0u128, |a, w| a.checked_add(w.bytes.value as u128)),
    )?;
    let other = s.other_bytes.value as u128;
    // The larger of the logical cache (with the state) and what llama.cpp allocates.
    let cache = (kv.bytes as u128 + kv.recurrent_bytes as u128).max(kv.allocated_bytes as u128);
    over(
        ByteFigure::Total,
        weights
            .checked_add(cache)
            .and_then(|x| x.checked_add(other)),
    )
    .map(|_| ())
}
