#!/usr/bin/env python3
"""No layer uses a symbol that only a layer it does not stand on defines.

  check_layers.py --nm nm --cmake CMakeLists.txt topo_util=libtopo_util.a ...

The dependencies are the topo_layer_links lines of the top CMakeLists.txt
(what each layer says it stands on, transitively); the symbols come from
`nm` of the built archives: every undefined symbol of an archive that
another layer's archive defines must be defined by one of the layers under
it. Link order hides such a use until a binary links the layers in another
order (or a test links only the layers it needs), so it is checked here.
"""
import argparse
import re
import subprocess
import sys


def layer_deps(cmake_text):
    deps = {}
    for m in re.finditer(r"topo_layer_links\((topo_\w+)([^)]*)\)", cmake_text):
        deps[m.group(1)] = [d for d in m.group(2).split() if d.startswith("topo_")]
    return deps


def closure(deps, layer):
    seen, todo = set(), [layer]
    while todo:
        for d in deps.get(todo.pop(), []):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def symbols(nm, archive):
    out = subprocess.run([nm, "-g", archive], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", required=True)
    ap.add_argument("--cmake", required=True)
    ap.add_argument("archives", nargs="+")
    args = ap.parse_args()
    with open(args.cmake) as fh:
        deps = layer_deps(fh.read())
    archives = dict(a.split("=", 1) for a in args.archives)
    table = {name: symbols(args.nm, path) for name, path in archives.items()}
    owner = {}
    for name, (defined, _) in table.items():
        for sym in defined:
            owner.setdefault(sym, set()).add(name)
    bad = []
    for name, (defined, undefined) in sorted(table.items()):
        below = closure(deps, name)
        for sym in sorted(undefined - defined):
            owners = owner.get(sym)
            if owners and not owners & below:
                bad.append("%s uses %s, defined in %s, which it does not stand on (%s)" %
                           (name, sym, ", ".join(sorted(owners)),
                            ", ".join(sorted(below)) or "nothing"))
    for b in bad:
        print("FAIL: " + b)
    print("check_layers: %d archives, %s" % (len(table), "%d violations" % len(bad) if bad
                                            else "every use is of a layer below"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
