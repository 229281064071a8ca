#!/usr/bin/env python3
"""Process-level tests of `topoassign assign` and `topoassign show`.

Each case runs the binary on files under fixtures/ and checks the exit status
and the output. Expected placements are Kueue's (docs/engine.md "Kueue's rules": BestFit for
required/preferred, LeastFreeCapacity for unconstrained, children pooled from
the fit level down), worked out by hand for the fixture clusters; the
reasoning is in the comments.

usage: cli_tests.py --topoassign BIN --source DIR (--list | --case NAME | --all)
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

LEVELS5 = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/leaf,"
           "topology.topo.io/rack,kubernetes.io/hostname")
GB200_LEVELS = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/nvlink,"
                "kubernetes.io/hostname")
RACK = "topology.topo.io/rack"
SPINE = "topology.topo.io/spine"
NVLINK = "topology.topo.io/nvlink"
HGX = "fixtures/clusters/hgx-h100.yaml"
GB200 = "fixtures/clusters/gb200-nvl72.yaml"
FRAG = "fixtures/clusters/fragmented.yaml"
KNODES = "fixtures/clusters/kubectl-nodes-small.json"
KPODS = "fixtures/clusters/kubectl-pods-small.json"

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Failure(Exception):
    pass


class Ctx:
    def __init__(self, binary, source):
        self.binary = binary
        self.source = source

    def run(self, *args):
        proc = subprocess.run([self.binary, *args], cwd=self.source, capture_output=True,
                              text=True, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr


def expect(cond, msg, out="", err=""):
    if not cond:
        raise Failure(f"{msg}\n--- stdout ---\n{out}\n--- stderr ---\n{err}")


def hostnames(*names):
    return {"levels": ["kubernetes.io/hostname"],
            "domains": [{"values": [n], "count": 1} for n in names]}


def assign_json(ctx, *args, want):
    rc, out, err = ctx.run("assign", *args, "-o", "json")
    expect(rc == 0, f"exit {rc}, want 0", out, err)
    try:
        got = json.loads(out)
    except json.JSONDecodeError as e:
        raise Failure(f"stdout is not JSON: {e}\n{out}")
    expect(list(got.keys()) == ["levels", "domains"], f"keys {list(got.keys())}", out, err)
    expect(got == want, f"assignment\n{json.dumps(got)}\nwant\n{json.dumps(want)}", out, err)
    expect(err == "", "stderr not empty", out, err)


def no_fit(ctx, *args, message, exact=False):
    rc, out, err = ctx.run("assign", *args)
    expect(rc == 1, f"exit {rc}, want 1", out, err)
    line = err.rstrip("\n")
    want = "does not fit: " + message
    ok = line == want if exact else line.startswith(want)
    expect(ok, f"stderr\n{line}\nwant {'exactly' if exact else 'starting with'}\n{want}", out, err)
    expect(out == "", "stdout not empty", out, err)


def bad_input(ctx, *args, contains, cmd="assign"):
    rc, out, err = ctx.run(cmd, *args)
    expect(rc == 2, f"exit {rc}, want 2", out, err)
    lines = err.rstrip("\n").split("\n")
    expect(len(lines) == 1, f"want one line on stderr, got {len(lines)}", out, err)
    expect(lines[0].startswith(f"topoassign {cmd}: "), "message lacks the command prefix", out, err)
    expect(contains in lines[0], f"stderr lacks {contains!r}", out, err)
    expect(out == "", "stdout not empty", out, err)


# --- placements on the HGX H100 cluster ------------------------------------------
# Free 8-GPU slots per rack (pods of nvidia.com/gpu=8): rack-01 2 (n3, n4),
# rack-02 3 (n3 has 4 GPUs free), rack-03/04/06 4, rack-05 3 (n1 has 6 free),
# rack-07 0, rack-08 3 (n1 holds a TAS pod, charged as TAS usage).

@case
def hgx_required_rack_4x8(ctx):
    # Several racks hold 4; BestFit takes the tightest, ties by values: rack-03.
    assign_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "4",
                "--request", "nvidia.com/gpu=8", "--required", RACK,
                want=hostnames("h100-r03-n1", "h100-r03-n2", "h100-r03-n3", "h100-r03-n4"))


@case
def hgx_required_rack_3x8_best_fit(ctx):
    # rack-02, rack-05, rack-08 hold exactly 3: rack-02 first by values; its n3 is skipped.
    assign_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "3",
                "--request", "nvidia.com/gpu=8,cpu=32,memory=256Gi", "--required", RACK,
                want=hostnames("h100-r02-n1", "h100-r02-n2", "h100-r02-n4"))


@case
def hgx_required_rack_5x8_no_fit(ctx):
    no_fit(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "5",
           "--request", "nvidia.com/gpu=8", "--required", RACK,
           message='topology "default" allows to fit only 4 out of 5 pod(s)')


@case
def hgx_preferred_rack_6x8(ctx):
    # No rack holds 6, so one level up: leaf-3 (rack-05 3 + rack-06 4 = 7) is the
    # tightest leaf that fits; hosts of both racks are pooled and sorted by values.
    assign_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "6",
                "--request", "nvidia.com/gpu=8", "--preferred", RACK,
                want=hostnames("h100-r05-n2", "h100-r05-n3", "h100-r05-n4",
                               "h100-r06-n1", "h100-r06-n2", "h100-r06-n3"))


@case
def hgx_required_spine_12x8(ctx):
    # spine-a holds 13, spine-b 10: spine-a. Leaves leaf-2 (8) + leaf-1 (4 of 5),
    # then racks and hosts pooled greedily (slice level = hostname).
    assign_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "12",
                "--request", "nvidia.com/gpu=8", "--required", SPINE,
                want=hostnames("h100-r01-n3", "h100-r01-n4", "h100-r02-n1", "h100-r02-n2",
                               "h100-r02-n4", "h100-r03-n1", "h100-r03-n2", "h100-r03-n3",
                               "h100-r03-n4", "h100-r04-n1", "h100-r04-n2", "h100-r04-n3"))


@case
def hgx_required_spine_16x8_no_fit(ctx):
    no_fit(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "16",
           "--request", "nvidia.com/gpu=8", "--required", SPINE,
           message='topology "default" allows to fit only 13 out of 16 pod(s). Total nodes: 32; '
                   'excluded: resource "nvidia.com/gpu": 9', exact=True)


@case
def hgx_unconstrained_3x8(ctx):
    # LeastFreeCapacity over the hosts: the first free hosts in value order.
    assign_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "3",
                "--request", "nvidia.com/gpu=8", "--unconstrained",
                want=hostnames("h100-r01-n3", "h100-r01-n4", "h100-r02-n1"))


@case
def hgx_non_hostname_topology(ctx):
    # Without the hostname level the leaves are racks and carry all level values.
    rc, out, err = ctx.run("assign", "--nodes", HGX, "--levels",
                           "topology.topo.io/spine,topology.topo.io/rack", "--count", "4",
                           "--request", "nvidia.com/gpu=8", "--required", RACK, "-o", "json")
    expect(rc == 0, f"exit {rc}", out, err)
    want = {"levels": ["topology.topo.io/spine", "topology.topo.io/rack"],
            "domains": [{"values": ["spine-a", "rack-03"], "count": 4}]}
    expect(json.loads(out) == want, "assignment", out, err)


@case
def hgx_table_output(ctx):
    rc, out, err = ctx.run("assign", "--nodes", HGX, "--levels", LEVELS5, "--count", "4",
                           "--request", "nvidia.com/gpu=8", "--required", RACK)
    expect(rc == 0, f"exit {rc}", out, err)
    lines = out.rstrip("\n").split("\n")
    expect(re.match(r"^DATACENTER\s+SPINE\s+LEAF\s+RACK\s+HOSTNAME\s+PODS\s+GPUS$", lines[0]) is not None,
           "header", out, err)
    expect(re.match(r"^dc1\s+spine-a\s+leaf-2\s+rack-03\s+h100-r03-n1\s+1\s+8$", lines[1]) is not None,
           "first row", out, err)
    expect(len(lines) == 6, "4 rows, a header and a summary", out, err)
    expect(lines[-1] == "placed 4 pods (32 nvidia.com/gpu) on 4 nodes, all in rack rack-03 "
                        "(required topology.topo.io/rack)", "summary", out, err)


@case
def hgx_yaml_output(ctx):
    rc, out, err = ctx.run("assign", "--nodes", HGX, "--levels", LEVELS5, "--count", "2",
                           "--request", "nvidia.com/gpu=8", "--required", RACK, "-o", "yaml")
    expect(rc == 0, f"exit {rc}", out, err)
    want = ("levels:\n- kubernetes.io/hostname\ndomains:\n"
            "- values:\n  - h100-r01-n3\n  count: 1\n"
            "- values:\n  - h100-r01-n4\n  count: 1\n")
    expect(out == want, f"yaml\n{out}\nwant\n{want}", out, err)


@case
def hgx_flavor_without_nodes(ctx):
    # A ResourceFlavor selecting no node: Kueue's message for an empty level.
    no_fit(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "1",
           "--request", "nvidia.com/gpu=8", "--required", RACK,
           "--node-label", "nvidia.com/gpu.product=NVIDIA-B200",
           message="no topology domains at level: topology.topo.io/rack", exact=True)


@case
def hgx_topology_name_and_gate(ctx):
    no_fit(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "5",
           "--request", "nvidia.com/gpu=8", "--required", RACK, "--topology-name", "hgx",
           "--gate", "TASProfileMixed=false",
           message='topology "hgx" allows to fit only 4 out of 5 pod(s)')


# --- GB200 NVL72 -----------------------------------------------------------------------
# Free 4-GPU trays per NVL72 domain: rack 1 14, rack 2 9, rack 3 18, rack 4 17 (n18 NotReady).

@case
def gb200_required_nvlink_16x4(ctx):
    # Tightest domain holding 16: rack 4 (17); its first 16 trays.
    assign_json(ctx, "--nodes", GB200, "--levels", GB200_LEVELS, "--count", "16",
                "--request", "nvidia.com/gpu=4", "--required", NVLINK,
                want=hostnames(*[f"gb200-r4-n{i:02d}" for i in range(1, 17)]))


@case
def gb200_required_nvlink_14x4_uses_busy_domain(ctx):
    # BestFit keeps racks 3 and 4 whole: the 14 free trays of rack 1.
    assign_json(ctx, "--nodes", GB200, "--levels", GB200_LEVELS, "--count", "14",
                "--request", "nvidia.com/gpu=4", "--required", NVLINK,
                want=hostnames(*[f"gb200-r1-n{i:02d}" for i in range(5, 19)]))


@case
def gb200_required_nvlink_19x4_no_fit(ctx):
    no_fit(ctx, "--nodes", GB200, "--levels", GB200_LEVELS, "--count", "19",
           "--request", "nvidia.com/gpu=4", "--required", NVLINK,
           message='topology "default" allows to fit only 18 out of 19 pod(s). Total nodes: 71; '
                   'excluded: resource "nvidia.com/gpu": 13', exact=True)


@case
def gb200_podset_slices(ctx):
    # Job: 32 pods in spine-b, slices of 16 per NVL72 domain: spine-a has no
    # domain with 16 free trays, spine-b has two (racks 3 and 4).
    assign_json(ctx, "--nodes", GB200, "--levels", GB200_LEVELS,
                "--podset", "fixtures/podsets/job-gb200-slices.yaml",
                want=hostnames(*[f"gb200-r3-n{i:02d}" for i in range(1, 17)],
                               *[f"gb200-r4-n{i:02d}" for i in range(1, 17)]))


@case
def gb200_slice_flags(ctx):
    rc, out, err = ctx.run("assign", "--nodes", GB200, "--levels", GB200_LEVELS, "--count", "32",
                           "--request", "nvidia.com/gpu=4", "--required", SPINE,
                           "--slice-size", "16", "--slice-level", NVLINK)
    expect(rc == 0, f"exit {rc}", out, err)
    expect(out.rstrip("\n").split("\n")[-1] ==
           "placed 32 pods (128 nvidia.com/gpu) on 32 nodes, all in spine spine-b "
           "(required topology.topo.io/spine), slices of 16 per nvlink", "summary", out, err)


# --- the fragmented cluster -------------------------------------------------------------

@case
def fragmented_one_8gpu_pod_does_not_fit(ctx):
    no_fit(ctx, "--nodes", FRAG, "--levels", LEVELS5, "--count", "1",
           "--request", "nvidia.com/gpu=8", "--required", RACK,
           message='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 6; '
                   'excluded: resource "nvidia.com/gpu": 5, '
                   'taint "dedicated=inference:NoSchedule": 1', exact=True)


@case
def fragmented_4x2_fit_in_rack_1(ctx):
    # rack-1: n1 1, n2 2, n4 1 = 4 slots; rack-2: 3 (n2 is tainted).
    assign_json(ctx, "--nodes", FRAG, "--levels", LEVELS5, "--count", "4",
                "--request", "nvidia.com/gpu=2", "--required", RACK,
                want={"levels": ["kubernetes.io/hostname"],
                      "domains": [{"values": ["frag-r1-n1"], "count": 1},
                                  {"values": ["frag-r1-n2"], "count": 2},
                                  {"values": ["frag-r1-n4"], "count": 1}]})


@case
def fragmented_podset_pod_with_toleration(ctx):
    assign_json(ctx, "--nodes", FRAG, "--levels", LEVELS5,
                "--podset", "fixtures/podsets/pod-preferred-rack.json",
                want=hostnames("frag-r1-n2"))


@case
def fragmented_show(ctx):
    rc, out, err = ctx.run("show", "--nodes", FRAG, "--levels", LEVELS5)
    expect(rc == 0, f"exit {rc}", out, err)
    for pattern in [r"^topology \"default\": datacenter > spine > leaf > rack > hostname",
                    r"^dc1\s+16/48 free, max 4 on one node, 6 nodes$",
                    r"^.*── rack-1\s+8/24 free, max 4 on one node, 3 nodes$",
                    r"^.*── frag-r1-n2\s+4/8 free$",
                    r"^total: 16/48 nvidia.com/gpu free on 6 eligible nodes, max 4 on one node$",
                    r"^excluded nodes \(2, not counted\): frag-r1-n3 \(NotReady\), "
                    r"frag-r2-n4 \(unschedulable\)$",
                    r"^tainted nodes \(1, .*\): frag-r2-n2 \(dedicated=inference:NoSchedule\)$"]:
        expect(re.search(pattern, out, re.M) is not None, f"no line matching {pattern!r}", out, err)
    expect("frag-r1-n3" not in out.split("total:")[0], "NotReady node in the tree", out, err)


# --- kubectl dumps ------------------------------------------------------------------------

@case
def kubectl_nodes_and_pods(ctx):
    # a100-r1-a: 8 - 4 (train-0) - 2 (infer-0) = 2 free; a100-r1-b tainted;
    # a100-r2-a: the TAS pod uses all 8; a100-r2-b NotReady.
    assign_json(ctx, "--nodes", KNODES, "--pods", KPODS, "--levels", LEVELS5, "--count", "1",
                "--request", "nvidia.com/gpu=2", "--required", RACK,
                want=hostnames("a100-r1-a"))
    no_fit(ctx, "--nodes", KNODES, "--pods", KPODS, "--levels", LEVELS5, "--count", "1",
           "--request", "nvidia.com/gpu=4", "--required", RACK,
           message='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 3; '
                   'excluded: resource "nvidia.com/gpu": 2, '
                   'taint "nvidia.com/gpu=present:NoSchedule": 1', exact=True)


@case
def kubectl_nodes_without_pods(ctx):
    assign_json(ctx, "--nodes", KNODES, "--levels", LEVELS5, "--count", "1",
                "--request", "nvidia.com/gpu=8", "--required", RACK,
                want=hostnames("a100-r1-a"))


@case
def kubectl_show(ctx):
    rc, out, err = ctx.run("show", "--nodes", KNODES, "--pods", KPODS, "--levels", LEVELS5)
    expect(rc == 0, f"exit {rc}", out, err)
    for pattern in [r"^total: 10/24 nvidia.com/gpu free on 3 eligible nodes, max 8 on one node$",
                    r"^excluded nodes \(1, not counted\): a100-r2-b \(NotReady\)$",
                    r"^pods on nodes outside the topology \(not counted\): 1$"]:
        expect(re.search(pattern, out, re.M) is not None, f"no line matching {pattern!r}", out, err)


@case
def show_hgx_cpu(ctx):
    rc, out, err = ctx.run("show", "--nodes", HGX, "--levels", "topology.topo.io/spine,topology.topo.io/rack",
                           "--resource", "cpu")
    expect(rc == 0, f"exit {rc}", out, err)
    expect(re.search(r"^spine-a\s+3360/3584 free, max 224 on one node, 16 nodes$", out, re.M) is not None,
           "spine-a cpu line", out, err)


# --- bad input: exit 2, one line on stderr naming the problem ------------------------------

def assign_args(nodes=HGX, extra=()):
    return ["--nodes", nodes, "--levels", LEVELS5, *extra]


BASIC = ("--count", "1", "--request", "nvidia.com/gpu=8", "--required", RACK)


@case
def bad_json(ctx):
    bad_input(ctx, *assign_args("fixtures/inventory/nodes-syntax-error.json", BASIC),
              contains="nodes-syntax-error.json:6:59: string or '}' expected near '}'")


@case
def bad_yaml_line_column(ctx):
    bad_input(ctx, *assign_args("fixtures/inventory/cluster-syntax-error.yaml", BASIC),
              contains="cluster-syntax-error.yaml:8:4: did not find expected '-' indicator")


@case
def bad_fixture_field(ctx):
    bad_input(ctx, *assign_args("fixtures/inventory/cluster-unknown-field.yaml", BASIC),
              contains="nodes[0].alocatable: unknown field")


@case
def bad_node_quantity(ctx):
    bad_input(ctx, *assign_args("fixtures/inventory/nodes-bad-quantity.json", BASIC),
              contains='items[1].status.allocatable.cpu: invalid quantity "abc"')


@case
def bad_pod_quantity(ctx):
    bad_input(ctx, *assign_args(HGX, ("--pods", "fixtures/inventory/pods-bad-request.json", *BASIC)),
              contains='items[1].spec.containers[0].resources.requests.nvidia.com/gpu: '
                       'invalid quantity "eight"')


@case
def duplicate_node_names(ctx):
    bad_input(ctx, *assign_args("fixtures/inventory/nodes-duplicate.json", BASIC),
              contains='items[2].metadata.name: duplicate node name "gpu-1"')
    # The same cluster given twice.
    bad_input(ctx, "--nodes", HGX, *assign_args(HGX, BASIC),
              contains='nodes[0].name: duplicate node name "h100-r01-n1"')


@case
def missing_file(ctx):
    bad_input(ctx, *assign_args("fixtures/clusters/no-such-file.json", BASIC),
              contains="no-such-file.json: No such file or directory")


@case
def oversized_file(ctx):
    # One byte over TOPO_MAX_INVENTORY_FILE (512 MiB), sparse: refused before reading.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "huge.json")
        with open(path, "wb") as f:
            f.truncate(512 * 1024 * 1024 + 1)
        bad_input(ctx, *assign_args(path, BASIC),
                  contains="huge.json: file is larger than the limit of 536870912 bytes")
        bad_input(ctx, "--nodes", HGX, "--pods", path, "--levels", LEVELS5, cmd="show",
                  contains="larger than the limit")


@case
def unknown_level(ctx):
    bad_input(ctx, *assign_args(HGX, ("--count", "1", "--request", "nvidia.com/gpu=8",
                                      "--required", "topology.topo.io/row")),
              contains='--required: unknown level "topology.topo.io/row" (not in --levels:')
    bad_input(ctx, *assign_args(HGX, ("--count", "2", "--request", "nvidia.com/gpu=8",
                                      "--required", RACK, "--slice-size", "2",
                                      "--slice-level", "topology.topo.io/nvlink")),
              contains='--slice-level: unknown level "topology.topo.io/nvlink"')
    # From a manifest: the annotation is named.
    bad_input(ctx, "--nodes", GB200, "--levels", "topology.topo.io/spine,kubernetes.io/hostname",
              "--podset", "fixtures/podsets/job-gb200-slices.yaml",
              contains='kueue.x-k8s.io/podset-slice-required-topology: unknown level '
                       '"topology.topo.io/nvlink"')


@case
def bad_count(ctx):
    for count, msg in [("0", "--count: must be between 1 and 150000, got 0"),
                       ("-3", "--count: must be between 1 and 150000, got -3"),
                       ("four", '--count: expected an integer, got "four"'),
                       ("2000000", "--count: must be between 1 and 150000, got 2000000")]:
        bad_input(ctx, *assign_args(HGX, ("--count", count, "--request", "nvidia.com/gpu=8",
                                          "--required", RACK)), contains=msg)


@case
def bad_request(ctx):
    for req, msg in [("nvidia.com/gpu=eight", '--request: nvidia.com/gpu: invalid quantity "eight"'),
                     ("cpu=1x", '--request: cpu: invalid quantity "1x"'),
                     ("gpu", '--request: expected NAME=QUANTITY, got "gpu"'),
                     ("nvidia.com/gpu=8,nvidia.com/gpu=4", "--request: nvidia.com/gpu given twice"),
                     ("nvidia.com/gpu=-1", "--request: nvidia.com/gpu: must not be negative")]:
        bad_input(ctx, *assign_args(HGX, ("--count", "1", "--request", req, "--required", RACK)),
                  contains=msg)


@case
def missing_and_conflicting_flags(ctx):
    bad_input(ctx, "--levels", LEVELS5, *BASIC, contains="--nodes: required")
    bad_input(ctx, "--nodes", HGX, *BASIC, contains="--levels: required")
    bad_input(ctx, *assign_args(HGX, ("--request", "nvidia.com/gpu=8", "--required", RACK)),
              contains="--count: required")
    bad_input(ctx, *assign_args(HGX, ("--count", "1", "--required", RACK)),
              contains="--request: required")
    bad_input(ctx, *assign_args(HGX, ("--count", "1", "--request", "nvidia.com/gpu=8")),
              contains="one of --required LEVEL, --preferred LEVEL or --unconstrained is required")
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--preferred", RACK)),
              contains="--required, --preferred and --unconstrained are mutually exclusive")
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--unconstrained")),
              contains="mutually exclusive")
    bad_input(ctx, *assign_args(HGX, ("--count", "4", "--request", "nvidia.com/gpu=8",
                                      "--required", SPINE, "--slice-size", "2")),
              contains="--slice-size and --slice-level go together")
    bad_input(ctx, *assign_args(HGX, ("--count", "4", "--request", "nvidia.com/gpu=8",
                                      "--required", SPINE, "--slice-size", "8",
                                      "--slice-level", RACK)),
              contains="--slice-size: must be between 1 and 4, got 8")
    bad_input(ctx, *assign_args(HGX, ("--podset", "fixtures/podsets/job-rack-4x8.yaml",
                                      "--count", "2")),
              contains="--count: cannot be combined with --podset")
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--bogus")), contains="unknown option '--bogus'")
    bad_input(ctx, *assign_args(HGX, (*BASIC, "extra")), contains="unexpected argument 'extra'")
    # given again, the last value wins (as kubectl's flags): 2 pods, not 1
    rc, out, err = ctx.run("assign", *assign_args(HGX, (*BASIC, "--count", "2")))
    expect(rc == 0 and "placed 2 pods" in out, f"exit {rc}, want 0 and 2 pods placed", out, err)
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--required")), contains="--required: missing value")
    bad_input(ctx, *assign_args(HGX, (*BASIC, "-o", "xml")),
              contains='--output: expected table, json or yaml, got "xml"')
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--gate", "NoSuchGate=true")),
              contains='--gate: unknown feature gate "NoSuchGate"')
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--gate", "TASProfileMixed")),
              contains='--gate: expected NAME=true|false, got "TASProfileMixed"')
    bad_input(ctx, *assign_args(HGX, (*BASIC, "--node-label", "novalue")),
              contains='--node-label: expected KEY=VALUE, got "novalue"')
    bad_input(ctx, "--nodes", HGX, "--levels", "kubernetes.io/hostname," + RACK, *BASIC,
              contains="--levels: level 1: kubernetes.io/hostname must be the last level")
    bad_input(ctx, "--nodes", HGX, "--levels", RACK + "," + RACK, *BASIC,
              contains="--levels: level 2: duplicate level topology.topo.io/rack")
    bad_input(ctx, "--nodes", HGX, "--levels", RACK + ",,x", *BASIC,
              contains="--levels: level 2 is empty")


@case
def bad_podsets(ctx):
    bad_input(ctx, *assign_args(HGX, ("--podset", "fixtures/podsets/job-two-modes.yaml")),
              contains="job-two-modes.yaml: spec.template.metadata.annotations: Invalid value: "
                       "must not contain more than one topology annotation")
    bad_input(ctx, *assign_args(HGX, ("--podset", "fixtures/podsets/job-slice-too-big.yaml")),
              contains="spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: "
                       'Invalid value: "8": must not be greater than pod set count 4')
    bad_input(ctx, *assign_args(HGX, ("--podset", "fixtures/clusters/hgx-h100.yaml")),
              contains="hgx-h100.yaml: kind: required")


@case
def extreme_pods_request(ctx):
    # Issue 9: 2^63-1 pods overflowed when the engine added the pod itself,
    # then divided by zero. Now it fits no node (110 pods each).
    no_fit(ctx, *assign_args(HGX, ("--count", "1", "--request", "pods=9223372036854775807",
                                   "--unconstrained")),
           message='topology "default" doesn\'t allow to fit any of 1 pod(s)')


@case
def kueue_annotation_table(ctx):
    """Every case of fixtures/kueue/annotations as a Pod manifest through the
    real binary: Kueue's message (exit 2) for an invalid request, a placement
    or Kueue's failure (exit 0 or 1) for a valid one. The webhook half of the
    table is test/admission/test_kueue_table.c."""
    table = os.path.join(ctx.source, "fixtures", "kueue", "annotations")
    names = sorted(n for n in os.listdir(table) if n.endswith(".json"))
    expect(len(names) >= 40, f"only {len(names)} cases")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            with open(os.path.join(table, name)) as f:
                c = json.load(f)
            ann = dict(c["annotations"])
            if c["count"] > 1:
                ann["topology.topo.io/podset-size"] = str(c["count"])
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "annotations": ann},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                json.dump(pod, f)
            rc, out, err = ctx.run("assign", "--nodes", HGX, "--levels", LEVELS5,
                                   "--podset", path, "-o", "json")
            if "error" in c["expect"]:
                want = f"topoassign assign: {path}: {c['expect']['error']}\n"
                expect(rc == 2 and err == want, f"{name}: exit {rc}, want 2 and\n{want}", out, err)
            else:
                expect(rc in (0, 1), f"{name}: exit {rc}, want 0 or 1", out, err)
                if rc == 0:
                    expect(json.loads(out)["domains"], f"{name}: no domains", out, err)


@case
def show_bad_input(ctx):
    bad_input(ctx, "--nodes", HGX, cmd="show", contains="--levels: required")
    bad_input(ctx, "--levels", LEVELS5, cmd="show", contains="--nodes: required")
    bad_input(ctx, "--nodes", "fixtures/inventory/cluster-syntax-error.yaml", "--levels", LEVELS5,
              cmd="show", contains="cluster-syntax-error.yaml:8:4:")
    bad_input(ctx, "--nodes", HGX, "--levels", LEVELS5, "--count", "3", cmd="show",
              contains="unknown option '--count'")


SIM_TRACE = "fixtures/simulate/hgx-small.csv"


def simulate_json(ctx, *args):
    rc, out, err = ctx.run("simulate", *args, "-o", "json", "-q")
    expect(rc == 0, f"exit {rc}", out, err)
    return json.loads(out)


@case
def simulate_fixture_trace(ctx):
    # hgx-h100.yaml with fixtures/simulate/hgx-small.csv: too-big (40 nodes)
    # never fits; the other six run under every policy. topo keeps the two
    # required-rack jobs in one rack each and auto-1 (2 nodes) in its
    # tightest level; the four multi-node jobs are the same for everyone.
    doc = simulate_json(ctx, "--nodes", HGX, "--levels", LEVELS5, "--trace", SIM_TRACE)
    expect(doc["simulate"]["nodes"] == 32 and doc["simulate"]["capacity"] == 194,
           f"inputs {doc['simulate']}")
    for name, m in doc["policies"].items():
        expect(m["placed"] == 6 and m["unplaceable"] == 1 and m["multi_node_jobs"] == 4,
               f"{name}: {m}")
    topo = doc["policies"]["topo"]
    expect(topo["tight_share"] >= 0.75, f"topo tight_share {topo['tight_share']}")
    for name in ("kube-default", "first-fit", "best-fit", "random"):
        expect(topo["tight_share"] > doc["policies"][name]["tight_share"], f"topo vs {name}")


PUBLIC_TRACES = "fixtures/simulate/traces"


@case
def simulate_public_traces(ctx):
    # Each public trace's fixtures through --trace-format on 16 nodes of 8
    # GPUs: the jobs the rows give (counted by hand in
    # fixtures/simulate/traces/README.md), one summary line on stderr, and
    # --trace-out's topo CSV replays to the same results.
    for name, fmt, jobs, summary in [
        ("helios.csv", "helios", 3, "3 rows, 3 jobs; skipped 0 no-gpu, 0 not-started"),
        ("helios-constructed.csv", "helios", 4,
         "8 rows, 4 jobs; skipped 1 no-gpu, 1 not-started, 1 no-end, 1 zero-run; "
         "1 rounded up to whole nodes"),
        ("philly.csv", "philly", 1, "1 rows, 1 jobs"),
        ("philly-constructed.csv", "philly", 2, "5 rows, 2 jobs; skipped 1 no-gpu"),
        ("acme-seren.csv", "acme", 2, "2 rows, 2 jobs"),
        ("acme-kalos.csv", "acme", 2, "2 rows, 2 jobs"),
        ("acme-constructed.csv", "acme", 2, "5 rows, 2 jobs"),
        ("pai.csv", "pai", 1, "1 rows, 1 jobs; skipped 0 no-gpu, 0 not-started, 0 no-end, "
         "0 zero-run; 0 rounded up to whole nodes, 1 fractional GPUs rounded up"),
        ("pai-constructed.csv", "pai", 4, "8 rows, 4 jobs"),
    ]:
        path = os.path.join(PUBLIC_TRACES, name)
        args = ["--shape", "hgx-h100", "--shape-nodes", "16", "--policies", "topo,first-fit",
                "-o", "json", "-q"]
        with tempfile.TemporaryDirectory() as tmp:
            out_csv = os.path.join(tmp, "mapped.csv")
            rc, out, err = ctx.run("simulate", *args, "--trace", path, "--trace-format", fmt,
                                   "--trace-out", out_csv)
            expect(rc == 0, f"{name}: exit {rc}", out, err)
            lines = err.splitlines()
            expect(len(lines) == 1 and lines[0].startswith(f"topoassign simulate: {path}: ")
                   and summary in lines[0], f"{name}: stderr {err!r}")
            doc = json.loads(out)
            expect(doc["simulate"]["jobs"] == f"{path} ({fmt} trace)", f"{name}: {doc['simulate']}")
            for pol, m in doc["policies"].items():
                expect(m["jobs"] == jobs and m["placed"] == jobs, f"{name} {pol}: {m}")
            rc, out2, err2 = ctx.run("simulate", *args, "--trace", out_csv)
            expect(rc == 0 and err2 == "", f"{name}: replay exit {rc}", out2, err2)
            expect(json.loads(out2)["policies"] == doc["policies"], f"{name}: replay differs")


@case
def simulate_public_trace_errors(ctx):
    shape = ["--shape", "hgx-h100"]
    for args, msg in [
        (["--trace", os.path.join(PUBLIC_TRACES, "pai.csv"), "--trace-format", "helios"],
         "pai.csv:1: expected a header naming the columns (helios reads job_id, gpu_num, "
         "submit_time, start_time, end_time, duration)"),
        (["--trace", os.path.join(PUBLIC_TRACES, "philly.csv"), "--trace-format", "acme"],
         "philly.csv:1: header: no column \"job_id\""),
        (["--trace", os.path.join(PUBLIC_TRACES, "helios.csv"), "--trace-format", "slurm"],
         "--trace-format"),
        (["--jobs", "5", "--trace-format", "pai"], "--trace-format: says how to read --trace"),
    ]:
        rc, out, err = ctx.run("simulate", *shape, *args)
        expect(rc == 2 and msg in err and out == "", f"{args}: want {msg!r}", out, err)


@case
def simulate_common_jobs_and_warmup(ctx):
    # "common": the six jobs every policy placed (too-big never fits), the
    # same job-level keys as "policies" without the window's. --warmup
    # moves the window's start; past the last arrival it is refused.
    args = ["--nodes", HGX, "--levels", LEVELS5, "--trace", SIM_TRACE]
    doc = simulate_json(ctx, *args)
    common = doc["common"]
    expect(common["jobs"] == 6 and set(common["policies"]) == set(doc["policies"]),
           f"common {common}")
    for name, m in common["policies"].items():
        own = doc["policies"][name]
        expect(m["placed"] == 6 and m["unplaceable"] == 0 and "utilisation" not in m and
               m["jct_mean_s"] == own["jct_mean_s"], f"{name}: {m}")
    span = doc["policies"]["topo"]["window_s"]
    late = simulate_json(ctx, *args, "--warmup", str(span / 2))
    expect(late["policies"]["topo"]["window_s"] == span - span / 2,
           f"window {late['policies']['topo']['window_s']} of {span}")
    expect(late["policies"]["topo"]["jobs"] < doc["policies"]["topo"]["jobs"], "jobs counted")
    rc, out, err = ctx.run("simulate", *args, "--warmup", str(span + 1))
    expect(rc == 2 and out == "" and f"--warmup: {span + 1:g} s is longer than the arrivals' "
           f"span ({span:g} s" in err, "warmup past the span", out, err)


@case
def simulate_report_same_jobs_and_stretched(ctx):
    # The HTML report says what the table says: how many jobs each policy
    # left unplaced, the figures over the jobs every policy placed, and the
    # stretched run (too-big never fits; topo and best-fit place the rest).
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "r.html")
        rc, out, err = ctx.run("simulate", "--nodes", HGX, "--levels", LEVELS5, "--trace",
                               SIM_TRACE, "--policies", "topo,best-fit", "-q", "--report", page)
        expect(rc == 0, f"exit {rc}", out, err)
        with open(page, encoding="utf-8") as f:
            html = f.read()
    for want in ('<td class="h" colspan="3">over the 6 jobs every policy placed</td>',
                 "<tr><td>  left unplaced (not counted)</td><td>1</td><td>1</td></tr>",
                 "<tr><td>  completion time mean</td>",
                 '<td class="h" colspan="3">with the slowdown applied (a second run)</td>',
                 "<tr><td>  job completion mean</td>"):
        expect(want in html, f"report lacks {want!r}")


@case
def simulate_outputs_checked_first(ctx):
    # An output that cannot be written fails before anything runs, names its
    # flag and leaves stdout empty; a run that fails after opening its
    # outputs leaves none behind; a trace with no jobs, or --stretched with
    # --apply-slowdown, is refused.
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.csv")
        open(empty, "w").close()
        report = os.path.join(tmp, "r.html")
        for args, msg in [
            (["--jobs", "30", "--timeline", os.path.join(tmp, "no", "t.csv")],
             f"--timeline: {tmp}/no/t.csv: No such file or directory"),
            (["--jobs", "30", "--report", tmp], f"--report: {tmp}: Is a directory"),
            (["--jobs", "30", "--timeline", "/dev/full"], "--timeline: /dev/full: write failed"),
            (["--trace", empty], f"--trace: {empty}: no jobs to replay"),
            (["--trace", empty, "--trace-format", "helios"], f"--trace: {empty}: no jobs"),
            (["--jobs", "30", "--apply-slowdown", "--stretched", "true"],
             "--stretched: not with --apply-slowdown"),
            (["--jobs", "30", "--report", report, "--warmup", "1e8"], "--warmup: "),
        ]:
            rc, out, err = ctx.run("simulate", "--shape", "hgx-h100", "--shape-nodes", "8", "-q",
                                   *args)
            expect(rc == 2 and out == "" and msg in err, f"{args}: want {msg!r}", out, err)
        expect(not os.path.exists(report), "a failed run left its report behind")


@case
def simulate_preset_cut_said(ctx):
    # A preset whose largest jobs do not fit half the cluster: the jobs text
    # says how much of the preset's jobs and GPU time was left out (acme on
    # 512 GPUs); one that fits whole says nothing of it.
    doc = simulate_json(ctx, "--shape", "hgx-h100", "--shape-nodes", "64", "--jobs", "200",
                        "--preset", "acme", "--policies", "topo")
    m = re.search(r"left out: ([\d.]+)% of the preset's jobs, ([\d.]+)% of its GPU time",
                  doc["simulate"]["jobs"])
    expect(m is not None and 0 < float(m.group(1)) < float(m.group(2)) < 100,
           f"jobs text {doc['simulate']['jobs']!r}")
    doc = simulate_json(ctx, "--shape", "hgx-h100", "--jobs", "200", "--preset", "philly",
                        "--policies", "topo")
    expect("left out" not in doc["simulate"]["jobs"], f"jobs text {doc['simulate']['jobs']!r}")


@case
def simulate_mixed_pack(ctx):
    # Issue 32: the same generated jobs under mixed and mixed-pack. Steering
    # the pods without a request into used racks keeps racks whole: more
    # multi-node jobs in one domain, less free capacity on partly used
    # nodes; the same jobs either way. --pack-level picks another level and
    # a level the cluster lacks is refused by name.
    args = ("--shape", "hgx-h100", "--jobs", "3000", "--preset", "philly", "--seed", "1",
            "--policies", "mixed,mixed-pack", "--stretched", "false")
    doc = simulate_json(ctx, *args)
    mixed, pack = doc["policies"]["mixed"], doc["policies"]["mixed-pack"]
    expect(mixed["placed"] == pack["placed"] == 3000, f"placed {mixed} {pack}")
    expect(pack["tight_share"] > mixed["tight_share"] + 0.15,
           f"tight share {mixed['tight_share']} -> {pack['tight_share']}")
    expect(pack["fragmentation"] < mixed["fragmentation"] / 2,
           f"fragmentation {mixed['fragmentation']} -> {pack['fragmentation']}")
    again = simulate_json(ctx, *args)
    expect(again == doc, "the same seed gave other figures")
    # The level packed into is recorded, the default resolved (the level
    # above the hostname), and only when a run packs.
    expect(doc["simulate"].get("pack_level") == "topology.topo.io/rack",
           f"pack_level {doc['simulate'].get('pack_level')}")
    plain = simulate_json(ctx, *args[:-4], "--policies", "mixed", "--stretched", "false")
    expect("pack_level" not in plain["simulate"], f"pack_level without mixed-pack: {plain}")
    leaf = simulate_json(ctx, *args, "--pack-level", "topology.topo.io/leaf")
    expect(leaf["simulate"]["pack_level"] == "topology.topo.io/leaf", "--pack-level not recorded")
    expect(leaf["policies"]["mixed"] == mixed, "--pack-level changed mixed")
    expect(leaf["policies"]["mixed-pack"] != pack, "--pack-level changed nothing")
    rc, out, err = ctx.run("simulate", *args, "--pack-level", "zone", "-q")
    expect(rc != 0 and '--pack-level: "zone" is not one of the levels' in err,
           f"exit {rc}", out, err)
    # Without mixed-pack nothing reads --pack-level: given anyway (a typo
    # would pass unseen), it is refused; a cluster with nothing above the
    # hostname cannot be packed, and the message says so, not --pack-level.
    rc, out, err = ctx.run("simulate", "--shape", "hgx-h100", "--jobs", "50", "--policies",
                           "topo,mixed", "--pack-level", "zone", "-q")
    expect(rc == 2 and out == "" and "--pack-level: only the mixed-pack policy packs" in err,
           f"exit {rc}", out, err)
    rc, out, err = ctx.run("simulate", "--nodes", HGX, "--levels", "kubernetes.io/hostname",
                           "--jobs", "50", "--policies", "mixed-pack", "-q")
    expect(rc == 2 and "mixed-pack: the cluster has no level above the hostname" in err,
           f"exit {rc}", out, err)


@case
def simulate_kubectl_dump_and_db(ctx):
    # The kubectl dumps (a tainted node counts: every simulated job
    # tolerates taints) and the same cluster through a cache file give the
    # same results.
    args = ["--levels", LEVELS5, "--jobs", "200", "--preset", "helios", "--seed", "5"]
    a = simulate_json(ctx, "--nodes", KNODES, "--pods", KPODS, *args)
    expect(a["simulate"]["nodes"] == 3, f"nodes {a['simulate']}")
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "c.db")
        rc, out, err = ctx.run("cache", "import", "--db", db, "--nodes", KNODES, "--pods", KPODS)
        expect(rc == 0, f"import exit {rc}", out, err)
        b = simulate_json(ctx, "--db", db, *args)
    expect(a["policies"] == b["policies"], "--db differs from the dumps")


@case
def simulate_flag_errors(ctx):
    for args, msg in [
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--shape", "hgx-h100"],
         "--shape: not with --nodes, --pods or --db"),
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--shape-nodes", "8"],
         "scale a --shape"),
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--slice", "rack"],
         "--slice: expected LEVEL:SIZE, got \"rack\""),
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--tier", "rack=leaf"],
         "--tier: \"rack\" is not one of the levels"),
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--seed", "-1"],
         "--seed: expected a non-negative integer, got \"-1\""),
        (["--nodes", HGX, "--levels", LEVELS5, "--jobs", "5", "--seed", "18446744073709551616"],
         "--seed: must be between 0 and 9223372036854775807, got 18446744073709551616"),
        (["--shape", "hgx-h100", "--trace", "fixtures/simulate/missing.csv", "--load", "0.8"],
         "shape generated jobs, not --trace"),
        (["--nodes", HGX, "--levels", LEVELS5, "--trace", "fixtures/simulate/missing.csv"],
         "missing.csv"),
    ]:
        rc, out, err = ctx.run("simulate", *args)
        expect(rc == 2 and msg in err and out == "", f"{args}: want {msg!r}", out, err)


SIM_COST_MODEL = "fixtures/simulate/cost-model.yaml"
SIM_SMALL = ["--nodes", HGX, "--levels", LEVELS5, "--trace", SIM_TRACE]


def slowdowns(doc):
    return {name: m["slowdown_mean"] for name, m in doc["policies"].items()}


@case
def simulate_cost_model_file(ctx):
    # The sample file is the defaults; a file's costs change the slowdown,
    # and each --cost-*/--comm-* flag given wins over the file.
    base = simulate_json(ctx, *SIM_SMALL)
    expect(any(v > 1 for v in slowdowns(base).values()), f"no slowdown {slowdowns(base)}")
    same = simulate_json(ctx, *SIM_SMALL, "--cost-model", SIM_COST_MODEL)
    expect(same["policies"] == base["policies"], "the sample file is not the default")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cost.yaml")
        with open(path, "w") as f:
            f.write("tiers: {leaf: 5, spine: 5, cluster: 5}\ncommunication: {large: 0.9}\n")
        dear = simulate_json(ctx, *SIM_SMALL, "--cost-model", path)
        for name, v in slowdowns(dear).items():
            expect(v >= slowdowns(base)[name], f"{name}: {v} < {slowdowns(base)[name]}")
        expect(slowdowns(dear) != slowdowns(base), "the file changed nothing")
        back = simulate_json(ctx, *SIM_SMALL, "--cost-model", path, "--cost-leaf", "1.2",
                             "--cost-spine", "2.4", "--cost-cluster", "4.8", "--comm-large", "0.3")
        expect(back["policies"] == base["policies"], "flags do not override the file")
        # -o json names the model the runs used, in a --cost-model file's
        # form: written out and read back, it reproduces the run.
        expect(base["simulate"]["cost_model"] ==
               {"tiers": {"nvlink": 1.0, "leaf": 1.2, "spine": 2.4, "cluster": 4.8},
                "communication": {"small": 0.15, "large": 0.3}},
               f"default model {base['simulate'].get('cost_model')}")
        expect(dear["simulate"]["cost_model"]["tiers"]["leaf"] == 5 and
               dear["simulate"]["cost_model"]["communication"]["large"] == 0.9,
               f"file model {dear['simulate'].get('cost_model')}")
        again = os.path.join(tmp, "again.json")
        with open(again, "w") as f:
            json.dump(dear["simulate"]["cost_model"], f)
        redo = simulate_json(ctx, *SIM_SMALL, "--cost-model", again)
        expect(redo["policies"] == dear["policies"],
               "the recorded model does not reproduce the run")
        with open(path, "w") as f:
            f.write("tiers:\n  leaf: 3\n  spine: 2\n")
        rc, out, err = ctx.run("simulate", *SIM_SMALL, "--cost-model", path)
        expect(rc == 2 and out == "" and
               f"{path}:3:10: tiers.spine: 2 is below tiers.leaf (3)" in err, "order", out, err)
        with open(path, "w") as f:
            f.write("tiers: {leaf: 2}\nshares: {small: 0.1}\n")
        rc, out, err = ctx.run("simulate", *SIM_SMALL, "--cost-model", path)
        expect(rc == 2 and f"{path}:2:9: shares: unknown field" in err, "unknown key", out, err)
        # A flag sets its value alone: it keeps the order a file must keep,
        # and the message says which flag and which value it broke it with.
        with open(path, "w") as f:
            f.write("tiers: {leaf: 2}\n")
        for args, msg in [
            (["--cost-spine", "1"], "--cost-spine 1 is below the default leaf cost 1.2"),
            (["--cost-leaf", "3"], "the default spine cost 2.4 is below --cost-leaf 3"),
            (["--cost-model", path, "--cost-nvlink", "3"],
             f"{path}'s leaf cost 2 is below --cost-nvlink 3"),
            (["--cost-leaf", "500"], "--cost-leaf: expected a number within [1, 100]"),
            (["--cost-nvlink", "0.5"], "--cost-nvlink: expected a number within [1, 100]"),
        ]:
            rc, out, err = ctx.run("simulate", *SIM_SMALL, *args)
            expect(rc == 2 and out == "" and msg in err, f"{args}: want {msg!r}", out, err)
    rc, out, err = ctx.run("simulate", *SIM_SMALL, "--cost-model", "fixtures/simulate/none.yaml")
    expect(rc == 2 and "none.yaml" in err, "missing file", out, err)


@case
def simulate_stretched_beside_unstretched(ctx):
    # By default each policy also runs stretched: its completion, goodput,
    # queue p99 and makespan sit beside the unstretched metrics (which stay
    # as they were: --stretched false gives the same policies without it).
    keys = ["jct_mean_s", "jct_p99_s", "goodput", "queue_p99_s", "makespan_s"]
    doc = simulate_json(ctx, *SIM_SMALL)
    for name, m in doc["policies"].items():
        expect(list(m.get("stretched", {})) == keys, f"{name}: {m.get('stretched')}")
        expect(m["stretched"]["makespan_s"] >= m["makespan_s"], f"{name}: stretched shorter")
    off = simulate_json(ctx, *SIM_SMALL, "--stretched", "false")
    expect(all("stretched" not in m for m in off["policies"].values()), "--stretched false")
    for name, m in doc["policies"].items():
        m = dict(m)
        del m["stretched"]
        expect(m == off["policies"][name], f"{name}: the unstretched run changed")
    # --apply-slowdown's runs are the stretched ones: no second run.
    applied = simulate_json(ctx, *SIM_SMALL, "--apply-slowdown")
    expect(all("stretched" not in m for m in applied["policies"].values()), "--apply-slowdown")
    rc, out, err = ctx.run("simulate", *SIM_SMALL, "-q")
    expect(rc == 0 and "with the slowdown applied (a second run)" in out and
           "  job completion p99" in out, "table", out, err)


@case
def simulate_cost_sweep(ctx):
    # 4 cost factors x 3 share factors; the slowdown grows with their
    # product for every policy whose jobs leave their NVLink domain.
    doc = simulate_json(ctx, *SIM_SMALL, "--cost-sweep")
    rows = doc["cost_sweep"]
    expect([(r["cost_factor"], r["share_factor"]) for r in rows] ==
           [(a, b) for a in (0.5, 1, 1.5, 2) for b in (0.5, 1, 2)], f"grid {rows}")
    for name, s in slowdowns(doc).items():
        if s <= 1:
            continue
        by_k = sorted((r["cost_factor"] * r["share_factor"], r["policies"][name]["slowdown_mean"])
                      for r in rows)
        for (k0, v0), (k1, v1) in zip(by_k, by_k[1:]):
            expect(v1 > v0 if k1 > k0 else v1 == v0, f"{name}: {by_k}")
        one = [r for r in rows if r["cost_factor"] == 1 and r["share_factor"] == 1][0]
        expect(abs(one["policies"][name]["slowdown_mean"] - s) < 1e-6, f"{name} at 1x")
    rc, out, err = ctx.run("simulate", *SIM_SMALL, "--cost-sweep", "-q")
    expect(rc == 0 and "cost sweep:" in out and "  2x, 2x" in out, "table", out, err)
    rc, out, err = ctx.run("simulate", *SIM_SMALL, "--cost-sweep", "--apply-slowdown")
    expect(rc == 2 and "--cost-sweep: not with --apply-slowdown" in err, "with apply", out, err)


@case
def simulate_seeds(ctx):
    # --seeds 1-3: every figure the mean of three runs, "ci95" beside it
    # with the same keys; the same seeds give the same bytes; --seeds 3 is
    # 1-3; one seed is the --seed run, byte for byte.
    args = ["--shape", "hgx-h100", "--shape-nodes", "32", "--jobs", "150",
            "--policies", "topo,random"]
    rc, out, err = ctx.run("simulate", *args, "--seeds", "1-3", "-o", "json", "-q")
    expect(rc == 0, f"exit {rc}", out, err)
    doc = json.loads(out)
    expect(doc["simulate"]["seeds"] == [1, 2, 3], f"seeds {doc['simulate']}")
    runs = [simulate_json(ctx, *args, "--seed", str(s)) for s in (1, 2, 3)]
    for name, m in doc["policies"].items():
        ci = m["ci95"]
        keys = [k for k in m if k not in ("ci95", "stretched")]
        expect(list(ci) == keys, f"{name}: ci95 keys {list(ci)} vs {keys}")
        expect(len(ci["jct_mean_s"]) == 2, f"{name}: ci95.jct_mean_s {ci['jct_mean_s']}")
        # The stretched runs and the same-jobs view: means of the three
        # seeds' own figures, each with its interval.
        st = m["stretched"]
        expect(list(st["ci95"]) == [k for k in st if k != "ci95"], f"{name}: stretched {st}")
        com = doc["common"]["policies"][name]
        expect(list(com["ci95"]) == [k for k in com if k != "ci95"], f"{name}: common {com}")
        expect("utilisation" not in com and "jct_p99_s" in com, f"{name}: common keys {com}")
        for key in ("jct_mean_s", "goodput", "queue_p99_s", "makespan_s"):
            mean = sum(r["policies"][name]["stretched"][key] for r in runs) / 3
            lo, hi = st["ci95"][key]
            expect(abs(st[key] - mean) < 1e-5 and lo <= st[key] <= hi,
                   f"{name} stretched {key}: {st[key]} [{lo}, {hi}], runs' mean {mean}")
        for key in ("jct_mean_s", "queue_p99_s", "slowdown_mean", "placed"):
            mean = sum(r["common"]["policies"][name][key] for r in runs) / 3
            lo, hi = com["ci95"][key]
            expect(abs(com[key] - mean) < 1e-5 and lo <= com[key] <= hi,
                   f"{name} common {key}: {com[key]} [{lo}, {hi}], runs' mean {mean}")
        expect(list(ci["queue_by_gpus"]["1-8"]) == ["jobs", "p50_s", "p99_s", "mean_s"],
               f"{name}: {ci['queue_by_gpus']}")
        for key in ("utilisation", "tight_share", "fragmentation", "window_s"):
            mean = sum(r["policies"][name][key] for r in runs) / 3
            lo, hi = ci[key]
            expect(abs(m[key] - mean) < 1e-5 and lo <= m[key] <= hi,
                   f"{name} {key}: {m[key]} [{lo}, {hi}], runs' mean {mean}")
    jobs = sum(r["common"]["jobs"] for r in runs) / 3
    expect(abs(doc["common"]["jobs"] - jobs) < 1e-5, f"common jobs {doc['common']['jobs']}")
    expect(doc["policies"]["topo"]["ci95"]["utilisation"][1] >
           doc["policies"]["topo"]["ci95"]["utilisation"][0], "an interval of width 0")
    rc2, out2, _ = ctx.run("simulate", *args, "--seeds", "3", "-o", "json", "-q")
    expect(rc2 == 0 and out2 == out, "--seeds 3 differs from --seeds 1-3 or from itself")
    rc, one, err = ctx.run("simulate", *args, "--seeds", "2-2", "-q")
    rc2, seed, _ = ctx.run("simulate", *args, "--seed", "2", "-q")
    expect(rc == 0 and one == seed, "--seeds 2-2 differs from --seed 2", one, seed)
    rc, table, err = ctx.run("simulate", *args, "--seeds", "1-3", "-q")
    expect(rc == 0 and "seeds 1-3" in table and " ± " in table, "table", table, err)
    for block in ("over the ", "with the slowdown applied"):
        rest = table[table.find(block):]
        expect(block in table and " ± " in rest.splitlines()[2], f"{block} block", table)
    # The report: the means with their intervals.
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "seeds.html")
        rc, out, err = ctx.run("simulate", *args, "--seeds", "1-3", "--report", report, "-q")
        expect(rc == 0, f"--report exit {rc}", out, err)
        with open(report, encoding="utf-8") as fp:
            html = fp.read()
    expect("Seeds 1 to 3" in html and " ± " in html, "report without the seeds' intervals")
    # A trace file: the same jobs every seed; topo makes no random choice,
    # so every interval of its is [x, x]; random's shuffles do differ.
    rc, out, err = ctx.run("simulate", "--nodes", HGX, "--levels", LEVELS5, "--trace", SIM_TRACE,
                           "--seeds", "1-3", "--policies", "topo,random", "-o", "json", "-q")
    expect(rc == 0, f"exit {rc}", out, err)
    pol = json.loads(out)["policies"]
    flat = [v for v in pol["topo"]["ci95"].values() if isinstance(v, list)]
    expect(all(lo == hi for lo, hi in flat), f"topo over a trace: {pol['topo']['ci95']}")
    expect(pol["random"]["ci95"]["fragmentation"][1] > pol["random"]["ci95"]["fragmentation"][0],
           f"random over a trace: {pol['random']['ci95']}")


@case
def simulate_seeds_errors(ctx):
    base = ["--shape", "hgx-h100", "--jobs", "5"]
    for args, msg in [
        (["--seeds", "3-1"], "--seeds: 3-1: the first is above the last"),
        (["--seeds", "0"], "--seeds: N must be at least 1, got 0"),
        (["--seeds", "1-3", "--seed", "4"], "--seeds: not with --seed"),
        (["--seeds", "1-101"], "--seeds: 101 seeds, at most 100"),
        (["--seeds", "x"], "--seeds: expected A-B or N, got \"x\""),
        (["--seeds", "-3"], "--seeds: expected A-B or N, got \"-3\""),
        (["--seeds", "1-2", "--trace-out", "/dev/null"], "--trace-out: writes one seed's jobs"),
        (["--seeds", "1-2", "--cost-sweep"], "--cost-sweep: sweeps one seed's runs"),
        # -o json holds seeds as signed integers: above 2^63 - 1 they would
        # print negative.
        (["--seeds", "9223372036854775807-9223372036854775808"],
         "--seeds: 9223372036854775808 is above 9223372036854775807"),
        (["--seed", "9223372036854775808"],
         "--seed: must be between 0 and 9223372036854775807"),
    ]:
        rc, out, err = ctx.run("simulate", *base, *args)
        expect(rc == 2 and msg in err and out == "", f"{args}: want {msg!r}", out, err)


@case
def generate_option_errors(ctx):
    # --usage-fraction given at its default value is still given; seeds
    # take the whole uint64 range and nothing past it.
    for args, msg in [
        (["--usage-fraction", "0.5"], "--usage-fraction needs --usage-seed"),
        (["--usage-seed", "-1", "--pods-out", "-", "-o", "/dev/null"],
         "--usage-seed: expected a non-negative integer, got \"-1\""),
        (["--usage-seed", "x", "--pods-out", "-", "-o", "/dev/null"],
         "--usage-seed: expected an integer, got \"x\""),
    ]:
        rc, out, err = ctx.run("generate", "--nodes", "8", *args)
        expect(rc == 2 and msg in err and out == "", f"{args}: want {msg!r}", out, err)
    rc, out, err = ctx.run("generate", "--nodes", "8", "--usage-seed", "18446744073709551615",
                           "--pods-out", "-", "-o", "/dev/null")
    expect(rc == 0 and json.loads(out)["kind"] == "List", "largest seed", out, err)


@case
def help(ctx):
    for cmd in ("assign", "show", "simulate"):
        rc, out, err = ctx.run(cmd, "--help")
        expect(rc == 0 and out.startswith(f"usage: topoassign {cmd}") and err == "",
               f"{cmd} --help", out, err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topoassign")
    ap.add_argument("--source", default=os.environ.get("TOPO_SOURCE_DIR", "."))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true")
    g.add_argument("--case")
    g.add_argument("--all", action="store_true")
    a = ap.parse_args()
    if a.list:
        print(";".join(CASES))
        return 0
    ctx = Ctx(os.path.abspath(a.topoassign), os.path.abspath(a.source))
    names = list(CASES) if a.all else [a.case]
    failed = 0
    for name in names:
        if name not in CASES:
            print(f"unknown case {name}", file=sys.stderr)
            return 2
        try:
            CASES[name](ctx)
            print(f"ok   {name}")
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
