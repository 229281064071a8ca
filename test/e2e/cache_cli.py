#!/usr/bin/env python3
"""`topoassign cache import` and `--db`: a cache made from the fixtures must
give the same `show` and `assign` output as the fixtures themselves; the flag
rules and the error paths (missing file, --db with --nodes or --pods).

usage: cache_cli.py --topoassign BIN --source DIR
"""

import argparse
import os
import subprocess
import sys
import tempfile

LEVELS5 = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/leaf,"
           "topology.topo.io/rack,kubernetes.io/hostname")
GB200 = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/nvlink,"
         "kubernetes.io/hostname")

# (inputs for --nodes/--pods, levels, assign requests)
CLUSTERS = [
    (["--nodes", "fixtures/clusters/kubectl-nodes-small.json",
      "--pods", "fixtures/clusters/kubectl-pods-small.json"], LEVELS5,
     [["--count", "1", "--request", "nvidia.com/gpu=2", "--required", "topology.topo.io/rack"],
      ["--count", "3", "--request", "nvidia.com/gpu=2", "--unconstrained"]]),
    (["--nodes", "fixtures/clusters/hgx-h100.yaml"], LEVELS5,
     [["--count", "8", "--request", "nvidia.com/gpu=8", "--required", "topology.topo.io/leaf"],
      ["--count", "4", "--request", "nvidia.com/gpu=8", "--preferred", "topology.topo.io/rack"],
      ["--count", "64", "--request", "nvidia.com/gpu=8", "--required", "topology.topo.io/rack"]]),
    (["--nodes", "fixtures/clusters/gb200-nvl72.yaml"], GB200,
     [["--count", "16", "--request", "nvidia.com/gpu=4", "--required", "topology.topo.io/nvlink"]]),
    (["--nodes", "fixtures/clusters/fragmented.yaml"], LEVELS5,
     [["--count", "4", "--request", "nvidia.com/gpu=2", "--required", "topology.topo.io/rack"],
      ["--count", "1", "--request", "nvidia.com/gpu=8", "--unconstrained"]]),
]


def run(binary, source, *args):
    p = subprocess.run([binary, *args], cwd=source, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expect(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topoassign", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (inputs, levels, requests) in enumerate(CLUSTERS):
            db = os.path.join(tmp, f"c{i}.db")
            rc, out, err = run(a.topoassign, a.source, "cache", "import", "--db", db, *inputs)
            expect(rc == 0 and out.startswith("imported "), f"import {inputs}: {rc} {out} {err}")
            for cmd, extra in [("show", [])] + [("assign", r + ["-o", "json"]) for r in requests]:
                want = run(a.topoassign, a.source, cmd, *inputs, "--levels", levels, *extra)
                got = run(a.topoassign, a.source, cmd, "--db", db, "--levels", levels, *extra)
                expect(got == want, f"{cmd} {inputs} {extra}:\n--db gave {got}\nfiles gave {want}")
            rc, out, _ = run(a.topoassign, a.source, "cache", "stats", "--db", db)
            expect(rc == 0 and "schema version" in out, f"stats: {out}")
            # Importing again updates in place: same rows.
            run(a.topoassign, a.source, "cache", "import", "--db", db, *inputs)
            rc, out2, _ = run(a.topoassign, a.source, "cache", "stats", "--db", db)
            expect(out2 == out, f"reimport changed the rows:\n{out}\n{out2}")
            print(f"ok: {' '.join(inputs)}")

        db = os.path.join(tmp, "c0.db")
        missing = os.path.join(tmp, "missing.db")
        checks = [
            (["show", "--db", missing, "--levels", LEVELS5], "no such file"),
            (["show", "--db", db, "--nodes", "fixtures/clusters/hgx-h100.yaml", "--levels", LEVELS5],
             "--db and --nodes are mutually exclusive"),
            (["assign", "--db", db, "--pods", "fixtures/clusters/kubectl-pods-small.json",
              "--levels", LEVELS5, "--count", "1", "--request", "nvidia.com/gpu=1",
              "--unconstrained"], "--pods cannot be combined with --db"),
            (["show", "--levels", LEVELS5], "--nodes: required"),
            (["cache", "import", "--db", db], "give --nodes, --pods or --jobs"),
            (["cache", "import", "--db", db, "--pods", "fixtures/inventory/../clusters/nope.json"],
             "nope.json"),
            (["cache", "frobnicate"], "unknown subcommand"),
        ]
        for args, message in checks:
            rc, out, err = run(a.topoassign, a.source, *args)
            expect(rc == 2 and message in err, f"{args}: exit {rc}, stderr {err!r}")
        expect(not os.path.exists(missing), "--db created a missing file")
        print("ok: errors")


if __name__ == "__main__":
    main()
