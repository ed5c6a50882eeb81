"""Running the patched llama-fit-params and parsing what it logs.

One run = `llama-fit-params --fit-print on -v -m FILE <settings>`: a single dry run
(`no_alloc`) of model load + context creation on the CPU backend, which logs every buffer.
Lines starting with `llmbound-exact:` come from scripts/oracle/patch_llama_cpp.py and carry
exact byte counts; the upstream MiB lines are kept verbatim beside them.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

# The errors llama.cpp reports on a bad file; a failed run that shows none of these (and no
# exact lines) is treated as a lost log and retried.
KNOWN_ERRORS = [
    re.compile(r"key not found in model: (\S+)"),
    re.compile(r"array key not found in model: (\S+)"),
    re.compile(r"key (\S+) has wrong array length; expected (\d+), got (\d+)"),
    re.compile(r"key (\S+) has wrong type (\S+) but expected type (\S+)"),
    re.compile(r"missing tensor '([^']+)'"),
    re.compile(r"tensor '([^']+)' not found"),
    re.compile(r"tensor '([^']+)' has wrong shape; expected ([-0-9, ]+), got ([-0-9, ]+)"),
    re.compile(r"wrong number of tensors; expected (\d+), got (\d+)"),
    re.compile(r"llmbound discovery: [^\n]*"),
    re.compile(r"error loading model[^\n]*"),
    re.compile(r"failed to create llama_context|failed to load model|failed to initialize[^\n]*"),
    re.compile(r"GGML_ASSERT\([^\n]*"),
    re.compile(r"unsupported model architecture[^\n]*"),
    re.compile(r"error: [^\n]*"),
]

RE_EXACT = re.compile(r"llmbound-exact: (\w[\w-]*) (.*)$")
RE_KV = re.compile(r"(\w+): size = +([0-9.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+)/(\d+) seqs\), K \((\w+)\): +([0-9.]+) MiB, V \((\w+)\): +([0-9.]+) MiB")
RE_RS = re.compile(r"(\w+): size = +([0-9.]+) MiB \( *(\d+) cells, +(\d+) layers, +(\d+) seqs +(\d+) rs_seq\), R \((\w+)\): +([0-9.]+) MiB, S \((\w+)\): +([0-9.]+) MiB")
RE_OUT = re.compile(r"(\w+): +(\S+) +output buffer size = +([0-9.]+) MiB")
RE_COMPUTE = re.compile(r"(\w+): +(\S+) compute buffer size = +([0-9.]+) MiB")
RE_MODEL = re.compile(r"(\w+): +(\S+) model buffer size = +([0-9.]+) MiB")
RE_CTX = re.compile(r"llama_context: (n_seq_max|n_ctx|n_ctx_seq|n_batch|n_ubatch|causal_attn|flash_attn|kv_unified|freq_base|freq_scale|n_ctx_per_seq|n_outputs_max|n_rs_seq) += (\S+)")
RE_ROLE = re.compile(r"creating (non-SWA|SWA) KV cache|llama_memory_hybrid|llama_kv_cache_iswa|creating KV cache|llama_memory_recurrent"
                     r"|creating DSV4 (CSA compressed|HCA compressed|lightning-indexer) KV cache")
# deepseek4's compressor states (llama_dsv4_comp_state): f32 kv and score planes per layer; the
# patch logs no exact line for them, but every factor of their size is printed as an integer.
RE_DSV4_STATE = re.compile(r"llama_dsv4_comp_state: (\w+) ratio = (\d+), state = (\d+) x (\d+), streams = (\d+), "
                           r"rs_seq = (\d+), layers = (\d+), size = +([0-9.]+) MiB")
RE_PRINT = re.compile(r"^Host (\d+) (\d+) (\d+)\s*$", re.M)


def kv_pairs(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for tok in text.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return out


def run(binary: Path, args: list[str], timeout: float = 120.0, retries: int = 3,
        env: dict | None = None) -> tuple[int, str, int]:
    """Run the tool; returns (exit code, combined log, attempts). Exit code -9 = timed out."""
    cmd = [str(binary)] + args
    env = dict(env if env is not None else os.environ)
    env.setdefault("GGML_NO_BACKTRACE", "1")  # a crash would otherwise attach gdb for a backtrace
    env.setdefault("LLMBOUND_SYNC_LOG", "1")  # patched logger prints at once: a crash loses nothing
    last = (0, "", 0)
    for attempt in range(1, retries + 1):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                               text=True, errors="replace", env=env)
            rc, log = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, log = -9, out + "\n[llmbound: timed out]\n"
        last = (rc, log, attempt)
        if rc == 0 and "llmbound-exact: compute" in log:
            return last
        if rc != 0 and rc != -9 and first_error(log):
            return last  # a real, reported failure: no point retrying
        time.sleep(0.2)
    return last


def first_error(log: str) -> str | None:
    best = None
    for rx in KNOWN_ERRORS:
        m = rx.search(log)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), m.group(0))
    return best[1].strip() if best else None


RE_STAMP = re.compile(r"^\d+\.\d+\.\d+\.\d+ ([A-Z]) ")


def strip_stamp(line: str) -> str:
    return RE_STAMP.sub("", line).strip()


def error_reason(log: str) -> str | None:
    """llama.cpp's own error lines (level E), most specific first, else the first known error."""
    errs = []
    for line in log.splitlines():
        m = RE_STAMP.match(line)
        if m and m.group(1) == "E":
            errs.append(strip_stamp(line))
    if errs:
        return " | ".join(errs[:3])[:600]
    e = first_error(log)
    return e[:600] if e else None


def describe_rc(rc: int) -> str:
    if rc == -9:
        return "timed out"
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def parse(log: str) -> dict:
    """Every figure of one run."""
    res: dict = {"kv_caches": [], "recurrent": [], "output_buffers": [], "compute_buffers": [],
                 "model_buffers": [], "breakdown": [], "context": {}, "optional_absent": []}
    role = ""
    pending_kv_lines: list[str] = []
    pending_rs_lines: list[str] = []
    for line in log.splitlines():
        m = RE_ROLE.search(line)
        if m:
            if "DSV4 CSA" in line:
                role = "dsv4_csa"
            elif "DSV4 HCA" in line:
                role = "dsv4_hca"
            elif "DSV4 lightning-indexer" in line:
                role = "dsv4_lid"
            elif "non-SWA" in line:
                role = "non_swa"
            elif "SWA" in line:
                role = "swa"
        m = RE_DSV4_STATE.search(line)
        if m:
            name, ratio, size, embd, streams, rs_seq, layers = m.group(1), *map(int, m.groups()[1:7])
            # two f32 tensors (kv, score) of embd × size × streams·(1 + rs_seq) per layer
            nbytes = 2 * 4 * embd * size * streams * (1 + rs_seq) * layers
            res.setdefault("dsv4_states", []).append(
                {"name": name, "ratio": ratio, "state_size": size, "n_embd_state": embd, "streams": streams,
                 "rs_seq": rs_seq, "layers": layers, "bytes": nbytes, "printed": strip_stamp(line[m.start():]).strip()})
            continue
        m = RE_KV.search(line)
        if m:
            pending_kv_lines.append(line[m.start():].strip())
            continue
        m = RE_RS.search(line)
        if m:
            pending_rs_lines.append(line[m.start():].strip())
            continue
        m = RE_EXACT.search(line)
        if m:
            what, rest = m.group(1), m.group(2)
            if what == "kv":
                d = kv_pairs(rest)
                d["role"] = role
                d["printed"] = pending_kv_lines.pop(0) if pending_kv_lines else None
                res["kv_caches"].append(d)
            elif what == "recurrent":
                d = kv_pairs(rest)
                d["printed"] = pending_rs_lines.pop(0) if pending_rs_lines else None
                res["recurrent"].append(d)
            elif what == "output":
                res["output_buffers"].append(kv_pairs(rest))
            elif what == "compute":
                res["compute_buffers"].append(kv_pairs(rest))
            elif what == "model":
                res["model_buffers"].append(kv_pairs(rest))
            elif what == "breakdown":
                res["breakdown"].append(kv_pairs(rest))
            elif what in ("discover-missing", "discover-shape"):
                mm = re.match(r"(\S+) \[([-0-9, ]+)\]", rest)
                if mm:
                    res.setdefault("discover", []).append([mm.group(1), [int(x) for x in mm.group(2).split(",")]])
            elif what == "optional-absent":
                mm = re.match(r"(\S+) \[([-0-9, ]+)\]", rest)
                if mm:
                    res["optional_absent"].append([mm.group(1), [int(x) for x in mm.group(2).split(",")]])
            continue
        m = RE_CTX.search(line)
        if m:
            v = m.group(2)
            res["context"][m.group(1)] = int(v) if re.fullmatch(r"\d+", v) else v
            continue
    printed = {"output": [], "compute": [], "model": []}
    for line in log.splitlines():
        for key, rx in (("output", RE_OUT), ("compute", RE_COMPUTE), ("model", RE_MODEL)):
            m = rx.search(line)
            if m:
                printed[key].append(strip_stamp(line[m.start():]))
    res["printed"] = printed
    bd = [line for line in log.splitlines() if "memory breakdown" in line or "llama_memory_breakdown_print" in line
          or "common_memory_breakdown_print" in line]
    res["printed"]["breakdown"] = [strip_stamp(b) for b in bd]
    m = RE_PRINT.search(log)
    if m:
        res["fit_print_mib"] = {"model": int(m.group(1)), "context": int(m.group(2)), "compute": int(m.group(3))}
    return res
