#!/usr/bin/env python3
"""Print a GGUF file's header as llama.cpp's own reader (PyPI `gguf`, GGUFReader) sees it.

Usage: crosscheck_gguf.py FILE

Prints one JSON object: version, byte order, data start, the metadata keys in file order,
every tensor (name, type name and id, shape as stored, elements, bytes, data offset relative
to the data start) and the totals per type. tests/gguf_crosscheck.rs compares it with
llmbound's reader.
"""
import json
import sys

from gguf import GGUFReader


def main() -> None:
    reader = GGUFReader(sys.argv[1], "r")
    tensors = []
    per_type: dict[str, dict[str, int]] = {}
    for t in reader.tensors:
        name = t.tensor_type.name
        tensors.append({
            "name": t.name,
            "type": name,
            "type_id": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "elements": int(t.n_elements),
            "bytes": int(t.n_bytes),
            "offset": int(t.data_offset) - int(reader.data_offset),
        })
        agg = per_type.setdefault(name, {"count": 0, "elements": 0, "bytes": 0})
        agg["count"] += 1
        agg["elements"] += int(t.n_elements)
        agg["bytes"] += int(t.n_bytes)
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    out = {
        "version": int(reader.fields["GGUF.version"].parts[-1][0]),
        "byte_order": "big" if reader.endianess.name == "BIG" else "little",
        "data_offset": int(reader.data_offset),
        "alignment": int(reader.alignment),
        "keys": keys,
        "tensors": tensors,
        "per_type": per_type,
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
