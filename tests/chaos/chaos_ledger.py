"""The ledger of a chaos soak and the agents that fill it.

An agent is a thread with its own hlox.client.Client (the project's pure-Python client: it
resubmits its unfinished jobs when the broker's instance changes). The client is wrapped so that
every RESULT and ERROR the broker sends is written to the ledger before the client sees it,
including the RESULTs the client itself drops as answers for a job it already handed out: those
are the redeliveries the ledger compares with the first answer.

The protocol has no separate acknowledgement of a SUBMIT: a SUBMIT is accepted unless the broker
answers it with an ERROR that the client does not retry (FULL and UNKNOWN_MODULE are retried), so
an accepted job is one submitted and never refused, and each must end with exactly one final
RESULT (whatever its status). Two RESULTs for one id whose record bytes differ are a duplicate
(the job ran twice and both runs were delivered); the same bytes again are a redelivery.
"""
import hashlib
import random
import threading
import time

import msgpack

from hlox.client import Client

RETRIED_ERRORS = ("FULL", "UNKNOWN_MODULE")


class Ledger:
    """Per job id: the SUBMIT body, the first final answer (record digest, status), and counts of
    redeliveries, duplicates and refusals. Thread-safe."""

    def __init__(self):
        self.mu = threading.Lock()
        self.jobs = {}          # id -> {"body", "text", "kind", "digest", "status", "answers"}
        self.duplicates = {}    # id -> list of differing digests
        self.refused = {}       # id -> "CODE: message"
        self.redeliveries = 0
        self.resubmits = {"timeout": 0, "scheduled_pending": 0, "scheduled_finished": 0}

    def submitted(self, body, text):
        with self.mu:
            self.jobs[body["id"]] = {"body": dict(body), "text": text,
                                     "kind": body.get("kind", "evaluate"), "digest": None,
                                     "status": None, "answers": 0, "t0": time.monotonic(),
                                     "seconds": None}

    def result(self, job_id, record_bytes):
        """Notes one RESULT; False when it is a second, different final result for the id."""
        digest = hashlib.sha256(record_bytes).hexdigest()
        with self.mu:
            job = self.jobs.get(job_id)
            if job is None:
                return True  # not ours (cannot happen: ids are unique per run)
            job["answers"] += 1
            if job["digest"] is None:
                job["digest"] = digest
                job["seconds"] = time.monotonic() - job["t0"]
                try:
                    rec = msgpack.unpackb(record_bytes, raw=False)
                    job["status"] = rec.get("status", "?")
                    job["message"] = str(rec.get("message", ""))[:160]
                except Exception:  # noqa: BLE001 (a bad record is reported as its status)
                    job["status"] = "UNREADABLE"
                return True
            if digest == job["digest"]:
                self.redeliveries += 1
                return True
            self.duplicates.setdefault(job_id, []).append(digest)
            return False

    def error(self, job_id, code, message):
        if code in RETRIED_ERRORS or not job_id:
            return
        with self.mu:
            if job_id in self.jobs and self.jobs[job_id]["digest"] is None:
                self.refused[job_id] = "%s: %s" % (code, message)

    def count_resubmit(self, why, n=1):
        with self.mu:
            self.resubmits[why] += n

    def snapshot(self):
        with self.mu:
            return {k: dict(v) for k, v in self.jobs.items()}


class LedgerClient(Client):
    """hlox.client.Client that writes every RESULT and ERROR to the ledger first."""

    def __init__(self, address, ledger, identity):
        super().__init__(address, identity=identity)
        self.ledger = ledger

    def _handle(self, frames):
        if len(frames) >= 2 and len(frames[0]) == 4 and frames[1]:
            cmd = frames[0][3:4]
            try:
                body = msgpack.unpackb(frames[1], raw=False)
            except Exception:  # noqa: BLE001 (the client drops it too)
                body = None
            if isinstance(body, dict) and cmd == b"R" and isinstance(body.get("record"), bytes):
                self.ledger.result(body.get("id", ""), body["record"])
            elif isinstance(body, dict) and cmd == b"E":
                self.ledger.error(body.get("id", ""), body.get("code", ""), body.get("message", ""))
        super()._handle(frames)

    def resend(self, body, text):
        """SUBMIT again with the same id (and the module text: the broker may be a new one)."""
        self._texts[body["module_hash"]] = text
        self._send_submit(body, with_module=True)


# Paired jobs with the shortest timing protocol the protocol allows to be useful: a few rounds.
FAST_PAIRED = {"warmups": 0, "min_rounds": 1, "max_rounds": 3, "time_cap_ms": 60,
               "min_sample_us": 200, "instances": 1}


# A job's run timeout (its lease is this plus the broker's grace): jobs take about a second, so
# a lease that a worker dropped without the broker noticing ends as TIMEOUT within the drain
# instead of after the broker's default 120 s. TIMEOUT is a final result; the table shows it.
RUN_TIMEOUT_S = 30.0


class Agent(threading.Thread):
    """Submits jobs (unique ids) keeping `inflight` unfinished, resubmits a job unanswered for
    `resubmit_after` s, and on request resubmits a few pending and finished jobs by id."""

    def __init__(self, index, address, ledger, modules, seed, inflight=4, resubmit_after=10.0):
        super().__init__(name="agent%d" % index, daemon=True)
        self.index, self.address, self.ledger, self.modules = index, address, ledger, modules
        self.rng = random.Random(seed * 1000 + index)
        self.inflight, self.resubmit_after = inflight, resubmit_after
        self.submitting = True
        self.quit = False
        self.resubmit_requests = 0
        self.mu = threading.Lock()
        self.finished = []           # ids answered (for scheduled resubmits)
        self.last_sent = {}          # pending id -> monotonic time of its last SUBMIT
        self.error = None
        self.serial = 0

    def request_resubmit(self):
        with self.mu:
            self.resubmit_requests += 1

    def pending(self):
        with self.mu:
            return len(self.last_sent)

    def run(self):
        try:
            self._run()
        except Exception as e:  # noqa: BLE001 (reported by the soak as a harness failure)
            self.error = "%s: %s" % (type(e).__name__, e)

    def _new_job(self, client):
        name, text = self.modules[self.rng.randrange(len(self.modules))]
        self.serial += 1
        job_id = "chaos-a%d-%06d" % (self.index, self.serial)
        roll = self.rng.random()
        # Half cheap kinds, half evaluations; cached evaluations and sites repeat a few
        # (module, pipeline) pairs so the result cache and coalescing are exercised too.
        if roll < 0.25:
            kw = dict(kind="evaluate", cache=False)
        elif roll < 0.45:
            kw = dict(kind="evaluate", cache=True)
        elif roll < 0.75:
            kw = dict(kind="sites", cache=self.rng.random() < 0.5)
        else:
            kw = dict(kind="paired", cache=False, paired=dict(FAST_PAIRED, seed=self.serial))
        pipeline = self.rng.choice(("default", "only:fusion", "only:simplify"))
        client.submit(text, pipeline, {}, campaign="chaos-%s" % name, job_id=job_id,
                      run_timeout=RUN_TIMEOUT_S, **kw)
        body = client._pending[job_id]
        self.ledger.submitted(body, text)
        with self.mu:
            self.last_sent[job_id] = time.monotonic()

    def _run(self):
        client = LedgerClient(self.address, self.ledger, "chaos-agent-%d" % self.index)
        try:
            while not self.quit:
                while self.submitting and len(client._pending) < self.inflight:
                    self._new_job(client)
                r = client.next(0.1)
                while r is not None:
                    with self.mu:
                        self.last_sent.pop(r["job_id"], None)
                        self.finished.append(r["job_id"])
                    r = client.next(0)
                self._resubmit_due(client)
                if not self.submitting and not client._pending:
                    with self.mu:
                        if not self.last_sent:
                            break
        finally:
            client.close()

    def _resubmit_due(self, client):
        now = time.monotonic()
        with self.mu:
            due = [j for j, t in self.last_sent.items() if now - t > self.resubmit_after]
            asked, self.resubmit_requests = self.resubmit_requests, 0
        jobs = self.ledger.snapshot() if (due or asked) else {}
        for job_id in due:
            if job_id in client._pending:
                client.resend(client._pending[job_id], jobs[job_id]["text"])
                self.ledger.count_resubmit("timeout")
            with self.mu:
                self.last_sent[job_id] = now
        for _ in range(asked):
            pending = sorted(client._pending)
            for job_id in self.rng.sample(pending, min(2, len(pending))):
                client.resend(client._pending[job_id], jobs[job_id]["text"])
                self.ledger.count_resubmit("scheduled_pending")
            with self.mu:
                done = list(self.finished)
            for job_id in self.rng.sample(done, min(2, len(done))):
                client.resend(jobs[job_id]["body"], jobs[job_id]["text"])
                self.ledger.count_resubmit("scheduled_finished")
