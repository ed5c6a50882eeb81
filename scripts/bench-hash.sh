#!/usr/bin/env bash
# `llmbound hash` beside `openssl dgst -sha256` on the same 1 GiB GGUF (page-cached), best of
# N runs each, and the ratio (llmbound's rate / openssl's; 1.0 or more is the target).
#
#   scripts/bench-hash.sh [BINARY] [RUNS]   (default: target/release/llmbound, 5)
#
# The file is written once to ${TMPDIR:-/tmp}/llmbound-bench-1g.gguf (a valid GGUF: one F32
# tensor of 2^28 elements, random data) and read once before timing so both read from memory.
set -euo pipefail
BIN="${1:-${CARGO_TARGET_DIR:-target}/release/llmbound}"
RUNS="${2:-5}"
F="${TMPDIR:-/tmp}/llmbound-bench-1g.gguf"
command -v openssl >/dev/null || { echo "openssl is not installed" >&2; exit 1; }
[ -x "$BIN" ] || { echo "no executable at $BIN (cargo build --release)" >&2; exit 1; }
if [ ! -f "$F" ]; then
    python3 - "$F" <<'PY'
import os, struct, sys
def s(x):
    b = x.encode(); return struct.pack('<Q', len(b)) + b
n = 1 << 28
h = b"GGUF" + struct.pack('<IQQ', 3, 1, 1) + s("general.architecture") + struct.pack('<I', 8) + s("llama")
h += s("w") + struct.pack('<IQIQ', 1, n, 0, 0)
h += b"\0" * ((-len(h)) % 32)
with open(sys.argv[1], 'wb') as f:
    f.write(h)
    for _ in range(n * 4 // (1 << 24)):
        f.write(os.urandom(1 << 24))
PY
fi
cat "$F" >/dev/null
best() { # best wall time of RUNS runs of "$@", seconds
    local b=999 t
    for _ in $(seq "$RUNS"); do
        local s e
        s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc)
        if (( $(echo "$t < $b" | bc) )); then b=$t; fi
    done
    echo "$b"
}
o=$(best openssl dgst -sha256 "$F")
l=$(best "$BIN" hash --no-cache "$F")
bytes=$(stat -c %s "$F")
printf 'openssl dgst -sha256: %.3f s (%.2f GB/s)\n' "$o" "$(echo "$bytes / $o / 1000000000" | bc -l)"
printf 'llmbound hash:        %.3f s (%.2f GB/s)\n' "$l" "$(echo "$bytes / $l / 1000000000" | bc -l)"
printf 'ratio (llmbound rate / openssl rate): %.2f\n' "$(echo "$o / $l" | bc -l)"
