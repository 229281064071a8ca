#!/usr/bin/env bash
# The whole test suite (README, second command). Installs missing packages,
# then builds and tests twice:
#   build/       default build type, every ctest test;
#   build-asan/  Debug with AddressSanitizer + UBSan, every test too (labels
#                unit, cli and e2e: the daemons' code runs under the sanitizers).
# Fails if either fails. JOBS (default 2) sets build and test parallelism.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=scripts/lib/deps.sh
source scripts/lib/deps.sh

JOBS=${JOBS:-2}
# Any single test running longer than this is a failure, not a hung CI job.
TEST_TIMEOUT=300

topo_deps_install "${TOPO_BUILD_PACKAGES[@]}" "${TOPO_TEST_PACKAGES[@]}" || exit 1

# run_suite NAME DIR CTEST_ARGS... -- CMAKE_ARGS...: configure, build, test.
# Prints its own step on failure and returns non-zero.
run_suite() {
    local name=$1 dir=$2
    shift 2
    local -a ctest_args=() cmake_args=()
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
        ctest_args+=("$1")
        shift
    done
    [ "$#" -gt 0 ] && shift
    cmake_args=("$@")

    echo "=== $name: configure $dir"
    cmake -S . -B "$dir" "${cmake_args[@]}" || { echo "=== $name: configure failed"; return 1; }
    echo "=== $name: build"
    cmake --build "$dir" -j"$JOBS" || { echo "=== $name: build failed"; return 1; }
    echo "=== $name: test"
    (cd "$dir" && ctest --output-on-failure -j"$JOBS" --timeout "$TEST_TIMEOUT" "${ctest_args[@]}") ||
        { echo "=== $name: tests failed"; return 1; }
}

# Sanitizer reports are failures; keep the stack traces readable.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

normal=passed
run_suite normal build -- || normal=failed

asan=passed
run_suite sanitizers build-asan -L '^(unit|cli|e2e)$' -- \
    -DCMAKE_BUILD_TYPE=Debug -DTOPO_SANITIZE="address;undefined" || asan=failed

echo "test.sh: normal build (build/): $normal; sanitizer build (build-asan/, unit+cli+e2e): $asan"
[ "$normal" = passed ] && [ "$asan" = passed ]
