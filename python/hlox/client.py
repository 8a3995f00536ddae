"""Pure-Python client of the hlox wire protocol (docs/PROTOCOL.md), for machines without the
compiled extension: only python3-zmq and python3-msgpack. It submits jobs, collects results,
resubmits unfinished jobs when the broker restarts, and sends control ops (status, drain,
cancel, shutdown). A secured broker (CURVE) takes this client's secret key file and the
broker's public key file, as `hlox keygen` writes them.

    c = Client("tcp://10.0.0.5:5555", curve_key="agent.key", broker_key="broker.pub")
    ids = [c.submit(text, "default", {"fusion#0": [1, 0, 1]}) for _ in range(3)]
    results = c.gather(ids, timeout=60)          # {job_id: {"record": {...}, ...}}
    print(c.status()["workers"])
    points = c.sites(text, "default", {})        # [{"key": "fusion#0", "sites": [...]}, ...]
    v = c.paired(text, "default", {"fusion#0": [0, 1, 1]})  # {"ratio", "ci_low", "ci_high", ...}

The native client (hlox.Client, the compiled extension) has the same constructor, methods and
units: times in seconds, `unfinished` a property, `submit` taking HLO text or a Module.

A result is {"job_id", "attempts", "cached", "record"} where record is the RECORD map of the
protocol ("status", "cost", "analytical", ...). A job the broker refuses for good (bad module,
over a limit) comes back as a RUN_ERROR record, so each submitted job yields one result.
"""
import json
import struct
import time
import uuid

import msgpack
import zmq
from zmq.utils import z85

from ._client_common import control_address_for, gather, paired as paired_job, paired_spec, sites  # noqa: F401 (control_address_for: part of the API)

VERSION = 1
_MASK = (1 << 64) - 1
_RETRY_CODES = ("FULL", "STORE_FULL")  # back-pressure: the job is resubmitted after a pause


def header(cmd):
    """The 4-byte header frame of command byte `cmd` (b"S", b"H", ...)."""
    return b"HX" + bytes([VERSION]) + cmd


def _mix(z):
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _MASK


def hash_text(text):
    """The protocol's module hash (cost/module_hash.cc HashText): 32 hex digits."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    a = 0xCBF29CE484222325
    for c in data:
        a = ((a ^ c) * 0x100000001B3) & _MASK
    b = 0x84222325CBF29CE4 ^ len(data)
    n8 = len(data) // 8 * 8
    for (w,) in struct.iter_unpack("<Q", data[:n8]):
        b = (_rotl(b ^ ((w * 0x87C37B91114253D5) & _MASK), 31) * 0x4CF5AD432745937F) & _MASK
    tail = int.from_bytes(data[n8:], "little")
    b = (_rotl(b ^ ((tail * 0x87C37B91114253D5) & _MASK), 31) * 0x4CF5AD432745937F) & _MASK
    return "%016x%016x" % (_mix(a), _mix(b ^ a))


def encode_decisions(decisions):
    """{"fusion#0": [1, 0]} -> {"fusion#0": little-endian int32 bytes} (the SUBMIT form)."""
    out = {}
    for key, vec in (decisions or {}).items():
        vec = [int(x) for x in vec]
        out[str(key)] = struct.pack("<%di" % len(vec), *vec)
    return out


def _error_record(code, message):
    return {"status": "RUN_ERROR", "message": "%s: %s" % (code, message), "cost": {}, "analytical": {}}


def read_z85_key(path):
    """The Z85 key in a key file written by `hlox keygen` (its first 40 non-space characters)."""
    with open(path, "rb") as f:
        text = b"".join(f.read().split())
    key = text[:40]
    if len(key) != 40:
        raise ValueError("%s does not hold a 40-character Z85 CURVE key" % path)
    try:
        z85.decode(key)
    except Exception as e:  # noqa: BLE001 (pyzmq raises several kinds)
        raise ValueError("%s does not hold a Z85 CURVE key: %s" % (path, e))
    return key


def curve_keys(curve_key, broker_key):
    """(secret, public, server) Z85 keys from the two key files, or None when both are empty;
    one without the other is an error, as in the C++ client."""
    if not curve_key and not broker_key:
        return None
    if not curve_key or not broker_key:
        raise ValueError("a secured broker needs both curve_key (own secret key file) and "
                         "broker_key (the broker's .pub)")
    if not zmq.has("curve"):
        raise RuntimeError("this libzmq has no CURVE support")
    secret = read_z85_key(curve_key)
    return secret, zmq.curve_public(secret), read_z85_key(broker_key)


def _secure(sock, keys):
    if keys is not None:
        sock.curve_secretkey, sock.curve_publickey, sock.curve_serverkey = keys


class Client:
    """A DEALER connection to a broker's main socket; single-threaded (call next/gather to
    make progress)."""

    def __init__(self, address, identity=None, control_address=None, curve_key=None, broker_key=None,
                 heartbeat=0.25):
        self.address = address
        self.control = control_address or control_address_for(address)
        self.identity = identity or "pyagent-" + uuid.uuid4().hex[:12]
        self.heartbeat = heartbeat
        self._keys = curve_keys(curve_key, broker_key)
        self._ctx = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.ROUTING_ID, self.identity.encode())
        _secure(self._sock, self._keys)
        self._sock.connect(address)
        self._pending = {}       # job id -> SUBMIT body without the module text
        self._texts = {}         # module hash -> text (resent on UNKNOWN_MODULE)
        self._sent_hashes = set()
        self._hash_cache = {}
        self._instance = None
        self._ready = []
        self._outbox = []        # frames not yet accepted by the socket (see _flush)
        self._last_beat = 0.0

    # -- jobs ---------------------------------------------------------------------------
    def submit(self, module, pipeline="default", decisions=None, campaign="", job_id=None,
               cache=True, hardware_class="", run_timeout=0.0, queue_timeout=0.0, kind="evaluate",
               paired=None):
        """Queues one job; returns its id. module: HLO text or a Module (its text is sent once
        per broker). run_timeout / queue_timeout: seconds, 0 = the broker's default. kind:
        "evaluate" (measure the candidate), "sites" (list its decision points; see sites()) or
        "paired" (measure it against a baseline; `paired` holds the keys, see paired())."""
        text = str(module)
        digest = self._hash_cache.get(text)
        if digest is None:
            digest = self._hash_cache[text] = hash_text(text)
        self._texts[digest] = text
        body = {
            "id": job_id or "py-" + uuid.uuid4().hex,
            "campaign": campaign,
            "module_hash": digest,
            "pipeline": pipeline,
            "decisions": encode_decisions(decisions),
            "class": hardware_class,
            "run_timeout_ms": int(round(run_timeout * 1000)),
            "queue_timeout_ms": int(round(queue_timeout * 1000)),
            "cache": bool(cache),
        }
        if kind != "evaluate":
            body["kind"] = kind
        if kind == "paired":
            spec = paired_spec(paired)
            if "baseline_decisions" in spec:
                spec["baseline_decisions"] = encode_decisions(spec["baseline_decisions"])
            body.update(spec)
        elif paired:
            raise ValueError("paired keys given for a %r job" % kind)
        self._pending[body["id"]] = body
        self._send_submit(body, with_module=digest not in self._sent_hashes)
        self._sent_hashes.add(digest)
        return body["id"]

    @property
    def unfinished(self):
        """Jobs submitted whose result has not been handed out."""
        return len(self._pending) + len(self._ready)

    def poll(self):
        """Every result available now (never waits)."""
        out = []
        while True:
            r = self.next(0)
            if r is None:
                return out
            out.append(r)

    def next(self, timeout=1.0):
        """The next result dict, or None when none arrived within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self._ready:
            self._beat()
            while self._sock.poll(0, zmq.POLLIN):  # drain what has arrived
                self._handle(self._sock.recv_multipart())
            if self._ready:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self._sock.poll(int(min(left, self.heartbeat) * 1000) + 1, zmq.POLLIN):
                self._handle(self._sock.recv_multipart())
        return self._ready.pop(0)

    def sites(self, module, pipeline="default", decisions=None, timeout=60.0):
        """The decision points of `module` under `pipeline` given `decisions` (the choices made
        so far; may be partial or empty), asked of the fleet as a "sites" job: a list of
        {"key", "pass", "decided", "sites": [{"index", "id", "rule", "computation",
        "instructions", "choices", "default", "features"}]} in run order. Undecided points take
        the pipeline's own choices; the first undecided one is the next to decide. Raises
        ValueError for decisions that do not fit (INVALID_DECISIONS), RuntimeError for other
        failures, TimeoutError when no answer came. Results of other jobs that arrive
        meanwhile stay queued for next()."""
        return sites(self, module, pipeline, decisions, timeout)

    def paired(self, module, pipeline="default", decisions=None, paired=None, campaign="",
               hardware_class="", timeout=300.0):
        """A paired measurement on the fleet: the candidate (`pipeline`, `decisions`) built,
        validated and timed interleaved with a baseline by one worker. `paired`: any of
        baseline_pipeline ("" = `pipeline`), baseline_decisions ({} = its default policy), seed,
        and the timing keys warmups, min_rounds, max_rounds, target_rel_error, time_cap_ms,
        min_sample_us, instances (docs/PROTOCOL.md). Returns the record's "paired" figures
        {"ratio" (candidate/baseline time: < 1 is faster), "ci_low", "ci_high", "unstable",
        "rounds", ...} plus "provenance" (the worker and class that measured). Never cached.
        Raises ValueError for INVALID_DECISIONS or an unknown key, RuntimeError for WRONG_OUTPUT
        or a run error, TimeoutError when no answer came."""
        return paired_job(self, module, pipeline, decisions, paired, campaign, hardware_class,
                      timeout)

    def gather(self, ids, timeout=120.0):
        """Waits for every id in `ids`; returns {id: result} (ids that timed out are absent)."""
        return gather(self, ids, timeout)

    # -- control ------------------------------------------------------------------------
    def control_op(self, op, target="", timeout=3.0):
        """Sends CONTROL (status, drain, cancel, shutdown) to the control socket; returns the
        reply text (the status JSON for "status", else the broker's message). Raises
        RuntimeError when the broker refuses, TimeoutError when it does not answer."""
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        _secure(sock, self._keys)
        try:
            sock.connect(self.control)
            # Never block on a broker that is down or refuses the handshake: wait for room.
            if not sock.poll(int(timeout * 1000), zmq.POLLOUT):
                raise TimeoutError("no connection to %s" % self.control)
            try:
                sock.send_multipart([header(b"C"), msgpack.packb({"op": op, "target": target})],
                                    flags=zmq.NOBLOCK)
            except zmq.Again:
                # The handshake can fail (a refused CURVE key) between the poll and the send:
                # the pipe is gone again, which is the same as never having connected.
                raise TimeoutError("no connection to %s" % self.control)
            if not sock.poll(int(timeout * 1000), zmq.POLLIN):
                raise TimeoutError("no control reply from %s" % self.control)
            frames = sock.recv_multipart()
            body = msgpack.unpackb(frames[1], raw=False) if len(frames) > 1 and frames[1] else {}
            if frames[0][3:4] == b"E":
                raise RuntimeError("broker error %s: %s" % (body.get("code"), body.get("message")))
            if not body.get("ok", False):
                raise RuntimeError("broker refused %s: %s" % (op, body.get("message", "")))
            return (body.get("json") or "{}") if op == "status" else body.get("message", "")
        finally:
            sock.close()

    def status(self, timeout=3.0):
        """The broker's status JSON as a dict (workers, queues, totals, latency)."""
        return json.loads(self.control_op("status", timeout=timeout))

    def close(self):
        self._sock.close()

    # -- internals ----------------------------------------------------------------------
    def _requeue(self, results):
        """Puts results taken by next() back in front, in order (sites() skips them)."""
        self._ready[0:0] = results

    def _send_submit(self, body, with_module):
        msg = dict(body)
        if with_module:
            msg["module"] = self._texts[body["module_hash"]]
        self._outbox.append([header(b"S"), msgpack.packb(msg, use_bin_type=True)])
        self._flush()

    def _flush(self):
        """Sends what the outbox holds without ever blocking: a socket with no connection yet
        (a broker that is down, or refuses this client's key) keeps it for the next call."""
        while self._outbox:
            try:
                self._sock.send_multipart(self._outbox[0], flags=zmq.NOBLOCK)
            except zmq.Again:
                return
            self._outbox.pop(0)

    def _beat(self):
        now = time.monotonic()
        self._flush()
        if now - self._last_beat >= self.heartbeat:
            try:
                self._sock.send_multipart([header(b"H"), msgpack.packb({})], flags=zmq.NOBLOCK)
            except zmq.Again:
                pass  # not connected: the next beat tries again
            self._last_beat = now

    def _handle(self, frames):
        if len(frames) < 1 or len(frames[0]) != 4:
            return
        cmd = frames[0][3:4]
        body = msgpack.unpackb(frames[1], raw=False) if len(frames) > 1 and frames[1] else {}
        if cmd == b"R":
            job_id = body.get("id", "")
            if self._pending.pop(job_id, None) is None:
                return  # a duplicate answer for a job already handed out
            record = body.get("record", b"")
            record = msgpack.unpackb(record, raw=False) if isinstance(record, bytes) else record
            self._ready.append({"job_id": job_id, "attempts": body.get("attempts", 0),
                                "cached": body.get("cached", False), "record": record})
        elif cmd == b"E":
            self._on_error(body)
        elif cmd == b"H":
            instance = body.get("instance")
            if instance is not None and self._instance is not None and instance != self._instance:
                self._sent_hashes.clear()  # a restarted broker knows no modules
                for job in list(self._pending.values()):
                    self._send_submit(job, with_module=job["module_hash"] not in self._sent_hashes)
                    self._sent_hashes.add(job["module_hash"])
            if instance is not None:
                self._instance = instance

    def _on_error(self, body):
        job_id, code = body.get("id", ""), body.get("code", "")
        job = self._pending.get(job_id)
        if job is None:
            return
        if code == "UNKNOWN_MODULE":
            self._send_submit(job, with_module=True)
        elif code in _RETRY_CODES:
            time.sleep(0.05)
            self._send_submit(job, with_module=False)
        else:
            del self._pending[job_id]
            self._ready.append({"job_id": job_id, "attempts": 0, "cached": False,
                                "record": _error_record(code, body.get("message", ""))})
