#!/bin/sh
# Usage: generate.sh TOPOASSIGN WORKDIR
# Checks `topoassign generate`: node count, labels, determinism, usage
# output, and exit status 2 on bad flags. POSIX sh, no other tools needed.
set -u
T=$1
W=$2
rm -rf "$W" && mkdir -p "$W" || exit 1
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

count() { # count FILE PATTERN: lines of FILE containing PATTERN
    grep -c -- "$2" "$1" 2>/dev/null || true
}

# Shape and count.
"$T" generate --nodes 100 --leaves-per-spine 2 --racks-per-leaf 3 --nodes-per-rack 6 \
    --nvlink-nodes 3 -o "$W/a.json" || fail "generate --nodes 100 exited $?"
[ "$(count "$W/a.json" '"kind": "Node"')" = 100 ] || fail "want 100 nodes"
[ "$(count "$W/a.json" '"kind": "List"')" = 1 ] || fail "want one List"
[ "$(count "$W/a.json" '"kubernetes.io/hostname": "dc1-sp01-lf01-r01-n01"')" = 1 ] ||
    fail "first node's hostname label"
[ "$(count "$W/a.json" '"topology.topo.io/nvlink": "dc1-sp01-lf01-r01-nvl01"')" = 3 ] ||
    fail "NVLink domains of 3 nodes"
# 100 nodes in spines of 36: 3 spines, the last one partial.
[ "$(count "$W/a.json" '"topology.topo.io/block": "dc1-sp03"')" = 28 ] || fail "block label"
[ "$(count "$W/a.json" '"nvidia.com/gpu": "8"')" = 200 ] || fail "8 GPUs allocatable+capacity"
[ "$(count "$W/a.json" '"type": "Ready"')" = 100 ] || fail "Ready conditions"

# Determinism: same options, same bytes; stdout equals -o.
"$T" generate --nodes 100 --leaves-per-spine 2 --racks-per-leaf 3 --nodes-per-rack 6 \
    --nvlink-nodes 3 > "$W/b.json" || fail "generate to stdout exited $?"
cmp -s "$W/a.json" "$W/b.json" || fail "output differs between runs"

# Usage: deterministic per seed, different across seeds.
"$T" generate --nodes 200 --usage-seed 42 --usage-fraction 0.4 --pods-out "$W/p1.json" \
    -o "$W/n1.json" 2>/dev/null || fail "generate with usage exited $?"
"$T" generate --nodes 200 --usage-seed 42 --usage-fraction 0.4 --pods-out "$W/p2.json" \
    -o "$W/n2.json" 2>/dev/null || fail "generate with usage exited $?"
"$T" generate --nodes 200 --usage-seed 43 --usage-fraction 0.4 --pods-out "$W/p3.json" \
    -o "$W/n3.json" 2>/dev/null || fail "generate with usage exited $?"
cmp -s "$W/p1.json" "$W/p2.json" || fail "pods differ for the same seed"
cmp -s "$W/p1.json" "$W/p3.json" && fail "pods equal for different seeds"
cmp -s "$W/n1.json" "$W/n3.json" || fail "nodes depend on the usage seed"
pods=$(count "$W/p1.json" '"kind": "Pod"')
[ "$pods" -gt 50 ] && [ "$pods" -lt 110 ] || fail "want about 80 busy nodes, got $pods"
[ "$(count "$W/p1.json" '"phase": "Running"')" = "$pods" ] || fail "pods Running"
[ "$(count "$W/p1.json" '"nodeName": "dc1-sp')" = "$pods" ] || fail "pods bound"
"$T" generate --nodes 50 --usage-seed 1 --usage-fraction 0 --pods-out "$W/p0.json" \
    -o "$W/n0.json" 2>/dev/null || fail "fraction 0 exited $?"
[ "$(count "$W/p0.json" '"kind": "Pod"')" = 0 ] || fail "fraction 0 makes no pods"

# Bad flags exit 2.
for args in "" "--nodes" "--nodes 0" "--nodes -3" "--nodes 12abc" "--nodes 10 --bogus 1" \
    "--nodes 10 --nvlink-nodes 3" "--nodes 1000 --spines-per-dc 1" \
    "--nodes 10 --spines-per-dc 0" "--nodes 10 --gpus-per-node 0" \
    "--nodes 10 --usage-seed 1" "--nodes 10 --pods-out $W/x.json" \
    "--nodes 10 --usage-fraction 0.5" \
    "--nodes 10 --usage-seed 1 --usage-fraction 1.5 --pods-out $W/x.json" \
    "--nodes 10 -o $W/no-such-dir/x.json"; do
    # shellcheck disable=SC2086
    "$T" generate $args > /dev/null 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "generate $args: exit $rc, want 2"
done

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "generate: all checks passed"
