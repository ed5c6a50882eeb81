#!/usr/bin/env bash
# The explorer's three workflows walked in tmux as a person would, at one terminal size:
#   1. tune context and cache type (the worked example: [ ] and the K/V cache fields),
#   2. browse a GGUF (open the gemma file, its tensors filtered and grouped, its metadata
#      with the 262,144-entry token array paged and left),
#   3. compare saved machines (save an edited machine, compare, mark two, filter, sort),
#   4. the pickers: another model (M), another scenario (S), each filtered by typing.
# Each step checks the screen and, when CAPTURES is set, writes it to
# $CAPTURES/<step>_<W>x<H>.txt. Exits non-zero with the screen on the first failure.
#
#   tests/e2e/workflows.sh BINARY WIDTH HEIGHT GGUF
set -euo pipefail

BIN="$1"
W="$2"
H="$3"
GGUF="$4"
TIMEOUT="${E2E_TIMEOUT:-20}"
SESSION="llmbound-wf-$$"
CAPTURES="${CAPTURES:-}"

LABEL="workflows ${W}x${H}"
# shellcheck source=tests/e2e/common.sh
. "$(dirname "$0")/common.sh"

require_tmux_and_bin
[ -f "$GGUF" ] || fail "no GGUF at \"$GGUF\""

CONFIG="$(mktemp -d)"
cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    rm -rf "$CONFIG"
}
trap cleanup EXIT

# Keys one at a time with a pause, so Esc is never read as Alt with the next key.
keys() {
    for k in "$@"; do
        tmux send-keys -t "$SESSION" "$k"
        sleep 0.25
    done
}
# Literal text (a value or a path).
text() {
    tmux send-keys -t "$SESSION" -l "$1"
    sleep 0.25
}


absent() {
    if screen | grep -qF -- "$1"; then
        fail "$2: \"$1\" is on the screen"
    fi
}

capture() {
    sleep 0.3
    if [ -n "$CAPTURES" ]; then
        mkdir -p "$CAPTURES"
        screen >"$CAPTURES/$1_${W}x${H}.txt"
    fi
}

# focus NAME: Tab until the pane titled NAME has the thick (focused) border.
focus() {
    for _ in 1 2 3 4 5 6 7; do
        if screen | grep -qF -- "┏ $1"; then
            return 0
        fi
        keys Tab
    done
    fail "the $1 pane never took the focus"
}

tmux new-session -d -s "$SESSION" -x "$W" -y "$H" "env -i HOME=\"$HOME\" PATH=\"$PATH\" TERM=xterm-256color PS1='wf\$ ' bash --norc --noprofile"
tmux send-keys -t "$SESSION" "LLMBOUND_CONFIG_DIR='$CONFIG' '$BIN'; echo \"llmbound exited with \$?\"" Enter

# ---- 1. Tune context and cache type ------------------------------------------------------
wait_for "13.81" "default scenario, short-context ceiling"
wait_for "32,768" "default scenario, context"
capture wf1_01_start
absent "(no compute rate)0" "a chart label runs into the text"
keys "]"
wait_for "65,536" "] doubles the context"
capture wf1_02_double
keys "[" "["
wait_for "16,384" "[ [ halves twice"
focus "Cache"
keys Home Down Down
keys Enter
wait_for "K cache" "the K cache prompt"
text "q8_0"
keys Enter
wait_for "q8_0" "K cache set to q8_0"
keys Down Enter
text "q8_0"
keys Enter
wait_for "q8_0/q8_0" "K and V cache types in the title"
wait_for "C 2.12 " "q8_0 K and V: the cache is 2.125 GiB"
capture wf1_03_q8_cache
keys Up Up Enter
text "4"
keys Enter
wait_for "Σ tok/s" "four sequences: the rate is their sum"
wait_for "ms/step" "four sequences: the time is one step"
capture wf1_04_four_sequences
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do keys "]"; done
wait_for "●" "the context slider stays on screen"
capture wf1_05_largest_context
keys "/"
text "500"
keys Enter
wait_for "500.00 tokens/s" "a claim"
capture wf1_06_claim
keys Escape
wait_for "Check a claim" "Esc dismisses the claim"

# ---- 2. Browse a GGUF -------------------------------------------------------------------
# Back to one sequence of 32,768 tokens first.
focus "Cache"
keys Home Enter
text "32768"
keys Enter Down Enter
text "1"
keys Enter
wait_for "32,768 tokens" "context typed back to 32,768"
keys o
wait_for "open (GGUF, safetensors" "the open prompt"
text "$GGUF"
keys Enter
wait_for "gemma-3-270m" "the gemma file opens"
focus "Artifact"
wait_for "Q8_0" "its per-type table"
capture wf2_01_opened
keys t
wait_for "of 236" "the tensor view"
capture wf2_02_tensors
keys f
wait_for "10 of 236" "the Q8_0 filter"
capture wf2_03_tensors_q8
keys Escape m
wait_for "general.architecture" "the metadata view"
capture wf2_04_metadata
keys "/"
text "tokenizer.ggml.tokens"
keys Enter Enter
wait_for "\"<pad>\"" "the token array, expanded"
capture wf2_05_tokens_expanded
keys PageDown End
capture wf2_06_metadata_end
keys Escape Escape
wait_for "Bounds" "back to the main screen"

# ---- 3. Compare saved machines ------------------------------------------------------------
focus "Machine"
keys Home Down Enter
wait_for "capacity" "the capacity prompt"
wait_for "(e.g. 48 GiB): 48 GiB" "the prompt opens on the current value"
text "64 GiB"
keys Enter
wait_for "64.000 GiB" "capacity 64 GiB"
keys s
wait_for "save machine as" "the save prompt"
text "mac-64"
keys Enter
wait_for "mac-64.toml" "saved"
keys c
wait_for "Compare machines" "the compare view"
wait_for "mac-64 (saved)" "the saved machine is tagged"
absent "mac-64 (edited)" "a machine just saved reads as edited"
capture wf3_01_compare
keys Space Down Space
keys f
capture wf3_02_compare_marked
keys f "/"
text "mac"
keys Enter
wait_for "mac-studio" "the filter keeps the Macs"
absent "desktop-rtx-4090" "the filter hides the others"
capture wf3_03_compare_filtered
keys Escape Escape

# ---- 4. Pickers for the model and the scenario -------------------------------------------
keys M
wait_for "model (type to filter)" "the model picker"
text "qwen3-8b"
capture wf4_01_model_picker
keys Enter
wait_for "Qwen3-8B" "the model switched"
wait_for "machine and cache settings kept" "the switch says what stays"
capture wf4_02_model_switched
keys S
wait_for "scenario (type to filter)" "the scenario picker"
text "4090"
keys Enter
wait_for "drop every unsaved edit? y/n" "a scenario switch asks before dropping edits"
capture wf4_03_switch_question
keys y
wait_for "RTX 4090" "the scenario switched"
capture wf4_04_scenario_switched
keys q
wait_for "llmbound exited with 0" "q quits cleanly"
echo "workflows ${W}x${H}: ok"
