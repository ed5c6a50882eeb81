#!/usr/bin/env bash
# Prints the directory that fetched test data (the real 253 MB gemma-3-270m GGUF) goes in:
# $LLMBOUND_TEST_DATA, else ${XDG_CACHE_HOME:-~/.cache}/llmbound/test-data. Outside target/,
# so `cargo clean` does not throw it away.
set -euo pipefail
printf '%s\n' "${LLMBOUND_TEST_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/llmbound/test-data}"
