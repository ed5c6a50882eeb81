#!/usr/bin/env bash
# The explorer against hostile input, read as a person sees it in a 120x36 tmux window:
# opening a URL whose server redirects to file:///etc/passwd, one that stalls past the
# deadline, and a 1 MiB bracketed paste into the open prompt (one event, cut at the cap,
# Esc still closes the prompt and q still quits). The server is a Python loopback server on
# 127.0.0.1 that answers at most 20 requests and stops after 60 s.
#
#   tests/e2e/hostile.sh [BINARY]     (default: ${CARGO_TARGET_DIR:-target}/debug/llmbound)
set -euo pipefail

BIN="${1:-${CARGO_TARGET_DIR:-target}/debug/llmbound}"
TIMEOUT="${E2E_TIMEOUT:-10}"
SESSION="llmbound-hostile-$$"
LABEL="hostile e2e"
# shellcheck source=tests/e2e/common.sh
. "$(dirname "$0")/common.sh"
require_tmux_and_bin
command -v python3 >/dev/null || fail "python3 is not installed (it runs the loopback server)"

CONFIG="$(mktemp -d)"
PORTFILE="$CONFIG/port"
python3 - "$PORTFILE" <<'PY' &
import http.server, socketserver, sys, threading, time
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/file":
            self.send_response(302); self.send_header("Location", "file:///etc/passwd")
            self.send_header("Content-Length", "0"); self.end_headers()
        elif self.path == "/stall":
            time.sleep(6)
        else:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
threading.Timer(60, lambda: threading.Thread(target=s.shutdown).start()).start()
for _ in range(20):
    s.handle_request()
PY
SERVER=$!
cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    kill "$SERVER" 2>/dev/null || true
    rm -rf "$CONFIG"
}
trap cleanup EXIT
for _ in $(seq 50); do [ -s "$PORTFILE" ] && break; sleep 0.1; done
[ -s "$PORTFILE" ] || fail "the loopback server did not start"
BASE="http://127.0.0.1:$(cat "$PORTFILE")"

keys() {
    for k in "$@"; do
        tmux send-keys -t "$SESSION" "$k"
        sleep 0.25
    done
}
# Paste TEXT as a terminal does (bracketed when the explorer asked for it).
paste() {
    printf '%s' "$1" >"$CONFIG/paste"
    tmux load-buffer -b hostile "$CONFIG/paste"
    tmux paste-buffer -p -d -b hostile -t "$SESSION"
    sleep 0.3
}

tmux new-session -d -s "$SESSION" -x 120 -y 36 "env -i HOME=\"$HOME\" PATH=\"$PATH\" TERM=xterm-256color PS1='e2e\$ ' bash --norc --noprofile"
tmux send-keys -t "$SESSION" "LLMBOUND_CONFIG_DIR='$CONFIG' LLMBOUND_HTTP_TIMEOUT=2 '$BIN'; echo \"llmbound exited with \$?\"" Enter
wait_for "13.81" "the explorer started"

# A redirect to file:///etc/passwd: one message in the status line, the explorer goes on.
keys o
wait_for "open (GGUF, safetensors" "the open prompt"
paste "$BASE/file"
keys Enter
wait_for "not an http(s) URL" "the refused redirect is reported"
screen | grep -qF "root:x:0" && fail "the contents of /etc/passwd are on the screen"

# A server that stalls: the deadline ends the open with a message, not \"opening …\" for ever.
keys o
wait_for "open (GGUF, safetensors" "the open prompt again"
paste "$BASE/stall"
keys Enter
wait_for "timed out" "the stalled open ends at the deadline"

# A 1 MiB paste: one event, cut at 4,096 characters, drawn at once; Esc closes the prompt.
keys o
wait_for "open (GGUF, safetensors" "the open prompt for the paste"
head -c 1048576 /dev/zero | tr '\0' 'x' >"$CONFIG/paste"
start=$SECONDS
tmux load-buffer -b hostile "$CONFIG/paste"
tmux paste-buffer -p -d -b hostile -t "$SESSION"
wait_for "xxxxxxxxxxxxxxxxxxxx" "the pasted text in the prompt"
[ $((SECONDS - start)) -le 5 ] || fail "the 1 MiB paste took $((SECONDS - start)) s to show"
keys Escape
wait_gone "open (GGUF, safetensors" "Esc after a big paste closes the prompt"
keys q
wait_for "llmbound exited with 0" "q after a big paste quits"
echo "hostile e2e: ok ($BIN)"
