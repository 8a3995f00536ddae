#!/usr/bin/env bash
# A full disk under the broker's result store (issue 31 item 4). In a private mount namespace a
# 4 MiB tmpfs holds the broker's --db; a filler file takes the rest of it. Jobs submitted then
# finish on a real worker but cannot be committed: the broker must answer new SUBMITs with
# STORE_FULL, keep answering status (store_full, uncommitted_results) and metrics-bearing
# status, acknowledge nothing it has not stored, and resume by itself once the filler is
# deleted. Every acknowledged result must then be in the store, also after a restart of the
# broker on the same file, and PRAGMA integrity_check must say "ok".
#
# Needs root (mount). Where mounting is not permitted it prints "SKIPPED: mounting a tmpfs not
# permitted: <reason>" and exits 0; under CI=true a failure that is not a permission problem
# fails instead. Env: HLOX_BIN (the hlox binary).
set -u

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HLOX=${HLOX_BIN:-$SRC_DIR/build/bin/hlox}
PASSED=0 FAILED=0

pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
finish() { echo "$PASSED passed, $FAILED failed"; [[ $FAILED -eq 0 ]] && exit 0 || exit 1; }

skip_or_fail() {
  local reason=$1
  if [[ ${CI:-} == true ]] && ! grep -qiE 'not permitted|permission denied|must be root|EPERM|EACCES|read-only file system' <<<"$reason"; then
    fail "mount namespace setup failed: $reason"
    finish
  fi
  echo "SKIPPED: mounting a tmpfs not permitted: $reason"
  exit 0
}

# Outside the namespace: check that one can be made, then run this script again inside one
# (mounts made there vanish with it, whatever happens).
if [[ -z ${HLOX_STORE_FULL_INNER:-} ]]; then
  who=""
  [[ $(id -u) -ne 0 ]] && who=" (not root: uid $(id -u))"
  if ! err=$(unshare -m --propagation private true 2>&1); then skip_or_fail "unshare -m: ${err}$who"; fi
  HLOX_STORE_FULL_INNER=1 exec unshare -m --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi

WORK=$(mktemp -d /tmp/hlox-storefull.XXXXXX)
MNT=$WORK/disk
mkdir -p "$MNT"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  done
  if [[ $FAILED -gt 0 ]]; then
    for f in "$WORK"/*.log; do [[ -f $f ]] && { echo "---- last lines of $(basename "$f")"; tail -n 20 "$f"; }; done
  fi
  umount "$MNT" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! err=$(mount -t tmpfs -o size=4m hlox-storefull "$MNT" 2>&1); then skip_or_fail "mount -t tmpfs: $err"; fi

PORT=$(/usr/bin/python3 -c 'import socket
for _ in range(100):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", p + 1)); t.close(); print(p); break
    except OSError: t.close()')
ADDR="tcp://127.0.0.1:$PORT"
MPORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DB=$MNT/store.db

start_broker() {
  "$HLOX" broker --bind "$ADDR" --db "$DB" --metrics "127.0.0.1:$MPORT" >>"$WORK/broker.log" 2>&1 &
  BROKER_PID=$!
  PIDS+=("$BROKER_PID")
}
status_json() { timeout 5 "$HLOX" status --broker "$ADDR" --json 2>/dev/null; }
q() { /usr/bin/python3 -c 'import json,sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$1" 2>/dev/null; }
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  while ! "$@"; do [[ $SECONDS -ge $deadline ]] && return 1; sleep 0.2; done
}
workers_up() { [[ $(status_json | q 'len(d["workers"])') == "$1" ]]; }
store_full() { [[ $(status_json | q 'd["broker"]["store_full"]') == True ]]; }
store_ok() { [[ $(status_json | q 'd["broker"]["store_full"] or d["broker"]["uncommitted_results"] > 0') == False ]]; }

# submit.py OUT PREFIX N [retry]: submits N jobs (distinct modules, no cache) and waits up to
# 60 s for an answer to each; writes one JSON line per job: {"id", "kind": "result"|"error",
# "code"}. With "retry" it submits a job again 0.5 s after STORE_FULL, as an agent would.
cat >"$WORK/submit.py" <<'PY'
import json, sys, time, msgpack, zmq
addr, out, prefix, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
retry = len(sys.argv) > 5 and sys.argv[5] == "retry"
H = lambda c: b"HX\x01" + c
ctx = zmq.Context(); s = ctx.socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0); s.connect(addr)
def module(i):
    return ("HloModule %s_%d\n\nENTRY main {\n  a = f32[64] parameter(0)\n  b = f32[64] parameter(1)\n"
            "  ROOT c = f32[64] add(a, b)\n}\n" % (prefix, i))
def send(i):
    s.send_multipart([H(b"S"), msgpack.packb({"id": "%s-%d" % (prefix, i), "campaign": "storefull",
        "module_hash": "", "module": module(i), "pipeline": "default", "decisions": {},
        "use_cache": False})])
pending, again = {}, {}
for i in range(n):
    pending["%s-%d" % (prefix, i)] = i
    send(i)
answers = {}
deadline = time.time() + 60
while pending and time.time() < deadline:
    for jid, at in list(again.items()):
        if time.time() >= at:
            del again[jid]
            send(pending[jid])
    if not s.poll(100): continue
    h, body = s.recv_multipart()
    m = msgpack.unpackb(body, raw=False)
    jid = m.get("id", "")
    if jid not in pending: continue
    if h[3:4] == b"E" and retry and m.get("code") == "STORE_FULL":
        again[jid] = time.time() + 0.5
        continue
    if h[3:4] == b"R": answers[jid] = {"id": jid, "kind": "result"}
    elif h[3:4] == b"E": answers[jid] = {"id": jid, "kind": "error", "code": m.get("code"), "message": m.get("message")}
    pending.pop(jid, None)
with open(out, "w") as f:
    for a in answers.values(): f.write(json.dumps(a) + "\n")
PY
submit() { timeout 90 /usr/bin/python3 "$WORK/submit.py" "$ADDR" "$@"; }
count() { grep -c "$2" "$1" 2>/dev/null || true; }
stored_ids() { /usr/bin/python3 -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
for (j,) in c.execute("select job_id from results"): print(j.decode() if isinstance(j, bytes) else j)' "$DB" | sort; }
acked_ids() { cat "$WORK"/acks-*.jsonl 2>/dev/null | /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
    a = json.loads(l)
    if a["kind"] == "result": print(a["id"])' | sort; }
all_acked_stored() { [[ -z $(comm -23 <(acked_ids) <(stored_ids)) ]]; }
metric() { /usr/bin/python3 -c 'import sys, urllib.request
for l in urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode().splitlines():
    if l.startswith(sys.argv[2] + " "): print(l.split()[1])' "$MPORT" "$1" 2>/dev/null; }
metrics_full() { [[ $(metric hlox_store_full) == 1 ]]; }
status_answers() { [[ $(status_json | q 'd["broker"]["uncommitted_results"] >= 0') == True ]]; }
integrity() { [[ $(/usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])' "$DB") == ok ]]; }

start_broker
"$HLOX" worker --broker "$ADDR" --id fullw >"$WORK/worker.log" 2>&1 &
PIDS+=($!)
if ! wait_until 20 workers_up 1; then fail "broker and worker up"; finish; fi

# Before the disk fills: a few jobs are stored and acknowledged.
submit "$WORK/acks-1.jsonl" before 4
check "4 results before the disk fills" [ "$(count "$WORK/acks-1.jsonl" '"result"')" -eq 4 ]

# Fill the rest of the disk.
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null
sync
echo "disk: $(df -k "$MNT" | tail -1)"

# Jobs submitted now are taken, run, and their results cannot be stored.
submit "$WORK/acks-2.jsonl" during 8 retry &
SUBMIT_PID=$!
check "the broker notices the full disk" wait_until 60 store_full
check "status still answers while full" status_answers
check "/metrics answers and shows the full store" metrics_full
submit "$WORK/refused.jsonl" refused 3
check "new SUBMITs get STORE_FULL" [ "$(count "$WORK/refused.jsonl" 'STORE_FULL')" -eq 3 ]
check "the STORE_FULL message says why" grep -q "disk is full" "$WORK/refused.jsonl"
HELD=$(status_json | q 'd["broker"]["uncommitted_results"]')
check "finished results are held, not acknowledged (held: $HELD)" [ "${HELD:-0}" -ge 1 ]

# Space returns: the broker commits the held results and acknowledges them by itself.
rm -f "$MNT/filler"
check "the broker resumes when space returns" wait_until 30 store_ok
check "/metrics shows it resumed" [ "$(metric hlox_store_full)" = 0 ]
wait "$SUBMIT_PID"
check "every job submitted while full got its result" [ "$(count "$WORK/acks-2.jsonl" '"result"')" -eq 8 ]
submit "$WORK/acks-3.jsonl" after 3
check "new jobs are taken again" [ "$(count "$WORK/acks-3.jsonl" '"result"')" -eq 3 ]

check "every acknowledged result is in the store" all_acked_stored
check "15 acknowledged results" [ "$(acked_ids | wc -l)" -eq 15 ]

# Restart on the same file: everything acknowledged is still there, and the file is sound.
kill -TERM "$BROKER_PID"; wait "$BROKER_PID" 2>/dev/null
check "integrity_check after the full disk" integrity
start_broker
check "the restarted broker answers" wait_until 20 workers_up 1
check "the restarted broker reloaded every result" [ "$(status_json | q 'd["totals"]["stored_results"]')" -ge 15 ]
submit "$WORK/resubmit.jsonl" during 8
check "resubmits are answered from the store" [ "$(count "$WORK/resubmit.jsonl" '"result"')" -eq 8 ]
kill -TERM "$BROKER_PID"; wait "$BROKER_PID" 2>/dev/null
check "integrity_check after the restart" integrity
finish
