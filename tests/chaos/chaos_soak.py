#!/usr/bin/python3
"""Chaos soak of the hlox service with a ledger (issue 31 item 3).

A broker on a SQLite store, local workers, workers in network namespaces (when permitted) and
agent threads submitting a mix of cheap jobs, while a seeded random schedule injects faults:
kill -9 of a worker (restarted) or of the broker (restarted on the same store and address),
SIGSTOP/SIGCONT of a worker or of the broker, a cut and restored link of a namespaced worker,
a worker restarted under another build id (HLOX_BUILD_ID=chaos-other), and agents resubmitting
jobs by id (pending and finished ones). Then the faults stop, everything drains, the workers
stop, the broker is killed and restarted once more on the store, and a fresh client resubmits
every accepted job id: each must come back from the store, identical to what its agent got.

Figures (a table and one JSON line starting "CHAOS_RESULT "): faults by kind, jobs accepted,
jobs with exactly one final result, lost, duplicated final results, stored results that survive
the restart. Exit status 1 on any violation (lost, duplicated, refused, not stored, different
when read back, fewer faults or kinds than asked), 2 when the fleet could not run.

    tests/chaos/chaos_soak.py --hlox build/bin/hlox --faults 200            # the CI run
    tests/chaos/chaos_soak.py --hlox build/bin/hlox --minutes 30 --faults 2000   # the long soak
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time

import msgpack

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def _python_path():
    """build/python (HLOX_PYTHONPATH) when it holds the client, else the source tree's python/."""
    for p in (os.environ.get("HLOX_PYTHONPATH", ""), os.path.join(SOURCE, "python")):
        if p and os.path.exists(os.path.join(p, "hlox", "client.py")):
            return p
    raise SystemExit("hlox Python client not found (set HLOX_PYTHONPATH)")


sys.path.insert(0, _python_path())
sys.path.insert(0, HERE)

import chaos_fleet  # noqa: E402
from chaos_ledger import Agent, Ledger, LedgerClient  # noqa: E402

# name -> relative weight in the schedule. link_cut needs network namespaces.
FAULT_WEIGHTS = {"worker_kill": 3, "broker_kill": 1, "worker_stop": 2, "broker_stop": 1,
                 "link_cut": 2, "worker_build_restart": 1, "resubmit": 2}
OTHER_BUILD = "chaos-other"


def make_schedule(seed):
    """The seeded fault schedule, without end: (gap_s, kind, target, hold_s) entries. target and
    hold are raw draws the runner maps onto the fleet (target modulo the candidates; hold: how
    long a stop or cut lasts). The same seed gives the same sequence whatever the machine."""
    rng = random.Random(seed)
    kinds = sorted(FAULT_WEIGHTS)
    weights = [FAULT_WEIGHTS[k] for k in kinds]
    while True:
        gap = rng.uniform(0.2, 0.6)
        kind = rng.choices(kinds, weights)[0]
        hold = rng.uniform(0.2, 1.4)
        yield gap, kind, rng.randrange(1 << 30), hold


class Chaos:
    """Applies the schedule to a fleet; stops and cuts end after their hold, overlapping later
    faults (a worker may be killed while the broker is stopped)."""

    def __init__(self, fleet, agents, hosts):
        self.fleet, self.agents, self.hosts = fleet, agents, hosts
        self.restores = []         # (monotonic time, fn)
        self.injected, self.skipped = {}, {}
        self.cut = set()

    def restore_due(self, now, everything=False):
        keep = []
        for t, fn in self.restores:
            if everything or t <= now:
                fn()
            else:
                keep.append((t, fn))
        self.restores = keep

    def _count(self, kind):
        self.injected[kind] = self.injected.get(kind, 0) + 1

    def _cont(self, proc, popen):
        def fn():
            if proc.popen is popen:
                proc.signal(signal.SIGCONT)
                proc.stopped = False
        return fn

    def _link_up(self, i):
        def fn():
            self.hosts.set_link(i, True)
            self.cut.discard(i)
        return fn

    def inject(self, kind, target, hold):
        now = time.monotonic()
        workers = self.fleet.workers
        if kind in ("worker_kill", "worker_build_restart"):
            w = workers[target % len(workers)]
            if kind == "worker_kill":
                w.kill9()
                w.start()
            else:
                w.terminate(grace=3.0)
                w.start(env={"HLOX_BUILD_ID": OTHER_BUILD} if w.starts % 2 == 1 else {})
        elif kind == "broker_kill":
            self.fleet.restart_broker()
        elif kind in ("worker_stop", "broker_stop"):
            p = self.fleet.broker if kind == "broker_stop" else workers[target % len(workers)]
            if p.stopped or not p.alive():
                self.skipped[kind + " (already stopped)"] = self.skipped.get(kind + " (already stopped)", 0) + 1
                return
            p.signal(signal.SIGSTOP)
            p.stopped = True
            self.restores.append((now + hold, self._cont(p, p.popen)))
        elif kind == "link_cut":
            if self.hosts is None:
                self.skipped["link_cut (no network namespaces)"] = \
                    self.skipped.get("link_cut (no network namespaces)", 0) + 1
                return
            i = target % len(self.fleet.remote)
            if i in self.cut:
                self.skipped["link_cut (already cut)"] = self.skipped.get("link_cut (already cut)", 0) + 1
                return
            self.hosts.set_link(i, False)
            self.cut.add(i)
            self.restores.append((now + hold * 1.5, self._link_up(i)))
        elif kind == "resubmit":
            self.agents[target % len(self.agents)].request_resubmit()
        self._count(kind)


def run_schedule(chaos, schedule, minutes, min_faults):
    """Runs the schedule until at least `min_faults` faults were injected (skipped entries do
    not count) and `minutes` have passed; returns the number of schedule entries used."""
    start = time.monotonic()
    used = 0
    for gap, kind, target, hold in schedule:
        used += 1
        until = time.monotonic() + gap
        while True:
            now = time.monotonic()
            chaos.restore_due(now)
            if now >= until:
                break
            time.sleep(min(0.05, until - now))
        chaos.inject(kind, target, hold)
        if sum(chaos.injected.values()) >= min_faults and time.monotonic() - start >= minutes * 60:
            break
    chaos.restore_due(0, everything=True)
    return used


def heal(fleet):
    """Every process running and continued (after the schedule)."""
    for p in [fleet.broker] + fleet.workers:
        if not p.alive():
            p.start()
        p.signal(signal.SIGCONT)
        p.stopped = False


def drain(agents, timeout):
    """Stops new submissions and waits for every agent's jobs to finish; True when all did."""
    for a in agents:
        a.submitting = False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(a.is_alive() for a in agents):
        time.sleep(0.2)
    for a in agents:
        a.quit = True
    for a in agents:
        a.join(5)
    return all(a.pending() == 0 for a in agents)


def show_unfinished(address, ledger):
    """After a failed drain: the jobs without a final result and the broker's view (queues,
    workers), so a lost job can be traced in the logs (kept with the work folder)."""
    jobs = ledger.snapshot()
    for job_id in sorted(j for j in jobs if jobs[j]["digest"] is None)[:10]:
        b = jobs[job_id]["body"]
        print("unfinished %s: kind %s pipeline %s cache %s, submitted %.1f s ago"
              % (job_id, b.get("kind", "evaluate"), b["pipeline"], b["cache"],
                 time.monotonic() - jobs[job_id]["t0"]))
    c = LedgerClient(address, ledger, "chaos-status")
    try:
        s = c.status(timeout=5)
        print("broker queues: %s" % json.dumps(s.get("queues")))
        for w in s.get("workers", []):
            print("broker worker %s: state %s in_flight %s credit %s" % (
                w.get("id"), w.get("state"), w.get("in_flight"), w.get("credit")))
    except (RuntimeError, TimeoutError) as e:
        print("broker status: %s" % e)
    finally:
        c.close()


def read_back(address, ledger, timeout):
    """Resubmits every accepted job id to the (restarted) broker with no worker running; returns
    {id: (record digest, attempts)} of the answers (only the store can answer). A module's text
    goes with its first SUBMIT (and again for an id the broker answers UNKNOWN_MODULE)."""
    answers = {}
    jobs = ledger.snapshot()

    class Reader(LedgerClient):
        def _handle(self, frames):
            if len(frames) < 2 or len(frames[0]) != 4 or not frames[1]:
                return
            body = msgpack.unpackb(frames[1], raw=False)
            if frames[0][3:4] == b"R":
                answers[body["id"]] = (hashlib.sha256(body["record"]).hexdigest(), body.get("attempts"))
            elif frames[0][3:4] == b"E" and body.get("code") == "UNKNOWN_MODULE" and body.get("id") in jobs:
                self.resend(jobs[body["id"]]["body"], jobs[body["id"]]["text"])

    ids = sorted(j for j in jobs if j not in ledger.refused)
    c = Reader(address, ledger, "chaos-reader")
    try:
        sent = set()
        for job_id in ids:
            body = jobs[job_id]["body"]
            c._texts[body["module_hash"]] = jobs[job_id]["text"]
            c._send_submit(body, with_module=body["module_hash"] not in sent)
            sent.add(body["module_hash"])
        deadline = time.monotonic() + timeout + len(ids) / 100.0
        while len(answers) < len(ids) and time.monotonic() < deadline:
            c.next(0.2)
    finally:
        c.close()
    return answers


def figures(chaos, ledger, answers, drained, schedule_len):
    jobs = ledger.snapshot()
    accepted = [j for j in jobs if j not in ledger.refused]
    answered = [j for j in accepted if jobs[j]["digest"] is not None]
    exactly_one = [j for j in answered if j not in ledger.duplicates]
    lost = [j for j in accepted if jobs[j]["digest"] is None]
    stored = [j for j in answered if j in answers and answers[j][0] == jobs[j]["digest"]]
    differing = [j for j in answered if j in answers and answers[j][0] != jobs[j]["digest"]]
    missing = [j for j in answered if j not in answers]
    by_status, by_kind = {}, {}
    for j in answered:
        by_status[jobs[j]["status"]] = by_status.get(jobs[j]["status"], 0) + 1
    for j in accepted:
        by_kind[jobs[j]["kind"]] = by_kind.get(jobs[j]["kind"], 0) + 1
    seconds = sorted(jobs[j]["seconds"] for j in answered)
    return {
        "seconds_to_final_result": {"median": round(seconds[len(seconds) // 2], 2) if seconds else None,
                                    "max": round(seconds[-1], 2) if seconds else None},
        "faults_injected": sum(chaos.injected.values()),
        "faults_by_kind": dict(sorted(chaos.injected.items())),
        "faults_skipped": dict(sorted(chaos.skipped.items())),
        "schedule_entries": schedule_len,
        "jobs_submitted": len(jobs),
        "jobs_accepted": len(accepted),
        "jobs_refused": len(ledger.refused),
        "jobs_by_kind": dict(sorted(by_kind.items())),
        "results_by_status": dict(sorted(by_status.items())),
        "jobs_exactly_one_final_result": len(exactly_one),
        "lost": len(lost),
        "duplicated_final_results": len(ledger.duplicates),
        "redeliveries_identical": ledger.redeliveries,
        "resubmits": dict(ledger.resubmits),
        "stored_after_restart": len(stored),
        "stored_missing_after_restart": len(missing),
        "stored_different_after_restart": len(differing),
        "drained": drained,
        "examples": {"lost": lost[:5],
                     "slowest": sorted(((round(jobs[j]["seconds"], 1), j) for j in answered),
                                       reverse=True)[:3],
                     "not_ok": [(j, jobs[j]["status"], jobs[j].get("message", ""))
                                for j in answered if jobs[j]["status"] not in ("OK", "POISON")][:5], "duplicated": sorted(ledger.duplicates)[:5],
                     "refused": sorted(ledger.refused.items())[:5], "missing": missing[:5],
                     "different": differing[:5]},
    }


def violations(f, min_faults, min_kinds):
    v = []
    if f["jobs_accepted"] == 0:
        v.append("no job was accepted")
    for key in ("lost", "duplicated_final_results", "jobs_refused", "stored_missing_after_restart",
                "stored_different_after_restart"):
        if f[key]:
            v.append("%s = %d (must be 0)" % (key, f[key]))
    if f["stored_after_restart"] != f["jobs_accepted"]:
        v.append("stored_after_restart %d != jobs_accepted %d" % (f["stored_after_restart"], f["jobs_accepted"]))
    if f["faults_injected"] < min_faults:
        v.append("only %d faults injected (%d asked)" % (f["faults_injected"], min_faults))
    if len(f["faults_by_kind"]) < min_kinds:
        v.append("only %d fault kinds injected (%d asked)" % (len(f["faults_by_kind"]), min_kinds))
    return v


def print_table(f):
    rows = [("faults injected", f["faults_injected"])]
    rows += [("  " + k, n) for k, n in f["faults_by_kind"].items()]
    rows += [("  skipped: " + k, n) for k, n in f["faults_skipped"].items()]
    rows += [("jobs accepted", f["jobs_accepted"])]
    rows += [("  " + k, n) for k, n in f["jobs_by_kind"].items()]
    rows += [("jobs refused", f["jobs_refused"]),
             ("jobs with exactly one final result", f["jobs_exactly_one_final_result"])]
    rows += [("  " + k, n) for k, n in f["results_by_status"].items()]
    rows += [("seconds to final result: median / max", "%s / %s" % (
        f["seconds_to_final_result"]["median"], f["seconds_to_final_result"]["max"]))]
    rows += [("lost (must be 0)", f["lost"]),
             ("duplicated final results (must be 0)", f["duplicated_final_results"]),
             ("identical redeliveries", f["redeliveries_identical"])]
    rows += [("resubmits: " + k, n) for k, n in f["resubmits"].items()]
    rows += [("stored results surviving the final restart", f["stored_after_restart"]),
             ("  missing / different", "%d / %d" % (f["stored_missing_after_restart"],
                                                    f["stored_different_after_restart"]))]
    width = max(len(r[0]) for r in rows)
    print("-" * (width + 12))
    for name, value in rows:
        print("%-*s  %8s" % (width, name, value))
    print("-" * (width + 12))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hlox", default=os.environ.get("HLOX_BIN", os.path.join(SOURCE, "build/bin/hlox")))
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--faults", type=int, default=200, help="fewest faults to inject")
    ap.add_argument("--minutes", type=float, default=0, help="keep injecting for this long")
    ap.add_argument("--min-kinds", type=int, default=5, help="fewest fault kinds that must occur")
    ap.add_argument("--local-workers", type=int, default=2)
    ap.add_argument("--remote-workers", type=int, default=2, help="in network namespaces")
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--no-netns", action="store_true", help="loopback only (link cuts skipped)")
    ap.add_argument("--drain-s", type=float, default=120)
    ap.add_argument("--keep", action="store_true", help="keep the work folder (logs, store)")
    args = ap.parse_args()
    # SIGTERM (a CTest timeout, Ctrl-C's cousin) runs the cleanup below like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    if not os.access(args.hlox, os.X_OK):
        print("hlox binary not found at %s (--hlox or HLOX_BIN)" % args.hlox)
        return 2

    modules = []
    for name in ("mlp_train_small", "gpt2_block_small", "basic_block_train_small"):
        with open(os.path.join(SOURCE, "examples", name + ".hlo")) as fh:
            modules.append((name, fh.read()))
    work = tempfile.mkdtemp(prefix="hlox-chaos-")
    hosts = None
    if not args.no_netns and args.remote_workers > 0:
        hosts = chaos_fleet.Hosts("hc%d" % os.getpid(), args.remote_workers)
        try:
            hosts.setup()
        except chaos_fleet.NetnsUnavailable as e:
            print("network namespaces not permitted (%s): loopback only, link cuts skipped" % e)
            hosts = None
    if hosts:
        address = "tcp://%s:5555" % chaos_fleet.BROKER_IP
        local = args.local_workers
    else:
        address = "tcp://127.0.0.1:%d" % chaos_fleet.free_tcp_port()
        local = args.local_workers + args.remote_workers
    fleet = chaos_fleet.Fleet(args.hlox, work, address, local, hosts)
    print("chaos soak: seed %d, at least %d faults over %.1f min, %d workers (%d in namespaces), %d agents, %s"
          % (args.seed, args.faults, args.minutes, len(fleet.workers), len(fleet.remote), args.agents, address),
          flush=True)
    ledger = Ledger()
    agents = [Agent(i + 1, address, ledger, modules, args.seed) for i in range(args.agents)]
    chaos = Chaos(fleet, agents, hosts)
    rc = 0
    t0 = time.monotonic()
    try:
        fleet.start()
        for a in agents:
            a.start()
        used = run_schedule(chaos, make_schedule(args.seed), args.minutes, args.faults)
        t_faults = time.monotonic() - t0
        heal(fleet)
        drained = drain(agents, args.drain_s)
        if not drained:
            show_unfinished(address, ledger)
        for w in fleet.workers:
            w.terminate()
        fleet.restart_broker()
        answers = read_back(address, ledger, 60)
        f = figures(chaos, ledger, answers, drained, used)
        f.update(seed=args.seed, seconds_faults=round(t_faults, 1),
                 seconds_total=round(time.monotonic() - t0, 1),
                 workers=len(fleet.workers), workers_in_namespaces=len(fleet.remote),
                 agents=args.agents, netns=hosts is not None)
        errors = [a.name + ": " + a.error for a in agents if a.error]
        v = violations(f, args.faults, args.min_kinds) + errors
        if not drained:
            v.append("agents did not drain within %.0f s" % args.drain_s)
        f["violations"] = v
        print_table(f)
        print("CHAOS_RESULT " + json.dumps(f, sort_keys=True), flush=True)
        if v:
            print("FAIL: " + "; ".join(v))
            for p in [fleet.broker] + fleet.workers:
                print("---- last lines of %s\n%s" % (p.name, p.tail()))
            rc = 1
        else:
            print("PASS: %d faults, %d jobs accepted, 0 lost, 0 duplicated, all stored"
                  % (f["faults_injected"], f["jobs_accepted"]))
    finally:
        for a in agents:
            a.quit = True
        chaos.restore_due(0, everything=True)
        fleet.stop_all()
        if hosts:
            hosts.cleanup()
        if args.keep or rc:
            print("work folder kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
