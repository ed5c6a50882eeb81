//! The host's compute buffer when it runs only feed-forward work of layers that are on devices
//! (`-ot …=CPU` over FFN or expert weights, `--cpu-moe`, `--n-cpu-moe`, `--n-cpu-ffn`, and
//! `-fit`'s overflow of the last layers' experts with its partial layers), replayed as
//! llama.cpp b11434 builds it:
//!
//! - the graph inputs first, in the graph's order, each freed when the last device that
//!   copies it has taken it (`ggml_backend_sched_split_graph` adds a dependency on the source
//!   at the start of the split that copies it);
//! - per layer the feed-forward block as a small graph in llama.cpp's node order (router,
//!   routed experts, their weighted sum, shared expert and its gate, or a dense FFN); every node
//!   with a weight runs where the weight is, and the weightless ones are assigned by the
//!   scheduler's own passes (expand the devices down and up, ignoring the host, then any
//!   backend down and up), so a weightless op between two host matmuls runs on the host and
//!   one next to device work runs there;
//! - each host split copies in the device tensors its nodes use (allocated at the split's
//!   start, kept for later host splits of the layer), and a host tensor a device uses is freed
//!   when that device's split starts;
//! - ggml-alloc's rules: best fit, in-place reuse of a parent's block by the ops that allow it
//!   when the node is the parent's last consumer.
//!
//! Checked against ggml-alloc's own trace of the host buffer (`scripts/oracle/sched_trace.py
//! --alloc`): DeepSeek-V3, gpt-oss-20b, Qwen3-30B-A3B and Qwen3-Next-80B shapes with -fit's
//! overflow patterns (`ffn_down` only, `ffn_(gate|gate_up|down)`, whole experts).

use super::{
    FeedForward, Ffn, FfnProjections, GraphSettings, Live, Replay, Tail, dense_ff_width,
    expert_ff_width, graph_of, n_kv_of, shared_ff_width,
};
use crate::core::kv::KvCache;
use crate::core::model::{Attention, ModelShape};

/// One device layer's feed-forward weights in host memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostFfn {
    /// The router (`ffn_gate_inp`, its bias and expert score bias).
    pub router: bool,
    /// The routed experts' projections.
    pub experts: FfnProjections,
    /// The shared expert's projections.
    pub shared: FfnProjections,
    /// The shared expert's gate (`ffn_gate_inp_shexp`).
    pub shared_gate: bool,
    /// A dense FFN's projections.
    pub dense: FfnProjections,
    /// The attention's output projection (`attn_output`): the attention's result comes in.
    pub attn_output: bool,
    /// The FFN's input norm (`ffn_norm`).
    pub ffn_norm: bool,
    /// Every weight of an MLA attention but its output projection (`attn_norm`, `attn_q_a`,
    /// its norm, `attn_q_b`, `attn_kv_a_mqa`, its norm, `attn_k_b`, `attn_v_b`), with flash
    /// attention: the host runs the projections and the latent's decompression, the device
    /// the first norm, the cache write and the attention over its cache.
    pub attention: bool,
    /// A dense FFN whose weights are on the layer's device but whose ops that device cannot
    /// run (their activations over its tensor limit, `runtime::ffn_tensor_max`): the host runs
    /// the projections and the GLU, each weight copied in by a split of its own (bytes of the
    /// gate, up and down weights; 0: none) and freed after its op.
    pub dense_copied: Option<[u64; 3]>,
}

impl HostFfn {
    fn any(&self) -> bool {
        self.router
            || self.experts.any()
            || self.shared.any()
            || self.shared_gate
            || self.dense.any()
            || self.attn_output
            || self.ffn_norm
            || self.attention
            || self.dense_copied.is_some()
    }
    /// The block starts at the attention's output projection (the residual add and the FFN's
    /// norm with it), or at the layer's input with the attention's weights here.
    fn starts_at_attention(&self) -> bool {
        self.attn_output || self.ffn_norm || self.attention
    }
}

/// The layers' feed-forward blocks: which kinds each layer has (wherever their weights are).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FfnKinds {
    /// Routed experts (with their router).
    pub experts: bool,
    /// A shared expert.
    pub shared: bool,
    /// A gate on the shared expert's output (`ffn_gate_inp_shexp`).
    pub shared_gate: bool,
    /// A dense FFN.
    pub dense: bool,
}

/// What [`host_ffn_peak`] replays.
#[derive(Debug, Clone)]
pub struct HostSplits<'a> {
    /// Per repeating layer: the device (index) that runs it.
    pub layer_device: &'a [usize],
    /// Per repeating layer: its feed-forward weights in host memory.
    pub on_host: &'a [HostFfn],
    /// Per repeating layer: its feed-forward blocks.
    pub kinds: &'a [FfnKinds],
    /// The feed-forward widths.
    pub ff: FeedForward,
    /// Per repeating layer: its attention runs on the host (its device cannot run it: see
    /// `Segment::attn_elsewhere`); Q comes in, the output goes back, and the cached K and V
    /// are copied in unless the layer's cache is in host memory ([`Self::cache_here`]).
    pub attention: &'a [bool],
    /// Per repeating layer: its cache is in host memory.
    pub cache_here: &'a [bool],
    /// The output projection runs on the host: the output norm's rows come in, the logits.
    pub output: bool,
    /// The host buffer type's largest chunk (Vulkan's pinned host buffer: 1 GiB); None: no
    /// limit.
    pub max_chunk: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Host,
    Device,
}

/// A node of one layer's feed-forward graph.
#[derive(Debug, Clone)]
struct Node {
    bytes: u64,
    srcs: Vec<usize>,
    /// The node multiplies a weight that lives there.
    weight: Option<Side>,
    /// The op may reuse a parent's block (`ggml_op_can_inplace`) of the same layout.
    inplace: bool,
    /// A view of its first source: no block of its own.
    view: bool,
    /// A device weight a host node copies in (no op: left out of the scheduler's assignment).
    leaf: bool,
    /// A host graph input held outside the block (the positions): no op, never allocated or
    /// freed here.
    held: bool,
}

struct Block {
    nodes: Vec<Node>,
}

impl Block {
    fn push(&mut self, bytes: u64, srcs: &[usize], weight: Option<Side>, inplace: bool) -> usize {
        self.nodes.push(Node {
            bytes,
            srcs: srcs.to_vec(),
            weight,
            inplace,
            view: false,
            leaf: false,
            held: false,
        });
        self.nodes.len() - 1
    }
    /// A device weight of `bytes` that a host node copies in.
    fn weight_copy(&mut self, bytes: u64) -> usize {
        self.nodes.push(Node {
            bytes,
            srcs: Vec::new(),
            weight: Some(Side::Device),
            inplace: false,
            view: false,
            leaf: true,
            held: false,
        });
        self.nodes.len() - 1
    }
    /// A host graph input the block's nodes read (see [`Node::held`]).
    fn held(&mut self, bytes: u64) -> usize {
        self.nodes.push(Node {
            bytes,
            srcs: Vec::new(),
            weight: Some(Side::Host),
            inplace: false,
            view: false,
            leaf: false,
            held: true,
        });
        self.nodes.len() - 1
    }
    fn view(&mut self, of: usize, bytes: u64) -> usize {
        self.nodes.push(Node {
            bytes,
            srcs: vec![of],
            weight: None,
            inplace: false,
            view: true,
            leaf: false,
            held: false,
        });
        self.nodes.len() - 1
    }
}

fn side(host: bool) -> Option<Side> {
    Some(if host { Side::Host } else { Side::Device })
}

/// One layer's feed-forward block in llama.cpp's node order (depth first from the layer's
/// output): node 0 is the normed input (on the device), the last node the next layer's norm
/// (a device weight). With the attention's output projection or the FFN's norm in host memory
/// the block starts at the attention's result instead: node 0 the layer's input (the residual:
/// the host's own token rows for the first layer, `resid_here`), then the attention's result
/// (one device node, or with the attention's weights here the MLA attention's nodes,
/// [`mla_attention`]), the output projection, the residual add, the norm and its weight.
fn layer_block(
    model: &ModelShape,
    sh: &HostSplits,
    h: HostFfn,
    kinds: FfnKinds,
    t: u64,
    resid_here: bool,
) -> Block {
    let f32b = 4u64;
    let e = model.embedding_length.saturating_mul(t) * f32b;
    let mut b = Block { nodes: Vec::new() };
    let mut ffn_inp = None;
    let x = if h.starts_at_attention() {
        let resid = b.push(e, &[], side(resid_here), false);
        let l = model.layers.first();
        let hq = l.map_or(0, |l| l.head_count as u64);
        let dv = match model.mla {
            Some(m) => m.value_length_mla as u64,
            None => l.map_or(0, |l| l.value_length as u64),
        };
        let kqv = match model.mla.filter(|_| h.attention) {
            Some(m) => mla_attention(&mut b, model, m, resid, hq, t),
            None => b.push(hq * dv * t * f32b, &[], Some(Side::Device), false),
        };
        let attn_out = b.push(e, &[kqv], side(h.attn_output), false);
        let inp = b.push(e, &[attn_out, resid], None, true);
        ffn_inp = Some(inp);
        let norm = b.push(e, &[inp], None, true);
        b.push(e, &[norm], side(h.ffn_norm), true)
    } else {
        b.push(e, &[], Some(Side::Device), false)
    };
    let mut out: Option<usize> = None;
    if kinds.experts
        && let Some(moe) = model.moe
    {
        let n_exp = u64::from(moe.experts);
        let k = u64::from(moe.experts_used);
        let hidden = expert_ff_width(model, &sh.ff)
            .saturating_mul(k)
            .saturating_mul(t)
            * f32b;
        let xr = b.view(x, e);
        let logits = b.push(n_exp * t * f32b, &[x], side(h.router), false);
        let probs = b.push(n_exp * t * f32b, &[logits], None, true);
        let argsort = b.push(n_exp * t * 4, &[probs], None, false);
        // the chosen experts: a strided view of the sorted ids (its bytes span the rows)
        let topk = b.view(argsort, (n_exp * t.saturating_sub(1) + k) * 4);
        let probs_r = b.view(probs, n_exp * t * f32b);
        let weights = b.push(k * t * f32b, &[probs_r, topk], None, false);
        let sum = b.push(t * f32b, &[weights], None, false);
        let clamped = b.push(t * f32b, &[sum], None, true);
        let norm = b.push(k * t * f32b, &[weights, clamped], None, false);
        let p = h.experts;
        let (gate, up) = if p.fused {
            let gu = b.push(2 * hidden, &[xr, topk], side(p.gate), false);
            (b.view(gu, hidden), b.view(gu, hidden))
        } else {
            let gate = b.push(hidden, &[xr, topk], side(p.gate), false);
            let up = b.push(hidden, &[xr, topk], side(p.up), false);
            (gate, up)
        };
        let glu = b.push(hidden, &[gate, up], None, false);
        let down = b.push(
            model.embedding_length.saturating_mul(k).saturating_mul(t) * f32b,
            &[glu, topk],
            side(p.down),
            false,
        );
        let norm_r = b.view(norm, k * t * f32b);
        let weighted = b.push(
            model.embedding_length.saturating_mul(k).saturating_mul(t) * f32b,
            &[down, norm_r],
            None,
            true,
        );
        // the k weighted outputs summed: the first add a new block, the rest in place on it
        let summed = b.push(e, &[weighted], None, false);
        out = Some(summed);
    }
    // the shared expert beside the routed ones, and a dense FFN (alone, or beside the experts
    // as some architectures have it), each added to the block's output
    let shared =
        (kinds.shared && kinds.experts).then(|| (h.shared, shared_ff_width(model, &sh.ff), true));
    let dense = kinds
        .dense
        .then(|| (h.dense, dense_ff_width(model, &sh.ff), false));
    for (p, width, is_shared) in [shared, dense].into_iter().flatten() {
        let hidden = width.saturating_mul(t) * f32b;
        // a dense FFN its device cannot run: every op on the host, each projection's weight
        // copied in from the device (the GLU, weightless, is the host's too)
        let copied = h.dense_copied.filter(|_| !is_shared);
        let act = copied.map(|_| Side::Host);
        let matmul =
            |b: &mut Block, bytes: u64, src: usize, on_host: bool, slot: usize| match copied {
                Some(w) => {
                    let w = b.weight_copy(w[slot]);
                    b.push(bytes, &[w, src], Some(Side::Host), false)
                }
                None => b.push(bytes, &[src], side(on_host), false),
            };
        let glu = match graph_of(&model.architecture).ffn {
            // a dense FFN without a gate: up, the activation in place
            Ffn::Ungated if !is_shared => {
                let up = matmul(&mut b, hidden, x, p.up, 1);
                b.push(hidden, &[up], act, true)
            }
            // gate and up fused in one `ffn_up` of twice the width, the GLU into n_ff
            Ffn::FusedGateUp if !is_shared => {
                let up = matmul(&mut b, hidden, x, p.up, 1);
                b.push(hidden / 2, &[up], act, false)
            }
            _ => {
                let gate = matmul(&mut b, hidden, x, p.gate, 0);
                let up = matmul(&mut b, hidden, x, p.up, 1);
                b.push(hidden, &[gate, up], act, false)
            }
        };
        let mut down = matmul(&mut b, e, glu, p.down, 2);
        if is_shared && kinds.shared_gate {
            let g = b.push(t * f32b, &[x], side(h.shared_gate), false);
            let sig = b.push(t * f32b, &[g], None, true);
            down = b.push(e, &[down, sig], None, true);
        }
        out = Some(match out {
            Some(o) => b.push(e, &[o, down], None, true),
            None => down,
        });
    }
    let l_out = match ffn_inp {
        Some(inp) => b.push(e, &[out.unwrap_or(x), inp], None, true),
        None => b.push(e, &[out.unwrap_or(x)], None, true),
    };
    b.push(e, &[l_out], Some(Side::Device), false);
    b
}

/// An MLA attention whose weights are in host memory, from the layer's input `resid` to the
/// decompressed, contiguous per-head values (the output projection's input), in llama.cpp's
/// node order (deepseek2's absorbed form with flash attention): the norm, its weight, the
/// compressed query (normed, weighted), its projection to the heads, the absorbed no-rope part
/// and the rotated rope part concatenated; the compressed latent with its rope part, the
/// latent's norm and weight; then the rotated key rope, the cache row and its write, and the
/// flash attention over the device's cache; the latent decompressed per head (`attn_v_b`) and
/// made contiguous. The weightless ops fall where the scheduler's passes put them: the first
/// norm with the device's residual, the query's and latent's norms and the query's RoPE and
/// concatenation with the host's projections, the key's RoPE and the cache row with the
/// device's cache write.
fn mla_attention(
    b: &mut Block,
    model: &ModelShape,
    m: crate::core::model::Mla,
    resid: usize,
    hq: u64,
    t: u64,
) -> usize {
    let f32b = 4u64;
    let e = model.embedding_length.saturating_mul(t) * f32b;
    let (lora, rope) = (m.kv_lora_rank as u64, m.rope_dim as u64);
    // (the placement follows such a layer only with a compressed query)
    let ql = model.keys.q_lora_rank.map_or(0, u64::from);
    let rows = |w: u64| w.saturating_mul(t) * f32b;
    let pos = b.held(t * 4 * super::positions_per_token(model));
    let norm = b.push(e, &[resid], None, true);
    let attn_norm = b.push(e, &[norm], Some(Side::Host), true);
    let qa = b.push(rows(ql), &[attn_norm], Some(Side::Host), false);
    let qa_norm = b.push(rows(ql), &[qa], None, true);
    let qa_w = b.push(rows(ql), &[qa_norm], Some(Side::Host), true);
    let qb = b.push(
        rows(hq * m.key_length_mla as u64),
        &[qa_w],
        Some(Side::Host),
        false,
    );
    let q_nope = b.view(
        qb,
        rows(hq * (m.key_length_mla as u64).saturating_sub(rope)),
    );
    let absorbed = b.push(rows(hq * lora), &[q_nope], Some(Side::Host), false);
    let q_pe_rows = b.view(qb, rows(hq * rope));
    let q_pe = b.push(rows(hq * rope), &[q_pe_rows, pos], None, true);
    let absorbed_perm = b.view(absorbed, rows(hq * lora));
    let qcur = b.push(
        rows(hq * (lora + rope)),
        &[absorbed_perm, q_pe],
        None,
        false,
    );
    let kv = b.push(rows(lora + rope), &[attn_norm], Some(Side::Host), false);
    let latent = b.view(kv, rows(lora));
    let kv_norm = b.push(rows(lora), &[latent], None, true);
    let kv_w = b.push(rows(lora), &[kv_norm], Some(Side::Host), true);
    let k_pe_rows = b.view(kv, rows(rope));
    // (the device's RoPE takes the positions it copied at its first split)
    let k_pe = b.push(rows(rope), &[k_pe_rows], None, true);
    let k_cur = b.push(rows(lora + rope), &[kv_w, k_pe], None, false);
    let write = b.push(0, &[k_cur], Some(Side::Device), false);
    let q = b.view(qcur, rows(hq * (lora + rope)));
    let attn = b.push(rows(hq * lora), &[q, write], Some(Side::Device), false);
    let attn_perm = b.view(attn, rows(hq * lora));
    let vb = b.push(
        rows(hq * m.value_length_mla as u64),
        &[attn_perm],
        Some(Side::Host),
        false,
    );
    let vb_perm = b.view(vb, rows(hq * m.value_length_mla as u64));
    b.push(
        rows(hq * m.value_length_mla as u64),
        &[vb_perm],
        None,
        false,
    )
}

/// The scheduler's backend assignment over one block: nodes with a weight run where it is;
/// then the devices are expanded down and up over weightless nodes (a host node stops the
/// expansion), then any backend down and up; a view runs where its source does.
fn assign(b: &Block) -> Vec<Side> {
    let n = b.nodes.len();
    let mut at: Vec<Option<Side>> = b.nodes.iter().map(|x| x.weight).collect();
    let order: Vec<usize> = (0..n)
        .filter(|&i| !b.nodes[i].view && !b.nodes[i].leaf && !b.nodes[i].held)
        .collect();
    for (only_devices, rev) in [(true, false), (true, true), (false, false), (false, true)] {
        let mut cur: Option<Side> = None;
        let seq: Box<dyn Iterator<Item = &usize>> = if rev {
            Box::new(order.iter().rev())
        } else {
            Box::new(order.iter())
        };
        for &i in seq {
            match at[i] {
                Some(s) => {
                    cur = if only_devices && s == Side::Host {
                        None
                    } else {
                        Some(s)
                    }
                }
                None => at[i] = cur,
            }
        }
    }
    (0..n)
        .map(|i| at[base(b, i)].unwrap_or(Side::Device))
        .collect()
}

/// The block a view or node stands on (a view's storage is its source's).
fn base(b: &Block, mut i: usize) -> usize {
    while b.nodes[i].view {
        i = b.nodes[i].srcs[0];
    }
    i
}

/// Replay one layer's block, its nodes assigned to `at`, on the host allocator; `resid`: node 0
/// is that host tensor, already live.
fn replay_block(r: &mut Replay, b: &Block, at: &[Side], resid: Option<Live>) {
    let n = b.nodes.len();
    if !(0..n).any(|i| at[i] == Side::Host && !b.nodes[i].view) {
        return;
    }
    // host tensors: remaining consumers (host nodes, and one for the device split that copies
    // it); device tensors a host node uses get a host copy (per source, kept for the layer)
    let mut children = vec![0u32; n];
    let mut device_uses = vec![false; n];
    let mut copy_children = vec![0u32; n];
    for i in 0..n {
        if b.nodes[i].view {
            continue;
        }
        for &s in &b.nodes[i].srcs {
            let src_side = at[s];
            if at[i] == Side::Host {
                if src_side == Side::Host {
                    children[base(b, s)] += 1;
                } else {
                    copy_children[s] += 1;
                }
            } else if src_side == Side::Host {
                device_uses[base(b, s)] = true;
            }
        }
    }
    for i in 0..n {
        if device_uses[i] {
            children[i] += 1;
        }
    }
    let mut live: Vec<Option<Live>> = vec![None; n];
    let mut copies: Vec<Option<Live>> = vec![None; n];
    let mut i = 0;
    while i < n {
        // one split: a run of nodes on the same side (views go with their source)
        let s = at[i];
        let mut end = i;
        while end < n
            && (b.nodes[end].view || b.nodes[end].leaf || b.nodes[end].held || at[end] == s)
        {
            // a node that copies a weight in starts a split of its own (the scheduler keeps one
            // weight copy at a time)
            if end > i && s == Side::Host && b.nodes[end].srcs.iter().any(|&x| b.nodes[x].leaf) {
                break;
            }
            end += 1;
        }
        if s == Side::Device {
            // the device split's start takes what it copies from the host
            for j in i..end {
                if b.nodes[j].view || b.nodes[j].leaf || b.nodes[j].held {
                    continue;
                }
                for &src in &b.nodes[j].srcs {
                    let p = base(b, src);
                    if at[src] == Side::Host && device_uses[p] {
                        device_uses[p] = false;
                        release(r, &mut children, &mut live, p);
                    }
                }
            }
        } else {
            // the host split's input copies, at its start, in the order its nodes use them
            for j in i..end {
                if b.nodes[j].view || b.nodes[j].leaf || b.nodes[j].held {
                    continue;
                }
                for &src in &b.nodes[j].srcs {
                    if at[src] == Side::Device && copies[src].is_none() {
                        copies[src] = Some(r.alloc(b.nodes[src].bytes));
                    }
                }
            }
            for j in i..end {
                let node = &b.nodes[j];
                if node.view || node.leaf || node.held {
                    continue;
                }
                // in place on a parent whose last consumer this is, of the same size: a host
                // tensor, else a device tensor's copy (a copy has no views)
                let last_use = |src: usize, side: Side| {
                    at[src] == side
                        && !b.nodes[src].view
                        && b.nodes[src].bytes == node.bytes
                        && match side {
                            Side::Host => children[src] == 1 && live[src].is_some(),
                            Side::Device => copy_children[src] == 1 && copies[src].is_some(),
                        }
                };
                let reuse = node
                    .inplace
                    .then(|| {
                        [Side::Host, Side::Device].into_iter().find_map(|side| {
                            node.srcs
                                .iter()
                                .copied()
                                .find(|&src| last_use(src, side))
                                .map(|src| (src, side))
                        })
                    })
                    .flatten();
                match reuse {
                    Some((p, Side::Host)) => {
                        live[j] = live[p].take();
                        children[p] = 0;
                    }
                    Some((c, Side::Device)) => {
                        live[j] = copies[c].take();
                        copy_children[c] = 0;
                    }
                    None if j == 0 && resid.is_some() => live[j] = resid,
                    None => live[j] = Some(r.alloc(node.bytes)),
                }
                for &src in &node.srcs {
                    if reuse.is_some_and(|(p, _)| p == src) {
                        continue;
                    }
                    if at[src] == Side::Host {
                        release(r, &mut children, &mut live, base(b, src));
                    } else {
                        copy_children[src] = copy_children[src].saturating_sub(1);
                        if copy_children[src] == 0
                            && let Some(c) = copies[src].take()
                        {
                            r.free(c);
                        }
                    }
                }
                if children[j] == 0
                    && let Some(x) = live[j].take()
                {
                    r.free(x);
                }
            }
        }
        i = end;
    }
}

fn release(r: &mut Replay, children: &mut [u32], live: &mut [Option<Live>], p: usize) {
    children[p] = children[p].saturating_sub(1);
    if children[p] == 0
        && let Some(x) = live[p].take()
    {
        r.free(x);
    }
}

/// The host's compute buffer (bytes) when its splits run only feed-forward work of device
/// layers ([`HostSplits`]), over the reserved prompt graph's rows.
pub fn host_ffn_peak(model: &ModelShape, kv: &KvCache, g: &GraphSettings, sh: &HostSplits) -> u64 {
    let f32b = 4u64;
    let t = kv.allocated_context.min(g.ubatch).max(1);
    let e = model.embedding_length.saturating_mul(t) * f32b;
    let n_layer = model.layers.len();
    let mask_elem = if g.flash_attn { 2 } else { 4 };
    let mut r = Replay::chunked(sh.max_chunk);
    // the graph inputs (leafs first, in the order the graph uses them)
    let tokens = r.alloc(t * 4);
    let _inp_embd = r.alloc(e);
    let mixed_tokens = r.alloc(t * 4);
    let mixed_slots = r.alloc(t * 8);
    let mixed_embd = r.alloc(e);
    let scale_rows = model
        .architecture
        .starts_with("gemma")
        .then(|| r.alloc(t * 4));
    let recurrent: Vec<usize> = (0..n_layer)
        .filter(|&il| model.layers[il].recurrent)
        .collect();
    let s_copy = (!recurrent.is_empty()).then(|| r.alloc(g.sequences.max(1) * 4));
    let pos = r.alloc(t * 4 * super::positions_per_token(model));
    // per attention cache (full, windowed) in the order the layers first use them
    let windowed =
        |a: Attention| matches!(a, Attention::Sliding { .. } | Attention::Chunked { .. });
    let mut kind_key: Vec<bool> = Vec::new();
    let mut kind_of_layer: Vec<Option<usize>> = vec![None; n_layer];
    let mut kind_inputs: Vec<Vec<Live>> = Vec::new();
    let v_idx = if g.flash_attn {
        t * 8
    } else {
        t.saturating_mul(model.v_width_max()).saturating_mul(8)
    };
    for (il, l) in model.layers.iter().enumerate() {
        if l.attention == Attention::None {
            continue;
        }
        let w = windowed(l.attention);
        let k = match kind_key.iter().position(|x| *x == w) {
            Some(k) => k,
            None => {
                kind_key.push(w);
                let mut v = vec![r.alloc(t * 8)];
                if model.mla.is_none() {
                    v.push(r.alloc(v_idx));
                }
                let n = n_kv_of(kv, il, g, None);
                v.push(r.alloc(n.saturating_mul(t).saturating_mul(mask_elem)));
                kind_inputs.push(v);
                kind_key.len() - 1
            }
        };
        kind_of_layer[il] = Some(k);
    }
    let out_ids = r.alloc(t * 4);
    // the token rows gathered, and the mixed rows scattered into a copy of them
    let embd = r.alloc(e);
    r.free(tokens);
    let scattered = r.alloc(e);
    // the first layer's block from the attention on: its residual add runs here on the token
    // rows, which then stay until it
    let first = sh
        .on_host
        .first()
        .zip(sh.kinds.first())
        .filter(|(h, _)| h.starts_at_attention())
        .map(|(h, k)| {
            let b = layer_block(model, sh, *h, *k, t, true);
            let at = assign(&b);
            (b, at)
        });
    let resid_here = first.as_ref().is_some_and(|(b, at)| {
        (0..b.nodes.len())
            .any(|i| at[i] == Side::Host && !b.nodes[i].view && b.nodes[i].srcs.contains(&0))
    });
    // the first device's first split copies the input stage away
    for x in [mixed_tokens, mixed_embd, scattered, mixed_slots] {
        r.free(x);
    }
    if !resid_here {
        r.free(embd);
    }
    if let Some(x) = scale_rows {
        r.free(x);
    }
    // the layer at whose device split the last copy of an input is taken: per device its
    // first layer that uses it
    let last_copy = |uses: &dyn Fn(usize) -> bool| -> Option<usize> {
        let mut seen: Vec<usize> = Vec::new();
        let mut at = None;
        for il in 0..n_layer {
            let d = sh.layer_device.get(il).copied().unwrap_or(0);
            if uses(il) && !seen.contains(&d) {
                seen.push(d);
                at = Some(il);
            }
        }
        at
    };
    let mut frees: Vec<(usize, Live)> = Vec::new();
    if let Some(il) = last_copy(&|il| model.layers[il].attention != Attention::None) {
        frees.push((il, pos));
    }
    if let Some(x) = s_copy
        && let Some(il) = last_copy(&|il| model.layers[il].recurrent)
    {
        frees.push((il, x));
    }
    let attn_here = |il: usize| sh.attention.get(il).copied().unwrap_or(false);
    for (k, inputs) in kind_inputs.iter().enumerate() {
        if let Some(il) = last_copy(&|il| kind_of_layer[il] == Some(k)) {
            // the mask stays while the host runs attention of the kind's layers
            let last_here = (0..n_layer)
                .rev()
                .find(|&j| kind_of_layer[j] == Some(k) && attn_here(j));
            let n = inputs.len();
            frees.extend(inputs.iter().enumerate().map(|(i, x)| match last_here {
                Some(j) if i + 1 == n => ((j + 1).max(il), *x),
                _ => (il, *x),
            }));
        }
    }
    // the output ids: taken by the last layer's split, or by the output stage after it
    if graph_of(&model.architecture).tail != Tail::LateRows {
        frees.push((n_layer.saturating_sub(1), out_ids));
    }
    // (layers with the same weights in host memory and the same blocks share one graph)
    let mut blocks: Vec<((HostFfn, FfnKinds), Block, Vec<Side>)> = Vec::new();
    for il in 0..n_layer {
        for (_, x) in frees.iter().filter(|(at, _)| *at == il) {
            r.free(*x);
        }
        if attn_here(il) && model.layers[il].attention != Attention::None {
            host_attention(
                &mut r,
                model,
                kv,
                g,
                il,
                !sh.cache_here.get(il).copied().unwrap_or(false),
            );
        }
        // (a layer the placement's lists do not reach has nothing in host memory)
        let (Some(h), Some(k)) = (sh.on_host.get(il), sh.kinds.get(il)) else {
            continue;
        };
        let key = (*h, *k);
        if !key.0.any() {
            continue;
        }
        if il == 0
            && resid_here
            && let Some((b, at)) = &first
        {
            replay_block(&mut r, b, at, Some(embd));
            continue;
        }
        let i = match blocks.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                let b = layer_block(model, sh, key.0, key.1, t, false);
                let at = assign(&b);
                blocks.push((key, b, at));
                blocks.len() - 1
            }
        };
        replay_block(&mut r, &blocks[i].1, &blocks[i].2, None);
    }
    if sh.output {
        // the output norm's rows copied in, the logits beside them
        let rows = r.alloc(e);
        let _logits = r.alloc(model.vocab_size.saturating_mul(t).saturating_mul(f32b));
        r.free(rows);
    }
    r.a.max
}

/// One layer's attention on the host (ggml-alloc's order in llama.cpp's trace): the cached K,
/// Q and the cached V copied in (K and V only when the cache is a device's), then flash
/// attention's output, or the KQ scores (softmax in place) and KQ·V; the output goes back.
fn host_attention(
    r: &mut Replay,
    model: &ModelShape,
    kv: &KvCache,
    g: &GraphSettings,
    il: usize,
    copied: bool,
) {
    let f32b = 4u64;
    let t = kv.allocated_context.min(g.ubatch).max(1);
    let l = &model.layers[il];
    let (hq, dk, dv) = (
        l.head_count as u64,
        l.key_length as u64,
        l.value_length as u64,
    );
    let n_kv = n_kv_of(kv, il, g, None);
    let cache = kv.per_layer.get(il).map_or(0, |c| c.allocated_bytes);
    let k = copied.then(|| r.alloc(cache.saturating_mul(dk) / (dk + dv).max(1)));
    let q = r.alloc(hq * dk * t * f32b);
    let v = copied.then(|| r.alloc(cache.saturating_mul(dv) / (dk + dv).max(1)));
    if g.flash_attn {
        let o = r.alloc(hq * dv * t * f32b);
        for x in [k, Some(q), v].into_iter().flatten() {
            r.free(x);
        }
        r.free(o);
    } else {
        let kq = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
        for x in [k, Some(q)].into_iter().flatten() {
            r.free(x);
        }
        let kqv = r.alloc(hq * dv * t * f32b);
        if let Some(v) = v {
            r.free(v);
        }
        r.free(kq);
        r.free(kqv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kv::{CacheSettings, cache};
    use crate::core::model::{Moe, PerLayer};
    use crate::core::units::Provenance;

    /// The Qwen3-30B-A3B shape of the placement fixtures: 48 layers, n_embd 2,048, 32 query
    /// and 4 KV heads of 128, 8 of 128 experts of 768.
    fn qwen3_30b_a3b() -> ModelShape {
        let mut f = crate::core::model::qwen3_32b_figures();
        f.architecture = "qwen3moe".into();
        f.layers = 48;
        f.head_count = PerLayer::Uniform(32);
        f.head_count_kv = PerLayer::Uniform(4);
        f.embedding_length = 2048;
        f.moe = Some(Moe {
            experts: 128,
            experts_used: 8,
            shared_experts: 0,
        });
        ModelShape::from_figures("Qwen3-30B-A3B", &f, Provenance::Spec).unwrap()
    }

    /// The fixtures' settings: f16 cache, ub 512, one sequence, flash attention.
    fn graph(m: &ModelShape, context: u64) -> (KvCache, GraphSettings) {
        let kv = cache(
            m,
            &CacheSettings {
                context,
                ..CacheSettings::default()
            },
        );
        let g = GraphSettings {
            ubatch: 512,
            sequences: 1,
            flash_attn: true,
            kv_unified: false,
        };
        (kv, g)
    }

    fn peak(m: &ModelShape, context: u64, on_host: &[HostFfn]) -> u64 {
        let (kv, g) = graph(m, context);
        let n = m.layers.len();
        let kinds = vec![
            FfnKinds {
                experts: true,
                ..Default::default()
            };
            n
        ];
        let sh = HostSplits {
            attention: &[],
            cache_here: &[],
            output: false,
            max_chunk: None,
            layer_device: &vec![0; n],
            on_host,
            kinds: &kinds,
            ff: FeedForward {
                length: 6144,
                expert_length: 768,
                shared_expert_length: 0,
            },
        };
        host_ffn_peak(m, &kv, &g, &sh)
    }

    const ALL: FfnProjections = FfnProjections {
        gate: true,
        up: true,
        down: true,
        fused: false,
    };

    /// llama.cpp b11434's host compute buffers (the placement fixtures, one RPC device).
    #[test]
    fn host_splits_equal_llama_cpp() {
        let m = qwen3_30b_a3b();
        let experts = HostFfn {
            experts: ALL,
            ..Default::default()
        };
        // --cpu-moe at 4,096 tokens: every layer's experts on the host
        assert_eq!(peak(&m, 4096, &vec![experts; 48]), 83_906_560);
        // -ot ffn_down=CPU at 4,096 tokens
        let down = HostFfn {
            experts: FfnProjections {
                down: true,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(peak(&m, 4096, &vec![down; 48]), 58_740_736);
        // -fit's plan on a 7.9 GiB device at 32,768 tokens: layer 9 with its router in host
        // memory (`ffn_(gate|up|gate_up|down).*`), the experts of layers 10-47; the 32 MiB mask
        // is freed once the device has copied it, and the expert splits reuse its space
        let mut plan = vec![HostFfn::default(); 48];
        plan[9] = HostFfn {
            router: true,
            ..experts
        };
        for l in &mut plan[10..] {
            *l = experts;
        }
        assert_eq!(peak(&m, 32_768, &plan), 88_100_864);
    }

    /// Lists shorter or longer than the model's layers (a placement over another layer count)
    /// never index out of bounds.
    #[test]
    fn uneven_lists_do_not_panic() {
        let m = qwen3_30b_a3b();
        let (kv, g) = graph(&m, 4096);
        let on_host = [HostFfn {
            experts: ALL,
            ..Default::default()
        }; 3];
        let kinds = [FfnKinds {
            experts: true,
            ..Default::default()
        }; 60];
        for devices in [&[0usize; 2][..], &[0; 60][..], &[][..]] {
            let sh = HostSplits {
                attention: &[],
                cache_here: &[],
                output: false,
                max_chunk: None,
                layer_device: devices,
                on_host: &on_host,
                kinds: &kinds,
                ff: FeedForward {
                    length: 0,
                    expert_length: 768,
                    shared_expert_length: 0,
                },
            };
            assert!(host_ffn_peak(&m, &kv, &g, &sh) > 0);
        }
    }

    /// A dense FFN beside the routed experts in one layer (some architectures have both): its
    /// projections in host memory are replayed too, never left out.
    #[test]
    fn a_dense_ffn_beside_the_experts_counts() {
        let m = qwen3_30b_a3b();
        let (kv, g) = graph(&m, 4096);
        let kinds = [FfnKinds {
            experts: true,
            dense: true,
            ..Default::default()
        }; 48];
        let peak = |on_host: &[HostFfn]| {
            host_ffn_peak(
                &m,
                &kv,
                &g,
                &HostSplits {
                    attention: &[],
                    cache_here: &[],
                    output: false,
                    max_chunk: None,
                    layer_device: &[0; 48],
                    on_host,
                    kinds: &kinds,
                    ff: FeedForward {
                        length: 16_384,
                        expert_length: 768,
                        shared_expert_length: 0,
                    },
                },
            )
        };
        let experts = HostFfn {
            experts: ALL,
            ..Default::default()
        };
        let both = HostFfn {
            dense: ALL,
            ..experts
        };
        // the dense FFN's 32 MiB intermediates (16,384 × 512 rows, f32) on top of the experts'
        assert!(peak(&[both; 48]) > peak(&[experts; 48]));
    }

    /// The scheduler's rules: a weightless op next to device work runs on the device, one
    /// between host matmuls on the host.
    #[test]
    fn weightless_ops_follow_the_scheduler() {
        let m = qwen3_30b_a3b();
        let mut on_host = vec![HostFfn::default(); 48];
        // -fit's GATE partial layer: router, gate and down in host memory, up on the device
        on_host[0] = HostFfn {
            router: true,
            experts: FfnProjections {
                gate: true,
                down: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let kinds = vec![
            FfnKinds {
                experts: true,
                ..Default::default()
            };
            48
        ];
        let sh = HostSplits {
            attention: &[],
            cache_here: &[],
            output: false,
            max_chunk: None,
            layer_device: &[0; 48],
            on_host: &on_host,
            kinds: &kinds,
            ff: FeedForward {
                length: 0,
                expert_length: 768,
                shared_expert_length: 0,
            },
        };
        let b = layer_block(&m, &sh, on_host[0], kinds[0], 512, false);
        let at = assign(&b);
        let sides: Vec<Side> = (0..b.nodes.len())
            .filter(|&i| !b.nodes[i].view)
            .map(|i| at[i])
            .collect();
        use Side::{Device as D, Host as H};
        // input, logits, probs, argsort, weights, sum, clamp, norm, gate, up, GLU, down,
        // weighted, summed, l_out, next norm
        assert_eq!(
            sides,
            [D, H, H, H, H, H, H, H, H, D, D, H, D, D, D, D],
            "{b:?}",
            b = b.nodes.len()
        );
    }

    /// A dense FFN the device cannot run (its activations over the device's tensor limit): the
    /// host runs the projections and the GLU, and each device weight is copied in by a split of
    /// its own, so at most one weight copy is live — llama.cpp's trace on llvmpipe (Gemma 3 27B,
    /// ub 2048): gate weight and rows in, gate out, the weight freed; up's weight in, up out;
    /// the GLU; down's weight in, the output, then the device takes it.
    #[test]
    fn a_dense_ffn_over_the_limit_copies_one_weight_at_a_time() {
        let mut m = crate::core::model::qwen3_32b_figures();
        m.layers = 2;
        let m = ModelShape::from_figures("dense", &m, Provenance::Spec).unwrap();
        let (kv, g) = graph(&m, 4096);
        let ff = FeedForward {
            length: 25_600,
            expert_length: 0,
            shared_expert_length: 0,
        };
        let kinds = [FfnKinds {
            dense: true,
            ..Default::default()
        }; 2];
        let w = 40 << 20;
        let copied = HostFfn {
            dense_copied: Some([w, w, w]),
            ..Default::default()
        };
        fn sh<'a>(
            on_host: &'a [HostFfn],
            kinds: &'a [FfnKinds],
            ff: FeedForward,
        ) -> HostSplits<'a> {
            HostSplits {
                attention: &[],
                cache_here: &[],
                output: false,
                max_chunk: None,
                layer_device: &[0; 2],
                on_host,
                kinds,
                ff,
            }
        }
        let on_host = [copied; 2];
        let splits = sh(&on_host, &kinds, ff);
        let b = layer_block(&m, &splits, copied, kinds[0], 512, false);
        let at = assign(&b);
        let sides: Vec<Side> = (0..b.nodes.len())
            .filter(|&i| !b.nodes[i].view && !b.nodes[i].leaf)
            .map(|i| at[i])
            .collect();
        use Side::{Device as D, Host as H};
        // input, gate, up, GLU, down, l_out, next norm
        assert_eq!(sides, [D, H, H, H, H, D, D]);
        // one weight copy at a time: weights larger by Δ raise the peak by at most Δ (held at
        // once, the three copies raise it by about 2Δ here: 244 → 314 MiB for Δ = 40 MiB)
        let hidden = 25_600 * 512 * 4;
        let peak = host_ffn_peak(&m, &kv, &g, &splits);
        assert!(peak >= 3 * hidden, "{peak}: the GLU beside gate and up");
        let heavier = HostFfn {
            dense_copied: Some([2 * w, 2 * w, 2 * w]),
            ..Default::default()
        };
        let heavier_peak = host_ffn_peak(&m, &kv, &g, &sh(&[heavier; 2], &kinds, ff));
        assert!(
            heavier_peak <= peak + w,
            "{peak} → {heavier_peak}: more than one weight copy live"
        );
        // with the weights in host memory instead (a host layer), no copies at all
        let own = HostFfn {
            dense: ALL,
            ..Default::default()
        };
        let own_peak = host_ffn_peak(&m, &kv, &g, &sh(&[own; 2], &kinds, ff));
        assert!(own_peak + w <= peak, "{own_peak} {peak}");
    }
}
