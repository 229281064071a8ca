#!/usr/bin/env bash
# topo-webhook under HTTPS keep-alive load from wrk (a separate process), see
# bench/README.md "bench/webhook". Prints one table; never a timed test.
#
#   bench/webhook/run.sh                 # Release build in build-bench/
#   DURATION=5 bench/webhook/run.sh      # seconds per wrk run (default 10)
#   BUILD_DIR=build-rel SIZES="10000" CONNS="1 32" bench/webhook/run.sh
#   DB_DIR=/var/tmp bench/webhook/run.sh  # reservations on disk (default /dev/shm)
#   MODE=replicas bench/webhook/run.sh    # one replica against two (forwarded)
#   MODE=backlog bench/webhook/run.sh     # admission beside 1,000 gated PodSets
#   ROWS="packing:packed packing:passthrough" SIZES=10000 bench/webhook/run.sh
#
# Server configurations: noop (topo-webhook --noop, the transport floor: it
# reads and discards the body), then admission over each inventory size
# (default 1,000 and 10,000 nodes). Pod kinds: topology (a new single-pod
# PodSet per request), podset64 (Indexed Jobs of 64 pods: one placement, 63
# slot claims; slots.lua with JOB_SIZE=64), passthrough, gpupod (a GPU pod
# without topology request: packing off, allowed unchanged) and packed (the
# same pods with packing on: steered). ROWS picks rows as CONFIG:KIND, CONFIG
# admission (--levels, no busy node, packing off) or packing (packing.yaml:
# packing on at the rack level, over the same inventory with bound pods on
# about half the racks: topoassign generate --usage-seed).
# Each (configuration, pod kind, connections) row runs against a freshly
# started server, so rows do not share reservations (a 1k-node cluster holds
# 110k pods: a long run at 32 connections would otherwise fill it) and the
# peak RSS is that row's own. Exits 1 when any answer was wrong (non-2xx,
# socket error, or a body failing the Lua check): such figures are void.
# MODE=replicas measures the replicas' coordination instead
# (bench/webhook/replicas.sh); MODE=backlog admission while the ungater
# holds gated PodSets (bench/webhook/backlog.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$root/build-bench}
duration=${DURATION:-10}
read -r -a sizes <<<"${SIZES:-1000 10000}"
mode=${MODE:-admission}
case $mode in
admission) read -r -a conns_list <<<"${CONNS:-1 8 32}" ;;
replicas | backlog) read -r -a conns_list <<<"${CONNS:-1 8}" ;;
*)
    echo "bench/webhook: MODE is admission, replicas or backlog, not $mode" >&2
    exit 2
    ;;
esac
levels=topology.topo.io/block,topology.topo.io/rack,kubernetes.io/hostname
read -r -a row_list <<<"${ROWS:-admission:topology admission:podset64 admission:passthrough \
admission:gpupod packing:packed packing:passthrough}"
# Busy nodes for the packing rows: one bound pod on this share of the nodes
# (whole nodes 3 in 4), so that about half the racks of 8 are partly used
# (0.92^8 = 0.51 of them untouched) and packing has domains to choose from.
usage_fraction=${USAGE_FRACTION:-0.08}

# shellcheck source=scripts/lib/deps.sh
source "$root/scripts/lib/deps.sh"
if ! command -v wrk >/dev/null 2>&1; then
    topo_deps_install "${TOPO_BENCH_PACKAGES[@]}"
fi

echo "bench/webhook: Release build in $build" >&2
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target topo-webhook topoassign -j2 >/dev/null
webhook=$build/webhook/topo-webhook

tmp=$(mktemp -d "${TMPDIR:-/tmp}/topo-bench-webhook.XXXXXX")
server_pid=
other_pids=()  # replicas besides server_pid, and the fake API server (MODE=replicas)
cleanup() {
    local pid
    for pid in "$server_pid" "${other_pids[@]}"; do
        [ -n "$pid" ] || continue
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

sh "$root/test/e2e/make_test_pki.sh" "$tmp/pki" >/dev/null
[ "$mode" != admission ] || for n in "${sizes[@]}"; do
    "$build/cli/topoassign" generate --nodes "$n" --gpus-per-node 8 -o "$tmp/nodes-$n.json"
    if [[ " ${row_list[*]}" == *" packing:"* ]]; then
        "$build/cli/topoassign" generate --nodes "$n" --gpus-per-node 8 --usage-seed 1 \
            --usage-fraction "$usage_fraction" --pods-out "$tmp/pods-$n.json" \
            -o "$tmp/nodes-used-$n.json" >&2
    fi
done

# Two free TCP ports below the ephemeral range (wrk's own client ports,
# some in TIME_WAIT after a row, come from that range): bound, read,
# released; start_server retries on the small race with other users.
free_ports() {
    python3 -c 'import random, socket
ports = []
while len(ports) < 2:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(20000, 32000)))
        ports.append(s.getsockname()[1])
    except OSError:
        pass
    finally:
        s.close()
print(*ports)'
}

# start_server ARGS...: starts topo-webhook, waits for /readyz (the snapshot
# is built before the server reports ready). Sets server_pid, port and
# hport; @PORT@ in ARGS is the port (a replica's --peer-address).
start_server() {
    local i attempt
    for ((attempt = 0; attempt < 5; attempt++)); do
        read -r port hport < <(free_ports)
        : >"$tmp/server.log"
        "$webhook" --port "$port" --health-port "$hport" --tls-cert-file "$tmp/pki/server.pem" \
            --tls-private-key-file "$tmp/pki/server.key" --log-format text -v warn \
            "${@//@PORT@/$port}" 2>"$tmp/server.log" &
        server_pid=$!
        for ((i = 0; i < 300; i++)); do
            if python3 -c 'import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200 else 1)' \
                "http://127.0.0.1:$hport/readyz" 2>/dev/null; then
                return 0
            fi
            if ! kill -0 "$server_pid" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
        grep -q 'Address already in use' "$tmp/server.log" || break
    done
    echo "bench/webhook: topo-webhook $* did not become ready; its log:" >&2
    cat "$tmp/server.log" >&2
    exit 2
}

# server_ticks: the server's CPU time so far (user + system), in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }

# stop_server: sets rss to the server's peak RSS in KiB (VmHWM), stops it.
stop_server() {
    rss=$(awk '/^VmHWM:/ {print $2}' "/proc/$server_pid/status")
    kill -TERM "$server_pid"
    wait "$server_pid" || true
    server_pid=
}

# Rows: config kind conns rps p50_us p99_us rss_kib errors extra cpu_us
clk_tck=$(getconf CLK_TCK)
rows=$tmp/rows
: >"$rows"
errors_total=0
rss=0

# run_row CONFIG KIND EXPECT SERVER_ARGS...: one fresh server, one wrk run.
run_row() {
    local config=$1 kind=$2 expect=$3 conns=$4
    shift 4
    start_server "$@"
    run_wrk "$config" "$kind" "$expect" "$conns"
}

# run_wrk CONFIG KIND EXPECT CONNS: one wrk run against the server started
# last (port), which it then stops; one line in $rows. KIND is a script
# here (topology, slots, passthrough, gpupod), packed (gpupod.lua), or
# podsetN: slots.lua with Jobs of N pods.
run_wrk() {
    local config=$1 kind=$2 expect=$3 conns=$4
    local threads=$((conns < 2 ? conns : 2)) out line script=$kind job_size=${JOB_SIZE:-32}
    if [[ $kind =~ ^podset([0-9]+)$ ]]; then
        script=slots
        job_size=${BASH_REMATCH[1]}
    fi
    [ "$kind" != packed ] || script=gpupod
    local ticks0 ticks1
    ticks0=$(server_ticks)
    out=$(JOB_SIZE=$job_size wrk -t"$threads" -c"$conns" -d"${duration}s" --latency \
        -s "$here/$script.lua" "https://127.0.0.1:$port/mutate" -- "$expect")
    ticks1=$(server_ticks)
    before_stop
    stop_server
    line=$(grep '^BENCH ' <<<"$out") || {
        echo "bench/webhook: no summary from wrk:" >&2
        echo "$out" >&2
        exit 2
    }
    # BENCH requests=.. duration_us=.. p50_us=.. p99_us=.. max_us=.. non2xx=.. sockerr=.. checked=.. bad=..
    local requests duration_us p50 p99 non2xx sockerr bad rps errs
    requests=$(sed -E 's/.* requests=([0-9]+).*/\1/' <<<"$line")
    duration_us=$(sed -E 's/.* duration_us=([0-9]+).*/\1/' <<<"$line")
    p50=$(sed -E 's/.* p50_us=([0-9.]+).*/\1/' <<<"$line")
    p99=$(sed -E 's/.* p99_us=([0-9.]+).*/\1/' <<<"$line")
    non2xx=$(sed -E 's/.* non2xx=([0-9]+).*/\1/' <<<"$line")
    sockerr=$(sed -E 's/.* sockerr=([0-9]+).*/\1/' <<<"$line")
    bad=$(sed -E 's/.* bad=([0-9]+).*/\1/' <<<"$line")
    rps=$(awk -v r="$requests" -v d="$duration_us" 'BEGIN {printf "%.0f", (d > 0 ? r * 1e6 / d : 0)}')
    # The server's CPU per request (µs): what a row costs whatever else
    # runs on the machine, unlike req/s and the latencies.
    cpu_us=$(awk -v t=$((ticks1 - ticks0)) -v hz="$clk_tck" -v r="$requests" \
        'BEGIN {printf "%.0f", (r > 0 ? t * 1e6 / hz / r : 0)}')
    errs=$((non2xx + sockerr + bad))
    if [ "$errs" -gt 0 ]; then
        echo "bench/webhook: $config $kind c=$conns: $non2xx non-2xx, $sockerr socket errors," \
            "$bad bad bodies" >&2
        grep '^BENCH_FIRST_BAD' <<<"$out" >&2 || true
    fi
    errors_total=$((errors_total + errs))
    last_requests=$requests
    echo "$config $kind $conns $rps $p50 $p99 $rss $errs ${row_extra:--} $cpu_us" >>"$rows"
    echo "bench/webhook: $config $kind c=$conns: $rps req/s, p99 ${p99} us" >&2
}

# before_stop: what a mode reads from the server before run_wrk stops it.
before_stop() { :; }

# The machine is shared: the load average before and after says how much
# the figures can be trusted.
db_dir=${DB_DIR:-/dev/shm}
[ -d "$db_dir" ] && [ -w "$db_dir" ] || db_dir=$tmp
if [ "$mode" = replicas ]; then
    # shellcheck source=bench/webhook/replicas.sh
    source "$here/replicas.sh"
    run_replicas
    exit $?
fi
if [ "$mode" = backlog ]; then
    # shellcheck source=bench/webhook/backlog.sh
    source "$here/backlog.sh"
    run_backlog
    exit $?
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The transport floor per request script (gpupod and packed send the same
# pods: one floor, under packed).
floor_kinds=()
for r in "${row_list[@]}"; do
    k=${r#*:}
    [ "$k" != gpupod ] || k=packed
    [[ " ${floor_kinds[*]} " == *" $k "* ]] || floor_kinds+=("$k")
done
for kind in "${floor_kinds[@]}"; do
    for c in "${conns_list[@]}"; do
        run_row noop "$kind" allow "$c" --noop
    done
done
for n in "${sizes[@]}"; do
    for r in "${row_list[@]}"; do
        config=${r%%:*} kind=${r#*:}
        expect="patch"
        case $kind in passthrough | gpupod) expect="nopatch" ;; esac
        case $config in
        admission) args=(--inventory "$tmp/nodes-$n.json" --levels "$levels") ;;
        packing)
            args=(--inventory "$tmp/nodes-used-$n.json" --pods "$tmp/pods-$n.json"
                --config "$here/packing.yaml")
            ;;
        *)
            echo "bench/webhook: ROWS: $r: the configuration is admission or packing" >&2
            exit 2
            ;;
        esac
        for c in "${conns_list[@]}"; do
            # Reservations in a cache file as the chart deploys it: an
            # emptyDir with medium Memory (tmpfs; survives container
            # restarts like a disk emptyDir). DB_DIR=/some/disk measures a
            # disk-backed file instead (the WAL's writes then add ms tails).
            db="$db_dir/topo-bench-$$-$n.db"
            rm -f "$db" "$db-wal" "$db-shm"
            run_row "$config-$n" "$kind" "$expect" "$c" "${args[@]}" --db "$db"
            rm -f "$db" "$db-wal" "$db-shm"
        done
    done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The table, then the issue's goals (measurements, not pass/fail tests).
awk -v dur="$duration" -v lb="$load_before" -v la="$load_after" -v cores="$(nproc)" '
{ cfg[NR] = $1; kind[NR] = $2; c[NR] = $3; rps[NR] = $4; p50[NR] = $5; p99[NR] = $6
  rss[NR] = $7; err[NR] = $8; cpu[NR] = $10
  if ($1 == "noop") floor[$2 "/" $3] = $4 }
function ratio(i,   k) { k = kind[i] == "gpupod" ? "packed" : kind[i]
    f = floor[k "/" c[i]]; return f > 0 ? rps[i] / f : 0 }
function row(cf, k, cc,   i) { for (i = 1; i <= NR; i++)
    if (cfg[i] == cf && kind[i] == k && c[i] == cc) return i; return 0 }
function goal(name, value, unit, op, target,   ok) {
    ok = (op == ">=") ? value >= target : value <= target
    printf "  %-48s %10.2f %-5s goal %s %-6g %s\n", name, value, unit, op, target, ok ? "ok" : "MISS" }
END {
  printf "topo-webhook under wrk, %ss per row, keep-alive HTTPS, fresh server per row\n", dur
  printf "%d cores; load average before %s, after %s (client and server share the cores)\n", cores, lb, la
  printf "%-17s %-11s %5s %9s %9s %9s %7s %7s %9s %6s\n", "config", "pods", "conns", "req/s",
         "p50_ms", "p99_ms", "ratio", "cpu_us", "rss_MiB", "errors"
  for (i = 1; i <= NR; i++)
    printf "%-17s %-11s %5d %9d %9.3f %9.3f %7.2f %7d %9.1f %6d\n", cfg[i], kind[i], c[i], rps[i],
           p50[i] / 1000, p99[i] / 1000, ratio(i), cpu[i], rss[i] / 1024, err[i]
  n = "admission-10000"
  print "goals (10k nodes):"
  if ((i = row(n, "topology", 32))) goal("single-pod PodSets, 32 conns, ratio to floor", ratio(i), "", ">=", 0.3)
  if ((i = row(n, "podset64", 32))) goal("64-pod PodSets, 32 conns, ratio to floor", ratio(i), "", ">=", 0.7)
  if ((i = row(n, "passthrough", 32))) goal("pass-through pods, 32 conns, ratio to floor", ratio(i), "", ">=", 0.9)
  if ((i = row(n, "topology", 1))) goal("single-pod PodSets, 1 conn, p99", p99[i] / 1000, "ms", "<=", 0.5)
  if ((i = row(n, "topology", 8))) goal("single-pod PodSets, 8 conns, p99", p99[i] / 1000, "ms", "<=", 2)
  if ((i = row(n, "podset64", 8))) goal("64-pod PodSets, 8 conns, p99", p99[i] / 1000, "ms", "<=", 2)
  # issue 32: packed pods against a first pod, pass-through with packing on and off
  p = "packing-10000"
  if ((i = row(p, "packed", 8)))
    goal("packed pods (packing on), 8 conns, p99", p99[i] / 1000, "ms", "<=", 3)
  for (cc = 1; cc <= 32; cc *= 2)
    if ((i = row(p, "packed", cc)) && (j = row(n, "topology", cc)))
      goal("packed pods, " cc " conns, cpu_us over a first pod", cpu[j] > 0 ? cpu[i] / cpu[j] : 0,
           "", "<=", 1)
  for (cc = 1; cc <= 32; cc *= 2)
    if ((i = row(p, "passthrough", cc)) && (j = row(n, "passthrough", cc)))
      printf "  %-48s %10d / %d us (packing on / off)\n", "pass-through pods, " cc " conns, cpu_us",
             cpu[i], cpu[j]
  m = 0; for (i = 1; i <= NR; i++) if ((cfg[i] == n || cfg[i] == p) && rss[i] > m) m = rss[i]
  if (m > 0) goal("peak RSS (largest row)", m / 1024, "MiB", "<=", 128)
}' "$rows"

if [ "$errors_total" -gt 0 ]; then
    echo "bench/webhook: $errors_total wrong answers: the figures above are void" >&2
    exit 1
fi
