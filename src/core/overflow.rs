//! Byte figures beyond 2^64: checked before any bound is computed, so no report ever shows
//! saturated arithmetic (`18,446,744,073,709,551,615 bytes`) as if it were a result. The
//! figures are recomputed here in u128 with checked operations, each an upper bound of what
//! `kv::cache`, `weights::total_bytes` and the capacity sum compute in u64. Typed outcome;
//! `Display` words it once. Pure: no I/O, no other top-level module.

use super::model::{Attention, ModelShape};
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

/// Per-token cache bytes of one layer in 1/32-byte units, in u128 (as `kv::layer_b32_per_token`).
fn layer_b32(model: &ModelShape, il: usize, s: &Scenario) -> Option<u128> {
    let l = &model.layers[il];
    if l.attention == Attention::None {
        return Some(0);
    }
    let hkv = l.head_count_kv as u128;
    let ek = s.cache.type_k.b32_per_element() as u128;
    let ev = s.cache.type_v.b32_per_element() as u128;
    if model.mla.is_some() {
        return hkv.checked_mul(l.key_length as u128)?.checked_mul(ek);
    }
    let k = (l.key_length as u128).checked_mul(ek)?;
    let v = (l.value_length as u128).checked_mul(ev)?;
    hkv.checked_mul(k.checked_add(v)?)
}

/// Check every byte figure of a scenario fits in 64 bits.
pub fn check_scenario_bytes(s: &Scenario) -> Result<(), ByteOverflow> {
    let m = &s.model;
    let n = s.cache.context as u128;
    let b = s.cache.sequences.max(1) as u128;
    let pad = super::kv::PAD as u128;
    // Allocated cells per layer are at most n_ctx + 256 × B (n_ctx = N × B padded to 256).
    let n_ctx = (n * b).div_ceil(pad) * pad;
    let cells = n_ctx + pad * b;
    let (mut per_token, mut logical, mut allocated) = (Some(0u128), Some(0u128), Some(0u128));
    for (il, layer) in m.layers.iter().enumerate() {
        let b32 = layer_b32(m, il, s);
        let kept = super::kv::retained(layer.attention, s.cache.context) as u128;
        per_token = per_token.and_then(|t| t.checked_add(b32?));
        logical = logical.and_then(|t| t.checked_add(b32?.checked_mul(kept)?.checked_mul(b)?));
        allocated = allocated.and_then(|t| t.checked_add(b32?.checked_mul(cells)?));
    }
    // The per-token sum stays in 1/32-byte units in u64 inside `kv::cache`.
    over(ByteFigure::KvPerToken, per_token)?;
    let logical = over(ByteFigure::KvCache, logical.map(|x| x.div_ceil(32)))?;
    let allocated = over(ByteFigure::KvAllocated, allocated.map(|x| x.div_ceil(32)))?;
    let recurrent_bytes = match m.ssm {
        None => Some(0u128),
        Some(ss) => (|| {
            let groups = 2u128
                .checked_mul(ss.n_group as u128)?
                .checked_mul(ss.d_state as u128)?;
            let per_layer = (ss.d_conv.saturating_sub(1) as u128)
                .checked_mul((ss.d_inner as u128).checked_add(groups)?)?
                .checked_add((ss.d_state as u128).checked_mul(ss.d_inner as u128)?)?
                .checked_mul(4)?;
            let layers = m.layers.iter().filter(|l| l.recurrent).count() as u128;
            per_layer.checked_mul(layers)?.checked_mul(b)
        })(),
    };
    let recurrent = over(ByteFigure::RecurrentState, recurrent_bytes)?;
    let weights = over(
        ByteFigure::Weights,
        s.weights
            .iter()
            .try_fold(0u128, |a, w| a.checked_add(w.bytes.value as u128)),
    )?;
    let other = s.other_bytes.value as u128;
    let kv = logical.max(allocated) + recurrent;
    over(
        ByteFigure::Total,
        weights.checked_add(kv).and_then(|x| x.checked_add(other)),
    )
    .map(|_| ())
}
