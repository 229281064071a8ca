#!/usr/bin/env python3
"""Regenerates the figures of docs/simulate.md "Figures": runs topoassign
simulate over the shapes and presets with several seeds and prints the
Markdown tables (means ± 95 % half-widths, the same-jobs view). Usage:
scripts/simulate_figures.py TOPOASSIGN [--seeds 1-3] [--jobs 20000]"""
import argparse
import json
import subprocess
import sys

POLICIES = ["topo", "first-fit-fabric", "slurm-tree", "kube-default", "kube-binpack",
            "first-fit", "best-fit", "random"]


def duration(s):
    for div, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if abs(s) >= div:
            return s / div, unit
    return s, "s"


def fmt(p, key, kind):
    v = p[key]
    lo_hi = p.get("ci95", {}).get(key)
    half = (lo_hi[1] - lo_hi[0]) / 2 if lo_hi else None
    if half is not None and abs(half) < 1e-9:
        half = None  # the same in every seed: no interval to show
    if kind == "share":
        return f"{100 * v:.1f}%" + (f" ± {100 * half:.1f}" if half is not None else "")
    if kind == "seconds":
        x, unit = duration(max(abs(v), abs(half or 0)))
        x = v / {"d": 86400, "h": 3600, "min": 60, "s": 1}[unit]
        if half is None:
            return f"{x:.1f} {unit}" if unit != "s" else f"{v:.0f} s"
        h = half / (86400 if unit == "d" else 3600 if unit == "h" else 60 if unit == "min" else 1)
        return f"{x:.1f} ± {h:.1f} {unit}"
    if kind == "count":
        return f"{v:.0f}" + (f" ± {half:.0f}" if half is not None else "")
    return f"{v:.3f}" + (f" ± {half:.3f}" if half is not None else "")


COLUMNS = [("tight, empty", "tight_share", "share"), ("tight, room", "tight_share_now", "share"),
           ("fragmentation", "fragmentation", "share"), ("utilisation", "utilisation", "share"),
           ("queue p99", "queue_p99_s", "seconds"), ("slowdown", "slowdown_mean", "number"),
           ("never fit", "unplaceable", "count")]
STRETCHED = [("JCT mean, stretched", "jct_mean_s", "seconds"),
             ("goodput, stretched", "goodput", "share")]
COMMON = [("common: queue p99", "queue_p99_s", "seconds"),
          ("common: tight", "tight_share", "share")]


def run(topoassign, args):
    out = subprocess.run([topoassign, "simulate", *args, "-q", "-o", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("topoassign")
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--jobs", default="20000")
    ap.add_argument("--shapes", default="hgx-h100,gb200-nvl72")
    ap.add_argument("--presets", default="philly,helios,acme")
    ap.add_argument("--extra", default="", help="more simulate arguments, space separated")
    a = ap.parse_args()
    for shape in a.shapes.split(","):
        head = None
        rows = []
        for preset in a.presets.split(","):
            d = run(a.topoassign, ["--shape", *shape.split(), "--jobs", a.jobs, "--preset", preset,
                                   "--seeds", a.seeds, "--policies", ",".join(POLICIES),
                                   *a.extra.split()])
            head = head or d["simulate"]
            common = d.get("common", {})
            for name in POLICIES:
                p = d["policies"][name]
                cells = [fmt(p, k, kind) for _, k, kind in COLUMNS]
                s = p.get("stretched")
                cells += [fmt(s, k, kind) if s else "-" for _, k, kind in STRETCHED]
                c = common.get("policies", {}).get(name)
                cells += [fmt(c, k, kind) if c else "-" for _, k, kind in COMMON]
                rows.append(f"| {preset} | {name} | " + " | ".join(cells) + " |")
            cj = common.get("jobs")
            rows.append(f"| {preset} | *same jobs* | {cj if isinstance(cj, int) else round(cj)} "
                        "jobs placed by every policy |" + " |" * (len(COLUMNS) + 3))
        print(f"**{shape}** ({head['nodes']} nodes, {head['capacity']} GPUs), seeds {a.seeds}:\n")
        names = [c[0] for c in COLUMNS + STRETCHED + COMMON]
        print("| preset | policy | " + " | ".join(names) + " |")
        print("| --- | --- | " + " | ".join("---:" for _ in names) + " |")
        print("\n".join(rows))
        print()


if __name__ == "__main__":
    sys.exit(main())
