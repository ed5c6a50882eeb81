#!/usr/bin/env python3
"""`-fit` without devices: llama.cpp fitting the context to system memory alone.

Runs the CPU build of the patched llama-fit-params (scripts/oracle/build-llama-cpp.sh) with no
`--rpc` devices over the RPC placement fixtures' shapes. With no GPU llama.cpp's `-fit` weighs
the host's projected memory against the CPU device's total (`sysconf` pages × page size on
Linux) less the 1024 MiB margin, and reduces `-c` from the trained context when the user left
it unset; it counts only buffers that are host memory to ggml (`ggml_backend_buft_is_host`),
so weights in `CPU_REPACK` are left out of the projection. Each dry run's breakdown (its
`n_ctx`, every buffer: model / context / compute) and the fitted arguments or the refusal are
recorded, with this machine's total and whether its CPU repacks as x86-64 AVX2 does.

Writes tests/fixtures/llama-cpp/fit-host/fit-host.json (schema llmbound-llama-cpp-fit-host/1).

Usage: scripts/oracle/fit_host.py
Environment: LLAMA_CPP_ROOT (default /work/llama-cpp), LLAMA_FIT_PARAMS.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tool  # noqa: E402
from placement import FIT, ORACLE  # noqa: E402  (the CPU build's llama-fit-params)
from placement_vulkan import existing_placement, materialise  # noqa: E402

OUT = ORACLE / "fit-host"
SCHEMA = "llmbound-llama-cpp-fit-host/1"

RE_ARGS = re.compile(r"^(-c \d+ -ngl -?\d+.*)$", re.M)
RE_CTX = re.compile(r"llama_context: n_ctx\s+=\s+(\d+)")
RE_BD = re.compile(r"llmbound-exact: breakdown buft=(\S+) host=(\d) model=(\d+) context=(\d+) compute=(\d+)")

# (model, arguments): the context left to -fit unless stated; cases where the repacked weights
# decide (-ub 4096 fits only without them), where the f32 cache's f16 casts grow the compute
# buffer, where -fit reduces the context, and where it refuses.
GRID = [
    ("llama-3.1-8b-shape", []),
    ("llama-3.1-8b-shape", ["-ctk", "f32", "-ctv", "f32"]),
    ("llama-3.1-8b-shape", ["-ub", "4096", "-b", "4096"]),
    ("llama-3.1-8b-shape", ["-ub", "8192", "-b", "8192"]),
    ("llama-3.1-8b-shape", ["-np", "4", "-ctk", "f32", "-ctv", "f32"]),
    ("llama-3.1-8b-shape", ["-c", "131072", "-ctk", "f32", "-ctv", "f32"]),
    ("gemma-3-27b-shape", []),
    ("gemma-3-27b-shape", ["--swa-full"]),
    ("gemma-3-27b-shape", ["--swa-full", "-ctk", "q8_0", "-ctv", "q8_0"]),
    ("qwen3-30b-a3b-shape", ["-ctk", "f32", "-ctv", "f32"]),
    ("qwen3-30b-a3b-shape", ["-ub", "8192", "-b", "8192"]),
    ("gpt-oss-20b-shape", ["-ub", "8192", "-b", "8192"]),
    ("qwen3next-80b-shape", []),
    ("deepseek-v3-shape", []),
]


def dry_runs(log: str) -> list[dict]:
    """Each dry run's n_ctx and its buffers, in the order llama.cpp printed them."""
    runs: list[dict] = []
    for line in log.splitlines():
        m = RE_CTX.search(line)
        if m:
            runs.append({"n_ctx": int(m.group(1)), "buffers": []})
            continue
        m = RE_BD.search(line)
        if m and runs:
            runs[-1]["buffers"].append({"buft": m.group(1), "host": m.group(2) == "1",
                                        "model": int(m.group(3)), "context": int(m.group(4)),
                                        "compute": int(m.group(5))})
    return [r for r in runs if r["buffers"]]


def main() -> int:
    if not FIT.exists():
        print(f"missing {FIT}: run scripts/oracle/build-llama-cpp.sh", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    info = json.loads((ORACLE / "llama-3.1-8b-shape.json").read_text())["llama_cpp"]
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    flags = Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n", 1)[0].split()
    info = {**info, "backend": "CPU only (no --rpc devices)", "tool": "llama-fit-params -v",
            "host_total_bytes": total,
            "host_cpu": {"avx2": "avx2" in flags, "avx512f": "avx512f" in flags}}
    work = Path(tempfile.mkdtemp(prefix="llmbound-fit-host-"))
    models = {}
    cases = []
    for name, args in GRID:
        if name not in models:
            m = existing_placement(name)
            models[name] = {"m": m, "path": materialise(m, work)}
        m = models[name]["m"]
        t0 = time.time()
        rc, log, _ = tool.run(FIT, ["-v", "-m", str(models[name]["path"])] + args, timeout=900, retries=1)
        found = RE_ARGS.findall(log)
        rec = {"model": name, "header": os.path.normpath(m["header_rel"]), "file_size": m["file_size"],
               "args": args, "ok": rc == 0 and bool(found),
               "command": " ".join(shlex.quote(x) for x in ["llama-fit-params", "-m", "MODEL"] + args),
               "dry_runs": dry_runs(log), "seconds": round(time.time() - t0, 2)}
        if rec["ok"]:
            rec["arguments"] = found[-1].strip()
        else:
            fails = re.findall(r"failed to fit params to free device memory: ([^\n]*)", log)
            rec["error"] = fails[-1].strip() if fails else (tool.error_reason(log) or tool.describe_rc(rc))
        print(f"  {name} {' '.join(args)}: {rec.get('arguments') or 'refused: ' + str(rec.get('error'))}"
              f" ({rec['seconds']}s, {len(rec['dry_runs'])} dry runs)", flush=True)
        cases.append(rec)
        (OUT / "fit-host.json").write_text(json.dumps({"schema": SCHEMA, "llama_cpp": info, "cases": cases},
                                                      indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
