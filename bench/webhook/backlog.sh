# shellcheck shell=bash
# shellcheck disable=SC2154 # tmp, root, levels, port, hport... are run.sh's
# bench/webhook MODE=backlog, sourced by run.sh (its helpers: start_server,
# run_wrk, before_stop, $rows): admission while the ungater holds a backlog
# of gated PodSets that cannot fit (issue 16, docs/webhook.md "Gated pods").
#
# One fake API server (test/e2e/fake_apiserver.py, TLS with the test PKI, a
# token file; replicas.sh's fake_api_start) holds NODES generated GPU nodes
# (default 10,000; 8 GPUs, 8 per rack). One topo-webhook (--kubeconfig,
# --db, --policy gate, --ungate-interval 1) gates PODSETS PodSets (default
# 1,000): Indexed Jobs of SIZE pods (default 9) of 8 GPUs each that require
# one rack, 72 GPUs where a rack has 64, so none ever fits. Each pod's
# AdmissionReview goes to the webhook and the patched (gated) pod is created
# in the API server (backlog_load.py), as Kubernetes does. Once the ungater
# has evaluated every PodSet (topo_webhook_ungater_not_fitting = PODSETS),
# wrk sends new topology pods (topology.lua: a new one-pod PodSet per
# request, rack required, cpu 100m: they fit) to the same server at 1 and 8
# connections. Every admission places a pod, which kicks an ungater round.
# Per row: admission p50/p99 (wrk), the rounds run meanwhile
# (topo_webhook_ungater_round_seconds: count, mean, and the bucket bound
# that holds the 99th percentile), the ungater's GETs of gated pods in the
# API server (fake /_fake/stats verbs) and the server's peak RSS (VmHWM).
# Closed loop by default (PACE_MS=0, as MODE=admission); PACE_MS=N paces.

backlog_podsets=${PODSETS:-1000}
backlog_size=${SIZE:-9}
backlog_pace=${PACE_MS:-0}
NODES=${NODES:-10000}
# shellcheck source=bench/webhook/replicas.sh
source "$here/replicas.sh" # fake_api_start, metric_of
export PACE_MS=$backlog_pace

# hist_of HPORT NAME: "count sum p99_bound" of a histogram (p99_bound: the
# upper bound of the bucket holding the 99th percentile, "inf" past the last).
hist_of() {
    python3 - "$1" "$2" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read()
name = sys.argv[2]
count = total = 0.0
buckets = []
for line in text.decode().splitlines():
    key, _, value = line.rpartition(" ")
    if key == name + "_count":
        count = float(value)
    elif key == name + "_sum":
        total = float(value)
    elif key.startswith(name + '_bucket{le="'):
        buckets.append((key.split('"')[1], float(value)))
print("%d %.6f %s" % (count, total, " ".join("%s=%d" % b for b in buckets)))
PY
}

# api_gets: GETs of pods the fake API server answered (all identities).
api_gets() {
    python3 - "$fake_url" "$tmp/pki/ca.pem" <<'PY'
import json, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
st = json.load(urllib.request.urlopen(sys.argv[1] + "/_fake/stats", context=ctx, timeout=10))
print(st.get("verbs", {}).get("pods", {}).get("GET", 0))
PY
}

# rounds_between BEFORE AFTER: "count mean_ms p99_ms" of the rounds between
# two hist_of readings (p99_ms: the bucket bound, in ms).
rounds_between() {
    python3 - "$1" "$2" <<'PY'
import sys
def parse(s):
    f = s.split()
    return int(f[0]), float(f[1]), [(b.split("=")[0], int(b.split("=")[1])) for b in f[2:]]
c0, s0, b0 = parse(sys.argv[1])
c1, s1, b1 = parse(sys.argv[2])
n = c1 - c0
p99 = "-"
if n > 0:
    for (le, v1), (_, v0) in zip(b1, b0):
        if v1 - v0 >= 0.99 * n:
            p99 = "%g" % (float(le) * 1000) if le != "+Inf" else "inf"
            break
print("%d %.3f %s" % (n, (s1 - s0) / n * 1000 if n > 0 else 0, p99))
PY
}

run_backlog() {
    local c db=$db_dir/topo-bench-$$-backlog.db load_before load_after before after gets0
    local h=topo_webhook_ungater_round_seconds first_round
    fake_api_start
    rm -f "$db" "$db-wal" "$db-shm"
    start_server --kubeconfig "$tmp/kubeconfig" --db "$db" --levels "$levels" --policy gate \
        --ungate-interval 1
    echo "bench/webhook: gating $backlog_podsets PodSets of $backlog_size pods" >&2
    python3 "$here/backlog_load.py" "$port" "$fake_url" "$tmp/pki/ca.pem" "$tmp/token" \
        "$backlog_podsets" "$backlog_size" || exit 2
    local i n=0
    for ((i = 0; i < 600; i++)); do
        n=$(metric_of "$hport" topo_webhook_ungater_not_fitting)
        [ "$n" -ge "$backlog_podsets" ] && break
        sleep 0.5
    done
    if [ "$n" -lt "$backlog_podsets" ]; then
        echo "bench/webhook: the ungater remembers $n of $backlog_podsets PodSets as not" \
            "fitting after 5 minutes; its log:" >&2
        tail -20 "$tmp/server.log" >&2
        exit 2
    fi
    # The round that evaluated them all (API calls and engine passes).
    first_round=$(hist_of "$hport" "$h")
    # Rows share the server (the backlog is the point): stop_server only
    # reads the peak RSS until the last row.
    # shellcheck disable=SC2317,SC2034 # called by run_wrk, which reads rss
    stop_server() { rss=$(awk '/^VmHWM:/ {print $2}' "/proc/$server_pid/status"); }
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    for c in "${conns_list[@]}"; do
        before=$(hist_of "$hport" "$h")
        gets0=$(api_gets)
        # shellcheck disable=SC2317 # called by run_wrk
        before_stop() {
            after=$(hist_of "$hport" "$h")
            row_extra="$(rounds_between "$before" "$after") $(($(api_gets) - gets0))"
            row_extra="$row_extra $(metric_of "$hport" topo_webhook_ungater_last_round_microseconds)"
        }
        run_wrk "backlog-$NODES" topology patch "$c"
    done
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    kill -TERM "$server_pid"
    wait "$server_pid" || true
    server_pid=
    rm -f "$db" "$db-wal" "$db-shm"

    awk -v dur="$duration" -v lb="$load_before" -v la="$load_after" -v cores="$(nproc)" \
        -v nodes="$NODES" -v podsets="$backlog_podsets" -v size="$backlog_size" \
        -v pace="$PACE_MS" -v first="$first_round" '
    BEGIN { split(first, f, " "); first_n = f[1]; first_mean = f[1] > 0 ? f[2] / f[1] * 1000 : 0 }
    { cfg[NR] = $1; c[NR] = $3; rps[NR] = $4; p50[NR] = $5; p99[NR] = $6; rss[NR] = $7
      err[NR] = $8; rounds[NR] = $9; rmean[NR] = $10; rp99[NR] = $11; gets[NR] = $12
      last[NR] = $13 }
    function goal(name, value, unit, op, target,   ok) {
        ok = (op == ">=") ? value >= target : value <= target
        printf "  %-48s %10.2f %-5s goal %s %-6g %s\n", name, value, unit, op, target, ok ? "ok" : "MISS" }
    END {
      printf "topo-webhook with %d gated PodSets of %d pods (none fits) at %d nodes, %ss per row, %s\n",
             podsets, size, nodes, dur,
             (pace > 0 ? "paced: each connection waits " pace " ms before a request" : "closed loop")
      printf "%d cores; load average before %s, after %s (client, server, API server share them)\n", cores, lb, la
      printf "rounds while the backlog was gated and first evaluated: %d, mean %.1f ms\n", first_n, first_mean
      printf "%-14s %5s %9s %9s %9s %8s %10s %10s %9s %8s %9s %6s\n", "config", "conns", "req/s",
             "p50_ms", "p99_ms", "rounds", "round_ms", "round_p99", "last_ms", "api_gets",
             "rss_MiB", "errors"
      for (i = 1; i <= NR; i++)
        printf "%-14s %5d %9d %9.3f %9.3f %8d %10.2f %10s %9.2f %8d %9.1f %6d\n", cfg[i], c[i],
               rps[i], p50[i] / 1000, p99[i] / 1000, rounds[i], rmean[i], "<=" rp99[i],
               last[i] / 1000, gets[i], rss[i] / 1024, err[i]
      print "goals:"
      for (i = 1; i <= NR; i++) if (c[i] == 8) {
        goal("admission p99, 8 conns", p99[i] / 1000, "ms", "<=", 3)
        goal("ungater round, mean while admitting", rmean[i], "ms", "<=", 100)
        if (rp99[i] != "-" && rp99[i] != "inf") goal("ungater round, p99 bucket bound", rp99[i], "ms", "<=", 100)
      }
      m = 0; for (i = 1; i <= NR; i++) if (rss[i] > m) m = rss[i]
      if (m > 0) goal("peak RSS", m / 1024, "MiB", "<=", 128)
    }' "$rows"
    if [ "$errors_total" -gt 0 ]; then
        echo "bench/webhook: $errors_total wrong answers: the figures above are void" >&2
        return 1
    fi
}
