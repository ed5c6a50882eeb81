//! Roofline: FLOPs and bytes per step, arithmetic intensity, machine balance, the prefill
//! ceiling (only with a compute rate for the path) and the crossover rows S* (docs/bounds.md §5).
//! Pure: no I/O, no other top-level module.

use super::model::{Attention, ModelShape};
use super::units::{FlopPerSec, Provenance};

/// Attention FLOPs per token per unit of retained tokens for one layer: 2 × H_q × (d_k + d_v)
/// (absorbed MLA: d_k + d_v = (kv_lora_rank + rope) + kv_lora_rank).
pub fn attention_flops_per_cell(model: &ModelShape, il: usize) -> f64 {
    let l = &model.layers[il];
    if l.attention == Attention::None {
        return 0.0;
    }
    let dk_dv = match model.mla {
        Some(m) => (m.kv_lora_rank + m.rope_dim + m.kv_lora_rank) as f64,
        None => (l.key_length + l.value_length) as f64,
    };
    2.0 * l.head_count as f64 * dk_dv
}

/// Attention FLOPs for one new token at retained length N (N_l = min(N, window) on sliding layers).
pub fn attention_flops_per_token(model: &ModelShape, n: u64) -> f64 {
    (0..model.layers.len())
        .map(|il| {
            attention_flops_per_cell(model, il)
                * super::kv::read_cells(model.layers[il].attention, n) as f64
        })
        .sum()
}

/// Σ_{i=1..S} min(N0 + i, cap): cells attended by S causal prompt rows after N0 cached.
fn attended_cells(n0: u64, s: u64, cap: Option<u64>) -> f64 {
    let (n0, s) = (n0 as f64, s as f64);
    match cap {
        None => s * n0 + s * (s + 1.0) / 2.0,
        Some(w) => {
            let w = w as f64;
            let m = (w - n0).clamp(0.0, s);
            m * n0 + m * (m + 1.0) / 2.0 + (s - m) * w
        }
    }
}

/// Attention FLOPs of a causal prefill of S rows after N0 cached tokens:
/// 2 Σ_l H_q (d_k + d_v) Σ_i min(N0 + i, window_l).
pub fn prefill_attention_flops(model: &ModelShape, n0: u64, s: u64) -> f64 {
    (0..model.layers.len())
        .map(|il| {
            let cap = match model.layers[il].attention {
                Attention::Sliding { window } => Some(window),
                Attention::Chunked { chunk } => Some(chunk),
                _ => None,
            };
            attention_flops_per_cell(model, il) * attended_cells(n0, s, cap)
        })
        .sum()
}

/// The linear side of the model: parameters and bytes used per token.
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    /// P_linear: weight-matrix elements used per token.
    pub parameters: f64,
    /// W_linear: bytes of those matrices.
    pub bytes: f64,
    /// From the tensor inventory (file) or derived from advertised figures.
    pub provenance: Provenance,
    /// How it was obtained (the exporters word it).
    pub basis: LinearBasis,
}

/// Where the linear parameter count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinearBasis {
    /// Counted from the tensor inventory.
    Inventory,
    /// The advertised parameters; the tied embedding counts once, as the output.
    AdvertisedTied,
    /// The advertised parameters minus the token embedding (vocab × hidden).
    AdvertisedMinusEmbedding,
}

/// What limits a roofline-bounded time: the compute roof or the memory slope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitedBy {
    /// F / C ≥ Q / BW: the compute rate decides.
    Compute,
    /// Q / BW > F / C: the bandwidth decides.
    Bandwidth,
}

impl LimitedBy {
    /// A stable lower-case label (JSON, and the "compute-limited" wording).
    pub fn label(self) -> &'static str {
        match self {
            LimitedBy::Compute => "compute",
            LimitedBy::Bandwidth => "bandwidth",
        }
    }
}

/// Whether there is a prefill ceiling, and what limits it or why there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefillBound {
    /// A ceiling, limited by one side.
    Limited(LimitedBy),
    /// A compute rate but no linear parameter count (no inventory, no advertised parameters).
    NoLinearParameters,
    /// The profile has no sustained compute rate for the path.
    NoComputeRate,
}

/// Result of the roofline analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofline {
    /// Linear parameters and bytes.
    pub linear: Option<Linear>,
    /// Decode FLOPs per step at N (all B sequences).
    pub decode_flops: f64,
    /// Decode bytes per step at N (file mode Q_step).
    pub decode_bytes: f64,
    /// Decode arithmetic intensity I = F / Q, FLOP/byte.
    pub decode_intensity: f64,
    /// Weight-only intensity at batch-one decode 2 P_linear / W_linear, FLOP/byte.
    pub weight_only_intensity: Option<f64>,
    /// Prompt rows S.
    pub prompt_rows: u64,
    /// Prefill FLOPs for S rows.
    pub prefill_flops: f64,
    /// Prefill bytes (weights once + KV written).
    pub prefill_bytes: f64,
    /// Prefill intensity F / Q, FLOP/byte.
    pub prefill_intensity: f64,
    /// Compute path named by the scenario.
    pub compute_path: String,
    /// Compute rate for the path, when the profile has one.
    pub compute: Option<FlopPerSec>,
    /// Its provenance.
    pub compute_provenance: Option<Provenance>,
    /// Bandwidth the roofline uses (bytes/s).
    pub bandwidth: f64,
    /// Machine balance R = C / BW, FLOP/byte.
    pub machine_balance: Option<f64>,
    /// Crossover S* = R × W_linear / (2 P_linear), rows.
    pub crossover_rows: Option<f64>,
    /// Prefill time bound max(F/C, Q/BW), seconds.
    pub prefill_seconds: Option<f64>,
    /// Prefill ceiling S / time, tokens/s. None without a compute rate.
    pub prefill_ceiling_tokens_per_second: Option<f64>,
    /// Which side limits prefill (with a ceiling).
    pub prefill_limited_by: Option<LimitedBy>,
    /// Decode time bound including compute, seconds (with a compute rate).
    pub decode_compute_seconds: Option<f64>,
    /// Why there is no prefill ceiling, or what limits it (the exporters word it).
    pub prefill_bound: PrefillBound,
    /// Ridge point of the roofline: the intensity where the slope BW × I meets the compute
    /// roof C, FLOP/byte (= `machine_balance`; None without a compute rate).
    pub ridge_intensity: Option<f64>,
    /// Attainable rate at the decode intensity, min(BW × I_decode, C), FLOP/s.
    pub decode_attainable_flops_per_second: f64,
    /// Attainable rate at the prefill intensity, min(BW × I_prefill, C), FLOP/s.
    pub prefill_attainable_flops_per_second: f64,
}

impl Roofline {
    /// Attainable rate at an arithmetic intensity I (FLOP/byte): min(BW × I, C), FLOP/s; the
    /// slope alone without a compute rate. The one place the roofline's shape is computed.
    pub fn attainable_flops_per_second(&self, intensity: f64) -> f64 {
        attainable(self.bandwidth, self.compute.map(|c| c.0), intensity)
    }
}

fn attainable(bandwidth: f64, compute: Option<f64>, intensity: f64) -> f64 {
    let slope = bandwidth * intensity;
    match compute.filter(|c| *c > 0.0) {
        Some(c) => slope.min(c),
        None => slope,
    }
}

/// Inputs of the roofline, gathered by `evaluate`.
pub struct RooflineInput<'a> {
    /// Model.
    pub model: &'a ModelShape,
    /// Linear parameters and bytes, if known.
    pub linear: Option<Linear>,
    /// Sequences B.
    pub sequences: u64,
    /// Retained tokens N.
    pub context: u64,
    /// Decode Q_step at N (file mode).
    pub decode_bytes: u64,
    /// Weights read once by a prefill (bytes).
    pub prefill_weight_bytes: u64,
    /// KV bytes per token (all layers) written by prefill.
    pub kv_bytes_per_token: u64,
    /// Prompt rows S.
    pub prompt_rows: u64,
    /// Compute path.
    pub compute_path: &'a str,
    /// Compute rate and provenance for the path, if any.
    pub compute: Option<(FlopPerSec, Provenance)>,
    /// Bandwidth, bytes/s.
    pub bandwidth: f64,
}

/// Evaluate the roofline.
pub fn roofline(inp: RooflineInput<'_>) -> Roofline {
    let b = inp.sequences.max(1) as f64;
    let p_lin = inp.linear.as_ref().map_or(0.0, |l| l.parameters);
    let decode_flops = b * (2.0 * p_lin + attention_flops_per_token(inp.model, inp.context));
    let decode_bytes = inp.decode_bytes as f64;
    let s = inp.prompt_rows;
    let prefill_flops = s as f64 * 2.0 * p_lin + prefill_attention_flops(inp.model, 0, s);
    let prefill_bytes = inp.prefill_weight_bytes as f64 + inp.kv_bytes_per_token as f64 * s as f64;
    let weight_only = inp
        .linear
        .as_ref()
        .filter(|l| l.bytes > 0.0)
        .map(|l| 2.0 * l.parameters / l.bytes);
    let (compute, compute_prov) = match inp.compute {
        Some((c, p)) => (Some(c), Some(p)),
        None => (None, None),
    };
    let balance = compute.map(|c| c.0 / inp.bandwidth);
    let crossover = match (balance, &inp.linear) {
        (Some(r), Some(l)) if l.parameters > 0.0 => Some(r * l.bytes / (2.0 * l.parameters)),
        _ => None,
    };
    let (prefill_seconds, ceiling, limited, decode_compute, bound) = match (compute, &inp.linear) {
        (Some(c), Some(_)) => {
            let tc = prefill_flops / c.0;
            let tb = prefill_bytes / inp.bandwidth;
            let t = tc.max(tb);
            let side = if tc >= tb {
                LimitedBy::Compute
            } else {
                LimitedBy::Bandwidth
            };
            (
                Some(t),
                Some(s as f64 / t),
                Some(side),
                Some((decode_flops / c.0).max(decode_bytes / inp.bandwidth)),
                PrefillBound::Limited(side),
            )
        }
        (Some(_), None) => (None, None, None, None, PrefillBound::NoLinearParameters),
        (None, _) => (None, None, None, None, PrefillBound::NoComputeRate),
    };
    let decode_intensity = if decode_bytes > 0.0 {
        decode_flops / decode_bytes
    } else {
        0.0
    };
    let prefill_intensity = if prefill_bytes > 0.0 {
        prefill_flops / prefill_bytes
    } else {
        0.0
    };
    let c_rate = compute.map(|c| c.0);
    Roofline {
        linear: inp.linear,
        decode_flops,
        decode_bytes,
        decode_intensity,
        weight_only_intensity: weight_only,
        prompt_rows: s,
        prefill_flops,
        prefill_bytes,
        prefill_intensity,
        compute_path: inp.compute_path.to_string(),
        compute,
        compute_provenance: compute_prov,
        bandwidth: inp.bandwidth,
        machine_balance: balance,
        crossover_rows: crossover,
        prefill_seconds,
        prefill_ceiling_tokens_per_second: ceiling,
        prefill_limited_by: limited,
        decode_compute_seconds: decode_compute,
        prefill_bound: bound,
        ridge_intensity: balance,
        decode_attainable_flops_per_second: attainable(inp.bandwidth, c_rate, decode_intensity),
        prefill_attainable_flops_per_second: attainable(inp.bandwidth, c_rate, prefill_intensity),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attended_cells_closed_form() {
        assert_eq!(attended_cells(0, 4, None), 10.0);
        assert_eq!(attended_cells(10, 2, None), 10.0 * 2.0 + 3.0);
        // window 3: rows see 1, 2, 3, 3, 3
        assert_eq!(attended_cells(0, 5, Some(3)), 12.0);
        // already past the window: every row sees 3
        assert_eq!(attended_cells(100, 4, Some(3)), 12.0);
    }

    #[test]
    fn attainable_is_the_lower_of_slope_and_roof() {
        // BW 100 B/s, C 1000 FLOP/s: the ridge is at 10 FLOP/byte.
        assert_eq!(attainable(100.0, Some(1000.0), 1.0), 100.0);
        assert_eq!(attainable(100.0, Some(1000.0), 10.0), 1000.0);
        assert_eq!(attainable(100.0, Some(1000.0), 50.0), 1000.0);
        // No compute rate: the slope alone.
        assert_eq!(attainable(100.0, None, 50.0), 5000.0);
        assert_eq!(LimitedBy::Compute.label(), "compute");
        assert_eq!(LimitedBy::Bandwidth.label(), "bandwidth");
    }
}
