#!/usr/bin/env python3
"""An independent count of the tiers of an ibnetdiscover dump, for checking
the figures asserted in test/fabric/test_fabric.c (not run by ctest).

Its own parse (regular expressions) and its own grouping (dicts keyed by
frozensets), with the rules of include/topo/fabric.h: a leaf is a switch with
any adapter cable (SHARP Aggregation Nodes left out), leaves with the same
named-host set are one leaf domain, groups with the same upward set one
group of the next tier, ids the lowest member switch id (".2"... for a later
group with the same lowest member), a host in the leaf domain it has most
cables to (the lowest id on a tie).

    test/fabric/tiers_reference.py DUMP [--exclude-switch RE] [--exclude-port RE]

prints one line per host: name, status, leaf domains reached, tier ids.
"""
import argparse
import collections
import re


def parse(path):
    nodes, edges, cur, sysimg = {}, [], None, None
    for line in open(path, encoding="ascii"):
        line = line.rstrip("\r\n")
        if not line.strip():
            cur, sysimg = None, None
            continue
        m = re.match(r"sysimgguid=0x([0-9a-fA-F]+)", line)
        if m:
            sysimg = int(m.group(1), 16)
            continue
        m = re.match(r'(Switch|Ca|Rt)\s+\d+\s+"([SHR])-([0-9a-fA-F]+)"', line)
        if m:
            nid = "%s-%016x" % (m.group(2), int(m.group(3), 16))
            desc = line.split('# "', 1)[1].rsplit('"', 1)[0] if '# "' in line else None
            nodes.setdefault(nid, (m.group(1), desc, sysimg))
            cur = nid
            continue
        m = re.match(r'\[\d+\](?:\([0-9a-fA-F]+\))?\s+"([SHR])-([0-9a-fA-F]+)"\[\d+\]', line)
        if m:
            rid = "%s-%016x" % (m.group(1), int(m.group(2), 16))
            comment = line.split("#", 1)[1] if "#" in line else ""
            rdesc = None
            if comment.count('"') >= 2:
                rdesc = comment[comment.index('"') + 1:comment.rindex('"')]
            edges.append((cur, rid, rdesc))
    return nodes, edges


def host_of(desc):
    words = desc.split() if desc else []
    return (words[0], words[1]) if len(words) == 2 else (None, None)


def aggregation(nodes, ca, sw, desc):
    if desc and desc.strip().endswith("Aggregation Node"):
        return True
    a, b = nodes.get(ca), nodes.get(sw)
    return bool(a and b and a[2] is not None and a[2] == b[2])


def tiers(path, exclude_switch=None, exclude_port=None):
    nodes, edges = parse(path)

    def name(s):
        return nodes[s][1].strip() if s in nodes and nodes[s][1] else s

    def kept(s):
        return not (exclude_switch and re.search(exclude_switch, name(s)))

    adj, leaves, cables = collections.defaultdict(set), set(), set()
    hosts, excluded = set(), set()
    for n, (kind, desc, _) in nodes.items():
        if kind == "Ca" and not aggregation(nodes, n, None, desc) and host_of(desc)[0]:
            hosts.add(host_of(desc)[0])
    for a, b, rdesc in edges:
        if a[0] == "S" and b[0] == "S" and a != b and kept(a) and kept(b):
            adj[a].add(b)
            adj[b].add(a)
        for sw, ca in ((a, b), (b, a)):
            if sw[0] != "S" or ca[0] != "H":
                continue
            desc = nodes[ca][1] if ca in nodes else rdesc
            if aggregation(nodes, ca, sw, desc):
                continue
            host, port = host_of(desc)
            if host:
                hosts.add(host)
            if not kept(sw):
                excluded.add(host)
                continue
            leaves.add(sw)
            if host and exclude_port and re.search(exclude_port, port or ""):
                excluded.add(host)
            elif host:
                cables.add((host, port, sw))
    served = collections.defaultdict(set)
    for host, _, sw in cables:
        served[sw].add(host)
    by_set = collections.defaultdict(list)
    for leaf in leaves:
        by_set[frozenset(served[leaf]) or ("alone", leaf)].append(leaf)
    tier = {min(members): frozenset(members) for members in by_set.values()}
    domain_of = {leaf: d for d, members in tier.items() for leaf in members}
    level = {leaf: 0 for leaf in leaves}
    parents, counts = [], [len(tier)]
    while True:
        k = len(parents)
        above = {n for ms in tier.values() for s in ms for n in adj[s] if n not in level}
        if not above:
            break
        for n in above:
            level[n] = k + 1
        ups = collections.defaultdict(list)
        for g, members in tier.items():
            up = frozenset(n for s in members for n in adj[s] if level.get(n) == k + 1)
            if up:
                ups[up].append(g)
        new, parent = {}, {}
        for up in sorted(ups, key=sorted):
            gid, n = min(up), 2
            while gid in new:
                gid, n = "%s.%d" % (min(up), n), n + 1
            new[gid] = up
            for g in ups[up]:
                parent[g] = gid
        parents.append(parent)
        counts.append(len(new))
        tier = new
    out = {}
    for host in sorted(hosts):
        per = collections.Counter(domain_of[sw] for (h, _, sw) in cables if h == host)
        if not per:
            out[host] = ("excluded" if host in excluded else "no-leaf", 0, [])
            continue
        chain = [sorted(per, key=lambda d: (-per[d], d))[0]]
        while len(chain) <= len(parents) and chain[-1] in parents[len(chain) - 1]:
            chain.append(parents[len(chain) - 1][chain[-1]])
        out[host] = ("ambiguous" if len(per) > 1 else "placed", len(per), chain)
    return out, counts, len(leaves)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--exclude-switch")
    ap.add_argument("--exclude-port")
    args = ap.parse_args()
    out, counts, nleaves = tiers(args.dump, args.exclude_switch, args.exclude_port)
    print("# leaves %d, groups per tier %s" % (nleaves, counts))
    for host, (status, ndomains, chain) in out.items():
        print("%s %s %d:%s" % (host, status, ndomains, "".join(" " + c for c in chain)))


if __name__ == "__main__":
    main()
