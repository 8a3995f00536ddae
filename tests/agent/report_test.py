"""The HTML reports and the campaign CSV, with real runs of the hlox binary.

Default mode: `hlox search --out` and `hlox campaign` (a graph named with a comma, double quotes
and angle brackets) write report.html; each parses with Python's html.parser with every element
closed in order, holds its sections and the summary's figures, escapes the graph name, and loads
nothing from outside (no URLs, scripts, stylesheets or images). results.csv reads back with the
csv module: the odd graph name intact and every number equal to summary.json's.

--chromium: Debian's Chromium (headless) loads both reports from file:// with logging on; no
console message or failed load is logged, the DOM holds the chart, and a screenshot has a
sensible amount of ink. Skipped without chromium, except under CI=true.
"""

import csv
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

HLOX = os.environ.get("HLOX_BIN", "build/bin/hlox")
SOURCE = os.environ.get("HLOX_SOURCE_DIR", ".")
CI = os.environ.get("CI") == "true"
ODD_NAME = 'mlp, "small" <b>'
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source", "track", "embed"}
results = {"passed": 0, "failed": 0}


def check(cond, what):
    results["passed" if cond else "failed"] += 1
    print(("[ OK ] " if cond else "[FAIL] ") + what)


class Page(html.parser.HTMLParser):
    """Collects tags, ids, text and attribute values; records nesting errors."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tags, self.ids, self.text, self.attrs = [], [], [], set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id":
                self.ids.add(v)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    def all_text(self):
        return " ".join(" ".join(self.text).split())


def parse(path):
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    page = Page()
    page.feed(raw)
    page.close()
    return raw, page


def check_self_contained(raw, page, name):
    check(not page.errors and not page.stack, f"{name}: well-formed ({page.errors[:3]}, unclosed {page.stack})")
    check(raw.startswith("<!DOCTYPE html>"), f"{name}: an HTML5 document")
    outside = [a for a in page.attrs if a[1] in ("href", "src", "xlink:href", "action") or "url(" in a[2]]
    check(not outside, f"{name}: no attribute loads anything ({outside[:3]})")
    check(not {"script", "link", "img", "iframe", "object"} & set(page.tags), f"{name}: no scripts, links or images")
    lowered = raw.lower()
    check("http:" not in lowered and "https:" not in lowered and "@import" not in lowered and "url(" not in lowered,
          f"{name}: no URL anywhere in the text")


def fmt3(v):
    return f"{v:.3f}"


def run(args, timeout=240):
    return subprocess.run([HLOX, *args], capture_output=True, text=True, timeout=timeout)


def make_reports(tmp):
    example = os.path.join(SOURCE, "examples", "mlp_train_small.hlo")
    search = os.path.join(tmp, "search")
    r = run(["search", example, "--algo", "evolution", "--budget", "16", "--in-process", "--race", "2",
             "--race-seconds", "0.5", "--out", search])
    check(r.returncode == 0, f"hlox search --out ran ({r.stderr[-300:]})")
    graphs = os.path.join(tmp, "graphs")
    os.makedirs(graphs)
    shutil.copy(example, os.path.join(graphs, ODD_NAME + ".hlo"))
    campaign = os.path.join(tmp, "campaign")
    r = run(["campaign", "--graphs", graphs, "--algos", "random", "--budget", "6", "--seeds", "1", "--in-process",
             "--out", campaign])
    check(r.returncode == 0, f"hlox campaign ran ({r.stderr[-300:]})")
    return search, campaign


def check_search_report(search):
    with open(os.path.join(search, "summary.json")) as f:
        s = json.load(f)
    raw, page = parse(os.path.join(search, "report.html"))
    check_self_contained(raw, page, "search report")
    text = page.all_text()
    check({"verdict", "setup", "progress", "race"} <= page.ids, f"search report: sections {sorted(page.ids)}")
    check(s["module"] in text and s["algo"] in text and s["pipeline"] in text, "search report: module, algorithm, pipeline")
    check(str(s["budget"]) in text and "seed" in text, "search report: budget and seed")
    check(s["host"]["cpu"] in text and f"ISA level {s['host']['isa']}" in text, "search report: host CPU and ISA level")
    check(fmt3(s["best_speedup"]) + "x" in text, f"search report: the verdict's speedup {fmt3(s['best_speedup'])}x")
    lo, hi = s["best_speedup_ci"]
    check(s["verdict"] != "paired" or f"{fmt3(lo)} .. {fmt3(hi)}" in text, "search report: the verdict's interval")
    rule = s.get("verdict_rule") or {}
    check(not rule or (rule["calibration"] in text and "minimum effect (delta)" in text),
          "search report: delta and the calibration's source")
    check(page.tags.count("svg") == 1 and "evaluation" in text and "speedup over default (higher is better)" in text,
          "search report: one chart with labelled axes")
    check("every evaluation" in text and "unverified" in text and "default policy (1.0)" in text,
          "search report: the chart's legend names points, estimate and default")
    check(s["verdict"] != "paired" or "verified" in text, "search report: the verified figure is marked")
    check(page.tags.count("tr") >= len(s["race"]) + 1, "search report: the race table has a row per candidate")


# A finished run whose figures need all 17 digits: `campaign --resume` only writes the tables.
CRAFTED = {"module": "x.hlo", "algo": "random", "pipeline": "default", "evaluations": 6, "invalid": 1,
           "evaluations_to_best": 3, "default_cost": 4.639712345678901e-05, "search_speedup": 1.0123456789012345,
           "best_speedup": 1.0251234567890123, "best_speedup_ci": [0.1 + 0.2, 1.0 / 3 + 1], "verdict": "paired",
           "verdict_outcome": "unconfirmed", "verdict_rule": None, "race": []}


def check_crafted_csv(tmp):
    graphs, out = os.path.join(tmp, "crafted_graphs"), os.path.join(tmp, "crafted")
    os.makedirs(graphs)
    shutil.copy(os.path.join(SOURCE, "examples", "mlp_train_small.hlo"), os.path.join(graphs, ODD_NAME + ".hlo"))
    run_dir = os.path.join(out, "runs", ODD_NAME, "random", "seed0")
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump(CRAFTED, f)
    with open(os.path.join(run_dir, "log.jsonl"), "w") as f:
        f.write(json.dumps({"module": "x.hlo", "pipeline": "default", "key": "fusion#0", "sites": 1}) + "\n")
        for cost, status in ((4.6e-05, "OK"), (None, "WRONG_OUTPUT"), (4.5e-05, "OK")):
            f.write(json.dumps({"d": [0], "cost": cost, "status": status}) + "\n")
    r = run(["campaign", "--graphs", graphs, "--algos", "random", "--seeds", "1", "--resume", "--in-process",
             "--out", out])
    check(r.returncode == 0, f"campaign --resume over a finished run ({r.stderr[-300:]})")
    with open(os.path.join(out, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 1 and rows[0]["graph"] == ODD_NAME, "results.csv (crafted): the odd name reads back")
    if rows:
        row = rows[0]
        got = [float(row[k]) for k in ("search_speedup", "best_speedup", "ci_low", "ci_high")]
        want = [CRAFTED["search_speedup"], CRAFTED["best_speedup"], *CRAFTED["best_speedup_ci"]]
        check(got == want, f"results.csv (crafted): 17-digit figures read back exactly ({got})")
    raw, page = parse(os.path.join(out, "report.html"))
    text = page.all_text()
    check("random: 1 invalid (wrong output or error), on the x axis" in text and raw.count("<circle") == 2 + 2,
          "campaign report (crafted): two evaluations as dots, the invalid one in the legend")
    check("1.025x" in text and "0.300 .. 1.333" in text, "campaign report (crafted): the verified figure and its CI")


def check_campaign(campaign):
    with open(os.path.join(campaign, "runs", ODD_NAME, "random", "seed0", "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(campaign, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 1 and rows[0]["graph"] == ODD_NAME, f"results.csv: the odd graph name reads back ({rows})")
    if rows:
        row = rows[0]
        same = all(float(row[k]) == s[k] for k in ("search_speedup", "best_speedup"))
        same = same and [float(row["ci_low"]), float(row["ci_high"])] == s["best_speedup_ci"]
        check(same, "results.csv: every figure equals summary.json's exactly (full precision)")
        check(row["algo"] == "random" and row["seed"] == "0" and int(row["evaluations"]) == s["evaluations"],
              "results.csv: algorithm, seed and evaluations")
    with open(os.path.join(campaign, "results.csv"), newline="") as f:
        first = f.readline()
    check(first.endswith("\r\n"), "results.csv: rows end in CRLF as RFC 4180 writes them")
    check(os.path.exists(os.path.join(campaign, "plots", ODD_NAME + ".png")), "campaign: the graph's plot")
    raw, page = parse(os.path.join(campaign, "report.html"))
    check_self_contained(raw, page, "campaign report")
    text = page.all_text()
    check(ODD_NAME in text and "b" not in page.tags, "campaign report: the graph name is escaped, not markup")
    check("mlp, &quot;small&quot; &lt;b&gt;" in raw, "campaign report: the name as character references")
    check({"setup", "summary"} <= page.ids and page.tags.count("svg") == 1, "campaign report: setup, summary, one chart")
    check(fmt3(s["best_speedup"]) + "x" in text and "random" in text, "campaign report: the run's verified figure")


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit non-interlaced RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            depth, color, interlace = body[8], body[9], body[12]
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def check_in_chromium(tmp, search, campaign):
    chromium = shutil.which("chromium")
    if not chromium:
        print("chromium not installed: install Debian's chromium package (scripts/setup.sh does)")
        return False
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
             f"--user-data-dir={tmp}/profile", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000"]
    for name, folder in (("search report", search), ("campaign report", campaign)):
        url = "file://" + os.path.join(folder, "report.html")
        r = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Failed to load" in l or "net::ERR" in l]
        check(not console, f"{name} in Chromium: no console messages or failed loads ({console[:2]})")
        check("<svg" in r.stdout and "speedup over default (higher is better)" in r.stdout,
              f"{name} in Chromium: the DOM holds the chart")
        shot = os.path.join(tmp, name.replace(" ", "_") + ".png")
        subprocess.run([chromium, *flags, "--window-size=1100,1400", f"--screenshot={shot}", url], capture_output=True,
                       timeout=120)
        if not os.path.exists(shot):
            check(False, f"{name} in Chromium: screenshot written")
            continue
        w, h, bpp, rows = png_pixels(shot)
        ink = sum(1 for row in rows for i in range(0, w * bpp, bpp) if row[i] + row[i + 1] + row[i + 2] < 600)
        share = ink / (w * h)
        check(0.01 < share < 0.5, f"{name} in Chromium: {100 * share:.1f}% of the screenshot is ink ({shot})")
    return True


def main():
    tmp = tempfile.mkdtemp(prefix="hlox_report_")
    try:
        if "--chromium" in sys.argv and not shutil.which("chromium"):
            print("chromium not installed: install Debian's chromium package (scripts/setup.sh does)")
            return 1 if CI else 0
        search, campaign = make_reports(tmp)
        if "--chromium" in sys.argv:
            check_in_chromium(tmp, search, campaign)
        else:
            check_search_report(search)
            check_campaign(campaign)
            check_crafted_csv(tmp)
    finally:
        if results["failed"] == 0:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
