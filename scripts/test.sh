#!/usr/bin/env bash
# The whole test suite (README, second command). Installs missing packages,
# then builds and tests three times:
#   build/       default build type, every ctest test;
#   build-asan/  Debug with AddressSanitizer + UBSan, every test too (labels
#                unit, cli and e2e: the daemons' code runs under the sanitizers);
#   build-fuzz/  clang + libFuzzer: only the fuzz targets, each fuzzed for
#                TOPO_FUZZ_SECONDS (15) from the fixtures (ctest -L fuzz).
# Fails if any fails. JOBS (default 2) sets build and test parallelism.
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

# The fuzz stage builds only the "fuzzers" target: the libraries carry
# libFuzzer's coverage instrumentation (fuzzer-no-link) and ASan+UBSan.
fuzz=passed
echo "=== fuzz: configure build-fuzz"
if ! cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTOPO_BUILD_FUZZERS=ON \
    -DTOPO_SANITIZE="address;undefined" -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link; then
    echo "=== fuzz: configure failed"
    fuzz=failed
elif ! cmake --build build-fuzz -j"$JOBS" --target fuzzers; then
    echo "=== fuzz: build failed"
    fuzz=failed
elif ! (cd build-fuzz && ctest --output-on-failure -j"$JOBS" -L '^fuzz$' --no-tests=error); then
    echo "=== fuzz: a fuzzer failed (its input is under build-fuzz/test/fuzz/crashes_*)"
    fuzz=failed
fi

echo "test.sh: normal build (build/): $normal; sanitizer build (build-asan/, unit+cli+e2e): $asan;" \
    "fuzz (build-fuzz/): $fuzz"
[ "$normal" = passed ] && [ "$asan" = passed ] && [ "$fuzz" = passed ]
