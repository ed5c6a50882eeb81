//! Bytes each device and the host read per generated token under a [`Placement`], and the
//! decode ceilings over devices that follow (docs/bounds.md §4 and §6; issue 22 item 5).
//! Pure: no I/O.
//!
//! ```text
//! decode_reads(&shape, &model, &placement, &devices, &cache, ExpertCount) -> DecodeReads
//!     DecodeReads { devices: Vec<Reads> (per device in use), host: Reads, rpc_hops, … }
//! ceilings(&reads, &Bandwidths { host, devices, link }) -> PlacementCeilings
//!     sum bound (devices one after another, `-sm layer` at batch one) and overlap bound
//! ```
//!
//! Bytes per memory per step (docs/bounds.md §4, inventory mode, by where each tensor sits):
//! - every tensor of a repeating layer or of the output layer that is not a routed expert, in
//!   full (attention, dense FFN, shared experts `*_shexp`, norms, the output projection);
//! - routed-expert tensors (`*_exps`) × the expert fraction `weights::expert_fraction` (k / n
//!   at one sequence), wherever they sit; rounded once per memory;
//! - the token embedding: one row per sequence (`bytes / vocab`), none when the tied output
//!   copy sits on the same memory (read in full there); the other input-layer tensors
//!   (position, token-type embeddings) are counted as not read, so the ceiling stays a bound;
//! - the KV cache of each layer where its cache sits, read in its stored width at the cache
//!   settings' context: `⌈b32_per_token × read_tokens × B / 32⌉` from `core::kv`'s per-layer
//!   figures (the same formula as `tiers::step_bytes`), plus recurrent state per layer.

use super::super::kv::{self, CacheSettings};
use super::super::model::ModelShape;
use super::super::units::{BytesPerSec, Provenance, Sourced};
use super::super::weights::{ExpertCount, expert_fraction};
use super::{Backend, Buffer, Device, Placement, PlacementModel, TensorLayer};

/// Bytes one memory (a device or the host) reads per decode step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reads {
    /// Weights read in full: attention, dense FFN, shared experts, norms, the output layer,
    /// embedding rows. Bytes per step.
    pub weights: u64,
    /// Routed-expert bytes read: the routed-expert bytes held here × the expert fraction.
    pub experts: u64,
    /// KV cache (and recurrent state) bytes read at the context. Bytes per step.
    pub cache: u64,
}

impl Reads {
    /// Q_i: all bytes this memory moves per step.
    pub fn total(&self) -> u64 {
        self.weights
            .saturating_add(self.experts)
            .saturating_add(self.cache)
    }
}

/// What [`decode_reads`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeReads {
    /// Per device in use, in the order of `Placement::devices`.
    pub devices: Vec<Reads>,
    /// The host.
    pub host: Reads,
    /// Retained tokens per sequence whose cache is read (the cache settings' context).
    pub context_tokens: u64,
    /// Sequences B decoding together.
    pub sequences: u64,
    /// The fraction of routed-expert bytes read per step (1 for a dense model).
    pub expert_fraction: f64,
    /// Round trips of the hidden state to an RPC device per step: each run of consecutive
    /// layers (the output layer included) on one RPC device is one hop there and back.
    pub rpc_hops: u32,
    /// Bytes of one hop, both ways: `n_embd × 4 × 2 × B` (f32 hidden state per sequence).
    pub rpc_hop_bytes: u64,
    /// The tensor bytes were exact (a GGUF tensor list), not estimated per layer.
    pub exact: bool,
}

fn is_routed_expert(name: &str) -> bool {
    name.contains("_exps")
}

/// The bytes each device in use and the host read per decode step under `placement` (made
/// by `place` from `model` and the same `devices`), at `cache.context` retained tokens per
/// sequence over `cache.sequences` sequences. See the module documentation for the rules.
pub fn decode_reads(
    shape: &ModelShape,
    model: &PlacementModel,
    placement: &Placement,
    devices: &[Device],
    cache: &CacheSettings,
    experts: ExpertCount,
) -> DecodeReads {
    let b = cache.sequences.max(1);
    let frac = match shape.moe {
        Some(m) if m.experts > 0 => expert_fraction(m.experts, m.experts_used, b, experts),
        _ => 1.0,
    };
    let nd = placement.devices.len();
    let mut full = vec![0u64; nd + 1];
    let mut routed = vec![0u64; nd + 1];
    let mut cache_b = vec![0u64; nd + 1];
    let slot = |buf: Buffer| match buf {
        Buffer::Device(d) if d < nd => d,
        _ => nd,
    };
    let tied_on = model
        .tensors
        .iter()
        .zip(&placement.tensor_buffer)
        .find(|(t, _)| t.layer == TensorLayer::Output && t.name == "token_embd.weight")
        .map(|(_, buf)| slot(*buf));
    for (t, buf) in model.tensors.iter().zip(&placement.tensor_buffer) {
        let i = slot(*buf);
        match t.layer {
            TensorLayer::Input => {
                if t.name == "token_embd.weight" && tied_on != Some(i) {
                    let row = t.bytes.checked_div(shape.vocab_size).unwrap_or(0);
                    full[i] = full[i].saturating_add(row.saturating_mul(b).min(t.bytes));
                }
            }
            _ if is_routed_expert(&t.name) => routed[i] = routed[i].saturating_add(t.bytes),
            _ => full[i] = full[i].saturating_add(t.bytes),
        }
    }
    let kv = kv::cache(shape, cache);
    let rec = shape.recurrent_bytes_per_layer(b);
    for l in &kv.per_layer {
        let il = l.index as usize;
        let bytes = u64::try_from(
            (u128::from(l.b32_per_token) * u128::from(l.read_tokens) * u128::from(b)).div_ceil(32),
        )
        .unwrap_or(u64::MAX)
        .saturating_add(if l.recurrent { rec } else { 0 });
        let at = placement
            .cache_device
            .get(il)
            .copied()
            .unwrap_or(Buffer::Host);
        let i = slot(at);
        cache_b[i] = cache_b[i].saturating_add(bytes);
    }
    let reads: Vec<Reads> = (0..=nd)
        .map(|i| Reads {
            weights: full[i],
            experts: (routed[i] as f64 * frac).round() as u64,
            cache: cache_b[i],
        })
        .collect();
    // the token's path: the host's input stage, the layers in order, the output layer
    let is_rpc = |buf: Buffer| match buf {
        Buffer::Device(d) => placement
            .devices_used
            .get(d)
            .and_then(|u| devices.get(*u))
            .is_some_and(|dv| dv.backend == Backend::Rpc),
        Buffer::Host => false,
    };
    let mut hops = 0u32;
    let mut prev = Buffer::Host;
    for buf in placement
        .layer_device
        .iter()
        .copied()
        .chain(std::iter::once(placement.output_device))
    {
        if buf != prev && is_rpc(buf) {
            hops = hops.saturating_add(1);
        }
        prev = buf;
    }
    DecodeReads {
        host: reads[nd],
        devices: reads[..nd].to_vec(),
        context_tokens: cache.context,
        sequences: b,
        expert_fraction: frac,
        rpc_hops: hops,
        rpc_hop_bytes: shape
            .embedding_length
            .saturating_mul(4)
            .saturating_mul(2)
            .saturating_mul(b),
        exact: model.exact,
    }
}

/// A link between hosts (llama.cpp RPC) as a tier.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Bandwidth each way, bytes/s.
    pub bandwidth: Sourced<BytesPerSec>,
    /// Round-trip latency, seconds (one per hop: the hidden state there and back).
    pub latency_seconds: Sourced<f64>,
}

/// The bandwidth of every memory a placement reads from.
#[derive(Debug, Clone, PartialEq)]
pub struct Bandwidths {
    /// The host's memory bandwidth, bytes/s.
    pub host: Sourced<BytesPerSec>,
    /// Per device in use (order of `Placement::devices`), bytes/s.
    pub devices: Vec<Sourced<BytesPerSec>>,
    /// The RPC link, when devices sit on other hosts.
    pub link: Option<Link>,
}

/// The decode ceilings of a placement (docs/bounds.md §6: non-overlapped and perfect overlap).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementCeilings {
    /// Seconds per step reading each device's bytes, Q_d / BW_d (order of the devices).
    pub device_seconds: Vec<f64>,
    /// Seconds per step reading the host's bytes, Q_host / BW_host.
    pub host_seconds: f64,
    /// Seconds per step on the link: hops × (hop bytes / BW_link + round-trip latency).
    pub link_seconds: f64,
    /// Bytes per step over the link: hops × hop bytes.
    pub link_bytes: u64,
    /// Sum bound: Σ of the above, seconds per step (memories one after another, `-sm layer`
    /// at batch one).
    pub seconds_per_step: f64,
    /// Overlap bound: the largest of the above, seconds per step.
    pub seconds_per_step_overlapped: f64,
    /// Sum-bound ceiling over all B sequences, tokens/s = B / seconds_per_step.
    pub tokens_per_second: f64,
    /// Sum-bound ceiling per sequence, tokens/s = 1 / seconds_per_step.
    pub per_sequence_tokens_per_second: f64,
    /// Overlap-bound ceiling over all B sequences, tokens/s = B / seconds_per_step_overlapped.
    pub overlapped_tokens_per_second: f64,
    /// The weakest provenance among the figures used (every memory that moves bytes, the
    /// link when there are hops), `derived` at best.
    pub provenance: Provenance,
}

/// The sum and overlap ceilings of `reads` (docs/bounds.md §6): each memory's time is
/// `Q_i / BW_i`; the link's is `hops × (n_embd × 4 × 2 × B / BW_link + latency)`. A memory
/// that moves no byte takes no time; without a link figure hops take none either (the
/// caller names the missing link). `bw.devices` shorter than the devices: a missing figure
/// counts as no time.
pub fn ceilings(reads: &DecodeReads, bw: &Bandwidths) -> PlacementCeilings {
    let mut provs = vec![Provenance::Derived];
    let mut time = |q: u64, b: Option<&Sourced<BytesPerSec>>| match b {
        Some(b) if q > 0 && b.value.0 > 0.0 => {
            provs.push(b.provenance);
            q as f64 / b.value.0
        }
        _ => 0.0,
    };
    let device_seconds: Vec<f64> = reads
        .devices
        .iter()
        .enumerate()
        .map(|(i, r)| time(r.total(), bw.devices.get(i)))
        .collect();
    let host_seconds = time(reads.host.total(), Some(&bw.host));
    let link_bytes = u64::from(reads.rpc_hops).saturating_mul(reads.rpc_hop_bytes);
    let link_seconds = match &bw.link {
        Some(l) if reads.rpc_hops > 0 && l.bandwidth.value.0 > 0.0 => {
            provs.push(l.bandwidth.provenance);
            provs.push(l.latency_seconds.provenance);
            f64::from(reads.rpc_hops)
                * (reads.rpc_hop_bytes as f64 / l.bandwidth.value.0 + l.latency_seconds.value)
        }
        _ => 0.0,
    };
    let all = device_seconds
        .iter()
        .copied()
        .chain([host_seconds, link_seconds]);
    let sum: f64 = all.clone().sum();
    let max = all.fold(0.0f64, f64::max);
    let b = reads.sequences.max(1) as f64;
    let rate = |s: f64| if s > 0.0 { 1.0 / s } else { f64::INFINITY };
    PlacementCeilings {
        device_seconds,
        host_seconds,
        link_seconds,
        link_bytes,
        seconds_per_step: sum,
        seconds_per_step_overlapped: max,
        tokens_per_second: b * rate(sum),
        per_sequence_tokens_per_second: rate(sum),
        overlapped_tokens_per_second: b * rate(max),
        provenance: Provenance::weakest(provs).unwrap_or(Provenance::User),
    }
}
