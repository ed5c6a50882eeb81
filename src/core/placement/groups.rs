//! What each buffer of a placement holds, as tensor groups (layers a–b, the experts of
//! layers …, the output layer, the token embedding), and what a device's memory figure is
//! (Metal's working set, the memory the driver reports free, an RPC server's report). Pure
//! data over [`Placement`]: the Devices view and the report word it.

use super::super::scenario::{DEFAULT_FREE_SOURCE, Tier};
use super::super::units::Provenance;
use super::{Buffer, Placement, PlacementModel, TensorLayer};

/// What part of a repeating layer a buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerShare {
    /// Every tensor of the layer.
    Whole,
    /// Every tensor but the routed experts (attention, norms, router, shared experts).
    AllButExperts,
    /// The routed-expert tensors only (`ffn_*_exps`, `ffn_*_chexps`).
    Experts,
    /// Some tensors: their kinds (`ffn_down_exps`, `attn_q`), sorted.
    Tensors(Vec<String>),
    /// Every tensor but those of these kinds (sorted): what is elsewhere is the shorter list.
    AllBut(Vec<String>),
}

/// Consecutive layers `first..=last` of which a buffer holds the same share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRun {
    /// First layer.
    pub first: u32,
    /// Last layer (inclusive).
    pub last: u32,
    /// What of each layer.
    pub share: LayerShare,
}

/// How much of a non-repeating group (the output layer, the input layer) a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Share {
    /// None of it.
    #[default]
    None,
    /// All of it.
    Whole,
    /// Some of its tensors.
    Part,
}

/// The tensor groups one buffer (a device in use, or the host) holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Holding {
    /// Runs of repeating layers, in layer order (a layer split across buffers appears in each).
    pub layers: Vec<LayerRun>,
    /// The output layer (output norm and projection; a tied model's copy of the embedding).
    pub output: Share,
    /// The input layer (token embedding; llama.cpp keeps it in host memory).
    pub input: Share,
    /// Layers whose KV cache the buffer holds, as inclusive ranges.
    pub caches: Vec<(u32, u32)>,
}

/// Is the tensor kind a routed expert (`ffn_up_exps`, `ffn_gate_up_exps`, `ffn_down_chexps`)?
pub fn is_expert_kind(kind: &str) -> bool {
    kind.ends_with("_exps") || kind.ends_with("_chexps")
}

/// The kind of a repeating layer's tensor: `blk.3.ffn_up_exps.weight` → `ffn_up_exps`.
pub fn tensor_kind(name: &str) -> &str {
    let rest = name
        .strip_prefix("blk.")
        .and_then(|r| r.split_once('.').map(|(_, k)| k))
        .unwrap_or(name);
    rest.split('.').next().unwrap_or(rest)
}

fn ranges(layers: impl Iterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for il in layers {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == il => *last = il,
            _ => out.push((il, il)),
        }
    }
    out
}

/// What each device in use holds (in the order of `placement.devices`), then the host.
pub fn holdings(model: &PlacementModel, placement: &Placement) -> (Vec<Holding>, Holding) {
    let nd = placement.devices.len();
    let slot = |b: Buffer| match b {
        Buffer::Device(d) if d < nd => d,
        _ => nd,
    };
    let n_layer = model.n_layer as usize;
    // per layer: (tensors, experts) in all, and per buffer (tensors, experts, kinds)
    let mut all = vec![(0u32, 0u32); n_layer];
    let mut here: Vec<Vec<(u32, u32, Vec<&str>)>> = vec![vec![(0, 0, Vec::new()); nd + 1]; n_layer];
    let mut kinds_of: Vec<Vec<&str>> = vec![Vec::new(); n_layer];
    let mut output = vec![(0u32, 0u32); nd + 1];
    let mut input = vec![(0u32, 0u32); nd + 1];
    let (mut n_output, mut n_input) = (0u32, 0u32);
    for (t, b) in model.tensors.iter().zip(&placement.tensor_buffer) {
        let s = slot(*b);
        match t.layer {
            TensorLayer::Layer(il) if (il as usize) < n_layer => {
                let kind = tensor_kind(&t.name);
                let e = u32::from(is_expert_kind(kind));
                let a = &mut all[il as usize];
                a.0 += 1;
                a.1 += e;
                let h = &mut here[il as usize][s];
                h.0 += 1;
                h.1 += e;
                h.2.push(kind);
                kinds_of[il as usize].push(kind);
            }
            TensorLayer::Layer(_) | TensorLayer::Output => {
                n_output += 1;
                output[s].0 += 1;
            }
            TensorLayer::Input => {
                n_input += 1;
                input[s].0 += 1;
            }
        }
    }
    let share_of = |n: u32, total: u32| {
        if n == 0 {
            Share::None
        } else if n == total {
            Share::Whole
        } else {
            Share::Part
        }
    };
    let mut out: Vec<Holding> = (0..=nd)
        .map(|s| Holding {
            output: share_of(output[s].0, n_output),
            input: share_of(input[s].0, n_input),
            caches: ranges(
                placement
                    .cache_device
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| slot(**b) == s)
                    .map(|(il, _)| il as u32),
            ),
            ..Holding::default()
        })
        .collect();
    for (il, per) in here.iter_mut().enumerate() {
        let (n, e) = all[il];
        for (s, (k, ke, kinds)) in per.iter_mut().enumerate() {
            if *k == 0 {
                continue;
            }
            let share = if *k == n {
                LayerShare::Whole
            } else if e > 0 && *ke == e && *k == e {
                LayerShare::Experts
            } else if e > 0 && *ke == 0 && *k == n - e {
                LayerShare::AllButExperts
            } else if 2 * *k > n {
                let mut away: Vec<String> = kinds_of[il]
                    .iter()
                    .filter(|x| !kinds.contains(x))
                    .map(|x| x.to_string())
                    .collect();
                away.sort_unstable();
                away.dedup();
                LayerShare::AllBut(away)
            } else {
                kinds.sort_unstable();
                kinds.dedup();
                LayerShare::Tensors(kinds.iter().map(|s| s.to_string()).collect())
            };
            let il = il as u32;
            let runs = &mut out[s].layers;
            match runs.last_mut() {
                Some(r) if r.last + 1 == il && r.share == share => r.last = il,
                _ => runs.push(LayerRun {
                    first: il,
                    last: il,
                    share,
                }),
            }
        }
    }
    let host = out.pop().unwrap_or_default();
    (out, host)
}

/// What a device's memory figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseKind {
    /// Metal's `recommendedMaxWorkingSetSize` (a unified-memory Mac).
    WorkingSet,
    /// The memory the driver reports free (CUDA, ROCm, Vulkan: total less the context's).
    DriverFree,
    /// What an RPC server reports.
    ServerReported,
    /// No figure in the profile: the whole capacity assumed free.
    WholeCapacity,
}

/// The memory llama.cpp holds a device against, beside the tier's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBase {
    /// What the figure is.
    pub kind: BaseKind,
    /// The backend that reports it.
    pub backend: super::Backend,
    /// The figure (never above the capacity).
    pub bytes: u64,
    /// Its provenance.
    pub provenance: Provenance,
    /// The tier's capacity (the base of the W+K+A headroom).
    pub capacity: u64,
    /// The figure as an exact fraction of the capacity with a denominator up to 16 (3/4), when
    /// it is one and below the capacity.
    pub fraction: Option<(u64, u64)>,
}

/// The memory base of a device tier (None for host and SSD tiers).
pub fn memory_base(tier: &Tier) -> Option<MemoryBase> {
    let d = tier.device_or_default()?;
    let capacity = tier.capacity.value;
    let bytes = d.free.value.min(capacity);
    let kind = if d.free.source == DEFAULT_FREE_SOURCE {
        BaseKind::WholeCapacity
    } else {
        match d.backend {
            super::Backend::Metal => BaseKind::WorkingSet,
            super::Backend::Rpc => BaseKind::ServerReported,
            _ => BaseKind::DriverFree,
        }
    };
    let fraction = (capacity > 0 && bytes < capacity)
        .then(|| {
            (2u64..=16).find_map(|den| {
                let scaled = u128::from(bytes) * u128::from(den);
                (scaled % u128::from(capacity) == 0)
                    .then(|| (u64::try_from(scaled / u128::from(capacity)).ok(), den))
                    .and_then(|(num, den)| num.map(|n| (n, den)))
            })
        })
        .flatten();
    Some(MemoryBase {
        kind,
        backend: d.backend,
        bytes,
        provenance: d.free.provenance,
        capacity,
        fraction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::placement::{Device, PlacedTensor, PlacementSettings, place};

    fn tensor(name: &str, bytes: u64, n_layer: u32) -> PlacedTensor {
        PlacedTensor {
            name: name.into(),
            bytes,
            layer: crate::core::placement::tensor_layer(name, n_layer),
            matmul: None,
        }
    }

    #[test]
    fn groups_name_whole_layers_experts_and_the_output() {
        let n_layer = 4;
        let mut t = vec![
            tensor("token_embd.weight", 1 << 20, n_layer),
            tensor("output_norm.weight", 4096, n_layer),
            tensor("output.weight", 1 << 20, n_layer),
        ];
        for il in 0..n_layer {
            for k in ["attn_q", "ffn_up_exps", "ffn_down_exps"] {
                t.push(tensor(&format!("blk.{il}.{k}.weight"), 1 << 20, n_layer));
            }
        }
        let model = PlacementModel {
            tensors: t,
            n_layer,
            n_expert: 8,
            n_ctx_train: 4096,
            exact: true,
            embedding_type: None,
        };
        let dev = Device {
            buffer_name: "CUDA0".into(),
            backend: crate::core::placement::Backend::Cuda,
            free: crate::core::units::Bytes(1 << 34),
            total: crate::core::units::Bytes(1 << 34),
            max_tensor: None,
        };
        let settings = PlacementSettings {
            overrides: vec![
                crate::core::placement::Override::new(
                    r"blk\.[23]\.ffn_.*_exps",
                    super::super::Target::Cpu,
                )
                .unwrap(),
                crate::core::placement::Override::new(
                    r"blk\.1\.ffn_down_exps",
                    super::super::Target::Cpu,
                )
                .unwrap(),
            ],
            ..PlacementSettings::default()
        };
        let ctx = crate::core::placement::ContextFigures {
            layer_bytes: vec![1024; n_layer as usize],
            ..Default::default()
        };
        let p = place(&model, &ctx, &[dev], &settings).unwrap();
        let (devs, host) = holdings(&model, &p);
        assert_eq!(devs.len(), 1);
        let d = &devs[0];
        assert_eq!(
            d.layers,
            vec![
                LayerRun {
                    first: 0,
                    last: 0,
                    share: LayerShare::Whole
                },
                LayerRun {
                    first: 1,
                    last: 1,
                    share: LayerShare::AllBut(vec!["ffn_down_exps".into()])
                },
                LayerRun {
                    first: 2,
                    last: 3,
                    share: LayerShare::AllButExperts
                },
            ]
        );
        assert_eq!(d.output, Share::Whole);
        assert_eq!(d.input, Share::None);
        assert_eq!(d.caches, vec![(0, 3)]);
        assert_eq!(
            host.layers,
            vec![
                LayerRun {
                    first: 1,
                    last: 1,
                    share: LayerShare::Tensors(vec!["ffn_down_exps".into()])
                },
                LayerRun {
                    first: 2,
                    last: 3,
                    share: LayerShare::Experts
                },
            ]
        );
        assert_eq!(host.input, Share::Whole);
        assert_eq!(host.output, Share::None);
        assert!(host.caches.is_empty());
    }

    #[test]
    fn a_macs_base_is_its_working_set_as_a_fraction() {
        use crate::core::scenario::{DeviceSpec, TierKind};
        use crate::core::units::{BytesPerSec, Sourced};
        let mut t = Tier {
            name: "unified".into(),
            kind: TierKind::Unified,
            capacity: Sourced::new(48 << 30, Provenance::Measured, "x"),
            bandwidth: Sourced::new(BytesPerSec(273e9), Provenance::Spec, "x"),
            measured_bandwidth: None,
            device: Some(DeviceSpec {
                backend: super::super::Backend::Metal,
                free: Sourced::new(36 << 30, Provenance::Derived, "derived: 3/4"),
                endpoint: None,
                max_tensor: None,
            }),
        };
        let b = memory_base(&t).unwrap();
        assert_eq!(b.kind, BaseKind::WorkingSet);
        assert_eq!((b.bytes, b.capacity), (36 << 30, 48 << 30));
        assert_eq!(b.fraction, Some((3, 4)));
        assert_eq!(b.provenance, Provenance::Derived);
        t.device = None;
        let b = memory_base(&t).unwrap();
        assert_eq!(b.kind, BaseKind::WholeCapacity);
        assert_eq!(b.fraction, None);
        t.kind = TierKind::Host;
        assert_eq!(memory_base(&t), None);
    }
}
