"""The fleet's HTTP face, with real processes: a broker with --metrics and two workers; the
Prometheus endpoint reports both workers, and Debian's Chromium (headless) loads the dashboard,
runs its JavaScript and shows both workers in the fleet table. A screenshot is written next to
the test's temporary files (HLOX_SCREENSHOT overrides where)."""

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HLOX = os.environ.get("HLOX_BIN", "build/bin/hlox")
CI = os.environ.get("CI") == "true"
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("[ OK ] " if cond else "[FAIL] ") + what)


def free_port():
    # Below the kernel's ephemeral range: a port bind(0) hands out can be taken a moment later
    # as the local port of another test's outgoing connection.
    for _ in range(200):
        port = random.randrange(20000, 32700)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            pass
        finally:
            s.close()
    raise RuntimeError("no free port")


def main():
    chromium = shutil.which("chromium")
    if not chromium:
        print("chromium not installed: install Debian's chromium package (scripts/setup.sh does)")
        return 1 if CI else 0
    jobs, metrics = free_port(), free_port()
    addr = f"tcp://127.0.0.1:{jobs}"
    tmp = tempfile.mkdtemp()
    procs = [subprocess.Popen([HLOX, "broker", "--bind", addr, "--metrics", f"127.0.0.1:{metrics}"],
                              stderr=subprocess.DEVNULL)]
    try:
        for i in (1, 2):
            procs.append(subprocess.Popen([HLOX, "worker", "--broker", addr, "--id", f"dash-w{i}"],
                                          stderr=subprocess.DEVNULL))
        status = {}
        for _ in range(100):
            r = subprocess.run([HLOX, "status", "--broker", addr, "--json"], capture_output=True, text=True)
            if r.returncode == 0:
                status = json.loads(r.stdout)
                if len(status.get("workers", [])) == 2:
                    break
            time.sleep(0.1)
        check(len(status.get("workers", [])) == 2, "both workers registered (hlox status --json)")
        isa = status["workers"][0].get("isa", "") if status.get("workers") else ""
        check(isa in ("generic", "avx2", "avx512") and
              all(w["hardware_class"] == "cpu-" + w.get("isa", "?") for w in status["workers"]),
              f"workers report their ISA level ({isa!r}) and their class ends in it")
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        check('hlox_workers{state="idle"} 2' in text, "/metrics counts two idle workers")
        check(f'hlox_worker_info{{worker="dash-w1",class="cpu-{isa}",isa="{isa}",cpu="' in text,
              "/metrics has each worker's info metric with its ISA level")
        check("hlox_queue_pending 0" in text and "hlox_job_latency_seconds" in text, "/metrics has queue and latency")
        shot = os.environ.get("HLOX_SCREENSHOT", os.path.join(tmp, "dashboard.png"))
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", f"--user-data-dir={tmp}/profile", "--virtual-time-budget=5000"]
        url = f"http://127.0.0.1:{metrics}/"
        dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
        check('data-id="dash-w1"' in dom and 'data-id="dash-w2"' in dom, "dashboard (in Chromium) lists both workers")
        check("throughput:" in dom and "pending:" in dom, "dashboard rendered its live summary")
        check(f'<td class="isa">{isa}</td>' in dom, "dashboard shows each worker's ISA level")
        subprocess.run([chromium, *flags, "--window-size=1000,600", f"--screenshot={shot}", url],
                       capture_output=True, timeout=120)
        check(os.path.exists(shot) and os.path.getsize(shot) > 1000, f"screenshot written ({shot})")
        # Jobs through the fleet: final statuses, latency histogram and cost spread appear.
        example = os.path.join(os.environ.get("HLOX_SOURCE_DIR", "."), "examples", "mlp_train_small.hlo")
        r = subprocess.run([HLOX, "search", example, "--algo", "random", "--budget", "4", "--broker", addr,
                            "--no-verdict", "--json"], capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and json.loads(r.stdout)["evaluations"] == 4, "a search ran through the broker")
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        ok_jobs = [l for l in text.splitlines() if l.startswith('hlox_jobs_total{status="OK"}')]
        check(ok_jobs and float(ok_jobs[0].split()[-1]) >= 4, "/metrics counts jobs by final status")
        check('hlox_job_latency_seconds_bucket{le="+Inf"}' in text, "/metrics has a latency histogram")
        check("hlox_cost_relative_spread" in text, "/metrics reports the spread of measured costs")
        table = subprocess.run([HLOX, "status", "--broker", addr], capture_output=True, text=True).stdout
        check("dash-w1" in table and "dash-w2" in table and "in flight" in table, "hlox status prints the table")
        check(f"cpu-{isa} " in table and "ISA" in table, "hlox status shows each worker's class and ISA level")
        watch = subprocess.run(["timeout", "2.5", HLOX, "status", "--broker", addr, "--watch", "--interval", "0.5"],
                               capture_output=True, text=True)
        check(watch.stdout.count("WORKER") >= 2 and "\x1b[2J" in watch.stdout, "--watch refreshes in place")
        # A worker killed without a goodbye is shown as lost, in status and in /metrics.
        procs[2].kill()
        lost = False
        for _ in range(100):
            st = json.loads(subprocess.run([HLOX, "status", "--broker", addr, "--json"], capture_output=True,
                                           text=True).stdout)
            if any(w["id"] == "dash-w2" and w["state"] == "lost" for w in st["workers"]):
                lost = True
                break
            time.sleep(0.1)
        check(lost, "a killed worker shows state lost")
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        check('hlox_workers{state="lost"} 1' in text, "/metrics counts the lost worker")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
