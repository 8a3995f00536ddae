"""The broker's /metrics as Prometheus reads it, checked with Prometheus' own promtool: a real
broker (--metrics on a free loopback port, a SQLite store) and a worker run jobs; every scrape
passes `promtool check metrics` with no output at all (promtool prints its lint findings, so
any line is a failure); counters and histogram series never go down between scrapes with jobs in
between; after a broker restart on the same store the finished-job counts by status continue
where they were. Also checks deploy/monitoring: `promtool check config` on the scrape config,
`promtool check rules` on the alert rules, `promtool test rules` on their unit tests
(alert_rules_test.yml), and every Grafana query parses as PromQL.

Without promtool (Debian's `prometheus` package; scripts/setup.sh installs it) the test is
skipped (exit 77), except under CI=true, where that fails."""

import glob
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HLOX = os.environ.get("HLOX_BIN", "build/bin/hlox")
ROOT = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MON = os.path.join(ROOT, "deploy", "monitoring")
HERE = os.path.dirname(os.path.abspath(__file__))
CI = os.environ.get("CI") == "true"
results = {"passed": 0, "failed": 0}


def check(cond, what, detail=""):
    results["passed" if cond else "failed"] += 1
    print(("[ OK ] " if cond else "[FAIL] ") + what)
    if not cond and detail:
        print("       " + detail.replace("\n", "\n       "))


def free_port(span=1):
    """A loopback port P with P..P+span-1 free, below the kernel's ephemeral range (see
    dashboard_test.py); span 2 for a broker, whose control channel takes the next port."""
    for _ in range(200):
        port = random.randrange(20000, 32700)
        socks = [socket.socket() for _ in range(span)]
        try:
            for i, s in enumerate(socks):
                s.bind(("127.0.0.1", port + i))
            return port
        except OSError:
            pass
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port")


def promtool(*args, stdin=None):
    r = subprocess.run(["promtool", *args], input=stdin, capture_output=True, text=True, timeout=60)
    return r.returncode, (r.stdout + r.stderr).strip()


def scrape(port):
    deadline = time.time() + 10
    while True:
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        except (urllib.error.URLError, ConnectionError):
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def parse(text):
    """(types: family -> type, samples: series -> float)."""
    types, samples = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
        elif line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            samples[series] = float(value)
    return types, samples


def monotonic_series(types, samples):
    """The series that must never go down: counters and every histogram line."""
    out = {}
    for series, v in samples.items():
        name = series.split("{", 1)[0]
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        if types.get(name) == "counter" or types.get(family) == "histogram":
            out[series] = v
    return out


def lint(text, what):
    rc, out = promtool("check", "metrics", stdin=text)
    check(rc == 0 and out == "", f"promtool check metrics: no problems ({what})", out)


def run_jobs(addr, budget):
    example = os.path.join(ROOT, "examples", "mlp_train_small.hlo")
    r = subprocess.run([HLOX, "search", example, "--algo", "random", "--budget", str(budget), "--broker", addr,
                        "--no-verdict", "--json"], capture_output=True, text=True, timeout=240)
    ok = r.returncode == 0 and json.loads(r.stdout).get("evaluations") == budget
    check(ok, f"a search of {budget} evaluations ran through the broker", r.stderr[-2000:])


def start_broker(addr, metrics, db):
    return subprocess.Popen([HLOX, "broker", "--bind", addr, "--db", db, "--metrics", f"127.0.0.1:{metrics}"],
                            stderr=subprocess.DEVNULL)


def check_live_broker(tmp):
    jobs, metrics = free_port(2), free_port()
    while metrics in (jobs, jobs + 1):
        metrics = free_port()
    addr = f"tcp://127.0.0.1:{jobs}"
    db = os.path.join(tmp, "broker.db")
    procs = [start_broker(addr, metrics, db)]
    try:
        idle = scrape(metrics)
        lint(idle, "idle broker, no workers")
        procs.append(subprocess.Popen([HLOX, "worker", "--broker", addr, "--id", "promtool-w1", "--threads", "1"],
                                      stderr=subprocess.DEVNULL))
        run_jobs(addr, 3)
        first = scrape(metrics)
        lint(first, "after jobs")
        types, samples = parse(first)
        check(types.get("hlox_job_latency_seconds") == "histogram" and
              samples.get('hlox_job_latency_seconds_count', 0) >= 3, "latency histogram counts the jobs")
        check(any(s.startswith("hlox_job_run_seconds_count{class=") and v >= 3 for s, v in samples.items()),
              "per-class run-time histogram counts the jobs")
        check(any(s.startswith("hlox_build_info{") for s in samples), "hlox_build_info is present")
        check(types == parse(idle)[0], "the idle and the busy broker expose the same families with the same types")
        run_jobs(addr, 3)
        second = scrape(metrics)
        lint(second, "after more jobs")
        before, after = monotonic_series(*parse(first)), monotonic_series(*parse(second))
        down = [f"{s}: {v} -> {after.get(s)}" for s, v in before.items() if s not in after or after[s] < v]
        check(not down and before, f"no counter or histogram series went down ({len(before)} compared)",
              "\n".join(down[:20]))
        grew = after.get("hlox_job_latency_seconds_count", 0) > before.get("hlox_job_latency_seconds_count", 0)
        check(grew, "the latency histogram's count grew with the second batch")
        by_status = {s: v for s, v in parse(second)[1].items() if s.startswith("hlox_jobs_total{")}
        # Restart on the same store: finished-job counts continue from the stored results.
        procs[0].terminate()
        procs[0].wait(timeout=30)
        procs[0] = start_broker(addr, metrics, db)
        restarted = scrape(metrics)
        lint(restarted, "restarted broker on the same store")
        again = {s: v for s, v in parse(restarted)[1].items() if s.startswith("hlox_jobs_total{")}
        check(by_status and again == by_status, "hlox_jobs_total{status} continues across a broker restart",
              f"before {by_status}, after {again}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def write_rule_tests(src, rule_files, dst):
    """Copies the rule tests, adding each expected alert's description from the rule files
    (promtool compares annotations whole; the tests spell out only the summaries)."""
    import yaml
    descriptions = {}
    for path in rule_files:
        with open(path) as f:
            for group in yaml.safe_load(f)["groups"]:
                for rule in group["rules"]:
                    if "alert" in rule:
                        descriptions[rule["alert"]] = rule.get("annotations", {}).get("description")
    with open(src) as f:
        tests = yaml.safe_load(f)
    for test in tests["tests"]:
        for case in test.get("alert_rule_test", []):
            for alert in case.get("exp_alerts") or []:
                text = descriptions.get(case["alertname"])
                if text is not None:
                    text = text.replace("{{ $labels.instance }}", alert["exp_labels"].get("instance", ""))
                    alert.setdefault("exp_annotations", {})["description"] = text
    with open(dst, "w") as f:
        yaml.safe_dump(tests, f, sort_keys=False)


def check_deploy_files(tmp):
    # The scrape config names its bearer token file relative to itself (the broker's
    # --metrics-token-file, mounted next to it): check a copy beside a stand-in token.
    conf_dir = os.path.join(tmp, "conf")
    os.makedirs(conf_dir, exist_ok=True)
    for f in glob.glob(os.path.join(MON, "*.yml")):
        shutil.copy(f, conf_dir)
    with open(os.path.join(conf_dir, "metrics.token"), "w") as f:
        f.write("stand-in-token\n")
    rc, out = promtool("check", "config", os.path.join(conf_dir, "prometheus.yml"))
    check(rc == 0, "promtool check config deploy/monitoring/prometheus.yml", out)
    rules = sorted(glob.glob(os.path.join(MON, "*rules*.yml")))
    rc, out = promtool("check", "rules", *rules)
    check(rules and rc == 0, f"promtool check rules {' '.join(os.path.basename(r) for r in rules)}", out)
    # The rule unit tests name their rule files relative to themselves: run them from a copy.
    for r in rules:
        shutil.copy(r, tmp)
    write_rule_tests(os.path.join(HERE, "alert_rules_test.yml"), rules, os.path.join(tmp, "alert_rules_test.yml"))
    rc, out = promtool("test", "rules", os.path.join(tmp, "alert_rules_test.yml"))
    check(rc == 0, "promtool test rules alert_rules_test.yml (each alert fires when it should, and only then)", out)
    # Grafana queries: Grafana's own variables replaced, each must parse as a recording rule.
    with open(os.path.join(MON, "grafana-dashboard.json")) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    lines = ["groups:", "  - name: grafana", "    rules:"]
    for i, e in enumerate(exprs):
        e = e.replace("$__rate_interval", "5m").replace("$job", ".*")
        lines += [f"      - record: grafana:query{i}", f"        expr: {json.dumps(e)}"]
    path = os.path.join(tmp, "grafana_queries.yml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out = promtool("check", "rules", path)
    check(exprs and rc == 0, f"the dashboard's {len(exprs)} queries parse as PromQL", out)


def main():
    if not shutil.which("promtool"):
        why = "promtool not found: install Debian's prometheus package (scripts/setup.sh does)"
        print(f"FAILED (CI=true): {why}" if CI else f"SKIPPED: {why}")
        return 1 if CI else 77
    tmp = tempfile.mkdtemp()
    try:
        check_deploy_files(tmp)
        check_live_broker(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
