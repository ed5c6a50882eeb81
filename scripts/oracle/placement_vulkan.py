#!/usr/bin/env python3
"""Vulkan placement fixtures: llama.cpp's per-buffer memory on a real GPU backend.

Runs the Vulkan build of the patched llama-fit-params (scripts/oracle/build-llama-cpp-vulkan.sh)
on Mesa's llvmpipe (GGML_VK_VISIBLE_DEVICES=0), with the device's reported memory set by
LLMBOUND_VK_MEM_BYTES (llvmpipe itself reports a 2 GiB heap), over dense shapes ×
`-ngl` all / 20 (or half the layers) / 0 × ub 512 / 2048 × fa on / off, plus `-fit` cases.
Unlike the RPC stand-ins of placement.py this backend offloads the ops of host-resident
weights (batches of ≥ 32 rows) and allocates the host's compute buffer as pinned
`Vulkan_Host` memory; tensors whose ops the device cannot run stay in host buffers
(`CPU_REPACK`). Every buffer of llama.cpp's breakdown is recorded as printed, and summed per
device and host.

Writes tests/fixtures/llama-cpp/placement-vulkan/<model>.json (schema
llmbound-llama-cpp-placement-vulkan/1), with the device line ggml-vulkan prints (its name and
features: fp16, bf16, int dot, matrix cores) so a reader knows which features were missing.

Usage: scripts/oracle/placement_vulkan.py [--only NAME[,NAME]]
Environment: LLAMA_CPP_ROOT (default /work/llama-cpp), LLAMA_FIT_PARAMS_VULKAN.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ROOT = Path(os.environ.get("LLAMA_CPP_ROOT", "/work/llama-cpp"))
SRC = ROOT / "src"
FIT = Path(os.environ.get("LLAMA_FIT_PARAMS_VULKAN", SRC / "build-vulkan" / "bin" / "llama-fit-params"))
if (SRC / "gguf-py").is_dir():
    sys.path.insert(0, str(SRC / "gguf-py"))
sys.path.insert(0, str(HERE))

import tool  # noqa: E402

ORACLE = REPO / "tests" / "fixtures" / "llama-cpp"
OUT = ORACLE / "placement-vulkan"
SCHEMA = "llmbound-llama-cpp-placement-vulkan/1"
GIB = 1 << 30
MIB = 1 << 20
DEVICE = "Vulkan0"

RE_DEVICE = re.compile(r"ggml_vulkan: 0 = ([^\n]*)")
RE_ARGS = re.compile(r"^(-c \d+ -ngl -?\d+.*)$", re.M)


def existing(name: str) -> dict:
    fx = json.loads((ORACLE / f"{name}.json").read_text())
    return {"name": name, "header": ORACLE / fx["model"]["header"], "file_size": fx["model"]["file_size"],
            "arch": fx["model"]["arch"], "layers": fx["model"]["layers"],
            "header_rel": f"../{fx['model']['header']}"}


def existing_placement(name: str) -> dict:
    """A model of the RPC placement fixtures (the same header, so both oracles read one file)."""
    fx = json.loads((ORACLE / "placement" / f"{name}.json").read_text())
    m = fx["model"]
    return {"name": name, "header": ORACLE / "placement" / m["header"], "file_size": m["file_size"],
            "arch": m["arch"], "layers": m["layers"], "moe": m.get("moe", False),
            "header_rel": f"../placement/{m['header']}"}


def materialise(m: dict, work: Path) -> Path:
    from synth import materialise as mat
    path = work / f"{m['name']}.gguf"
    if not path.exists():
        mat(Path(m["header"]), path, m["file_size"])
    return path


def base_args(c: dict) -> list[str]:
    a = ["-np", "1", "-ctk", "f16", "-ctv", "f16", "-fa", c["fa"], "-ub", str(c["ub"]),
         "-b", str(max(2048, c["ub"]))]
    if c.get("ctx") is not None:
        a = ["-c", str(c["ctx"])] + a
    return a + c.get("flags", [])


def moe_grid(m: dict) -> list[dict]:
    """A MoE shape: the routed experts in host memory (--cpu-moe, --n-cpu-moe), host layers,
    every layer on the device; and -fit's expert overflow on devices of half and three quarters
    of the file (plus its 1 GiB margin) and on 16 GiB."""
    w = m["file_size"]
    cases = []
    for flags in (["--cpu-moe"], ["--n-cpu-moe", "24"], ["-ngl", "24"], ["-ngl", "99"]):
        for ub in (512, 2048):
            cases.append({"kind": "place", "device": 24 * GIB, "ctx": 32768, "fa": "on", "ub": ub,
                          "flags": flags, "tag": ""})
    for flags in (["--cpu-moe"], ["-ngl", "99"]):
        cases.append({"kind": "place", "device": 24 * GIB, "ctx": 32768, "fa": "off", "ub": 512,
                      "flags": flags, "tag": ""})
    # (16 GiB: issue 22's measured card)
    for dev in (GIB + w // 2, GIB + w * 3 // 4, 16 * GIB):
        cases.append({"kind": "fit", "device": (dev // MIB) * MIB, "ctx": 32768, "fa": "on", "ub": 512,
                      "flags": [], "tag": ""})
    # the user's own overrides: -fit leaves them and prints them with its line
    cases.append({"kind": "fit", "device": 24 * GIB, "ctx": 32768, "fa": "on", "ub": 512,
                  "flags": ["--cpu-moe"], "tag": ""})
    return cases


def grid(m: dict) -> list[dict]:
    if m.get("moe"):
        return moe_grid(m)
    n = m["layers"]
    w = m["file_size"]
    big = max(24 * GIB, (w * 3) // 2 + 8 * GIB)
    ctx = 32768 if n >= 16 else 4096
    partial = 20 if n > 20 else max(1, n // 2)
    cases = []
    for ngl in ("99", str(partial), "0"):
        for ub in (512, 2048):
            for fa in ("on", "off"):
                tag = ""
                if n == 32 and ctx == 32768 and ub == 512 and fa == "on" and ngl in ("99", "20"):
                    tag = "issue: " + ("all layers" if ngl == "99" else "-ngl 20")
                cases.append({"kind": "place", "device": big, "ctx": ctx, "fa": fa, "ub": ub,
                              "flags": ["-ngl", ngl], "tag": tag})
    # -fit keeps 1 GiB free per device: devices of that margin plus half and three quarters of the
    # file force partial offload; the large one with the context unset lets -fit choose it
    for dev, c in ((GIB + w // 2, ctx), (GIB + w * 3 // 4, ctx), (GIB + w * 3 // 2, None)):
        cases.append({"kind": "fit", "device": (dev // MIB) * MIB, "ctx": c, "fa": "on", "ub": 512, "flags": [],
                      "tag": ""})
    return cases


def case_id(c: dict) -> str:
    flags = "_".join(f.replace(" ", "") for f in c["flags"])
    ctx = "cauto" if c["ctx"] is None else f"c{c['ctx']}"
    return (f"{c['kind']}-{c['device'] / GIB:g}G-{ctx}-fa{c['fa']}-ub{c['ub']}"
            + (f"-{flags}" if flags else ""))


def env_for(device_bytes: int) -> dict:
    return dict(os.environ, GGML_VK_VISIBLE_DEVICES="0", LLMBOUND_VK_MEM_BYTES=str(device_bytes))


def summarise(breakdown: list[dict]) -> dict:
    dev = {"model": 0, "context": 0, "compute": 0}
    host = {"model": 0, "context": 0, "compute": 0}
    other = []
    for b in breakdown:
        if b["buft"] == DEVICE:
            tgt = dev
        elif b.get("host") == 1:
            tgt = host
        else:
            other.append({k: b[k] for k in ("buft", "model", "context", "compute")})
            continue
        for k in ("model", "context", "compute"):
            tgt[k] += b[k]
    return {"devices": [dev], "host": host, "other_buffers": other}


def run_place(path: Path, device_bytes: int, args: list[str]) -> dict:
    full = ["--fit-print", "on", "-v", "-m", str(path)] + args
    t0 = time.time()
    rc, log, attempts = tool.run(FIT, full, timeout=600, retries=2, env=env_for(device_bytes))
    parsed = tool.parse(log)
    ok = rc == 0 and bool(parsed["breakdown"])
    out = {"ok": ok, "seconds": round(time.time() - t0, 2), "attempts": attempts}
    dm = RE_DEVICE.search(log)
    if dm:
        out["vulkan_device"] = dm.group(1).strip()
    if not ok:
        out["error"] = tool.error_reason(log) or tool.describe_rc(rc)
        return out
    bd = [{k: b[k] for k in ("buft", "host", "model", "context", "compute")} for b in parsed["breakdown"]]
    out.update({"breakdown": bd, "memory": summarise(bd), "kv_caches": parsed["kv_caches"],
                "compute_buffers": parsed["compute_buffers"], "model_buffers": parsed["model_buffers"],
                "n_ctx": parsed["context"].get("n_ctx")})
    return out


def run_fit(path: Path, device_bytes: int, args: list[str]) -> dict:
    full = ["-v", "-m", str(path)] + args
    t0 = time.time()
    rc, log, attempts = tool.run(FIT, full, timeout=900, retries=1, env=env_for(device_bytes))
    m = RE_ARGS.findall(log)
    out = {"ok": rc == 0 and bool(m), "seconds": round(time.time() - t0, 2),
           "dry_runs": log.count("llmbound-exact: compute buffer=")}
    if not out["ok"]:
        out["error"] = tool.error_reason(log) or tool.describe_rc(rc)
        # llvmpipe's 128 MiB storage-buffer range: a cache tensor larger than that aborts the
        # reservation (a full GPU's range is 4 GiB)
        assert_line = re.search(r"ggml-backend\.cpp:\d+: ([^\n]*?)(?:bash:|$)", log, re.M)
        if assert_line:
            out["error"] += ": " + assert_line.group(1).strip()
        return out
    out["arguments"] = m[-1].strip()
    return out


def vulkan_limits() -> dict:
    """The device's limits that decide where llama.cpp puts a tensor (`vulkaninfo`, Debian
    package vulkan-tools): ggml-vulkan's supports_op refuses an op whose source is larger than
    maxStorageBufferRange (without 64-bit indexing), so such a weight stays in a host buffer."""
    try:
        p = subprocess.run(["vulkaninfo"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=120, env=env_for(24 * GIB))
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"vulkaninfo: {e}"}
    out: dict = {}
    for key in ("deviceName", "driverInfo", "apiVersion", "deviceType", "maxStorageBufferRange",
                "maxMemoryAllocationSize", "maxBufferSize"):
        m = re.search(rf"^\s*{key}\s*=\s*(.+)$", p.stdout, re.M)
        if m:
            v = m.group(1).strip()
            out[key] = int(v, 0) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", v) else v
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    opts = ap.parse_args()
    if not FIT.exists():
        print(f"missing {FIT}: run scripts/oracle/build-llama-cpp-vulkan.sh", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    rc, vlog, _ = tool.run(FIT, ["--version"], timeout=120, retries=1, env=env_for(24 * GIB))
    info = json.loads((ORACLE / "llama-3.1-8b-shape.json").read_text())["llama_cpp"]
    info = {**info, "backend": "Vulkan (Mesa llvmpipe, GGML_VK_VISIBLE_DEVICES=0, memory from LLMBOUND_VK_MEM_BYTES)",
            "tool": "llama-fit-params -v (build-vulkan)",
            "version_output": [line for line in vlog.splitlines() if line.startswith(("version:", "built with"))],
            "vulkan_limits": vulkan_limits()}
    if "maxStorageBufferRange" not in info["vulkan_limits"]:
        # the tests read the device's tensor limit from here
        print(f"no device limits: {info['vulkan_limits'].get('error', 'vulkaninfo printed none')} "
              "(apt-get install -y vulkan-tools)", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="llmbound-placement-vulkan-"))
    only = set(filter(None, opts.only.split(",")))
    for name in ("llama-tiny", "llama-3.1-8b-shape", "gemma-3-27b-shape", "qwen3-30b-a3b-shape"):
        if only and name not in only:
            continue
        m = existing_placement(name) if name == "qwen3-30b-a3b-shape" else existing(name)
        path = materialise(m, work)
        t0 = time.time()
        results = []
        for c in grid(m):
            args = base_args(c)
            rec = {"id": case_id(c), "kind": c["kind"], "tag": c["tag"], "device_bytes": [c["device"]],
                   "args": args,
                   "command": "GGML_VK_VISIBLE_DEVICES=0 LLMBOUND_VK_MEM_BYTES=%d " % c["device"]
                   + " ".join(shlex.quote(x) for x in
                              ["llama-fit-params"] + (["--fit-print", "on"] if c["kind"] == "place" else [])
                              + ["-m", "MODEL"] + args)}
            if c["kind"] == "place":
                rec.update(run_place(path, c["device"], args))
            else:
                r = run_fit(path, c["device"], args)
                rec.update(r)
                if r["ok"]:
                    fitted = shlex.split(r["arguments"])
                    rec["fitted_placement"] = run_place(path, c["device"], fitted + base_args({**c, "ctx": None}))
            print(f"  {name} {rec['id']}: {'ok' if rec['ok'] else 'FAILED ' + str(rec.get('error'))}"
                  + (f" -> {rec.get('arguments')}" if c["kind"] == "fit" else "")
                  + f" ({rec['seconds']}s)", flush=True)
            results.append(rec)
            fixture = {"schema": SCHEMA, "llama_cpp": info,
                       "model": {"name": name, "arch": m["arch"], "header": m["header_rel"],
                                 "file_size": m["file_size"], "layers": m["layers"],
                                 "moe": bool(m.get("moe"))},
                       "cases": results}
            (OUT / f"{name}.json").write_text(json.dumps(fixture, indent=1) + "\n")
        print(f"{name}: {sum(r['ok'] for r in results)}/{len(results)} ok in {time.time() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
