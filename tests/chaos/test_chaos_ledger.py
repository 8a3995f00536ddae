#!/usr/bin/python3
"""The chaos soak's bookkeeping on made-up histories, without a fleet: a lost job, a duplicated
final result, a refusal, a result missing or different after the restart, and too few faults
must each be reported as a violation, and a clean history as none; the schedule is the same
for the same seed. (The soak itself, tests/chaos/chaos_soak.py, can only show that a real
fleet had no violations; this shows the checks would catch them.)"""
import hashlib
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_soak  # noqa: E402  (puts the hlox client on the path)
from chaos_ledger import Ledger  # noqa: E402

import msgpack  # noqa: E402

FAILURES = []


def check(cond, what):
    print(("[ OK   ] " if cond else "[ FAIL ] ") + what)
    if not cond:
        FAILURES.append(what)


def record(status, median):
    return msgpack.packb({"status": status, "cost": {"median": median}}, use_bin_type=True)


class FakeChaos:
    def __init__(self, injected):
        self.injected, self.skipped = injected, {}


def body(job_id, kind="evaluate"):
    return {"id": job_id, "module_hash": "h", "pipeline": "default", "kind": kind}


def history(bad):
    """A ledger of five jobs, clean or with the fault `bad`; returns (ledger, read-back answers)."""
    led = Ledger()
    for i in range(5):
        led.submitted(body("j%d" % i, "sites" if i == 4 else "evaluate"), "HloModule m")
    recs = {"j%d" % i: record("OK", 0.001 * (i + 1)) for i in range(5)}
    for job_id, rec in recs.items():
        if not (bad == "lost" and job_id == "j1"):
            if not led.result(job_id, rec):
                FAILURES.append("the first result of %s was taken for a duplicate" % job_id)
    led.result("j0", recs["j0"])  # the same bytes again: a redelivery, never a duplicate
    if bad == "duplicate":
        check(not led.result("j2", record("OK", 0.5)), "a different second result is flagged")
    if bad == "refused":
        led.submitted(body("j5"), "HloModule m")
        led.error("j5", "DECODE", "bad decisions")
    led.error("j3", "FULL", "queue full")  # retried by the client: never a refusal
    answers = {j: (hashlib.sha256(r).hexdigest(), 0) for j, r in recs.items()}
    if bad == "missing":
        del answers["j3"]
    if bad == "different":
        answers["j4"] = (hashlib.sha256(record("OK", 9.0)).hexdigest(), 0)
    return led, answers


KINDS = {"worker_kill": 60, "broker_kill": 20, "worker_stop": 40, "broker_stop": 20, "resubmit": 70}


def violations_of(bad, injected=KINDS):
    led, answers = history(bad)
    f = chaos_soak.figures(FakeChaos(dict(injected)), led, answers, True, 0)
    return f, chaos_soak.violations(f, 200, 5)


def main():
    f, v = violations_of(None)
    check(v == [], "a clean history has no violations (%s)" % v)
    check(f["jobs_accepted"] == 5 and f["jobs_exactly_one_final_result"] == 5, "5 accepted, 5 answered once")
    check(f["redeliveries_identical"] == 1 and f["stored_after_restart"] == 5, "1 redelivery, 5 stored")
    for bad, key in (("lost", "lost"), ("duplicate", "duplicated_final_results"),
                     ("refused", "jobs_refused"), ("missing", "stored_missing_after_restart"),
                     ("different", "stored_different_after_restart")):
        f, v = violations_of(bad)
        check(f[key] == 1 and any(key in x for x in v), "%s is reported (%s)" % (bad, v))
    f, v = violations_of(None, {"worker_kill": 150, "resubmit": 60})
    check(any("fault kinds" in x for x in v), "two fault kinds are too few (%s)" % v)
    f, v = violations_of(None, {"worker_kill": 10, "broker_kill": 1, "worker_stop": 1, "broker_stop": 1,
                               "resubmit": 1})
    check(any("faults injected" in x for x in v), "14 faults are too few (%s)" % v)
    a = list(itertools.islice(chaos_soak.make_schedule(31), 300))
    b = list(itertools.islice(chaos_soak.make_schedule(31), 300))
    c = list(itertools.islice(chaos_soak.make_schedule(32), 300))
    check(a == b and a != c, "the schedule depends on the seed alone")
    check(len({k for _, k, _, _ in a}) == len(chaos_soak.FAULT_WEIGHTS), "300 entries draw every fault kind")
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
