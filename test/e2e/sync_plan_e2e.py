#!/usr/bin/env python3
"""topo-sync's offline plan (--once --dry-run) over the real fixtures.

usage: sync_plan_e2e.py --topo-sync BIN --source DIR (--list | --case NAME)

Cases: the topograph NDR example and NVIDIA Selene's compute fabric
(ibnetdiscover: every host cabled to a leaf gets leaf and spine labels, hosts
cabled to the same leaf switches share their leaf label), UFM, LLDP, GPU
labels of Node objects, NetBox pages through a config file, a config error
(exit 2, file:line:column), the exports written and parseable, and an
incomplete plan (exit 1, labels still printed); topograph's label keys beside
ours, the provenance annotations, and the Kueue export of a topology without
a datacenter level; nodes named with FQDNs matched to a dump's short names,
and two NetBox sites' racks named alike kept two domains; one spine seen by
ibnetdiscover and UFM one domain without conflicts, and a UFM host record
reusing its GUID reported alike in any order (issue 33).
"""
import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

P = "topology.topo.io/"
ARGS = None
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def fixture(*parts):
    return os.path.join(ARGS.source, "fixtures", *parts)


def run(*args, expect=0):
    cmd = [ARGS.topo_sync, "--once", "--dry-run", "--log-format", "text"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if p.returncode != expect:
        raise AssertionError("%s: exit %d, want %d\nstderr: %s" %
                             (" ".join(cmd), p.returncode, expect, p.stderr))
    return p


def labels(*args, expect=0):
    return json.loads(run("--print-labels", *args, expect=expect).stdout)


def ib_leaf_sets(path):
    """host -> the set of switches its named adapters are cabled to, read
    from the dump's Ca stanzas ("<host> <hca>" descriptions only)."""
    sets = {}
    host = None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r'^Ca\s+\d+\s+"H-[0-9a-fA-F]+"\s+#\s+"([^"]*)"', line)
        if m:
            words = m.group(1).split()
            host = words[0] if len(words) == 2 else None
            continue
        m = re.match(r'^\[\d+\].*?"(S-[0-9a-fA-F]+)"\[\d+\]', line)
        if m and host:
            sets.setdefault(host, set()).add(m.group(1).lower())
        elif not line.strip():
            host = None
    return sets


def check_fabric(dump, min_hosts):
    got = labels("--ibnetdiscover", fixture("sources", "ibnetdiscover", dump))
    sets = ib_leaf_sets(fixture("sources", "ibnetdiscover", dump))
    assert len(got) >= min_hosts, "%d nodes, want at least %d" % (len(got), min_hosts)
    by_set = {}
    for host, switches in sets.items():
        name = host.lower()
        if name not in got:
            continue
        lab = got[name]
        assert set(lab) == {P + "leaf", P + "spine"}, (name, lab)
        by_set.setdefault(frozenset(switches), set()).add(lab[P + "leaf"])
    assert by_set, "no host of the dump was planned"
    for switches, leaves in by_set.items():
        assert len(leaves) == 1, "hosts cabled to %s got leaves %s" % (sorted(switches), leaves)
    return got


@case
def ndr_labels():
    got = check_fabric("topograph-example.out", 100)
    # Topograph's NDR example: these hosts hang off the same rail leaves.
    a = got["a05-p1-dgx-01-c01"]
    assert a[P + "leaf"] == got["a05-p1-dgx-01-c03"][P + "leaf"], a
    assert a[P + "spine"] == got["a08-p1-dgx-04-c17"][P + "spine"], a


@case
def selene_labels():
    got = check_fabric("mellanox-selene.compute.txt", 400)
    leaves = {v[P + "leaf"] for v in got.values()}
    assert len(leaves) > 1, leaves


@case
def ufm_labels():
    got = labels("--ufm-systems-file", fixture("sources", "ufm", "ufm-resources-systems.json"),
                 "--ufm-links-file", fixture("sources", "ufm", "derived-links.json"))
    assert got, "no node"
    for name, lab in got.items():
        assert set(lab) == {P + "leaf", P + "spine"}, (name, lab)
    assert len({v[P + "leaf"] for v in got.values()}) >= 1


@case
def lldp_labels():
    tmp = tempfile.mkdtemp()
    try:
        for host, doc in [("node-a", "sonic-lldpctl.json"), ("node-b", "sonic-lldpctl.json"),
                          ("node-c", "derived-json0-interface_only.json")]:
            shutil.copy(fixture("sources", "lldp", doc), os.path.join(tmp, host + ".json"))
        got = labels("--lldp-dir", tmp, "--levels", "leaf,hostname")
        assert sorted(got) == ["node-a", "node-b", "node-c"], got
        assert all(P + "leaf" in v for v in got.values()), got
        assert got["node-a"][P + "leaf"] == got["node-b"][P + "leaf"], got
    finally:
        shutil.rmtree(tmp)


@case
def lldp_fifo_skipped():
    """A FIFO named HOST.json in --lldp-dir (nobody writes it) is skipped
    with one warning naming it, counted, and the other hosts are read:
    --once finishes at once (it hung for ever opening the FIFO)."""
    tmp = tempfile.mkdtemp()
    try:
        for host in ("node-a", "node-b"):
            shutil.copy(fixture("sources", "lldp", "sonic-lldpctl.json"),
                        os.path.join(tmp, host + ".json"))
        fifo = os.path.join(tmp, "h3.json")
        os.mkfifo(fifo)
        os.mkdir(os.path.join(tmp, "zdir.json"))
        cmd = [ARGS.topo_sync, "--once", "--dry-run", "--log-format", "text", "--print-labels",
               "--lldp-dir", tmp, "--levels", "leaf,hostname"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError("topo-sync --once hung on a FIFO in --lldp-dir")
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        assert sorted(got) == ["node-a", "node-b"], got
        assert all(P + "leaf" in v for v in got.values()), got
        for name in (fifo, os.path.join(tmp, "zdir.json")):
            warn = "source lldp: skipped %s: not a regular file" % name
            assert p.stderr.count(warn) == 1, (warn, p.stderr)
        assert "(2 skipped: 2 unreadable, 0 too large, 0 invalid)" in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp)


@case
def ib_spine_of_one_source():
    """Issue 33 F2: UFM knows a spine (aa..00, cabled to both leaves) the
    ibnetdiscover dump lacks. The InfiniBand sources are one fabric, so
    every host's spine and leaf are the same whichever hosts UFM covers
    (hosts UFM knew got aa..00, the others aa..03: one leaf domain under
    two spine domains, flipping with UFM's coverage)."""
    d = fixture("sources", "ufm", "split-spine")
    with open(os.path.join(d, "systems.json")) as f:
        systems = json.load(f)
    with open(os.path.join(d, "links.json")) as f:
        links = json.load(f)
    host_guid = {r["system_name"].split()[0]: r["system_guid"] for r in systems
                 if r["type"] == "host"}
    tmp = tempfile.mkdtemp()
    try:
        seen = {}
        for covered in itertools.chain.from_iterable(
                itertools.combinations(sorted(host_guid), k) for k in range(len(host_guid) + 1)):
            gone = {g for h, g in host_guid.items() if h not in covered}
            sp, lp = os.path.join(tmp, "sys.json"), os.path.join(tmp, "links.json")
            with open(sp, "w") as f:
                json.dump([r for r in systems if r["system_guid"] not in gone], f)
            with open(lp, "w") as f:
                json.dump([k for k in links if k["source_guid"] not in gone
                           and k["destination_guid"] not in gone], f)
            got = labels("--ibnetdiscover", os.path.join(d, "ibnetdiscover.txt"),
                         "--ufm-systems-file", sp, "--ufm-links-file", lp,
                         "--levels", "spine,leaf,hostname")
            seen[covered] = {n: (v.get(P + "spine"), v.get(P + "leaf")) for n, v in got.items()}
        first = next(iter(seen.values()))
        assert {v[0] for v in first.values()} == {"aa00000000000000"}, first
        for covered, got in seen.items():
            assert got == first, ("UFM covering %s" % (covered,), got, first)
    finally:
        shutil.rmtree(tmp)


@case
def lldp_invalid_skipped():
    """A host file in --lldp-dir that reads but holds no document to read
    (empty, cut mid-write, over its parse budget under 1 MiB) is that host's
    problem: skipped with a warning naming it and why, counted as invalid,
    the other hosts read (it made --once exit 2 for every host). When no
    host's file can be read, the source fails with the first one's error."""
    tmp = tempfile.mkdtemp()
    try:
        with open(fixture("sources", "lldp", "sonic-lldpctl.json")) as f:
            doc = f.read()
        for host in ("node-a", "node-b"):
            with open(os.path.join(tmp, host + ".json"), "w") as f:
                f.write(doc)
        bad = {"h-empty": "", "h-cut": doc[:len(doc) // 2],
               "h-budget": '{"lldp":[' + "{}," * 200000 + "{}]}"}
        for host, text in bad.items():
            with open(os.path.join(tmp, host + ".json"), "w") as f:
                f.write(text)
        cmd = [ARGS.topo_sync, "--once", "--dry-run", "--log-format", "text", "--print-labels",
               "--lldp-dir", tmp, "--levels", "leaf,hostname"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        assert sorted(got) == ["node-a", "node-b"], got
        for host in bad:
            warn = "source lldp: skipped %s" % os.path.join(tmp, host + ".json")
            assert p.stderr.count(warn) == 1, (warn, p.stderr)
        assert "needs more than" in p.stderr, p.stderr
        assert "(3 skipped: 0 unreadable, 0 too large, 3 invalid)" in p.stderr, p.stderr
        for host in ("node-a", "node-b"):
            os.remove(os.path.join(tmp, host + ".json"))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "h-budget.json: the body of" in p.stderr.splitlines()[-1], p.stderr
    finally:
        shutil.rmtree(tmp)


@case
def gpu_nodes():
    # Every node is labelled: a clique is the NVLink domain of the trays that
    # share it; a node without one (an HGX node, a GB200 tray whose Fabric
    # Manager is not up, a CPU node) is its own, named by the node.
    got = labels("--nodes-file", fixture("sources", "gpu", "gb200-nodes.json"))
    assert len(got) == 11 and all(got.values()), got
    for own in ("hgx-h100-01", "gb200-c-01", "cpu-01"):
        assert got[own] == {P + "nvlink": own}, (own, got[own])
    domains = {v[P + "nvlink"] for v in got.values()}
    assert len(domains) < len(got), "no NVLink domain is shared"
    # Without the own-node rule, those three are incomplete (exit 1) and
    # the plan says which level holds them and what fixes it.
    tmp = tempfile.mkdtemp()
    try:
        cfg = os.path.join(tmp, "sync.yaml")
        with open(cfg, "w") as f:
            f.write("sources:\n  nodes:\n    nvlinkHostnameFallback: false\n")
        args = ("--config", cfg, "--nodes-file", fixture("sources", "gpu", "gb200-nodes.json"))
        got = labels(*args, expect=1)
        assert sorted(n for n, v in got.items() if not v) == ["cpu-01", "gb200-c-01",
                                                              "hgx-h100-01"], got
        plan = run("--print-plan", *args, expect=1).stdout
        assert "\nmissing: nvlink 3\n" in plan, plan
        assert "note:" not in plan, plan  # 3 of 11: not most of the cluster
    finally:
        shutil.rmtree(tmp)


@case
def netbox_config():
    nb = fixture("sources", "netbox")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("labels:\n  levels: [datacenter, rack, hostname]\nsources:\n  netbox:\n"
                "    files:\n      devices: [%s, %s]\n      racks: [%s]\n      sites: [%s]\n" %
                tuple(os.path.join(nb, n) for n in ("v4-devices-page1.json",
                                                    "v4-devices-page2.json", "v4-racks.json",
                                                    "v4-sites.json")))
    try:
        got = labels("--config", f.name)
        # A NetBox rack is named within its site: always the name and the
        # FNV-1a of "21:datacenter:7:dc-west;R01" (docs/sync.md).
        assert got["gpu-001"] == {P + "datacenter": "dc-west", P + "rack": "R01-b0097ac751"}, got
        kueue = os.path.join(tempfile.gettempdir(), "topo-sync-kueue-%d.yaml" % os.getpid())
        run("--config", f.name, "--export-kueue", kueue)
        docs = [d for d in yaml.safe_load_all(open(kueue)) if d]
        os.unlink(kueue)
        kinds = sorted(d["kind"] for d in docs)
        assert kinds[0] == "ResourceFlavor" and "Topology" in kinds, kinds
    finally:
        os.unlink(f.name)


@case
def config_error():
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("labels:\n  levels: [datacenter, leaf, tor]\n")
    try:
        p = run("--config", f.name, "--ibnetdiscover",
                fixture("sources", "ibnetdiscover", "topograph-example.out"), expect=2)
        want = "%s:2:30: labels.levels[2]" % f.name
        assert want in p.stderr, p.stderr
    finally:
        os.unlink(f.name)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write('Switch\t65 "S-2c5eab0300b87b40"\t\t# "leaf" enhanced port 0\n'
                '[1]\t"S-nothex"[2]\t\t# "spine"\n')
    try:
        p = run("--ibnetdiscover", f.name, expect=2)
        assert f.name + ":2" in p.stderr, p.stderr
    finally:
        os.unlink(f.name)
    # Not a one-off dry run: the controller, which needs an API server.
    env = {k: v for k, v in os.environ.items()
           if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "HOME")}
    p = subprocess.run([ARGS.topo_sync, "--print-labels"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 2 and "no Kubernetes configuration" in p.stderr, (p.returncode,
                                                                             p.stderr)
    p = run(expect=2)
    assert "no source configured" in p.stderr, p.stderr


@case
def levels_order():
    """Levels go coarsest first (issue 26): out of order, --print-plan would
    nest datacenter > rack while the Kueue Topology lists rack first; and a
    config's second YAML document would never be read. Both are exit 2."""
    dump = fixture("sources", "ibnetdiscover", "topograph-example.out")
    order = ("levels go coarsest first (datacenter, spine, leaf, rack, nvlink, "
             "hostname)")
    for levels, why in (("rack,datacenter,hostname", "rack before datacenter"),
                        ("spine,hostname,leaf", "hostname before leaf"),
                        ("leaf,leaf", "leaf repeated"),
                        ("datacenter,spine,leaf,rack,nvlink,hostname,hostname",
                         'more than the 6 levels: "hostname" repeated')):
        p = run("--print-plan", "--levels", levels, "--ibnetdiscover", dump, expect=2)
        want = "topo-sync: --levels: " + why
        assert want in p.stderr, p.stderr
        if "before" in why:
            assert order in p.stderr, p.stderr
    files = []
    try:
        for body in ("labels:\n  levels: [rack, datacenter, hostname]\n",
                     "labels:\n  levels: [spine, leaf, hostname]\n"
                     "---\nlabels: {prefix: kubernetes.io/}\n",
                     "--- # one document, both markers\n"
                     "labels:\n  levels: [spine, leaf, hostname]\n...\n"):
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                f.write(body)
            files.append(f.name)
        p = run("--config", files[0], "--ibnetdiscover", dump, expect=2)
        assert "%s:2:18: labels.levels[1]: rack before datacenter: %s" % (files[0], order) \
            in p.stderr, p.stderr
        p = run("--config", files[1], "--ibnetdiscover", dump, expect=2)
        assert ("%s:3:1: a second YAML document: one configuration document expected"
                % files[1]) in p.stderr, p.stderr
        got = labels("--config", files[2], "--ibnetdiscover", dump)
        assert got and all(set(v) == {P + "spine", P + "leaf"} for v in got.values()), got
    finally:
        for name in files:
            os.unlink(name)


@case
def exports():
    dump = fixture("sources", "ibnetdiscover", "topograph-example.out")
    hosts = sorted(h.lower() for h in ib_leaf_sets(dump))
    tmp = tempfile.mkdtemp()
    try:
        nodes = {"apiVersion": "v1", "kind": "List", "items": [
            {"metadata": {"name": h, "labels": {"kubernetes.io/hostname": h,
                                                 "nvidia.com/gpu.count": "8"}}}
            for h in hosts]}
        with open(os.path.join(tmp, "nodes.json"), "w") as f:
            json.dump(nodes, f)
        out = {k: os.path.join(tmp, k) for k in ("tree", "block", "volcano")}
        # Two hosts of the dump are upper-case ("B11-P1-CUFM-02 mlx5_1"): the
        # config's name rule maps them to their nodes.
        with open(os.path.join(tmp, "sync.yaml"), "w") as f:
            f.write("nodeNames:\n  lowercase: true\n")
        run("--config", os.path.join(tmp, "sync.yaml"), "--ibnetdiscover", dump, "--nodes-file", os.path.join(tmp, "nodes.json"),
            "--export-slurm-tree", out["tree"], "--export-slurm-block", out["block"],
            "--export-volcano", out["volcano"])
        tree = open(out["tree"]).read()
        assert re.search(r"^SwitchName=switch\.1\.\d+ Nodes=", tree, re.M), tree[:500]
        assert re.search(r"^SwitchName=switch\.2\.\d+ Switches=", tree, re.M), tree[:500]
        block = open(out["block"]).read()
        assert re.search(r"^BlockName=block\.\d+ Nodes=", block, re.M), block[:500]
        assert re.search(r"^BlockSizes=", block, re.M), block[-300:]
        docs = [d for d in yaml.safe_load_all(open(out["volcano"])) if d]
        assert docs and all(d["kind"] == "HyperNode" for d in docs), docs[:1]
    finally:
        shutil.rmtree(tmp)


@case
def incomplete_plan():
    p = run("--print-labels", "--levels", "spine,leaf,rack", "--ibnetdiscover",
            fixture("sources", "ibnetdiscover", "topograph-example.out"), expect=1)
    got = json.loads(p.stdout)
    assert got and all(v == {} for v in got.values()), list(got.items())[:2]
    p = run("--print-plan", "--levels", "spine,leaf,rack", "--ibnetdiscover",
            fixture("sources", "ibnetdiscover", "topograph-example.out"), expect=1)
    assert "rack" in p.stdout, p.stdout[:500]


TG = "fabric.topograph.run/tier-"
TD = "accelerator.topograph.run/domain"


@case
def topograph_labels():
    dump = fixture("sources", "ibnetdiscover", "topograph-example.out")
    got = labels("--topograph-labels", "--ibnetdiscover", dump)
    for name, lab in got.items():
        assert set(lab) == {P + "leaf", P + "spine", TG + "0", TG + "1"}, (name, lab)
        assert lab[TG + "0"] == lab[P + "leaf"] and lab[TG + "1"] == lab[P + "spine"], lab
    # topograph's own merged spine vertex for this dump keeps the lowest
    # switch id (SOURCE-FORMATS.md 1.5); topo writes that switch's GUID
    # without topograph's "S-" (docs/sync.md, "Switch identity").
    assert {v[TG + "1"] for v in got.values()} == {"2c5eab0300c25f00"}, got
    # The same from the config file; the NVLink domain from the Node objects.
    tmp = tempfile.mkdtemp()
    try:
        cfg = os.path.join(tmp, "sync.yaml")
        with open(cfg, "w") as f:
            f.write("labels:\n  topograph: true\n")
        got = labels("--config", cfg, "--nodes-file",
                     fixture("sources", "gpu", "gb200-nodes.json"))
        placed = {n: v for n, v in got.items() if v}
        assert placed, got
        for name, lab in placed.items():
            assert lab[TD] == lab[P + "nvlink"], lab
            assert not any(k.startswith(TG) for k in lab), lab
    finally:
        shutil.rmtree(tmp)


@case
def provenance():
    nb = fixture("sources", "netbox")
    tmp = tempfile.mkdtemp()
    try:
        nodes = {"apiVersion": "v1", "kind": "List", "items": [
            {"metadata": {"name": n, "labels": {"nvidia.com/gpu.count": "8"}}}
            for n in ("gpu-001", "gpu-002")]}
        with open(os.path.join(tmp, "nodes.json"), "w") as f:
            json.dump(nodes, f)
        cfg = os.path.join(tmp, "sync.yaml")
        with open(cfg, "w") as f:
            f.write("labels:\n  levels: [datacenter, rack, nvlink, hostname]\n"
                    "sources:\n  netbox:\n    files:\n      devices: [%s, %s]\n"
                    "      racks: [%s]\n      sites: [%s]\n" %
                    tuple(os.path.join(nb, n) for n in ("v4-devices-page1.json",
                                                        "v4-devices-page2.json",
                                                        "v4-racks.json", "v4-sites.json")))
        args = ("--config", cfg, "--nodes-file", os.path.join(tmp, "nodes.json"))
        got = json.loads(run("--print-annotations", *args).stdout)
        assert sorted(got) == ["gpu-001", "gpu-002"], got
        value = got["gpu-001"][P + "provenance"]
        # Compact, the topology's levels in order: byte for byte.
        # No clique label: each node its own NVLink domain ("node").
        assert value == '{"datacenter":"netbox","rack":"netbox","nvlink":"node"}', value
        # --print-labels is unchanged by it; with both, labels come first.
        p = run("--print-labels", "--print-annotations", *args)
        dec = json.JSONDecoder()
        first, end = dec.raw_decode(p.stdout)
        second, _ = dec.raw_decode(p.stdout[end:].lstrip())
        assert first == labels(*args), first
        assert P + "provenance" not in first["gpu-001"], first
        assert second == got, second
        plan = run("--print-plan", *args).stdout
        assert "sources: datacenter: netbox 2; rack: netbox 2; nvlink: node 2\n" in plan, plan
    finally:
        shutil.rmtree(tmp)


@case
def kueue_without_datacenter():
    dump = fixture("sources", "ibnetdiscover", "topograph-example.out")
    tmp = tempfile.mkdtemp()
    try:
        out = os.path.join(tmp, "kueue.yaml")
        p = run("--ibnetdiscover", dump, "--export-kueue", out, expect=2)
        assert "a ResourceFlavor needs nodeLabels" in p.stderr, p.stderr
        run("--ibnetdiscover", dump, "--export-kueue", out,
            "--kueue-flavor-label", "nvidia.com/gpu.present=true",
            "--kueue-flavor-label", "node-pool=ndr")
        text = open(out).read()
        assert text.endswith("\n") and not text.endswith("\n\n"), repr(text[-40:])
        docs = [d for d in yaml.safe_load_all(text) if d]
        assert [d["kind"] for d in docs] == ["Topology", "ResourceFlavor"], docs
        assert docs[0]["spec"]["levels"][0] == {"nodeLabel": P + "spine"}, docs[0]
        assert docs[1]["spec"] == {"nodeLabels": {"nvidia.com/gpu.present": "true",
                                                  "node-pool": "ndr"},
                                   "topologyName": "topo"}, docs[1]
        # The same from the config file, which also names the topology.
        cfg = os.path.join(tmp, "sync.yaml")
        with open(cfg, "w") as f:
            f.write("exports:\n  kueue:\n    topologyName: ndr\n    flavorLabels:\n"
                    "      nvidia.com/gpu.present: \"true\"\n")
        run("--config", cfg, "--ibnetdiscover", dump, "--export-kueue", out)
        docs = [d for d in yaml.safe_load_all(open(out)) if d]
        assert docs[1]["metadata"]["name"] == "ndr" and docs[1]["spec"]["topologyName"] == "ndr"
        p = run("--ibnetdiscover", dump, "--export-kueue", out, "--kueue-flavor-label", "novalue",
                expect=2)
        assert "not KEY=VALUE" in p.stderr, p.stderr
        p = run("--ibnetdiscover", dump, "--export-kueue", out, "--kueue-flavor-label", "a b=c",
                expect=2)
        assert "flavor label a b=c" in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp)


@case
def fqdn_nodes():
    """Nodes named with their FQDN, Selene's dump with short names: every
    node the dump places gets the labels its short name gets without a
    node set; a short name two nodes' FQDNs share matches neither and the
    plan says so."""
    dump = fixture("sources", "ibnetdiscover", "mellanox-selene.compute.txt")
    levels = ("--levels", "spine,leaf,hostname")
    short = labels(*levels, "--ibnetdiscover", dump)
    hosts = sorted(short)[:40]
    twin = hosts.pop()  # named twice in the node set, under two domains
    names = ["%s.cluster.example.com" % h for h in hosts]
    names += ["%s.a.example.com" % twin, "%s.b.example.com" % twin]
    tmp = tempfile.mkdtemp()
    try:
        nodes = os.path.join(tmp, "nodes.json")
        with open(nodes, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": [
                {"metadata": {"name": n, "labels": {"nvidia.com/gpu.count": "8"}}}
                for n in names]}, f)
        args = levels + ("--ibnetdiscover", dump, "--nodes-file", nodes)
        got = labels(*args, expect=1)  # the twins are incomplete
        assert sorted(got) == sorted(names), sorted(got)[:5]
        for h in hosts:
            assert got["%s.cluster.example.com" % h] == short[h], (h, got, short[h])
        assert got["%s.a.example.com" % twin] == {} == got["%s.b.example.com" % twin]
        p = run("--print-plan", *args, expect=1)
        want = ("ambiguous host names (1):\n  host %s: its short name matches the nodes "
                "%s.a.example.com, %s.b.example.com; matched to none\n" % (twin, twin, twin))
        assert want in p.stdout, p.stdout[-800:]
        assert "hosts whose short name matches several" in p.stderr, p.stderr
        assert "plan: host %s: its short name matches" % twin in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp)


@case
def netbox_racks_named_alike():
    """NetBox's v4 pages plus a second site with its own rack R01 (the
    same NVLink field as the first site's R01) and a server in it: two
    rack domains and two NVLink domains, in a topology without the
    datacenter level; a rack named once is qualified by its site all the
    same (its value must not depend on whether another site has the name)."""
    nb = fixture("sources", "netbox")
    tmp = tempfile.mkdtemp()
    try:
        racks = json.load(open(os.path.join(nb, "v4-racks.json")))
        east = json.loads(json.dumps(racks["results"][0]))
        east["id"] = 13
        east["site"] = {"id": 2, "name": "DC East", "slug": "dc-east"}
        racks["results"].append(east)
        racks["count"] += 1
        devices = json.load(open(os.path.join(nb, "v4-devices-page2.json")))
        gpu = [d for d in devices["results"] if d.get("name") == "gpu-101"][0]
        gpu = json.loads(json.dumps(gpu))
        gpu.update(id=201, name="gpu-201", rack={"id": 13, "name": "R01"})
        devices["results"].append(gpu)
        for name, doc in (("racks.json", racks), ("devices-2.json", devices)):
            with open(os.path.join(tmp, name), "w") as f:
                json.dump(doc, f)
        cfg = os.path.join(tmp, "sync.yaml")
        with open(cfg, "w") as f:
            f.write("labels:\n  levels: [rack, nvlink, hostname]\nsources:\n  netbox:\n"
                    "    hostRoles: [gpu-server]\n    nvlinkField: nvl_domain\n"
                    "    files:\n      devices: [%s, %s]\n      racks: [%s]\n"
                    "      sites: [%s]\n" % (os.path.join(nb, "v4-devices-page1.json"),
                                             os.path.join(tmp, "devices-2.json"),
                                             os.path.join(tmp, "racks.json"),
                                             os.path.join(nb, "v4-sites.json")))
        got = labels("--config", cfg)
        # gpu-101's rack has no NVLink field: it is its own NVLink domain.
        assert got["gpu-101"][P + "nvlink"] == "gpu-101", got
        west, east = got["gpu-001"], got["gpu-201"]
        assert got["gpu-002"] == west, got
        assert west[P + "rack"] != east[P + "rack"], got
        assert west[P + "nvlink"] != east[P + "nvlink"], got
        assert west[P + "rack"].startswith("R01-") and east[P + "rack"].startswith("R01-"), got
        assert got["gpu-003"][P + "rack"] == "R02-b00977c751", got
        # The same values on every run (they are compared with the nodes').
        assert labels("--config", cfg) == got
    finally:
        shutil.rmtree(tmp)


@case
def plain_hgx():
    """Selene's 469 DGX hosts as Nodes of a plain HGX cluster: no GPU
    Feature Discovery labels at all (the device plugin's nvidia.com/gpu in
    status only), foreign labels, taints. With default settings every node
    is labelled (each its own NVLink domain, said in the plan); a level no
    source gives holds every node back, and the plan says which and what
    fixes it instead of a silent zero."""
    dump = fixture("sources", "ibnetdiscover", "mellanox-selene.compute.txt")
    fabric = labels("--ibnetdiscover", dump)
    tmp = tempfile.mkdtemp()
    try:
        nodes = os.path.join(tmp, "nodes.json")
        with open(nodes, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "NodeList", "items": [
                {"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": n, "labels": {
                     "kubernetes.io/hostname": n, "kubernetes.io/os": "linux",
                     "kubernetes.io/arch": "amd64", "node-role.kubernetes.io/worker": "",
                     "team": "ml"}},
                 "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                 "status": {"capacity": {"nvidia.com/gpu": "8"},
                            "allocatable": {"nvidia.com/gpu": "8"}}}
                for n in sorted(fabric)]}, f)
        got = labels("--ibnetdiscover", dump, "--nodes-file", nodes)
        assert len(got) == 469, len(got)
        for n, lab in got.items():
            want = dict(fabric[n], **{P + "nvlink": n})
            assert lab == want, (n, lab, want)
        p = run("--print-plan", "--ibnetdiscover", dump, "--nodes-file", nodes)
        assert "nodes: 469 planned, 469 labelled, 0 incomplete;" in p.stdout, p.stdout
        assert "nvlink: node 469" in p.stdout, p.stdout
        assert "note: nvlink: 469 nodes without an NVLink domain from a source" in p.stdout
        # A rack level without a source that gives racks: all held, and why.
        p = run("--print-plan", "--ibnetdiscover", dump, "--nodes-file", nodes,
                "--levels", "spine,leaf,rack,hostname", expect=1)
        hint = ("rack: 469 of 469 nodes have no value, so they get no labels: no configured "
                "source gives rack (NetBox does: --netbox-url or sources.netbox); or leave it "
                "out of the topology: --levels spine,leaf,hostname (labels.levels)")
        assert "note: " + hint + "\n" in p.stdout, p.stdout
        assert "\nmissing: rack 469\n" in p.stdout, p.stdout
        assert hint in p.stderr, p.stderr
        # Two levels without a source: both named, the suggestion drops both;
        # none left to suggest: no suggestion (an empty --levels is refused).
        p = run("--print-plan", "--ibnetdiscover", dump, "--nodes-file", nodes,
                "--levels", "datacenter,spine,leaf,rack,hostname", expect=1)
        both = ("; or leave the levels most nodes miss out of the topology: --levels "
                "spine,leaf,hostname (labels.levels)\n")
        assert p.stdout.count(both) == 2, p.stdout
        p = run("--print-plan", "--ibnetdiscover", dump, "--nodes-file", nodes,
                "--levels", "rack", expect=1)
        assert ("note: rack: 469 of 469 nodes have no value, so they get no labels: no "
                "configured source gives rack (NetBox does: --netbox-url or "
                "sources.netbox)\n") in p.stdout, p.stdout
        # The switch-to-switch cables gone (both ends): leaves, no spine
        # group above them, and the note says so rather than "no fabric".
        flat = os.path.join(tmp, "flat.txt")
        with open(dump) as src, open(flat, "w") as out:
            kind = None
            for line in src:
                if line[:2] in ("Sw", "Ca", "Rt"):
                    kind = line.split()[0]
                if not (kind == "Switch" and line.startswith("[") and '\t"S-' in line):
                    out.write(line)
        p = run("--print-plan", "--ibnetdiscover", flat, "--nodes-file", nodes, expect=1)
        assert ("note: spine: 469 of 469 nodes have no value, so they get no labels: the fabric "
                "gives them a leaf but no spine group above it") in p.stdout, p.stdout
        assert "--levels leaf,nvlink,hostname (labels.levels)" in p.stdout, p.stdout
    finally:
        shutil.rmtree(tmp)


@case
def upper_case_names():
    """NetBox's devices named in upper case (GPU-001) are the nodes gpu-001
    with no setting (a node name has no upper case); lowercase: false makes
    them unmappable again, and the plan counts them."""
    nb = fixture("sources", "netbox")
    tmp = tempfile.mkdtemp()
    try:
        pages = []
        for name in ("v4-devices-page1.json", "v4-devices-page2.json"):
            doc = json.load(open(os.path.join(nb, name)))
            for d in doc["results"]:
                d["name"] = d["name"].upper() if d.get("name") else d.get("name")
            pages.append(os.path.join(tmp, name))
            with open(pages[-1], "w") as f:
                json.dump(doc, f)
        cfg = os.path.join(tmp, "sync.yaml")
        body = ("labels:\n  levels: [datacenter, rack, hostname]\nsources:\n  netbox:\n"
                "    hostRoles: [gpu-server]\n    files:\n      devices: [%s, %s]\n"
                "      racks: [%s]\n      sites: [%s]\n" %
                (pages[0], pages[1], os.path.join(nb, "v4-racks.json"),
                 os.path.join(nb, "v4-sites.json")))
        with open(cfg, "w") as f:
            f.write(body)
        plain = os.path.join(tmp, "plain.yaml")
        with open(plain, "w") as f:
            f.write(body.replace("sources:\n", "nodeNames:\n  lowercase: false\nsources:\n", 1))
        got = labels("--config", cfg)
        assert "gpu-001" in got and got["gpu-001"].get(P + "rack"), got
        assert all(n == n.lower() for n in got), got
        p = run("--print-plan", "--config", plain, expect=0)
        assert "unmapped hosts: %d;" % len(got) in p.stdout, p.stdout
        # Each named with why, in the plan and (the first ten) in the log.
        why = ('host "GPU-001": "GPU-001" is not a valid node name (lower-case alphanumerics, '
               "'-' and '.', at most 253 bytes)")
        assert "\nunmappable host names (%d):\n" % len(got) in p.stdout, p.stdout
        assert "\n  " + why + "\n" in p.stdout, p.stdout
        assert "unmappable: " + why.replace('"', '\\"') in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp)


# Issue 33 items 1 and 3: one spine seen by ibnetdiscover (four hosts) and by
# UFM (two of them), each naming the switches its own way.
SPINE = "00000000000000a3"


def one_spine_files(tmp, intruder=False, seed=None):
    """An ibnetdiscover dump of leaves a1 (h1, h2) and a2 (h3, h4) under
    spine a3, and UFM's systems and links knowing h1 and h2 only, its GUIDs
    in the forms UFM may print; with intruder, a host record reusing the
    spine's GUID; with seed, the systems shuffled."""
    dump = ["# Topology file: generated by hand", ""]
    for leaf, hosts in (("1", ("1", "2")), ("2", ("3", "4"))):
        dump += ['switchguid=0xa%s(a%s)' % (leaf, leaf),
                 'Switch\t41 "S-00000000000000A%s"\t\t# "leaf-%s" enhanced port 0 lid 1 lmc 0'
                 % (leaf, leaf)]
        for port, g in enumerate(hosts, 1):
            dump.append('[%d]\t"H-00000000000000b%s"[1](b%s) \t\t# "h%s HCA-1" lid 2 4xNDR'
                        % (port, g, g, g))
        dump += ['[3]\t"S-%s"[%s]\t\t# "spine" lid 4 4xNDR' % (SPINE, leaf), ""]
    dump += ['Switch\t41 "S-%s"\t\t# "spine" enhanced port 0 lid 4 lmc 0' % SPINE,
             '[1]\t"S-00000000000000a1"[3]\t\t# "leaf-1" lid 1 4xNDR',
             '[2]\t"S-00000000000000a2"[3]\t\t# "leaf-2" lid 1 4xNDR', ""]
    for g, leaf, port in (("1", "1", 1), ("2", "1", 2), ("3", "2", 1), ("4", "2", 2)):
        dump += ['Ca\t1 "H-00000000000000b%s"\t\t# "h%s HCA-1"' % (g, g),
                 '[1](b%s) \t"S-00000000000000a%s"[%d]\t\t# lid 9 lmc 0 "leaf-%s" lid 1 4xNDR'
                 % (g, leaf, port, leaf), ""]
    systems = [
        {"system_guid": "00000000000000a1", "type": "switch", "system_name": "leaf-1"},
        {"system_guid": "0x00000000000000A2", "type": "switch", "system_name": "leaf-2"},
        {"system_guid": "00000000000000A3", "type": "switch", "system_name": "spine"},
        {"system_guid": "00000000000000b1", "type": "host", "system_name": "h1 HCA-1"},
        {"system_guid": "00000000000000b2", "type": "host", "system_name": "h2 HCA-1"},
    ]
    if intruder:
        systems.append({"system_guid": SPINE, "type": "host", "system_name": "intruder HCA-1"})
    if seed is not None:
        random.Random(seed).shuffle(systems)
    links = [{"source_guid": "00000000000000b1", "destination_guid": "00000000000000a1"},
             {"source_guid": "00000000000000b2", "destination_guid": "00000000000000a1"},
             {"source_guid": "00000000000000a1", "destination_guid": "00000000000000a3"},
             {"source_guid": "00000000000000a2", "destination_guid": "0x00000000000000a3"}]
    paths = [os.path.join(tmp, n) for n in ("dump.txt", "systems.json", "links.json")]
    with open(paths[0], "w") as f:
        f.write("\n".join(dump) + "\n")
    for path, doc in zip(paths[1:], (systems, links)):
        with open(path, "w") as f:
            json.dump(doc, f)
    return ["--ibnetdiscover", paths[0], "--ufm-systems-file", paths[1],
            "--ufm-links-file", paths[2]]


FOUR_HOSTS = {"h%d" % i: {P + "leaf": "00000000000000a%d" % ((i + 1) // 2), P + "spine": SPINE}
              for i in range(1, 5)}


@case
def one_switch_one_domain():
    # Both sources configured, UFM knowing two of the four hosts: the spine
    # is one domain, and no conflict is reported where the sources agree.
    tmp = tempfile.mkdtemp()
    try:
        p = run("--print-labels", *one_spine_files(tmp))
        assert json.loads(p.stdout) == FOUR_HOSTS, p.stdout
        assert "plan: 4 nodes, 0 incomplete, 0 conflicts" in p.stderr, p.stderr
    finally:
        shutil.rmtree(tmp)


@case
def duplicate_guid_any_order():
    # A UFM host record reusing the spine's GUID, the systems in several
    # orders: the spine keeps its GUID, the four hosts keep their labels,
    # the same one conflict names both records; the intruder alone is
    # incomplete (exit 1).
    tmp = tempfile.mkdtemp()
    try:
        seen = set()
        for seed in range(8):
            p = run("--print-labels", *one_spine_files(tmp, True, seed), expect=1)
            got = json.loads(p.stdout)
            assert {n: got[n] for n in FOUR_HOSTS} == FOUR_HOSTS, (seed, p.stdout)
            assert "plan: 5 nodes, 1 incomplete, 1 conflicts" in p.stderr, p.stderr
            lines = [l for l in p.stderr.splitlines() if "duplicate GUID " + SPINE in l]
            assert len(lines) == 1, p.stderr
            seen.add(lines[0])
        line = seen.pop()
        assert not seen, seen
        for want in ("duplicate GUID " + SPINE, 'switch \\"spine\\"',
                     'host record \\"intruder HCA-1\\"', "the switch keeps it"):
            assert want in line, line
    finally:
        shutil.rmtree(tmp)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo-sync")
    ap.add_argument("--source")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--case")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    CASES[ARGS.case]()
    print("ok: %s" % ARGS.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
