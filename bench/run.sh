#!/bin/sh
# Builds topo in Release (build-bench/) and runs the engine benchmark.
# Arguments go to bench_engine, e.g. `bench/run.sh --quick`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOPO_BENCH_BUILD_DIR:-$root/build-bench}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target bench_engine -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
exec "$build/bench/bench_engine" "$@"
