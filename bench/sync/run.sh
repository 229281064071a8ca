#!/bin/sh
# topo-sync's controller against the fake API server with 10,000 GPU nodes
# and the ibnetdiscover dump of their fabric (bench/README.md "bench/sync").
# Prints figures beside the targets; never a timed test.
#
#   bench/sync/run.sh                       # Release build in build-bench/
#   bench/sync/run.sh --skip-default-qps    # without the 200 s cold start at 50/100 QPS
#   BUILD_DIR=build-rel bench/sync/run.sh --nodes 2000
#
# Arguments go to bench/sync/bench_topo_sync.py.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$root/build-bench}
echo "bench/sync: Release build in $build" >&2
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target topo-sync -j2 >/dev/null
exec python3 "$here/bench_topo_sync.py" --topo-sync "$build/controllers/topo-sync" "$@"
