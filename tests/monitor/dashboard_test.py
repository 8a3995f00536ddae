"""The fleet's HTTP face, with real processes: a broker with --metrics and two workers; the
Prometheus endpoint reports both workers, and Debian's Chromium (headless) loads the dashboard,
runs its JavaScript and shows both workers in the fleet table. A screenshot is written next to
the test's temporary files (HLOX_SCREENSHOT overrides where)."""

import json
import os
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
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read().decode()
        check('hlox_workers{state="idle"} 2' in text, "/metrics counts two idle workers")
        check("hlox_queue_pending 0" in text and "hlox_job_latency_seconds" in text, "/metrics has queue and latency")
        shot = os.environ.get("HLOX_SCREENSHOT", os.path.join(tmp, "dashboard.png"))
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", f"--user-data-dir={tmp}/profile", "--virtual-time-budget=5000"]
        url = f"http://127.0.0.1:{metrics}/"
        dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
        check('data-id="dash-w1"' in dom and 'data-id="dash-w2"' in dom, "dashboard (in Chromium) lists both workers")
        check("throughput:" in dom and "pending:" in dom, "dashboard rendered its live summary")
        subprocess.run([chromium, *flags, "--window-size=1000,600", f"--screenshot={shot}", url],
                       capture_output=True, timeout=120)
        check(os.path.exists(shot) and os.path.getsize(shot) > 1000, f"screenshot written ({shot})")
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
