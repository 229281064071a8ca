# shellcheck shell=bash
# Debian package checks shared by scripts/quickstart.sh and scripts/test.sh.
# Source this file; it defines functions only.

# shellcheck disable=SC2034 # the lists are used by the sourcing scripts

# The packages topo builds against (see cmake/TopoDependencies.cmake).
TOPO_BUILD_PACKAGES=(build-essential cmake pkg-config libcurl4-openssl-dev libjansson-dev
    libyaml-dev libssl-dev libmicrohttpd-dev libsqlite3-dev libcmocka-dev python3)
# What the test suite needs on top of them (ninja-build: scripts/test.sh
# builds its trees with Ninja, quicker than make on 2 cores).
TOPO_TEST_PACKAGES=(python3 valgrind openssl python3-jsonpatch python3-yaml clang ninja-build
    chromium)
# Commands the chart test needs (test/chart: helm and the Kubernetes schemas
# come from npm), as COMMAND:PACKAGE; a command already on PATH (Node.js from
# another source, which brings its own npm) needs no package.
TOPO_TEST_COMMANDS=(node:nodejs npm:npm)
# Installed without their Recommends: the chart test needs promtool (it runs
# the PrometheusRule's alerts), from the prometheus package, not the server's
# companions (node exporter and the rest).
TOPO_TEST_LEAN_PACKAGES=(prometheus)
# What bench/webhook/run.sh needs on top of the build (the load generator).
TOPO_BENCH_PACKAGES=(wrk openssl)

# topo_deps_missing PKG...: prints, one per line, each PKG that dpkg does not
# report as installed.
topo_deps_missing() {
    local pkg status
    for pkg in "$@"; do
        status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
        [ "$status" = installed ] || printf '%s\n' "$pkg"
    done
}

# topo_deps_for_commands COMMAND:PACKAGE...: prints the PACKAGE of each
# COMMAND that is not on PATH.
topo_deps_for_commands() {
    local pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || printf '%s\n' "${pair#*:}"
    done
}

# topo_deps_install [--no-install-recommends] PKG...: installs, with apt-get,
# only the PKG... that are missing; does nothing (not even apt-get update)
# when all are present. Runs apt-get directly as root, else through sudo when
# it exists.
topo_deps_install() {
    local -a wanted=() missing=() sudo=() opts=()
    local pkg

    if [ "${1:-}" = --no-install-recommends ]; then
        opts=(--no-install-recommends)
        shift
    fi

    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "deps: dpkg-query not found (not Debian?): not checking packages" >&2
        return 0
    fi
    for pkg in "$@"; do
        case " ${wanted[*]} " in *" $pkg "*) ;; *) wanted+=("$pkg") ;; esac
    done
    while IFS= read -r pkg; do
        missing+=("$pkg")
    done < <(topo_deps_missing "${wanted[@]}")

    if [ "${#missing[@]}" -eq 0 ]; then
        echo "deps: all ${#wanted[@]} packages installed"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "deps: missing ${missing[*]}; run as root or install sudo" >&2
            return 1
        fi
    fi
    echo "deps: installing ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${opts[@]}" "${missing[@]}"
}
