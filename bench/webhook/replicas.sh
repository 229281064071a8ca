# shellcheck shell=bash
# shellcheck disable=SC2154 # tmp, root, levels, port, hport... are run.sh's
# bench/webhook MODE=replicas, sourced by run.sh (its helpers: start_server,
# stop_server, run_wrk, before_stop, $rows): what the replicas' coordination
# (issue 13, docs/webhook.md "Several replicas") costs an admission.
#
# One fake API server (test/e2e/fake_apiserver.py, TLS with the test PKI, a
# token file) holds NODES generated GPU nodes (default 1,000; 8 per rack)
# and the Lease topo-webhook. Every row starts fresh replicas (--kubeconfig,
# their own --db, --peer-address, --peer-ca-file the test CA) and sends wrk
# to one of them:
#   1-replica   one replica, the placer: it places every pod itself;
#   2-replicas  a placer and a second replica, wrk sending to the second:
#               every request is forwarded to the placer over HTTPS and its
#               answer relayed (topo_webhook_forwarded_total is read back
#               and must cover every request, else the row is void).
# Pods: topology.lua (each request a new one-pod PodSet: a first pod) and
# slots.lua (Indexed Jobs of 32 pods in order: 1 placement, 31 slot claims).
# The cost is 2-replicas minus 1-replica, p50 and p99, per pod kind and
# connections; the goal: p99 cost <= 2 ms at 8 connections. REPEAT=N
# (default 1) runs every pair N times, interleaved, and takes the medians:
# on a shared machine one run's p99 is mostly the neighbours' noise.
# The load is paced: each connection waits PACE_MS (default 10) before each
# request, about 700 requests/s at 8 connections, half of what two replicas
# sharing 2 cores can serve. Admission traffic comes at the API server's
# pace, and replicas run on different nodes: a closed loop here (PACE_MS=0)
# saturates the one machine both replicas share, and the "cost" it shows is
# the forwarding replica's TLS work queued behind the placer's on the same
# cores, not the hop's latency (both are in bench/README.md).
# REPLICA_FLAGS adds flags to every replica (e.g. "--threads 8").

replica_nodes=${NODES:-1000}
export PACE_MS=${PACE_MS-10}

# fake_api_start: the fake API server with the nodes; sets fake_url.
fake_api_start() {
    local i fport=
    printf 'bench-token\n' >"$tmp/token"
    python3 "$root/test/e2e/fake_apiserver.py" --tls-cert "$tmp/pki/server.pem" \
        --tls-key "$tmp/pki/server.key" --token-file "$tmp/token" \
        >"$tmp/fake.out" 2>"$tmp/fake.log" &
    other_pids+=($!)
    for ((i = 0; i < 100; i++)); do
        fport=$(head -n1 "$tmp/fake.out")
        [ -n "$fport" ] && break
        sleep 0.1
    done
    if ! [[ $fport =~ ^[0-9]+$ ]]; then
        echo "bench/webhook: the fake API server did not start:" >&2
        cat "$tmp/fake.log" >&2
        exit 2
    fi
    fake_url=https://127.0.0.1:$fport
    python3 - "$fake_url" "$tmp/pki/ca.pem" "$replica_nodes" <<'PY'
import json, ssl, sys, urllib.request
url, ca, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
req = urllib.request.Request(url + "/_fake/load", method="POST",
                             data=json.dumps({"resource": "nodes", "count": n, "gpus": 8,
                                              "nodes_per_rack": 8}).encode(),
                             headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, context=ssl.create_default_context(cafile=ca), timeout=120).read()
PY
    cat >"$tmp/kubeconfig" <<KC
{"apiVersion": "v1", "kind": "Config", "current-context": "bench",
 "clusters": [{"name": "fake", "cluster": {"server": "$fake_url",
   "certificate-authority": "$tmp/pki/ca.pem"}}],
 "contexts": [{"name": "bench", "context": {"cluster": "fake", "user": "u",
   "namespace": "topo-system"}}],
 "users": [{"name": "u", "user": {"tokenFile": "$tmp/token"}}]}
KC
}

# metric_of HPORT NAME: the sum of NAME's samples on that health port.
metric_of() {
    python3 - "$1" "$2" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read()
total = 0.0
for line in text.decode().splitlines():
    if line.split("{", 1)[0].split(" ", 1)[0] == sys.argv[2]:
        total += float(line.rsplit(" ", 1)[1])
print("%d" % total)
PY
}

# wait_placer HPORT: until that replica reports topo_webhook_placer 1.
wait_placer() {
    local i
    for ((i = 0; i < 300; i++)); do
        [ "$(metric_of "$1" topo_webhook_placer 2>/dev/null)" = 1 ] && return 0
        sleep 0.1
    done
    echo "bench/webhook: no placer within 30 s; its log:" >&2
    cat "$tmp/server.log" >&2
    exit 2
}

# warm_up PORT: until a dry-run topology pod sent there is placed (the
# replica knows the placer and the placer has caught up): nothing stored.
warm_up() {
    python3 - "$1" "$tmp/pki/ca.pem" <<'PY' || { echo "bench/webhook: no placement" >&2; exit 2; }
import http.client, json, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[2])
pod = {"kind": "Pod", "apiVersion": "v1",
       "metadata": {"name": "warm", "namespace": "bench", "annotations": {
           "kueue.x-k8s.io/podset-required-topology": "topology.topo.io/rack"}},
       "spec": {"containers": [{"name": "w", "image": "x",
                                "resources": {"requests": {"cpu": "100m"}}}]}}
t0 = time.monotonic()
while time.monotonic() - t0 < 30:
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": "warm-%f" % time.monotonic(), "namespace": "bench",
                                   "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                   "resource": {"group": "", "version": "v1",
                                                "resource": "pods"},
                                   "operation": "CREATE", "dryRun": True, "object": pod}})
    c = http.client.HTTPSConnection("localhost", int(sys.argv[1]), context=ctx, timeout=10)
    c.request("POST", "/mutate", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    out = r.read()
    c.close()
    # placed: the patch's first operation sets the nodeSelector
    if r.status == 200 and b'"patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvbm9kZVNlbGVjdG9y' in out:
        sys.exit(0)
    time.sleep(0.2)
sys.exit(1)
PY
}

# replica DB: starts a replica on cache file DB.
replica() {
    rm -f "$1" "$1-wal" "$1-shm"
    start_server --kubeconfig "$tmp/kubeconfig" --db "$1" --levels "$levels" \
        --leader-elect true --peer-address "127.0.0.1:@PORT@" --peer-ca-file "$tmp/pki/ca.pem" \
        ${REPLICA_FLAGS:+$REPLICA_FLAGS}
}

run_replicas() {
    local kind c cfg db1=$db_dir/topo-bench-$$-r1.db db2=$db_dir/topo-bench-$$-r2.db
    local placer_pid load_before load_after rep repeat=${REPEAT:-1}
    fake_api_start
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    for ((rep = 0; rep < repeat; rep++)); do
        for kind in topology slots; do
            for c in "${conns_list[@]}"; do
                for cfg in 1-replica 2-replicas; do
                    replica "$db1"
                    wait_placer "$hport"
                    row_extra=0
                    # shellcheck disable=SC2317 # called by run_wrk
                    before_stop() { :; }
                    if [ "$cfg" = 2-replicas ]; then
                        placer_pid=$server_pid
                        other_pids+=("$placer_pid")
                        replica "$db2"
                        if [ "$(metric_of "$hport" topo_webhook_placer)" != 0 ]; then
                            echo "bench/webhook: the second replica is the placer" >&2
                            exit 2
                        fi
                        # shellcheck disable=SC2317 # called by run_wrk
                        before_stop() { row_extra=$(metric_of "$hport" topo_webhook_forwarded_total); }
                    fi
                    warm_up "$port"
                    run_wrk "$cfg" "$kind" patch "$c"
                    if [ "$cfg" = 2-replicas ]; then
                        kill -TERM "$placer_pid"
                        wait "$placer_pid" || true
                        other_pids=("${other_pids[@]/$placer_pid/}")
                        # the warm-up's request is forwarded too
                        if [ "$row_extra" -lt "$last_requests" ]; then
                            echo "bench/webhook: $cfg $kind c=$c: $row_extra forwarded of" \
                                "$last_requests requests: void" >&2
                            errors_total=$((errors_total + 1))
                        fi
                    fi
                    rm -f "$db1" "$db1-wal" "$db1-shm" "$db2" "$db2-wal" "$db2-shm"
                done
            done
        done
    done
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)

    awk -v dur="$duration" -v lb="$load_before" -v la="$load_after" -v cores="$(nproc)" \
        -v nodes="$replica_nodes" -v repeat="$repeat" -v pace="$PACE_MS" '
    # median of the n values a[1..n] (sorted in place: mawk has no asort)
    function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { k = $1 "/" $2 "/" $3
      if (!(k in n)) { keys[++nk] = k; cfg[k] = $1; kind[k] = $2; c[k] = $3 }
      i = ++n[k]; rps[k, i] = $4; p50[k, i] = $5; p99[k, i] = $6; rss[k] = $7 > rss[k] ? $7 : rss[k]
      err[k] += $8; fwd[k] += $9 }
    END {
      printf "topo-webhook replicas under wrk, %d nodes from a fake API server, %ss per row", nodes, dur
      printf ", medians of %d runs, %s\n", repeat,
             (pace > 0 ? "paced: each connection waits " pace " ms before a request" : "closed loop")
      printf "%d cores; load average before %s, after %s (client, servers, API server share them)\n", cores, lb, la
      printf "%-11s %-9s %5s %9s %9s %9s %10s %9s %6s\n", "config", "pods", "conns", "req/s",
             "p50_ms", "p99_ms", "forwarded", "rss_MiB", "errors"
      for (x = 1; x <= nk; x++) {
        k = keys[x]
        for (i = 1; i <= n[k]; i++) { r[i] = rps[k, i]; a[i] = p50[k, i]; b[i] = p99[k, i] }
        mr[k] = median(r, n[k]); m50[k] = median(a, n[k]); m99[k] = median(b, n[k])
        printf "%-11s %-9s %5d %9d %9.3f %9.3f %10d %9.1f %6d\n", cfg[k], kind[k], c[k], mr[k],
               m50[k] / 1000, m99[k] / 1000, fwd[k], rss[k] / 1024, err[k]
      }
      print "coordination cost (2-replicas minus 1-replica):"
      for (x = 1; x <= nk; x++) {
        k = keys[x]
        if (cfg[k] != "2-replicas" || !((k1 = "1-replica/" kind[k] "/" c[k]) in n)) continue
        d50 = (m50[k] - m50[k1]) / 1000; d99 = (m99[k] - m99[k1]) / 1000
        line = sprintf("  %-9s %2d conns: p50 %+8.3f ms  p99 %+8.3f ms", kind[k], c[k], d50, d99)
        if (c[k] == 8) line = line sprintf("   goal p99 <= 2 ms %s", d99 <= 2 ? "ok" : "MISS")
        print line
      }
    }' "$rows"
    if [ "$errors_total" -gt 0 ]; then
        echo "bench/webhook: $errors_total wrong answers or rows: the figures above are void" >&2
        return 1
    fi
}
