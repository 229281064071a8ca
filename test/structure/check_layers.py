#!/usr/bin/env python3
"""No layer uses a symbol that only a layer it does not stand on defines;
no name outside the public headers looks public; no internal name is used
outside its own library.

  check_layers.py --nm nm --cmake CMakeLists.txt --include include/topo \
      [--program webhook=DIR ...] topo_util=libtopo_util.a ...

The dependencies are the topo_layer_links lines of the top CMakeLists.txt
(what each layer says it stands on, transitively); the symbols come from
`nm` of the built archives: every undefined symbol of an archive that
another layer's archive defines must be defined by one of the layers under
it. Link order hides such a use until a binary links the layers in another
order (or a test links only the layers it needs), so it is checked here.

Names (docs/style.md "Names"): a global symbol spelled `topo_*` is public and
must be declared in a header of include/topo/; every other global symbol of
a library is internal to it (`cache_*`, `adm_*`, `eng_*`, ...: the library's
short prefix, as libuv's `uv__` and libgit2's `git_x__`) and no other library
and no program may use it. A program (--program NAME=DIR: every object file
below DIR) defines no `topo_*` name of its own.
"""
import argparse
import glob
import os
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


def symbols(nm, *files):
    out = subprocess.run([nm, "-g", *files], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


def public_names(include_dir):
    names = set()
    for path in sorted(glob.glob(os.path.join(include_dir, "*.h"))):
        with open(path) as fh:
            names.update(re.findall(r"\btopo_\w+", fh.read()))
    return names


def program_objects(directory):
    return sorted(glob.glob(os.path.join(directory, "**", "*.o"), recursive=True))


def name_violations(table, programs, public):
    """The two naming rules over the archives' and the programs' symbols."""
    bad = []
    owner = {}
    for name, (defined, _) in table.items():
        for sym in defined:
            owner.setdefault(sym, name)
    for name, (defined, _) in sorted(table.items()) + sorted(programs.items()):
        for sym in sorted(defined):
            if sym.startswith("topo_") and sym not in public:
                bad.append("%s defines %s, which no header of include/topo declares: "
                           "declare it there or give it the library's internal prefix" % (name, sym))
    for name, (defined, undefined) in sorted(table.items()) + sorted(programs.items()):
        for sym in sorted(undefined - defined):
            lib = owner.get(sym)
            if lib and lib != name and not sym.startswith("topo_"):
                bad.append("%s uses %s, an internal name of %s" % (name, sym, lib))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", required=True)
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--include", required=True, help="include/topo, the public headers")
    ap.add_argument("--program", action="append", default=[],
                    help="NAME=DIR: a program's object files, below DIR")
    ap.add_argument("archives", nargs="+")
    args = ap.parse_args()
    with open(args.cmake) as fh:
        deps = layer_deps(fh.read())
    archives = dict(a.split("=", 1) for a in args.archives)
    table = {name: symbols(args.nm, path) for name, path in archives.items()}
    programs = {}
    for spec in args.program:
        name, directory = spec.split("=", 1)
        objects = program_objects(directory)
        if not objects:
            print("FAIL: program %s: no object files below %s" % (name, directory))
            return 1
        programs[name] = symbols(args.nm, *objects)
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
    bad += name_violations(table, programs, public_names(args.include))
    for b in bad:
        print("FAIL: " + b)
    print("check_layers: %d archives, %d programs, %s" %
          (len(table), len(programs), "%d violations" % len(bad) if bad
           else "every use is of a layer below, every topo_ name public, "
                "every internal name kept in its library"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
