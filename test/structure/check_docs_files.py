#!/usr/bin/env python3
"""docs/architecture.md names every source file of the daemons' folders.

  check_docs_files.py --root SOURCE_DIR

For each program folder checked (webhook/, controllers/), the section of
docs/architecture.md headed "### <folder>/" must name every <folder>/*.c in
backticks (`placer.c`), and must name no .c file that the folder does not
hold: a file added, renamed or removed without its line in the map fails
here, so the map cannot drift from the tree again (issue 30).
"""
import argparse
import pathlib
import re
import sys

FOLDERS = ("webhook", "controllers")
DOC = "docs/architecture.md"


def section(text, folder):
    """The lines under '### <folder>/' up to the next heading, or None."""
    m = re.search(r"^### " + re.escape(folder) + r"/.*$", text, re.M)
    if not m:
        return None
    rest = text[m.end():]
    nxt = re.search(r"^#{1,3} ", rest, re.M)
    return rest[: nxt.start()] if nxt else rest


def check(root):
    text = (root / DOC).read_text(encoding="utf-8")
    problems = []
    for folder in FOLDERS:
        files = sorted(p.name for p in (root / folder).glob("*.c"))
        body = section(text, folder)
        if body is None:
            problems.append(f"{DOC}: no '### {folder}/' section naming {folder}/'s files")
            continue
        named = set(re.findall(r"`([A-Za-z0-9_]+\.c)`", body))
        for name in files:
            if name not in named:
                problems.append(f"{DOC}: '### {folder}/' does not name {folder}/{name}")
        for name in sorted(named - set(files)):
            problems.append(f"{DOC}: '### {folder}/' names {name}, which {folder}/ does not hold")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=pathlib.Path)
    args = ap.parse_args()
    problems = check(args.root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    print(f"{DOC} names every file of " + ", ".join(f + "/" for f in FOLDERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
