#!/usr/bin/env bash
# End-to-end check of the explorer as a person sees it: start it in a 120x36 tmux window,
# read the screen, press keys, and check what is shown. Exits non-zero with a clear message.
#
#   tests/e2e/tui.sh [BINARY]     (default: ${CARGO_TARGET_DIR:-target}/debug/llmbound)
#
# The binary must open the explorer when run without arguments.
set -euo pipefail

BIN="${1:-${CARGO_TARGET_DIR:-target}/debug/llmbound}"
TIMEOUT="${E2E_TIMEOUT:-10}"
SESSION="llmbound-e2e-$$"

LABEL="tui e2e"
# shellcheck source=tests/e2e/common.sh
. "$(dirname "$0")/common.sh"

require_tmux_and_bin

CONFIG="$(mktemp -d)"
cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    rm -rf "$CONFIG"
}
trap cleanup EXIT


tmux new-session -d -s "$SESSION" -x 120 -y 36 "env -i HOME=\"$HOME\" PATH=\"$PATH\" TERM=xterm-256color PS1='e2e\$ ' bash --norc --noprofile"
tmux send-keys -t "$SESSION" "LLMBOUND_CONFIG_DIR='$CONFIG' '$BIN'; echo \"llmbound exited with \$?\"" Enter

# The default scenario: the worked example's ceilings.
wait_for "13.81" "default scenario, short-context ceiling"
wait_for "9.63" "default scenario, 32,768-token ceiling"
wait_for "72.39" "default scenario, ms/token"
wait_for "18.405 GiB" "default scenario, file size"
wait_for "21.595 GiB" "default scenario, headroom"

# [ halves the context: 16,384 tokens, 11.35 tokens/s at full context.
tmux send-keys -t "$SESSION" "["
wait_for "16,384" "after [, the context"
wait_for "11.35" "after [, the full-context ceiling"

# ? shows the help, Esc closes it.
tmux send-keys -t "$SESSION" "?"
wait_for "Keys" "help overlay"
wait_for "halve the context" "help overlay lists ["
tmux send-keys -t "$SESSION" Escape
wait_gone "halve the context" "closing the help"

# q quits, restores the terminal, and the shell is back.
tmux send-keys -t "$SESSION" "q"
wait_for "llmbound exited with 0" "quitting"
screen | grep -qF "Bounds" && fail "the explorer's screen is still shown after q (terminal not restored)"
tmux send-keys -t "$SESSION" "echo shell-is-back" Enter
wait_for "shell-is-back" "the shell after quitting"

echo "tui e2e: ok ($BIN)"
