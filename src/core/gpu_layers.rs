//! The most GPU layers that fit (llama.cpp `-ngl`), solved like the largest context: the
//! largest `-ngl` in 0 … L + 1 for which every used tier fits, and the decode ceiling there.
//! Fit is decided by `evaluate` itself (its `capacity.fits`), never by a copy of the rule, so
//! whatever `evaluate` counts (weights, cache, buffers, A) this follows.
//! Pure: no I/O, no other top-level module.

use super::decode::Ceiling;
use super::evaluate::evaluate_bounds;
use super::scenario::{Scenario, TierKind};

/// The largest `-ngl` that fits on a machine with an accelerator tier and a host tier.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxGpuLayers {
    /// The largest `-ngl` for which every used tier fits (None: not even `-ngl 0` fits).
    /// llama.cpp's placement: the output layer plus the last `ngl − 1` repeating layers,
    /// `i_gpu_start = max(L + 1 − ngl, 0)`.
    pub gpu_layers: Option<u32>,
    /// `-ngl` that puts every layer (L repeating + output) on the accelerators: L + 1.
    pub all_layers: u32,
    /// File-mode decode ceiling at the scenario's context with `-ngl gpu_layers`.
    pub ceiling: Option<Ceiling>,
    /// Inventory-mode ceiling there (with a tensor inventory).
    pub inventory_ceiling: Option<Ceiling>,
}

/// Applies: the machine has at least one accelerator tier and a host tier (where llama.cpp
/// keeps the layers that are not offloaded).
pub fn applies(s: &Scenario) -> bool {
    let t = &s.machine.tiers;
    t.iter().any(|t| t.kind == TierKind::Accelerator) && t.iter().any(|t| t.kind == TierKind::Host)
}

/// The scenario with `-ngl n`.
pub fn with_gpu_layers(s: &Scenario, n: u32) -> Scenario {
    let mut s = s.clone();
    let mut fig = super::edit::figures_of(&s.model);
    // A placement edit cannot be refused.
    let _ = super::edit::apply(&mut s, &mut fig, &super::edit::Edit::GpuLayers(Some(n)));
    s
}

/// Every used tier fits with `-ngl n`, as `evaluate` decides it, and every used accelerator
/// keeps llama.cpp's `-fit` margin ([`keeps_margin`]); an invalid scenario fits nowhere.
pub fn fits_at(s: &Scenario, n: u32) -> bool {
    evaluate_bounds(&with_gpu_layers(s, n))
        .is_ok_and(|r| r.capacity.fits && keeps_margin(&r) && caches_within_limit(s, n))
}

/// The caches of the layers `-ngl n` offloads (the last n of them) stay within the devices'
/// tensor limit (the smallest of the machine's, [`super::placement::Device::max_tensor`]):
/// llama.cpp aborts on one over it (`Plan::cache_refusal`).
fn caches_within_limit(s: &Scenario, n: u32) -> bool {
    let Some(limit) = s
        .machine
        .devices()
        .iter()
        .filter_map(|(_, d)| d.max_tensor.map(|m| m.0))
        .min()
    else {
        return true;
    };
    let kv = super::kv::cache(&s.model, &s.cache);
    let offloaded = kv.per_layer.len().min(n as usize);
    kv.per_layer[kv.per_layer.len() - offloaded..]
        .iter()
        .all(|l| l.largest_tensor_bytes <= limit)
}

/// Every used accelerator keeps llama.cpp's `-fit` margin (`-fitt`, 1024 MiB by default) free
/// beside its runtime memory, as `-fit` does when it chooses the layers.
pub fn keeps_margin(r: &super::evaluate::Report) -> bool {
    let s = &r.inputs;
    let margins = s.offload.fit_margins();
    let devices = s.machine.devices();
    r.tiers
        .iter()
        .filter(|t| t.used && t.kind == TierKind::Accelerator)
        .all(|t| {
            let di = devices
                .iter()
                .position(|(ti, _)| *ti == t.index)
                .unwrap_or(0);
            let m = margins
                .get(di)
                .or(margins.first())
                .map_or(super::placement::DEFAULT_FIT_MARGIN.0, |b| b.0);
            t.memory.free_bytes >= i128::from(m)
        })
}

/// The largest `-ngl` that fits (None when the machine has no accelerator and host tier),
/// keeping llama.cpp's margin on every accelerator ([`keeps_margin`]).
///
/// Scanned from L + 1 downwards: the fitting set need not be one interval (a tied output
/// copies the embedding to the accelerator; A moves there at `-ngl 1`), so a bisection could
/// stop at a local edge. The first `-ngl` that fits, from the top, is the answer.
pub fn max_gpu_layers(s: &Scenario) -> Option<MaxGpuLayers> {
    if !applies(s) {
        return None;
    }
    let all = super::tiers::all_gpu_layers(&s.model);
    let found = (0..=all).rev().find_map(|n| {
        let r = evaluate_bounds(&with_gpu_layers(s, n)).ok()?;
        (r.capacity.fits && keeps_margin(&r) && caches_within_limit(s, n)).then_some((n, r))
    });
    Some(match found {
        Some((n, r)) => MaxGpuLayers {
            gpu_layers: Some(n),
            all_layers: all,
            ceiling: Some(r.decode.full_context),
            inventory_ceiling: r.decode.inventory_full_context,
        },
        None => MaxGpuLayers {
            gpu_layers: None,
            all_layers: all,
            ceiling: None,
            inventory_ceiling: None,
        },
    })
}
