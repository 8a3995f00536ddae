#!/usr/bin/env bash
# Runs python/examples/submit_job.py against a real broker and worker on a free loopback port.
set -euo pipefail
HLOX="$1"; EXAMPLE="$2"
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR="tcp://127.0.0.1:${PORT}"
"$HLOX" broker --bind "$ADDR" & BROKER=$!
"$HLOX" worker --broker "$ADDR" --id py-worker & WORKER=$!
trap 'kill -9 $BROKER $WORKER 2>/dev/null || true' EXIT
/usr/bin/python3 "$EXAMPLE" "$ADDR"
