//! Placement of weights and cache on a machine's memory tiers (llama.cpp `-ngl`,
//! `--tensor-split`, `-nkvo`), per-tier capacity, and per-tier bytes moved per decode step
//! (docs/bounds.md §6). Pure: no I/O, no other top-level module.
//!
//! Two ways in, one source each: whole layers (`-ngl`, `-ts`, `-nkvo` and nothing that moves
//! single tensors) are placed by the rule in [`layout`]; a placement by tensor (`-ot`,
//! `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, and so a fitted plan applied as flags) is read
//! from `core::placement::place` — the same placement the report's Placement section shows —
//! so the tiers' W, cache, compute, verdict and decode bytes are that placement's per-device
//! and host totals ([`TensorTiers`]).

use super::kv::{self, CacheSettings, KvCache};
use super::placement::{self, Buffer, Device, Placement, PlacementModel, TensorLayer};
use super::runtime::{self, GraphSettings, RuntimeBuffers};
use super::scenario::{MAX_CONTEXT, Scenario, TierKind};
use super::weights::{ExpertCount, expert_fraction};

/// Where each piece of the model lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Tier index of each repeating layer.
    pub layer_tier: Vec<usize>,
    /// Tier index of the output layer.
    pub output_tier: usize,
    /// Tier index of the token embedding (always host memory when there is one).
    pub embedding_tier: usize,
    /// Tier index of each layer's KV cache.
    pub kv_tier: Vec<usize>,
    /// Tier index that holds A (other allocations).
    pub other_tier: usize,
    /// Repeating layers on accelerators (the `-ngl` count minus the output layer).
    pub offloaded_layers: u32,
    /// The `-ngl` value in effect (L + 1 = all).
    pub gpu_layers: u32,
    /// The placement places by tensor: each tier's weights and the bytes it reads per decode
    /// step, from `core::placement` (None: whole layers, by the fields above).
    pub tensors: Option<TensorTiers>,
    /// Each tier's cache and compute buffer come from `core::placement`'s per-device figures
    /// (a machine with devices whose flags `place` accepts), as the Placement section prints
    /// them; else the cache by the layers above and the CPU backend's one compute figure on
    /// every tier that runs layers.
    pub compute_placed: bool,
}

/// Per-tier weights of a placement by tensor (`-ot`, `--cpu-moe`, `--n-cpu-moe`,
/// `--n-cpu-ffn`): read from `core::placement::place`, each vector indexed by tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorTiers {
    /// Resident weight bytes as llama.cpp allocates them: the placement's model bytes per
    /// device and host (each tensor padded to 32 bytes; the file's bytes outside any tensor
    /// are in no buffer).
    pub model_bytes: Vec<u64>,
    /// Bytes of the repeating layers' tensors other than routed experts, of the output
    /// layer's (a tied output's copy of the embedding included) and of the input layer's other
    /// than the token embedding (position and token-type embeddings), as stored.
    pub dense_bytes: Vec<u64>,
    /// Bytes of the routed-expert tensors (`ffn_*_exps`), as stored.
    pub expert_bytes: Vec<u64>,
    /// Bytes of the token embedding (`token_embd.weight` in the input layer), as stored.
    pub input_bytes: Vec<u64>,
    /// File bytes outside any tensor (header, padding, projector, draft): read once in file
    /// mode on the host tier, as whole layers count them.
    pub outside_bytes: u64,
}

/// The host tier of a machine: where llama.cpp keeps what is not on a device.
fn host_tier(m: &super::scenario::Machine) -> usize {
    m.tiers
        .iter()
        .position(|t| t.kind == TierKind::Host)
        .or_else(|| m.tiers.iter().position(|t| t.kind == TierKind::Unified))
        .unwrap_or(0)
}

/// A placement by tensor of a scenario at the cache settings `c` (their context), with the
/// tier of each device it uses.
struct ByTensor {
    model: PlacementModel,
    placement: Placement,
    /// Tier index of each device in `placement.devices` (the devices in use).
    device_tier: Vec<usize>,
    host: usize,
}

impl ByTensor {
    fn tier(&self, b: Buffer) -> usize {
        match b {
            Buffer::Host => self.host,
            Buffer::Device(d) => self.device_tier.get(d).copied().unwrap_or(self.host),
        }
    }
}

/// The scenario's flags place single tensors (`-ot`, `--cpu-moe`, `--n-cpu-moe`,
/// `--n-cpu-ffn`) on a machine with devices: `core::placement`'s placement at the cache
/// settings `c`. None for whole-layer placements, and for flags `place` refuses (the plan
/// reports that refusal; the tiers keep the whole-layer rule).
fn by_tensor(s: &Scenario, c: &CacheSettings) -> Option<ByTensor> {
    let o = &s.offload;
    if o.overrides.is_empty() && !o.cpu_moe && o.n_cpu_moe == 0 && o.n_cpu_ffn == 0 {
        return None;
    }
    placed(s, c)
        .filter(|(_, tensor_flags)| *tensor_flags)
        .map(|(bt, _)| bt)
}

/// A whole-layer placement (`-ngl`, `-ts`, `-nkvo`, no flag moving single tensors) on a machine
/// with devices: `core::placement`'s placement, for each device's cache and compute buffer.
fn by_layers(s: &Scenario, c: &CacheSettings) -> Option<ByTensor> {
    placed(s, c)
        .filter(|(_, tensor_flags)| !*tensor_flags)
        .map(|(bt, _)| bt)
}

/// `core::placement`'s placement of a scenario at the cache settings `c`, and whether its flags
/// move single tensors.
fn placed(s: &Scenario, c: &CacheSettings) -> Option<(ByTensor, bool)> {
    let o = &s.offload;
    let devs = s.machine.devices();
    if devs.is_empty() {
        return None;
    }
    let devices: Vec<Device> = devs.iter().map(|(_, d)| d.clone()).collect();
    let settings = o.placement_settings(&devices).ok()?;
    let tensor_flags = !settings.overrides.is_empty();
    let model = super::plan::placement_model(s);
    let streams = if c.kv_unified { 1 } else { c.sequences.max(1) };
    let n_ctx = u32::try_from(c.context.saturating_mul(streams)).unwrap_or(u32::MAX);
    let ctx = placement::context_figures(&s.model, &s.feed_forward(), c, n_ctx);
    let p = placement::place(&model, &ctx, &devices, &settings).ok()?;
    let device_tier = p.devices_used.iter().map(|&i| devs[i].0).collect();
    Some((
        ByTensor {
            model,
            placement: p,
            device_tier,
            host: host_tier(&s.machine),
        },
        tensor_flags,
    ))
}

/// The layout and per-tier weights of a placement by tensor.
fn tensor_layout(s: &Scenario, bt: &ByTensor) -> Layout {
    let p = &bt.placement;
    let n = s.machine.tiers.len();
    let mut t = TensorTiers {
        model_bytes: vec![0; n],
        dense_bytes: vec![0; n],
        expert_bytes: vec![0; n],
        input_bytes: vec![0; n],
        outside_bytes: 0,
    };
    for (d, mem) in p.devices.iter().enumerate() {
        let ti = bt.tier(Buffer::Device(d));
        t.model_bytes[ti] = t.model_bytes[ti].saturating_add(mem.model.0);
    }
    t.model_bytes[bt.host] = t.model_bytes[bt.host].saturating_add(p.host.model.0);
    let experts = placement::cpu_moe();
    let mut file_tensor_bytes = 0u64;
    for (tensor, buf) in bt.model.tensors.iter().zip(&p.tensor_buffer) {
        let ti = bt.tier(*buf);
        let slot = match tensor.layer {
            TensorLayer::Input if tensor.name == "token_embd.weight" => &mut t.input_bytes[ti],
            TensorLayer::Layer(_) if experts.matches(&tensor.name) => &mut t.expert_bytes[ti],
            _ => &mut t.dense_bytes[ti],
        };
        *slot = slot.saturating_add(tensor.bytes);
        // llama.cpp's copy of a tied embedding with the output layer is not a file byte
        let copy = tensor.layer == TensorLayer::Output && tensor.name == "token_embd.weight";
        if !copy {
            file_tensor_bytes = file_tensor_bytes.saturating_add(tensor.bytes);
        }
    }
    t.outside_bytes = s.weight_bytes().saturating_sub(file_tensor_bytes);
    let all = all_gpu_layers(&s.model);
    let ngl = if p.devices_used.is_empty() {
        0
    } else {
        p.gpu_layers.min(all)
    };
    let l = s.model.layers.len();
    let at = |v: &[Buffer], il: usize| bt.tier(v.get(il).copied().unwrap_or(Buffer::Host));
    Layout {
        layer_tier: (0..l).map(|il| at(&p.layer_device, il)).collect(),
        output_tier: bt.tier(p.output_device),
        embedding_tier: bt.host,
        kv_tier: (0..l).map(|il| at(&p.cache_device, il)).collect(),
        other_tier: if ngl >= 1 {
            bt.tier(Buffer::Device(0))
        } else {
            bt.host
        },
        offloaded_layers: ngl
            .saturating_sub(1)
            .min(u32::try_from(l).unwrap_or(u32::MAX)),
        gpu_layers: ngl,
        tensors: Some(t),
        compute_placed: true,
    }
}

/// Resident bytes of the model's pieces (exact from an inventory, else an even split of W).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightSplit {
    /// Bytes of each repeating layer.
    pub layer: Vec<u64>,
    /// Routed-expert bytes of each layer.
    pub layer_experts: Vec<u64>,
    /// Output layer bytes (`output.weight`, `output_norm`); a tied embedding is not included.
    pub output: u64,
    /// The output projection is the token embedding matrix (llama.cpp places a copy of it
    /// with the output layer).
    pub tied: bool,
    /// The output layer is in host memory too and llama.cpp still holds that copy apart from
    /// the embedding (the CPU repacks its type: `placement::tied_copy_in_host`).
    pub tied_host_copy: bool,
    /// Token embedding bytes.
    pub embedding: u64,
    /// Bytes of one embedding row.
    pub embedding_row: u64,
    /// Extra bytes outside the model file's layers (other tensors, projector, draft, header).
    pub other: u64,
    /// The split is exact (from a tensor inventory), not estimated.
    pub exact: bool,
}

impl WeightSplit {
    /// Routed-expert bytes are known or estimated (a MoE model).
    pub fn has_experts(&self) -> bool {
        self.layer_experts.iter().any(|b| *b > 0)
    }
}

/// [`placement::tied_copy_in_host`] on the scenario's machine, when its output layer stays in
/// host memory (no device, or `-ngl 0`; on a unified tier the output layer's tier is the
/// embedding's wherever llama.cpp puts it).
fn tied_copy_in_host(s: &Scenario, embedding_type: Option<(u32, u64)>, bytes: u64) -> bool {
    let devs = s.machine.devices();
    if !devs.is_empty() && s.offload.gpu_layers != Some(0) {
        return false;
    }
    let devices: Vec<&Device> = devs.iter().map(|(_, d)| d).collect();
    placement::tied_copy_in_host(embedding_type, bytes, &devices)
}

/// Split W over the model's pieces.
pub fn weight_split(s: &Scenario) -> WeightSplit {
    let w = s.weight_bytes();
    let l = s.model.layers.len();
    // A file may carry fewer layers' tensors than its block count (a GLM-4.5 shape without
    // its NextN layer's tensors): the layers it has no tensors for hold no bytes.
    if let Some(inv) = &s.inventory
        && !inv.layer_bytes.is_empty()
        && inv.layer_bytes.len() <= l
    {
        let tensor_sum = inv
            .layer_bytes
            .iter()
            .sum::<u64>()
            .saturating_add(inv.output_bytes)
            .saturating_add(inv.embedding_bytes)
            .saturating_add(inv.other_bytes);
        let mut experts = inv.layer_routed_expert_bytes.clone();
        experts.resize(l, 0);
        let mut layer = inv.layer_bytes.clone();
        layer.resize(l, 0);
        return WeightSplit {
            layer,
            layer_experts: experts,
            output: inv.output_bytes,
            tied: inv.tied_output,
            tied_host_copy: inv.tied_output
                && tied_copy_in_host(s, inv.embedding_type, inv.embedding_bytes),
            embedding: inv.embedding_bytes,
            embedding_row: inv.embedding_row_bytes,
            // header, padding, projector and draft files stay with the host copy of the file.
            other: w.saturating_sub(tensor_sum).saturating_add(inv.other_bytes),
            exact: true,
        };
    }
    // Estimate: the embedding (and an untied output) at the file's mean density, the rest even.
    let params = s
        .model
        .parameters_advertised
        .as_ref()
        .map(|p| p.value)
        .filter(|p| *p > 0);
    let emb = match params {
        Some(p) => {
            let per = s.model.vocab_size as u128 * s.model.embedding_length as u128 * w as u128
                / p as u128;
            u64::try_from(per).unwrap_or(0).min(w / 4)
        }
        None => 0,
    };
    let out = if s.model.tied_embeddings { 0 } else { emb };
    let rest = w.saturating_sub(emb).saturating_sub(out);
    let per = if l == 0 { 0 } else { rest / l as u64 };
    let mut layer = vec![per; l];
    if let Some(last) = layer.last_mut() {
        *last += rest - per * l as u64;
    }
    let row = emb.checked_div(s.model.vocab_size).unwrap_or(0);
    // MoE without a tensor inventory: estimate the routed-expert bytes from the advertised
    // active parameters. With P total, A active, n experts and k used per token, the routed
    // parameters R satisfy A = P − R + R·k/n, so R = (P − A)/(1 − k/n); their bytes are taken
    // at the file's mean density and spread evenly over the layers.
    let layer_experts = match (
        s.model.moe,
        params,
        s.model.active_parameters_advertised.as_ref(),
    ) {
        (Some(moe), Some(p), Some(a)) if moe.experts > moe.experts_used && a.value < p => {
            let keep = 1.0 - moe.experts_used as f64 / moe.experts as f64;
            let routed = ((p - a.value) as f64 / keep).min(p as f64);
            let bytes = (w as f64 * routed / p as f64).min(rest as f64);
            let per_layer = if l == 0 { 0 } else { (bytes / l as f64) as u64 };
            layer.iter().map(|b| per_layer.min(*b)).collect()
        }
        _ => vec![0; l],
    };
    WeightSplit {
        layer,
        layer_experts,
        output: out,
        tied: s.model.tied_embeddings,
        tied_host_copy: s.model.tied_embeddings && tied_copy_in_host(s, None, emb),
        embedding: emb,
        embedding_row: row,
        other: 0,
        exact: false,
    }
}

/// The `-ngl` that puts every layer on the accelerators: L repeating layers + the output layer
/// = L + 1 (llama.cpp counts the output layer as one more). The one place this is derived.
pub fn all_gpu_layers(model: &super::model::ModelShape) -> u32 {
    u32::try_from(model.layers.len())
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// Decide where each piece goes: by tensor from `core::placement` when the flags move single
/// tensors, else whole layers by llama.cpp's `-ngl`/`-ts`/`-nkvo` rule.
pub fn layout(s: &Scenario) -> Layout {
    if let Some(bt) = by_tensor(s, &s.cache) {
        return tensor_layout(s, &bt);
    }
    let mut l = whole_layer_layout(s);
    l.compute_placed = by_layers(s, &s.cache).is_some();
    l
}

/// Whole layers: llama.cpp's `-ngl`, `-ts` (else capacity) and `-nkvo` rule.
pub fn whole_layer_layout(s: &Scenario) -> Layout {
    let m = &s.machine;
    let l = s.model.layers.len();
    let accels = m.accelerators();
    let host = host_tier(m);
    if accels.is_empty() {
        let t = m
            .tiers
            .iter()
            .position(|t| matches!(t.kind, TierKind::Unified | TierKind::Host))
            .unwrap_or(0);
        return Layout {
            layer_tier: vec![t; l],
            output_tier: t,
            embedding_tier: t,
            kv_tier: vec![t; l],
            other_tier: t,
            offloaded_layers: 0,
            gpu_layers: 0,
            tensors: None,
            compute_placed: false,
        };
    }
    let all = all_gpu_layers(&s.model);
    let ngl = s.offload.gpu_layers.unwrap_or(all).min(all);
    let offloaded = ngl.saturating_sub(1) as usize;
    let first_gpu_layer = l - offloaded.min(l);
    // Proportions per accelerator: --tensor-split, else by capacity.
    let weights: Vec<f64> = match &s.offload.tensor_split {
        // Normalised without overflow (`split::fractions`); `Scenario::validate` has refused
        // a list it cannot use, so the fallback (even) is never reached from `evaluate`.
        Some(split) => {
            super::split::fractions(split, accels.len()).unwrap_or_else(|_| vec![1.0; accels.len()])
        }
        None => accels
            .iter()
            .map(|&i| m.tiers[i].capacity.value as f64)
            .collect(),
    };
    let total: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut cum = Vec::with_capacity(accels.len());
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cum.push(acc);
    }
    // llama.cpp assigns the offloaded range (repeating layers then the output layer) by
    // cumulative split fraction.
    let span = (offloaded + 1) as f64;
    let device_for = |pos: usize| -> usize {
        let x = pos as f64 / span;
        let d = cum
            .iter()
            .position(|c| x < *c - 1e-12)
            .unwrap_or(accels.len() - 1);
        accels[d]
    };
    let layer_tier: Vec<usize> = (0..l)
        .map(|il| {
            if il >= first_gpu_layer {
                device_for(il - first_gpu_layer)
            } else {
                host
            }
        })
        .collect();
    let output_tier = if ngl >= 1 {
        device_for(offloaded)
    } else {
        host
    };
    let kv_tier = if s.offload.no_kv_offload {
        vec![host; l]
    } else {
        layer_tier.clone()
    };
    let other_tier = if ngl >= 1 { accels[0] } else { host };
    Layout {
        layer_tier,
        output_tier,
        embedding_tier: host,
        kv_tier,
        other_tier,
        offloaded_layers: offloaded as u32,
        gpu_layers: ngl,
        tensors: None,
        compute_placed: false,
    }
}

/// One tier's share of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct TierLoad {
    /// Tier index in the machine.
    pub index: usize,
    /// Tier name.
    pub name: String,
    /// Tier kind.
    pub kind: TierKind,
    /// Repeating layers placed here.
    pub layers: u32,
    /// Holds the output layer.
    pub output: bool,
    /// Holds the token embedding.
    pub embedding: bool,
    /// Resident weight bytes.
    pub weights_bytes: u64,
    /// Logical KV bytes (and recurrent state) of the layers whose cache is here, at N.
    pub kv_bytes: u64,
    /// Other allocations A placed here.
    pub other_bytes: u64,
    /// Capacity M_i.
    pub capacity_bytes: u64,
    /// M_i − W_i − K_i − A_i (may be negative).
    pub headroom_bytes: i128,
    /// The runtime's memory here fits (allocated cache + output and compute buffers + A ≤ M_i):
    /// the verdict. The article's W_i + K_i + A_i ≤ M_i is `headroom_bytes >= 0`.
    pub fits: bool,
    /// Largest context per sequence whose runtime memory still fits here (None: no limit from
    /// this tier), solved over the allocated cache and the buffers.
    pub max_context_tokens: Option<u64>,
    /// Largest logical context per sequence with W_i + K_i + A_i ≤ M_i (the article's figure).
    pub article_max_context_tokens: Option<u64>,
    /// The runtime's memory on this tier, itemised as llama.cpp itemises it.
    pub memory: TierMemory,
    /// The tier holds anything at all.
    pub used: bool,
}

/// Per-tier resident bytes and capacity checks at the scenario's N.
pub fn loads(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    kv: &KvCache,
    buffers: &RuntimeBuffers,
) -> Vec<TierLoad> {
    let m = &s.machine;
    let mem = memory(s, lay, split, kv, buffers);
    let b = s.cache.sequences.max(1);
    let recurrent_per_layer = s.model.recurrent_bytes_per_layer(b);
    m.tiers
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            let layers: Vec<usize> = (0..split.layer.len())
                .filter(|il| lay.layer_tier[*il] == ti)
                .collect();
            let memory = mem[ti];
            let weights = memory.model_bytes;
            let output = lay.output_tier == ti;
            let embedding = lay.embedding_tier == ti;
            let kv_layers: Vec<usize> = (0..kv.per_layer.len())
                .filter(|il| lay.kv_tier[*il] == ti)
                .collect();
            let kv_here: u64 = kv_layers
                .iter()
                .map(|il| {
                    kv.per_layer[*il]
                        .bytes
                        .saturating_add(if s.model.layers[*il].recurrent {
                            recurrent_per_layer
                        } else {
                            0
                        })
                })
                .sum();
            let recurrent_here = kv_layers
                .iter()
                .filter(|il| s.model.layers[**il].recurrent)
                .count() as u64
                * recurrent_per_layer;
            let other = memory.user_bytes;
            let cap = t.capacity.value;
            let headroom = cap as i128 - weights as i128 - kv_here as i128 - other as i128;
            let used = weights > 0 || kv_here > 0 || other > 0 || !layers.is_empty();
            let budget = cap as i128 - weights as i128 - other as i128 - recurrent_here as i128;
            let on = |il: usize| lay.kv_tier.get(il) == Some(&ti);
            let max_ctx = if kv_layers.is_empty() {
                if budget >= 0 { None } else { Some(0) }
            } else {
                kv::max_context(&s.model, s.cache.type_k, s.cache.type_v, b, budget, &on)
            };
            TierLoad {
                index: ti,
                name: t.name.clone(),
                kind: t.kind,
                layers: layers.len() as u32,
                output,
                embedding,
                weights_bytes: weights,
                kv_bytes: kv_here,
                other_bytes: other,
                capacity_bytes: cap,
                headroom_bytes: headroom,
                fits: memory.fits,
                max_context_tokens: if used {
                    max_runtime_context(s, lay, split, ti)
                } else {
                    None
                },
                article_max_context_tokens: max_ctx,
                memory,
                used,
            }
        })
        .collect()
}

/// A part of a tier's runtime memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryItem {
    /// Weights placed on the tier (W_i).
    Model,
    /// The cache as llama.cpp allocates it (padded cells, sliding windows + n_ubatch) and the
    /// recurrent state.
    Context,
    /// The host output buffer (logits).
    Output,
    /// The compute buffer of the reserved graph.
    Compute,
    /// The user's other allocations A.
    User,
}

impl MemoryItem {
    /// In the order they are stacked on a tier.
    pub const ALL: [MemoryItem; 5] = [
        MemoryItem::Model,
        MemoryItem::Context,
        MemoryItem::Output,
        MemoryItem::Compute,
        MemoryItem::User,
    ];
}

/// One tier's runtime memory, itemised as llama.cpp itemises it (model, context, output,
/// compute) with the user's A on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierMemory {
    /// Weights placed here, bytes.
    pub model_bytes: u64,
    /// Allocated KV cells and recurrent state of the layers whose cache is here, bytes.
    pub context_bytes: u64,
    /// Output buffer, bytes (host; derived, llama.cpp model).
    pub output_bytes: u64,
    /// Compute buffer, bytes (derived, llama.cpp CPU model; every tier that runs part of the
    /// graph is charged the whole CPU figure, which errs high).
    pub compute_bytes: u64,
    /// A placed here, bytes.
    pub user_bytes: u64,
    /// Σ of the above.
    pub total_bytes: u64,
    /// Capacity M_i.
    pub capacity_bytes: u64,
    /// M_i − total (negative: short by that much).
    pub free_bytes: i128,
    /// total ≤ M_i.
    pub fits: bool,
    /// When it does not fit: the item whose addition (stacked in `MemoryItem::ALL` order)
    /// passes the capacity.
    pub overflows_at: Option<MemoryItem>,
}

impl TierMemory {
    /// Bytes of one item.
    pub fn bytes(&self, item: MemoryItem) -> u64 {
        match item {
            MemoryItem::Model => self.model_bytes,
            MemoryItem::Context => self.context_bytes,
            MemoryItem::Output => self.output_bytes,
            MemoryItem::Compute => self.compute_bytes,
            MemoryItem::User => self.user_bytes,
        }
    }
}

/// Resident weight bytes of tier `ti`.
fn tier_weights(lay: &Layout, split: &WeightSplit, ti: usize) -> u64 {
    let mut w: u64 = (0..split.layer.len())
        .filter(|il| lay.layer_tier[*il] == ti)
        .map(|il| split.layer[il])
        .sum();
    let embedding = lay.embedding_tier == ti;
    if lay.output_tier == ti {
        w = w.saturating_add(split.output);
        if split.tied && (!embedding || split.tied_host_copy) {
            // llama.cpp loads a copy of the tied matrix with the output layer (in host memory
            // too when the CPU repacks it).
            w = w.saturating_add(split.embedding);
        }
    }
    if embedding {
        w = w
            .saturating_add(split.embedding)
            .saturating_add(split.other);
    }
    w
}

/// The runtime buffers of `s` under the cache settings `c` with the cache `kv`.
pub fn buffers(s: &Scenario, c: &CacheSettings, kv: &KvCache) -> RuntimeBuffers {
    runtime::buffers(
        &s.model,
        &s.feed_forward(),
        kv,
        &GraphSettings {
            ubatch: c.ubatch,
            sequences: c.sequences.max(1),
            flash_attn: c.flash_attn,
            kv_unified: c.kv_unified,
        },
    )
}

/// Every tier's runtime memory with the cache `kv` and the buffers `buf`. The output buffer
/// lives in host memory (the embedding's tier); a compute buffer is reserved by every backend
/// that runs part of the graph (tiers holding repeating layers or the output layer, and the
/// tier of A, which is the first accelerator whenever any layer is offloaded). A placement by
/// tensor (`lay.tensors`) reads the model, cache and compute bytes of every device and the
/// host from `core::placement` at the scenario's cache settings.
pub fn memory(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    kv: &KvCache,
    buf: &RuntimeBuffers,
) -> Vec<TierMemory> {
    memory_at(s, &s.cache, lay, split, kv, buf)
}

/// Per-tier (context, compute) bytes of a placement by tensor.
fn placed_context_compute(bt: &ByTensor, tiers: usize) -> Vec<(u64, u64)> {
    let mut v = vec![(0u64, 0u64); tiers];
    let p = &bt.placement;
    let parts = p
        .devices
        .iter()
        .enumerate()
        .map(|(d, m)| (bt.tier(Buffer::Device(d)), m))
        .chain(std::iter::once((bt.host, &p.host)));
    for (ti, m) in parts {
        if let Some(x) = v.get_mut(ti) {
            x.0 = x.0.saturating_add(m.context.0);
            x.1 = x.1.saturating_add(m.compute.0);
        }
    }
    v
}

/// [`memory`] with the cache settings `c` that made `kv` and `buf` (their context).
fn memory_at(
    s: &Scenario,
    c: &CacheSettings,
    lay: &Layout,
    split: &WeightSplit,
    kv: &KvCache,
    buf: &RuntimeBuffers,
) -> Vec<TierMemory> {
    let b = s.cache.sequences.max(1);
    let rec = s.model.recurrent_bytes_per_layer(b);
    let placed = if lay.tensors.is_some() {
        by_tensor(s, c)
    } else if lay.compute_placed {
        by_layers(s, c)
    } else {
        None
    }
    .map(|bt| placed_context_compute(&bt, s.machine.tiers.len()));
    s.machine
        .tiers
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            let model = match &lay.tensors {
                Some(tt) => tt.model_bytes.get(ti).copied().unwrap_or(0),
                None => tier_weights(lay, split, ti),
            };
            let (context, compute) = match &placed {
                Some(v) => v.get(ti).copied().unwrap_or((0, 0)),
                None => {
                    let context: u64 = kv
                        .per_layer
                        .iter()
                        .enumerate()
                        .filter(|(il, _)| lay.kv_tier.get(*il) == Some(&ti))
                        .map(|(il, l)| {
                            l.allocated_bytes.saturating_add(
                                if s.model.layers.get(il).is_some_and(|x| x.recurrent) {
                                    rec
                                } else {
                                    0
                                },
                            )
                        })
                        .fold(0u64, |a, x| a.saturating_add(x));
                    let runs_graph = lay.layer_tier.contains(&ti)
                        || lay.output_tier == ti
                        || lay.other_tier == ti;
                    (context, if runs_graph { buf.compute_bytes } else { 0 })
                }
            };
            let output = if lay.embedding_tier == ti {
                buf.output_bytes
            } else {
                0
            };
            let user = if lay.other_tier == ti {
                s.other_bytes.value
            } else {
                0
            };
            let cap = runtime_capacity(t);
            let items = [model, context, output, compute, user];
            let total = items.iter().fold(0u64, |a, x| a.saturating_add(*x));
            let mut acc = 0u64;
            let overflows_at = MemoryItem::ALL.into_iter().zip(items).find_map(|(it, x)| {
                acc = acc.saturating_add(x);
                (acc > cap).then_some(it)
            });
            TierMemory {
                model_bytes: model,
                context_bytes: context,
                output_bytes: output,
                compute_bytes: compute,
                user_bytes: user,
                total_bytes: total,
                capacity_bytes: cap,
                free_bytes: cap as i128 - total as i128,
                fits: total <= cap,
                overflows_at,
            }
        })
        .collect()
}

/// The memory llama.cpp may fill on a tier: on an accelerator or unified tier the memory its
/// backend reports free (CUDA: total less the context; Metal: the working set; the profile's
/// figure, else the whole capacity), never above the capacity; elsewhere the capacity.
pub fn runtime_capacity(t: &super::scenario::Tier) -> u64 {
    t.device_or_default()
        .map_or(t.capacity.value, |d| d.free.value.min(t.capacity.value))
}

/// Whether the runtime memory of tier `tier` fits at `n` tokens per sequence.
fn runtime_fits_at(s: &Scenario, lay: &Layout, split: &WeightSplit, tier: usize, n: u64) -> bool {
    let mut c = s.cache.clone();
    c.context = n;
    let kv = kv::cache(&s.model, &c);
    let buf = buffers(s, &c, &kv);
    let mem = memory_at(s, &c, lay, split, &kv, &buf);
    mem.get(tier).is_some_and(|m| m.fits)
}

/// Largest context per sequence whose runtime memory (allocated cache + buffers + A) fits
/// on tier `tier`. Solved by bisection on the memory, which
/// never falls as the context grows (the cache and the KQ masks and scores only grow with
/// the allocated cells), so the answer N fits and N + 1 does not. `None`: even the largest
/// context llama.cpp accepts fits; `Some(0)`: one token does not fit.
pub fn max_runtime_context(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    tier: usize,
) -> Option<u64> {
    let b = s.cache.sequences.max(1);
    let top = MAX_CONTEXT / b;
    if runtime_fits_at(s, lay, split, tier, top) {
        return None;
    }
    if !runtime_fits_at(s, lay, split, tier, 1) {
        return Some(0);
    }
    let (mut lo, mut hi) = (1u64, top);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if runtime_fits_at(s, lay, split, tier, mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// How weights are counted per decode step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsMode {
    /// W_read = every resident byte (the article's conservative proxy).
    File,
    /// Bytes actually touched per token from the tensor inventory.
    Inventory,
}

/// Bytes each tier moves per decode step with the given counting, at retained length `n`.
pub fn step_bytes(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    mode: WeightsMode,
    experts: ExpertCount,
    n: u64,
) -> Vec<u64> {
    let b = s.cache.sequences.max(1);
    let frac = match (mode, s.model.moe) {
        (WeightsMode::Inventory, Some(moe)) => {
            expert_fraction(moe.experts, moe.experts_used, b, experts)
        }
        _ => 1.0,
    };
    let mut q = match &lay.tensors {
        Some(t) => tensor_weight_reads(s, lay, split, t, mode, frac),
        None => whole_layer_weight_reads(s, lay, split, mode, frac),
    };
    if n > 0 {
        let rec_per_layer = s.model.recurrent_bytes_per_layer(b);
        for (il, layer) in s.model.layers.iter().enumerate() {
            let b32 =
                kv::layer_b32_per_token(&s.model, layer, s.cache.type_k, s.cache.type_v) as u128;
            let cells = kv::read_cells(layer.attention, n) as u128;
            let bytes = u64::try_from((b32 * cells * b as u128).div_ceil(32)).unwrap_or(u64::MAX);
            let rec = if layer.recurrent { rec_per_layer } else { 0 };
            let t = lay.kv_tier[il];
            q[t] = q[t].saturating_add(bytes).saturating_add(rec);
        }
    }
    q
}

/// Weight bytes each tier reads per decode step, whole layers.
fn whole_layer_weight_reads(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    mode: WeightsMode,
    frac: f64,
) -> Vec<u64> {
    let b = s.cache.sequences.max(1);
    let mut q = vec![0u64; s.machine.tiers.len()];
    for (il, bytes) in split.layer.iter().enumerate() {
        let ex = split.layer_experts.get(il).copied().unwrap_or(0);
        let read = match mode {
            WeightsMode::File => *bytes,
            WeightsMode::Inventory => bytes
                .saturating_sub(ex)
                .saturating_add((ex as f64 * frac).round() as u64),
        };
        q[lay.layer_tier[il]] = q[lay.layer_tier[il]].saturating_add(read);
    }
    let separate = lay.output_tier != lay.embedding_tier;
    let b_rows = split.embedding_row.saturating_mul(b).min(split.embedding);
    // The output projection: its tensors, and the whole tied matrix when tied.
    let output = split
        .output
        .saturating_add(if split.tied { split.embedding } else { 0 });
    q[lay.output_tier] = q[lay.output_tier].saturating_add(output);
    // The token embedding in host memory: file mode reads every file byte once (a tied matrix
    // already counted as the output), inventory mode one row per sequence (none when the tied
    // output copy on the same tier is read in full anyway).
    let emb = match (mode, split.tied) {
        (WeightsMode::File, true) => 0,
        (WeightsMode::File, false) => split.embedding,
        (WeightsMode::Inventory, true) => {
            if separate {
                b_rows
            } else {
                0
            }
        }
        (WeightsMode::Inventory, false) => b_rows,
    };
    let other = match mode {
        WeightsMode::File => split.other,
        // Header bytes, padding and files such as a projector are not read per decoded token;
        // non-layer tensors of the model are.
        WeightsMode::Inventory => s.inventory.as_ref().map_or(0, |i| i.other_bytes),
    };
    q[lay.embedding_tier] = q[lay.embedding_tier]
        .saturating_add(emb)
        .saturating_add(other);
    q
}

/// Weight bytes each tier reads per decode step, by tensor: the same counting as whole layers
/// (file mode every stored byte once, a tied matrix as the output; inventory mode the routed
/// experts at the expected fraction and one embedding row per sequence), over the tensors each
/// tier holds.
fn tensor_weight_reads(
    s: &Scenario,
    lay: &Layout,
    split: &WeightSplit,
    t: &TensorTiers,
    mode: WeightsMode,
    frac: f64,
) -> Vec<u64> {
    let b = s.cache.sequences.max(1);
    let mut q = vec![0u64; s.machine.tiers.len()];
    for (ti, x) in q.iter_mut().enumerate() {
        let dense = t.dense_bytes.get(ti).copied().unwrap_or(0);
        let ex = t.expert_bytes.get(ti).copied().unwrap_or(0);
        let input = t.input_bytes.get(ti).copied().unwrap_or(0);
        let experts = match mode {
            WeightsMode::File => ex,
            WeightsMode::Inventory => (ex as f64 * frac).round() as u64,
        };
        let emb = if input == 0 {
            0
        } else {
            match (mode, split.tied) {
                (WeightsMode::File, true) => 0,
                (WeightsMode::File, false) => input,
                // the tied copy on this tier is read in full anyway
                (WeightsMode::Inventory, true) if lay.output_tier == ti => 0,
                (WeightsMode::Inventory, _) => split.embedding_row.saturating_mul(b).min(input),
            }
        };
        *x = dense.saturating_add(experts).saturating_add(emb);
    }
    // file mode reads every file byte once: the bytes outside any tensor, on the host
    if mode == WeightsMode::File {
        q[lay.embedding_tier] = q[lay.embedding_tier].saturating_add(t.outside_bytes);
    }
    q
}
