#!/usr/bin/env python3
"""Print llama.cpp's own scheduler splits for one placement fixture case.

Re-runs one case of tests/fixtures/llama-cpp/placement/<model>.json on the oracle build
(scripts/oracle/build-llama-cpp.sh) with `GGML_SCHED_DEBUG=2`: the same stand-in RPC devices,
the same arguments (a `fit` case at the arguments llama.cpp chose, with `-fit off`), and prints
the graph splits of the reserved prompt graph (n_ubatch rows) — which backend runs each
node, each split's input copies with their sizes — and the compute buffer llama.cpp reserved
per device. This is how the scheduler's per-device compute buffers are studied
(`core::placement::ComputeBasis`); it never runs in CI.

    scripts/oracle/sched_trace.py qwen3-30b-a3b-shape 'place-31.748G+15.874G+10.582G-c4096-faon-ub512---cpu-moe'
    scripts/oracle/sched_trace.py gpt-oss-20b-shape 'fit-15.5215G+10.3477G-c32768-faon-ub512' --all
    scripts/oracle/sched_trace.py gpt-oss-20b-shape 'fit-15.5215G+10.3477G-cauto-faon-ub512' --probe-ctx 131072
    scripts/oracle/sched_trace.py deepseek-v3-shape 'fit-175.643G-cauto-faon-ub512' --alloc 1

`--alloc B` adds ggml-alloc's own trace of the last reserved graph (the patch's
LLMBOUND_ALLOC_TRACE) for compute buffer B (0: the first device, …; the host is the last):
every allocation and free in order, and the tensors live when the buffer reached its size.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import placement as P  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="fixture name, e.g. qwen3-30b-a3b-shape")
    ap.add_argument("case", help="case id as in the fixture")
    ap.add_argument("--all", action="store_true",
                    help="print every reserved graph, not only the last prompt graph")
    ap.add_argument("--work", default=tempfile.gettempdir(), help="where the sparse model file goes")
    ap.add_argument("--probe-ctx", type=int, metavar="N",
                    help="a fit case as -fit's own probe: at -c N with -fit off and llama.cpp's "
                         "default placement (its probes run at the trained context and at -fitc)")
    ap.add_argument("--alloc", type=int, metavar="B",
                    help="also print ggml-alloc's trace of buffer B (0: first device; the host last)")
    ap.add_argument("--vulkan", action="store_true",
                    help="a case of the Vulkan fixtures (placement-vulkan/), on the Vulkan build "
                         "(build-llama-cpp-vulkan.sh) over Mesa's llvmpipe")
    a = ap.parse_args()

    if a.vulkan:
        return vulkan(a)
    loaded = load_case(P.OUT, a)
    if loaded is None:
        return 2
    case, path = loaded
    eps = P.start_servers(case["device_bytes"])
    args = list(case["args"])
    if case["kind"] == "fit" and a.probe_ctx:
        args += ["-c", str(a.probe_ctx), "-fit", "off"]
    elif case["kind"] == "fit":
        line = case["arguments"]
        for old, new in zip(case["endpoints"], eps):
            line = line.replace(old, new)
        args += ["-fit", "off"] + shlex.split(line)
    full = ["--fit-print", "on", "-v", "-m", str(path), "--rpc", ",".join(eps)] + args
    env = dict(os.environ, GGML_SCHED_DEBUG="2")
    if a.alloc is not None:
        env["LLMBOUND_ALLOC_TRACE"] = "1"
    try:
        r = subprocess.run([str(P.FIT)] + full, env=env, capture_output=True, text=True, timeout=600)
    finally:
        P.kill_servers()
    return report(a, r)


def load_case(fixtures: Path, a: argparse.Namespace):
    """The fixture case named on the command line and its sparse model file (made in --work
    from the fixture's header when absent); None, said on stderr, when there is no such case."""
    from synth import materialise
    fx = json.loads((fixtures / f"{a.model}.json").read_text())
    m = fx["model"]
    case = next((c for c in fx["cases"] if c["id"] == a.case), None)
    if case is None:
        print(f"{a.model}: no case {a.case!r} in {fixtures.name}/", file=sys.stderr)
        return None
    path = Path(a.work) / f"{a.model}.gguf"
    if not path.exists():
        materialise((fixtures / m["header"]).resolve(), path, m["file_size"])
    return case, path


def vulkan(a: argparse.Namespace) -> int:
    """One case of the Vulkan fixtures, re-run on the Vulkan build with the scheduler's trace."""
    import placement_vulkan as V
    loaded = load_case(V.OUT, a)
    if loaded is None:
        return 2
    case, path = loaded
    args = list(case["args"])
    if case["kind"] == "fit":
        args += ["-fit", "off"] + shlex.split(case["arguments"])
    env = dict(V.env_for(case["device_bytes"][0]), GGML_SCHED_DEBUG="2")
    if a.alloc is not None:
        env["LLMBOUND_ALLOC_TRACE"] = "1"
    full = ["--fit-print", "on", "-v", "-m", str(path)] + args
    r = subprocess.run([str(V.FIT)] + full, env=env, capture_output=True, text=True, timeout=600)
    return report(a, r)


def report(a: argparse.Namespace, r: subprocess.CompletedProcess) -> int:
    """Print the run's last reserved graph's splits, its compute buffers and, with --alloc, the
    allocation trace."""
    # the logger prefixes every fragment with a timestamp and level; drop them
    log = re.sub(r"\d+\.\d\d\.\d\d\d\.\d\d\d [DIWE] ", "", r.stdout + r.stderr)
    graphs = [g for g in re.split(r"(?=## SPLIT #0:)", log)[1:]]
    if not graphs:
        print(log[-2000:], file=sys.stderr)
        return 1
    shown = graphs if a.all else graphs[-1:]
    for g in shown:
        end = g.find("\nllama_context")
        print(g if end < 0 else g[:end])
    for line in log.splitlines():
        if line.startswith("llmbound-exact: compute buffer="):
            print(line)
    if a.alloc is not None:
        print_alloc(log, a.alloc)
    return r.returncode


ALLOC = re.compile(r"\[buf (\d+)\] ggml_dyn_tallocr_alloc: allocating (.+?) \((\d+) bytes\) - "
                   r"block -?\d+, offset (\d+)")
REUSE_VIEW = re.compile(r"reusing view parent .+? \((?P<src>.+?)\) for (?P<node>.+)$")
REUSE = re.compile(r"(?<!not )reusing parent (?P<src>.+?) for (?P<node>.+)$")
FREE = re.compile(r"ggml_gallocr_free_node: freeing (.+?) at \{chunk=\d+, offset=(\d+)\} \((\d+) bytes\)")


def print_alloc(log: str, buf: int) -> None:
    """The last reserved graph's allocations in buffer `buf`: each allocation and free, and the
    tensors live (offset, MiB, name) when the buffer reached its high-water mark."""
    graphs = log.split("llmbound-alloc-graph")
    if len(graphs) < 2:
        print("no allocation trace (is the oracle build patched with LLMBOUND_ALLOC_TRACE?)",
              file=sys.stderr)
        return
    live: dict[str, tuple[int, int]] = {}
    mine: set[str] = set()
    peak, at_peak = 0, {}
    mib = 1 << 20
    print(f"== ggml-alloc, buffer {buf} (offset MiB, size MiB, tensor)")
    for line in graphs[-1].splitlines():
        m = ALLOC.search(line)
        if m and int(m.group(1)) == buf:
            name, size, off = m.group(2), int(m.group(3)), int(m.group(4))
            live[name] = (off, size)
            mine.add(name)
            print(f"  + {off / mib:9.2f} {size / mib:9.2f} {name}")
            if off + size > peak:
                peak, at_peak = off + size, dict(live)
            continue
        m = REUSE_VIEW.search(line) or REUSE.search(line)
        if m and m.group("src") in live:
            # in place: the node takes its parent's block, which is then freed under its name
            live[m.group("node")] = live.pop(m.group("src"))
            mine.add(m.group("node"))
            continue
        m = FREE.search(line)
        if m and m.group(1) in mine:
            live.pop(m.group(1), None)
            print(f"  - {int(m.group(2)) / mib:9.2f} {int(m.group(3)) / mib:9.2f} {m.group(1)}")
    print(f"== live at the high-water mark, {peak / mib:.2f} MiB")
    for name, (off, size) in sorted(at_peak.items(), key=lambda kv: kv[1][0]):
        print(f"  {off / mib:9.2f} {size / mib:9.2f} {name}")


if __name__ == "__main__":
    sys.exit(main())
