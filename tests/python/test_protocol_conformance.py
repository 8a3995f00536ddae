"""Protocol conformance: a client written from docs/PROTOCOL.md alone, against a real `hlox broker`
and one `hlox worker` on ipc://. Only zmq, msgpack and the standard library: no hlox package, no
code of hlox's own clients. Each check names the section of PROTOCOL.md it holds to: the header
bytes, the framing rule, SUBMIT/RESULT with a decoded RECORD, the text hash (its own
implementation, checked against the document's test vectors), the `sites` kind and the decision
vectors it implies, every class of malformed message with its ERROR code and job id, the
control socket, and a broker that still serves a valid job at the end.

Environment: HLOX_BIN (the hlox binary), HLOX_SOURCE_DIR (for examples/)."""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import uuid

import msgpack
import zmq

VERSION = 1
REPLY_TIMEOUT_S = 60
JOB_TIMEOUT_S = 180
MASK = (1 << 64) - 1


# -- Hashes (PROTOCOL.md "Hashes"), written from the document --------------------------------
def _mix(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def text_hash(data):
    a = 0xCBF29CE484222325
    for c in data:
        a = ((a ^ c) * 0x100000001B3) & MASK
    b = 0x84222325CBF29CE4 ^ len(data)
    whole = len(data) // 8 * 8
    for off in range(0, whole, 8):
        w = int.from_bytes(data[off:off + 8], "little")
        b = (_rotl(b ^ ((w * 0x87C37B91114253D5) & MASK), 31) * 0x4CF5AD432745937F) & MASK
    t = int.from_bytes(data[whole:], "little")
    b = (_rotl(b ^ ((t * 0x87C37B91114253D5) & MASK), 31) * 0x4CF5AD432745937F) & MASK
    return "%016x%016x" % (_mix(a), _mix(b ^ a))


# -- Frames (PROTOCOL.md "Frames") ------------------------------------------------------------
def header(cmd):
    """'H' 'X', the version as one byte, the command as one ASCII byte."""
    return bytes([0x48, 0x58, VERSION, ord(cmd)])


def pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


def decisions_bin(decisions):
    """SUBMIT "decisions": map str -> bin of little-endian int32."""
    return {k: struct.pack("<%di" % len(v), *v) for k, v in decisions.items()}


class Peer:
    """A raw DEALER on one broker socket."""

    def __init__(self, ctx, address):
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTING_ID, ("conformance-" + uuid.uuid4().hex[:8]).encode())
        self.sock.connect(address)

    def send(self, frames):
        self.sock.send_multipart(frames)

    def recv(self, timeout=REPLY_TIMEOUT_S, skip_heartbeats=True):
        """(command letter, decoded body) of the next message; checks the framing rule."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sock.poll(int(left * 1000) + 1, zmq.POLLIN):
                raise AssertionError("no message from the broker in %.0f s" % timeout)
            frames = self.sock.recv_multipart()
            check(1 <= len(frames) <= 2, "a message is a header frame and at most one body frame")
            h = frames[0]
            check(len(h) == 4 and h[0:2] == b"HX" and h[2] == VERSION,
                  "header is 48 58 01 <cmd>, got %r" % h)
            body = frames[1] if len(frames) == 2 else b""
            decoded = msgpack.unpackb(body, raw=False) if body else {}
            cmd = chr(h[3])
            if cmd == "H" and skip_heartbeats:
                continue
            return cmd, decoded

    def expect_error(self, code, job_id, what):
        cmd, body = self.recv()
        check(cmd == "E", "%s: expected ERROR, got %s %r" % (what, cmd, body))
        check(body.get("code") == code, "%s: expected %s, got %r" % (what, code, body))
        check(body.get("id", "") == job_id,
              "%s: ERROR should carry id %r, got %r" % (what, job_id, body.get("id")))
        return body

    def close(self):
        self.sock.close()


FAILURES = []
PASSED = [0]


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def step(name, fn):
    try:
        fn()
        PASSED[0] += 1
        print("[ OK   ]", name, flush=True)
    except Exception as e:  # noqa: BLE001 - report every failure and go on
        FAILURES.append(name)
        print("[ FAIL ]", name, "-", e, flush=True)


# -- The fleet -----------------------------------------------------------------------------
class Fleet:
    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="hlox-conf-")
        self.address = "ipc://" + os.path.join(self.dir, "broker")
        self.control = self.address + ".ctl"  # PROTOCOL.md "Sockets": the ipc path plus .ctl
        self.procs = [subprocess.Popen([binary, "broker", "--bind", self.address],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        self.worker_id = "conformance-w1"
        self.procs.append(subprocess.Popen([binary, "worker", "--broker", self.address, "--id",
                                            self.worker_id],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def alive(self):
        return all(p.poll() is None for p in self.procs)

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    binary = os.environ.get("HLOX_BIN", "")
    source = os.environ.get("HLOX_SOURCE_DIR",
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if not binary or not os.access(binary, os.X_OK):
        print("HLOX_BIN is not an executable hlox binary")
        return 1
    with open(os.path.join(source, "examples", "mlp_train_small.hlo"), "rb") as f:
        module = f.read()
    digest = text_hash(module)
    fleet = Fleet(binary)
    ctx = zmq.Context()
    agent = Peer(ctx, fleet.address)
    state = {}

    def submit(job_id, decisions=None, kind=None, with_module=True, cache=False, pipeline="default",
               extra=None):
        body = {"id": job_id, "module_hash": digest, "pipeline": pipeline,
                "decisions": decisions_bin(decisions or {}), "cache": cache}
        if with_module:
            body["module"] = module
        if kind is not None:
            body["kind"] = kind
        body.update(extra or {})
        agent.send([header("S"), pack(body)])

    def result_of(job_id, timeout=JOB_TIMEOUT_S):
        cmd, body = agent.recv(timeout)
        check(cmd == "R", "expected RESULT for %s, got %s %r" % (job_id, cmd, body))
        for key in ("id", "attempts", "cached", "record"):
            check(key in body, "RESULT lacks required key %r" % key)
        check(body["id"] == job_id, "RESULT for %r, expected %r" % (body["id"], job_id))
        check(isinstance(body["record"], bytes), "RESULT record is bin")
        record = msgpack.unpackb(body["record"], raw=False)
        check(isinstance(record, dict) and record.get("status") in (
            "OK", "WRONG_OUTPUT", "INVALID_DECISIONS", "RUN_ERROR", "TIMEOUT", "POISON",
            "CANCELLED", "RESOURCE_EXHAUSTED"), "RECORD status: %r" % record.get("status"))
        return body, record

    def hash_vectors():
        for text, want in ((b"", "c3817c016ba4ff304812d590de40035d"),
                           (b"x", "338262d8f096398fc20dbe8060fbb8d6"),
                           (b"HloModule m", "145c74cae6ab3b626b88ce8ca48a1159")):
            check(text_hash(text) == want, "hash of %r: %s, document says %s"
                  % (text, text_hash(text), want))

    def heartbeat_header():
        agent.send([header("H"), pack({})])
        cmd, body = agent.recv(skip_heartbeats=False)
        check(cmd == "H" and isinstance(body.get("instance"), int) and body["instance"] != 0,
              "HEARTBEAT reply with a nonzero instance, got %s %r" % (cmd, body))
        state["instance"] = body["instance"]
        # The framing rule: a bodyless command may omit its body frame.
        agent.send([header("H")])
        cmd, body = agent.recv(skip_heartbeats=False)
        check(cmd == "H" and body.get("instance") == state["instance"],
              "a lone HEARTBEAT header is answered by the same instance")

    def evaluate_job():
        submit("conf-eval-1")
        res, record = result_of("conf-eval-1")
        check(record["status"] == "OK", "evaluation: %r" % record.get("message"))
        check(res["attempts"] >= 1 and res["cached"] is False, "a fresh job ran: %r" % res)
        check(record["text_hash"] == digest,
              "RECORD text_hash is the hash of the text sent (%s vs %s)" % (record["text_hash"], digest))
        check(len(record["module_hash"]) == 32, "RECORD module_hash is 32 hex digits")
        for key in ("cost", "analytical", "provenance"):
            check(isinstance(record.get(key), dict), "RECORD %s is a map" % key)
        check(record["cost"]["median"] > 0, "a measured median")
        check("sites" not in record, "an evaluation's RECORD has no sites")

    def sites_and_decisions():
        submit("conf-sites-1", kind="sites", with_module=False)  # the broker has the module now
        _, record = result_of("conf-sites-1")
        check(record["status"] == "OK", "sites: %r" % record.get("message"))
        check(record.get("text_hash") == digest, "sites RECORD names the text")
        points = json.loads(record["sites"])
        check(isinstance(points, list) and points, "the module has decision points under default")
        for p in points:
            check(set(("key", "pass", "decided", "sites")) <= set(p), "point keys: %r" % list(p))
            check(p["key"].startswith(p["pass"] + "#"), "key is <pass>#<k>: %r" % p["key"])
            check(p["decided"] is False, "no decisions were given")
            for i, s in enumerate(p["sites"]):
                check(s["index"] == i, "sites are listed in order")
                check(s["choices"] and s["choices"][0] == "keep", "choice 0 is keep")
                check(0 <= s["default"] < len(s["choices"]), "default is a choice index")
        first = points[0]
        state["first"] = first
        n = len(first["sites"])
        right = {first["key"]: [s["default"] for s in first["sites"]]}
        submit("conf-right", right, with_module=False, cache=True)
        _, rec = result_of("conf-right")
        check(rec["status"] == "OK", "%d decisions for %s: %r" % (n, first["key"], rec.get("message")))
        wrong = {first["key"]: [0] * (n + 1)}
        submit("conf-wrong", wrong, with_module=False)
        _, rec = result_of("conf-wrong")
        check(rec["status"] == "INVALID_DECISIONS",
              "%d decisions for %d sites: %r" % (n + 1, n, rec["status"]))
        check(first["key"] in rec.get("message", ""), "the message names the invocation")
        # The sites job itself checks decisions the same way.
        submit("conf-sites-wrong", wrong, kind="sites", with_module=False)
        _, rec = result_of("conf-sites-wrong")
        check(rec["status"] == "INVALID_DECISIONS" and "sites" not in rec,
              "sites with a wrong-length vector: %r" % rec["status"])
        # Given the first point, the list marks it decided and goes on from there.
        submit("conf-sites-2", right, kind="sites", with_module=False)
        _, rec = result_of("conf-sites-2")
        again = json.loads(rec["sites"])
        check(again[0]["key"] == first["key"] and again[0]["decided"] is True,
              "the first point is marked decided")
        check(all(not p["decided"] for p in again[1:]), "only the given point is decided")
        # Kinds never share a cached answer: conf-right's evaluation is cached under the same
        # module, pipeline and decisions.
        submit("conf-sites-cached", right, kind="sites", with_module=False, cache=True)
        _, rec_a = result_of("conf-sites-cached")
        check(rec_a["status"] == "OK" and "sites" in rec_a, "a sites job is not answered by an evaluation")

    def paired_job():
        # The document's paired keys: the baseline is the unoptimized module, a short protocol.
        keys = {"baseline_pipeline": "none", "baseline_decisions": decisions_bin({}), "seed": 7,
                "warmups": 1, "min_rounds": 3, "max_rounds": 10, "time_cap_ms": 300, "instances": 2}
        for attempt in ("conf-paired-1", "conf-paired-2"):  # never cached: two fresh measurements
            submit(attempt, kind="paired", with_module=False, cache=True, extra=keys)
            body, rec = result_of(attempt)
            check(rec["status"] == "OK", "paired: %r" % rec.get("message"))
            check(body["cached"] is False, "a paired job is never answered from the cache")
            p = rec.get("paired")
            check(isinstance(p, dict), "a paired RECORD carries `paired`")
            for key in ("ratio", "ci_low", "ci_high", "unstable", "instance_count", "calls_per_sample",
                        "rounds", "ratios", "baseline_median", "candidate_median"):
                check(key in p, "paired lacks %r" % key)
            check(p["ci_low"] <= p["ratio"] <= p["ci_high"], "the ratio lies in its interval: %r" % p)
            check(p["instance_count"] == 2 and 1 <= p["rounds"] <= 10, "the protocol was followed: %r" % p)
            check(len(p["ratios"]) == p["rounds"], "one ratio per kept round")
            check(rec["provenance"]["seed"] == 7, "the seed travels: %r" % rec["provenance"])
        submit("conf-paired-range", kind="paired", with_module=False, extra=dict(keys, instances=65))
        agent.expect_error("DECODE", "conf-paired-range", "instances above 64")
        wrong = {state["first"]["key"]: [0] * (len(state["first"]["sites"]) + 1)}
        submit("conf-paired-base", kind="paired", with_module=False,
               extra=dict(keys, baseline_pipeline="default", baseline_decisions=decisions_bin(wrong)))
        _, rec = result_of("conf-paired-base")
        check(rec["status"] == "INVALID_DECISIONS" and rec["message"].startswith("baseline: "),
              "a baseline's wrong decisions: %r %r" % (rec["status"], rec.get("message")))

    def malformed():
        good = {"id": "conf-bad", "module_hash": digest, "pipeline": "default"}
        # Header: wrong length, wrong magic, another version, unknown command.
        agent.send([b"HX\x01", pack(good)])
        agent.expect_error("BAD_FRAME", "", "3-byte header")
        agent.send([b"XX\x01S", pack(good)])
        agent.expect_error("BAD_FRAME", "", "bad magic")
        agent.send([bytes([0x48, 0x58, 0x02, ord("S")]), pack(good)])
        agent.expect_error("BAD_VERSION", "", "version 2")
        agent.send([header("Z"), pack(good)])
        agent.expect_error("UNKNOWN_COMMAND", "", "command Z")
        agent.send([header("R"), pack(good)])
        agent.expect_error("UNKNOWN_COMMAND", "", "RESULT sent to the broker")
        # Frames: three frames.
        agent.send([header("S"), pack(good), b""])
        agent.expect_error("BAD_FRAME", "", "three frames")
        # Body: not msgpack, not a map, empty, trailing bytes.
        agent.send([header("S"), b"\xc1"])
        agent.expect_error("DECODE", "", "bad msgpack")
        agent.send([header("S"), pack([1, 2])])
        agent.expect_error("DECODE", "", "body not a map")
        agent.send([header("S")])
        agent.expect_error("DECODE", "", "SUBMIT without a body")
        # A map with a string id: the ERROR names the job.
        missing = dict(good)
        del missing["pipeline"]
        agent.send([header("S"), pack(missing)])
        agent.expect_error("DECODE", "conf-bad", "missing pipeline")
        agent.send([header("S"), pack(dict(good, pipeline=7))])
        agent.expect_error("DECODE", "conf-bad", "pipeline not a string")
        agent.send([header("S"), pack(dict(good, decisions={"fusion#0": b"\x01\x00\x00"}))])
        agent.expect_error("DECODE", "conf-bad", "decisions bin of 3 bytes")
        agent.send([header("S"), pack(dict(good, kind="no-such-kind"))])
        agent.expect_error("DECODE", "conf-bad", "unknown kind")
        # Limits (the document's table): a 257-byte campaign, a 4097-byte pipeline; nesting
        # deeper than 4.
        agent.send([header("S"), pack(dict(good, campaign="c" * 257))])
        agent.expect_error("LIMIT", "conf-bad", "campaign over 256 bytes")
        agent.send([header("S"), pack(dict(good, pipeline="p" * 4097))])
        agent.expect_error("LIMIT", "conf-bad", "pipeline over 4096 bytes")
        agent.send([header("S"), pack(dict(good, extra=[[[[[1]]]]]))])
        agent.expect_error("LIMIT", "", "nesting depth 6")
        # Modules: unknown hash without text, text that does not match its hash.
        agent.send([header("S"), pack({"id": "conf-unknown", "module_hash": "0" * 32,
                                       "pipeline": "default"})])
        agent.expect_error("UNKNOWN_MODULE", "conf-unknown", "unknown module hash")
        agent.send([header("S"), pack({"id": "conf-badmod", "module_hash": "0" * 32,
                                       "module": "HloModule m", "pipeline": "default"})])
        agent.expect_error("BAD_MODULE", "conf-badmod", "text that does not match its hash")
        # A worker command from a peer that never sent READY.
        agent.send([header("D"), pack({"id": "x", "attempt": 1, "crashed": False, "record": b""})])
        cmd, _ = agent.recv()
        check(cmd == "A", "DONE from an unregistered peer gets REREGISTER, got %s" % cmd)

    def control():
        ctl = Peer(ctx, fleet.control)
        try:
            ctl.send([header("C"), pack({"op": "status"})])
            cmd, body = ctl.recv()
            check(cmd == "c" and body.get("ok") is True, "status: %s %r" % (cmd, body))
            status = json.loads(body["json"])
            check(status["broker"]["instance"] == state["instance"], "the same broker instance")
            check(any(w["id"] == fleet.worker_id for w in status["workers"]), "our worker is listed")
            check(status["totals"]["rejected_messages"] >= 10, "the malformed messages were counted")
            ctl.send([header("C"), pack({"op": "no-such-op"})])
            cmd, body = ctl.recv()
            check(cmd == "c" and body.get("ok") is False and body.get("message"),
                  "an unknown op is refused in a CONTROL_REPLY")
            ctl.send([header("S"), pack({"id": "conf-ctl", "module_hash": digest,
                                         "pipeline": "default"})])
            ctl.expect_error("UNKNOWN_COMMAND", "", "SUBMIT on the control socket")
        finally:
            ctl.close()

    def still_serving():
        check(fleet.alive(), "broker and worker are still running")
        submit("conf-final", state.get("first") and {
            state["first"]["key"]: [s["default"] for s in state["first"]["sites"]]}, with_module=False)
        _, rec = result_of("conf-final")
        check(rec["status"] == "OK", "a valid job after all that: %r" % rec.get("message"))

    try:
        step("hash test vectors", hash_vectors)
        step("header bytes and the framing rule (HEARTBEAT)", heartbeat_header)
        step("SUBMIT -> RESULT with a RECORD", evaluate_job)
        step("sites kind and decision vectors", sites_and_decisions)
        step("paired kind", paired_job)
        step("malformed messages get documented ERRORs", malformed)
        step("control socket", control)
        step("the broker still serves a valid job", still_serving)
    finally:
        agent.close()
        ctx.term()
        fleet.close()
    print("%d passed, %d failed" % (PASSED[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
