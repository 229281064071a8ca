#!/usr/bin/env python3
"""`topoassign simulate` end to end (docs/simulate.md): on a 512-GPU
cluster with 2,000 generated jobs, topo keeps more multi-node jobs inside
one domain than kube-default and every policy reports every metric; the
output is byte-identical across runs and after a trace round trip
(--trace-out, then --trace); the timeline CSV; the HTML report rendered by
headless Chromium (Debian's chromium package, installed by the test command:
scripts/lib/deps.sh), which must show every chart with its axis titles, the
timelines' metric window where the last arrival is and five lines each with
its own dash pattern, laid out at full size (measured in a copy of the page
with a script added).

usage: simulate_e2e.py --topoassign BIN --source DIR (--list | --case NAME | --all)
"""

import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CLUSTER = ["--shape", "hgx-h100", "--shape-nodes", "64"]  # 64 x 8 = 512 GPUs
JOBS = ["--jobs", "2000", "--preset", "acme", "--seed", "11"]
POLICIES = ["topo", "kube-default", "first-fit", "best-fit", "random"]
KEYS = ["tight_share", "tight_share_now", "domains_spanned", "fragmentation",
        "fragmentation_pod", "utilisation", "queue_length", "queue_p50_s", "queue_p99_s",
        "queue_by_gpus", "slowdown_mean", "slowdown_p99", "makespan_s"]
CHARTS = ["chart-tight", "chart-fragmentation", "chart-utilisation", "chart-queue",
          "chart-slowdown", "chart-spanned", "timeline-utilisation", "timeline-fragmentation",
          "timeline-queue"]

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Failure(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


class Ctx:
    def __init__(self, binary, source, tmp):
        self.binary, self.source, self.tmp = binary, source, tmp

    def run(self, *args, ok=True):
        p = subprocess.run([self.binary, "simulate", *args], cwd=self.source,
                           capture_output=True, text=True, timeout=120)
        if ok:
            expect(p.returncode == 0,
                   f"simulate {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
        return p

    def path(self, name):
        return os.path.join(self.tmp, name)


@case
def topo_keeps_jobs_together(ctx):
    out = ctx.run(*CLUSTER, *JOBS, "-o", "json", "-q").stdout
    doc = json.loads(out)
    expect(list(doc["policies"]) == POLICIES, f"policies {list(doc['policies'])}")
    expect(doc["simulate"]["capacity"] == 512 and doc["simulate"]["nodes"] == 64,
           f"inputs {doc['simulate']}")
    for name, m in doc["policies"].items():
        for k in KEYS:
            expect(k in m, f"{name}: no {k}")
        expect(m["placed"] + m["unplaceable"] == 2000, f"{name}: jobs {m}")
        # Kalos's classes of 9-256 GPUs are 3.1 % of the jobs a 512-GPU
        # cluster keeps (docs/simulate.md "Presets"): about 61 of 2,000.
        expect(m["multi_node_jobs"] > 40, f"{name}: {m['multi_node_jobs']} multi-node jobs")
        for k in ("tight_share", "fragmentation", "utilisation"):
            expect(0 <= m[k] <= 1, f"{name}: {k} {m[k]}")
        expect(m["slowdown_mean"] >= 1, f"{name}: slowdown {m['slowdown_mean']}")
    topo, kube = doc["policies"]["topo"], doc["policies"]["kube-default"]
    expect(topo["multi_node_jobs"] == kube["multi_node_jobs"], "the same trace")
    expect(topo["tight_share"] > kube["tight_share"] + 0.2,
           f"topo {topo['tight_share']} vs kube-default {kube['tight_share']}")
    expect(topo["tight_share_now"] > kube["tight_share_now"],
           f"topo {topo['tight_share_now']} vs kube-default {kube['tight_share_now']}")
    expect(topo["slowdown_mean"] < kube["slowdown_mean"],
           f"slowdown topo {topo['slowdown_mean']} vs {kube['slowdown_mean']}")


@case
def byte_stable(ctx):
    a = ctx.run(*CLUSTER, *JOBS, "-o", "json", "-q", "--trace-out", ctx.path("t.csv")).stdout
    b = ctx.run(*CLUSTER, *JOBS, "-o", "json", "-q").stdout
    expect(a == b, "two runs differ")
    t1 = ctx.run(*CLUSTER, *JOBS, "-q").stdout
    t2 = ctx.run(*CLUSTER, *JOBS, "-q").stdout
    expect(t1 == t2, "two tables differ")
    # The trace written and read back gives the same results (not the
    # description of the jobs, which names the file).
    c = json.loads(ctx.run(*CLUSTER, "--trace", ctx.path("t.csv"), "--seed", "11", "-o", "json",
                           "-q").stdout)
    expect(c["policies"] == json.loads(a)["policies"], "the trace read back places differently")
    d = ctx.run(*CLUSTER, *JOBS[:-1], "12", "-o", "json", "-q").stdout
    expect(d != a, "another seed, the same output")


@case
def fair_baselines(ctx):
    # first-fit-fabric walks the topology's own order: the seed changes
    # nothing (the shuffled first-fit follows it), and it keeps more
    # multi-node jobs in one domain than the shuffled order does.
    ctx.run(*CLUSTER, *JOBS, "-q", "--policies", "topo", "--trace-out", ctx.path("t.csv"))
    pol = "first-fit,first-fit-fabric,kube-default,kube-binpack,slurm-tree"
    runs = [json.loads(ctx.run(*CLUSTER, "--trace", ctx.path("t.csv"), "--seed", seed,
                               "--policies", pol, "-o", "json", "-q").stdout)["policies"]
            for seed in ("11", "12")]
    expect(list(runs[0]) == pol.split(","), f"policies {list(runs[0])}")
    expect(runs[0]["first-fit-fabric"] == runs[1]["first-fit-fabric"],
           "first-fit-fabric depends on the seed")
    expect(runs[0]["first-fit"] != runs[1]["first-fit"], "first-fit ignores the seed")
    fabric, shuffled = runs[0]["first-fit-fabric"], runs[0]["first-fit"]
    expect(fabric["tight_share"] > shuffled["tight_share"],
           f"first-fit-fabric {fabric['tight_share']} vs first-fit {shuffled['tight_share']}")
    # MostAllocated packs: fewer partly used nodes than LeastAllocated.
    binpack, kube = runs[0]["kube-binpack"], runs[0]["kube-default"]
    expect(binpack["fragmentation"] < kube["fragmentation"],
           f"kube-binpack {binpack['fragmentation']} vs kube-default {kube['fragmentation']}")
    # slurm-tree is deterministic too, and choosing the lowest switch that
    # fits keeps at least as many jobs in one domain as the fabric's order.
    slurm = runs[0]["slurm-tree"]
    expect(slurm == runs[1]["slurm-tree"], "slurm-tree depends on the seed")
    expect(slurm["tight_share"] >= fabric["tight_share"] and slurm["tight_share"] > 0.5,
           f"slurm-tree {slurm['tight_share']} vs first-fit-fabric {fabric['tight_share']}")
    # The table's header keeps a long name apart from its neighbour.
    head = ctx.run(*CLUSTER, "--trace", ctx.path("t.csv"), "--policies", pol,
                   "-q").stdout.splitlines()[2]
    expect(head.split() == pol.split(","), f"table header {head!r}")


@case
def acceptance_256_nodes_three_seeds(ctx):
    # Issue 31's acceptance: on a generated 256-node cluster with the default
    # request mix, over 3 seeds, topo keeps at least as many multi-node jobs
    # in one domain as first-fit over the fabric's own node order, on every
    # preset; and the same seeds give the same bytes.
    for preset in ("philly", "helios", "acme"):
        args = ["--shape", "hgx-h100", "--shape-nodes", "256", "--jobs", "10000", "--preset",
                preset, "--seeds", "1-3", "--policies", "topo,first-fit-fabric",
                "--stretched", "false", "-o", "json", "-q"]
        out = ctx.run(*args).stdout
        expect(ctx.run(*args).stdout == out, f"{preset}: not deterministic")
        pol = json.loads(out)["policies"]
        topo, fabric = pol["topo"], pol["first-fit-fabric"]
        expect(topo["multi_node_jobs"] >= 20, f"{preset}: {topo['multi_node_jobs']} multi-node")
        expect(topo["tight_share"] >= fabric["tight_share"],
               f"{preset}: topo {topo['tight_share']} < first-fit-fabric {fabric['tight_share']}")
        expect(len(topo["ci95"]["tight_share"]) == 2, f"{preset}: no interval")


@case
def figures_script(ctx):
    # scripts/simulate_figures.py, which makes docs/simulate.md's tables,
    # still reads what -o json writes: one row per policy and the same-jobs
    # row, every cell filled, the intervals shown.
    p = subprocess.run([sys.executable, os.path.join(ctx.source, "scripts", "simulate_figures.py"),
                        ctx.binary, "--shapes", "hgx-h100", "--presets", "philly", "--jobs",
                        "400", "--seeds", "1-3"], capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-1000:]}")
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("| philly |")]
    expect(len(rows) == 9, f"{len(rows)} rows:\n{p.stdout}")
    head = [ln for ln in p.stdout.splitlines() if ln.startswith("| preset |")]
    expect(len(head) == 1 and all(ln.count("|") == head[0].count("|") for ln in rows),
           f"cells:\n{p.stdout}")
    expect(any("±" in ln for ln in rows), f"no interval:\n{p.stdout}")


@case
def timeline_csv(ctx):
    ctx.run(*CLUSTER, *JOBS, "-q", "--policies", "topo,random", "--timeline", ctx.path("tl.csv"))
    with open(ctx.path("tl.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    expect(rows and list(rows[0]) == ["policy", "t_s", "utilisation", "fragmentation",
                                      "fragmentation_pod", "queue_length"], "header")
    by = {}
    for r in rows:
        by.setdefault(r["policy"], []).append(r)
        for k in ("utilisation", "fragmentation", "fragmentation_pod"):
            expect(0 <= float(r[k]) <= 1 + 1e-9, f"{k} {r[k]}")
        expect(float(r["queue_length"]) >= 0, "queue")
    expect(sorted(by) == ["random", "topo"], f"policies {sorted(by)}")
    for name, rs in by.items():
        ts = [float(r["t_s"]) for r in rs]
        expect(len(rs) >= 400 and ts == sorted(ts), f"{name}: {len(rs)} points")
        expect(max(float(r["utilisation"]) for r in rs) > 0.5, f"{name}: never busy")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    raise Failure("chromium not found: the test command installs Debian's chromium package "
                  "(scripts/lib/deps.sh, TOPO_TEST_PACKAGES); install it with apt-get install "
                  "chromium")


# Each chart's axis titles as drawn (docs/simulate.md, Output); a timeline's
# x title ends in the unit its ticks use.
TIME_TITLE = re.compile(r"time since first arrival \((min|h|d)\)")
AXIS_TITLES = {
    "chart-tight": ("domain the job could fit", "multi-node jobs in one domain (%)"),
    "chart-fragmentation": ("free GPUs counted", "free GPUs, time-weighted (%)"),
    "chart-utilisation": ("over the metric window", "GPU utilisation (%)"),
    "chart-queue": ("GPUs per job", "p99 wait, arrival to start (time)"),
    "chart-slowdown": ("statistic over the jobs", "slowdown (\u00d7 runtime at cost 1)"),
    "chart-spanned": ("level", "domains per multi-node job"),
    "timeline-utilisation": (TIME_TITLE, "GPU utilisation (%)"),
    "timeline-fragmentation": (TIME_TITLE, "free GPUs on partly used nodes (%)"),
    "timeline-queue": (TIME_TITLE, "jobs waiting"),
}

# Appended to a copy of the report (never to the report, which has no
# scripts): what Chromium laid out, each chart's size and its lines', axis
# titles' and window marker's boxes and the dash pattern each line is drawn
# with, written into the page for --dump-dom.
MEASURE = """<script>
const out = {};
for (const svg of document.querySelectorAll("svg.chart")) {
  const r = svg.getBoundingClientRect(), box = el => { const b = el.getBBox();
    return [b.width, b.height]; };
  out[svg.id] = {size: [r.width, r.height],
    lines: [...svg.querySelectorAll("polyline.line")].map(l => ({box: box(l),
      dash: getComputedStyle(l).strokeDasharray, stroke: getComputedStyle(l).stroke})),
    bars: [...svg.querySelectorAll("rect.bar")].filter(b => box(b)[0] > 0).length,
    titles: [...svg.querySelectorAll("text.axis-title")].map(box),
    window: [...svg.querySelectorAll("line.window")].map(box),
    shaded: [...svg.querySelectorAll("rect.outside-window")].map(box)};
}
const pre = document.createElement("pre");
pre.id = "measure";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def chromium_dom(ctx, page):
    chromium = find_chromium()
    p = subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox",
                        "--no-first-run", "--disable-extensions",
                        f"--user-data-dir={ctx.path('profile')}", "--window-size=1400,1000",
                        "--virtual-time-budget=2000", "--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=90)
    expect(p.returncode == 0, f"chromium exit {p.returncode}\n{p.stderr[-2000:]}")
    # Chromium reports a page it could not parse or load on stderr.
    for bad in ("ERR_FILE_NOT_FOUND", "Uncaught", "This page contains the following errors"):
        expect(bad not in p.stderr and bad not in p.stdout, f"chromium: {bad}")
    return p.stdout


def svg_text(body, cls):
    return [html.unescape(t) for t in
            re.findall(r'<text[^>]*class="%s"[^>]*>([^<]*)</text>' % cls, body)]


def attrs(tag):
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


@case
def report_in_chromium(ctx):
    report = ctx.path("report.html")
    doc = json.loads(ctx.run(*CLUSTER, *JOBS, "-q", "-o", "json", "--report", report,
                             "--timeline", ctx.path("tl.csv")).stdout)
    with open(report, encoding="utf-8") as f:
        page = f.read()
    # Self-contained: nothing fetched, no scripts.
    expect("<script" not in page, "a script in the report")
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    expect(not refs, f"external references {refs[:3]}")
    # Each chart is well-formed SVG on its own (XML, not only what an HTML
    # parser forgives).
    for svg in re.findall(r"<svg.*?</svg>", page, re.S):
        try:
            ET.fromstring(svg)
        except ET.ParseError as e:
            raise Failure(f"not well-formed SVG: {e}: {svg[:200]}")
    dom = chromium_dom(ctx, report)
    expect("<h1>topoassign simulate</h1>" in dom, f"no page in the DOM:\n{dom[:500]}")
    with open(ctx.path("tl.csv"), newline="") as f:
        ts = [float(r["t_s"]) for r in csv.DictReader(f)]
    window = doc["policies"]["topo"]["window_s"]
    for chart in CHARTS:
        m = re.search(r'<svg[^>]*id="%s"[^>]*>(.*?)</svg>' % chart, dom, re.S)
        expect(m is not None, f"chart {chart} missing from the DOM")
        body = m.group(1)
        x_title, y_title = AXIS_TITLES[chart]
        got_x = svg_text(body, "axis-title x-title")
        unit = None
        if isinstance(x_title, re.Pattern):
            m = x_title.fullmatch(got_x[0]) if len(got_x) == 1 else None
            expect(m is not None, f"{chart}: x title {got_x}")
            unit = m.group(1)
        else:
            expect(got_x == [x_title], f"{chart}: x title {got_x}")
        expect(svg_text(body, "axis-title y-title") == [y_title],
               f"{chart}: y title {svg_text(body, 'axis-title y-title')}")
        ticks = svg_text(body, "axis")
        if chart.startswith("chart-"):
            expect(len(re.findall(r"<rect[^>]*class=\"bar\"", body)) >= 5, f"{chart}: no bars")
            continue
        expect(body.count("<polyline") == 5, f"{chart}: {body.count('<polyline')} lines")
        # The ticks use the title's unit, from 0 on.
        timed = [t for t in ticks if t.endswith(" " + unit)]
        expect("0 " + unit in ticks and len(timed) >= 3, f"{chart}: time ticks {ticks}")
        if chart != "timeline-queue":
            expect("100.0%" in ticks, f"{chart}: ticks {ticks}")
        # Five lines apart: each its own colour and dash pattern.
        lines = [attrs(t) for t in re.findall(r"<polyline[^>]*>", body)]
        for key in ("stroke", "stroke-dasharray"):
            expect(len({ln[key] for ln in lines}) == 5, f"{chart}: {key} {lines}")
        expect(len(re.findall(r'<line class="legend-line"', body)) == 5, f"{chart}: legend")
        # The metric window: first to last arrival, its end where the last
        # arrival is on the axis, the drain after it shaded.
        expect(svg_text(body, "legend")[-1] == "metric window", f"{chart}: legend")
        expect(svg_text(body, "window-label") == ["window start", "window end"],
               f"{chart}: window labels {svg_text(body, 'window-label')}")
        ends = [attrs(t) for t in re.findall(r'<line class="window"[^>]*>', body)]
        axis = re.search(r'class="axis-line"[^>]*d="M([\d.]+) [\d.]+V[\d.]+H([\d.]+)"', body)
        x0, x1 = float(axis.group(1)), float(axis.group(2))
        want = x0 + (x1 - x0) * window / (max(ts) - min(ts))
        expect(len(ends) == 2 and abs(float(ends[0]["x1"]) - x0) < 0.1
               and abs(float(ends[1]["x1"]) - want) < 1,
               f"{chart}: window at {[e['x1'] for e in ends]}, want {x0} and {want:.1f}")
        drain = [attrs(t) for t in re.findall(r'<rect class="outside-window"[^>]*>', body)]
        expect(any(abs(float(d["x"]) - want) < 1 and float(d["x"]) + float(d["width"]) > x1 - 1
                   for d in drain), f"{chart}: the drain is not shaded: {drain}")
    for name in POLICIES:
        expect(f"<th>{name}</th>" in dom, f"table column {name}")

    # What Chromium laid out: every chart its full size, every line, bar,
    # axis title and window line a box of its own, each line drawn with
    # its own dash pattern.
    measured = ctx.path("measured.html")
    with open(measured, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", MEASURE + "</body>"))
    m = re.search(r'<pre id="measure">(.*?)</pre>', chromium_dom(ctx, measured), re.S)
    expect(m is not None, "the measuring script wrote nothing")
    sizes = json.loads(html.unescape(m.group(1)))
    expect(sorted(sizes) == sorted(CHARTS), f"charts laid out {sorted(sizes)}")
    for chart, got in sizes.items():
        expect(got["size"] == [640, 320], f"{chart}: laid out {got['size']}")
        expect(len(got["titles"]) == 2 and all(w > 20 and h > 5 for w, h in got["titles"]),
               f"{chart}: axis titles {got['titles']}")
        if chart.startswith("chart-"):
            expect(got["bars"] >= 5, f"{chart}: {got['bars']} bars with a width")
            continue
        expect(all(ln["box"][0] > 400 and ln["box"][1] > 0 for ln in got["lines"]),
               f"{chart}: lines {got['lines']}")
        dashes = [ln["dash"] for ln in got["lines"]]
        expect(len(set(dashes)) == 5 and dashes[0] == "none", f"{chart}: dashes {dashes}")
        expect(len(got["window"]) == 2 and all(h > 100 for _, h in got["window"]),
               f"{chart}: window lines {got['window']}")
        expect(max(w for w, _ in got["shaded"]) > 100, f"{chart}: drain {got['shaded']}")


@case
def report_seeds_in_chromium(ctx):
    # --seeds 1-3 --report: the table shows mean ± half, and each timeline
    # in the rendered DOM has one interval band per policy line, in that
    # line's colour, drawn under the lines.
    report = ctx.path("seeds.html")
    ctx.run(*CLUSTER, "--jobs", "400", "--seeds", "1-3", "-q", "--report", report)
    dom = chromium_dom(ctx, report)
    expect("Seeds 1 to 3" in dom, f"no seeds sentence:\n{dom[:500]}")
    table = re.search(r'<table id="metrics">(.*?)</table>', dom, re.S)
    expect(table is not None and table.group(1).count(" ± ") >= 5 * 20, "table without ±")
    for chart in ("timeline-utilisation", "timeline-fragmentation", "timeline-queue"):
        m = re.search(r'<svg[^>]*id="%s"[^>]*>(.*?)</svg>' % chart, dom, re.S)
        expect(m is not None, f"chart {chart} missing from the DOM")
        body = m.group(1)
        lines = [attrs(t) for t in re.findall(r"<polyline[^>]*>", body)]
        bands = [attrs(t) for t in re.findall(r'<polygon[^>]*class="band"[^>]*>', body)]
        expect(len(lines) == 5 and len(bands) == 5,
               f"{chart}: {len(lines)} lines, {len(bands)} bands")
        expect([b["fill"] for b in bands] == [ln["stroke"] for ln in lines],
               f"{chart}: band colours {[b['fill'] for b in bands]}")
        expect(body.find('class="band"') < body.find("<polyline"), f"{chart}: bands over lines")
        # A band is an area: twice its line's points, lo then hi reversed.
        for b, ln in zip(bands, lines):
            expect(len(b["points"].split()) == 2 * len(ln["points"].split()),
                   f"{chart}: band of {len(b['points'].split())} points")


@case
def bad_inputs(ctx):
    with open(ctx.path("bad.csv"), "w") as f:
        f.write("t_arrive,job_id,pods,gpus_per_pod,duration_s\n0,a,2,8,100\n5,b,1,eight,10\n")
    for args, msg in [
        ([*CLUSTER, "--trace", ctx.path("bad.csv")],
         "bad.csv:3: field 4 (gpus_per_pod): expected a whole number, got \"eight\""),
        ([*CLUSTER], "give --trace FILE or --jobs N (one of them)"),
        (["--jobs", "10"], "--nodes: required"),
        ([*CLUSTER, "--jobs", "10", "--levels", "topology.topo.io/rack"],
         "--levels: the last level must be kubernetes.io/hostname"),
        (["--shape", "dgx", "--jobs", "10"], "--shape: expected one of hgx-h100, gb200-nvl72"),
        ([*CLUSTER, "--jobs", "10", "--policies", "topo,slurm"],
         "--policies: expected topo, kube-default, first-fit, best-fit, random, "
         "first-fit-fabric, kube-binpack, slurm-tree, mixed or mixed-pack, got \"slurm\""),
        ([*CLUSTER, "--jobs", "10", "--required-share", "0.7", "--preferred-share", "0.7"],
         "add up to more than 1"),
        ([*CLUSTER, "--trace", ctx.path("bad.csv"), "--preset", "acme"], "not --trace"),
    ]:
        p = ctx.run(*args, ok=False)
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(msg in p.stderr and p.stdout == "", f"{args}: stderr {p.stderr!r}, want {msg!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topoassign")
    ap.add_argument("--source")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true")
    g.add_argument("--case")
    g.add_argument("--all", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    names = list(CASES) if a.all else [a.case]
    failed = 0
    for name in names:
        if name not in CASES:
            print(f"unknown case {name}")
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            try:
                CASES[name](Ctx(a.topoassign, a.source, tmp))
                print(f"ok {name}")
            except Failure as e:
                print(f"FAIL {name}: {e}")
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main())
