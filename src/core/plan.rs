//! The plan llama.cpp would choose on a scenario's machine: its devices (from the machine
//! profile), the placement flags (from the scenario's `Offload`), `-fit` replayed over them
//! (`core::placement::fit`) or, with `-fit off`, the placement the flags give; and per device
//! what it holds, the margin `-fit` keeps and what is left. Pure: no I/O, no other top-level
//! module.

use super::placement::groups::{self, Holding, MemoryBase};
use super::placement::{
    self, Bandwidths, DecodeReads, Device, FitSettings, Link, Memory, Placement, PlacementCeilings,
    PlacementModel, PlacementSettings,
};
use super::scenario::Scenario;
use super::units::{Bytes, Provenance, Sourced};
use super::weights::ExpertCount;

/// How the plan came about.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanOrigin {
    /// `-fit on` chose the arguments (the line llama-fit-params prints).
    Fitted {
        /// `-c N -ngl N [-ts …] [-ot "…"]`.
        arguments: String,
        /// The projections the search made (llama.cpp makes one dry run for each).
        probes: u32,
    },
    /// `-fit on` gave up with llama.cpp's reason; llama.cpp then loads the user's flags.
    FitRefused {
        /// llama.cpp's reason.
        reason: String,
    },
    /// `-fit off`: the flags as given.
    FitOff,
}

/// One device of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanDevice {
    /// The machine tier it is.
    pub tier: usize,
    /// Tier name.
    pub tier_name: String,
    /// Buffer-type name (`CUDA0`, `MTL0`, `RPC0[host:port]`).
    pub buffer_name: String,
    /// Backend label.
    pub backend: &'static str,
    /// The memory the backend reports free, with provenance and source.
    pub free: Sourced<u64>,
    /// The tier's capacity.
    pub total: u64,
    /// Model / context / compute on it.
    pub memory: Memory,
    /// The margin `-fit` keeps free on it (`-fitt`).
    pub margin: u64,
    /// free − (model + context + compute) − margin: what is left after the margin (negative:
    /// the plan passes the margin or the device).
    pub left_after_margin: i128,
    /// free − (model + context + compute): negative when the device cannot hold its share.
    pub left: i128,
    /// What the free figure is (Metal's working set, the driver's free memory, …) beside the
    /// tier's capacity.
    pub base: Option<MemoryBase>,
    /// The tensor groups it holds.
    pub holds: Holding,
    /// The prompt graph's ops its tensor limit leaves to the host.
    pub limited: Option<placement::LimitedOps>,
}

/// The plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// How it came about.
    pub origin: PlanOrigin,
    /// llama.cpp's total context (`-c`, all sequences) the plan is for.
    pub n_ctx: u32,
    /// The `-ngl` in effect.
    pub gpu_layers: u32,
    /// `-ngl` as llama.cpp prints it: the fitted value (`-1` when every layer fits as given),
    /// or the flag as given (-1 auto, -2 all).
    pub ngl: i64,
    /// Layers on the devices as llama.cpp counts them (`offloaded N/M layers to GPU`: the
    /// repeating layers and the output layer, at most M).
    pub offloaded_layers: u32,
    /// Layers that can be offloaded: the repeating layers + 1 for the output layer.
    pub offloadable_layers: u32,
    /// Repeating layers of the model.
    pub n_layer: u32,
    /// Per device in use.
    pub devices: Vec<PlanDevice>,
    /// The host's share.
    pub host: Memory,
    /// Of the host's model bytes, the weights in `CPU_REPACK` (`Placement::host_repack`).
    pub host_repack: u64,
    /// The tensor groups the host holds.
    pub host_holds: Holding,
    /// The host tier's capacity, when the machine has one.
    pub host_capacity: Option<u64>,
    /// Tensor bytes per layer are exact (a GGUF tensor list), else estimated from W.
    pub exact_model: bool,
    /// Every device holds its share within its free memory.
    pub devices_fit: bool,
    /// `-ts` the plan prints per device (`-fit on`; empty otherwise).
    pub tensor_split: Vec<u32>,
    /// `-ot` the plan prints (pattern, buffer type), `-fit on`; empty otherwise.
    pub overrides: Vec<(String, String)>,
    /// Bytes each device in use and the host read per decode step under the plan, at the
    /// scenario's context and sequences (`placement::decode_reads`, expected experts).
    pub reads: DecodeReads,
    /// The sum and overlap decode ceilings of the plan (`placement::ceilings`) with each
    /// tier's headline bandwidth and the machine's `[[link]]` for RPC devices.
    pub ceilings: PlacementCeilings,
    /// The plan has RPC hops but the machine names no `[[link]]` to their tiers: the hops
    /// take no time in `ceilings`.
    pub link_missing: bool,
    /// A layer's cache tensor over its device's tensor limit (the device index is into
    /// `devices`): llama.cpp aborts reserving the graph.
    pub cache_over_limit: Option<placement::CacheOverLimit>,
    /// [`placement::Placement::cache_max_context`].
    pub cache_max_context: Option<u64>,
}

impl Plan {
    /// llama.cpp's refusal when a cache tensor is over its device's tensor limit
    /// ([`Self::cache_over_limit`]): it aborts reserving the graph.
    pub fn cache_refusal(&self) -> Option<super::kv::CacheRefusal> {
        let c = self.cache_over_limit?;
        Some(super::kv::CacheRefusal::CacheTensorOverLimit {
            device: self
                .devices
                .get(c.device)
                .map_or_else(|| format!("device {}", c.device), |d| d.buffer_name.clone()),
            layer: c.layer,
            bytes: c.bytes,
            limit: c.limit,
            max_context: c.max_context,
        })
    }
    /// Bytes by which the host's share (model, context and compute) exceeds its tier's
    /// capacity; None when it fits or the machine has no host tier.
    pub fn host_short(&self) -> Option<u64> {
        let c = self.host_capacity?;
        let total = self.host.total();
        (total > c).then(|| total - c)
    }

    /// `-fit` chose this plan without devices while the host is short: llama.cpp's projection of
    /// system memory leaves out the weights in `CPU_REPACK` (these bytes), which it allocates.
    pub fn fit_left_out_repack(&self) -> Option<u64> {
        (matches!(self.origin, PlanOrigin::Fitted { .. })
            && self.devices.is_empty()
            && self.host_repack > 0
            && self.host_short().is_some())
        .then_some(self.host_repack)
    }

    /// The plan's `-ot` list as llama.cpp takes it, one `PATTERN=BUFFER` entry each (the
    /// `Edit::OverrideTensor` that applies it).
    pub fn override_args(&self) -> Vec<String> {
        (self.overrides.iter())
            .map(|(pat, buf)| format!("{pat}={buf}"))
            .collect()
    }
}

/// Why no plan can be made (llama.cpp's refusal of the flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

/// The tensors llama.cpp would create for the scenario's model: the GGUF's own tensor list
/// when it has one, else per-layer bytes estimated from W (`PlacementModel::estimated`).
pub fn placement_model(s: &Scenario) -> PlacementModel {
    let n_layer = s.model.layer_count();
    let n_expert = s.model.moe.map_or(0, |m| m.experts);
    let n_ctx_train = u32::try_from(
        s.model
            .native_context
            .unwrap_or(s.cache.context)
            .min(super::scenario::MAX_CONTEXT),
    )
    .unwrap_or(u32::MAX);
    if let Some(inv) = &s.inventory
        && !inv.tensors.is_empty()
    {
        return PlacementModel::from_inventory(
            inv,
            n_layer,
            n_expert,
            n_ctx_train,
            s.model.tied_embeddings,
        );
    }
    PlacementModel::estimated(&super::tiers::weight_split(s), n_expert, n_ctx_train)
}

/// llama.cpp's total context for the scenario (per-sequence context × streams).
pub fn total_context(s: &Scenario) -> u32 {
    let streams = if s.cache.kv_unified {
        1
    } else {
        s.cache.sequences.max(1)
    };
    u32::try_from(s.cache.context.saturating_mul(streams)).unwrap_or(u32::MAX)
}

/// The plan llama.cpp would choose for the scenario on its machine.
pub fn plan(s: &Scenario) -> Result<Plan, PlanError> {
    let devs = s.machine.devices();
    let devices: Vec<Device> = devs.iter().map(|(_, d)| d.clone()).collect();
    let settings = s
        .offload
        .placement_settings(&devices)
        .map_err(|e| PlanError(e.0))?;
    let model = placement_model(s);
    let ctx_at = placement::scenario_context(s);
    let n_ctx = total_context(s);
    let margins = s.offload.fit_margins();
    let host_capacity = s
        .machine
        .tiers
        .iter()
        .find(|t| t.kind == super::scenario::TierKind::Host)
        .map(|t| t.capacity.value);
    let fs = FitSettings {
        // `-c 0`: unset, so `-fit` may reduce the trained context.
        n_ctx: (!s.offload.context_auto).then_some(n_ctx),
        n_seq: u32::try_from(s.cache.sequences.max(1)).unwrap_or(u32::MAX),
        kv_unified: s.cache.kv_unified,
        margins: margins.clone(),
        min_ctx: s.offload.fit_min_ctx,
        host_free: Bytes(host_capacity.unwrap_or(0)),
    };
    let fixed = |settings: &PlacementSettings| -> Result<Placement, PlanError> {
        placement::place(&model, &ctx_at(n_ctx), &devices, settings).map_err(|e| PlanError(e.0))
    };
    let mut tensor_split = Vec::new();
    let mut overrides = Vec::new();
    let mut ngl = settings.gpu_layers.raw();
    // without devices -fit still runs: against system memory (the host tier's capacity), where
    // it may only reduce an unset context
    let (origin, placement, n_ctx) =
        if !s.offload.fit || (devices.is_empty() && host_capacity.is_none()) {
            (PlanOrigin::FitOff, fixed(&settings)?, n_ctx)
        } else {
            match placement::fit(&model, &devices, &settings, &fs, &ctx_at) {
                Ok(p) => {
                    tensor_split = p.tensor_split.clone();
                    overrides = p.overrides.clone();
                    ngl = p.n_gpu_layers;
                    (
                        PlanOrigin::Fitted {
                            arguments: p.arguments(),
                            probes: p.probes,
                        },
                        p.placement,
                        p.n_ctx,
                    )
                }
                Err(r) => (
                    PlanOrigin::FitRefused { reason: r.0 },
                    fixed(&settings)?,
                    n_ctx,
                ),
            }
        };
    let margin_of = |i: usize| -> u64 {
        margins
            .get(i)
            .or(margins.first())
            .map_or(placement::DEFAULT_FIT_MARGIN.0, |b| b.0)
    };
    let (device_holds, host_holds) = groups::holdings(&model, &placement);
    let plan_devices: Vec<PlanDevice> = placement
        .devices_used
        .iter()
        .zip(&placement.devices)
        .zip(device_holds)
        .enumerate()
        .map(|(k, ((&i, mem), holds))| {
            let (tier, d) = &devs[i];
            let t = &s.machine.tiers[*tier];
            let spec = t.device_or_default();
            let free = spec.map_or_else(
                || Sourced::new(d.free.0, Provenance::Derived, ""),
                |sp| {
                    Sourced::new(
                        sp.free.value.min(t.capacity.value),
                        sp.free.provenance,
                        sp.free.source,
                    )
                },
            );
            let used = i128::from(mem.total());
            let left = i128::from(free.value) - used;
            let margin = margin_of(i);
            PlanDevice {
                tier: *tier,
                tier_name: t.name.clone(),
                buffer_name: d.buffer_name.clone(),
                backend: d.backend.label(),
                total: d.total.0,
                memory: *mem,
                margin,
                left_after_margin: left - i128::from(margin),
                left,
                free,
                base: groups::memory_base(t),
                holds,
                limited: placement.limited.get(k).copied().flatten(),
            }
        })
        .collect();
    let devices_fit = plan_devices.iter().all(|d| d.left >= 0);
    let reads = placement::decode_reads(
        &s.model,
        &model,
        &placement,
        &devices,
        &s.cache,
        ExpertCount::Expected,
    );
    // the host's memory: its RAM, or on a unified-memory machine (Apple silicon, Strix Halo)
    // the one pool the CPU reads too (its full bandwidth: still a ceiling for the CPU's share)
    let host_bw = s
        .machine
        .tiers
        .iter()
        .find(|t| t.kind == super::scenario::TierKind::Host)
        .or_else(|| {
            s.machine
                .tiers
                .iter()
                .find(|t| t.kind == super::scenario::TierKind::Unified)
        })
        .map_or_else(
            || Sourced::new(super::units::BytesPerSec(0.0), Provenance::Derived, ""),
            |t| t.headline_bandwidth().clone(),
        );
    let link = s
        .machine
        .links
        .iter()
        .find(|l| {
            plan_devices
                .iter()
                .any(|d| d.backend == "rpc" && l.tiers.contains(&d.tier_name))
        })
        .map(|l| Link {
            bandwidth: l.bandwidth.clone(),
            latency_seconds: Sourced::new(
                l.latency_us.value / 1e6,
                l.latency_us.provenance,
                l.latency_us.source.clone(),
            ),
        });
    let link_missing = reads.rpc_hops > 0 && link.is_none();
    let ceilings = placement::ceilings(
        &reads,
        &Bandwidths {
            host: host_bw,
            devices: plan_devices
                .iter()
                .map(|d| s.machine.tiers[d.tier].headline_bandwidth().clone())
                .collect(),
            link,
        },
    );
    let offloadable_layers = model.n_layer.saturating_add(1);
    Ok(Plan {
        origin,
        n_ctx,
        gpu_layers: placement.gpu_layers,
        ngl,
        offloaded_layers: if plan_devices.is_empty() {
            0
        } else {
            placement.gpu_layers.min(offloadable_layers)
        },
        offloadable_layers,
        n_layer: model.n_layer,
        host: placement.host,
        host_repack: placement.host_repack.0,
        host_holds,
        host_capacity,
        exact_model: placement.exact_model,
        devices: plan_devices,
        devices_fit,
        tensor_split,
        overrides,
        reads,
        ceilings,
        link_missing,
        cache_over_limit: placement.cache_over_limit,
        cache_max_context: placement.cache_max_context,
    })
}
