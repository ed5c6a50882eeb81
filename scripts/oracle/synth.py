"""Synthetic header-only GGUF files for the llama.cpp oracle.

A model is a `Spec`: architecture, metadata keys and tensors (shapes in ggml order, ne[0]
first). `write_spec` writes the header with gguf-py's `GGUFWriter` and then

  * `<name>.header.gguf`: the header bytes only, padded to the data alignment (committed);
  * `<name>.gguf` (optional): a sparse file of the full size (`truncate`), so llama.cpp's
    check that tensor data lies inside the file passes without writing any data.

Tensor data is never written: llama-fit-params in `--fit-print` mode loads with
`no_alloc` and never reads it.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as VT
from gguf.constants import GGML_QUANT_SIZES

ALIGN = 32


@dataclass
class Spec:
    name: str
    arch: str
    kv: dict[str, Any] = field(default_factory=dict)  # full key -> python value (see kv_type)
    kv_types: dict[str, str] = field(default_factory=dict)  # full key -> "u32"/"f32"/"bool"/"str"/"i32"/"arr_u32"/...
    tensors: dict[str, list[int]] = field(default_factory=dict)  # name -> ne (ggml order)
    ttypes: dict[str, str] = field(default_factory=dict)  # name -> ggml type name override
    default_2d: str = "F16"
    realistic: bool = False
    notes: str = ""
    family: str = ""  # the llama.cpp architecture this spec stands for (arch unless a variant)
    dims: dict[str, int] = field(default_factory=dict)  # n_layer, n_embd, ... used to fill defaults
    # Optional tensors the model must carry (regexes over full tensor names): for architectures
    # whose every FFN tensor is optional (llama.cpp loads them with TENSOR_NOT_REQUIRED and builds
    # the layer without them), so a dry run succeeds without any FFN. `resolve` adds each
    # matching tensor the load skipped, with the shape the loader logged.
    want_optional: list[str] = field(default_factory=list)
    # Every layer carries the same tensors: the resolver adds a missing per-layer tensor to all
    # layers at once (a deep shape whose discovery run crashes then resolves in a few steps).
    uniform_layers: bool = False

    def clone(self) -> "Spec":
        return copy.deepcopy(self)


def infer_type(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "str"
    if isinstance(value, float):
        return "f32"
    if isinstance(value, int):
        return "u32" if value >= 0 else "i32"
    if isinstance(value, (list, tuple)):
        if not value:
            return "arr_u32"
        v0 = value[0]
        if isinstance(v0, bool):
            return "arr_bool"
        if isinstance(v0, float):
            return "arr_f32"
        if isinstance(v0, str):
            return "arr_str"
        return "arr_i32" if any(v < 0 for v in value) else "arr_u32"
    raise TypeError(f"{key}: unsupported value {value!r}")


_SCALAR = {
    "u8": VT.UINT8, "i8": VT.INT8, "u16": VT.UINT16, "i16": VT.INT16,
    "u32": VT.UINT32, "i32": VT.INT32, "u64": VT.UINT64, "i64": VT.INT64,
    "f32": VT.FLOAT32, "f64": VT.FLOAT64, "bool": VT.BOOL, "str": VT.STRING,
}


def tensor_type(spec: Spec, name: str, ne: list[int]) -> str:
    if name in spec.ttypes:
        return spec.ttypes[name]
    dims = [d for d in ne if d != 1]
    if len(ne) <= 1 or len(dims) <= 1:
        return "F32"
    if spec.default_2d in ("F16", "F32", "BF16"):
        return spec.default_2d
    block = GGML_QUANT_SIZES[Q[spec.default_2d]][0]
    if ne[0] % block == 0:
        return spec.default_2d
    if ne[0] % 32 == 0:
        return "Q8_0"
    return "F16"


def nbytes(ttype: str, ne: list[int]) -> int:
    block, size = GGML_QUANT_SIZES[Q[ttype]]
    n = 1
    for d in ne:
        n *= d
    if ne[0] % block != 0:
        raise ValueError(f"row of {ne[0]} not a multiple of the {ttype} block {block}")
    return n // block * size


def pad(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


def build_bytes(spec: Spec) -> tuple[bytes, int]:
    """Header bytes (padded to the alignment) and the full file size (end of the last tensor)."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"llmbound-synth-{os.getpid()}.gguf"
    w = gguf.GGUFWriter(str(tmp), spec.arch)
    for key, value in spec.kv.items():
        if key == "general.architecture":
            continue
        t = spec.kv_types.get(key) or infer_type(key, value)
        if t.startswith("arr_"):
            sub = _SCALAR[t[4:]]
            w.add_key_value(key, list(value), VT.ARRAY, sub_type=sub)
        else:
            w.add_key_value(key, value, _SCALAR[t])
    data = 0
    last = 0
    for name, ne in spec.tensors.items():
        tt = tensor_type(spec, name, ne)
        nb = nbytes(tt, ne)
        w.add_tensor_info(name, list(reversed(ne)), np.dtype(np.float32), nb, raw_dtype=Q[tt])
        data += pad(nb)
        last = nb
    # the file ends where the last tensor's data ends (what llmbound's reader calls data_end)
    data = data - pad(last) + last
    w.write_header_to_file(tmp)
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    raw = tmp.read_bytes()
    tmp.unlink()
    header = raw + b"\0" * (pad(len(raw)) - len(raw))
    return header, len(header) + data


def write_spec(spec: Spec, header_path: Path, full_path: Path | None = None) -> int:
    header, size = build_bytes(spec)
    header_path.parent.mkdir(parents=True, exist_ok=True)
    header_path.write_bytes(header)
    if full_path is not None:
        materialise(header_path, full_path, size)
    return size


def materialise(header_path: Path, full_path: Path, size: int) -> None:
    full_path.parent.mkdir(parents=True, exist_ok=True)
    with open(full_path, "wb") as f:
        f.write(header_path.read_bytes())
        f.truncate(size)
