"""Completing a synthetic model against llama.cpp itself.

A spec starts with its architecture's structural keys (the quirks under test) and a few
tensors. `resolve` then runs llama-fit-params and fixes what it reports, one error at a
time, until a dry run succeeds:

  key not found in model: K          -> add K with a default from `default_value`
  key K has wrong array length / type -> reshape / retype K
  missing tensor 'T'                 -> add T with shape [1]
  tensor 'T' has wrong shape; expected a, b
                                      -> give T that shape
  crash while building the graph     -> add, one at a time, the optional tensors that the
                                        load skipped (the patched loader logs them with
                                        their expected shapes)
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import tool
from synth import Spec, write_spec

RESOLVE_ARGS = ["-c", "512", "-fa", "on", "-ub", "64", "-b", "64", "-np", "1"]


def default_value(key: str, spec: Spec):
    d = spec.dims
    n_layer = d.get("n_layer", 4)
    n_embd = d.get("n_embd", 64)
    head_dim = d.get("head_dim", 16)
    suffix = key.split(".", 1)[1] if "." in key else key
    table = {
        "vocab_size": d.get("n_vocab", 512),
        "context_length": d.get("n_ctx_train", 8192),
        "embedding_length": n_embd,
        "block_count": n_layer,
        "feed_forward_length": d.get("n_ff", 4 * n_embd),
        "attention.head_count": d.get("n_head", 4),
        "attention.head_count_kv": d.get("n_head_kv", 2),
        "attention.key_length": head_dim,
        "attention.value_length": head_dim,
        "attention.layer_norm_rms_epsilon": 1e-6,
        "attention.layer_norm_epsilon": 1e-5,
        "attention.group_norm_epsilon": 1e-5,
        "attention.group_norm_groups": 8,
        "attention.sliding_window": d.get("n_swa", 128),
        "attention.q_lora_rank": 32,
        "attention.kv_lora_rank": 32,
        "attention.key_length_mla": head_dim + 8,
        "attention.value_length_mla": head_dim,
        "attention.decay_lora_rank": 16,
        "attention.iclr_lora_rank": 16,
        "attention.value_residual_mix_lora_rank": 16,
        "attention.gate_lora_rank": 16,
        "attention.causal": True,
        "attention.max_alibi_bias": 8.0,
        "attention.clamp_kqv": 8.0,
        "attention.scale": 0.125,
        "attention.temperature_length": 8192,
        "attention.shared_kv_layers": 0,
        "attention.relative_buckets_count": 32,
        "attention.output_scale": 1.0,
        "attention.indexer.head_count": d.get("n_head_kv", 2),
        "attention.indexer.key_length": 32,
        "attention.indexer.top_k": 64,
        "rope.dimension_count": head_dim,
        "rope.freq_base": 10000.0,
        "rope.freq_base_swa": 10000.0,
        "rope.scaling.factor": 1.0,
        "rope.scaling.original_context_length": 4096,
        "expert_count": d.get("n_expert", 4),
        "expert_used_count": d.get("n_expert_used", 2),
        "expert_shared_count": d.get("n_expert_shared", 1),
        "expert_feed_forward_length": d.get("n_ff_exp", 32),
        "expert_shared_feed_forward_length": d.get("n_ff_shexp", 32),
        "expert_chunk_feed_forward_length": d.get("n_ff_exp", 32),
        "leading_dense_block_count": d.get("n_dense", 1),
        "expert_weights_scale": 1.0,
        "expert_weights_norm": True,
        "expert_gating_func": 2,
        "expert_group_count": 1,
        "expert_group_used_count": 1,
        "nextn_predict_layers": 0,
        "ssm.conv_kernel": 4,
        "ssm.inner_size": 2 * n_embd,
        "ssm.state_size": 16,
        "ssm.time_step_rank": 8,
        "ssm.group_count": 1,
        "wkv.head_size": 16,
        "time_mix_extra_dim": 16,
        "time_decay_extra_dim": 16,
        "rescale_every_n_layers": 0,
        "token_shift_count": 2,
        "shortconv.l_cache": 3,
        "logit_scale": 1.0,
        "embedding_scale": 1.0,
        "residual_scale": 1.0,
        "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0,
        "router_logit_softcapping": 30.0,
        "full_attention_interval": 4,
        "interleave_moe_layer_step": 1,
        "pooling_type": 1,
        "altup.active_idx": 0,
        "altup.num_inputs": 4,
        "embedding_length_per_layer_input": 16,
        "kda.head_dim": 16,
        "decoder_start_token_id": 0,
        "moe_every_n_layers": 1,
        "swin_norm": False,
        "use_parallel_residual": False,
        "attention.key_length_swa": head_dim,
        "attention.value_length_swa": head_dim,
        "attention.key_length_mla_swa": head_dim + 32,
        "attention.value_length_mla_swa": head_dim,
        "attention.kv_lora_rank_swa": 64,
        "swiglu_clamp_exp": 7.0,
        "swiglu_clamp_shexp": 7.0,
        "attention.indexer.block_size": 64,
        "attention.indexer.local_blocks": 1,
        "attention.indexer.kpool": 2,
        "attention.indexer.kpool_select_tail": 0,
        "attn_res.block_size": 64,
        "rope.dimension_sections": [4, 6, 6, 0],
        "hyper_connection.count": 2,
        "hyper_connection.sinkhorn_iterations": 3,
        "hyper_connection.epsilon": 1e-6,
        "hyper_connection.magnitude": 1.0,
        "hyper_connection.low_rank": 16,
        "adapters.count": 0,
        "adapters.lora_rank": 16,
        "adapters.router_gain": 1.0,
        "kda.gate_lower_bound": -5.0,
        "kda.safe_gate": False,
        "expert_group_scale": 1.0,
        "experts_per_group": 2,
        "moe_latent_size": 0,
        "rope.dimension_count_swa": head_dim,
        "attention.temperature_scale": 0.1,
        "attention.output_group_count": 1,
        "attention.output_lora_rank": 16,
        "attention.compress_rope_freq_base": 10000.0,
        "attention.value_scale": 1.0,
        "activation_sparsity_scale": 0.0,
        "hash_layer_count": 0,
        "num_loops": 1,
        "skip_loop_final_norm": False,
        "block_size": 16,
        "conv_kernel_size": 4,
        "conv_group_size": 1,
        "selector_rank": 16,
        "selector_top_k": 4,
        "activation.situ_beta": 1.0,
        "activation.situ_linear_beta": 1.0,
        "attention.compress_ratios": [4] * n_layer,
    }
    if suffix in table:
        return table[suffix]
    if key.startswith("xielu."):
        return [0.8] * n_layer if key.endswith(("alpha_n", "alpha_p")) else [0.5] * n_layer if key.endswith("beta") else [1e-6] * n_layer
    if suffix == "attention.sliding_window_pattern":
        return [il % 4 < 3 for il in range(n_layer)]  # 3 sliding, 1 full
    if suffix == "attention.recurrent_layers":
        return [(il + 1) % 4 != 0 for il in range(n_layer)]
    if key.startswith("tokenizer.ggml."):
        return {"tokenizer.ggml.model": "none", "tokenizer.ggml.pre": "default"}.get(key)
    return None


TYPE_NAMES = {"u8": "u8", "i8": "i8", "u16": "u16", "i16": "i16", "u32": "u32", "i32": "i32",
              "u64": "u64", "i64": "i64", "f32": "f32", "f64": "f64", "bool": "bool", "str": "str"}


def resolve(spec: Spec, binary: Path, workdir: Path, max_iter: int = 600) -> tuple[Spec, str | None, list[str]]:
    """Returns the completed spec, None or the error that stopped it, and the fix log."""
    header = workdir / f"{spec.name}.header.gguf"
    full = workdir / f"{spec.name}.gguf"
    steps: list[str] = []
    tried_optional: set[str] = set()
    added_optional: list[str] = []
    last_optional: list = []
    discover = True
    for _ in range(max_iter):
        write_spec(spec, header, full)
        env = dict(os.environ)
        if discover:
            env["LLMBOUND_DISCOVER"] = "1"
        rc, log, _ = tool.run(binary, ["--fit-print", "on", "-v", "-m", str(full)] + RESOLVE_ARGS, timeout=30, env=env)
        parsed = tool.parse(log)
        if parsed.get("discover"):
            for name, ne in parsed["discover"]:
                while len(ne) > 1 and ne[-1] == 1:
                    ne.pop()
                spec.tensors[name] = ne
            steps.append(f"discovered {len(parsed['discover'])} tensor(s)")
            continue
        if discover and rc < 0 and not parsed["compute_buffers"] and "llmbound discovery" not in log:
            # the load crashed on a tensor it needed: go on one error at a time
            discover = False
            steps.append("discovery crashed; one error at a time")
            continue
        if parsed["optional_absent"]:
            last_optional = parsed["optional_absent"]
        if rc == 0 and parsed["compute_buffers"]:
            wanted = [(n, list(sh)) for n, sh in parsed["optional_absent"]
                      if n not in spec.tensors and any(re.fullmatch(w, n) for w in spec.want_optional)]
            if wanted:
                for n, sh in wanted:
                    while len(sh) > 1 and sh[-1] == 1:
                        sh.pop()
                    spec.tensors[n] = sh
                steps.append(f"+wanted optional {len(wanted)} tensor(s)")
                continue
            missing = [w for w in spec.want_optional if not any(re.fullmatch(w, n) for n in spec.tensors)]
            if missing:
                return spec, f"wanted optional tensors never offered by the loader: {missing}", steps
            return spec, None, steps
        err = tool.first_error(log) or ""
        m = re.search(r"key not found in model: (\S+)", err)
        if m:
            key = m.group(1)
            v = default_value(key, spec)
            if v is None:
                return spec, f"no default for key {key}", steps
            if err.startswith("array key"):
                v = [v] * spec.dims.get("n_layer", 4) if not isinstance(v, list) else v
            spec.kv[key] = v
            steps.append(f"+key {key}={v!r}")
            continue
        gating = f"{spec.arch}.expert_gating_func"
        if "ffn_moe_probs" not in log and "llama-graph.cpp" in log and "fatal error" in log and gating not in spec.kv:
            spec.kv[gating] = 1  # softmax; 0 (none) aborts build_moe_ffn
            steps.append(f"+key {gating}=1")
            continue
        if "needs to define token type count" in log and "tokenizer.ggml.token_type_count" not in spec.kv:
            spec.kv["tokenizer.ggml.token_type_count"] = 2
            steps.append("+key tokenizer.ggml.token_type_count=2")
            continue
        m = re.search(r"key (\S+) has wrong array length; expected (\d+), got (\d+)", err)
        if m:
            key, n = m.group(1), int(m.group(2))
            cur = spec.kv[key]
            cur = cur if isinstance(cur, list) else [cur]
            spec.kv[key] = (cur * n)[:n]
            steps.append(f"~key {key} length {n}")
            continue
        m = re.search(r"key (\S+) has wrong type (\S+) but expected type (\S+)", err)
        if m:
            key, want = m.group(1), m.group(3)
            want = want.lower()
            if want in TYPE_NAMES:
                if want.startswith("f"):
                    spec.kv[key] = float(spec.kv[key])
                elif want == "bool":
                    spec.kv[key] = bool(spec.kv[key])
                elif want != "str":
                    spec.kv[key] = int(spec.kv[key])
                spec.kv_types[key] = want
                steps.append(f"~key {key} type {want}")
                continue
            return spec, err, steps
        m = re.search(r"missing tensor '([^']+)'", err) or re.search(r"tensor '([^']+)' not found", err)
        if m:
            name = m.group(1)
            if name in spec.tensors:
                return spec, err, steps
            # the same tensor of another layer usually has the same shape: try that first
            mm = re.match(r"blk\.\d+\.(.*)", name)
            guess = [1]
            if mm:
                for other, ne in spec.tensors.items():
                    if re.fullmatch(r"blk\.\d+\." + re.escape(mm.group(1)), other):
                        guess = list(ne)
            spec.tensors[name] = guess
            steps.append(f"+tensor {name}")
            if mm and spec.uniform_layers:
                # every layer has this tensor: add it to all of them at once
                for il in range(spec.dims.get("n_layer", 0)):
                    spec.tensors.setdefault(f"blk.{il}.{mm.group(1)}", list(guess))
            continue
        m = re.search(r"tensor '([^']+)' has wrong shape; expected ([-0-9, ]+), got", err)
        if m:
            name = m.group(1)
            ne = [int(x) for x in m.group(2).split(",")]
            while len(ne) > 1 and ne[-1] == 1:
                ne.pop()
            if spec.tensors.get(name) == ne:
                return spec, err, steps
            # the same tensor of the other layers, given the same wrong shape, most likely
            # wants the same fix (a layer that does not is fixed by its own error)
            wrong = spec.tensors.get(name)
            mm = re.match(r"blk\.\d+\.(.*)", name)
            if mm and wrong is not None:
                for other, cur in list(spec.tensors.items()):
                    if cur == wrong and re.fullmatch(r"blk\.\d+\." + re.escape(mm.group(1)), other):
                        spec.tensors[other] = list(ne)
            spec.tensors[name] = ne
            steps.append(f"~tensor {name} {ne}")
            continue
        if "wrong number of tensors" in err and added_optional:
            n = added_optional.pop()
            del spec.tensors[n]
            steps.append(f"-optional {n} (wrong number of tensors)")
            continue
        # a crash or a refusal after the tensors loaded: try the optional tensors it skipped
        fresh = [(n, s) for n, s in last_optional if n not in tried_optional and n not in spec.tensors]
        if fresh and not err.startswith("error loading model") and "wrong number of tensors" not in err:
            n, s = fresh[0]
            tried_optional.add(n)
            while len(s) > 1 and s[-1] == 1:
                s.pop()
            spec.tensors[n] = s
            added_optional.append(n)
            steps.append(f"+optional {n} {s} (after: {err or tool.describe_rc(rc)})")
            mo = re.match(r"blk\.\d+\.(.*)", n)
            if mo and spec.uniform_layers:
                for other, sh in last_optional:
                    if other not in spec.tensors and re.fullmatch(r"blk\.\d+\." + re.escape(mo.group(1)), other):
                        tried_optional.add(other)
                        spec.tensors[other] = list(s)
            continue
        return spec, (err or tool.describe_rc(rc)) + " | " + tail(log), steps
    return spec, "gave up after too many fixes", steps


def tail(log: str, n: int = 3) -> str:
    lines = [x for x in log.strip().splitlines() if x.strip()]
    return " / ".join(x.strip()[:200] for x in lines[-n:])
