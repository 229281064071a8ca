#!/usr/bin/env bash
# Quick start (README, first command). As root on a fresh Debian 12: installs
# the missing build packages, builds topo in build/ (Release) and runs the
# topoassign demo. Safe to run again. Exit status: that of the demo.
set -euo pipefail

# ---------------------------------------------------------------------------
# The demo. Adjust the fixture, label keys or flags here, and only here.
# Level keys are those the fixture's nodes carry (its `topology:` short keys
# under topology.topo.io/); spine is what Kueue calls a block.
DEMO_FIXTURE=fixtures/clusters/hgx-h100.yaml
DEMO_LEVELS=topology.topo.io/spine,topology.topo.io/leaf,topology.topo.io/rack,kubernetes.io/hostname
DEMO_REQUIRED=topology.topo.io/leaf
TOPOASSIGN=build/cli/topoassign

demo_assign() {
    "$TOPOASSIGN" assign --nodes "$DEMO_FIXTURE" --levels "$DEMO_LEVELS" \
        --count 8 --request nvidia.com/gpu=8 --required "$DEMO_REQUIRED"
}

demo_show() {
    "$TOPOASSIGN" show --nodes "$DEMO_FIXTURE" --levels "$DEMO_LEVELS"
}
# ---------------------------------------------------------------------------

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/deps.sh
source scripts/lib/deps.sh

topo_deps_install "${TOPO_BUILD_PACKAGES[@]}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2

echo
echo "+ topoassign assign (8 pods x 8 GPUs = 64 GPUs, one leaf switch required) on $DEMO_FIXTURE"
assign_rc=0
demo_assign || assign_rc=$?
echo
echo "+ topoassign show on $DEMO_FIXTURE"
show_rc=0
demo_show || show_rc=$?

# The demo's status: assign's (0 placed, 1 does not fit, 2 bad input), else show's.
if [ "$assign_rc" -ne 0 ]; then
    exit "$assign_rc"
fi
exit "$show_rc"
