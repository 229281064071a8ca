#!/usr/bin/env python3
"""The Dockerfile, checked without building an image (these machines cannot):

  * its stages: a Debian 12 build stage that runs cmake (Release) and
    `cmake --install`, then a debian:12-slim runtime stage that installs no
    -dev package, copies /usr/bin from the build stage and runs as 65532;
  * every shared library the built binaries link directly (readelf's NEEDED,
    found with ldd, mapped to its Debian package with dpkg -S) is a package
    the runtime stage's apt-get install names; libc6 is in every Debian image;
  * `cmake --install` into a temporary prefix gives bin/topoassign,
    bin/topo-webhook, bin/topo-sync and the link bin/kubectl-topo -> topoassign
    (what the image copies), and the build tree has that link too.

Exit 77 (skipped) without readelf, ldd or dpkg (not Debian).

usage: dockerfile_check.py --dockerfile FILE --build-dir DIR --bin BIN [--bin BIN ...]
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BASE_PACKAGES = {"libc6"}  # in debian:12-slim itself
BINARIES = ("topoassign", "topo-webhook", "topo-sync")


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def instructions(path):
    """[(INSTRUCTION, arguments)] with continuation lines joined, comments
    dropped."""
    out, cur = [], ""
    with open(path) as fh:
        for line in fh:
            s = line.rstrip("\n")
            if not cur and (not s.strip() or s.lstrip().startswith("#")):
                continue
            if s.lstrip().startswith("#"):
                continue  # a comment inside a continued instruction
            if s.endswith("\\"):
                cur += s[:-1] + " "
                continue
            cur += s
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def stages(instrs):
    """[{"from": image, "name": alias, "body": [(INSTR, args)]}]"""
    out = []
    for word, rest in instrs:
        if word == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", rest, re.IGNORECASE)
            if not m:
                fail(f"FROM {rest}: not understood")
            out.append({"from": m.group(1), "name": m.group(2), "body": []})
        elif out:
            out[-1]["body"].append((word, rest))
        elif word != "ARG":
            fail(f"{word} before the first FROM")
    return out


def apt_packages(body):
    """Every package the stage's RUN lines give to apt-get install."""
    pkgs = []
    for word, rest in body:
        if word != "RUN":
            continue
        for cmd in re.split(r"&&|;", rest):
            words = shlex.split(cmd)
            if len(words) >= 2 and words[0] == "apt-get" and "install" in words:
                pkgs += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return pkgs


def check_stages(path):
    st = stages(instructions(path))
    if len(st) < 2:
        fail(f"{path}: {len(st)} stage(s), want a build stage and a runtime stage")
    build, runtime = st[0], st[-1]
    if not re.fullmatch(r"debian:12(-slim)?|debian:bookworm(-slim)?", build["from"]):
        fail(f"build stage FROM {build['from']}: want Debian 12")
    if runtime["from"] not in ("debian:12-slim", "debian:bookworm-slim"):
        fail(f"runtime stage FROM {runtime['from']}: want debian:12-slim")
    runs = " ".join(rest for word, rest in build["body"] if word == "RUN")
    for want in ("-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_INSTALL_PREFIX=/usr", "cmake --install"):
        if want not in runs:
            fail(f"build stage: no {want!r} in its RUN lines")
    build_pkgs = apt_packages(build["body"])
    for dev in ("libcurl4-openssl-dev", "libjansson-dev", "libyaml-dev", "libssl-dev",
                "libmicrohttpd-dev", "libsqlite3-dev", "cmake", "pkg-config"):
        if dev not in build_pkgs:
            fail(f"build stage: {dev} not installed ({build_pkgs})")
    pkgs = apt_packages(runtime["body"])
    devs = [p for p in pkgs if p.endswith("-dev") or p in ("build-essential", "cmake", "gcc")]
    if devs:
        fail(f"runtime stage installs build packages: {devs}")
    if "--no-install-recommends" not in " ".join(r for w, r in runtime["body"] if w == "RUN"):
        fail("runtime stage: apt-get install without --no-install-recommends")
    users = [rest for word, rest in runtime["body"] if word == "USER"]
    if not users or users[-1] not in ("65532", "65532:65532"):
        fail(f"runtime stage: USER {users}: want 65532 (numeric, for runAsNonRoot)")
    copies = [rest for word, rest in runtime["body"] if word == "COPY"]
    src = f"--from={build['name']}" if build["name"] else "--from=0"
    if not any(c.startswith(src) and c.split()[-1].rstrip("/") == "/usr/bin" for c in copies):
        fail(f"runtime stage: no COPY {src} ... /usr/bin/ ({copies})")
    if any(w == "ENTRYPOINT" for w, _ in runtime["body"]):
        fail("runtime stage: an ENTRYPOINT (the chart names each container's binary)")
    print(f"ok: stages {build['from']} -> {runtime['from']}, runtime packages {pkgs}")
    return set(pkgs)


def packages_of(paths):
    """{path: Debian package} for library paths, with one dpkg -S (about a
    second each): usrmerge leaves dpkg knowing a library under /lib or under
    /usr/lib, so both forms (and the real path) are asked."""
    forms = {}
    for path in paths:
        real = os.path.realpath(path)
        fs = {path, real}
        for f in list(fs):
            fs.add(f[len("/usr"):] if f.startswith("/usr/lib/") else
                   "/usr" + f if f.startswith("/lib/") else f)
        forms[path] = fs
    asked = sorted(set().union(*forms.values())) if forms else []
    r = subprocess.run(["dpkg", "-S", *asked], capture_output=True, text=True)
    owner = {}
    for line in r.stdout.splitlines():
        m = re.fullmatch(r"([^\s:,]+)(?::[^\s:]+)?(?:, [^:]+)?: (/\S+)", line)
        if m:
            owner[m.group(2)] = m.group(1)
    out = {}
    for path, fs in forms.items():
        pkgs = [owner[f] for f in sorted(fs) if f in owner]
        if not pkgs:
            fail(f"dpkg -S: no package owns {path}")
        out[path] = pkgs[0]
    return out


def needed(binary):
    """{soname: path} of the libraries the binary links directly."""
    r = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True)
    names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
    r = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True)
    paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", r.stdout, re.MULTILINE))
    missing = [n for n in names if n not in paths]
    if missing:
        fail(f"{binary}: ldd does not resolve {missing}")
    return {n: paths[n] for n in names}


def check_libraries(binaries, runtime_pkgs, libs=None, owner=None, quiet=False):
    libs = libs or {b: needed(b) for b in binaries}
    owner = owner or packages_of({p for l in libs.values() for p in l.values()})
    for b in binaries:
        for soname, path in sorted(libs[b].items()):
            pkg = owner[path]
            if pkg not in runtime_pkgs and pkg not in BASE_PACKAGES:
                fail(f"{os.path.basename(b)} links {soname} ({path}, package {pkg}), which the "
                     f"runtime stage does not install")
        if not quiet:
            print(f"ok: {os.path.basename(b)} links "
                  + ", ".join(f"{n} ({owner[p]})" for n, p in sorted(libs[b].items())))
    return libs, owner


def check_catches(binaries, runtime_pkgs, libs, owner):
    """The check itself: a runtime stage without any one package the
    binaries link must fail it."""
    linked = {owner[p] for l in libs.values() for p in l.values()} - BASE_PACKAGES
    for pkg in sorted(linked):
        try:
            check_libraries(binaries, runtime_pkgs - {pkg}, libs, owner, quiet=True)
        except Failure as e:
            if pkg not in str(e):
                fail(f"without {pkg} the check failed for another reason: {e}")
            continue
        fail(f"a runtime stage without {pkg} passes the check")
    print(f"ok: a runtime stage without any one of {', '.join(sorted(linked))} fails the check")


def check_install(build_dir):
    link = os.path.join(build_dir, "cli", "kubectl-topo")
    if not os.path.islink(link) or os.readlink(link) != "topoassign":
        fail(f"{link}: not a link to topoassign")
    with tempfile.TemporaryDirectory() as prefix:
        r = subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"cmake --install: {r.returncode}\n{r.stdout}{r.stderr}")
        got = sorted(os.listdir(os.path.join(prefix, "bin")))
        if got != sorted([*BINARIES, "kubectl-topo"]):
            fail(f"installed bin/: {got}")
        inst = os.path.join(prefix, "bin", "kubectl-topo")
        if not os.path.islink(inst) or os.readlink(inst) != "topoassign":
            fail(f"{inst}: not a link to topoassign")
        r = subprocess.run([inst, "--version"], capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout.startswith("kubectl topo (topoassign) "):
            fail(f"installed kubectl-topo --version: {r.returncode} {r.stdout!r}")
        extra = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs
                 if not d.endswith("/bin")]
        if extra:
            fail(f"cmake --install put more than bin/ there: {extra}")
    print("ok: cmake --install gives " + ", ".join(sorted([*BINARIES, "kubectl-topo"])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dockerfile", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--bin", action="append", required=True)
    a = ap.parse_args()
    for tool in ("readelf", "ldd", "dpkg"):
        if shutil.which(tool) is None:
            print(f"skipped: no {tool}")
            return 77
    try:
        runtime = check_stages(a.dockerfile)
        libs, owner = check_libraries(a.bin, runtime)
        check_catches(a.bin, runtime, libs, owner)
        check_install(a.build_dir)
    except Failure as e:
        print("FAIL:", e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
