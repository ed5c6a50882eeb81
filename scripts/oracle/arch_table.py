#!/usr/bin/env python3
"""Print tests/fixtures/llama-cpp/architectures.json as a Markdown table (for docs and notes)."""
import json
import sys
from pathlib import Path

path = Path(__file__).resolve().parent.parent.parent / "tests" / "fixtures" / "llama-cpp" / "architectures.json"
data = json.loads(path.read_text())
info = data["llama_cpp"]
print(f"Architectures of llama.cpp build {info['build']} ({info['package']}): {len(data['architectures'])}\n")
print("| architecture | llmbound knows it | oracle fixture | reason when none |")
print("| --- | --- | --- | --- |")
for r in data["architectures"]:
    fixtures = ", ".join(f.removesuffix(".json") for f in r["fixtures"]) or "—"
    reason = (r.get("reason") or "").replace("|", "/").replace("\n", " ")[:160]
    print(f"| {r['arch']} | {'yes' if r['known_to_llmbound'] else 'no'} | {fixtures} | {reason} |")
counts = {}
for r in data["architectures"]:
    counts[r["status"]] = counts.get(r["status"], 0) + 1
print(f"\n{counts}", file=sys.stderr)
