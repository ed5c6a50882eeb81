"""The synthetic models: every architecture of the pinned llama.cpp, tiny, with its structural
quirks set explicitly; plus a few realistic-size shapes. `resolve.py` completes the tensor
list and any further keys against llama.cpp itself, so a spec here states only what the
test is about (layer patterns, per-layer head counts, SSM sizes, MLA, experts, MTP layers).

Priority (the order specs are listed and resolved in):
  1 families issue 8 names, 2 newest families, 3 mainstream, 4 the rest, 5 realistic shapes.
"""
from __future__ import annotations

from synth import Spec

MOE_ARCHS = {
    "qwen2moe", "qwen3moe", "qwen3next", "qwen35moe", "qwen3vlmoe", "olmoe", "phimoe", "dbrx", "arctic",
    "deepseek", "deepseek2", "deepseek2-ocr", "deepseek32", "deepseek4", "glm4moe", "glm-dsa", "grok",
    "granitemoe", "granitehybrid", "jamba", "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note",
    "afmoe", "ernie4_5-moe", "hunyuan-moe", "gpt-oss", "lfm2moe", "smallthinker", "llada-moe", "grovemoe",
    "minimax-m2", "minimax-m3", "minimax-01", "mistral4", "kimi-linear", "kimi-k3", "glm5-next", "nemotron_h_moe",
    "exaone-moe", "cohere2moe", "llama4", "nomic-bert-moe", "mimo2", "step35", "rnd1", "laguna", "hy_v3",
    "hy_v4", "qwen4exp", "spark2_5", "muse-glimmer", "jina-bert-v3", "clef", "graniteswitch", "talkie",
    "mellum", "maple",
}

# MLA models: the latent cache (kv_lora_rank + rope dims) — the keys the deepseek2 family reads
MLA_KV = {"attention.key_length": 96, "attention.value_length": 64, "attention.key_length_mla": 64,
          "attention.value_length_mla": 32, "attention.q_lora_rank": 64, "attention.kv_lora_rank": 64,
          "rope.dimension_count": 32, "attention.indexer.key_length": 64}
MLA_ARCHS = {"deepseek32", "glm-dsa", "mistral4", "kimi-k3", "glm5-next", "dots3note"}
# low-rank attention without a latent cache: K = nope + rope per head, one KV head per query head
LORA_KV = {"attention.key_length": 64, "attention.value_length": 32, "attention.q_lora_rank": 64,
           "attention.kv_lora_rank": 64, "rope.dimension_count": 32, "attention.head_count_kv": 4}
LORA_ARCHS = {"minicpm3", "plm"}


# Families whose every FFN tensor is optional in llama.cpp's loader (a layer without them is
# built without an FFN, so a dry run succeeds and discovery never asks for them): the specs
# name them (`Spec.want_optional`) so the fixtures carry the FFN the real checkpoints have:
# a dense FFN on layer 0 and routed experts (router, its bias, gate/up/down experts, and the
# shared expert where the family has one) on every later layer.
OPTIONAL_FFN = {"hy_v3": True, "mimo2": False, "step35": True}  # arch -> has a shared expert


def optional_ffn(arch: str) -> list[str]:
    moe = [r"blk\.[1-9]\d*\.ffn_gate_inp\.weight", r"blk\.[1-9]\d*\.ffn_(gate|up|down)_exps\.weight",
           r"blk\.[1-9]\d*\.exp_probs_b(\.bias)?"]
    if OPTIONAL_FFN[arch]:
        moe.append(r"blk\.[1-9]\d*\.ffn_(gate|up|down)_shexp\.weight")
    return [r"blk\.0\.ffn_(gate|up|down)\.weight"] + moe


# families whose graph assumes as many KV heads as query heads
NO_GQA = {"olmoe", "dots1", "t5", "t5encoder"}


def generic(arch: str, priority: int) -> Spec:
    """A tiny model of any architecture: structural keys for the families that need them."""
    kv: dict = {}
    if arch in MLA_ARCHS:
        kv.update(MLA_KV)
        kv["attention.head_count_kv"] = 1
    if arch == "glm5-next":
        # nope-only MLA: no rotary part in the latent
        kv.update({"rope.dimension_count": 0, "attention.key_length": 64, "attention.key_length_mla": 32})
    if arch == "qwen4exp":
        return qwen4exp_tiny(priority)
    if arch == "gemma4-assistant":
        kv.update({"embedding_length_out": 256, "attention.sliding_window": 64})
    if arch in LORA_ARCHS:
        kv.update(LORA_KV)
    if arch == "deepseek2-ocr":
        kv.update({"attention.head_count_kv": 4, "attention.kv_lora_rank": 64, "rope.dimension_count": 32})
    if arch in NO_GQA:
        kv["attention.head_count_kv"] = 4
    if arch == "deepseek4":
        return deepseek4_tiny(priority)
    if arch == "bailingmoe3":
        # MLA attention where head_count_kv > 0, Kimi delta attention (KDA) elsewhere
        kv.update(MLA_KV)
        kv.pop("attention.indexer.key_length")
        kv.update({"kda.head_dim": 32, "ssm.conv_kernel": 4, "expert_shared_count": 1,
                   "leading_dense_block_count": 1})
        return base(arch, n_head_kv=[0, 1, 0, 1], kv=kv, priority=priority,
                    notes="KDA on layers 0 and 2 (head_count_kv 0), MLA on 1 and 3")
    if arch == "hy_v4":
        # MLA + DSA indexer on the layers `indexer.types` marks (only with a top-k)
        kv.update(MLA_KV)
        kv.update({"attention.head_count_kv": 1, "attention.indexer.head_count": 4,
                   "attention.indexer.key_length": 64, "attention.indexer.top_k": 16,
                   "attention.indexer.types": [True, False, True, False], "hyper_connection.count": 4,
                   "expert_shared_count": 1})
        return base(arch, kv=kv, priority=priority, notes="indexer on layers 0 and 2")
    if arch == "dots3note":
        # MLA on full layers, MLA with its own rank on sliding layers, DSA indexer on `indexer.types`
        kv.update({"attention.sliding_window": 64,
                   "attention.sliding_window_pattern": [False, True, True, False],
                   "attention.kv_lora_rank_swa": 32, "attention.key_length_mla_swa": 64,
                   "attention.value_length_mla_swa": 32, "attention.key_length_swa": 64,
                   "attention.value_length_swa": 32,
                   "attention.indexer.head_count": 4, "attention.indexer.key_length": 64,
                   "attention.indexer.top_k": 16, "attention.indexer.types": [True, False, False, True],
                   "expert_shared_count": 1, "leading_dense_block_count": 1})
        return base(arch, kv=kv, priority=priority,
                    notes="full MLA layers 0 and 3 with indexers, sliding MLA layers 1 and 2 (rank 32)")
    if arch == "glm5-next":
        kv["hyper_connection.count"] = 4  # mHC is only implemented for hc_mult 4
    if arch == "chameleon":
        # its graph writes -inf over the logits of image tokens 4..8196: the vocabulary must hold them
        return base(arch, n_vocab=8448, priority=priority, notes="vocabulary 8448 (image tokens 4..8196)")
    if arch == "hrm_text":
        # the block count is the expanded slot count: layers_per_stack × h_cycles × (l_cycles + 1)
        return base(arch, n_layer=4, kv={"hrm.layers_per_stack": 1, "hrm.h_cycles": 2, "hrm.l_cycles": 1},
                    priority=priority, notes="1 layer per stack, 2 H cycles, 1 L cycle: 4 cache slots")
    if arch == "wavtokenizer-dec":
        return wavtokenizer_dec("wavtokenizer-dec-tiny", 64, 130, 128, 6, 2, 512, priority, False,
                                "posnet 6 and convnext 2 blocks, 128 wide")
    return base(arch, kv=kv, priority=priority)


def wavtokenizer_dec(name: str, features: int, out: int, width: int, posnet: int, convnext: int,
                     n_vocab: int, priority: int, realistic: bool, notes: str) -> Spec:
    """WavTokenizer's decoder (an audio codec, no attention cache): a token embedding
    `features` wide (llama.cpp's n_embd), a posnet and a convnext stack `width` wide, and an
    `out`-wide output head (embedding_length)."""
    return base("wavtokenizer-dec", name, n_layer=max(posnet, convnext), n_embd=out, n_head=1,
                n_head_kv=1, head_dim=out, n_ff=width * 3, n_vocab=n_vocab, n_ctx_train=8192,
                priority=priority, realistic=realistic, default_2d="F16", notes=notes,
                kv={"features_length": features, "posnet.embedding_length": width, "posnet.block_count": posnet,
                    "convnext.embedding_length": width, "convnext.block_count": convnext,
                    "attention.layer_norm_epsilon": 1e-6, "attention.group_norm_epsilon": 1e-6,
                    "attention.group_norm_groups": 32, "attention.head_count_kv": None,
                    "attention.layer_norm_rms_epsilon": None})


def qwen4exp_tiny(priority: int) -> Spec:
    """Qwen4-exp: gated delta net on 3 of 4 layers, QSA indexer with pooled keys (compress ratio 4)
    on the attention layers, and one per-layer-embedding (PLE) module on a linear layer whose
    convolution history is an extra recurrent row ((kernel − 1) × ngram × hc × n_embd f32)."""
    n_layer = 8
    s = base("qwen4exp", n_layer=n_layer, priority=priority,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 4, "rope.dimension_sections": [4, 6, 6, 0], "rope.dimension_count": 32,
                 "hyper_connection.count": 2, "hyper_connection.low_rank": 16,
                 "attention.indexer.head_count": 2, "attention.indexer.key_length": 32,
                 "attention.indexer.top_k": 64, "attention.compress_ratios": [0, 0, 0, 4, 0, 0, 0, 4],
                 "ple.layers": [1], "ple.ngram_size": 3, "ple.heads_per_ngram": 2, "ple.conv_kernel": 4,
                 "ple.layer_multipliers": [3, 5, 7], "ple.head_offsets": [0, 64, 128, 192],
                 "ple.head_vocab_sizes": [64, 64, 64, 64], "ple.eos_token_id": 1,
                 "embedding_length_per_layer_input": 32},  # PLE heads × this = n_embd
             notes="8 layers (attention every 4th), QSA ratio 4 on the attention layers, one PLE module on layer 1")
    s.kv_types["qwen4exp.ple.layer_multipliers"] = "arr_u64"
    s.kv_types["qwen4exp.ple.head_offsets"] = "arr_u64"
    s.kv_types["qwen4exp.ple.head_vocab_sizes"] = "arr_u64"
    return s


def deepseek4_tiny(priority: int) -> Spec:
    """DeepSeek-V4: one KV head (K only), a sliding-window raw cache on every layer, compressed
    caches per layer ratio (4 = CSA with its lightning indexer, 128 = HCA, 0 = none) and one
    trailing MTP layer (its probe tensor must be present or llama.cpp drops the MTP layer)."""
    n_main = 6
    ratios = [0, 4, 128, 4, 128, 4] + [0]  # the MTP layer has no compressor
    s = base("deepseek4", n_layer=n_main + 1, n_head=4, n_head_kv=1, head_dim=128, priority=priority,
             kv={"expert_gating_func": 4,  # its loader expects sqrt-softplus scoring
                 "hyper_connection.count": 4,  # mHC is only implemented for hc_mult 4
                 "hyper_connection.sinkhorn_iterations": 3, "hyper_connection.epsilon": 1e-6,
                 "attention.sliding_window": 64, "attention.compress_ratios": ratios,
                 "attention.q_lora_rank": 64, "attention.output_group_count": 2,
                 "attention.output_lora_rank": 32, "attention.compress_rope_freq_base": 160000.0,
                 "attention.indexer.head_count": 4, "attention.indexer.key_length": 64,
                 "attention.indexer.top_k": 16, "expert_shared_count": 1, "hash_layer_count": 1,
                 "nextn_predict_layers": 1, "rope.dimension_count": 32},
             notes="6 layers with compress ratios 0,4,128,4,128,4 plus one MTP (nextn) layer")
    s.tensors[f"blk.{n_main}.nextn.eh_proj.weight"] = [2 * 128, 128]
    s.ttypes["blk.0.ffn_gate_tid2eid.weight"] = "I32"  # hash routing: token → expert ids (get_rows)
    return s


def base(arch: str, name: str | None = None, *, n_layer: int = 4, n_embd: int = 128, n_head: int = 4,
         n_head_kv: int | list[int] = 2, head_dim: int = 32, n_ff: int | list[int] = 256, n_vocab: int = 512,
         n_ctx_train: int = 8192, moe: bool | None = None, n_expert: int = 4, n_expert_used: int = 2,
         n_ff_exp: int = 32, kv: dict | None = None, priority: int = 4, notes: str = "",
         default_2d: str = "F16", realistic: bool = False, family: str | None = None) -> Spec:
    name = name or f"{arch}-tiny"
    k: dict = {
        "general.architecture": arch,
        "general.name": name,
        "general.type": "model",
        "tokenizer.ggml.model": "none",
        f"{arch}.vocab_size": n_vocab,
        f"{arch}.block_count": n_layer,
        f"{arch}.context_length": n_ctx_train,
        f"{arch}.embedding_length": n_embd,
        f"{arch}.feed_forward_length": n_ff,
        f"{arch}.attention.head_count": n_head,
        f"{arch}.attention.head_count_kv": n_head_kv,
        f"{arch}.attention.layer_norm_rms_epsilon": 1e-6,
    }
    if head_dim * n_head != n_embd:
        k[f"{arch}.attention.key_length"] = head_dim
        k[f"{arch}.attention.value_length"] = head_dim
    if moe is None:
        moe = arch in MOE_ARCHS
    if moe:
        k[f"{arch}.expert_count"] = n_expert
        k[f"{arch}.expert_used_count"] = n_expert_used
        k[f"{arch}.expert_feed_forward_length"] = n_ff_exp
    for key, value in (kv or {}).items():
        full = key if key.startswith(("general.", "tokenizer.")) else f"{arch}.{key}"
        if value is None:
            k.pop(full, None)
        else:
            k[full] = value
    if arch in OPTIONAL_FFN:
        if OPTIONAL_FFN[arch]:
            k.setdefault(f"{arch}.expert_shared_feed_forward_length", n_ff_exp)
        notes = (notes + "; " if notes else "") + "dense FFN on layer 0, routed experts on the others"
    s = Spec(name=name, arch=arch, kv=k, default_2d=default_2d, realistic=realistic, notes=notes,
             family=family or arch, want_optional=optional_ffn(arch) if arch in OPTIONAL_FFN else [])
    s.dims = {"n_layer": n_layer, "n_embd": n_embd, "n_head": n_head,
              "n_head_kv": n_head_kv if isinstance(n_head_kv, int) else max(n_head_kv),
              "head_dim": head_dim, "n_ff": n_ff if isinstance(n_ff, int) else max(n_ff), "n_vocab": n_vocab,
              "n_ctx_train": n_ctx_train, "n_expert": n_expert, "n_expert_used": n_expert_used,
              "n_ff_exp": n_ff_exp, "priority": priority}
    return s


def specs_priority1() -> list[Spec]:
    P = 1
    out = [
        base("llama", priority=P),
        base("qwen3", priority=P),
        base("gemma3", n_layer=8, kv={"attention.sliding_window": 64}, priority=P,
             notes="pattern 6 hard-coded by llama.cpp (5 sliding, 1 full)"),
        base("qwen3next", n_layer=8, n_head=4, n_head_kv=2, head_dim=32, priority=P,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 4, "expert_shared_feed_forward_length": 32, "rope.dimension_count": 16},
             notes="every 4th layer attention (full_attention_interval default 4), the rest gated delta-net"),
        base("gemma3n", n_layer=30, n_head=4, n_head_kv=2, priority=P,
             kv={"attention.sliding_window": 64, "altup.active_idx": 0, "altup.num_inputs": 4,
                 "embedding_length_per_layer_input": 16, "attention.shared_kv_layers": 10},
             notes="30 layers (E2B-like): only the first 20 hold a KV cache (hard-coded), pattern 5"),
        base("qwen35", n_layer=8, head_dim=32, priority=P,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 4, "rope.dimension_sections": [4, 4, 0, 0], "rope.dimension_count": 16}),
        base("qwen35moe", n_layer=8, head_dim=32, priority=P,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 4, "rope.dimension_sections": [4, 4, 0, 0], "rope.dimension_count": 16,
                 "expert_shared_feed_forward_length": 32}),
        base("kimi-linear", n_layer=8, n_head_kv=[0, 0, 0, 1, 0, 0, 0, 1], n_head=4, priority=P,
             kv={"attention.key_length_mla": 64, "attention.value_length_mla": 32, "attention.kv_lora_rank": 64,
                 "attention.key_length": 96, "attention.value_length": 64,
                 "ssm.conv_kernel": 4, "kda.head_dim": 32, "expert_shared_count": 1, "expert_gating_func": 2,
                 "leading_dense_block_count": 1, "rope.dimension_count": 32},
             notes="KDA (recurrent) layers where head_count_kv is 0; MLA attention elsewhere"),
        base("rwkv6", n_layer=4, n_head=0, n_head_kv=0, priority=P,
             kv={"wkv.head_size": 32, "time_mix_extra_dim": 16, "time_decay_extra_dim": 32,
                 "rescale_every_n_layers": 6, "attention.layer_norm_epsilon": 1e-5,
                 "attention.layer_norm_rms_epsilon": None, "attention.key_length": None,
                 "attention.value_length": None}),
        base("rwkv6qwen2", n_layer=4, n_head=4, n_head_kv=2, priority=P,
             kv={"wkv.head_size": 32, "time_mix_extra_dim": 16, "time_decay_extra_dim": 32,
                 "token_shift_count": 1}),
        base("rwkv7", n_layer=4, n_head=0, n_head_kv=0, priority=P,
             kv={"wkv.head_size": 32, "attention.decay_lora_rank": 16, "attention.iclr_lora_rank": 16,
                 "attention.value_residual_mix_lora_rank": 16, "attention.gate_lora_rank": 16,
                 "attention.layer_norm_epsilon": 1e-5, "attention.layer_norm_rms_epsilon": None,
                 "attention.key_length": None, "attention.value_length": None}),
        base("arwkv7", n_layer=4, n_head=4, n_head_kv=2, priority=P,
             kv={"wkv.head_size": 32, "attention.decay_lora_rank": 16, "attention.iclr_lora_rank": 16,
                 "attention.value_residual_mix_lora_rank": 16, "attention.gate_lora_rank": 16,
                 "token_shift_count": 1}),
        base("nemotron_h", n_layer=6, n_head=4, n_head_kv=[0, 0, 2, 0, 0, 0], n_ff=[0, 128, 0, 0, 128, 0],
             priority=P,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 2, "attention.layer_norm_epsilon": 1e-5},
             notes="M, MLP, attention, M, MLP, M: recurrent only where no KV heads and no FFN"),
        base("nemotron_h_moe", n_layer=6, n_head=4, n_head_kv=[0, 0, 2, 0, 0, 0], n_ff=[0, 128, 0, 0, 128, 0],
             priority=P,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 128, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 2, "attention.layer_norm_epsilon": 1e-5,
                 "expert_shared_feed_forward_length": 32, "expert_shared_count": 1}),
        base("lfm2", n_layer=6, n_head_kv=[0, 0, 2, 0, 0, 2], priority=P,
             kv={"shortconv.l_cache": 3}, notes="short-convolution layers where head_count_kv is 0"),
        base("lfm2moe", n_layer=6, n_head_kv=[0, 0, 2, 0, 0, 2], priority=P,
             kv={"shortconv.l_cache": 3, "leading_dense_block_count": 1}),
        base("afmoe", n_layer=8, priority=P, kv={"attention.sliding_window": 64, "leading_dense_block_count": 1,
                                                 "expert_shared_count": 1}),
        base("exaone4", n_layer=8, priority=P, kv={"attention.sliding_window": 64},
             notes="llama.cpp applies a sliding pattern only to the 64-layer (32B) exaone4"),
        base("exaone4", "exaone4-64l-tiny", n_layer=64, priority=P, kv={"attention.sliding_window": 64},
             notes="64 layers: llama.cpp hard-codes n_swa 4096 and pattern 4 (3 sliding, 1 full)"),
        base("exaone-moe", n_layer=8, priority=P, kv={"attention.sliding_window": 64, "expert_shared_count": 1,
                                                      "leading_dense_block_count": 1}),
        base("smallthinker", n_layer=8, priority=P, kv={"attention.sliding_window": 64}),
        base("plamo3", n_layer=8, priority=P, kv={"attention.sliding_window": 64}),
        base("mimo2", n_layer=8, priority=P, kv={"attention.sliding_window": 64}),
        base("glm4moe", n_layer=5, priority=P,
             kv={"nextn_predict_layers": 1, "expert_shared_count": 1, "leading_dense_block_count": 1,
                 "rope.dimension_count": 8},
             notes="5 blocks of which the last is the MTP (nextn) layer"),
        base("bailingmoe2", n_layer=5, priority=P,
             kv={"nextn_predict_layers": 1, "expert_shared_count": 1, "leading_dense_block_count": 1,
                 "rope.dimension_count": 8},
             notes="5 blocks of which the last is the MTP (nextn) layer"),
        base("bert", n_layer=4, n_head_kv=4, priority=P,
             kv={"attention.causal": False, "pooling_type": 1, "attention.layer_norm_epsilon": 1e-12}),
        base("modern-bert", n_layer=6, n_head_kv=4, priority=P,
             kv={"attention.causal": False, "pooling_type": 1, "attention.layer_norm_epsilon": 1e-5,
                 "attention.sliding_window": 64}),
        base("gemma-embedding", n_layer=8, priority=P,
             kv={"attention.sliding_window": 64, "pooling_type": 1, "attention.causal": False}),
        base("openelm", n_layer=4, n_head=[2, 4, 4, 6], n_head_kv=[1, 1, 2, 2], n_ff=[64, 96, 128, 160],
             priority=P, notes="per-layer head counts and FFN widths"),
        base("deepseek2", n_layer=4, n_head=4, n_head_kv=1, priority=P,
             kv={"attention.key_length": 96, "attention.value_length": 64, "attention.key_length_mla": 64,
                 "attention.value_length_mla": 32, "attention.q_lora_rank": 64, "attention.kv_lora_rank": 64,
                 "rope.dimension_count": 32, "leading_dense_block_count": 1, "expert_shared_count": 1,
                 "expert_gating_func": 2, "expert_weights_scale": 1.0},
             notes="MLA: K cache is kv_lora_rank + rope dims, V shares it"),
    ]
    return out


REALISTIC = []


def deepseek_v4_flash_shape(priority: int) -> Spec:
    """DeepSeek-V4-Flash as its model card and third-party GGUF/MLX cards describe it: 43 layers,
    n_embd 4096, 64 heads of 512 with one shared KV head, raw window 128, compress ratios 0 on
    layers 0-1 then 4 (CSA + indexer) on even and 128 (HCA) on odd layers, indexer 64 heads of
    128 with top-k 512, 256 experts (6 used, 1 shared), mHC 4, 1 Mi context. q_lora_rank,
    o_groups / o_lora_rank, the expert width and the vocabulary are not in those cards and are
    assumed (1024, 8 / 1024, 2048, 129280): they move the weights and the compute graph, not
    the caches."""
    n_layer = 43
    ratios = [0, 0] + [4 if il % 2 == 0 else 128 for il in range(2, n_layer)]
    s = base("deepseek4", "deepseek-v4-flash-shape", n_layer=n_layer, n_embd=4096, n_head=64, n_head_kv=1,
             head_dim=512, n_ff=2048, n_vocab=129280, n_ctx_train=1048576, priority=priority,
             default_2d="Q4_K", realistic=True, n_expert=256, n_expert_used=6, n_ff_exp=2048,
             kv={"expert_gating_func": 4, "hyper_connection.count": 4, "hyper_connection.sinkhorn_iterations": 20,
                 "hyper_connection.epsilon": 1e-6, "attention.sliding_window": 128,
                 "attention.compress_ratios": ratios, "attention.q_lora_rank": 1024,
                 "attention.output_group_count": 8, "attention.output_lora_rank": 1024,
                 "attention.compress_rope_freq_base": 160000.0, "attention.indexer.head_count": 64,
                 "attention.indexer.key_length": 128, "attention.indexer.top_k": 512,
                 "expert_shared_count": 1, "hash_layer_count": 3, "rope.dimension_count": 64,
                 "expert_weights_scale": 1.5, "expert_weights_norm": True},
             notes="DeepSeek-V4-Flash dimensions (model cards); q_lora_rank, output groups/rank, expert width, vocab assumed")
    for il in range(3):
        s.ttypes[f"blk.{il}.ffn_gate_tid2eid.weight"] = "I32"
    return s


def rwkv6_seeded(s: Spec) -> Spec:
    """RWKV-6 with every tensor llama.cpp loads given up front (as the small shape resolved
    them, at this shape's sizes): the resolver adds one tensor per step, and 24 layers of the
    fused time-mix lerp tensors exceed its step limit."""
    e, f, v = s.dims["n_embd"], s.dims["n_ff"], s.dims["n_vocab"]
    head = s.kv["rwkv6.wkv.head_size"]
    mix, decay = s.kv["rwkv6.time_mix_extra_dim"], s.kv["rwkv6.time_decay_extra_dim"]
    t = {"token_embd.weight": [e, v], "token_embd_norm.weight": [e], "token_embd_norm.bias": [e],
         "output_norm.weight": [e], "output_norm.bias": [e], "output.weight": [e, v]}
    for il in range(s.dims["n_layer"]):
        b = f"blk.{il}."
        for n in ("attn_norm.weight", "attn_norm.bias", "attn_norm_2.weight", "attn_norm_2.bias",
                  "channel_mix_lerp_k.weight", "channel_mix_lerp_r.weight", "time_mix_decay.weight",
                  "time_mix_lerp_g.weight", "time_mix_lerp_k.weight", "time_mix_lerp_r.weight",
                  "time_mix_lerp_v.weight", "time_mix_lerp_w.weight", "time_mix_lerp_x.weight",
                  "time_mix_ln.weight", "time_mix_ln.bias"):
            t[b + n] = [e]
        for n in ("channel_mix_receptance.weight", "time_mix_gate.weight", "time_mix_key.weight",
                  "time_mix_output.weight", "time_mix_receptance.weight", "time_mix_value.weight"):
            t[b + n] = [e, e]
        t[b + "channel_mix_key.weight"] = [e, f]
        t[b + "channel_mix_value.weight"] = [f, e]
        t[b + "time_mix_decay_w1.weight"] = [e, decay]
        t[b + "time_mix_decay_w2.weight"] = [decay, e]
        t[b + "time_mix_first.weight"] = [head, e // head]
        t[b + "time_mix_lerp_fused.weight"] = [e, 1, 1, 5]
        t[b + "time_mix_w1.weight"] = [e, mix * 5]
        t[b + "time_mix_w2.weight"] = [mix, e, 5]
    s.tensors = t
    return s


def realistic_specs() -> list[Spec]:
    P = 5
    out = [
        deepseek_v4_flash_shape(P),
        base("llama", "llama-3.1-8b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128,
             n_ff=14336, n_vocab=128256, n_ctx_train=131072, priority=P, default_2d="Q4_0", realistic=True,
             kv={"rope.freq_base": 500000.0, "rope.dimension_count": 128, "attention.layer_norm_rms_epsilon": 1e-5}),
        # Realistic sizes for architectures that had only tiny fixtures (public config.json figures).
        base("qwen2", "qwen2.5-7b-shape", n_layer=28, n_embd=3584, n_head=28, n_head_kv=4, head_dim=128,
             n_ff=18944, n_vocab=152064, n_ctx_train=32768, priority=P, default_2d="Q4_K", realistic=True,
             notes="Qwen2.5-7B dimensions"),
        base("gemma2", "gemma-2-9b-shape", n_layer=42, n_embd=3584, n_head=16, n_head_kv=8, head_dim=256,
             n_ff=14336, n_vocab=256000, n_ctx_train=8192, priority=P, default_2d="Q4_K", realistic=True,
             kv={"attention.sliding_window": 4096}, notes="Gemma-2-9B dimensions"),
        base("qwen3moe", "qwen3-30b-a3b-shape", n_layer=48, n_embd=2048, n_head=32, n_head_kv=4, head_dim=128,
             n_ff=6144, n_vocab=151936, n_ctx_train=40960, priority=P, default_2d="Q4_K", realistic=True,
             n_expert=128, n_expert_used=8, n_ff_exp=768, notes="Qwen3-30B-A3B dimensions"),
        base("starcoder2", "starcoder2-7b-shape", n_layer=32, n_embd=4608, n_head=36, n_head_kv=4, head_dim=128,
             n_ff=18432, n_vocab=49152, n_ctx_train=16384, priority=P, default_2d="Q4_K", realistic=True,
             notes="StarCoder2-7B dimensions"),
        base("granite", "granite-3.1-8b-shape", n_layer=40, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128,
             n_ff=12800, n_vocab=49155, n_ctx_train=131072, priority=P, default_2d="Q4_K", realistic=True,
             notes="Granite-3.1-8B dimensions"),
        base("command-r", "command-r-08-2024-shape", n_layer=40, n_embd=8192, n_head=64, n_head_kv=8,
             head_dim=128, n_ff=22528, n_vocab=256000, n_ctx_train=131072, priority=P, default_2d="Q4_K",
             realistic=True, notes="c4ai-command-r-08-2024 dimensions"),
        base("olmo2", "olmo-2-7b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=11008, n_vocab=100352, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="OLMo-2-1124-7B dimensions"),
        base("falcon", "falcon-7b-shape", n_layer=32, n_embd=4544, n_head=71, n_head_kv=1, head_dim=64,
             n_ff=18176, n_vocab=65024, n_ctx_train=2048, priority=P, default_2d="Q4_K", realistic=True,
             notes="Falcon-7B dimensions"),
        base("internlm2", "internlm2.5-7b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128,
             n_ff=14336, n_vocab=92544, n_ctx_train=32768, priority=P, default_2d="Q4_K", realistic=True,
             notes="InternLM2.5-7B dimensions"),
        base("exaone", "exaone-3.5-7.8b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128,
             n_ff=14336, n_vocab=102400, n_ctx_train=32768, priority=P, default_2d="Q4_K", realistic=True,
             notes="EXAONE-3.5-7.8B dimensions"),
        base("qwen2moe", "qwen1.5-moe-a2.7b-shape", n_layer=24, n_embd=2048, n_head=16, n_head_kv=16,
             head_dim=128, n_ff=5632, n_vocab=151936, n_ctx_train=8192, priority=P, default_2d="Q4_K",
             realistic=True, n_expert=60, n_expert_used=4, n_ff_exp=1408,
             kv={"expert_shared_feed_forward_length": 5632}, notes="Qwen1.5-MoE-A2.7B dimensions"),
        base("olmoe", "olmoe-1b-7b-shape", n_layer=16, n_embd=2048, n_head=16, n_head_kv=16, head_dim=128,
             n_ff=1024, n_vocab=50304, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             n_expert=64, n_expert_used=8, n_ff_exp=1024, notes="OLMoE-1B-7B dimensions"),
        base("stablelm", "stablelm-2-1.6b-shape", n_layer=24, n_embd=2048, n_head=32, n_head_kv=32, head_dim=64,
             n_ff=5632, n_vocab=100352, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="StableLM-2-1.6B dimensions"),
        base("gptneox", "pythia-6.9b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=16384, n_vocab=50432, n_ctx_train=2048, priority=P, default_2d="Q4_K", realistic=True,
             notes="Pythia-6.9B dimensions"),
        base("minicpm", "minicpm-2b-shape", n_layer=40, n_embd=2304, n_head=36, n_head_kv=36, head_dim=64,
             n_ff=5760, n_vocab=122753, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="MiniCPM-2B dimensions"),
        base("baichuan", "baichuan2-7b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=11008, n_vocab=125696, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="Baichuan2-7B dimensions"),
        base("bloom", "bloom-7b1-shape", n_layer=30, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=16384, n_vocab=250880, n_ctx_train=2048, priority=P, default_2d="Q4_K", realistic=True,
             notes="BLOOM-7B1 dimensions"),
        base("mpt", "mpt-7b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=16384, n_vocab=50432, n_ctx_train=2048, priority=P, default_2d="Q4_K", realistic=True,
             notes="MPT-7B dimensions"),
        base("xverse", "xverse-7b-shape", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128,
             n_ff=11008, n_vocab=100534, n_ctx_train=8192, priority=P, default_2d="Q4_K", realistic=True,
             notes="XVERSE-7B dimensions"),
        base("orion", "orion-14b-shape", n_layer=40, n_embd=5120, n_head=40, n_head_kv=40, head_dim=128,
             n_ff=15360, n_vocab=84608, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="Orion-14B dimensions"),
        # Fused gate/up FFN (ffn_up of 2 x n_ff rows) at realistic sizes: Phi-3-mini and GLM-4-9B.
        base("phi3", "phi-3-mini-shape", n_layer=32, n_embd=3072, n_head=32, n_head_kv=32, head_dim=96,
             n_ff=8192, n_vocab=32064, n_ctx_train=4096, priority=P, default_2d="Q4_K", realistic=True,
             notes="Phi-3-mini-4k dimensions (public config.json)"),
        base("glm4", "glm-4-9b-shape", n_layer=40, n_embd=4096, n_head=32, n_head_kv=2, head_dim=128,
             n_ff=13696, n_vocab=151552, n_ctx_train=131072, priority=P, default_2d="Q4_K", realistic=True,
             notes="GLM-4-9B dimensions (public config.json)"),
        base("qwen3", "qwen3-32b-shape", n_layer=64, n_embd=5120, n_head=64, n_head_kv=8, head_dim=128,
             n_ff=25600, n_vocab=151936, n_ctx_train=40960, priority=P, default_2d="Q4_K", realistic=True,
             kv={"rope.freq_base": 1000000.0}),
        base("gemma3", "gemma-3-27b-shape", n_layer=62, n_embd=5376, n_head=32, n_head_kv=16, head_dim=128,
             n_ff=21504, n_vocab=262208, n_ctx_train=131072, priority=P, default_2d="Q4_K", realistic=True,
             kv={"attention.sliding_window": 1024, "rope.freq_base": 1000000.0}),
        base("deepseek2", "deepseek-v3-shape", n_layer=61, n_embd=7168, n_head=128, n_head_kv=1, head_dim=576,
             n_ff=18432, n_vocab=129280, n_ctx_train=163840, priority=P, default_2d="Q4_K", realistic=True,
             n_expert=256, n_expert_used=8, n_ff_exp=2048,
             kv={"attention.key_length": 576, "attention.value_length": 512, "attention.key_length_mla": 192,
                 "attention.value_length_mla": 128, "attention.q_lora_rank": 1536, "attention.kv_lora_rank": 512,
                 "rope.dimension_count": 64, "leading_dense_block_count": 3, "expert_shared_count": 1,
                 "expert_gating_func": 2, "expert_weights_scale": 2.5, "expert_weights_norm": True,
                 "expert_group_count": 8, "expert_group_used_count": 4}),
        base("deepseek32", "deepseek-v3.2-shape", n_layer=61, n_embd=7168, n_head=128, n_head_kv=1,
             head_dim=576, n_ff=18432, n_vocab=129280, n_ctx_train=163840, priority=P, default_2d="Q4_K",
             realistic=True, n_expert=256, n_expert_used=8, n_ff_exp=2048,
             kv={"attention.key_length": 576, "attention.value_length": 512, "attention.key_length_mla": 192,
                 "attention.value_length_mla": 128, "attention.q_lora_rank": 1536, "attention.kv_lora_rank": 512,
                 "rope.dimension_count": 64, "leading_dense_block_count": 3, "expert_shared_count": 1,
                 "expert_gating_func": 2, "expert_weights_scale": 2.5, "expert_weights_norm": True,
                 "expert_group_count": 8, "expert_group_used_count": 4,
                 "attention.indexer.head_count": 64, "attention.indexer.key_length": 128,
                 "attention.indexer.top_k": 2048},
             notes="DeepSeek-V3.2 (DSA lightning indexer) dimensions"),
        base("rwkv7", "rwkv7-2.9b-shape", n_layer=32, n_embd=2560, n_head=0, n_head_kv=0, n_ff=10240,
             n_vocab=65536, n_ctx_train=1048576, priority=P, default_2d="Q8_0", realistic=True,
             kv={"wkv.head_size": 64, "attention.decay_lora_rank": 96, "attention.iclr_lora_rank": 96,
                 "attention.value_residual_mix_lora_rank": 64, "attention.gate_lora_rank": 320,
                 "attention.layer_norm_epsilon": 1e-5, "attention.layer_norm_rms_epsilon": None,
                 "attention.key_length": None, "attention.value_length": None},
             notes="RWKV-7 World 2.9B dimensions"),
        # Mamba-1 / Mamba-2 at a small shape (6 layers, d_inner 512, d_state 16, vocab 2,048: the
        # shape a 16 MiB band floor once hid a 20x compute error on) and at realistic sizes.
        base("mamba", "mamba-small-shape", n_layer=6, n_embd=256, n_head=0, n_head_kv=0, n_ff=0,
             n_vocab=2048, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 512, "ssm.state_size": 16, "ssm.time_step_rank": 16},
             notes="small Mamba-1 shape (6 layers, d_inner 512, d_state 16, vocab 2048)"),
        base("mamba", "mamba-1.4b-shape", n_layer=48, n_embd=2048, n_head=0, n_head_kv=0, n_ff=0,
             n_vocab=50280, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 16, "ssm.time_step_rank": 128},
             notes="Mamba-1.4B dimensions"),
        base("mamba2", "mamba2-small-shape", n_layer=6, n_embd=256, n_head=0, n_head_kv=0, n_ff=0,
             n_vocab=2048, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 512, "ssm.state_size": 16, "ssm.time_step_rank": 8,
                 "ssm.group_count": 1},
             notes="small Mamba-2 shape (6 layers, d_inner 512, d_state 16, vocab 2048)"),
        base("mamba2", "mamba2-1.3b-shape", n_layer=48, n_embd=2048, n_head=0, n_head_kv=0, n_ff=0,
             n_vocab=50288, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 64,
                 "ssm.group_count": 1},
             notes="Mamba-2 1.3B dimensions"),
        # RWKV-6 / RWKV-7 at the same small shape and at realistic sizes (RWKV-6 1.6B with its
        # tensors seeded, see rwkv6_seeded; RWKV-7 2.9B below).
        base("rwkv6", "rwkv6-small-shape", n_layer=6, n_embd=256, n_head=0, n_head_kv=0, n_ff=896,
             n_vocab=2048, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"wkv.head_size": 64, "time_mix_extra_dim": 32, "time_decay_extra_dim": 64,
                 "rescale_every_n_layers": 6, "attention.layer_norm_epsilon": 1e-5,
                 "attention.layer_norm_rms_epsilon": None, "attention.key_length": None,
                 "attention.value_length": None},
             notes="small RWKV-6 shape (6 layers, n_embd 256, vocab 2048)"),
        rwkv6_seeded(base("rwkv6", "rwkv6-1.6b-shape", n_layer=24, n_embd=2048, n_head=0, n_head_kv=0, n_ff=7168,
             n_vocab=65536, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"wkv.head_size": 64, "time_mix_extra_dim": 32, "time_decay_extra_dim": 64,
                 "rescale_every_n_layers": 6, "attention.layer_norm_epsilon": 1e-5,
                 "attention.layer_norm_rms_epsilon": None, "attention.key_length": None,
                 "attention.value_length": None},
             notes="RWKV-6 Finch 1.6B dimensions (24 layers, n_embd 2048, n_ff 7168, vocab 65536)")),
        base("rwkv7", "rwkv7-small-shape", n_layer=6, n_embd=256, n_head=0, n_head_kv=0, n_ff=1024,
             n_vocab=2048, n_ctx_train=1048576, priority=P, default_2d="F16", realistic=True,
             kv={"wkv.head_size": 64, "attention.decay_lora_rank": 32, "attention.iclr_lora_rank": 32,
                 "attention.value_residual_mix_lora_rank": 32, "attention.gate_lora_rank": 64,
                 "attention.layer_norm_epsilon": 1e-5, "attention.layer_norm_rms_epsilon": None,
                 "attention.key_length": None, "attention.value_length": None},
             notes="small RWKV-7 shape (6 layers, n_embd 256, vocab 2048)"),
        base("gemma3n", "gemma3n-e4b-shape", n_layer=35, n_embd=2048, n_head=8, n_head_kv=2, head_dim=256,
             n_ff=16384, n_vocab=262144, n_ctx_train=32768, priority=P, default_2d="Q4_K", realistic=True,
             kv={"attention.sliding_window": 512, "altup.active_idx": 0, "altup.num_inputs": 4,
                 "embedding_length_per_layer_input": 256, "attention.shared_kv_layers": 15},
             notes="Gemma 3n E4B dimensions"),
        base("qwen3next", "qwen3next-80b-shape", n_layer=48, n_embd=2048, n_head=16, n_head_kv=2, head_dim=256,
             n_ff=5120, n_vocab=151936, n_ctx_train=262144, priority=P, default_2d="Q4_K", realistic=True,
             n_expert=512, n_expert_used=10, n_ff_exp=512,
             kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 32,
                 "ssm.group_count": 16, "expert_shared_feed_forward_length": 512, "rope.dimension_count": 64},
             notes="Qwen3-Next-80B-A3B dimensions"),
        base("bailingmoe2", "ling-mini-2.0-shape", n_layer=21, n_embd=2048, n_head=16, n_head_kv=4, head_dim=128,
             n_ff=5120, n_vocab=157184, n_ctx_train=32768, priority=P, default_2d="Q4_K", realistic=True,
             n_expert=256, n_expert_used=8, n_ff_exp=512,
             kv={"nextn_predict_layers": 1, "expert_shared_count": 1, "leading_dense_block_count": 1,
                 "rope.dimension_count": 64, "expert_group_count": 8, "expert_group_used_count": 4,
                 "expert_gating_func": 2, "expert_weights_norm": True, "expert_weights_scale": 2.5},
             notes="Ling-mini-2.0 dimensions (20 blocks + 1 MTP layer)"),
        base("t5", "t5-base-shape", n_layer=12, n_embd=768, n_head=12, n_head_kv=12, head_dim=64,
             n_ff=3072, n_vocab=32128, n_ctx_train=512, priority=P, default_2d="F16", realistic=True,
             notes="T5-base dimensions"),
        base("bert", "bert-large-shape", n_layer=24, n_embd=1024, n_head=16, n_head_kv=16, head_dim=64,
             n_ff=4096, n_vocab=30522, n_ctx_train=512, priority=P, default_2d="F16", realistic=True,
             notes="BERT-large / bge-large dimensions"),
        base("gpt-oss", "gpt-oss-20b-shape", n_layer=24, n_embd=2880, n_head=64, n_head_kv=8, head_dim=64,
             n_ff=2880, n_vocab=201088, n_ctx_train=131072, priority=P, default_2d="Q8_0", realistic=True,
             n_expert=32, n_expert_used=4, n_ff_exp=2880,
             kv={"attention.sliding_window": 128, "rope.freq_base": 150000.0}),
    ]
    return out + exact_realistic_specs()


def specs_generic(archs: list[str], done: set[str]) -> list[Spec]:
    out = []
    for a in archs:
        if a in done or a == "(unknown)":
            continue
        out.append(base(a, priority=4))
    return out


def _shape(arch: str, name: str, notes: str, *, quant: str = "Q4_K", **kw) -> Spec:
    """A realistic shape: a real checkpoint's published dimensions (named in `notes`), or, for a
    family without a public config at hand, dimensions assumed near its published siblings
    (the notes then say "assumed")."""
    return base(arch, name, priority=5, default_2d=quant, realistic=True, notes=notes, **kw)


def _uniform(s: Spec) -> Spec:
    """Every layer of the shape carries the same tensors (`Spec.uniform_layers`)."""
    s.uniform_layers = True
    return s


def _hybrid_pattern(n_layer: int, attention: set[int], mlp_odd: bool = True) -> tuple[list[int], list[int]]:
    """Nemotron-H style per-layer lists: attention layers (KV heads), MLP/MoE layers (n_ff), and
    Mamba-2 layers (neither)."""
    kv = [0] * n_layer
    ff = [0] * n_layer
    for il in range(n_layer):
        if il in attention:
            kv[il] = 1
        elif mlp_odd and il % 2 == 1:
            ff[il] = 1
    return kv, ff


def nemotron_h_shapes() -> list[Spec]:
    # 52 layers: Mamba-2 and MLP/MoE layers alternate, attention on 4 of them (the layout of
    # NVIDIA's Nemotron-H / Nemotron-Nano hybrid_override_pattern; the exact positions assumed)
    att = {7, 18, 29, 40}
    kv1, ff1 = _hybrid_pattern(52, att)
    dense = _shape("nemotron_h", "nemotron-h-8b-shape",
                   "Nemotron-H-8B dimensions (n_embd 4096, 52 layers, 32 heads / 8 KV, FFN 21504, Mamba-2 "
                   "128 heads of 64, state 128, 8 groups); attention-layer positions assumed",
                   n_layer=52, n_embd=4096, n_head=32, n_head_kv=[8 * x for x in kv1], head_dim=128,
                   n_ff=[21504 * x for x in ff1], n_vocab=131072, n_ctx_train=8192,
                   kv={"ssm.conv_kernel": 4, "ssm.inner_size": 8192, "ssm.state_size": 128,
                       "ssm.time_step_rank": 128, "ssm.group_count": 8, "attention.layer_norm_epsilon": 1e-5})
    moe = _shape("nemotron_h_moe", "nemotron-3-nano-30b-a3b-shape",
                 "Nemotron-3-Nano-30B-A3B dimensions (n_embd 2688, 52 layers, 32 heads / 2 KV, 128 experts "
                 "of 1856, 6 used, shared 3712, Mamba-2 64 heads of 64, state 128, 8 groups); attention-layer "
                 "positions assumed",
                 n_layer=52, n_embd=2688, n_head=32, n_head_kv=[2 * x for x in kv1], head_dim=128,
                 n_ff=[1856 * x for x in ff1], n_vocab=131072, n_ctx_train=262144,
                 n_expert=128, n_expert_used=6, n_ff_exp=1856,
                 kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128,
                     "ssm.time_step_rank": 64, "ssm.group_count": 8, "attention.layer_norm_epsilon": 1e-5,
                     "expert_shared_count": 1, "expert_shared_feed_forward_length": 3712})
    return [dense, moe]


MLA_V3 = {"attention.key_length": 576, "attention.value_length": 512, "attention.key_length_mla": 192,
          "attention.value_length_mla": 128, "attention.q_lora_rank": 1536, "attention.kv_lora_rank": 512,
          "rope.dimension_count": 64}


def exact_realistic_specs() -> list[Spec]:
    """Realistic shapes for every architecture whose compute status is `exact` and that had only
    a tiny fixture (issue 21: small and realistic shapes for every exact architecture)."""
    S = _shape
    openelm_q = [12] * 4 + [16] * 13 + [20] * 13 + [24] * 6
    openelm_ff = [1536, 1792, 2048, 2560, 2816, 3072, 3328, 3584, 4096, 4352, 4608, 4864, 5120, 5632, 5888,
                  6144, 6400, 6656, 7168, 7424, 7680, 7936, 8192, 8704, 8960, 9216, 9472, 9728, 10240, 10496,
                  10752, 11008, 11264, 11776, 12032, 12288]
    out = [
        # dense decoders
        S("apertus", "apertus-8b-shape", "Apertus-8B dimensions", n_layer=32, n_embd=4096, n_head=32,
          n_head_kv=8, head_dim=128, n_ff=21504, n_vocab=131072, n_ctx_train=65536,
          kv={"xielu.alpha_n": [0.8] * 32, "xielu.alpha_p": [0.8] * 32, "xielu.beta": [0.5] * 32,
              "xielu.eps": [1e-6] * 32}),
        S("arcee", "afm-4.5b-shape", "Arcee AFM-4.5B dimensions", n_layer=36, n_embd=2560, n_head=20,
          n_head_kv=4, head_dim=128, n_ff=18432, n_vocab=128004, n_ctx_train=65536),
        S("bitnet", "bitnet-b1.58-2b-4t-shape", "BitNet b1.58 2B4T dimensions", n_layer=30, n_embd=2560,
          n_head=20, n_head_kv=5, head_dim=128, n_ff=6912, n_vocab=128256, n_ctx_train=4096),
        S("chameleon", "chameleon-7b-shape", "Chameleon-7B dimensions", n_layer=32, n_embd=4096, n_head=32,
          n_head_kv=32, head_dim=128, n_ff=11008, n_vocab=65536, n_ctx_train=4096),
        S("chatglm", "chatglm3-6b-shape", "ChatGLM3-6B dimensions", n_layer=28, n_embd=4096, n_head=32,
          n_head_kv=2, head_dim=128, n_ff=13696, n_vocab=65024, n_ctx_train=8192),
        S("codeshell", "codeshell-7b-shape", "CodeShell-7B dimensions", n_layer=42, n_embd=4096, n_head=32,
          n_head_kv=8, head_dim=128, n_ff=16384, n_vocab=70144, n_ctx_train=8192,
          kv={"attention.layer_norm_epsilon": 1e-5}),
        S("cogvlm", "cogvlm-17b-shape", "CogVLM-17B language side (Vicuna-7B) dimensions", n_layer=32,
          n_embd=4096, n_head=32, n_head_kv=32, head_dim=128, n_ff=11008, n_vocab=32000, n_ctx_train=2048),
        S("cohere2", "command-r7b-shape", "Command R7B (c4ai-command-r7b-12-2024) dimensions", n_layer=32,
          n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=256000, n_ctx_train=131072,
          kv={"attention.sliding_window": 4096, "attention.layer_norm_epsilon": 1e-5, "logit_scale": 0.25}),
        S("deci", "decilm-7b-shape", "DeciLM-7B dimensions (uniform 4 KV heads assumed; the checkpoint varies them per layer)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=4, head_dim=128, n_ff=14336, n_vocab=32000,
          n_ctx_train=8192),
        S("ernie4_5", "ernie-4.5-0.3b-shape", "ERNIE-4.5-0.3B dimensions", n_layer=18, n_embd=1024, n_head=16,
          n_head_kv=2, head_dim=128, n_ff=3072, n_vocab=103424, n_ctx_train=131072),
        S("exaone4", "exaone-4.0-32b-shape", "EXAONE-4.0-32B dimensions (64 layers: llama.cpp's 3-sliding/1-full pattern)",
          n_layer=64, n_embd=5120, n_head=40, n_head_kv=8, head_dim=128, n_ff=27392, n_vocab=102400,
          n_ctx_train=131072, kv={"attention.sliding_window": 4096}),
        S("gemma", "gemma-7b-shape", "Gemma-7B dimensions", n_layer=28, n_embd=3072, n_head=16, n_head_kv=16,
          head_dim=256, n_ff=24576, n_vocab=256000, n_ctx_train=8192),
        S("gpt2", "gpt2-xl-shape", "GPT-2 XL dimensions", n_layer=48, n_embd=1600, n_head=25, n_head_kv=25,
          head_dim=64, n_ff=6400, n_vocab=50257, n_ctx_train=1024, kv={"attention.layer_norm_epsilon": 1e-5}),
        S("granite_swa", "granite-swa-8b-shape",
          "assumed: Granite-3.1-8B dimensions with a 4096 sliding window on 3 of 4 layers (no public granite_swa config at hand)",
          n_layer=40, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=12800, n_vocab=49155,
          n_ctx_train=131072, kv={"attention.sliding_window": 4096,
                                  "attention.sliding_window_pattern": [il % 4 < 3 for il in range(40)],
                                  "logit_scale": 16.0}),
        S("hunyuan-dense", "hunyuan-7b-shape", "Hunyuan-7B-Instruct dimensions", n_layer=32, n_embd=4096,
          n_head=32, n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=128167, n_ctx_train=262144),
        S("hunyuan_vl", "hunyuan-ocr-1b-shape", "HunyuanOCR (1B) language side dimensions", n_layer=24,
          n_embd=1024, n_head=16, n_head_kv=8, head_dim=128, n_ff=3584, n_vocab=120818, n_ctx_train=32768,
          kv={"rope.dimension_sections": [16, 24, 24, 0]}),
        S("jais", "jais-13b-shape", "Jais-13B dimensions", n_layer=40, n_embd=5120, n_head=40, n_head_kv=40,
          head_dim=128, n_ff=13653, n_vocab=84992, n_ctx_train=2048, kv={"attention.layer_norm_epsilon": 1e-5}),
        S("jais2", "jais2-8b-shape", "assumed: an 8B Jais-2 (Llama-3.1-8B-sized; no public config at hand)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=150272,
          n_ctx_train=8192, kv={"attention.layer_norm_epsilon": 1e-5}),
        S("maincoder", "maincoder-1b-shape", "assumed: Maincoder-1B-sized (no public config at hand)",
          n_layer=32, n_embd=1536, n_head=16, n_head_kv=4, head_dim=96, n_ff=4096, n_vocab=151936,
          n_ctx_train=8192),
        S("mistral3", "mistral-small-3.1-24b-shape", "Mistral-Small-3.1-24B dimensions", n_layer=40, n_embd=5120,
          n_head=32, n_head_kv=8, head_dim=128, n_ff=32768, n_vocab=131072, n_ctx_train=131072),
        S("nemotron", "minitron-4b-shape", "Nemotron-4 Minitron-4B dimensions", n_layer=32, n_embd=3072,
          n_head=24, n_head_kv=8, head_dim=128, n_ff=9216, n_vocab=256000, n_ctx_train=4096,
          kv={"attention.layer_norm_epsilon": 1e-5}),
        S("olmo", "olmo-7b-shape", "OLMo-7B dimensions", n_layer=32, n_embd=4096, n_head=32, n_head_kv=32,
          head_dim=128, n_ff=11008, n_vocab=50304, n_ctx_train=2048),
        S("openelm", "openelm-3b-shape", "OpenELM-3B dimensions (per-layer heads and FFN widths from its multipliers)",
          n_layer=36, n_embd=3072, n_head=openelm_q, n_head_kv=[h // 4 for h in openelm_q], head_dim=128,
          n_ff=openelm_ff, n_vocab=32000, n_ctx_train=2048,
          kv={"attention.key_length": 128, "attention.value_length": 128}),
        S("paddleocr", "paddleocr-vl-0.9b-shape", "PaddleOCR-VL 0.9B language side (ERNIE-4.5-0.3B) dimensions",
          n_layer=18, n_embd=1024, n_head=16, n_head_kv=2, head_dim=128, n_ff=3072, n_vocab=103424,
          n_ctx_train=131072),
        S("pangu-embedded", "openpangu-embedded-7b-shape", "openPangu-Embedded-7B dimensions", n_layer=34,
          n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=12800, n_vocab=153376, n_ctx_train=32768),
        S("phi2", "phi-2-shape", "Phi-2 dimensions", n_layer=32, n_embd=2560, n_head=32, n_head_kv=32,
          head_dim=80, n_ff=10240, n_vocab=51200, n_ctx_train=2048,
          kv={"attention.layer_norm_epsilon": 1e-5, "rope.dimension_count": 32}),
        S("plamo", "plamo-13b-shape", "PLaMo-13B dimensions", n_layer=40, n_embd=5120, n_head=40, n_head_kv=40,
          head_dim=128, n_ff=13824, n_vocab=50432, n_ctx_train=4096),
        S("plamo2", "plamo-2-1b-shape", "PLaMo-2-1B dimensions (Mamba on 7 of 8 layers as llama.cpp sets it; d_inner 4096, state 64)",
          n_layer=16, n_embd=2048, n_head=16, n_head_kv=1, head_dim=128, n_ff=8192, n_vocab=100000,
          n_ctx_train=32768,
          kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 64, "ssm.time_step_rank": 64,
              "ssm.group_count": 1}),
        S("plamo3", "plamo-3-2b-shape", "assumed: PLaMo-3 2B-sized (sliding window 2048; no public config at hand)",
          n_layer=24, n_embd=2048, n_head=16, n_head_kv=4, head_dim=128, n_ff=8192, n_vocab=100000,
          n_ctx_train=32768, kv={"attention.sliding_window": 2048}),
        S("pockettts", "pocket-tts-shape", "assumed: Kyutai Pocket TTS backbone-sized (no public config at hand)",
          n_layer=6, n_embd=1024, n_head=16, n_head_kv=16, head_dim=64, n_ff=4096, n_vocab=4096,
          n_ctx_train=4096, kv={"attention.layer_norm_epsilon": 1e-5}),
        S("qwen", "qwen-7b-shape", "Qwen-7B (v1) dimensions (llama.cpp halves its 22016 intermediate size)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=32, head_dim=128, n_ff=22016, n_vocab=151936,
          n_ctx_train=8192),
        S("qwen2vl", "qwen2-vl-7b-shape", "Qwen2-VL-7B language side dimensions", n_layer=28, n_embd=3584,
          n_head=28, n_head_kv=4, head_dim=128, n_ff=18944, n_vocab=152064, n_ctx_train=32768,
          kv={"rope.dimension_sections": [16, 24, 24, 0]}),
        S("qwen3tts", "qwen3-tts-1.7b-shape", "Qwen3-TTS 1.7B talker dimensions", n_layer=28, n_embd=2048,
          n_head=16, n_head_kv=8, head_dim=128, n_ff=6144, n_vocab=3072, n_ctx_train=32768,
          kv={"rope.dimension_sections": [24, 20, 20, 0]}),
        S("qwen3vl", "qwen3-vl-8b-shape", "Qwen3-VL-8B language side dimensions", n_layer=36, n_embd=4096,
          n_head=32, n_head_kv=8, head_dim=128, n_ff=12288, n_vocab=151936, n_ctx_train=262144,
          kv={"rope.dimension_sections": [24, 20, 20, 0]}),
        S("refact", "refact-1.6b-shape", "Refact-1.6B dimensions", n_layer=32, n_embd=2048, n_head=32,
          n_head_kv=1, head_dim=64, n_ff=5632, n_vocab=49216, n_ctx_train=4096),
        S("seed_oss", "seed-oss-36b-shape", "Seed-OSS-36B dimensions", n_layer=64, n_embd=5120, n_head=80,
          n_head_kv=8, head_dim=128, n_ff=27648, n_vocab=155136, n_ctx_train=524288),
        S("smollm3", "smollm3-3b-shape", "SmolLM3-3B dimensions", n_layer=36, n_embd=2048, n_head=16,
          n_head_kv=4, head_dim=128, n_ff=11008, n_vocab=128256, n_ctx_train=65536),
        S("starcoder", "starcoder-15b-shape", "StarCoder (15.5B) dimensions", n_layer=40, n_embd=6144, n_head=48,
          n_head_kv=1, head_dim=128, n_ff=24576, n_vocab=49152, n_ctx_train=8192,
          kv={"attention.layer_norm_epsilon": 1e-5}),
        # encoders and embedding models
        S("gemma-embedding", "embeddinggemma-300m-shape", "EmbeddingGemma-300M dimensions", quant="F16",
          n_layer=24, n_embd=768, n_head=3, n_head_kv=1, head_dim=256, n_ff=1152, n_vocab=262144,
          n_ctx_train=2048, kv={"attention.sliding_window": 512, "pooling_type": 1, "attention.causal": False}),
        S("nomic-bert", "nomic-embed-text-v1.5-shape", "nomic-embed-text-v1.5 dimensions", quant="F16",
          n_layer=12, n_embd=768, n_head=12, n_head_kv=12, head_dim=64, n_ff=3072, n_vocab=30528,
          n_ctx_train=2048, kv={"attention.causal": False, "pooling_type": 1,
                                "attention.layer_norm_epsilon": 1e-12}),
        S("t5encoder", "t5-v1.1-xxl-encoder-shape", "T5-v1.1-XXL encoder dimensions", quant="F16",
          n_layer=24, n_embd=4096, n_head=64, n_head_kv=64, head_dim=64, n_ff=10240, n_vocab=32128,
          n_ctx_train=512, kv={"attention.relative_buckets_count": 32}),
        # mixture of experts
        S("afmoe", "trinity-mini-shape", "Arcee Trinity-Mini (26B-A3B) dimensions", n_layer=32, n_embd=2048,
          n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=200192, n_ctx_train=131072,
          n_expert=128, n_expert_used=8, n_ff_exp=1024,
          kv={"attention.sliding_window": 2048, "leading_dense_block_count": 2, "expert_shared_count": 1}),
        S("arctic", "snowflake-arctic-shape", "Snowflake Arctic dimensions", n_layer=35, n_embd=7168, n_head=56,
          n_head_kv=8, head_dim=128, n_ff=4864, n_vocab=32000, n_ctx_train=4096,
          n_expert=128, n_expert_used=2, n_ff_exp=4864),
        S("bailingmoe", "ling-lite-shape", "Ling-lite dimensions", n_layer=28, n_embd=2048, n_head=16,
          n_head_kv=4, head_dim=128, n_ff=5632, n_vocab=126464, n_ctx_train=16384,
          n_expert=64, n_expert_used=6, n_ff_exp=1408, kv={"expert_shared_count": 2}),
        S("cohere2moe", "cohere2moe-shape",
          "assumed: a Command-R7B-sized MoE (no public cohere2moe config at hand)", n_layer=32, n_embd=4096,
          n_head=32, n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=256000, n_ctx_train=131072,
          n_expert=64, n_expert_used=8, n_ff_exp=1536,
          kv={"attention.sliding_window": 4096, "leading_dense_block_count": 1, "logit_scale": 0.25}),
        S("dbrx", "dbrx-shape", "DBRX dimensions", n_layer=40, n_embd=6144, n_head=48, n_head_kv=8,
          head_dim=128, n_ff=10752, n_vocab=100352, n_ctx_train=32768,
          n_expert=16, n_expert_used=4, n_ff_exp=10752),
        S("deepseek", "deepseek-moe-16b-shape", "deepseek-moe-16b dimensions", n_layer=28, n_embd=2048,
          n_head=16, n_head_kv=16, head_dim=128, n_ff=10944, n_vocab=102400, n_ctx_train=4096,
          n_expert=64, n_expert_used=6, n_ff_exp=1408,
          kv={"expert_shared_count": 2, "leading_dense_block_count": 1}),
        S("deepseek2-ocr", "deepseek-ocr-shape", "DeepSeek-OCR decoder (DeepSeek-3B-MoE) dimensions", n_layer=12,
          n_embd=1280, n_head=10, n_head_kv=10, head_dim=128, n_ff=6848, n_vocab=129280, n_ctx_train=8192,
          n_expert=64, n_expert_used=6, n_ff_exp=896,
          kv={"expert_shared_count": 2, "leading_dense_block_count": 1, "attention.kv_lora_rank": 512,
              "rope.dimension_count": 64}),
        S("dots1", "dots-llm1-shape", "dots.llm1 dimensions", n_layer=62, n_embd=4096, n_head=32, n_head_kv=32,
          head_dim=128, n_ff=10944, n_vocab=152064, n_ctx_train=32768,
          n_expert=128, n_expert_used=6, n_ff_exp=1408,
          kv={"expert_shared_count": 2, "leading_dense_block_count": 1, "expert_gating_func": 2}),
        S("ernie4_5-moe", "ernie-4.5-21b-a3b-shape", "ERNIE-4.5-21B-A3B dimensions", n_layer=28, n_embd=2560,
          n_head=20, n_head_kv=4, head_dim=128, n_ff=12288, n_vocab=103424, n_ctx_train=131072,
          n_expert=64, n_expert_used=6, n_ff_exp=1536,
          kv={"expert_shared_count": 2, "leading_dense_block_count": 1, "interleave_moe_layer_step": 1}),
        S("exaone-moe", "exaone-moe-shape", "assumed: K-EXAONE-like MoE sizes (no public config at hand)",
          n_layer=48, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=153600,
          n_ctx_train=131072, n_expert=128, n_expert_used=8, n_ff_exp=1536,
          kv={"attention.sliding_window": 4096, "expert_shared_count": 1, "leading_dense_block_count": 1,
              "expert_gating_func": 2}),
        S("glm4moe", "glm-4.5-air-shape", "GLM-4.5-Air dimensions (46 blocks + 1 MTP layer)", n_layer=47,
          n_embd=4096, n_head=96, n_head_kv=8, head_dim=128, n_ff=10944, n_vocab=151552, n_ctx_train=131072,
          n_expert=128, n_expert_used=8, n_ff_exp=1408,
          kv={"nextn_predict_layers": 1, "expert_shared_count": 1, "leading_dense_block_count": 1,
              "rope.dimension_count": 64, "expert_shared_feed_forward_length": 1408}),
        S("grok", "grok-1-shape", "Grok-1 dimensions", n_layer=64, n_embd=6144, n_head=48, n_head_kv=8,
          head_dim=128, n_ff=32768, n_vocab=131072, n_ctx_train=8192,
          n_expert=8, n_expert_used=2, n_ff_exp=32768),
        S("grovemoe", "grovemoe-33b-a3b-shape", "GroveMoE (33B-A3B) dimensions", n_layer=48, n_embd=2048,
          n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936, n_ctx_train=40960,
          n_expert=128, n_expert_used=8, n_ff_exp=768,
          kv={"expert_group_scale": 0.05, "experts_per_group": 2, "expert_chunk_feed_forward_length": 128}),
        S("hunyuan-moe", "hunyuan-a13b-shape", "Hunyuan-A13B dimensions", n_layer=32, n_embd=4096, n_head=32,
          n_head_kv=8, head_dim=128, n_ff=3072, n_vocab=128167, n_ctx_train=262144,
          n_expert=64, n_expert_used=8, n_ff_exp=3072,
          kv={"expert_shared_feed_forward_length": 3072}),
        S("hy_v3", "hy-v3-shape", "assumed: a Hunyuan-A13B-sized MoE (no public hy_v3 config at hand)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=8, head_dim=128, n_ff=3072, n_vocab=128167,
          n_ctx_train=262144, n_expert=64, n_expert_used=8, n_ff_exp=3072),
        S("llada-moe", "llada-moe-7b-a1b-shape", "LLaDA-MoE-7B-A1B dimensions", n_layer=16, n_embd=2048,
          n_head=16, n_head_kv=16, head_dim=128, n_ff=8192, n_vocab=157184, n_ctx_train=8192,
          n_expert=64, n_expert_used=8, n_ff_exp=1024),
        S("llama4", "llama-4-scout-shape", "Llama-4-Scout-17B-16E dimensions", n_layer=48, n_embd=5120,
          n_head=40, n_head_kv=8, head_dim=128, n_ff=16384, n_vocab=202048, n_ctx_train=262144,
          n_expert=16, n_expert_used=1, n_ff_exp=8192, kv={"interleave_moe_layer_step": 1}),
        S("maple", "maple-shape", "assumed: a 30B-A3B-sized sliding-window MoE (no public maple config at hand)",
          n_layer=48, n_embd=2048, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936,
          n_ctx_train=131072, n_expert=128, n_expert_used=8, n_ff_exp=768,
          kv={"attention.sliding_window": 4096,
              "attention.sliding_window_pattern": [il % 4 < 3 for il in range(48)], "swiglu_clamp_exp": 7.0}),
        S("mellum", "mellum-moe-shape", "assumed: a 30B-A3B-sized MoE (no public mellum config at hand)",
          n_layer=48, n_embd=2048, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936,
          n_ctx_train=131072, n_expert=128, n_expert_used=8, n_ff_exp=768),
        S("minimax-01", "minimax-text-01-shape", "MiniMax-Text-01 dimensions", n_layer=80, n_embd=6144,
          n_head=64, n_head_kv=8, head_dim=128, n_ff=9216, n_vocab=200064, n_ctx_train=1048576,
          n_expert=32, n_expert_used=2, n_ff_exp=9216, kv={"residual_scale": 1.0}),
        S("minimax-m2", "minimax-m2-shape", "MiniMax-M2 dimensions", n_layer=62, n_embd=3072, n_head=48,
          n_head_kv=8, head_dim=128, n_ff=1536, n_vocab=200064, n_ctx_train=196608,
          n_expert=256, n_expert_used=8, n_ff_exp=1536,
          kv={"rope.dimension_count": 64, "expert_gating_func": 2}),
        S("phimoe", "phi-3.5-moe-shape", "Phi-3.5-MoE dimensions", n_layer=32, n_embd=4096, n_head=32,
          n_head_kv=8, head_dim=128, n_ff=6400, n_vocab=32064, n_ctx_train=131072,
          n_expert=16, n_expert_used=2, n_ff_exp=6400),
        S("qwen3vlmoe", "qwen3-vl-30b-a3b-shape", "Qwen3-VL-30B-A3B language side dimensions", n_layer=48,
          n_embd=2048, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936, n_ctx_train=262144,
          n_expert=128, n_expert_used=8, n_ff_exp=768, kv={"rope.dimension_sections": [24, 20, 20, 0]}),
        S("rnd1", "rnd1-30b-a3b-shape", "RND1-Base (Qwen3-30B-A3B-based diffusion) dimensions", n_layer=48,
          n_embd=2048, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936, n_ctx_train=40960,
          n_expert=128, n_expert_used=8, n_ff_exp=768),
        S("smallthinker", "smallthinker-21b-a3b-shape", "SmallThinker-21B-A3B dimensions", n_layer=52,
          n_embd=2560, n_head=28, n_head_kv=4, head_dim=128, n_ff=768, n_vocab=151936, n_ctx_train=16384,
          n_expert=64, n_expert_used=6, n_ff_exp=768, kv={"attention.sliding_window": 4096,
                                                         "expert_gating_func": 1}),
        S("laguna", "laguna-shape", "assumed: a 30B-A3B-sized MoE with one leading dense block (no public laguna config at hand)",
          n_layer=48, n_embd=2048, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144, n_vocab=151936,
          n_ctx_train=131072, n_expert=128, n_expert_used=8, n_ff_exp=768, kv={"leading_dense_block_count": 1}),
        S("mimo2", "mimo-v2-flash-shape",
          "assumed: MiMo-V2-Flash-like sizes (48 layers, window 128, 3 sliding : 1 full; exact config not at hand)",
          n_layer=48, n_embd=4096, n_head=64, n_head_kv=4, head_dim=128, n_ff=16384, n_vocab=152576,
          n_ctx_train=262144, n_expert=256, n_expert_used=8, n_ff_exp=2048,
          kv={"attention.sliding_window": 128,
              "attention.sliding_window_pattern": [il % 4 < 3 for il in range(48)]}),
        S("step35", "step-3.5-flash-shape",
          "assumed: Step-3.5-Flash-like sizes (45 layers, window 512, 3 sliding : 1 full; exact config not at hand)",
          n_layer=45, n_embd=4096, n_head=64, n_head_kv=8, head_dim=128, n_ff=11264, n_vocab=128896,
          n_ctx_train=262144, n_expert=288, n_expert_used=8, n_ff_exp=1280,
          kv={"attention.sliding_window": 512,
              "attention.sliding_window_pattern": [il % 4 < 3 for il in range(45)]}),
        # hybrids and MLA
        _uniform(S("falcon-h1", "falcon-h1-7b-shape", "Falcon-H1-7B dimensions (d_ssm 3072, 24 SSM heads, state 256)",
          n_layer=44, n_embd=3072, n_head=12, n_head_kv=2, head_dim=128, n_ff=12288, n_vocab=130049,
          n_ctx_train=262144,
          kv={"ssm.conv_kernel": 4, "ssm.inner_size": 3072, "ssm.state_size": 256, "ssm.time_step_rank": 24,
              "ssm.group_count": 1})),
        S("qwen35", "qwen3.5-27b-shape",
          "assumed: a Qwen3.5 dense hybrid with Qwen3-Next's attention/delta-net sizes (exact config not at hand)",
          n_layer=48, n_embd=4096, n_head=16, n_head_kv=2, head_dim=256, n_ff=12288, n_vocab=151936,
          n_ctx_train=262144,
          kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 32,
              "ssm.group_count": 16, "rope.dimension_sections": [11, 11, 10, 0], "rope.dimension_count": 64}),
        S("qwen35moe", "qwen3.5-moe-shape",
          "assumed: Qwen3-Next-80B-A3B sizes under qwen35moe (exact Qwen3.5-MoE config not at hand)",
          n_layer=48, n_embd=2048, n_head=16, n_head_kv=2, head_dim=256, n_ff=5120, n_vocab=151936,
          n_ctx_train=262144, n_expert=512, n_expert_used=10, n_ff_exp=512,
          kv={"ssm.conv_kernel": 4, "ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 32,
              "ssm.group_count": 16, "rope.dimension_sections": [11, 11, 10, 0], "rope.dimension_count": 64,
              "expert_shared_feed_forward_length": 512}),
        S("minicpm3", "minicpm3-4b-shape", "MiniCPM3-4B dimensions", n_layer=62, n_embd=2560, n_head=40,
          n_head_kv=40, head_dim=64, n_ff=6400, n_vocab=73448, n_ctx_train=32768,
          kv={"attention.key_length": 96, "attention.value_length": 64, "attention.q_lora_rank": 768,
              "attention.kv_lora_rank": 256, "rope.dimension_count": 32}),
        S("plm", "plm-1.8b-shape", "PLM-1.8B dimensions", n_layer=32, n_embd=2048, n_head=16, n_head_kv=16,
          head_dim=128, n_ff=8192, n_vocab=151936, n_ctx_train=4096,
          kv={"attention.key_length": 192, "attention.value_length": 128, "attention.kv_lora_rank": 512,
              "rope.dimension_count": 64}),
        S("glm-dsa", "glm-dsa-shape", "assumed: DeepSeek-V3.2-like MLA + DSA sizes at 40 layers (no public glm-dsa config at hand)",
          n_layer=40, n_embd=6144, n_head=64, n_head_kv=1, head_dim=576, n_ff=12288, n_vocab=151552,
          n_ctx_train=202752, n_expert=256, n_expert_used=8, n_ff_exp=2048,
          kv={**MLA_V3, "attention.indexer.head_count": 32, "attention.indexer.key_length": 128,
              "attention.indexer.top_k": 2048, "expert_shared_count": 1, "leading_dense_block_count": 3}),
        S("mistral4", "mistral4-shape", "assumed: DeepSeek-V3-like MLA MoE sizes at 40 layers (no public mistral4 config at hand)",
          n_layer=40, n_embd=6144, n_head=64, n_head_kv=1, head_dim=576, n_ff=12288, n_vocab=131072,
          n_ctx_train=262144, n_expert=128, n_expert_used=8, n_ff_exp=2048,
          kv={**MLA_V3, "attention.indexer.key_length": 128, "expert_shared_count": 1}),
        S("kimi-k3", "kimi-k3-shape", "assumed: Kimi-Linear-48B-like sizes (no public kimi-k3 config at hand)",
          n_layer=27, n_embd=2304, n_head=32, n_head_kv=1, head_dim=576, n_ff=9216, n_vocab=163840,
          n_ctx_train=262144, n_expert=256, n_expert_used=8, n_ff_exp=1024,
          kv={"attention.key_length": 576, "attention.value_length": 512, "attention.key_length_mla": 192,
              "attention.value_length_mla": 128, "attention.q_lora_rank": 1536, "attention.kv_lora_rank": 512,
              "rope.dimension_count": 64, "attention.indexer.key_length": 128, "kda.head_dim": 128,
              "ssm.conv_kernel": 4, "expert_shared_count": 1, "expert_gating_func": 2,
              "activation.situ_beta": 1.0, "activation.situ_linear_beta": 1.0, "attn_res.block_size": 64}),
        S("hy_v4", "hy-v4-shape", "assumed: MLA + indexer sizes near DeepSeek-V3.2 at 32 layers (no public hy_v4 config at hand)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=1, head_dim=576, n_ff=12288, n_vocab=128167,
          n_ctx_train=262144, n_expert=64, n_expert_used=8, n_ff_exp=2048,
          kv={**MLA_V3, "attention.indexer.head_count": 32, "attention.indexer.key_length": 128,
              "attention.indexer.top_k": 2048, "attention.indexer.types": [il % 2 == 0 for il in range(32)],
              "hyper_connection.count": 4, "expert_shared_count": 1}),
        _uniform(S("minimax-m3", "minimax-m3-shape",
          "assumed: MiniMax-M2 sizes with a block indexer, one indexer head per KV head as its graph requires "
          "(no public minimax-m3 config at hand)",
          n_layer=62, n_embd=3072, n_head=48, n_head_kv=8, head_dim=128, n_ff=1536, n_vocab=200064,
          n_ctx_train=196608, n_expert=256, n_expert_used=8, n_ff_exp=1536,
          kv={"attention.indexer.block_size": 64, "attention.indexer.head_count": 8,
              "attention.indexer.key_length": 128, "attention.indexer.local_blocks": 1,
              "attention.indexer.top_k": 2048, "expert_gating_func": 2, "expert_shared_count": 1})),
        S("dots3note", "dots3note-shape", "assumed: dots-family MLA sizes with sliding MLA layers (no public dots3note config at hand)",
          n_layer=32, n_embd=4096, n_head=32, n_head_kv=1, head_dim=576, n_ff=10944, n_vocab=152064,
          n_ctx_train=131072, n_expert=128, n_expert_used=6, n_ff_exp=1408,
          kv={**MLA_V3, "attention.sliding_window": 4096,
              "attention.sliding_window_pattern": [il % 4 != 0 for il in range(32)],
              "attention.kv_lora_rank_swa": 256, "attention.key_length_mla_swa": 192,
              "attention.value_length_mla_swa": 128, "attention.key_length_swa": 320,
              "attention.value_length_swa": 256, "attention.indexer.head_count": 32,
              "attention.indexer.key_length": 128, "attention.indexer.top_k": 2048,
              "attention.indexer.types": [il % 4 == 0 for il in range(32)], "expert_shared_count": 1,
              "leading_dense_block_count": 1}),
        _uniform(S("gemma4", "gemma4-shape", "assumed: Gemma-3-12B-like sizes under gemma4 (window 1024, 5 sliding : 1 full; exact config not at hand)",
          n_layer=48, n_embd=3840, n_head=16, n_head_kv=8, head_dim=256, n_ff=15360, n_vocab=262144,
          n_ctx_train=131072,
          kv={"attention.sliding_window": 1024,
              "attention.sliding_window_pattern": [il % 6 < 5 for il in range(48)],
              "attention.key_length_swa": 256, "attention.value_length_swa": 256,
              "embedding_length_per_layer_input": 256})),
    ]
    out.append(wavtokenizer_dec("wavtokenizer-75-dec-shape", 512, 1282, 768, 6, 12, 4096, 5, True,
                                "WavTokenizer-75 decoder as OuteTTS-0.2 ships it (features 512, output 1282, "
                                "posnet and convnext 768 wide, 6 + 12 blocks, vocab 4096)"))
    out.append(S("hrm_text", "hrm-text-1b-shape",
                 "n_embd 1536 as llama.cpp's 1B HRM-Text (DFM Mimir 1B); heads, FFN, vocab and the stack/cycle "
                 "counts assumed (4 layers per stack, 2 H cycles, 2 L cycles: 24 cache slots)",
                 n_layer=24, n_embd=1536, n_head=12, n_head_kv=12, head_dim=128, n_ff=6144, n_vocab=50304,
                 n_ctx_train=4096, kv={"hrm.layers_per_stack": 4, "hrm.h_cycles": 2, "hrm.l_cycles": 2}))
    return out + nemotron_h_shapes()
