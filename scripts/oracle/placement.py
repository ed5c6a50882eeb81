#!/usr/bin/env python3
"""Placement fixtures: llama.cpp's own per-device memory and `-fit` plans on stand-in devices.

Starts 1-4 patched `ggml-rpc-server` processes on 127.0.0.1, each advertising a chosen memory
size (LLMBOUND_RPC_MEM_BYTES, scripts/oracle/patch_llama_cpp.py), and runs the patched
llama-fit-params with `--rpc 127.0.0.1:P1,...` over a grid of models, device sets and
placement flags:

  * placement cases (`--fit-print on`): one dry run; the exact per-buffer breakdown
    (model / context / compute per device and host);
  * fit cases (no `--fit-print`): llama.cpp's `-fit` search; the argument line it prints,
    then one more dry run with those arguments for the placement they give.

Writes tests/fixtures/llama-cpp/placement/<model>.json. The servers are started per device
set, bounded in time, and always killed (also on error or Ctrl-C).

Usage: scripts/oracle/placement.py [--only NAME[,NAME]]
Environment: LLAMA_CPP_ROOT (default /work/llama-cpp), LLAMA_FIT_PARAMS, LLMBOUND_RPC_SERVER.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ROOT = Path(os.environ.get("LLAMA_CPP_ROOT", "/work/llama-cpp"))
SRC = ROOT / "src"
BIN = SRC / "build" / "bin"
FIT = Path(os.environ.get("LLAMA_FIT_PARAMS", BIN / "llama-fit-params"))
RPC = Path(os.environ.get("LLMBOUND_RPC_SERVER", BIN / "ggml-rpc-server"))
if (SRC / "gguf-py").is_dir():
    sys.path.insert(0, str(SRC / "gguf-py"))
sys.path.insert(0, str(HERE))

import tool  # noqa: E402

ORACLE = REPO / "tests" / "fixtures" / "llama-cpp"
OUT = ORACLE / "placement"
SCHEMA = "llmbound-llama-cpp-placement/1"
GIB = 1 << 30
MIB = 1 << 20

SERVERS: list[subprocess.Popen] = []


def kill_servers() -> None:
    while SERVERS:
        p = SERVERS.pop()
        if p.poll() is None:
            p.kill()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


atexit.register(kill_servers)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_servers(sizes: list[int]) -> list[str]:
    """One server per size, each on its own port of 127.0.0.1; returns the endpoints."""
    kill_servers()
    eps = []
    for size in sizes:
        port = free_port()
        env = dict(os.environ, LLMBOUND_RPC_MEM_BYTES=str(size))
        p = subprocess.Popen([str(RPC), "-H", "127.0.0.1", "-p", str(port), "-t", "1"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        SERVERS.append(p)
        eps.append(f"127.0.0.1:{port}")
    deadline = time.time() + 20
    for ep in eps:
        host, port = ep.split(":")
        while True:
            try:
                with socket.create_connection((host, int(port)), timeout=0.5):
                    break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"rpc server {ep} did not start")
                time.sleep(0.1)
    # a probing connection is served and closed; give the servers a moment to accept again
    time.sleep(0.2)
    return eps


# --- models -------------------------------------------------------------------------------

def existing(name: str) -> dict:
    """A realistic shape of the oracle fixtures: its committed header and full size."""
    fx = json.loads((ORACLE / f"{name}.json").read_text())
    return {"name": name, "header": ORACLE / fx["model"]["header"], "file_size": fx["model"]["file_size"],
            "arch": fx["model"]["arch"], "header_rel": f"../{fx['model']['header']}"}


def qwen3_30b_a3b(work: Path) -> dict:
    """A Qwen3-30B-A3B-shaped file (Q4_K), resolved against llama.cpp once and committed."""
    import models
    import resolve
    from synth import write_spec
    name = "qwen3-30b-a3b-shape"
    header = OUT / "models" / f"{name}.header.gguf"
    meta = OUT / "models" / f"{name}.json"
    if header.exists() and meta.exists():
        size = json.loads(meta.read_text())["file_size"]
    else:
        spec = models.base("qwen3moe", name, n_layer=48, n_embd=2048, n_head=32, n_head_kv=4, head_dim=128,
                           n_ff=6144, n_vocab=151936, n_ctx_train=40960, n_expert=128, n_expert_used=8,
                           n_ff_exp=768, default_2d="Q4_K", realistic=True,
                           kv={"rope.freq_base": 1000000.0})
        spec, err, _ = resolve.resolve(spec, FIT, work)
        if err:
            raise RuntimeError(f"resolving {name}: {err[:300]}")
        size = write_spec(spec, header)
        meta.write_text(json.dumps({"name": name, "file_size": size,
                                    "notes": "Qwen3-30B-A3B dimensions, Q4_K"}, indent=1) + "\n")
    return {"name": name, "header": header, "file_size": size, "arch": "qwen3moe",
            "header_rel": f"models/{name}.header.gguf"}


def materialise(m: dict, work: Path) -> Path:
    from synth import materialise as mat
    path = work / f"{m['name']}.gguf"
    if not path.exists():
        mat(Path(m["header"]), path, m["file_size"])
    return path


# --- grid ---------------------------------------------------------------------------------

def base_args(c: dict) -> list[str]:
    a = ["-np", "1", "-ctk", "f16", "-ctv", "f16", "-fa", c.get("fa", "on"), "-ub", str(c.get("ub", 512)),
         "-b", str(max(2048, c.get("ub", 512)))]
    if c.get("ctx") is not None:
        a = ["-c", str(c["ctx"])] + a
    return a + c.get("flags", [])


def grid(name: str, n_layer: int, moe: bool, file_size: int) -> list[dict]:
    """(devices in bytes, settings) cases for one model."""
    w = file_size
    cases: list[dict] = []

    def add(kind, devs, ctx=4096, fa="on", ub=512, flags=None, tag=""):
        cases.append({"kind": kind, "devices": devs, "ctx": ctx, "fa": fa, "ub": ub, "flags": flags or [],
                      "tag": tag})

    big = max(24 * GIB, (w * 3) // 2 + 8 * GIB)
    # the measured cases (Llama-3.1-8B shape, 32k, fa on, ub 512)
    if name == "llama-3.1-8b-shape":
        add("place", [24 * GIB, 24 * GIB], 32768, flags=["-ts", "1,1"], tag="issue: two devices -ts 1,1")
        add("place", [24 * GIB], 32768, tag="issue: one device, all layers")
        add("place", [24 * GIB], 32768, flags=["-ngl", "20"], tag="issue: one device -ngl 20")
    for ctx in (4096, 32768):
        for ub in (512, 2048):
            add("place", [big], ctx, ub=ub)
            add("place", [big, big], ctx, ub=ub)
    add("place", [big], 4096, fa="off")
    add("place", [big, big], 4096, fa="off")
    add("place", [big], 4096, flags=["-ngl", "0"])
    add("place", [big], 4096, flags=["-ngl", str(n_layer // 2)])
    add("place", [big], 4096, flags=["-ngl", str(n_layer)])
    add("place", [big, big], 4096, flags=["-ngl", str(n_layer // 2)])
    add("place", [big, big // 2], 4096)
    add("place", [big, big], 4096, flags=["-ts", "3,1"])
    add("place", [big, big, big], 4096, flags=["-ts", "1,2,1"])
    add("place", [big] * 4, 4096)
    add("place", [big, big], 4096, flags=["-sm", "none", "-mg", "1"])
    add("place", [big, big], 4096, flags=["-nkvo"])
    add("place", [big], 4096, flags=["-ot", r"blk\.(1|3|5)\.=CPU"])
    add("place", [big, big], 4096, flags=["-ot", r"blk\.0\.ffn=CPU,output=CPU"])
    if moe:
        add("place", [big], 4096, flags=["--cpu-moe"])
        add("place", [big], 4096, flags=["--n-cpu-moe", str(n_layer // 3)])
        add("place", [big, big], 32768, flags=["--n-cpu-moe", str(n_layer // 2)])
    else:
        add("place", [big], 4096, flags=["--n-cpu-ffn", str(n_layer // 4)])
    # -fit, with defaults (context unset) and at a set context, on devices that force choices
    for devs in ([w // 2], [(w * 3) // 4, w // 2], [w // 3, w // 3, w // 4], [w // 4] * 4, [big]):
        devs = [max(2 * GIB, (d // MIB) * MIB) for d in devs]
        add("fit", devs, None)
        add("fit", devs, 32768)
    return cases


def extra_grid(name: str, n_layer: int, moe: bool, file_size: int) -> list[dict]:
    """Cases added after the first grid (`--extend` appends those a fixture lacks): mixed
    device sizes, `-sm none -mg` at 32k, more `-ot` and `--n-cpu-moe`, and `-fit` over three
    and four devices of different sizes."""
    w = file_size
    cases: list[dict] = []

    def add(kind, devs, ctx=4096, fa="on", ub=512, flags=None, tag=""):
        cases.append({"kind": kind, "devices": devs, "ctx": ctx, "fa": fa, "ub": ub, "flags": flags or [],
                      "tag": tag})

    big = max(24 * GIB, (w * 3) // 2 + 8 * GIB)
    mixed3 = [big, big // 2, big // 3]
    mixed4 = [big, big // 2, big // 3, big // 4]
    mixed3 = [(d // MIB) * MIB for d in mixed3]
    mixed4 = [(d // MIB) * MIB for d in mixed4]
    add("place", mixed3, 4096)
    add("place", mixed4, 32768)
    add("place", [big, big], 32768, flags=["-sm", "none", "-mg", "0"])
    add("place", [big], 4096, flags=["-ot", "ffn_down=CPU"])
    add("place", [big, big], 4096, flags=["-ngl", str(n_layer // 3), "-ts", "2,1"])
    if moe:
        add("place", [big, big], 4096, flags=["--n-cpu-moe", str(n_layer // 4)])
        add("place", mixed3, 4096, flags=["--cpu-moe"])
    else:
        add("place", [big, big], 4096, flags=["--n-cpu-ffn", str(n_layer // 2)])
    for devs in ([w // 2, w // 4, w // 8], [w // 3, w // 4, w // 5, w // 6]):
        devs = [max(2 * GIB, (d // MIB) * MIB) for d in devs]
        add("fit", devs, 32768)
    return cases


def case_id(c: dict) -> str:
    devs = "+".join(f"{d / GIB:g}G" for d in c["devices"])
    flags = "_".join(f.replace("\\", "").replace(" ", "") for f in c["flags"])
    ctx = "cauto" if c["ctx"] is None else f"c{c['ctx']}"
    return f"{c['kind']}-{devs}-{ctx}-fa{c['fa']}-ub{c['ub']}" + (f"-{flags}" if flags else "")


RE_ARGS = re.compile(r"^(-c \d+ -ngl -?\d+.*)$", re.M)


def devices_of(parsed: dict, eps: list[str]) -> tuple[list[dict], dict, list[dict]]:
    """Per device (in --rpc order) and host: exact model / context / compute."""
    devs = [{"buft": f"RPC0[{ep}]", "model": 0, "context": 0, "compute": 0} for ep in eps]
    host = {"model": 0, "context": 0, "compute": 0}
    other = []
    for b in parsed["breakdown"]:
        name = b["buft"]
        hit = [d for d in devs if d["buft"] == name]
        if hit:
            for k in ("model", "context", "compute"):
                hit[0][k] += b[k]
        elif b.get("host") == 1:
            for k in ("model", "context", "compute"):
                host[k] += b[k]
        else:
            other.append({k: b[k] for k in ("buft", "model", "context", "compute")})
    return devs, host, other


def run_place(path: Path, eps: list[str], args: list[str]) -> dict:
    full = ["--fit-print", "on", "-v", "-m", str(path), "--rpc", ",".join(eps)] + args
    t0 = time.time()
    rc, log, attempts = tool.run(FIT, full, timeout=180, retries=2)
    parsed = tool.parse(log)
    ok = rc == 0 and bool(parsed["breakdown"])
    out = {"ok": ok, "seconds": round(time.time() - t0, 2), "attempts": attempts}
    if not ok:
        out["error"] = tool.error_reason(log) or tool.describe_rc(rc)
        return out
    # one breakdown per dry run; --fit-print makes exactly one
    devs, host, other = devices_of(parsed, eps)
    out.update({"memory": {"devices": devs, "host": host, "other_buffers": other},
                "kv_caches": parsed["kv_caches"], "recurrent": parsed["recurrent"],
                "compute_buffers": parsed["compute_buffers"], "n_ctx": parsed["context"].get("n_ctx")})
    return out


def run_fit(path: Path, eps: list[str], args: list[str]) -> dict:
    full = ["-v", "-m", str(path), "--rpc", ",".join(eps)] + args
    t0 = time.time()
    rc, log, attempts = tool.run(FIT, full, timeout=600, retries=1)
    m = RE_ARGS.findall(log)
    out = {"ok": rc == 0 and bool(m), "seconds": round(time.time() - t0, 2),
           "dry_runs": log.count("llmbound-exact: compute buffer=") }
    if not out["ok"]:
        out["error"] = tool.error_reason(log) or tool.describe_rc(rc)
        fails = re.findall(r"failed to fit params to free device memory: ([^\n]*)", log)
        if fails:
            out["error"] = fails[-1].strip()
        return out
    out["arguments"] = m[-1].strip()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--extend", action="store_true",
                    help="append the extra grid's cases a fixture lacks; keep its recorded cases")
    opts = ap.parse_args()
    for b in (FIT, RPC):
        if not b.exists():
            print(f"missing {b}: run scripts/oracle/build-llama-cpp.sh", file=sys.stderr)
            return 1
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "models").mkdir(exist_ok=True)
    info = json.loads((ORACLE / "llama-3.1-8b-shape.json").read_text())["llama_cpp"]
    info = {**info, "backend": "RPC (ggml-rpc-server, CPU backend, memory from LLMBOUND_RPC_MEM_BYTES)",
            "tool": "llama-fit-params -v --rpc ..."}
    work = Path(tempfile.mkdtemp(prefix="llmbound-placement-"))
    models = [("llama-3.1-8b-shape", 32, False), ("qwen3-30b-a3b-shape", 48, True),
              ("gemma-3-27b-shape", 62, False), ("gpt-oss-20b-shape", 24, True),
              ("qwen3next-80b-shape", 48, True), ("deepseek-v3-shape", 61, True),
              ("rwkv7-2.9b-shape", 32, False), ("qwen3.5-27b-shape", 48, False)]
    only = set(filter(None, opts.only.split(",")))
    try:
        for name, n_layer, moe in models:
            if only and name not in only:
                continue
            m = qwen3_30b_a3b(work) if name == "qwen3-30b-a3b-shape" else existing(name)
            path = materialise(m, work)
            cases = grid(name, n_layer, moe, m["file_size"])
            kept: list[dict] = []
            if opts.extend:
                old = json.loads((OUT / f"{name}.json").read_text())
                kept = old["cases"]
                have = {r["id"] for r in kept}
                cases = [c for c in extra_grid(name, n_layer, moe, m["file_size"]) if case_id(c) not in have]
            elif name == "qwen3-30b-a3b-shape":
                cases.insert(0, {"kind": "fit", "devices": [16 * GIB], "ctx": 32768, "fa": "on", "ub": 512,
                                 "flags": [], "tag": "issue: one 16 GiB device"})
                cases.insert(1, {"kind": "fit", "devices": [12 * GIB, 8 * GIB], "ctx": 32768, "fa": "on",
                                 "ub": 512, "flags": [], "tag": "issue: 12 + 8 GiB"})
            t0 = time.time()
            results = list(kept)
            by_devs: dict[tuple, list[dict]] = {}
            for c in cases:
                by_devs.setdefault(tuple(c["devices"]), []).append(c)
            for devs, cs in by_devs.items():
                eps = start_servers(list(devs))
                for c in cs:
                    args = base_args(c)
                    rec = {"id": case_id(c), "kind": c["kind"], "tag": c["tag"], "device_bytes": list(devs),
                           "endpoints": eps, "args": args,
                           "command": " ".join(shlex.quote(x) for x in
                                               ["llama-fit-params"] + (["--fit-print", "on"] if c["kind"] == "place" else [])
                                               + ["-m", "MODEL", "--rpc", "EP1,..."] + args)}
                    if c["kind"] == "place":
                        rec.update(run_place(path, eps, args))
                    else:
                        r = run_fit(path, eps, args)
                        rec.update(r)
                        if r["ok"]:
                            fitted = shlex.split(r["arguments"])
                            rec["fitted_placement"] = run_place(path, eps, fitted + base_args({**c, "ctx": None}))
                    print(f"  {name} {rec['id']}: {'ok' if rec['ok'] else 'FAILED ' + str(rec.get('error'))}"
                          + (f" -> {rec.get('arguments')}" if c["kind"] == "fit" else "")
                          + f" ({rec['seconds']}s)", flush=True)
                    results.append(rec)
                kill_servers()
            fixture = {"schema": SCHEMA, "llama_cpp": info,
                       "model": {"name": name, "arch": m["arch"], "header": m["header_rel"],
                                 "file_size": m["file_size"], "layers": n_layer, "moe": moe},
                       "cases": results}
            (OUT / f"{name}.json").write_text(json.dumps(fixture, indent=1) + "\n")
            print(f"{name}: {sum(r['ok'] for r in results)}/{len(results)} ok in {time.time() - t0:.0f}s", flush=True)
    finally:
        kill_servers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
