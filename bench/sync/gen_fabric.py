#!/usr/bin/env python3
"""An ibnetdiscover dump of a rail-optimised three-tier InfiniBand fat tree,
for topo-sync's benchmark (bench/README.md "bench/sync").

Hosts are named as fake_apiserver.py's bulk nodes are (POST /_fake/bulk: the
i-th node is dc1-spSS-lfLL-rRR-nNN, racks of 8, "leaves" of 4 racks, "spines"
of 8 leaves), so that the dump cables exactly the Node objects the fake API
server holds. The fabric:

  * every host has RAILS (8) adapters, mlx5_0..mlx5_7, each its own Ca
    (its own GUID), as on an HGX/DGX H100;
  * a scalable unit (SU) is 32 hosts; per SU and rail one leaf switch
    (MQM9790, 64 ports): 32 down to the SU's adapters of that rail, 32 up;
  * a pod is 8 SUs (256 hosts); per pod and rail 16 spines, every leaf of the
    pod's rail cabled to each with 2 cables;
  * per rail 32 core switches in 16 groups of 2: spine s of every pod of the
    rail cabled once to each core of group s (the tier joining the pods);
  * every switch carries its SHARP Aggregation Node, as Quantum switches do
    (ibnetdiscover lists it; topo-sync skips it).

Each cable appears at both ends (the switch's port line and the Ca stanza, or
both switches' port lines), as ibnetdiscover prints it. For 10,000 hosts:
80,000 adapters, 2,504 leaves, 5,120 spines, 256 cores, about 40 MB.

usage: gen_fabric.py --hosts N -o DUMP [--names FILE]
  --names writes the host names, one a line.
"""

import argparse
import sys

RAILS = 8
SU_HOSTS = 32          # hosts per scalable unit (one leaf per rail)
POD_SUS = 8            # SUs per pod
POD_SPINES = 16        # spines per pod and rail
LEAF_SPINE_CABLES = 2  # cables from a leaf to each spine of its pod
CORE_GROUP = 2         # cores per spine index and rail
SWITCH_PORTS = 64


def host_name(i):
    """The i-th bulk node's name (fake_apiserver.py BulkFactory.node)."""
    rack_g, in_rack = divmod(i, 8)
    leaf_g, rack = divmod(rack_g, 4)
    spine_g, leaf = divmod(leaf_g, 8)
    spine = f"dc1-sp{spine_g + 1:02d}"
    return f"{spine}-lf{leaf + 1:02d}-r{rack + 1:02d}-n{in_rack + 1:02d}"


class Fabric:
    def __init__(self, hosts):
        self.hosts = hosts
        self.sus = (hosts + SU_HOSTS - 1) // SU_HOSTS
        self.pods = (self.sus + POD_SUS - 1) // POD_SUS
        self.switches = {}  # guid -> [description, {port: (peer_guid, peer_port)}]
        self.cas = []       # (guid, description, switch_guid, switch_port)
        self.next_guid = 0x2c5eab0300000000
        self.lid = 1
        self.lids = {}
        self.leaf = {}      # (su, rail) -> guid
        self.spine = {}     # (pod, rail, s) -> guid
        self.core = {}      # (rail, group, k) -> guid
        self.build()

    def guid(self):
        self.next_guid += 0x40
        return self.next_guid

    def switch(self, desc):
        g = self.guid()
        self.switches[g] = [desc, {}]
        self.lids[g] = self.lid
        self.lid += 1
        return g

    def free_port(self, g, lo, hi):
        ports = self.switches[g][1]
        for p in range(lo, hi + 1):
            if p not in ports:
                return p
        raise RuntimeError(f"switch {g:x} has no free port in {lo}-{hi}")

    def cable(self, a, pa, b, pb):
        self.switches[a][1][pa] = (b, pb)
        self.switches[b][1][pb] = (a, pa)

    def build(self):
        for r in range(RAILS):
            for grp in range(POD_SPINES):
                for k in range(CORE_GROUP):
                    self.core[(r, grp, k)] = self.switch(
                        f"MF0;C{r}-IBCORE-{grp:02d}-{k}:MQM9790/U1")
            for pod in range(self.pods):
                for s in range(POD_SPINES):
                    g = self.spine[(pod, r, s)] = self.switch(
                        f"MF0;P{pod + 1:02d}-R{r}-IBSPINE-{s + 1:02d}:MQM9790/U1")
                    for k in range(CORE_GROUP):
                        c = self.core[(r, s, k)]
                        self.cable(g, self.free_port(g, 33, SWITCH_PORTS), c,
                                   self.free_port(c, 1, SWITCH_PORTS))
            for su in range(self.sus):
                pod = su // POD_SUS
                g = self.leaf[(su, r)] = self.switch(
                    f"MF0;P{pod + 1:02d}-SU{su % POD_SUS + 1}-R{r}-IBLEAF:MQM9790/U1")
                for s in range(POD_SPINES):
                    sp = self.spine[(pod, r, s)]
                    for _ in range(LEAF_SPINE_CABLES):
                        self.cable(g, self.free_port(g, 33, SWITCH_PORTS), sp,
                                   self.free_port(sp, 1, 32))
        for h in range(self.hosts):
            name = host_name(h)
            su = h // SU_HOSTS
            for r in range(RAILS):
                leaf = self.leaf[(su, r)]
                port = h % SU_HOSTS + 1
                ca = 0xe09d730300000000 + h * RAILS + r
                self.switches[leaf][1][port] = ("H", ca)
                self.cas.append((ca, f"{name} mlx5_{r}", leaf, port))
                self.lids[("H", ca)] = self.lid
                self.lid += 1

    def write(self, out):
        w = out.write
        w("#\n# Topology file: generated by bench/sync/gen_fabric.py\n#\n"
          f"# Initiated from node {self.cas[0][0]:016x} port {self.cas[0][0]:016x}\n\n")
        descs = {ca: d for ca, d, _, _ in self.cas}
        for g, (desc, ports) in self.switches.items():
            sharp = g + 0x10
            w(f"vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x{g:016x}\n"
              f"switchguid=0x{g:016x}({g:016x})\n"
              f'Switch\t65 "S-{g:016x}"\t\t# "{desc}" enhanced port 0 lid {self.lids[g]} lmc 0\n')
            for p in sorted(ports):
                peer, pp = ports[p]
                if peer == "H":
                    w(f'[{p}]\t"H-{pp:016x}"[1]({pp:016x}) \t\t# "{descs[pp]}" '
                      f'lid {self.lids[("H", pp)]} 4xNDR\n')
                else:
                    w(f'[{p}]\t"S-{peer:016x}"[{pp}]\t\t# "{self.switches[peer][0]}" '
                      f'lid {self.lids[peer]} 4xNDR\n')
            w(f'[65]\t"H-{sharp:016x}"[1]({sharp:016x}) \t\t'
              f'# "Mellanox Technologies Aggregation Node" lid {self.lid} 4xNDR\n\n')
            w(f"vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x{g:016x}\n"
              f"caguid=0x{sharp:016x}\n"
              f'Ca\t1 "H-{sharp:016x}"\t\t# "Mellanox Technologies Aggregation Node"\n'
              f'[1]({sharp:016x}) \t"S-{g:016x}"[65]\t\t# lid {self.lid} lmc 0 '
              f'"{desc}" lid {self.lids[g]} 4xNDR\n\n')
            self.lid += 1
        for ca, desc, sw, port in self.cas:
            w(f"vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x{ca:016x}\ncaguid=0x{ca:016x}\n"
              f'Ca\t1 "H-{ca:016x}"\t\t# "{desc}"\n'
              f'[1]({ca:016x}) \t"S-{sw:016x}"[{port}]\t\t# lid {self.lids[("H", ca)]} lmc 0 '
              f'"{self.switches[sw][0]}" lid {self.lids[sw]} 4xNDR\n\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--names")
    a = ap.parse_args()
    f = Fabric(a.hosts)
    with open(a.output, "w") as out:
        f.write(out)
    if a.names:
        with open(a.names, "w") as out:
            out.writelines(host_name(i) + "\n" for i in range(a.hosts))
    print(f"gen_fabric: {a.hosts} hosts, {len(f.cas)} adapters, {len(f.leaf)} leaves, "
          f"{len(f.spine)} spines, {len(f.core)} cores", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
