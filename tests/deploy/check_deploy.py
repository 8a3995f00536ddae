"""Validates deploy/: every YAML parses; Kubernetes objects have the fields they need (selectors
matching template labels, images, resource requests, Services selecting the broker); systemd
units have their sections; the Dockerfile builds from Debian 12 with the setup script; and every
hlox flag these files pass exists in the binary's own --help."""

import configparser
import glob
import os
import re
import subprocess
import sys

import yaml

ROOT = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
HLOX = os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox"))
DEPLOY = os.path.join(ROOT, "deploy")
failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print(f"[FAIL] {what}")


def flags_of(sub):
    out = subprocess.run([HLOX, sub, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


FLAGS = {"broker": flags_of("broker"), "worker": flags_of("worker")}
check(FLAGS["broker"] and FLAGS["worker"], "hlox broker/worker --help list their flags")


def check_args(args, where):
    if not args:
        return
    sub = args[0]
    if sub not in FLAGS:
        check(False, f"{where}: unknown subcommand {sub}")
        return
    for a in args[1:]:
        if a.startswith("--"):
            check(a in FLAGS[sub], f"{where}: hlox {sub} has no flag {a}")


# Kubernetes manifests.
docs = []
for path in sorted(glob.glob(os.path.join(DEPLOY, "k8s", "*.yaml"))):
    with open(path) as f:
        docs += [(path, d) for d in yaml.safe_load_all(f) if d]
kinds = {d["kind"] for _, d in docs}
check({"Deployment", "Service", "Secret"} <= kinds, f"k8s has Deployments, a Service and a Secret ({kinds})")
for path, d in docs:
    where = f"{os.path.basename(path)}:{d.get('kind')}/{d.get('metadata', {}).get('name')}"
    check("apiVersion" in d and "kind" in d and d.get("metadata", {}).get("name"), f"{where}: apiVersion/kind/name")
    if d["kind"] == "Deployment":
        sel = d["spec"]["selector"]["matchLabels"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        check(all(labels.get(k) == v for k, v in sel.items()), f"{where}: selector matches template labels")
        for c in d["spec"]["template"]["spec"]["containers"]:
            check(c.get("image"), f"{where}: container image")
            check(c.get("resources", {}).get("requests"), f"{where}: resource requests")
            check_args(c.get("args", []), where)
        for v in d["spec"]["template"]["spec"].get("volumes", []):
            if "secret" in v:
                check(any(x["kind"] == "Secret" and x["metadata"]["name"] == v["secret"]["secretName"] for _, x in docs),
                      f"{where}: secret {v['secret']['secretName']} defined")
    if d["kind"] == "Service":
        sel = d["spec"]["selector"]
        check(any(x["kind"] == "Deployment" and all(x["spec"]["template"]["metadata"]["labels"].get(k) == v
                                                     for k, v in sel.items()) for _, x in docs),
              f"{where}: selects a Deployment")

# Compose.
with open(os.path.join(DEPLOY, "compose.yaml")) as f:
    compose = yaml.safe_load(f)
check({"broker", "worker"} <= set(compose["services"]), "compose has broker and worker services")
for name, svc in compose["services"].items():
    check_args(svc.get("command", []), f"compose:{name}")

# Monitoring (promtool checks the same files in tests/monitor/promtool_check.sh): the files the
# compose Prometheus mounts exist, the scrape target's port is the one the broker's --metrics
# binds in compose and Kubernetes, and the Grafana dashboard is JSON whose queries read hlox_*.
import json  # noqa: E402
MON = os.path.join(DEPLOY, "monitoring")
for svc in compose["services"].values():
    for vol in svc.get("volumes", []):
        src = vol.split(":")[0]
        if src.startswith("./"):
            check(os.path.exists(os.path.join(DEPLOY, src)), f"compose mounts {src}, which exists")
with open(os.path.join(MON, "prometheus.yml")) as f:
    prom = yaml.safe_load(f)
targets = [t for sc in prom["scrape_configs"] for c in sc.get("static_configs", []) for t in c["targets"]]
metrics_binds = [a[a.index("--metrics") + 1] for a in [compose["services"]["broker"]["command"]] +
                 [c.get("args", []) for _, d in docs if d["kind"] == "Deployment"
                  for c in d["spec"]["template"]["spec"]["containers"]] if "--metrics" in a]
check(len(metrics_binds) == 2, f"compose and the k8s broker pass --metrics ({metrics_binds})")
check(targets and all(t.rsplit(":", 1)[1] == b.rsplit(":", 1)[1] for t in targets for b in metrics_binds),
      f"scrape targets {targets} use the --metrics port {metrics_binds}")
for rules in prom.get("rule_files", []):
    check(os.path.exists(os.path.join(MON, rules)), f"rule file {rules} exists next to prometheus.yml")
with open(os.path.join(MON, "grafana-dashboard.json")) as f:
    dash = json.load(f)
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
check(exprs and all("hlox_" in e for e in exprs), f"dashboard has {len(exprs)} queries over hlox_* metrics")

# systemd units.
for unit in glob.glob(os.path.join(DEPLOY, "systemd", "*.service")):
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    cp.read(unit)
    check({"Unit", "Service", "Install"} <= set(cp.sections()), f"{unit}: sections")
    exec_start = cp["Service"]["ExecStart"].split()
    check(exec_start[0].endswith("/hlox"), f"{unit}: runs hlox")
    check_args(exec_start[1:], os.path.basename(unit))

# Dockerfile.
with open(os.path.join(DEPLOY, "Dockerfile")) as f:
    text = f.read()
check(re.search(r"^FROM debian:12", text, re.M), "Dockerfile FROM debian:12")
check("scripts/setup.sh" in text and os.path.exists(os.path.join(ROOT, "scripts", "setup.sh")),
      "Dockerfile uses the project's setup script")

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
