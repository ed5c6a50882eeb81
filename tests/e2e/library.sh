#!/usr/bin/env bash
# End-to-end check of the library view (L) as a person sees it: an Ollama store and an LM
# Studio folder under a temporary HOME, the explorer in a 120x36 tmux window, keys pressed
# and the screen read. Exits non-zero with a clear message; exits 0 with a note when skipped.
#
#   tests/e2e/library.sh [BINARY]   (needs LLMBOUND_GEMMA_GGUF: the gemma-3-270m GGUF)
set -euo pipefail

BIN="${1:-${CARGO_TARGET_DIR:-target}/debug/llmbound}"
TIMEOUT="${E2E_TIMEOUT:-10}"
SESSION="llmbound-library-e2e-$$"

LABEL="library e2e"
# shellcheck source=tests/e2e/common.sh
. "$(dirname "$0")/common.sh"

require_tmux_and_bin
GGUF="${LLMBOUND_GEMMA_GGUF:-}"
if [ -z "$GGUF" ] || [ ! -f "$GGUF" ]; then
    echo "library e2e: skipped: set LLMBOUND_GEMMA_GGUF to the gemma-3-270m GGUF"
    exit 0
fi

HOMEDIR="$(mktemp -d)"
cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    rm -rf "$HOMEDIR"
}
trap cleanup EXIT

# Ollama: a manifest naming the model layer; the blob is a link to the real file.
DIGEST="$(printf 'd%.0s' $(seq 1 64))"
mkdir -p "$HOMEDIR/.ollama/models/blobs" "$HOMEDIR/.ollama/models/manifests/registry.ollama.ai/library/gemma3"
ln -s "$GGUF" "$HOMEDIR/.ollama/models/blobs/sha256-$DIGEST"
printf '{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s"}]}' "$DIGEST" \
    > "$HOMEDIR/.ollama/models/manifests/registry.ollama.ai/library/gemma3/270m"
# LM Studio: a copy under another name is another model (a link to the same file is not).
mkdir -p "$HOMEDIR/.lmstudio/models/me/Gemma-GGUF"
cp "$GGUF" "$HOMEDIR/.lmstudio/models/me/Gemma-GGUF/gemma-copy-Q4_K_M.gguf"


tmux new-session -d -s "$SESSION" -x 120 -y 36 \
    "env -u LLAMA_CACHE -u OLLAMA_MODELS -u XDG_CACHE_HOME -u HF_HOME -u HF_HUB_CACHE -u LLMBOUND_AUTO_HASH HOME='$HOMEDIR' LLMBOUND_CONFIG_DIR='$HOMEDIR/config' NO_COLOR=1 '$BIN' --machine macbook-pro-m4-pro-48gb -c 32768"
wait_for "Artifact" "the panes"
tmux send-keys -t "$SESSION" L
wait_for "Library · row 1 of 2 · macbook-pro-m4-pro-48gb · ctx 32,768" "the library header"
wait_for "gemma3:270m" "the Ollama model by its Ollama name"
wait_for "me/Gemma-GGUF/gemma-copy-Q4_K_M.gguf" "the LM Studio model"
wait_for "768.76" "the inventory decode ceiling at 32,768 on the M4 Pro"
screen | grep -F "gemma3:270m" | grep -qF "yes" || fail "gemma3:270m should fit"
tmux send-keys -t "$SESSION" "]"
wait_for "ctx 65,536" "the context doubled in the library"
wait_for "598.97" "the inventory ceiling at 65,536"
tmux send-keys -t "$SESSION" r
wait_for "by ceiling" "the next sort order"
tmux send-keys -t "$SESSION" g
tmux send-keys -t "$SESSION" G
tmux send-keys -t "$SESSION" Enter
wait_for "Cache & run" "back in the panes after Enter"
wait_for "253,113,024 bytes" "the opened model's exact W"
tmux send-keys -t "$SESSION" q
echo "library e2e: ok"
