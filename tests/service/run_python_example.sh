#!/usr/bin/env bash
# Runs python/examples/submit_job.py against a real broker and worker on a free loopback port.
# Ports are drawn below the kernel's ephemeral range (other tests' outgoing connections take
# ports from it), and a broker that could not bind (another test took the port) is retried.
set -euo pipefail
HLOX="$1"; EXAMPLE="$2"
BROKER=""; WORKER=""
trap 'kill -9 $BROKER $WORKER 2>/dev/null || true' EXIT
for attempt in 1 2 3 4 5; do
  PORT=$(/usr/bin/python3 -c '
import random, socket
for _ in range(200):
    p = random.randrange(20000, 32700)
    try:
        for q in (p, p + 1):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
        print(p); break
    except OSError:
        pass')
  ADDR="tcp://127.0.0.1:${PORT}"
  "$HLOX" broker --bind "$ADDR" & BROKER=$!
  sleep 0.3
  if kill -0 "$BROKER" 2>/dev/null; then break; fi
  echo "broker on $ADDR did not start (attempt $attempt); trying another port" >&2
  BROKER=""
done
[ -n "$BROKER" ] || { echo "no broker could bind" >&2; exit 1; }
"$HLOX" worker --broker "$ADDR" --id py-worker & WORKER=$!
/usr/bin/python3 "$EXAMPLE" "$ADDR"
