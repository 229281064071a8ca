#!/usr/bin/env python3
"""check_layers.py over archives and objects built here from small C files,
so that each of its rules is seen to refuse what it is meant to refuse:

  test_check_layers.py --cc cc --nm nm --ar ar --script check_layers.py

Two layers, `topo_low` (lib/low) and `topo_high` standing on it, and one
program. The clean tree passes; each broken variant fails naming the rule.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CMAKE = "topo_layer_links(topo_high topo_low)\ntopo_layer_links(topo_low)\n"
HEADER = "int topo_low_public(void);\nint topo_high_public(void);\n"
CLEAN = {
    "low.c": "int low_helper(void); int low_helper(void) { return 1; }\n"
             "int topo_low_public(void); int topo_low_public(void) { return low_helper(); }\n",
    "high.c": "int topo_low_public(void); int topo_high_public(void);\n"
              "int topo_high_public(void) { return topo_low_public(); }\n",
    "prog.c": "int topo_high_public(void); int prog_run(void);\n"
              "int prog_run(void) { return topo_high_public(); }\n",
}
# Each variant: the files it changes, and a text the failure must contain.
BROKEN = [
    ("a lower layer calls a higher one",
     {"low.c": CLEAN["low.c"] + "int topo_high_public(void); int low_up(void);\n"
               "int low_up(void) { return topo_high_public(); }\n"},
     "topo_low uses topo_high_public, defined in topo_high, which it does not stand on"),
    ("a topo_ name no public header declares",
     {"low.c": CLEAN["low.c"] + "int topo_low_hidden(void); int topo_low_hidden(void) { return 2; }\n"},
     "topo_low defines topo_low_hidden, which no header of include/topo declares"),
    ("another library uses an internal name",
     {"high.c": CLEAN["high.c"] + "int low_helper(void); int high_more(void);\n"
                "int high_more(void) { return low_helper(); }\n"},
     "topo_high uses low_helper, an internal name of topo_low"),
    ("a program uses an internal name",
     {"prog.c": CLEAN["prog.c"] + "int low_helper(void); int prog_more(void);\n"
                "int prog_more(void) { return low_helper(); }\n"},
     "prog uses low_helper, an internal name of topo_low"),
    ("a program defines a topo_ name",
     {"prog.c": CLEAN["prog.c"] + "int topo_prog_x(void); int topo_prog_x(void) { return 3; }\n"},
     "prog defines topo_prog_x, which no header of include/topo declares"),
]


def build(args, root, files):
    inc = os.path.join(root, "include", "topo")
    os.makedirs(inc)
    with open(os.path.join(inc, "all.h"), "w") as fh:
        fh.write(HEADER)
    with open(os.path.join(root, "CMakeLists.txt"), "w") as fh:
        fh.write(CMAKE)
    objs = {}
    for name, text in files.items():
        src = os.path.join(root, name)
        with open(src, "w") as fh:
            fh.write(text)
        sub = os.path.join(root, "prog" if name == "prog.c" else "obj")
        os.makedirs(sub, exist_ok=True)
        objs[name] = os.path.join(sub, name[:-2] + ".o")
        subprocess.run([args.cc, "-c", src, "-o", objs[name]], check=True)
    archives = []
    for layer, name in (("topo_low", "low.c"), ("topo_high", "high.c")):
        lib = os.path.join(root, "lib%s.a" % layer)
        subprocess.run([args.ar, "rcs", lib, objs[name]], check=True)
        archives.append("%s=%s" % (layer, lib))
    return subprocess.run([sys.executable, args.script, "--nm", args.nm, "--cmake",
                           os.path.join(root, "CMakeLists.txt"), "--include", inc,
                           "--program", "prog=" + os.path.join(root, "prog")] + archives,
                          capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--cc", "--nm", "--ar", "--script"):
        ap.add_argument(opt, required=True)
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        r = build(args, os.path.join(tmp, "clean"), CLEAN)
        if r.returncode != 0:
            print("FAIL: the clean tree is refused:\n" + r.stdout + r.stderr)
            failures += 1
        for i, (what, change, expect) in enumerate(BROKEN):
            r = build(args, os.path.join(tmp, "broken%d" % i), dict(CLEAN, **change))
            if r.returncode == 0 or expect not in r.stdout:
                print("FAIL: %s: expected exit 1 with \"%s\", got %d:\n%s" %
                      (what, expect, r.returncode, r.stdout + r.stderr))
                failures += 1
            else:
                print("ok: %s" % what)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
