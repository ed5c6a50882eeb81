#!/usr/bin/env python3
"""MLX oracle for llmbound's MLX-LM figures (never run in CI).

Builds tiny random models for the MLX-LM architectures llmbound models, saves each as real
safetensors + config.json (bf16 and quantized), runs prompts of several lengths through
mlx_lm.generate.generate_step with each cache kind, and records:

- the weights: every tensor's name, dtype, shape and nbytes, the exact safetensors header
  MLX wrote and the file size;
- per run: the cache class and nbytes of every layer (ArraysCache, KVCache,
  QuantizedKVCache, RotatingKVCache), their cell counts, mx.get_active_memory() before the
  prompt and mx.get_peak_memory() after it, or MLX-LM's refusal message;

into tests/fixtures/mlx/<name>.json with the MLX and MLX-LM versions.

Set up (versions pinned: the fixtures record what they were made with):

    python3 -m venv /tmp/mlxvenv
    /tmp/mlxvenv/bin/pip install 'mlx[cpu]==0.32.4' 'mlx-cpu==0.32.4' mlx-lm==0.32.2 safetensors==0.8.0
    /tmp/mlxvenv/bin/python scripts/oracle/mlx/oracle.py [--only NAME] [--out tests/fixtures/mlx]

Runs on the CPU backend (Linux wheels). Cache and weight bytes do not depend on the
backend; the peak does (Metal kernels, fused attention), which is why the tests check the
peak within a band only.
"""

import argparse
import json
import os
import struct
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import mlx.core as mx
from mlx.utils import tree_flatten
from mlx_lm.generate import generate_step
from mlx_lm.models import cache as cache_mod
from mlx_lm.utils import _get_classes, load_model, quantize_model, save_config, save_model

SEED = 18

BASE = {
    "vocab_size": 1024,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 16384,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}

MODELS = {
    # llama-style dense GQA: 4 query heads over 2 KV heads of 64.
    "llama_gqa": dict(
        BASE,
        model_type="llama",
        hidden_size=256,
        num_hidden_layers=4,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
    ),
    # A 32-wide head: the quantized KV cache (group 64) is refused.
    "llama_hd32": dict(
        BASE,
        model_type="llama",
        hidden_size=128,
        num_hidden_layers=2,
        intermediate_size=256,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        tie_word_embeddings=True,
    ),
    # Mistral-style sliding window through llama's layer_types (RotatingKVCache layers).
    "llama_swa": dict(
        BASE,
        model_type="llama",
        hidden_size=256,
        num_hidden_layers=4,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        sliding_window=512,
        layer_types=[
            "sliding_attention",
            "sliding_attention",
            "sliding_attention",
            "full_attention",
        ],
    ),
    # gemma3: 5 of every 6 layers slide (RotatingKVCache(sliding_window)).
    "gemma3_swa": dict(
        BASE,
        model_type="gemma3_text",
        hidden_size=256,
        num_hidden_layers=6,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=64,
        query_pre_attn_scalar=64,
        sliding_window=512,
        sliding_window_pattern=6,
        rope_local_base_freq=10000.0,
    ),
    # qwen3_moe: 8 routed experts, 2 per token. Built in float32: on the CPU backend MLX's
    # GatherMM (the routed experts) runs only in float32 ("[GatherMM::eval] Currently only
    # supports float32"), so this model also checks a float32 cache.
    "qwen3_moe": dict(
        BASE,
        _dtype="float32",
        model_type="qwen3_moe",
        hidden_size=256,
        num_hidden_layers=4,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=128,
        decoder_sparse_step=1,
        mlp_only_layers=[],
        norm_topk_prob=True,
    ),
    # deepseek_v3: MLA, the cache holds the latent (kv_lora_rank) and the rope key. All layers
    # dense (first_k_dense_replace = layers) so that it runs in bf16 on the CPU backend.
    "deepseek_v3_mla": dict(
        BASE,
        model_type="deepseek_v3",
        hidden_size=256,
        num_hidden_layers=3,
        intermediate_size=512,
        moe_intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=4,
        n_shared_experts=1,
        n_routed_experts=8,
        num_experts_per_tok=2,
        routed_scaling_factor=1.0,
        kv_lora_rank=128,
        q_lora_rank=192,
        qk_rope_head_dim=64,
        v_head_dim=64,
        qk_nope_head_dim=64,
        n_group=1,
        topk_group=1,
        first_k_dense_replace=3,
        moe_layer_freq=1,
    ),
    # deepseek_v2: MLA weights, but the cache holds per-head decompressed keys and values.
    # All layers dense, as deepseek_v3.
    "deepseek_v2_mla": dict(
        BASE,
        model_type="deepseek_v2",
        hidden_size=256,
        num_hidden_layers=3,
        intermediate_size=512,
        moe_intermediate_size=128,
        num_attention_heads=4,
        num_key_value_heads=4,
        n_shared_experts=1,
        n_routed_experts=8,
        num_experts_per_tok=2,
        kv_lora_rank=128,
        q_lora_rank=192,
        qk_rope_head_dim=64,
        v_head_dim=64,
        qk_nope_head_dim=64,
        first_k_dense_replace=3,
        moe_layer_freq=1,
        # deepseek_v2.py reads rope_scaling unconditionally (yarn).
        rope_scaling={"type": "yarn", "factor": 1.0, "original_max_position_embeddings": 16384},
    ),
    # qwen3_next: 3 of every 4 layers are gated-delta linear attention (ArraysCache(2)).
    # Dense MLPs (mlp_only_layers = all) so that it runs in bf16 on the CPU backend.
    "qwen3_next_hybrid": dict(
        BASE,
        model_type="qwen3_next",
        hidden_size=256,
        num_hidden_layers=4,
        intermediate_size=512,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=64,
        linear_num_value_heads=4,
        linear_num_key_heads=2,
        linear_key_head_dim=64,
        linear_value_head_dim=64,
        linear_conv_kernel_dim=4,
        num_experts=8,
        num_experts_per_tok=2,
        decoder_sparse_step=1,
        shared_expert_intermediate_size=128,
        mlp_only_layers=[0, 1, 2, 3],
        moe_intermediate_size=128,
        partial_rotary_factor=0.25,
        full_attention_interval=4,
    ),
}

# (label, group_size, bits, mode); None = unquantized bf16.
QUANTS = [
    ("bf16", None, None, None),  # the model's float dtype (float32 where noted)
    ("q4g64", 64, 4, "affine"),
    ("q8g64", 64, 8, "affine"),
    ("mxfp4", 32, 4, "mxfp4"),
]

PROMPTS = [1, 255, 256, 1000, 2049]
# 5,000 tokens (three prefill chunks, and quantized_kv_start's default) only where it
# changes what is checked: the default cache and kv_bits from the default start.
LONG_PROMPT = 5000
LONG_KINDS = ("default", "kv8")

# (label, generate_step kwargs)
CACHE_KINDS = [
    ("default", {}),
    ("kv8", {"kv_bits": 8}),
    ("kv8_start0", {"kv_bits": 8, "quantized_kv_start": 0}),
    ("kv4_start0", {"kv_bits": 4, "quantized_kv_start": 0}),
    ("max_kv_300", {"max_kv_size": 300}),
]


def header_of(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return f.read(n).decode("utf-8")


def cache_layers(caches):
    out = []
    for c in caches:
        entry = {"class": type(c).__name__, "nbytes": int(c.nbytes)}
        if isinstance(c, cache_mod.ArraysCache):
            entry["arrays"] = [
                {"shape": list(a.shape), "dtype": str(a.dtype).replace("mlx.core.", ""), "nbytes": int(a.nbytes)}
                for a in c.cache
                if a is not None
            ]
        elif getattr(c, "keys", None) is not None:
            keys = c.keys[0] if isinstance(c.keys, (tuple, list)) else c.keys
            entry["cells"] = int(keys.shape[2])
            entry["offset"] = int(c.offset)
        out.append(entry)
    return out


def run_prompt(model, n, kwargs):
    mx.random.seed(SEED + n)
    prompt = mx.random.randint(0, BASE["vocab_size"], (n,)).astype(mx.uint32)
    caches = cache_mod.make_prompt_cache(model, max_kv_size=kwargs.get("max_kv_size"))
    mx.clear_cache()
    active_before = mx.get_active_memory()
    mx.reset_peak_memory()
    try:
        for _ in generate_step(prompt, model, max_tokens=0, prompt_cache=caches, **kwargs):
            pass
    except Exception as e:  # the refusals are part of the record
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
    # generate_step replaces converted caches in the list it was given.
    mx.eval([c.state for c in caches])
    layers = cache_layers(caches)
    return {
        "cache_bytes": sum(l["nbytes"] for l in layers),
        "layers": layers,
        "active_before": int(active_before),
        "peak": int(mx.get_peak_memory()),
    }


def build(name, config, quant, workdir):
    label, group, bits, mode = quant
    config = dict(config)
    dtype = getattr(mx, config.pop("_dtype", "bfloat16"))
    model_cls, args_cls = _get_classes(config)
    mx.random.seed(SEED)
    model = model_cls(args_cls.from_dict(config))
    model.set_dtype(dtype)
    mx.eval(model.parameters())
    cfg = dict(config)
    if group is not None:
        model, cfg = quantize_model(model, cfg, group, bits, mode=mode)
    path = Path(workdir) / f"{name}-{label}"
    save_model(path, model)
    save_config(cfg, path / "config.json")
    # Load back through MLX-LM's own loader, as mlx_lm.generate does.
    loaded, loaded_cfg = load_model(path)
    weights_bytes = sum(v.nbytes for _, v in tree_flatten(loaded.parameters()))
    st = path / "model.safetensors"
    return loaded, {
        "quant": label,
        "config": json.loads((path / "config.json").read_text()),
        "file_bytes": st.stat().st_size,
        "header": header_of(st),
        "weights_bytes": int(weights_bytes),
        "tensors": [
            {"name": k, "dtype": str(v.dtype).replace("mlx.core.", ""), "shape": list(v.shape), "nbytes": int(v.nbytes)}
            for k, v in sorted(tree_flatten(loaded.parameters()))
        ],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append")
    ap.add_argument("--out", default="tests/fixtures/mlx")
    ap.add_argument("--quick", action="store_true", help="bf16 and q4g64 only, fewer prompts")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    mx.set_default_device(mx.cpu)
    for name, config in MODELS.items():
        if a.only and name not in a.only:
            continue
        record = {
            "schema": "llmbound-mlx-oracle-1",
            "mlx": version("mlx"),
            "mlx_lm": version("mlx-lm"),
            "device": "cpu",
            "name": name,
            "prefill_step_size": 2048,
            "artifacts": [],
        }
        quants = QUANTS[:2] if a.quick else QUANTS
        with tempfile.TemporaryDirectory() as tmp:
            for q in quants:
                try:
                    model, art = build(name, config, q, tmp)
                except Exception as e:
                    record["artifacts"].append({"quant": q[0], "error": f"{type(e).__name__}: {e}".splitlines()[0]})
                    continue
                art["runs"] = []
                # Cache figures depend on the model's dtype, not on how its weights are
                # packed: every cache kind on bf16, two default runs elsewhere.
                if q[0] == "bf16":
                    plan = [(k, kw, n) for k, kw in CACHE_KINDS for n in PROMPTS]
                    plan += [(k, kw, LONG_PROMPT) for k, kw in CACHE_KINDS if k in LONG_KINDS]
                else:
                    plan = [("default", {}, 1), ("default", {}, 1000)]
                for kind, kwargs, n in plan:
                    if True:
                        r = run_prompt(model, n, kwargs)
                        r.update({"prompt": n, "cache_kind": kind, "kwargs": kwargs})
                        art["runs"].append(r)
                        print(name, q[0], kind, n, r.get("cache_bytes", r.get("error")), r.get("peak"), file=sys.stderr)
                record["artifacts"].append(art)
                del model
                mx.clear_cache()
        (out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
