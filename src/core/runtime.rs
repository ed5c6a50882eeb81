//! The runtime's own buffers beside the weights and the cache, as llama.cpp reserves them on
//! the CPU backend: the output buffer (`llama_context::output_reserve`) and the compute buffer
//! (`graph_reserve` of the worst-case prompt graph, laid out by ggml-alloc's dynamic allocator).
//! Pure: no I/O, no other top-level module.
//!
//! The compute buffer is not a formula in llama.cpp: it is the high-water mark of ggml-alloc
//! placing every intermediate tensor of the reserved graph (n_ubatch rows) into one buffer,
//! reusing a parent's memory in place where the op allows it and freeing a tensor after its
//! last consumer. This module replays that allocator (best fit among the free blocks, else
//! the end block; 32-byte alignment; the same merge rules) over the tensors a decoder graph
//! creates in llama.cpp's node order: the inputs (token ids, positions, KQ masks, cache row
//! indices, output ids), per layer the norm, K, V, Q projections, attention (flash: one
//! output; without: KQ scores n_kv × n_ubatch × heads, softmax in place, KQV, the contiguous
//! copy), the output projection, the FFN or MoE intermediates (and SSM intermediates on
//! recurrent layers), and the logits n_vocab × n_outputs in f32. Beside that skeleton it
//! replays deepseek2's absorbed MLA attention, the DSA lightning indexer (scores n_kv ×
//! n_ubatch f32, top-k, the combined mask), attention within the batch for encoders,
//! embedding and diffusion models (no cache, no logits for embedding models), T5's relative
//! position bias, and grok without flash attention as llama.cpp forces it. Architectures
//! whose graph it does not replay are bounded from above or called estimates (the `compute`
//! column of [`super::arch`]) so that
//! the figure errs high, never low. GPU kernels' own scratch is not modelled.
//!
//! With several backends llama.cpp's scheduler splits the graph and each backend gets its own
//! buffer; [`segment_peak`] replays one device's share (`core::placement` calls it): its layers
//! only, the split inputs it copies in (held four times with pipeline parallelism, else copied
//! by the split that first uses them), the expert outputs of host-run experts copied back,
//! and the output stage as the architecture ends its graph ([`super::arch::Tail`]);
//! [`host_ffn_peak`] replays the host's share when it runs only feed-forward work of device
//! layers (its graph inputs, then per layer the block's nodes the scheduler gives the host).

use super::kv::KvCache;
use super::model::{Attention, LayerShape, ModelShape, Ssm};

mod host_splits;
pub use host_splits::{FfnKinds, HostFfn, HostSplits, host_ffn_peak};

pub use super::arch::ComputeStatus;
use super::arch::{Ffn, Graph, Tail};

/// The replay's status for `arch` (the `compute` column of `core::arch`; an architecture the
/// table does not know is replayed as a plain decoder and called exact).
pub fn compute_status(arch: &str) -> ComputeStatus {
    super::arch::lookup(arch).map_or(ComputeStatus::Exact, |a| a.compute)
}

/// What is bounded rather than replayed for `arch`, when its compute buffer is an upper bound
/// (the estimate may be higher than llama.cpp reserves).
pub fn compute_upper_bound(arch: &str) -> Option<&'static str> {
    match compute_status(arch) {
        ComputeStatus::UpperBound(why) => Some(why),
        ComputeStatus::Exact | ComputeStatus::Estimate { .. } | ComputeStatus::Unchecked(_) => None,
    }
}

/// The graph quirks of `arch` (all false for an architecture the table does not know).
fn graph_of(arch: &str) -> Graph {
    super::arch::lookup(arch).map_or(
        Graph {
            local_attention: false,
            ffn: Ffn::Gated,
            embedding_output: false,
            flash_attn_off: false,
            tail: Tail::Plain,
        },
        |a| a.graph,
    )
}

/// n_embd-wide f32 rows per token the upper bound of a recurrent block without SSM figures
/// holds at once (RWKV's time mix keeps about a dozen).
const RECURRENT_BLOCK_ROWS: u64 = 16;

/// Feed-forward widths the compute graph needs (GGUF `feed_forward_length`,
/// `expert_feed_forward_length`, `expert_shared_feed_forward_length`; or the tensor shapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedForward {
    /// Dense FFN width n_ff (largest over layers); 0 = unknown.
    pub length: u64,
    /// Width of one routed expert n_ff_exp; 0 = unknown (the dense width is used).
    pub expert_length: u64,
    /// Width of the shared expert(s); 0 = none or unknown.
    pub shared_expert_length: u64,
}

/// The runtime buffers of one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeBuffers {
    /// Host output buffer: n_vocab × n_seq_max × 4 bytes of f32 logits
    /// (`llama_context::output_reserve(n_seq_max)`).
    pub output_bytes: u64,
    /// Compute buffer of the reserved prompt graph (CPU backend, ggml-alloc high-water mark).
    pub compute_bytes: u64,
    /// Rows of the reserved graph: min(n_ctx, n_ubatch).
    pub graph_tokens: u64,
    /// The FFN width was not known and was estimated (errs high).
    pub ffn_estimated: bool,
}

/// The runtime settings the buffers depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphSettings {
    /// n_ubatch.
    pub ubatch: u64,
    /// n_seq_max.
    pub sequences: u64,
    /// Flash attention.
    pub flash_attn: bool,
    /// One KV stream for all sequences.
    pub kv_unified: bool,
}

/// llama.cpp's output buffer for a generative model: n_vocab × max(n_outputs, n_seq) f32 with
/// n_outputs = n_seq_max at context creation.
pub fn output_bytes(model: &ModelShape, sequences: u64) -> u64 {
    // T5 keeps the encoder's embeddings beside the logits (n_embd more floats per output).
    let per_output = if model.architecture == "t5" {
        model.vocab_size.saturating_add(model.embedding_length)
    } else {
        model.vocab_size
    };
    per_output
        .saturating_mul(sequences.max(1))
        .saturating_mul(4)
}

/// ggml's CPU tensor alignment.
const ALIGN: u64 = 32;

fn align(n: u64) -> u64 {
    n.div_ceil(ALIGN).saturating_mul(ALIGN)
}

/// ggml-alloc's dynamic tensor allocator (`ggml_dyn_tallocr`, b11434). A buffer is a list of
/// chunks, each at most the buffer type's maximum size (`ggml_backend_buft_get_max_size`: none
/// on the CPU, CUDA or RPC; Vulkan's 1 GiB suballocation block, for its device and its pinned
/// host buffer): best fit among the free blocks before each chunk's last (a later chunk's fit
/// taking the place of an earlier one's, as ggml-alloc's loop does), else the last block of the
/// chunk that wastes least (or grows least), else a new chunk as large as the tensor needs. The
/// buffer is the sum of the chunks' high-water marks. Frees merge with their neighbours.
/// Addresses carry the chunk above [`CHUNK_SHIFT`].
#[derive(Debug)]
struct DynAlloc {
    chunks: Vec<Chunk>,
    /// A new chunk's size (at least the tensor that opens it).
    max_chunk: u64,
    /// The buffer's size: the chunks' high-water marks summed.
    max: u64,
}

#[derive(Debug)]
struct Chunk {
    /// Free blocks (offset, size), sorted by offset; the last one reaches to the chunk's end.
    blocks: Vec<(u64, u64)>,
    /// High-water mark.
    max: u64,
}

/// A chunk's index sits above this bit of an address.
const CHUNK_SHIFT: u32 = 48;

/// No chunk limit (the CPU's buffer type and most devices').
const UNCHUNKED: u64 = u64::MAX / 4;

impl DynAlloc {
    fn new() -> DynAlloc {
        DynAlloc::chunked(UNCHUNKED)
    }

    fn chunked(max_chunk: u64) -> DynAlloc {
        DynAlloc {
            chunks: vec![Chunk {
                blocks: vec![(0, max_chunk.max(1))],
                max: 0,
            }],
            max_chunk: max_chunk.max(1),
            max: 0,
        }
    }

    fn alloc(&mut self, size: u64) -> u64 {
        let size = align(size);
        let mut best: Option<(usize, usize)> = None;
        for (c, ch) in self.chunks.iter().enumerate() {
            let mut best_size = u64::MAX;
            let n = ch.blocks.len();
            for (i, &(_, s)) in ch.blocks.iter().enumerate().take(n.saturating_sub(1)) {
                if s >= size && s <= best_size {
                    best = Some((c, i));
                    best_size = s;
                }
            }
        }
        if best.is_none() {
            // the last blocks: the one whose chunk then wastes least, else grows least
            let mut best_reuse = i128::MIN;
            for (c, ch) in self.chunks.iter().enumerate() {
                if let Some(&(off, s)) = ch.blocks.last() {
                    let reuse = i128::from(ch.max) - i128::from(off) - i128::from(size);
                    let better_reuse = best_reuse < 0 && reuse > best_reuse;
                    let better_fit = reuse >= 0 && reuse < best_reuse;
                    if s >= size && (better_reuse || better_fit) {
                        best = Some((c, ch.blocks.len() - 1));
                        best_reuse = reuse;
                    }
                }
            }
        }
        let (c, i) = best.unwrap_or_else(|| {
            self.chunks.push(Chunk {
                blocks: vec![(0, size.max(self.max_chunk))],
                max: 0,
            });
            (self.chunks.len() - 1, 0)
        });
        let ch = &mut self.chunks[c];
        let (off, s) = ch.blocks[i];
        if s == size {
            ch.blocks.remove(i);
        } else {
            ch.blocks[i] = (off + size, s - size);
        }
        if off + size > ch.max {
            self.max += off + size - ch.max;
            ch.max = off + size;
        }
        ((c as u64) << CHUNK_SHIFT) | off
    }

    fn free(&mut self, addr: u64, size: u64) {
        let size = align(size);
        let c = (addr >> CHUNK_SHIFT) as usize;
        let off = addr & ((1u64 << CHUNK_SHIFT) - 1);
        let Some(ch) = self.chunks.get_mut(c) else {
            return;
        };
        let blocks = &mut ch.blocks;
        for i in 0..blocks.len() {
            let (bo, bs) = blocks[i];
            if bo + bs == off {
                blocks[i].1 += size;
                if i + 1 < blocks.len() {
                    let (no, ns) = blocks[i + 1];
                    if blocks[i].0 + blocks[i].1 == no {
                        blocks[i].1 += ns;
                        blocks.remove(i + 1);
                    }
                }
                return;
            }
            if off + size == bo {
                blocks[i] = (off, bs + size);
                if i > 0 {
                    let (po, ps) = blocks[i - 1];
                    if po + ps == off {
                        blocks[i - 1].1 += blocks[i].1;
                        blocks.remove(i);
                    }
                }
                return;
            }
        }
        let pos = blocks.iter().position(|(o, _)| *o > off);
        match pos {
            Some(p) => blocks.insert(p, (off, size)),
            None => blocks.push((off, size)),
        }
    }
}

/// A tensor live in the replay: (offset, bytes).
#[derive(Debug, Clone, Copy)]
struct Live(u64, u64);

struct Replay {
    a: DynAlloc,
    /// Replaying one device's split ([`Segment`]), and how its inputs are held.
    mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The whole graph on one backend.
    Single,
    /// One device with pipeline parallelism: the split inputs' copies are held in the
    /// buffer's prefix, never allocated or freed among the nodes.
    Held,
    /// One device without it: the split inputs are copied in at the split's start and freed
    /// after their last use, like any node.
    Copied,
}

/// A tensor held outside the replayed nodes (a graph input's copy on a device, or a tensor of
/// another backend).
const HELD: Live = Live(u64::MAX, 0);

impl Replay {
    fn chunked(max_chunk: Option<u64>) -> Replay {
        Replay {
            a: max_chunk.map_or_else(DynAlloc::new, DynAlloc::chunked),
            mode: Mode::Single,
        }
    }
    fn alloc(&mut self, bytes: u64) -> Live {
        Live(self.a.alloc(bytes), bytes)
    }
    /// A graph or split input a device copies in (held in the buffer's prefix with pipeline
    /// parallelism: [`Mode::Held`]).
    fn input(&mut self, bytes: u64) -> Live {
        if self.mode == Mode::Held {
            HELD
        } else {
            self.alloc(bytes)
        }
    }
    /// A graph input only the host uses (token ids, the embeddings input).
    fn host_input(&mut self, bytes: u64) -> Live {
        if self.mode == Mode::Single {
            self.alloc(bytes)
        } else {
            HELD
        }
    }
    /// Free `t` now when `now` (it is then [`HELD`]), else keep it.
    fn free_if(&mut self, t: Live, now: bool) -> Live {
        if now {
            self.free(t);
            HELD
        } else {
            t
        }
    }
    fn free(&mut self, t: Live) {
        if t.0 != HELD.0 {
            self.a.free(t.0, t.1);
        }
    }
}

/// One device's share of the graph (llama.cpp's scheduler over several backends), replayed
/// node by node with ggml-alloc over its layers only: with pipeline parallelism (several
/// devices, every layer on them) every split input is copied in [`Segment::held`] bytes that
/// are never freed and are allocated before any node; without it, the inputs are copied in at
/// the split's start and freed after their last use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The repeating layers the device runs.
    pub layers: std::ops::Range<usize>,
    /// The device runs the input stage (the first device: the mixed embeddings are scattered
    /// into a copy of the token rows there).
    pub first: bool,
    /// The device runs the output layer (norm and logits).
    pub output: bool,
    /// With pipeline parallelism: bytes of the split inputs' copies held in the buffer's
    /// prefix.
    pub held: Option<u64>,
    /// Per layer: its routed experts run on another backend (their weights in host memory:
    /// `--cpu-moe`, `--n-cpu-moe`). The device copies the normed rows and chosen experts out
    /// and the k expert outputs back in, weights and sums them; when the layer before its first
    /// is such a layer, the device runs that layer's tail (its residual and k outputs copied
    /// in), and its own last such layer ends at the router.
    pub experts_elsewhere: Vec<bool>,
    /// Per layer: its whole feed-forward block runs on another backend — a MoE block (router,
    /// routed and shared experts: a partial layer of `-fit` with `ffn_(gate|up|gate_up|down).*`
    /// in host memory), or a dense FFN whose activations are over the device's tensor limit
    /// ([`ffn_tensor_max`]): the device copies the normed rows out and the block's output back
    /// in.
    pub ffn_elsewhere: Vec<bool>,
    /// The cache is in host memory (`-nkvo`): the host writes K and V into it, and for the
    /// attention the device copies in the layer's whole cached K and V (and the mask, at its
    /// first use); the row indices stay on the host.
    pub kv_elsewhere: bool,
    /// Per layer: its weights in host memory whose ops the device runs (op offload, see
    /// [`OffloadedWeights`]): every weight of a host layer, or some of a device layer's (its
    /// routed experts under `--cpu-moe`).
    pub offloaded: Vec<Option<OffloadedWeights>>,
    /// The first layers are host layers (their cache in host memory too; `-ngl` below the
    /// layer count).
    pub host_prefix: usize,
    /// Per layer: the device cannot run its attention (a tensor of it over the device's limit:
    /// Vulkan's `maxStorageBufferRange` without 64-bit indexing refuses the op), so the host
    /// runs it: the device writes K and V into its cache, Q goes to the host, the attention's
    /// output comes back; the device takes no mask of a cache kind all of whose layers are so.
    pub attn_elsewhere: Vec<bool>,
    /// The buffer type's largest chunk (Vulkan's 1 GiB suballocation block); None: no limit.
    pub max_chunk: Option<u64>,
    /// The layer before its first runs on the host (its weights in host memory, no op
    /// offload): the host hands over that layer's FFN output and residual, and the device
    /// adds them (the scheduler gives the weightless add and norm to the device).
    pub after_host: bool,
}

impl Segment {
    /// A later device's run of `layers` with its inputs copied in, no output stage, nothing of
    /// its layers elsewhere and no chunk limit: the fields set from here.
    pub fn over(layers: std::ops::Range<usize>) -> Segment {
        Segment {
            layers,
            first: false,
            output: false,
            held: None,
            experts_elsewhere: Vec::new(),
            ffn_elsewhere: Vec::new(),
            kv_elsewhere: false,
            offloaded: Vec::new(),
            host_prefix: 0,
            attn_elsewhere: Vec::new(),
            max_chunk: None,
            after_host: false,
        }
    }
}

/// A layer's weights in host memory (a host layer of `-ngl`, or a device layer's experts under
/// `--cpu-moe`) while a device runs their ops: op offload (`ggml_backend_sched` with a backend whose `offload_op` takes a batch of at
/// least 32 rows: CUDA, Vulkan, Metal) moves every op with a host weight to the first device.
/// Each weight starts a new split (so the previous copies' memory is reused) and is copied
/// into the device's buffer at its start, freed after its op; the layer's cache stays in host
/// memory, so the host writes K and V into it and the device copies the cached K and V (and
/// the mask, at its first use) in for the attention. The bytes of each weight copied in as
/// allocated (`ggml_nbytes`; 0: not in host memory). Replayed for layers of plain attention and
/// a gated dense FFN or routed experts without a shared expert (checked against ggml-alloc's
/// trace of llama.cpp's Vulkan device on llvmpipe: the Llama-3.1-8B shape at `-ngl 0` and
/// `-ngl 20`, the Qwen3-30B-A3B shape under `--cpu-moe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OffloadedWeights {
    pub attn_norm: u64,
    pub q: u64,
    pub q_norm: u64,
    pub k: u64,
    pub k_norm: u64,
    pub v: u64,
    pub o: u64,
    /// A norm after the attention's output projection (Gemma's `post_attention_norm`).
    pub post_attn_norm: u64,
    pub ffn_norm: u64,
    pub gate: u64,
    pub up: u64,
    pub down: u64,
    /// A norm after the FFN (Gemma's `post_ffw_norm`).
    pub post_ffn_norm: u64,
    /// The router (`ffn_gate_inp`).
    pub router: u64,
    pub gate_exps: u64,
    pub up_exps: u64,
    pub down_exps: u64,
}

/// Whether [`segment_peak`] follows op offload's splits ([`OffloadedWeights`]) for `model`: a
/// decoder of [`segment_replayable`]'s with plain attention and a gated dense FFN or routed
/// experts without a shared expert (no latent attention). The placement also asks that every
/// weight in host memory be one [`OffloadedWeights`] names. The host's attention
/// ([`HostSplits::attention`]) and a device without it ([`Segment::attn_elsewhere`]) ask the
/// same.
pub fn offload_replayable(model: &ModelShape) -> bool {
    let quirks = graph_of(&model.architecture);
    segment_replayable(model)
        && model.moe.is_none_or(|m| m.shared_experts == 0)
        && model.mla.is_none()
        && quirks.ffn == Ffn::Gated
        && !quirks.local_attention
        && !quirks.embedding_output
}

/// The largest tensor of any layer's attention ops in the reserved prompt graph (bytes): the
/// cached K and V views and the mask, and the KQ scores (f32, heads × cells × rows) without
/// flash attention. A device whose tensor limit is below it cannot run the attention
/// (ggml-vulkan's `supports_op` refuses an op with a source or result over
/// `maxStorageBufferRange`), so llama.cpp runs it on the host.
pub fn attention_tensor_max(model: &ModelShape, kv: &KvCache, g: &GraphSettings) -> u64 {
    (0..model.layers.len())
        .map(|il| attention_tensor_of(model, kv, g, il))
        .max()
        .unwrap_or(0)
}

/// [`attention_tensor_max`] for one layer (0 for a layer without attention): a sliding-window
/// layer's scores span its window, a full layer's the whole context, so a device may run the
/// one and leave the other to the host.
pub fn attention_tensor_of(model: &ModelShape, kv: &KvCache, g: &GraphSettings, il: usize) -> u64 {
    let Some(l) = model
        .layers
        .get(il)
        .filter(|l| l.attention != Attention::None)
    else {
        return 0;
    };
    let t = kv.allocated_context.min(g.ubatch).max(1);
    let n_kv = n_kv_of(kv, il, g, None);
    let hq = l.head_count as u64;
    let cache = kv.per_layer.get(il).map_or(0, |c| c.allocated_bytes);
    let mask = n_kv.saturating_mul(t) * if g.flash_attn { 2 } else { 4 };
    let kq = if g.flash_attn {
        0
    } else {
        n_kv.saturating_mul(t).saturating_mul(hq) * 4
    };
    (cache / 2).max(mask).max(kq)
}

/// The largest activation of a dense FFN layer's ops in the reserved prompt graph (bytes): the
/// gate and up projections' outputs and their GLU (f32, width × rows). A device whose tensor
/// limit is below it cannot run the FFN (ggml-vulkan's `supports_op`), so llama.cpp runs it on
/// the host, copying the device's FFN weights in ([`HostFfn::dense_copied`]). Which layers
/// have a dense FFN is the tensor list's to say (the placement's); routed experts' activations
/// over a limit are not modelled.
pub fn ffn_tensor_max(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
) -> u64 {
    let t = kv.allocated_context.min(g.ubatch).max(1);
    // (a fused gate-and-up projection's width is already `ffn_up`'s, twice n_ff)
    dense_ff_width(model, ff)
        .saturating_mul(t)
        .saturating_mul(4)
}

/// The model's MoE layers have shared experts (a width from the file, or a count).
pub fn has_shared_experts(model: &ModelShape, ff: &FeedForward) -> bool {
    ff.shared_expert_length > 0 || model.moe.is_some_and(|m| m.shared_experts > 0)
}

/// The architecture keeps the last hidden state as a graph output (`core::arch::Tail`), so it
/// stays live beside the logits.
pub fn keeps_last_hidden(model: &ModelShape) -> bool {
    graph_of(&model.architecture).tail != Tail::Plain
}

/// Whether [`segment_peak`] follows llama.cpp's splits for `model`: as
/// [`host_splits_replayable`], and without recurrent layers other than gated delta nets
/// (replayed node by node, [`delta_net_block`]; the other recurrent blocks are bounds, which
/// a device's split would not follow).
pub fn segment_replayable(model: &ModelShape) -> bool {
    host_splits_replayable(model)
        && (gated_delta_net(&model.architecture) || !model.layers.iter().any(|l| l.recurrent))
}

/// Whether [`host_ffn_peak`] follows llama.cpp's host splits for `model`: a decoder whose
/// graph the replay follows exactly, without inputs or stages that a split moves elsewhere
/// (per-layer embeddings, encoders, indexer leafs); recurrent layers run on their devices and
/// only their feed-forward blocks matter to the host.
pub fn host_splits_replayable(model: &ModelShape) -> bool {
    let arch = model.architecture.as_str();
    let quirks = graph_of(arch);
    compute_status(arch) == ComputeStatus::Exact
        && !quirks.local_attention
        && !quirks.embedding_output
        && !quirks.flash_attn_off
        && !matches!(
            arch,
            "gemma3n" | "t5" | "t5encoder" | "minimax-01" | "minimax-m3" | "chameleon"
        )
        && !arch.starts_with("rwkv")
        && !model.layers.iter().any(|l| l.indexer_key_length > 0)
}

/// One device's compute buffer: its split inputs (held in the prefix, or copied in and freed
/// after their last use), then its layers' nodes (and the output's, on the output device) as
/// ggml-alloc places them.
pub fn segment_peak(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
    seg: &Segment,
) -> u64 {
    let t = kv.allocated_context.min(g.ubatch).max(1);
    replay(model, ff, kv, g, t, t, false, Some(seg))
}

/// One backend's share of RWKV-7's graph under a layer split ([`Rwkv7Share`]); None for other
/// architectures or a file without RWKV-7's widths.
pub fn rwkv7_share(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
    share: &Rwkv7Share,
) -> Option<u64> {
    let t = kv.allocated_context.min(g.ubatch).max(1);
    rwkv7_share_peak(model, ff, g, t, t, share)
}

/// RWKV-7's graph inputs with the token rows and the mixed rows gathered
/// ([`rwkv7_inputs`]).
struct Rwkv7Inputs {
    mixed_slots: Live,
    mixed_embd: Live,
    s_copy: Live,
    out_ids: Live,
    embd: Live,
    gathered: Live,
}

/// RWKV-7's graph inputs on the backend that holds them (token ids, the embeddings input, the
/// mixed ids, slots and rows, the state copy indices, the output ids), then the token rows and
/// the mixed rows gathered.
fn rwkv7_inputs(r: &mut Replay, e: u64, t: u64, seqs: u64, outputs: u64) -> Rwkv7Inputs {
    let tokens = r.alloc(t * 4);
    let _inp_embd = r.alloc(e);
    let mixed_tokens = r.alloc(t * 4);
    let mixed_slots = r.alloc(t * 8);
    let mixed_embd = r.alloc(e);
    let s_copy = r.alloc(seqs * 4);
    let out_ids = r.alloc(outputs * 4);
    let embd = r.alloc(e);
    r.free(tokens);
    let gathered = r.alloc(e);
    r.free(mixed_tokens);
    Rwkv7Inputs {
        mixed_slots,
        mixed_embd,
        s_copy,
        out_ids,
        embd,
        gathered,
    }
}

/// RWKV-7's time-mix tensors up to the value ([`rwkv7_projections`]).
struct Rwkv7Mix {
    lerps: Live,
    recept: Live,
    w: Live,
    k: Live,
    a: Live,
    k_new: Live,
    v: Live,
}

/// RWKV-7's time-mix projections: the previous rows (shift state + this ubatch's) minus the
/// normed rows in place, repeated for the six lerps (scaled and added in place); the
/// receptance, the decay, key and in-context-rate projections (their low-rank inner rows);
/// k + a·(k·k_a) − k·k_a, whose sum lands in the product's tensor; the value. `shift_used`: the
/// shift rows last used by the previous rows, freed after them.
fn rwkv7_projections(
    r: &mut Replay,
    e: u64,
    [rw, ra]: [u64; 2],
    t: u64,
    shift_used: Option<Live>,
) -> Rwkv7Mix {
    let f = 4u64;
    let x_prev = r.alloc(e);
    if let Some(x) = shift_used {
        r.free(x);
    }
    let lerps = r.alloc(6 * e);
    r.free(x_prev);
    let recept = r.alloc(e);
    let w1 = r.alloc(rw * t * f);
    let w = r.alloc(e);
    r.free(w1);
    let k = r.alloc(e);
    let a1 = r.alloc(ra * t * f);
    let a = r.alloc(e);
    r.free(a1);
    let ka = r.alloc(e);
    let k_new = r.alloc(e);
    r.free(ka);
    let v = r.alloc(e);
    Rwkv7Mix {
        lerps,
        recept,
        w,
        k,
        a,
        k_new,
        v,
    }
}

/// RWKV-7's value mix past the first layer over `diff` (the first layer's value minus this
/// one's): the low-rank gate's inner rows and its output, then the difference freed.
fn rwkv7_value_mix(r: &mut Replay, e: u64, rv: u64, t: u64, diff: Live) {
    let v1 = r.alloc(rv * t * 4);
    let v2 = r.alloc(e);
    r.free(v1);
    r.free(v2);
    r.free(diff);
}

/// RWKV-7's bonus term — (k·r·r_k) summed per head, times v, added in place into `cur` (the
/// group-normed output) — then the gate (its sigmoid in place, multiplied in place) and the
/// output projection, which it returns; `v`: the value, freed after the bonus unless it is the
/// first layer's (kept).
fn rwkv7_bonus_and_output(
    r: &mut Replay,
    e: u64,
    [heads, rg]: [u64; 2],
    t: u64,
    m: Rwkv7Mix,
    cur: Live,
    free_v: bool,
) -> Live {
    let f = 4u64;
    let krk = r.alloc(e);
    r.free(m.k_new);
    r.free(m.recept);
    let rk = r.alloc(heads * t * f);
    r.free(krk);
    let vrk = r.alloc(e);
    if free_v {
        r.free(m.v);
    }
    r.free(rk);
    r.free(vrk);
    let g1 = r.alloc(rg * t * f);
    r.free(m.lerps);
    let g2 = r.alloc(e);
    r.free(g1);
    r.free(g2);
    let out = r.alloc(e);
    r.free(cur);
    out
}

/// The host's compute buffer for RWKV-7 when every layer is offloaded but some layers' weights
/// are in host memory (`-ot "blk\.1\.=CPU"`) and no op offload takes them to a device: per
/// such layer the host runs its weight ops between the device's (llama.cpp pins each norm to
/// its layer's device when every layer is offloaded; the device gathers the state rows and runs
/// the L2 norm, the WKV and the group norm). `host_layer[il]`: layer il's weights are in host
/// memory. None for other architectures, without RWKV-7's widths, or with the first layer's
/// weights in host memory (the first layer's value is then made there).
pub fn rwkv7_host_layers_peak(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
    host_layer: &[bool],
) -> Option<u64> {
    if model.architecture != "rwkv7" || host_layer.first() != Some(&false) {
        return None;
    }
    let hs = u64::from(model.keys.wkv_head_size?).max(1);
    let [rw, ra, rv, rg] = model.keys.rwkv7_lora_ranks?.map(u64::from);
    let t = kv.allocated_context.min(g.ubatch).max(1);
    let f = 4u64;
    let n = model.embedding_length;
    let e = n * t * f;
    let seqs = g.sequences.max(1);
    let n_ff = rwkv7_ffn_width(model).unwrap_or_else(|| dense_ff_width(model, ff));
    let mut r = Replay::chunked(None);
    // the input stage: every input but the output ids goes to the first device
    let i = rwkv7_inputs(&mut r, e, t, seqs, t);
    for x in [i.mixed_embd, i.gathered, i.mixed_slots, i.s_copy, i.embd] {
        r.free(x);
    }
    let last = host_layer.iter().rposition(|h| *h);
    let mut v_first = None;
    for (il, _) in host_layer.iter().enumerate().filter(|(_, h)| **h) {
        // copied in: the normed rows (weight and bias in place), the time-mix half of the
        // shift rows and, once, the first layer's value
        let att = r.alloc(e);
        let shift_half = r.alloc(n * seqs * f);
        if v_first.is_none() {
            v_first = Some(r.alloc(e));
        }
        let m = rwkv7_projections(&mut r, e, [rw, ra], t, Some(shift_half));
        // the value mix; at the last such layer the difference in place in the value's copy
        let diff = match v_first.take_if(|_| Some(il) == last) {
            Some(copy) => copy,
            None => r.alloc(e),
        };
        rwkv7_value_mix(&mut r, e, rv, t, diff);
        // k, w and a go to the device for the L2 norm and the WKV; the group-normed output and
        // the residual come back
        r.free(m.k);
        r.free(m.w);
        r.free(m.a);
        let cur = r.alloc(e);
        let residual = r.alloc(e);
        // the bonus, the gate and the output projection; the residual added in place in its
        // copy, the FFN norm (its weight and bias in place)
        let out = rwkv7_bonus_and_output(&mut r, e, [(n / hs).max(1), rg], t, m, cur, true);
        r.free(out);
        let ffn_norm = r.alloc(e);
        r.free(att);
        // the channel mix of the shifted rows the device computes
        let sx = r.alloc(e);
        r.free(ffn_norm);
        let key = r.alloc(n_ff * t * f);
        r.free(sx);
        let val = r.alloc(e);
        r.free(key);
        r.free(val);
        r.free(residual);
    }
    r.free(i.out_ids);
    Some(r.a.max)
}

/// Figures of the DSA lightning indexer of one layer.
struct DsaInputs {
    heads: u64,
    key_length: u64,
    top_k: u64,
    n_kv: u64,
    t: u64,
    mask_elem: u64,
}

/// The DSA indexer's query, weights and scores (one f32 per cached cell per row, heads summed
/// with their weights), the top-k cells per row, and the new mask unmasking them (a filled copy
/// of the KQ mask, scattered, plus the mask). Frees the compressed query and the layer's norm
/// (their last consumers); returns the new mask, which the attention consumes.
fn dsa_top_k_mask(r: &mut Replay, d: &DsaInputs, qr: Option<Live>, norm: Live) -> Live {
    let f32b = 4;
    let (t, ikd, ih) = (d.t, d.key_length, d.heads);
    let zeros = r.alloc(d.top_k * t * f32b);
    let iq = r.alloc(ih * ikd * t * f32b);
    if let Some(qr) = qr {
        r.free(qr);
    }
    let roped = r.alloc(ih * ikd * t * f32b);
    r.free(iq);
    let rot = r.alloc(ih * ikd * t * f32b);
    r.free(roped);
    let w = r.alloc(ih * t * f32b);
    r.free(norm);
    let score = r.alloc(d.n_kv.saturating_mul(t) * f32b);
    r.free(rot);
    r.free(w);
    let tk = r.alloc(d.top_k * t * 4);
    // llama.cpp places the top-k copy in the scores' hole, so the filled mask and the new
    // mask cannot both reuse it: the filled mask is placed as if the scores were still live
    // (the same high-water mark without guessing the layout).
    let tc = r.alloc(d.top_k * t * 4);
    r.free(tk);
    let fill = r.alloc(d.n_kv.saturating_mul(t) * d.mask_elem);
    r.free(score);
    r.free(tc);
    r.free(zeros);
    let m2 = r.alloc(d.n_kv.saturating_mul(t) * d.mask_elem);
    r.free(fill);
    m2
}

/// Cells of one layer's cache a single stream's KQ mask and scores span at reservation
/// (the whole allocated stream: `init_full`).
fn n_kv_of(kv: &KvCache, il: usize, g: &GraphSettings, local: Option<u64>) -> u64 {
    if let Some(t) = local {
        return t;
    }
    let cells = kv.per_layer.get(il).map_or(0, |l| l.allocated_cells);
    if g.kv_unified {
        cells
    } else {
        cells / g.sequences.max(1)
    }
}

/// Positions per token in the graph's position input: four with M-RoPE / interleaved M-RoPE
/// (llama.cpp `n_pos_per_embd`, by `llama_model_rope_type`), else one.
pub fn positions_per_token(model: &ModelShape) -> u64 {
    let always = matches!(
        model.architecture.as_str(),
        "qwen2vl"
            | "paddleocr"
            | "qwen3vl"
            | "qwen3vlmoe"
            | "qwen35"
            | "qwen35moe"
            | "clef"
            | "qwen4exp"
            | "qwen3tts"
    );
    let by_sections = matches!(
        model.architecture.as_str(),
        "glm4" | "glm4moe" | "bailingmoe3" | "hunyuan_vl"
    ) && model.keys.mrope_sections;
    if always || by_sections { 4 } else { 1 }
}

/// The figures of one gated delta-net block.
#[derive(Clone, Copy)]
struct DeltaNet<'a> {
    arch: &'a str,
    s: Ssm,
    /// Q, K, V and the gate from one projection
    /// ([`CacheKeys::fused_qkvz`](super::model::CacheKeys::fused_qkvz)).
    fused_qkvz: bool,
    /// Rows and sequences of the ubatch.
    t: u64,
    seqs: u64,
    /// One n_embd × rows f32 block.
    e: u64,
}

/// Architectures whose attention projects Q with a per-head output gate (`Qcur_full`, twice
/// Q's width) and multiplies the attention output by its sigmoid.
fn gated_q(arch: &str) -> bool {
    matches!(arch, "qwen3next" | "qwen35" | "qwen35moe")
}

/// MoE architectures whose top-k expert weights are normalised to sum to one (llama.cpp
/// `build_moe_ffn` with `norm_w`), replayed where checked against ggml-alloc's trace: the sum
/// and the normalised copy are small, but where they land moves what a split copies in.
fn moe_weights_normed(arch: &str) -> bool {
    matches!(arch, "qwen3next" | "qwen35moe" | "qwen3moe" | "qwen3vlmoe")
}

/// Architectures whose recurrent layers are llama.cpp's gated delta net
/// (`llm_build_delta_net_base`, fused `GATED_DELTA_NET`), replayed by [`delta_net_block`].
fn gated_delta_net(arch: &str) -> bool {
    matches!(arch, "qwen3next" | "qwen35" | "qwen35moe")
}

/// One gated delta-net block as llama.cpp builds it (`build_layer_attn_linear` with fused
/// `GATED_DELTA_NET`, checked against ggml-alloc's trace of Qwen3-Next): the conv states
/// gathered, the QKV projection concatenated after them, the SSM state gathered, the
/// convolution (SiLU in place), the L2-normed Q and K (Qwen3-Next repeats them to the value
/// heads), the decay and beta inputs, the fused op's output and new state, the gated RMS norm
/// (the gate's projection is the layer norm's last consumer, so `norm` is freed here), and the
/// output projection, which is returned.
fn delta_net_block(r: &mut Replay, dn: &DeltaNet, norm: &Live, s_copy: Option<Live>) -> Live {
    let DeltaNet {
        arch,
        s,
        fused_qkvz,
        t,
        seqs,
        e,
    } = *dn;
    let f32b = 4u64;
    // head_k_dim = head_v_dim = d_state (llama.cpp asserts S_k == S_v); k heads n_group,
    // v heads d_inner / d_state
    let sk = s.d_state.max(1);
    let hk = s.n_group.max(1);
    let hv = (s.d_inner / sk).max(1);
    let key_dim = sk * hk;
    let conv_dim = 2 * key_dim + s.d_inner;
    let hist = s.d_conv.saturating_sub(1);
    let conv_states = r.alloc(hist * conv_dim * seqs * f32b);
    // one projection of Q, K, V and the gate: Q and K made contiguous and concatenated, V made
    // contiguous and concatenated after them; the projection stays live for the gate
    let (qkv, qkvz) = if fused_qkvz {
        let qkvz = r.alloc((2 * key_dim + 2 * s.d_inner) * t * f32b);
        let qf = r.alloc(key_dim * t * f32b);
        let kf = r.alloc(key_dim * t * f32b);
        let qk = r.alloc(2 * key_dim * t * f32b);
        r.free(qf);
        r.free(kf);
        let vf = r.alloc(s.d_inner * t * f32b);
        let qkv = r.alloc(conv_dim * t * f32b);
        r.free(qk);
        r.free(vf);
        (qkv, Some(qkvz))
    } else {
        (r.alloc(conv_dim * t * f32b), None)
    };
    let conv_in = r.alloc(conv_dim * (t + hist * seqs) * f32b);
    r.free(conv_states);
    r.free(qkv);
    let state = r.alloc(sk * sk * hv * seqs * f32b);
    // the state copy indices' last use is the last recurrent layer's state gather
    if let Some(sc) = s_copy {
        r.free(sc);
    }
    let conv_out = r.alloc(conv_dim * t * f32b);
    r.free(conv_in);
    // the L2 norm (RMS norm, then a scale in place); Qwen3-Next repeats the k heads to the v
    // heads (Qwen3.5 leaves that to the fused op)
    let repeat = arch == "qwen3next" && hk != hv;
    let l2 = |r: &mut Replay| {
        let n = r.alloc(key_dim * t * f32b);
        if repeat {
            let rep = r.alloc(sk * hv * t * f32b);
            r.free(n);
            rep
        } else {
            n
        }
    };
    let q = l2(r);
    let k = l2(r);
    // the decay and beta rows
    let (gate, beta) = if arch == "qwen3next" {
        // one projection for both, each half made contiguous (the bias add, softplus, scale
        // and sigmoid in place)
        let ba = r.alloc(2 * hv * t * f32b);
        if fused_qkvz {
            // (the layer norm's last consumer when the gate comes from the fused projection)
            r.free(Live(norm.0, norm.1));
        }
        let a = r.alloc(hv * t * f32b);
        let b = r.alloc(hv * t * f32b);
        r.free(ba);
        (a, b)
    } else {
        // two projections; the bias add and the sigmoid on their reshaped views are new
        // tensors (softplus and the scale then in place)
        let alpha = r.alloc(hv * t * f32b);
        let a = r.alloc(hv * t * f32b);
        r.free(alpha);
        let beta = r.alloc(hv * t * f32b);
        let b = r.alloc(hv * t * f32b);
        r.free(beta);
        (a, b)
    };
    let gdn = r.alloc((sk * hv * t + sk * sk * hv * seqs) * f32b);
    r.free(q);
    r.free(k);
    r.free(conv_out);
    r.free(gate);
    r.free(beta);
    r.free(state);
    // the gated norm: RMS norm of the output (its weight in place), the gate's projection,
    // its SiLU, the product in place; then the output projection
    let o_norm = r.alloc(s.d_inner * t * f32b);
    r.free(gdn);
    let z = match qkvz {
        // the gate made contiguous out of the fused projection (its last consumer)
        Some(qkvz) => {
            let z = r.alloc(s.d_inner * t * f32b);
            r.free(qkvz);
            z
        }
        None => {
            let z = r.alloc(s.d_inner * t * f32b);
            r.free(Live(norm.0, norm.1));
            z
        }
    };
    let z_silu = r.alloc(s.d_inner * t * f32b);
    r.free(z);
    r.free(z_silu);
    let out = r.alloc(e);
    r.free(o_norm);
    out
}

/// RWKV-7's channel-mix width: the file's `feed_forward_length` (its inventory has no FFN
/// tensors by the usual names).
fn rwkv7_ffn_width(model: &ModelShape) -> Option<u64> {
    if model.architecture != "rwkv7" {
        return None;
    }
    let w = u64::from(model.keys.feed_forward.as_ref()?.max());
    (w > 0).then_some(w)
}

/// Which backend ran the layers before an RWKV-7 share ([`Rwkv7Start::After`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rwkv7Before {
    /// The host (no op offload): the device adds the residual and norms the rows itself, the
    /// host hands over the channel mix's output and its input.
    Host,
    /// Another device: it adds the residual and norms the next layer's rows (the scheduler's
    /// expansion keeps weightless ops on the device that ran the op before them) and hands over
    /// the normed rows and the residual.
    Device,
}

/// Where an RWKV-7 share begins ([`Rwkv7Share::start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rwkv7Start {
    /// It holds the graph's inputs and runs the input stage (the host, or the only backend).
    Graph,
    /// The first device: the token rows copied in (a pipeline's first device also takes the
    /// mixed rows, their slots and the state indices, and scatters the rows itself); with the
    /// state cache in host memory, each layer's shift and state rows come from the host.
    FirstDevice,
    /// A later device.
    After(Rwkv7Before),
}

/// The part of RWKV-7's graph one backend runs when the layers are split between backends:
/// its run of whole layers. At each boundary the later device gathers its first layer's
/// token-shift and state rows and computes the previous layer's channel-mix shift (from the
/// shift state and the normed rows copied in), which goes back for the channel mix; every
/// device copies the first layer's value from the backend that holds it (as ggml-alloc's
/// trace of llama.cpp's splits shows, `scripts/oracle/sched_trace.py`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rwkv7Share {
    /// The layers whose weights it holds (a later backend takes the rest).
    pub layers: std::ops::Range<usize>,
    /// Where it begins.
    pub start: Rwkv7Start,
    /// Pipeline parallelism: how many copies of each split input it holds in the buffer's
    /// prefix (0: none, each input copied in at its split and freed after its last use).
    pub held_copies: u64,
    /// The state cache is in host memory (`-nkvo`): the host gathers each layer's shift and
    /// state rows and stores them back, and the device runs each channel mix whole.
    pub state_on_host: bool,
}

/// RWKV-7's whole graph on one backend (`llm_build_rwkv7_base`), checked against ggml-alloc's
/// trace of the RWKV-7 2.9B shape; `None` for other architectures, or when the file does not
/// give the head size and the four low-rank widths. See [`rwkv7_share_peak`].
fn rwkv7_peak(
    model: &ModelShape,
    ff: &FeedForward,
    g: &GraphSettings,
    t: u64,
    outputs: u64,
) -> Option<u64> {
    // (a model without its vocabulary is the placement's per-device layer model, which keeps
    // the bound: the placement asks for each backend's share instead)
    if model.vocab_size == 0 {
        return None;
    }
    let whole = Rwkv7Share {
        layers: 0..model.layers.len(),
        start: Rwkv7Start::Graph,
        held_copies: 0,
        state_on_host: false,
    };
    rwkv7_share_peak(model, ff, g, t, outputs, &whole)
}

/// One backend's share of RWKV-7's graph ([`Rwkv7Share`]): per layer the token-shift and WKV
/// state rows gathered (the next layer's right after this layer's shift is stored), the time
/// mix — the shifted rows repeated for the six lerps, the receptance, the decay, key and
/// in-context-rate projections (their low-rank inner rows), the value and, past the first
/// layer, its residual mix (the first layer's value stays live to the end), the L2-normed key,
/// the WKV7 output with its state, the group norm, the bonus term, the gate and the output
/// projection — then the channel mix (key n_ff wide, value); the last layer keeps only the
/// output rows. `None` for other architectures, without the head size and the four low-rank
/// widths. A share of the graph's inputs without layers is the input stage (the host's
/// peak when the devices run every layer and it only gathers and stores their state rows).
fn rwkv7_share_peak(
    model: &ModelShape,
    ff: &FeedForward,
    g: &GraphSettings,
    t: u64,
    outputs: u64,
    share: &Rwkv7Share,
) -> Option<u64> {
    if model.architecture != "rwkv7" {
        return None;
    }
    let hs = u64::from(model.keys.wkv_head_size?).max(1);
    let [rw, ra, rv, rg] = model.keys.rwkv7_lora_ranks?.map(u64::from);
    let f = 4u64;
    let n = model.embedding_length;
    let (e, eo) = (n * t * f, n * outputs * f);
    let seqs = g.sequences.max(1);
    let n_layer = model.layers.len();
    let layers = share.layers.start..share.layers.end.min(n_layer);
    if layers.is_empty() && share.start != Rwkv7Start::Graph {
        return Some(0);
    }
    let nkvo = share.state_on_host;
    // it runs the output stage with the last layer
    let output = layers.end == n_layer;
    let n_ff = rwkv7_ffn_width(model).unwrap_or_else(|| dense_ff_width(model, ff));
    let shift_rows = 2 * n * seqs * f;
    let state_rows = hs * n * seqs * f;
    let mut r = Replay::chunked(None);
    let held = share.held_copies > 0;
    // the split inputs it copies in, in the splits' order: with pipeline parallelism each is
    // held several times in the buffer's prefix (and an op that would run in place in
    // a copy gets a tensor of its own), else allocated at its split and freed after its last use
    if held {
        // (the first device's: the mixed rows and the gathered rows, the slots, the state
        // indices, the token rows; a later device's: the state indices, the shift state's
        // channel-mix half, the normed rows but the last and all of them, then the three the
        // previous device hands over)
        let mut copies = match share.start {
            Rwkv7Start::Graph => return None,
            Rwkv7Start::FirstDevice => vec![e, e, t * 8, seqs * 4, e],
            Rwkv7Start::After(_) => {
                vec![
                    seqs * 4,
                    n * seqs * f,
                    n * t.saturating_sub(1) * f,
                    e,
                    e,
                    e,
                    e,
                ]
            }
        };
        if output && matches!(share.start, Rwkv7Start::After(_)) {
            copies.push(outputs * 4);
        }
        if !output {
            copies.push(e);
        }
        for b in copies {
            for _ in 0..share.held_copies {
                r.alloc(b);
            }
        }
    }
    // (a split input: held in the prefix, or copied in at its split)
    r.mode = if held { Mode::Held } else { Mode::Copied };
    // (the first layer's value, used by every later layer's value mix)
    let mut v_first = None;
    let (mut s_copy, mut out_ids, mut shift, mut state, mut inp_l, mut att) = match share.start {
        Rwkv7Start::FirstDevice if nkvo && !held => {
            // the token rows, the first layer's shift (its time-mix half) and state rows copied
            // in; the token embedding's norm
            let embd = r.alloc(e);
            let shift = r.alloc(n * seqs * f);
            let state = r.alloc(state_rows);
            let inp_l = r.alloc(e);
            r.free(embd);
            (HELD, None, shift, state, inp_l, None)
        }
        Rwkv7Start::FirstDevice => {
            // the mixed rows, the gathered rows, their slots, the state indices and the token
            // rows copied in; the mixed rows scattered into a copy of the token rows, its first
            // layer's rows gathered, the token embedding's norm
            let mixed = r.input(e);
            let gathered = r.input(e);
            let slots = r.input(t * 8);
            let s_copy = r.input(seqs * 4);
            let embd = r.input(e);
            let _copied = r.alloc(e);
            r.free(mixed);
            r.free(gathered);
            r.free(slots);
            let shift = r.alloc(shift_rows);
            let state = r.alloc(state_rows);
            // (the copied indices are freed after the device's last gather)
            let s_copy = r.free_if(s_copy, layers.len() == 1);
            let inp_l = r.alloc(e);
            r.free(embd);
            (s_copy, None, shift, state, inp_l, None)
        }
        Rwkv7Start::Graph => {
            // the inputs; the mixed rows scattered into a copy of the token rows
            let i = rwkv7_inputs(&mut r, e, t, seqs, outputs);
            let _copied = r.alloc(e);
            r.free(i.mixed_embd);
            r.free(i.gathered);
            r.free(i.mixed_slots);
            let shift = r.alloc(shift_rows);
            let state = r.alloc(state_rows);
            // the token embedding's norm (weight and bias in place)
            let inp_l = r.alloc(e);
            r.free(i.embd);
            // (the state indices: a graph input, never freed)
            (HELD, Some(i.out_ids), shift, state, inp_l, None)
        }
        Rwkv7Start::After(before) => {
            // the first split: the state copy indices, the channel-mix half of the shift state
            // and the previous layer's normed rows (all but the last row, and all) copied in;
            // this device gathers its first layer's rows, and the previous layer's shifted rows
            // (concatenated, minus the normed rows) go back
            let s_copy = r.input(seqs * 4);
            let shift_half = r.input(n * seqs * f);
            let rows_but_last = r.input(n * t.saturating_sub(1) * f);
            let normed = r.input(e);
            let shift = r.alloc(shift_rows);
            let state = r.alloc(state_rows);
            // (the copied indices are freed after the device's last gather)
            let s_copy = r.free_if(s_copy, layers.len() == 1);
            let concat = r.alloc(e);
            r.free(shift_half);
            r.free(rows_but_last);
            if held {
                let sx = r.alloc(e);
                r.free(concat);
                r.free(sx);
            } else {
                // (the difference in place in the normed rows' copy)
                r.free(concat);
                r.free(normed);
            }
            // the second split: what the previous backend hands over, the first layer's value
            // and, with the output here, the output ids
            match before {
                Rwkv7Before::Host => {
                    // the channel mix's output and its input: the residual added (in place)
                    let ffn_out = r.input(e);
                    let ffn_inp = r.input(e);
                    v_first = Some(r.input(e));
                    let ids = output.then(|| r.input(outputs * 4));
                    let l_out = if held {
                        r.alloc(e)
                    } else {
                        r.free(ffn_inp);
                        ffn_out
                    };
                    (s_copy, ids, shift, state, l_out, None)
                }
                Rwkv7Before::Device => {
                    // the next layer's normed rows (their weight and bias in place) and the
                    // residual
                    let norm = r.input(e);
                    v_first = Some(r.input(e));
                    let l_out = r.input(e);
                    let ids = output.then(|| r.input(outputs * 4));
                    (s_copy, ids, shift, state, l_out, (!held).then_some(norm))
                }
            }
        }
    };
    if layers.is_empty() {
        // the input stage alone
        return Some(r.a.max);
    }
    for il in layers.clone() {
        let last_here = il + 1 == layers.end;
        // the attention norm (weight and bias in place); a device after a device has it
        // copied in
        let att = att.take().unwrap_or_else(|| r.alloc(e));
        // (with the state in host memory, the time-mix half of the shift rows copied in)
        let shift_used = nkvo.then(|| std::mem::replace(&mut shift, HELD));
        let m = rwkv7_projections(&mut r, e, [rw, ra], t, shift_used);
        if il > 0 {
            let after = matches!(share.start, Rwkv7Start::After(_));
            let diff = match v_first.take_if(|_| last_here && after && !held) {
                // a device's copy of the first layer's value, last used here: the difference
                // in place in it
                Some(copy) => copy,
                None => {
                    let diff = r.alloc(e);
                    if il + 1 == n_layer
                        && let Some(vf) = v_first.take()
                    {
                        // the first layer's value, last used here
                        r.free(vf);
                    }
                    diff
                }
            };
            rwkv7_value_mix(&mut r, e, rv, t, diff);
        }
        // the L2-normed key (k·k_k in place in k), its negation, kk·a in place
        let kk = r.alloc(e);
        r.free(m.k);
        let neg = r.alloc(e);
        r.free(m.a);
        let wkv = r.alloc(e + state_rows);
        r.free(m.w);
        r.free(neg);
        r.free(kk);
        r.free(state);
        // the group norm, its weight into a new tensor (the bias in place)
        let ln = r.alloc(e);
        r.free(wkv);
        let cur = r.alloc(e);
        r.free(ln);
        // the bonus, the gate and the output projection (the first layer's value kept)
        if il == 0 {
            v_first = Some(m.v);
        }
        let out = rwkv7_bonus_and_output(&mut r, e, [(n / hs).max(1), rg], t, m, cur, il > 0);
        let ffn_inp =
            if il == layers.start && share.start == Rwkv7Start::After(Rwkv7Before::Device) && !held
            {
                // the residual added in place in the copied-in residual (a copy has no views)
                r.free(out);
                inp_l
            } else {
                let ffn_inp = r.alloc(e);
                r.free(out);
                r.free(inp_l);
                ffn_inp
            };
        let ffn_norm = r.alloc(e);
        // the token shift stored (the last rows of both norms, concatenated)
        let stored = r.alloc(shift_rows);
        r.free(att);
        r.free(stored);
        if last_here && !output && !nkvo {
            // the next device gathers the next layer's rows and this layer's shifted rows,
            // copied back in for the channel mix
            r.free(shift);
            let sx = r.input(e);
            r.free(ffn_norm);
            let key = r.alloc(n_ff * t * f);
            r.free(sx);
            let val = r.alloc(e);
            r.free(key);
            if share.start != Rwkv7Start::Graph {
                // a device: the residual added in place and the next layer's norm here
                r.free(ffn_inp);
                let norm = r.alloc(e);
                r.free(norm);
                r.free(val);
            } else {
                r.free(val);
                r.free(ffn_inp);
            }
            break;
        }
        let next = if nkvo {
            // from the host: this layer's channel-mix half of the shift rows, and the next
            // layer's time-mix half and state rows when it runs here
            shift = r.alloc(n * seqs * f);
            (il + 1 < layers.end).then(|| (r.alloc(n * seqs * f), r.alloc(state_rows)))
        } else {
            (il + 1 < n_layer).then(|| (r.alloc(shift_rows), r.alloc(state_rows)))
        };
        s_copy = r.free_if(s_copy, il + 2 == layers.end);
        // the channel mix
        let cm_prev = r.alloc(e);
        r.free(shift);
        inp_l = if il + 1 < n_layer {
            let sx = r.alloc(e);
            r.free(cm_prev);
            r.free(ffn_norm);
            let key = r.alloc(n_ff * t * f);
            r.free(sx);
            let val = r.alloc(e);
            r.free(key);
            r.free(ffn_inp);
            val
        } else {
            // the last layer keeps the output rows of the previous rows, the norm and the input
            let xr = r.alloc(eo);
            r.free(cm_prev);
            let fr = r.alloc(eo);
            r.free(ffn_norm);
            r.free(fr);
            let key = r.alloc(n_ff * outputs * f);
            r.free(xr);
            let val = r.alloc(eo);
            r.free(key);
            let ir = r.alloc(eo);
            r.free(ffn_inp);
            if let Some(o) = out_ids.take() {
                r.free(o);
            }
            // (the sum in place in the value)
            r.free(ir);
            val
        };
        if last_here && !output {
            // (the state rows in host memory) the residual added in place and the next
            // layer's norm here; the next device takes both
            let norm = r.alloc(e);
            r.free(norm);
            r.free(inp_l);
            break;
        }
        (shift, state) = next.unwrap_or((HELD, HELD));
    }
    if output {
        if let Some(o) = out_ids {
            r.free(o);
        }
        // the output norm (weight and bias in place) and the logits
        let norm = r.alloc(eo);
        r.free(inp_l);
        let _logits = r.alloc(model.vocab_size.saturating_mul(outputs) * f);
        r.free(norm);
    }
    Some(r.a.max)
}

/// Replay the reserved graph with `t` rows and `outputs` output rows, or one device's segment
/// of it; returns the high-water mark in bytes. The order of allocations and frees follows
/// llama.cpp's node order for a decoder layer (checked against ggml-alloc's own trace of the
/// graph).
#[allow(clippy::too_many_arguments)]
fn replay(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
    t: u64,
    outputs: u64,
    experts_elsewhere: bool,
    seg: Option<&Segment>,
) -> u64 {
    if seg.is_none()
        && !experts_elsewhere
        && let Some(peak) = rwkv7_peak(model, ff, g, t, outputs)
    {
        return peak;
    }
    let f32b = 4u64;
    let e = model
        .embedding_length
        .saturating_mul(t)
        .saturating_mul(f32b);
    let e_out = model
        .embedding_length
        .saturating_mul(outputs)
        .saturating_mul(f32b);
    let mask_elem = if g.flash_attn { 2 } else { 4 };
    // Attention within the batch (no cache): n_kv is the batch's rows.
    let arch = model.architecture.as_str();
    let quirks = graph_of(arch);
    let local = quirks.local_attention.then_some(t);
    let logits = !quirks.embedding_output;
    // T5's attention carries a position bias (llama.cpp then runs it without flash attention).
    let kq_bias = matches!(arch, "t5" | "t5encoder");
    // The first op on the reshaped Q and K (RoPE, or a per-head norm) cannot run in place on
    // a view of the projection, so each gets a new tensor and the projection is freed.
    let qk_norm = true;
    let mut r = Replay::chunked(seg.and_then(|sg| sg.max_chunk));
    if let Some(sg) = seg {
        r.mode = Mode::Copied;
        if let Some(held) = sg.held {
            // the split inputs' copies, allocated first (as leafs) and never freed
            r.mode = Mode::Held;
            let _held = r.alloc(held);
        }
    }
    let first_device = seg.is_none_or(|sg| sg.first);
    // op offload: the layer's weights are copied in one split at a time (`OffloadedWeights`),
    // and each split copies in the graph inputs it is the first to use
    let offl = |il: usize| seg.and_then(|sg| sg.offloaded.get(il).copied().flatten());
    let hostl = |il: usize| seg.is_some_and(|sg| il < sg.host_prefix);
    let lazy = seg.is_some_and(|sg| sg.host_prefix > 0);
    // the bytes of one weight a layer's op copies in
    let cp = |w: Option<OffloadedWeights>, f: fn(&OffloadedWeights) -> u64| {
        w.as_ref().map(f).filter(|b| *b > 0)
    };
    let elsewhere = |il: usize| {
        experts_elsewhere
            || seg.is_some_and(|sg| sg.experts_elsewhere.get(il).copied().unwrap_or(false))
    };
    let ffn_away =
        |il: usize| seg.is_some_and(|sg| sg.ffn_elsewhere.get(il).copied().unwrap_or(false));
    // A later device after a layer whose experts ran elsewhere runs that layer's tail: the k
    // expert outputs, their weights and the layer's residual are its first split's inputs
    // (copied in before the graph's own inputs, in the order the tail uses them).
    // (with a shared expert the layer's device runs it, and the tail stays there)
    let shared_experts = has_shared_experts(model, ff);
    let tail_in = seg
        .filter(|sg| !sg.first && sg.layers.start > 0 && elsewhere(sg.layers.start - 1))
        .filter(|_| !shared_experts)
        .and(model.moe)
        .map(|moe| {
            let k = moe.experts_used as u64;
            let outs = r.input(model.embedding_length.saturating_mul(k).saturating_mul(t) * f32b);
            let w = r.input(k * t * f32b);
            let resid = r.input(e);
            (outs, w, resid)
        });
    // A later device after a host layer (no op offload) takes that layer's FFN output and its
    // residual: the host hands them over, and the add (and the next layer's norm), weightless,
    // run here.
    let host_hand = (seg.is_some_and(|sg| sg.after_host && !sg.first)
        && tail_in.is_none()
        && r.mode == Mode::Copied)
        .then(|| (r.input(e), r.input(e)));

    // Inputs (leafs, allocated first, in the order the graph first uses them): token ids, the
    // embeddings input (never consumed, so never freed), the mixed token/embedding inputs,
    // positions, per cache kind the K and V row indices (int64) and the KQ mask, the output ids.
    let tokens = r.host_input(t * 4);
    let _inp_embd = r.host_input(e);
    let mixed_tokens = r.host_input(t * 4);
    // The first device without pipeline parallelism copies in what its first nodes use, in
    // that order: the mixed embeddings, the gathered mixed rows, their slots, the token rows.
    let first_copies = (r.mode == Mode::Copied && first_device).then(|| {
        let mixed_embd = r.input(e);
        let gathered = r.input(e);
        let slots = r.input(t * 8);
        let rows = r.input(e);
        (mixed_embd, gathered, slots, rows)
    });
    let (mixed_slots, mixed_embd) = match first_copies {
        Some((embd, _, slots, _)) => (slots, embd),
        None if first_device => (r.input(t * 8), r.input(e)),
        None => (HELD, HELD),
    };
    // The gemma family scales the input rows by a per-row factor input.
    let scale_rows = model
        .architecture
        .starts_with("gemma")
        .then(|| r.input(t * 4));
    // A later device copies in the previous backend's output and the next layer's norm (first
    // used, by the layer's norm weight, before anything else); its residual copy comes after
    // the first layer's attention inputs.
    let copied_later =
        r.mode == Mode::Copied && !first_device && tail_in.is_none() && host_hand.is_none();
    let mut pre_norm = copied_later.then(|| r.alloc(e));
    // One set of attention inputs per cache: full layers and windowed layers each have their
    // own (an iSWA model keeps two even with --swa-full), in the order the layers first use them.
    let windowed =
        |a: Attention| matches!(a, Attention::Sliding { .. } | Attention::Chunked { .. });
    let mut kind_of_layer: Vec<Option<usize>> = vec![None; model.layers.len()];
    let mut kind_key: Vec<bool> = Vec::new();
    let mut kinds: Vec<u64> = Vec::new();
    for (il, l) in model.layers.iter().enumerate() {
        if l.attention != Attention::None {
            let w = windowed(l.attention);
            let k = match kind_key.iter().position(|x| *x == w) {
                Some(k) => k,
                None => {
                    kind_key.push(w);
                    kinds.push(n_kv_of(kv, il, g, local));
                    kinds.len() - 1
                }
            };
            kind_of_layer[il] = Some(k);
        }
    }
    // Without flash attention the V cache is stored transposed and its row indices are per
    // element: n_tokens × n_embd_v_gqa int64.
    let v_gqa = model.v_width_max();
    let v_idx_bytes = if g.flash_attn || model.mla.is_some() || local.is_some() {
        t * 8
    } else {
        t.saturating_mul(v_gqa).saturating_mul(8)
    };
    // On a device without pipeline parallelism each split copies in the inputs it is the first
    // to use: a kind first used after a layer whose experts ran elsewhere (a new split, from
    // the expert outputs' return) is copied in there.
    let split_of = |il: usize| match seg {
        Some(sg) if sg.held.is_none() => (sg.layers.start..il)
            .filter(|&j| elsewhere(j) || ffn_away(j))
            .count(),
        _ => 0,
    };
    let kind_split: Vec<usize> = (0..kinds.len())
        .map(|k| {
            let from = seg.map_or(0, |sg| sg.layers.start);
            kind_of_layer
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, x)| **x == Some(k))
                .map_or(0, |(il, _)| split_of(il))
        })
        .collect();
    // The recurrent state copy indices (one int32 per sequence), before the positions (for
    // the gated delta nets, whose last recurrent layer frees them; a device copies them in
    // and frees them after its own last recurrent layer).
    let in_seg = |il: usize| seg.is_none_or(|sg| sg.layers.contains(&il));
    let last_recurrent = (0..model.layers.len())
        .rev()
        .find(|&il| in_seg(il) && model.layers[il].recurrent);
    let mut s_copy = last_recurrent
        .filter(|_| gated_delta_net(arch))
        .map(|_| r.input(g.sequences.max(1) * 4));
    // A later device whose first layer is recurrent uses the previous device's output (its
    // residual) before any attention input.
    let first_recurrent = seg.is_some_and(|sg| {
        model
            .layers
            .get(sg.layers.start)
            .is_some_and(|l| l.recurrent)
    });
    let early_resid = (copied_later && first_recurrent && s_copy.is_some()).then(|| r.input(e));
    // The positions: copied in by the split of the first attention layer (with op offload,
    // by the first layer's Q split).
    let pos_bytes = t * 4 * positions_per_token(model);
    let pos_split = (0..model.layers.len())
        .find(|&il| in_seg(il) && model.layers[il].attention != Attention::None)
        .map_or(0, split_of);
    let pos = if lazy || pos_split > 0 {
        HELD
    } else {
        r.input(pos_bytes)
    };
    let kv_elsewhere = seg.is_some_and(|sg| sg.kv_elsewhere);
    // per layer: the host runs its attention; per cache kind: every layer of it
    let attn_away =
        |il: usize| seg.is_some_and(|sg| sg.attn_elsewhere.get(il).copied().unwrap_or(false));
    let kind_away: Vec<bool> = (0..kinds.len())
        .map(|k| {
            let mut of_kind = (0..model.layers.len()).filter(|&il| kind_of_layer[il] == Some(k));
            of_kind.next().is_some_and(attn_away) && of_kind.all(attn_away)
        })
        .collect();
    let kind_input = |r: &mut Replay, k: usize| {
        let n = kinds[k];
        if kv_elsewhere || lazy {
            return (HELD, HELD, HELD);
        }
        let ki = r.input(t * 8);
        let vi = r.input(v_idx_bytes);
        // (the host runs the attention and keeps the mask)
        let mask = if kind_away[k] {
            HELD
        } else {
            r.input(n.saturating_mul(t).saturating_mul(mask_elem))
        };
        (ki, vi, mask)
    };
    let mut kind_inputs = vec![(HELD, HELD, HELD); kinds.len()];
    // A quantized cache's Hadamard rotations (llama_kv_cache: n_rot_k from 64 doubled while it
    // divides the cache's uniform K head size, n_rot_v 64), per cache kind: their matrices are
    // graph inputs (n_rot² f32), used first by the first layer's Q rotation and V rotation.
    // Not followed for latent attention (its K rotation only).
    let rot: Vec<(u64, u64)> = (0..kinds.len())
        .map(|k| {
            if model.mla.is_some() {
                return (0, 0);
            }
            let uniform = |f: fn(&LayerShape) -> u32| {
                let mut it = (model.layers.iter().enumerate())
                    .filter(|(il, _)| kind_of_layer[*il] == Some(k))
                    .map(|(_, l)| u64::from(f(l)));
                let first = it.next().unwrap_or(0);
                if it.all(|x| x == first) { first } else { 0 }
            };
            let (hk, hv) = (uniform(|l| l.key_length), uniform(|l| l.value_length));
            let nk = if kv.quantized_cells().0 && hk > 0 && hk.is_multiple_of(64) {
                let mut n = 64;
                while hk.is_multiple_of(2 * n) {
                    n *= 2;
                }
                n
            } else {
                0
            };
            let nv = if kv.quantized_cells().1 && hv > 0 && hv.is_multiple_of(64) {
                64
            } else {
                0
            };
            (nk, nv)
        })
        .collect();
    let mut kind_rot: Vec<(Option<Live>, Option<Live>)> = vec![(None, None); kinds.len()];
    // in the order the device first uses them (the whole graph's order on one backend)
    // (a device copies in only the kinds its own layers use)
    let start = seg.map_or(0, |sg| sg.layers.start);
    let used = match seg {
        Some(sg) if r.mode == Mode::Copied => {
            let end = sg.layers.end.min(kind_of_layer.len());
            &kind_of_layer[start.min(end)..end]
        }
        _ => &kind_of_layer[..],
    };
    let mut order: Vec<usize> = Vec::new();
    for x in kind_of_layer
        .iter()
        .skip(start)
        .chain(kind_of_layer.iter())
        .flatten()
        .filter(|x| used.contains(&Some(**x)))
    {
        if !order.contains(x) {
            order.push(*x);
        }
    }
    let mut resid_copy = early_resid;
    for (i, k) in order.into_iter().enumerate() {
        if kind_split[k] == 0 {
            if !(kv_elsewhere || lazy) {
                let (nk, nv) = rot[k];
                kind_rot[k] = (
                    (nk > 0).then(|| r.input(nk * nk * 4)),
                    (nv > 0).then(|| r.input(nv * nv * 4)),
                );
            }
            kind_inputs[k] = kind_input(&mut r, k);
        }
        if i == 0 && copied_later && resid_copy.is_none() {
            resid_copy = Some(r.input(e));
        }
    }
    // Encoders with sliding-window layers (llama.cpp builds them without memory, as iSWA
    // inputs): a second, windowed mask over the batch.
    let _swa_mask = (local.is_some() && matches!(arch, "modern-bert" | "gemma-embedding"))
        .then(|| r.input(t.saturating_mul(t).saturating_mul(mask_elem)));
    // DSA without flash attention: the indexer has its own f16 KQ mask beside the f32 one.
    let has_dsa = model.mla.is_some() && model.layers.iter().any(|l| l.indexer_key_length > 0);
    // Every DSA layer's zero-filled source for unmasking its top-k cells is a graph leaf
    // (top_k × rows f32, `ggml_new_tensor` without data): ggml-alloc places the leafs first
    // and never frees them.
    if has_dsa {
        // (k is at most the cells a row can see)
        let n_kv = kinds.first().copied().unwrap_or(0);
        let top = (model.keys.indexer_top_k.unwrap_or(0) as u64).min(n_kv);
        for _ in model.layers.iter().filter(|l| l.indexer_key_length > 0) {
            let _leaf = r.input(top.saturating_mul(t) * 4);
        }
    }
    let dsa_lid_mask = (has_dsa && !g.flash_attn)
        .then(|| r.input(kinds.first().copied().unwrap_or(0).saturating_mul(t) * 2));
    // T5: the relative position buckets, one i32 per (cell, row).
    let _pos_bucket = kq_bias.then(|| {
        let n = local.unwrap_or_else(|| kinds.first().copied().unwrap_or(0));
        r.input(n.saturating_mul(t) * 4)
    });
    // T5's decoder: the encoder output (n_enc × n_embd f32; n_enc = the trained context at
    // reservation) and the cross-attention mask.
    let cross = (arch == "t5").then(|| {
        let n_enc = model.native_context.unwrap_or(t).max(1);
        let embd = r.input(n_enc.saturating_mul(model.embedding_length) * f32b);
        let mask = r.input(n_enc.saturating_mul(t).saturating_mul(mask_elem));
        (n_enc, embd, mask)
    });
    // minimax-m3's MSA runs only with flash attention and per-sequence streams (else dense
    // attention); its graph keeps an f32 copy of the KQ mask for every sparse layer.
    let msa_on = arch == "minimax-m3"
        && g.flash_attn
        && (g.sequences <= 1 || !g.kv_unified)
        && model.layers.iter().any(|l| l.indexer_key_length > 0);
    let _msa_mask_f32 =
        msa_on.then(|| r.input(kinds.first().copied().unwrap_or(0).saturating_mul(t) * f32b));
    // minimax-01: the lightning attention's diagonal decay input, rows × rows × heads per
    // sequence (f32).
    let _diag_decay = (arch == "minimax-01").then(|| {
        let seqs = g.sequences.max(1).min(t);
        let per_seq = t / seqs;
        let hq = model
            .layers
            .first()
            .map_or(1, |l| l.head_count as u64)
            .max(1);
        r.input(
            per_seq
                .saturating_mul(per_seq)
                .saturating_mul(hq)
                .saturating_mul(seqs)
                * f32b,
        )
    });
    // (copied in by the split that first uses them: the last layer's, or the output stage's
    // when the output rows are gathered after it)
    let last_layer = model.layers.len().saturating_sub(1);
    let out_split = if quirks.tail == Tail::LateRows {
        split_of(last_layer + 1)
    } else {
        split_of(last_layer)
    };
    let out_ids = if seg.is_none_or(|sg| sg.output) && out_split == 0 && !lazy {
        r.input(outputs * 4)
    } else {
        HELD
    };
    // with op offload the device runs the last layer's row gathering (its logits may run on
    // the host): the output ids are copied in by the split that first uses them
    let mut out_pending = lazy && seg.is_some_and(|sg| sg.layers.end >= model.layers.len());
    // The last layer using each kind frees its inputs after use.
    // (on a device, the last of its own layers: its copies are freed there)
    let end = seg.map_or(kind_of_layer.len(), |sg| {
        sg.layers.end.min(kind_of_layer.len())
    });
    let last_of_kind: Vec<usize> = (0..kinds.len())
        .map(|k| {
            kind_of_layer[..end]
                .iter()
                .rposition(|x| *x == Some(k))
                .unwrap_or(0)
        })
        .collect();
    let last_attn = last_of_kind.iter().copied().max();

    // inp_embd = get_rows(tok_embd, tokens); the mixed rows are gathered, copied and
    // scattered into it (the copy stays allocated).
    // On a device the token rows and the gathered mixed rows are copies from the host (the
    // scatter's copy is the device's own); a later device takes the previous one's output.
    let mut inp_l = if let Some((outs, w, resid)) = tail_in {
        // that layer's tail: weighted in place, summed into a new tensor, the residual added
        // in place
        r.free(w);
        let sum = r.alloc(e);
        r.free(outs);
        r.free(resid);
        sum
    } else if let Some((ffn_out, resid)) = host_hand {
        // the host layer's last add, in place into its FFN output
        r.free(resid);
        ffn_out
    } else if let Some(x) = resid_copy {
        x
    } else if let Some((_, _, _, rows)) = first_copies {
        rows
    } else {
        r.input(e)
    };
    r.free(tokens);
    let gathered = match first_copies {
        Some((_, g, _, _)) => g,
        None if first_device => r.input(e),
        None => HELD,
    };
    r.free(mixed_tokens);
    let _copied = if first_device { r.alloc(e) } else { HELD };
    r.free(mixed_embd);
    r.free(gathered);
    r.free(mixed_slots);
    if let Some(x) = scale_rows {
        // inp_scaled = inp_embd × scale rows, in place
        r.free(x);
    }
    // gemma3n (an upper bound, see `core::arch`): the per-layer token embeddings
    // gathered (n_layer × 256 f32 per row: llama.cpp's fixed n_embd_altup), then the AltUp stack of 4 streams (the input projected to three
    // more, normalised, concatenated, made contiguous).
    let gemma3n = arch == "gemma3n";
    let per_layer_bytes = (model.layers.len() as u64)
        .saturating_mul(256)
        .saturating_mul(t)
        .saturating_mul(f32b);
    let mut per_layer_select = gemma3n.then(|| r.alloc(per_layer_bytes));
    let mut altup_stack = gemma3n.then(|| {
        let rep = r.alloc(3 * e);
        let proj = r.alloc(3 * e);
        r.free(rep);
        let scaled = r.alloc(3 * e);
        let div = r.alloc(3 * e);
        r.free(scaled);
        r.free(proj);
        let stacked = r.alloc(4 * e);
        r.free(div);
        let cont = r.alloc(4 * e);
        r.free(stacked);
        cont
    });
    let mut per_layer_input: Option<Live> = None;

    // the new split after layer `il`'s block returns from another backend copies in the inputs
    // it is the first to use
    let split_inputs = |r: &mut Replay,
                        il: usize,
                        kind_inputs: &mut Vec<(Live, Live, Live)>,
                        out_live: &mut Option<Live>,
                        pos_live: &mut Option<Live>| {
        let split = split_of(il + 1);
        if split == 0 {
            return;
        }
        if split == pos_split && !lazy {
            *pos_live = Some(r.input(pos_bytes));
        }
        for kk in 0..kinds.len() {
            if kind_split[kk] == split {
                kind_inputs[kk] = kind_input(r, kk);
            }
        }
        if out_split == split && seg.is_some_and(|sg| sg.output) {
            *out_live = Some(r.input(outputs * 4));
        }
    };
    let last = model.layers.len().saturating_sub(1);
    let dense_ff = dense_ff_width(model, ff);
    // a sliding-window cache beside the full one (llama.cpp's `llama_kv_cache_iswa`)
    let swa_cache = kv
        .caches
        .iter()
        .any(|c| c.kind == super::kv::CacheKind::Swa);
    let mut pos_live = (pos.0 != HELD.0 || lazy).then_some(pos);
    let mut pos_pending = lazy;
    let mut out_live = Some(out_ids);
    // the last host layer's last weight split runs on into the device's own layers: it copies
    // in what they are the first to use (row indices per cache, the output ids)
    // under op offload a cache kind's row indices (and its mask, unless the host runs every
    // attention of the kind) are copied in by the first split of a device layer that uses them
    let copy_kind_in = |r: &mut Replay, ins: &mut (Live, Live, Live), k: usize| {
        if ins.0.0 == HELD.0 {
            ins.0 = r.alloc(t * 8);
            ins.1 = r.alloc(v_idx_bytes);
            if ins.2.0 == HELD.0 && !kind_away[k] {
                ins.2 = r.alloc(kinds[k].saturating_mul(t).saturating_mul(mask_elem));
            }
        }
    };
    macro_rules! device_layers_inputs {
        ($il:expr) => {
            if hostl($il) && $il + 1 < end && !hostl($il + 1) {
                for (k, ins) in kind_inputs.iter_mut().enumerate() {
                    if ($il + 1..end).any(|j| kind_of_layer[j] == Some(k)) {
                        copy_kind_in(&mut r, ins, k);
                    }
                }
                if out_pending {
                    out_live = Some(r.alloc(outputs * 4));
                    out_pending = false;
                }
            }
        };
    }
    for (il, l) in model.layers.iter().enumerate() {
        if seg.is_some_and(|sg| !sg.layers.contains(&il)) {
            continue;
        }
        let hq = l.head_count as u64;
        let hkv = l.head_count_kv as u64;
        let (dk, dv) = match model.mla {
            Some(m) => (l.key_length as u64, m.kv_lora_rank as u64),
            None => (l.key_length as u64, l.value_length as u64),
        };
        // attn_norm: inpL has two consumers (norm, residual), so a new tensor.
        // gemma3n: the AltUp predictions (4 streams) for this layer
        let predictions = gemma3n.then(|| r.alloc(4 * e));
        let norm = match pre_norm.take() {
            Some(x) => x,
            None => r.alloc(e),
        };
        let w = offl(il);
        // (the norm's weight, copied in for its in-place multiply)
        offloaded_op(&mut r, cp(w, |w| w.attn_norm), 0);
        let mut cur: Option<Live> = None;
        // the layer's norm freed inside its block (the gated delta net's last consumer of it
        // is the gate's projection)
        let mut norm_gone = false;
        // the block returns a reshaped view of its output, so the residual add runs in place
        // in the layer's input instead
        let mut resid_in_input = false;
        if l.recurrent && arch == "minimax-01" {
            // minimax-01's lightning attention: Q, K, V, then per sequence the rows × rows ×
            // heads scores, the decay scaled into a new tensor (its exponent in place) and
            // the decayed scores in place; the output projection.
            let qkv = r.alloc(e.saturating_mul(3));
            let seqs = g.sequences.max(1).min(t);
            let per_seq = t / seqs;
            let d = per_seq
                .saturating_mul(per_seq)
                .saturating_mul(hq.max(1))
                .saturating_mul(seqs)
                * f32b;
            let qk = r.alloc(d);
            let decay = r.alloc(d);
            r.free(decay);
            let o = r.alloc(e);
            r.free(qk);
            r.free(qkv);
            cur = Some(o);
        } else if l.recurrent
            && let Some(s) = model.ssm.filter(|_| gated_delta_net(arch))
        {
            let dn = DeltaNet {
                arch,
                s,
                fused_qkvz: model.keys.fused_qkvz.get(il).copied().unwrap_or(false),
                t,
                seqs: g.sequences.max(1),
                e,
            };
            let last_recurrent = last_recurrent == Some(il);
            let s_copy = s_copy.take_if(|_| last_recurrent);
            cur = Some(delta_net_block(&mut r, &dn, &norm, s_copy));
            norm_gone = true;
            resid_in_input = true;
        } else if l.recurrent {
            // SSM block: in_proj, the conv input (state + rows), conv output, scan output
            // (y and the new states), the gated y, out_proj.
            if let Some(s) = model.ssm {
                let conv_dim = s.d_inner + 2 * s.n_group * s.d_state;
                let in_proj = r.alloc((s.d_inner + conv_dim + hq).saturating_mul(t) * f32b);
                let conv_in =
                    r.alloc(conv_dim.saturating_mul(t + s.d_conv.saturating_sub(1)) * f32b);
                let conv_out = r.alloc(conv_dim.saturating_mul(t) * f32b);
                r.free(conv_in);
                let states = s.d_state * s.d_inner * g.sequences.max(1);
                let y = r.alloc((s.d_inner.saturating_mul(t) + states) * f32b);
                r.free(conv_out);
                let gated = r.alloc(s.d_inner.saturating_mul(t) * f32b);
                r.free(y);
                r.free(in_proj);
                let out = r.alloc(e);
                r.free(gated);
                cur = Some(out);
            } else {
                // Upper bound for the recurrent blocks not replayed (RWKV time mix, short
                // convolution, gated delta nets): sixteen n_embd f32 rows per token live at
                // once (the token-shift lerps, r/w/k/v/a/g projections, the WKV or delta-net
                // output and its state), then the block's output.
                let block = r.alloc(e.saturating_mul(RECURRENT_BLOCK_ROWS));
                r.free(block);
                cur = Some(r.alloc(e));
            }
        }
        if l.attention != Attention::None
            && let Some(m) = model.mla
        {
            let n_kv = n_kv_of(kv, il, g, local);
            let kind = kind_of_layer[il].unwrap_or(0);
            let last_here = last_of_kind.get(kind) == Some(&il);
            let (lora, rope) = (m.kv_lora_rank as u64, m.rope_dim as u64);
            // DSA lightning indexer (deepseek32, glm-dsa): one key row per token into the
            // indexer cache (projection, norm, scale, rope, Hadamard rotation) first.
            let ikd = l.indexer_key_length as u64;
            let dsa = ikd > 0;
            if dsa {
                let ik = r.alloc(ikd * t * f32b);
                let n1 = r.alloc(ikd * t * f32b);
                r.free(ik);
                let n2 = r.alloc(ikd * t * f32b);
                r.free(n1);
                let roped = r.alloc(ikd * t * f32b);
                r.free(n2);
                let rot = r.alloc(ikd * t * f32b);
                r.free(roped);
                r.free(rot);
            }
            // The compressed query (q_a, normed); with an indexer it feeds the indexer's
            // query too and stays live until then.
            let qr = if dsa {
                let ql = model.keys.q_lora_rank.map_or(lora, u64::from);
                let qa = r.alloc(ql * t * f32b);
                let qn = r.alloc(ql * t * f32b);
                r.free(qa);
                Some(qn)
            } else {
                None
            };
            // deepseek2's absorbed MLA: q_b gives nope + rope dims per head; the nope part is
            // absorbed into the latent (wk_b), the rope part rotated, the two concatenated.
            let q = r.alloc(hq * m.key_length_mla as u64 * t * f32b);
            let absorbed = r.alloc(hq * lora * t * f32b);
            let q_pe = r.alloc(hq * rope * t * f32b);
            r.free(q);
            let qcur = r.alloc(hq * (lora + rope) * t * f32b);
            r.free(absorbed);
            r.free(q_pe);
            // the compressed latent and its rotated rope part, concatenated into the cache row
            let cmpr = r.alloc((lora + rope) * t * f32b);
            if !dsa {
                r.free(norm);
            }
            let cn = r.alloc(lora * t * f32b);
            let k_pe = r.alloc(rope * t * f32b);
            if Some(il) == last_attn
                && let Some(p) = pos_live.take()
            {
                r.free(p);
            }
            r.free(cmpr);
            let kcur = r.alloc((lora + rope) * t * f32b);
            r.free(cn);
            r.free(k_pe);
            r.free(kcur);
            if last_here {
                r.free(kind_inputs[kind].0);
                r.free(kind_inputs[kind].1);
            }
            // The indexer's scores: one f32 per cached cell per row (heads summed with their
            // weights), the top-k cells per row, and a new mask unmasking them (a filled copy
            // of the KQ mask, scattered, plus the mask).
            let dsa_in = DsaInputs {
                heads: model.keys.indexer_head_count.unwrap_or(1).max(1) as u64,
                key_length: ikd,
                top_k: (model.keys.indexer_top_k.unwrap_or(0) as u64).min(n_kv),
                n_kv,
                t,
                mask_elem,
            };
            // Upper bound for glm5-next's pooled indexer (not replayed): its scores and
            // gathered pooled keys grow with the sequences; one more n_kv × rows f32 per
            // sequence, live through the attention.
            let pooled = (arch == "glm5-next").then(|| {
                r.alloc(
                    n_kv.saturating_mul(t)
                        .saturating_mul(g.sequences.max(1))
                        .saturating_mul(f32b),
                )
            });
            let lat = if g.flash_attn {
                let m2 = dsa.then(|| dsa_top_k_mask(&mut r, &dsa_in, qr, norm));
                let o = r.alloc(hq * lora * t * f32b);
                r.free(qcur);
                if let Some(m2) = m2 {
                    r.free(m2);
                }
                o
            } else {
                // without flash attention the latent values are copied out of the cache
                // (transposed, f16) and the scores come before the indexer's
                let v_cont = r.alloc(n_kv.saturating_mul(lora) * 2);
                let kq = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
                r.free(qcur);
                if dsa {
                    let m2 = dsa_top_k_mask(&mut r, &dsa_in, qr, norm);
                    r.free(m2);
                }
                let kqv = r.alloc(hq * lora * t * f32b);
                r.free(kq);
                r.free(v_cont);
                kqv
            };
            if let Some(x) = pooled {
                r.free(x);
            }
            if last_here && let Some(lm) = dsa_lid_mask {
                r.free(lm);
            }
            if last_here {
                r.free(kind_inputs[kind].2);
            }
            // decompress the latent to per-head values (wv_b), then the contiguous copy
            let vb = r.alloc(hq * m.value_length_mla as u64 * t * f32b);
            r.free(lat);
            let cont = r.alloc(hq * m.value_length_mla as u64 * t * f32b);
            r.free(vb);
            let wo = r.alloc(e);
            r.free(cont);
            cur = Some(wo);
        } else if l.attention != Attention::None {
            let n_kv = n_kv_of(kv, il, g, local);
            let kind = kind_of_layer[il].unwrap_or(0);
            // build_attn expands Q, V, K in that order (Q, K, V with a sliding-window cache
            // beside the full one, below), then the two cache writes.
            let wq = cp(w, |w| w.q).map(|b| r.alloc(b));
            // (the positions are an input of the split that runs the RoPE: the Q norm's when
            // its weight is copied in by a split of its own)
            let wqn = cp(w, |w| w.q_norm).filter(|_| qk_norm);
            if wq.is_some() && wqn.is_none() && pos_pending {
                pos_live = Some(r.alloc(pos_bytes));
                pos_pending = false;
            }
            // Qwen3-Next / Qwen3.5: the projection gives Q and an output gate per head; the Q
            // half is normed into a new tensor and the projection stays live for the gate
            let gated = gated_q(arch);
            let mut q = r.alloc(hq * dk * t * f32b * if gated { 2 } else { 1 });
            if let Some(x) = wq {
                r.free(x);
            }
            let mut q_full = None;
            if qk_norm {
                let qn = r.alloc(hq * dk * t * f32b);
                if gated {
                    q_full = Some(q);
                } else {
                    r.free(q);
                }
                q = qn;
                if let Some(b) = wqn {
                    let x = r.alloc(b);
                    if pos_pending {
                        pos_live = Some(r.alloc(pos_bytes));
                        pos_pending = false;
                    }
                    r.free(x);
                }
            }
            // a quantized cache: Q, V, K and the attention output each rotated into a new tensor
            // (without flash attention only the matrices are counted where the layer projects
            // Q, K and V in one tensor (`attn_qkv`: Falcon's views stay live beside the
            // rotations, which the replay does not hold; replayed, Falcon-7B came out 8.7%
            // under llama.cpp), in models without memory and under T5's position bias)
            let (rot_k, rot_v) = rot
                .get(kind)
                .copied()
                .filter(|_| {
                    g.flash_attn
                        || !(model.no_memory
                            || kq_bias
                            || model.keys.attn_qkv.get(il).copied().unwrap_or(false))
                })
                .unwrap_or((0, 0));
            let rotate = |r: &mut Replay, x: Live, n: u64, on: u64| {
                if on > 0 {
                    let y = r.alloc(n);
                    r.free(x);
                    y
                } else {
                    x
                }
            };
            q = rotate(&mut r, q, hq * dk * t * f32b, rot_k);
            let build_v = |r: &mut Replay| {
                (model.mla.is_none()).then(|| {
                    let v = offloaded_op(r, cp(w, |w| w.v), hkv * dv * t * f32b);
                    rotate(r, v, hkv * dv * t * f32b, rot_v)
                })
            };
            // (with a sliding-window cache beside the full one, `build_attn` over
            // `llm_graph_input_attn_kv_iswa` expands K before V: V is the norm's last consumer)
            let mut v = None;
            if !swa_cache {
                v = build_v(&mut r);
            }
            let mut k = offloaded_op(&mut r, cp(w, |w| w.k), hkv * dk * t * f32b);
            if !swa_cache {
                r.free(norm);
            }
            if qk_norm {
                let kn = r.alloc(hkv * dk * t * f32b);
                r.free(k);
                k = kn;
                offloaded_op(&mut r, cp(w, |w| w.k_norm), 0);
            }
            k = rotate(&mut r, k, hkv * dk * t * f32b, rot_k);
            if last_of_kind.get(kind) == Some(&il)
                && let Some(kr) = kind_rot[kind].0
            {
                r.free(kr);
            }
            if Some(il) == last_attn
                && let Some(p) = pos_live.take()
            {
                r.free(p);
            }
            if swa_cache {
                v = build_v(&mut r);
                r.free(norm);
            }
            r.free(k);
            let last_here = last_of_kind.get(kind) == Some(&il);
            if last_here {
                r.free(kind_inputs[kind].0);
            }
            if let Some(v) = v {
                r.free(v);
            }
            if last_here {
                r.free(kind_inputs[kind].1);
            }
            // minimax-m3's MSA (flash attention, one stream per sequence): per stream the
            // top-k block mask gathered to every cell per indexer head (f32), made
            // contiguous, the f32 KQ mask added in place, cast to f16 for the attention.
            let msa = (msa_on && l.indexer_key_length > 0).then(|| {
                let ns = if g.kv_unified { 1 } else { g.sequences.max(1) };
                let ih = model.keys.indexer_head_count.unwrap_or(1).max(1) as u64;
                let a = n_kv.saturating_mul(t / ns).saturating_mul(ih) * f32b;
                let gathered = r.alloc(a);
                let contiguous = r.alloc(a);
                r.free(gathered);
                let mask4 = r.alloc(a / 2);
                r.free(contiguous);
                mask4
            });
            // Upper bound for qwen4exp's QSA selection with pooled keys (not replayed): the
            // pooled-key mask and scores (n_kv / ratio per row), the all −inf selection mask
            // repeated over the rows, its scattered copy and the KQ mask added
            // ((n_kv + n_sel) per row each), all counted live through the attention.
            let kpool = model
                .keys
                .compress_ratios
                .as_ref()
                .map_or(0, |c| c.max() as u64);
            let qsa = (arch == "qwen4exp" && l.indexer_key_length > 0 && kpool > 1).then(|| {
                let n_sel = (model.keys.indexer_top_k.unwrap_or(0) as u64) + kpool;
                let me = if g.flash_attn { 2 } else { f32b };
                let n_pool = n_kv.div_ceil(kpool);
                let rows = |n: u64, elem: u64| n.saturating_mul(t).saturating_mul(elem);
                r.alloc(
                    rows(n_pool, 2)
                        + rows(n_pool, f32b)
                        + 2 * rows(n_kv + n_sel, me)
                        + rows(n_kv, me),
                )
            });
            // -nkvo, or a layer whose ops are offloaded: K and V were copied out to the host's
            // cache; its views come back in
            let mut cache_copies = ((kv_elsewhere || hostl(il)) && !attn_away(il)).then(|| {
                // (the views span every stream's cells; in the order the attention uses them:
                // without flash attention the mask before V)
                let bytes = kv.per_layer.get(il).map_or(0, |c| c.allocated_bytes);
                let kc = r.alloc(bytes.saturating_mul(dk) / (dk + dv).max(1));
                let mask_first = !g.flash_attn && kind_inputs[kind].2.0 == HELD.0;
                if mask_first {
                    kind_inputs[kind].2 = r.alloc(n_kv.saturating_mul(t).saturating_mul(mask_elem));
                }
                let vc = r.alloc(bytes.saturating_mul(dv) / (dk + dv).max(1));
                if kind_inputs[kind].2.0 == HELD.0 {
                    kind_inputs[kind].2 = r.alloc(n_kv.saturating_mul(t).saturating_mul(mask_elem));
                }
                (kc, vc)
            });
            let attn = if attn_away(il) {
                // Q goes to the host, which runs the attention; its output comes back (made
                // contiguous here without flash attention)
                r.free(q);
                let back = r.alloc(hq * dv * t * f32b);
                if g.flash_attn {
                    back
                } else {
                    let cont = r.alloc(hq * dv * t * f32b);
                    r.free(back);
                    cont
                }
            } else if g.flash_attn && !kq_bias {
                // f32 cells: the K and V views (every stream's cells) cast to f16 first
                let cells = kv.per_layer.get(il).map_or(0, |c| c.allocated_cells);
                let cast = |on: bool, d: u64, r: &mut Replay| {
                    (on && local.is_none()).then(|| r.alloc(cells.saturating_mul(hkv * d) * 2))
                };
                let kc = cast(kv.f32_cells().0, dk, &mut r);
                let vc = cast(kv.f32_cells().1, dv, &mut r);
                let o = r.alloc(hq * dv * t * f32b);
                r.free(q);
                for c in [kc, vc].into_iter().flatten() {
                    r.free(c);
                }
                o
            } else {
                // T5 with flash attention asked: V is not stored transposed, so the
                // non-flash path copies it out contiguous (f16).
                let v_cont = (kq_bias && g.flash_attn && local.is_none())
                    .then(|| r.alloc(n_kv.saturating_mul(hkv * dv) * 2));
                let mut kq = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
                // (copied cache views: K's last use is the scores, V's the product)
                let copies = if kq_bias { None } else { cache_copies.take() };
                if let Some((kc, _)) = copies {
                    r.free(kc);
                }
                r.free(q);
                // (the mask's last use is the softmax of the scores)
                if last_of_kind.get(kind) == Some(&il) && !kq_bias {
                    r.free(kind_inputs[kind].2);
                    kind_inputs[kind].2 = HELD;
                }
                if kq_bias {
                    // T5's relative position bias, per layer: the bucketed bias gathered
                    // (heads × n_kv × rows), made contiguous, and added to the scores.
                    let pb = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
                    let c = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
                    r.free(pb);
                    let sum = r.alloc(n_kv.saturating_mul(t).saturating_mul(hq) * f32b);
                    r.free(kq);
                    r.free(c);
                    kq = sum;
                }
                let kqv = r.alloc(hq * dv * t * f32b);
                if let Some((_, vc)) = copies {
                    r.free(vc);
                }
                r.free(kq);
                if let Some(vc) = v_cont {
                    r.free(vc);
                }
                let cont = r.alloc(hq * dv * t * f32b);
                r.free(kqv);
                cont
            };
            if let Some((kc, vc)) = cache_copies {
                r.free(kc);
                r.free(vc);
            }
            if let Some(x) = msa {
                r.free(x);
            }
            if let Some(x) = qsa {
                r.free(x);
            }
            if last_here {
                r.free(kind_inputs[kind].2);
            }
            let attn = if let Some(m) = model.mla {
                // decompress the latent back to per-head values
                let o = r.alloc(hq * m.value_length_mla as u64 * t * f32b);
                r.free(attn);
                o
            } else {
                rotate(&mut r, attn, hq * dv * t * f32b, rot_v)
            };
            if last_here && let Some(vr) = kind_rot[kind].1 {
                r.free(vr);
            }
            // the gate made contiguous out of the projection (its last consumer); its sigmoid
            // and the product with the attention output in place
            let attn = match q_full {
                Some(qf) => {
                    let gate = r.alloc(hq * dk * t * f32b);
                    r.free(qf);
                    r.free(attn);
                    gate
                }
                None => attn,
            };
            let wwo = cp(w, |w| w.o).map(|b| r.alloc(b));
            if wwo.is_some() && il == last && out_pending {
                // the last layer's output-row gathering is in this split
                out_live = Some(r.alloc(outputs * 4));
                out_pending = false;
            }
            let mut wo = r.alloc(e);
            if let Some(x) = wwo {
                r.free(x);
            }
            r.free(attn);
            // (a norm after it, in place, its weight copied in)
            offloaded_op(&mut r, cp(w, |w| w.post_attn_norm), 0);
            if let Some((n_enc, _, _)) = cross {
                // T5's decoder: cross-attention over the encoder's n_enc rows (K and V
                // projected from them, no position bias, so flash attention applies)
                let nc = r.alloc(e);
                let qc = r.alloc(hq * dk * t * f32b);
                let kc = r.alloc(hkv * dk * n_enc * f32b);
                let vc = r.alloc(hkv * dv * n_enc * f32b);
                r.free(nc);
                let oc = if g.flash_attn {
                    r.alloc(hq * dv * t * f32b)
                } else {
                    let kq = r.alloc(n_enc.saturating_mul(t).saturating_mul(hq) * f32b);
                    let o = r.alloc(hq * dv * t * f32b);
                    r.free(kq);
                    o
                };
                r.free(qc);
                r.free(kc);
                r.free(vc);
                let woc = r.alloc(e);
                r.free(oc);
                r.free(wo);
                wo = woc;
            }
            cur = Some(match cur {
                Some(ssm_out) => {
                    // parallel hybrid (falcon-h1): the two branches are added
                    r.free(ssm_out);
                    wo
                }
                None => wo,
            });
        } else if cur.is_some() && !norm_gone {
            r.free(norm);
        }
        let Some(cur) = cur else {
            r.free(norm);
            continue;
        };
        // the last layer keeps only the output rows (unless they are gathered after it)
        let cut = il == last && quirks.tail != Tail::LateRows;
        let ffn_inp = if cut {
            // keep only the output rows of the attention output and of the residual
            let c = r.alloc(e_out);
            r.free(cur);
            let s = r.alloc(e_out);
            r.free(inp_l);
            if let Some(o) = out_live.take() {
                r.free(o);
            }
            // ffn_inp = c + s, in place into c
            r.free(s);
            c
        } else if resid_in_input {
            r.free(cur);
            inp_l
        } else {
            // ffn_inp = cur + inpL, in place into cur; inpL's last consumer
            r.free(inp_l);
            cur
        };
        let rows = if cut { outputs } else { t };
        let er = if cut { e_out } else { e };
        let fnorm = r.alloc(er);
        offloaded_op(&mut r, cp(w, |w| w.ffn_norm), 0);
        // the leading dense layers of a MoE model (`leading_dense_block_count`: DeepSeek's
        // first three) run a dense FFN
        let moe_here = model
            .moe
            .filter(|_| il >= model.keys.leading_dense.unwrap_or(0) as usize);
        let down = if ffn_away(il) {
            // the block runs elsewhere: its output is copied back in, a new split whose first
            // inputs it is (a norm after it in place, its weight copied in under op offload)
            r.free(fnorm);
            let back = r.alloc(er);
            let wpn = cp(w, |w| w.post_ffn_norm)
                .filter(|_| moe_here.is_none())
                .map(|b| r.alloc(b));
            split_inputs(&mut r, il, &mut kind_inputs, &mut out_live, &mut pos_live);
            if lazy && il + 1 < end && !hostl(il + 1) {
                // under op offload the split runs into the next layer (one of the device's
                // own): it copies in what that layer is the first to use
                if let Some(k) = kind_of_layer[il + 1]
                    && let Some(ins) = kind_inputs.get_mut(k)
                {
                    copy_kind_in(&mut r, ins, k);
                }
                if out_pending && il + 1 == last {
                    out_live = Some(r.alloc(outputs * 4));
                    out_pending = false;
                }
            }
            if let Some(x) = wpn {
                r.free(x);
            }
            back
        } else if let Some(moe) = moe_here {
            let w_copy = w;
            let n_exp = moe.experts as u64;
            let k = moe.experts_used as u64;
            let w = expert_ff_width(model, ff);
            let shared = shared_experts;
            // router logits (softmax/sigmoid in place), top-k argsort, the k weights
            let logits = offloaded_op(&mut r, cp(w_copy, |w| w.router), n_exp * rows * f32b);
            let argsort = r.alloc(n_exp * rows * 4);
            let mut weights = r.alloc(k * rows * f32b);
            r.free(logits);
            if moe_weights_normed(arch) {
                // the k weights summed per row (clamped in place), divided into a new tensor
                let sum = r.alloc(rows * f32b);
                let normed = r.alloc(k * rows * f32b);
                r.free(weights);
                r.free(sum);
                weights = normed;
            }
            if elsewhere(il)
                && !shared
                && seg.is_some_and(|sg| !sg.output && il + 1 == sg.layers.end)
            {
                // the device's last layer: its expert outputs go back to the next device
                return r.a.max;
            }
            let experts = if elsewhere(il) {
                // the normed rows and the chosen experts are copied out; the k expert outputs
                // are copied back in (llama.cpp's scheduler with the expert weights on a
                // backend without op offload: `scripts/oracle/sched_trace.py`), a new split
                // whose first inputs they are
                if !shared {
                    r.free(fnorm);
                }
                r.free(argsort);
                let back = r.alloc(model.embedding_length * k * rows * f32b);
                split_inputs(&mut r, il, &mut kind_inputs, &mut out_live, &mut pos_live);
                back
            } else {
                // (op offload copies the expert tensors in host memory, one split each)
                let gate = offloaded_op(&mut r, cp(w_copy, |w| w.gate_exps), w * k * rows * f32b);
                let up = offloaded_op(&mut r, cp(w_copy, |w| w.up_exps), w * k * rows * f32b);
                if !shared {
                    r.free(fnorm);
                }
                let glu = r.alloc(w * k * rows * f32b);
                r.free(gate);
                r.free(up);
                let wd = cp(w_copy, |w| w.down_exps).map(|b| r.alloc(b));
                device_layers_inputs!(il);
                let experts = r.alloc(model.embedding_length * k * rows * f32b);
                if let Some(x) = wd {
                    r.free(x);
                }
                r.free(glu);
                r.free(argsort);
                experts
            };
            // weighted in place, then the k expert outputs summed into a new tensor
            r.free(weights);
            let moe_out = r.alloc(er);
            r.free(experts);
            if shared {
                let ws = shared_ff_width(model, ff);
                // Qwen3-Next / Qwen3.5-MoE gate the shared expert's output by a sigmoid of a
                // projection of the normed rows, computed after it (its last consumer)
                let gated = matches!(arch, "qwen3next" | "qwen35moe");
                let sg = r.alloc(ws * rows * f32b);
                let su = r.alloc(ws * rows * f32b);
                let fnorm = if gated {
                    Some(fnorm)
                } else {
                    r.free(fnorm);
                    None
                };
                let sglu = r.alloc(ws * rows * f32b);
                r.free(sg);
                r.free(su);
                let sd = r.alloc(er);
                r.free(sglu);
                if let Some(fnorm) = fnorm {
                    let gate = r.alloc(rows * f32b);
                    r.free(fnorm);
                    r.free(gate);
                }
                r.free(sd);
            }
            moe_out
        } else if quirks.ffn == Ffn::Ungated {
            // up, the activation in place, down
            let up = r.alloc(dense_ff * rows * f32b);
            r.free(fnorm);
            let down = r.alloc(er);
            r.free(up);
            down
        } else if quirks.ffn == Ffn::FusedGateUp {
            // the fused 2 × n_ff projection (its width is ffn_up's), the GLU into n_ff, down
            let up = r.alloc(dense_ff * rows * f32b);
            r.free(fnorm);
            let glu = r.alloc(dense_ff / 2 * rows * f32b);
            r.free(up);
            let down = r.alloc(er);
            r.free(glu);
            down
        } else {
            let gate = offloaded_op(&mut r, cp(w, |w| w.gate), dense_ff * rows * f32b);
            let up = offloaded_op(&mut r, cp(w, |w| w.up), dense_ff * rows * f32b);
            r.free(fnorm);
            let glu = r.alloc(dense_ff * rows * f32b);
            r.free(gate);
            r.free(up);
            let wd = cp(w, |w| w.down).map(|b| r.alloc(b));
            device_layers_inputs!(il);
            let down = r.alloc(er);
            if let Some(x) = wd {
                r.free(x);
            }
            r.free(glu);
            offloaded_op(&mut r, cp(w, |w| w.post_ffn_norm), 0);
            down
        };
        // l_out = down + ffn_inp (in place into down)
        r.free(ffn_inp);
        inp_l = down;
        if let Some(pred) = predictions {
            // AltUp correction: the innovation repeated to 4 streams, the corrected streams
            let innovation = r.alloc(4 * e);
            let corrected = r.alloc(4 * e);
            r.free(innovation);
            if per_layer_input.is_none() {
                // first layer: the per-layer inputs projected from the scaled input, normed
                // (new), added to the gathered ones and made contiguous; kept for every layer
                // (bounded: the four are held at once, as llama.cpp's figure shows them)
                let proj = r.alloc(per_layer_bytes);
                let normed = r.alloc(per_layer_bytes);
                per_layer_input = Some(r.alloc(per_layer_bytes));
                r.free(proj);
                if let Some(sel) = per_layer_select.take() {
                    r.free(sel);
                }
                r.free(normed);
            }
            r.free(pred);
            if let Some(st) = altup_stack.take() {
                r.free(st);
            }
            let l_out = r.alloc(4 * e);
            r.free(corrected);
            altup_stack = Some(l_out);
        }
    }
    if let Some(sg) = seg
        && !sg.output
    {
        // the next layer's input norm runs here (it has no weight of the next device's)
        let _norm = r.alloc(e);
        return r.a.max;
    }
    // result_norm in place over the last layer's output, then the logits. With the last
    // hidden state a graph output it stays: the output rows are gathered from it (LateRows)
    // or the norm is a new tensor (KeptHidden).
    if !logits {
        return r.a.max;
    }
    if quirks.tail != Tail::Plain {
        let _rows = r.alloc(e_out);
        if let Some(o) = out_live.take() {
            r.free(o);
        }
    }
    // Qwen3.5's classifier head projects the output rows too (a graph output, its bias in
    // place)
    if let Some(n_cls) = model.keys.cls_out_width {
        let _embd_proj = r.alloc(n_cls.saturating_mul(outputs).saturating_mul(f32b));
    }
    let logits_bytes = model
        .vocab_size
        .saturating_mul(outputs)
        .saturating_mul(f32b);
    let _logits = r.alloc(logits_bytes);
    if arch == "chameleon" {
        // Image-token suppression (llama.cpp's models/chameleon.cpp): a 1-d tensor of the
        // 8,192 image-token logits, clamped into a new tensor, then `ggml_set_1d` writes it
        // into a copy of the logits (not in place), so two logits tensors are live at once.
        let img = r.alloc(CHAMELEON_IMAGE_TOKENS * f32b);
        let clamped = r.alloc(CHAMELEON_IMAGE_TOKENS * f32b);
        r.free(img);
        let _set = r.alloc(logits_bytes);
        r.free(clamped);
    }
    r.a.max
}

/// An op whose weight a device copies in (op offload): the copy, the op's output (none for an
/// op in place), then the copy freed.
fn offloaded_op(r: &mut Replay, weight: Option<u64>, out: u64) -> Live {
    let copy = weight.filter(|b| *b > 0).map(|b| r.alloc(b));
    let o = if out > 0 { r.alloc(out) } else { HELD };
    if let Some(c) = copy {
        r.free(c);
    }
    o
}

/// Which projections of one kind of feed-forward block (dense, routed experts or shared
/// expert) a split runs; `fused`: one gate-and-up projection of twice the width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FfnProjections {
    pub gate: bool,
    pub up: bool,
    pub down: bool,
    pub fused: bool,
}

impl FfnProjections {
    /// It runs at least one projection.
    pub fn any(self) -> bool {
        self.gate || self.up || self.down
    }
    /// It runs the gate, up and down projections (the whole block).
    pub fn all(self) -> bool {
        self.gate && self.up && self.down
    }
    /// Add another set's projections to this one.
    pub fn merge(&mut self, other: FfnProjections) {
        self.gate |= other.gate;
        self.up |= other.up;
        self.down |= other.down;
        self.fused |= other.fused;
    }
}

/// The dense FFN width n_ff the graph uses: the model's, or when unknown 6 × n_embd, above
/// every current model's ratio (errs high).
pub fn dense_ff_width(model: &ModelShape, ff: &FeedForward) -> u64 {
    if ff.length > 0 {
        ff.length
    } else {
        model.embedding_length.saturating_mul(6)
    }
}

/// One routed expert's width n_ff_exp the graph uses: the file's, or the dense width.
pub fn expert_ff_width(model: &ModelShape, ff: &FeedForward) -> u64 {
    if ff.expert_length > 0 {
        ff.expert_length
    } else {
        dense_ff_width(model, ff)
    }
}

/// The shared expert's (or experts') width: the file's, or the routed width times their count.
pub fn shared_ff_width(model: &ModelShape, ff: &FeedForward) -> u64 {
    if ff.shared_expert_length > 0 {
        ff.shared_expert_length
    } else {
        expert_ff_width(model, ff)
            .saturating_mul(u64::from(model.moe.map_or(0, |m| m.shared_experts)))
    }
}

/// The reserved prompt graph's high-water mark (`t` = min(n_ctx, n_ubatch) rows) on a backend
/// whose layers' routed experts run on another: the normed rows and the chosen experts are
/// copied out, and the k expert outputs copied back in, weighted in place and summed there,
/// as llama.cpp's scheduler splits a layer whose expert weights are in host memory on a
/// backend without op offload.
pub fn experts_elsewhere_peak(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
) -> u64 {
    let t = kv.allocated_context.min(g.ubatch).max(1);
    replay(model, ff, kv, g, t, t, true, None)
}

/// Chameleon's image tokens whose logits its graph suppresses (ids 4 to 8,196).
const CHAMELEON_IMAGE_TOKENS: u64 = 8_196 - 4;

/// deepseek4: what its compressed attention adds to the plain sliding-window layer the replay
/// follows, bounded from above (every tensor counted live at once): the graph inputs (the raw,
/// CSA, HCA and indexer KQ masks, per stream n_kv × rows), and the larger of a CSA layer (the
/// indexer's scores, the top-k mask filled, scattered and added, the raw + CSA mask and key
/// concatenations, and without flash attention the KQ scores and their softmax over the CSA
/// cells, beyond the raw window's the replay already holds) and an HCA layer (the same without
/// the indexer); plus the four hyper-connection
/// residual streams (residual, pre and post mixes of 4 × n_embd f32 per row).
fn dsv4_attention_bound(model: &ModelShape, kv: &KvCache, g: &GraphSettings, t: u64) -> u64 {
    use super::kv::CacheKind;
    let cells = |k: CacheKind| {
        kv.caches
            .iter()
            .find(|c| c.kind == k)
            .map_or(0, |c| c.cells)
    };
    let n_raw = cells(CacheKind::Swa);
    let n_csa = cells(CacheKind::Compressed { ratio: 4 });
    let n_hca = cells(CacheKind::Compressed { ratio: 128 });
    let n_lid = cells(CacheKind::Indexer);
    let f32b = 4u64;
    // KQ masks are f16 with flash attention, else f32; the fused indexer's mask is f16.
    let me = if g.flash_attn { 2 } else { f32b };
    let heads = model
        .layers
        .iter()
        .map(|l| u64::from(l.head_count))
        .max()
        .unwrap_or(0);
    let key = model
        .layers
        .iter()
        .map(|l| u64::from(l.head_count_kv) * u64::from(l.key_length))
        .max()
        .unwrap_or(0);
    let rows = |n: u64, elem: u64| n.saturating_mul(t).saturating_mul(elem);
    let inputs = rows(n_raw + n_csa + n_hca, me).saturating_add(rows(n_lid, 2));
    let scores = |n: u64| {
        if g.flash_attn {
            0
        } else {
            rows(n, f32b).saturating_mul(heads).saturating_mul(2)
        }
    };
    let csa = if n_csa > 0 {
        rows(n_lid, f32b)
            + rows(n_csa, me) * 2
            + rows(n_raw + n_csa, me)
            + (n_raw + n_csa) * key * f32b
            + scores(n_csa)
    } else {
        0
    };
    let hca = if n_hca > 0 {
        rows(n_raw + n_hca, me) + (n_raw + n_hca) * key * f32b + scores(n_hca)
    } else {
        0
    };
    let hc = 3 * 4 * model.embedding_length * t * f32b;
    inputs.saturating_add(csa.max(hca)).saturating_add(hc)
}

/// The compute and output buffers llama.cpp's CPU backend reserves for `model` with the cache
/// `kv` (its allocated cells set n_kv) under `g`.
pub fn buffers(
    model: &ModelShape,
    ff: &FeedForward,
    kv: &KvCache,
    g: &GraphSettings,
) -> RuntimeBuffers {
    // Flash attention forced off (grok): the graph holds the KQ scores.
    let forced;
    let g = if g.flash_attn && !model.effective_flash_attn(g.flash_attn) {
        forced = GraphSettings {
            flash_attn: false,
            ..*g
        };
        &forced
    } else {
        g
    };
    // deepseek4 keeps one cache stream per sequence even with -kvu: its KQ masks span one
    // stream's cells.
    let per_seq;
    let compressed_kv = super::arch::lookup(&model.architecture).is_some_and(|a| a.compressed_kv);
    let g = if compressed_kv && g.kv_unified {
        per_seq = GraphSettings {
            kv_unified: false,
            ..*g
        };
        &per_seq
    } else {
        g
    };
    let b = g.sequences.max(1);
    let t = kv.allocated_context.min(g.ubatch).max(1);
    // The prompt graph (t rows, t outputs) and the generation graph (one row per sequence);
    // the buffer is the larger of the two reservations.
    let pp = replay(model, ff, kv, g, t, t, false, None);
    let tg = replay(model, ff, kv, g, b.min(t), b.min(t), false, None);
    let extra = if compressed_kv {
        dsv4_attention_bound(model, kv, g, t)
    } else {
        0
    };
    RuntimeBuffers {
        output_bytes: output_bytes(model, b),
        compute_bytes: pp.max(tg).saturating_add(extra),
        graph_tokens: t,
        ffn_estimated: ff.length == 0 && rwkv7_ffn_width(model).is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::cache::CacheType;
    use crate::core::kv::{self, CacheSettings};
    use crate::core::model::{ArchFigures, ModelShape, PerLayer};
    use crate::core::units::{MIB, Provenance};

    fn figures(arch: &str) -> ArchFigures {
        ArchFigures {
            architecture: arch.into(),
            native_context: Some(40_960),
            ..crate::core::model::qwen3_32b_figures()
        }
    }

    fn run(m: &ModelShape, ff: FeedForward, s: &CacheSettings) -> RuntimeBuffers {
        let kv = kv::cache(m, s);
        buffers(
            m,
            &ff,
            &kv,
            &GraphSettings {
                ubatch: s.ubatch,
                sequences: s.sequences,
                flash_attn: s.flash_attn,
                kv_unified: s.kv_unified,
            },
        )
    }

    fn mib(b: u64) -> f64 {
        b as f64 / MIB as f64
    }

    #[test]
    fn allocator_reuses_holes_best_fit() {
        let mut a = DynAlloc::new();
        let x = a.alloc(100);
        let y = a.alloc(64);
        a.free(x, 100);
        // 100 aligns to 128; a 96-byte tensor fits the hole at 0
        assert_eq!(a.alloc(96), 0);
        assert_eq!(y, 128);
        assert_eq!(a.max, 192);
        // freeing next to a free block merges them
        a.free(0, 96);
        a.free(y, 64);
        assert_eq!(a.chunks[0].blocks.len(), 1);
    }

    /// Vulkan's 1 GiB chunks (llama.cpp's host buffer at ub 2048 on the Llama-3.1-8B shape:
    /// the inputs' 256.08 MiB in the first chunk, the 1,002 MiB logits in a second).
    #[test]
    fn allocator_opens_a_chunk_for_what_does_not_fit() {
        let mib = 1u64 << 20;
        let mut a = DynAlloc::chunked(1024 * mib);
        let inputs = a.alloc(256 * mib);
        let _kept = a.alloc(32 * mib);
        a.free(inputs, 256 * mib);
        // 1,002 MiB fit neither the 256 MiB hole nor the 736 MiB left after `kept`
        let logits = a.alloc(1002 * mib);
        assert_eq!(logits >> CHUNK_SHIFT, 1);
        assert_eq!(a.max, (256 + 32 + 1002) * mib);
        // a tensor over the chunk size opens a chunk of its own size; once freed, the chunk
        // that then wastes least takes the next one
        let kq = a.alloc(2048 * mib);
        assert_eq!(kq >> CHUNK_SHIFT, 2);
        a.free(kq, 2048 * mib);
        a.free(logits, 1002 * mib);
        assert_eq!(a.alloc(1500 * mib) >> CHUNK_SHIFT, 2);
        assert_eq!(a.max, (288 + 1002 + 2048) * mib);
    }

    #[test]
    fn qwen3_32b_fa_on_32k() {
        // llama.cpp (CPU, -fa on, -ub 512, -c 32768): compute 388.77 MiB, output 0.58 MiB.
        let m = ModelShape::from_figures("q", &figures("qwen3"), Provenance::File).unwrap();
        let ff = FeedForward {
            length: 25_600,
            ..Default::default()
        };
        let s = CacheSettings {
            context: 32_768,
            ..CacheSettings::default()
        };
        let b = run(&m, ff, &s);
        assert_eq!(b.output_bytes, 607_744);
        let c = mib(b.compute_bytes);
        // llama-fit-params (build 11434) on a header-only file of this shape: 407,654,400 bytes.
        assert_eq!(b.compute_bytes, 407_654_400, "{c}");
    }

    #[test]
    fn the_compute_buffer_can_fall_as_context_grows_as_in_llama_cpp() {
        // llama-fit-params (build 11434, CPU, -fa on, -ub 512) on the Qwen3-32B header: the
        // allocator's best fit packs the larger graph tighter, so the reservation falls
        // from 462,442,496 bytes at 86,157 tokens to 457,986,048 at 91,905.
        let m = ModelShape::from_figures("q", &figures("qwen3"), Provenance::File).unwrap();
        let ff = FeedForward {
            length: 25_600,
            ..Default::default()
        };
        let at = |n: u64| {
            run(
                &m,
                ff,
                &CacheSettings {
                    context: n,
                    ..CacheSettings::default()
                },
            )
            .compute_bytes
        };
        assert_eq!(at(86_157), 462_442_496);
        assert_eq!(at(91_905), 457_986_048);
    }

    #[test]
    fn gemma3_270m_logits_dominate() {
        // llama.cpp: 551.28 MiB (262,144 × 512 f32 logits = 512 MiB of it).
        let mut f = figures("gemma3");
        f.layers = 18;
        f.head_count = PerLayer::Uniform(4);
        f.head_count_kv = PerLayer::Uniform(1);
        f.key_length = Some(256);
        f.value_length = Some(256);
        f.embedding_length = 640;
        f.vocab_size = 262_144;
        f.sliding_window = Some(512);
        f.tied_embeddings = true;
        let m = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        let ff = FeedForward {
            length: 2048,
            ..Default::default()
        };
        let s = CacheSettings {
            context: 32_768,
            ..CacheSettings::default()
        };
        let b = run(&m, ff, &s);
        let c = mib(b.compute_bytes);
        // llama-fit-params on the real gemma-3-270m Q4_K_M file: 578,058,240 and 1,048,576 bytes.
        assert_eq!(b.compute_bytes, 578_058_240, "{c}");
        assert_eq!(b.output_bytes, 1_048_576);
    }

    #[test]
    fn llama31_8b_fa_off_ub2048() {
        // llama.cpp: 8,656 MiB (Q4_0, -c 32768, -ub 2048, -fa off).
        let (m, ff) = llama31_8b();
        let s = CacheSettings {
            context: 32_768,
            ubatch: 2048,
            flash_attn: false,
            ..CacheSettings::default()
        };
        let b = run(&m, ff, &s);
        let c = mib(b.compute_bytes);
        // llama-fit-params on a header-only file of this shape: 9,076,539,392 bytes.
        assert_eq!(b.compute_bytes, 9_076_539_392, "{c}");
    }

    /// The Llama-3.1-8B shape of the placement fixtures: 32 layers, n_embd 4,096, 32 query and
    /// 8 KV heads of 128, n_ff 14,336, a 128,256-token vocabulary.
    fn llama31_8b() -> (ModelShape, FeedForward) {
        let mut f = figures("llama");
        f.layers = 32;
        f.head_count = PerLayer::Uniform(32);
        f.head_count_kv = PerLayer::Uniform(8);
        f.embedding_length = 4096;
        f.vocab_size = 128_256;
        let m = ModelShape::from_figures("l", &f, Provenance::File).unwrap();
        let ff = FeedForward {
            length: 14_336,
            ..Default::default()
        };
        (m, ff)
    }

    /// The cache and graph of `m` at 32,768 tokens, one sequence, as the Vulkan cases below run.
    fn at_32k(m: &ModelShape, ubatch: u64, flash_attn: bool) -> (kv::KvCache, GraphSettings) {
        let s = CacheSettings {
            context: 32_768,
            ubatch,
            flash_attn,
            ..CacheSettings::default()
        };
        let g = GraphSettings {
            ubatch,
            sequences: 1,
            flash_attn,
            kv_unified: false,
        };
        (kv::cache(m, &s), g)
    }

    /// Op offload: a Vulkan device running every layer of the Llama-3.1-8B shape (Q4_K) whose
    /// weights stay in host memory (`-ngl 0`), at 32,768 tokens with flash attention. llama.cpp
    /// b11434's Vulkan device on llvmpipe reserves 209,719,296 bytes at ub 512 (the host cache's
    /// K and V views and the mask copied in for the first layer's attention) and 704,659,456 at
    /// ub 2048 (the FFN's activations in the holes the weight copies leave).
    #[test]
    fn op_offload_replays_llama_cpp_vulkan_device() {
        let (m, ff) = llama31_8b();
        // Q4_K: 144 bytes per 256 weights; the norms f32
        let q4k = |rows: u64, cols: u64| rows * cols / 256 * 144;
        let w = OffloadedWeights {
            attn_norm: 4096 * 4,
            q: q4k(4096, 4096),
            k: q4k(1024, 4096),
            v: q4k(1024, 4096),
            o: q4k(4096, 4096),
            ffn_norm: 4096 * 4,
            gate: q4k(14_336, 4096),
            up: q4k(14_336, 4096),
            down: q4k(4096, 14_336),
            ..Default::default()
        };
        let peak = |ubatch: u64, offloaded: Vec<Option<OffloadedWeights>>| {
            let host_prefix = offloaded.iter().take_while(|w| w.is_some()).count();
            let (kv, g) = at_32k(&m, ubatch, true);
            let seg = Segment {
                first: true,
                offloaded,
                host_prefix,
                max_chunk: Some(1 << 30),
                ..Segment::over(0..32)
            };
            segment_peak(&m, &ff, &kv, &g, &seg)
        };
        assert_eq!(peak(512, vec![Some(w); 32]), 209_719_296);
        assert_eq!(peak(2048, vec![Some(w); 32]), 704_659_456);
        // -ngl 20: the first 13 layers' weights and cache in host memory, the rest on the device
        let mut ngl20 = vec![Some(w); 13];
        ngl20.resize(32, None);
        assert_eq!(peak(512, ngl20), 209_719_296);
        // without op offload the same device needs neither the copies nor the cache views
        assert!(peak(512, Vec::new()) < 200 << 20);
    }

    /// A Vulkan device with llvmpipe's 128 MiB storage-buffer range cannot run the attention
    /// without flash attention (2 GiB of KQ scores at 32,768 tokens), so the host runs it, and
    /// the output projection (its weight in host memory); its pinned buffer is allocated in
    /// 1 GiB chunks. llama.cpp b11434 (Llama-3.1-8B shape, `-ngl 99`): host 2,369,798,144 bytes
    /// (the KQ scores in a chunk of their own beside 212 MiB of inputs and copies), device
    /// 125,839,360; with flash attention at ub 2048 the host holds only the output stage:
    /// 1,319,190,528 (the inputs' 256 MiB chunk, the 1,002 MiB logits in a second).
    #[test]
    fn attention_on_the_host_in_vulkan_chunks() {
        let (m, ff) = llama31_8b();
        let run = |ubatch: u64, flash_attn: bool, attention: bool| {
            let (kv, g) = at_32k(&m, ubatch, flash_attn);
            let host = host_ffn_peak(
                &m,
                &kv,
                &g,
                &HostSplits {
                    layer_device: &[0; 32],
                    on_host: &[],
                    kinds: &[],
                    ff,
                    attention: &[attention; 32],
                    cache_here: &[false; 32],
                    output: true,
                    max_chunk: Some(1 << 30),
                },
            );
            let seg = Segment {
                first: true,
                attn_elsewhere: vec![attention; 32],
                max_chunk: Some(1 << 30),
                ..Segment::over(0..32)
            };
            (host, segment_peak(&m, &ff, &kv, &g, &seg))
        };
        assert_eq!(run(512, false, true), (2_369_798_144, 125_839_360));
        assert_eq!(run(2048, true, false).0, 1_319_190_528);
        // what decides it: the attention's largest tensor, the KQ scores (32 heads × 32,768
        // cells × 512 rows f32)
        let (kv, g) = at_32k(&m, 512, false);
        assert_eq!(attention_tensor_max(&m, &kv, &g), 2 << 30);
    }

    #[test]
    fn no_architecture_errs_low_and_upper_bounds_say_why() {
        assert_eq!(compute_status("llama"), ComputeStatus::Exact);
        assert_eq!(compute_status("deepseek2"), ComputeStatus::Exact);
        assert!(matches!(
            compute_status("gemma3n"),
            ComputeStatus::UpperBound(why) if why.contains("per-layer")
        ));
        assert!(compute_upper_bound("rwkv6").is_some());
        assert_eq!(compute_status("rwkv7"), ComputeStatus::Exact);
        for a in crate::core::arch::ARCHITECTURES {
            if let ComputeStatus::UpperBound(why) = a.compute {
                assert!(!why.is_empty(), "{}", a.name);
            }
        }
    }

    #[test]
    fn grok_runs_without_flash_attention_whatever_is_asked() {
        let mut f = figures("grok");
        f.layers = 4;
        let m = ModelShape::from_figures("g", &f, Provenance::File).unwrap();
        let on = CacheSettings {
            context: 8192,
            flash_attn: true,
            ..CacheSettings::default()
        };
        let off = CacheSettings {
            flash_attn: false,
            ..on
        };
        let ff = FeedForward {
            length: 4 * 5120,
            ..Default::default()
        };
        // the KQ scores (8,192 cells × 512 rows × 64 heads f32 = 1 GiB) are there either way
        let b = run(&m, ff, &on).compute_bytes;
        assert!(b >= 8192 * 512 * 64 * 4, "{b}");
        assert_eq!(b, run(&m, ff, &off).compute_bytes);
    }

    #[test]
    fn compute_grows_with_context_without_flash_attention() {
        let mut f = figures("llama");
        f.layers = 4;
        let m = ModelShape::from_figures("l", &f, Provenance::File).unwrap();
        let mut s = CacheSettings {
            context: 4096,
            flash_attn: false,
            type_v: CacheType::F16,
            ..CacheSettings::default()
        };
        let a = run(&m, FeedForward::default(), &s).compute_bytes;
        s.context = 8192;
        let b = run(&m, FeedForward::default(), &s).compute_bytes;
        assert!(b > a);
    }
}
