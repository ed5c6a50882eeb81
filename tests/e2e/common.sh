# Shared by the tmux end-to-end scripts (sourced, not run). The script sets LABEL (the name
# in its messages), SESSION (the tmux session), TIMEOUT (seconds) and BIN before sourcing.

fail() {
    echo "$LABEL: FAIL: $*" >&2
    if tmux has-session -t "$SESSION" 2>/dev/null; then
        echo "---- screen ----" >&2
        tmux capture-pane -p -t "$SESSION" >&2 || true
        echo "----------------" >&2
    fi
    exit 1
}

# tmux present and BIN executable; BIN made absolute (tmux starts it from another folder).
require_tmux_and_bin() {
    command -v tmux >/dev/null || fail "tmux is not installed"
    [ -x "$BIN" ] || fail "no executable at \"$BIN\" (build it first, or pass its path)"
    BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
}

screen() { tmux capture-pane -p -t "$SESSION"; }

# wait_for TEXT DESCRIPTION: poll the screen until TEXT appears (up to $TIMEOUT seconds).
wait_for() {
    local deadline=$((SECONDS + TIMEOUT))
    while [ "$SECONDS" -le "$deadline" ]; do
        if screen | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.2
    done
    fail "$2: \"$1\" did not appear within ${TIMEOUT}s"
}

# wait_gone TEXT DESCRIPTION: poll until TEXT is no longer on the screen.
wait_gone() {
    local deadline=$((SECONDS + TIMEOUT))
    while [ "$SECONDS" -le "$deadline" ]; do
        if ! screen | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.2
    done
    fail "$2: \"$1\" is still on the screen after ${TIMEOUT}s"
}
