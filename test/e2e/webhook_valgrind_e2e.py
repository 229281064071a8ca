#!/usr/bin/env python3
"""topo-webhook under valgrind: no leak, no invalid access, in both modes.

  webhook_valgrind_e2e.py --webhook build/webhook/topo-webhook --source .

The developers' guide asks for valgrind-clean daemons. Each case runs
topo-webhook under

  valgrind --error-exitcode=99 --leak-check=full
           --show-leak-kinds=definite,indirect
           --errors-for-leak-kinds=definite,indirect --track-fds=no -q

drives it, sends SIGTERM, and requires exit status 0 (99 means valgrind found
an error) and an empty valgrind log (-q prints errors only). No suppressions:
with Debian's OpenSSL, libmicrohttpd, libcurl, SQLite and jansson nothing
third-party is definitely or indirectly lost; should a library upgrade bring
such noise, a commented valgrind.supp belongs here, never a looser flag.

  * static: --inventory fixtures/clusters/hgx-h100.yaml, --db a file, a
    --config with packing on. A 4-pod Job PodSet (4 distinct hosts), a
    pass-through pod (no patch), a GPU pod without a topology request packed
    into the PodSet's rack (the packing path: preferred terms), a pod that
    does not fit (gated), a malformed body (400), a dryRun (placed, then the
    same pod for real), GET /metrics.
  * daemon: --kubeconfig against fake_apiserver.py (4 nodes in one rack, each
    holding a bound 8-GPU pod), --ungate-interval 1 --leader-elect true: the
    filler thread, the ungater with its Lease. A 2-pod PodSet is gated, the
    patched pods created in the API server; two filler pods deleted: the
    ungater patches the gated pods (gate gone, nodeSelector set).

Exits 0 with a SKIP line when valgrind is not installed (it is in the test
packages of scripts/lib/deps.sh, so normally the test runs).
"""
import argparse
import os
import shutil
import sys
import time

from harness import FAILURES, check, check_within, finish
from harness.pki import pki_tmpdir
from harness.pods import (FAKE_NODE_LEVELS, FIXTURE_LEVELS, NS, RACK_LABEL, WAIT_GATE, apply_patch,
                          gates_of, job_pod, make_pod, node_selector)
from harness.webhook import Webhook, WebhookApiEnv, start_daemon


def valgrind_cmd(log_path):
    return ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect", "--track-fds=no", "-q",
            "--log-file=" + log_path]


class VgWebhook(Webhook):
    """topo-webhook under valgrind, which runs it 20-50 times slower:
    generous timeouts for every step."""

    THREADS = 2
    SHUTDOWN_TIMEOUT = 10
    READY_TIMEOUT = 60
    READY_POLL = 0.25
    HEALTH_TIMEOUT = 60
    REQUEST_TIMEOUT = 60
    ADMIT_TIMEOUT = "30s"
    STOP_TIMEOUT = 60

    def __init__(self, binary, pki, workdir, extra):
        self.vglog = os.path.join(workdir, "valgrind.log")
        super().__init__(binary, pki, workdir, ["--log-format", "text", *extra])
        print("ready under valgrind after %.1f s" % self.ready_after)

    def command(self, argv):
        return valgrind_cmd(self.vglog) + argv

    def stop(self):
        """SIGTERM, then the process's log and valgrind's."""
        log = super().stop()
        try:
            with open(self.vglog) as fh:
                vg = fh.read()
        except OSError:
            vg = "(no valgrind log)"
        return log, vg


def check_clean(name, w, log, vg):
    rc = w.proc.returncode
    check(rc == 0, "%s: exit status 0 after SIGTERM (got %r; 99 = valgrind errors)"
          % (name, rc))
    check(vg.strip() == "", "%s: valgrind log empty" % name)
    if rc != 0 or vg.strip():
        print("--- %s: valgrind log ---\n%s" % (name, vg[-20000:]))
        print("--- %s: webhook log (tail) ---\n%s" % (name, log[-4000:]))


def nodesel(resp, pod):
    out = apply_patch(resp, pod)
    return out, node_selector(out)


def vg_pod(index, gpus=8, job="vg", size=4):
    """Pod index of an Indexed Job whose PodSet prefers one rack."""
    return job_pod(job, size, index, gpus=gpus)


def case_static(args, pki, tmp):
    workdir = os.path.join(tmp, "static")
    inventory = os.path.join(args.source, "fixtures", "clusters", "hgx-h100.yaml")
    os.makedirs(workdir, exist_ok=True)
    config = os.path.join(workdir, "config.yaml")
    with open(config, "w") as fh:
        fh.write("topologies:\n- name: h100\n  levels: [%s]\ndefaultPolicy: gate\n"
                 "packing: {enabled: true}\n" % FIXTURE_LEVELS)
    w = VgWebhook(args.webhook, pki, workdir,
                  ["--inventory", inventory, "--config", config,
                   "--db", os.path.join(workdir, "topo.db")])
    log = vg = ""
    try:
        # A 4-pod PodSet: 4 distinct hosts, one assignment.
        hosts = set()
        for i in range(4):
            pod = vg_pod(i)
            resp = w.admit("s-%d" % i, pod)
            _, sel = nodesel(resp, pod)
            check(resp.get("allowed") is True and "kubernetes.io/hostname" in sel,
                  "podset pod %d placed: %r" % (i, sel))
            hosts.add(sel.get("kubernetes.io/hostname"))
        check(len(hosts) == 4 and None not in hosts, "4 distinct hosts: %r" % hosts)

        # No topology annotation: passes through unchanged.
        resp = w.admit("plain", make_pod(name="plain"))
        check(resp.get("allowed") is True and "patch" not in resp,
              "pass-through pod: allowed, no patch: %r" % resp)

        # A GPU pod without a topology request: packed into a used rack
        # (the PodSet's reservation makes its rack used), preferred terms.
        gpu = make_pod(name="nb", requests={"nvidia.com/gpu": "1"})
        out = apply_patch(w.admit("nb", gpu), gpu)
        terms = (out["spec"].get("affinity", {}).get("nodeAffinity", {})
                 .get("preferredDuringSchedulingIgnoredDuringExecution", []))
        check(terms and terms[0].get("weight") == 100, "GPU pod packed: %r" % terms)

        # 16 GPUs in one pod fit no node: gated.
        huge = vg_pod(0, gpus=16, job="huge", size=1)
        resp = w.admit("huge", huge)
        out, sel = nodesel(resp, huge)
        gates = gates_of(out)
        check(resp.get("allowed") is True and gates == [WAIT_GATE] and not sel,
              "huge pod gated: %r %r" % (gates, sel))

        status, body = w.post_once(b"{not json")
        check(status == 400 and b"malformed" in body, "malformed: %r %r" % (status, body))

        # dryRun (the handler's compute-only path, under memcheck here; that
        # it stores nothing is the handler unit tests' job), then the same pod
        # for real: placed too, off the first PodSet's hosts.
        dry = vg_pod(0, job="dry", size=1)
        resp = w.admit("dry", dry, dry_run=True)
        _, sel = nodesel(resp, dry)
        check(resp.get("allowed") is True and "kubernetes.io/hostname" in sel,
              "dryRun placed: %r" % resp)
        resp = w.admit("dry-real", dry)
        _, sel = nodesel(resp, dry)
        check(sel.get("kubernetes.io/hostname") not in hosts | {None},
              "after the dryRun, the real pod placed off the PodSet's hosts: %r" % sel)

        status, text = w.get("/metrics")
        check(status == 200 and "topo_webhook_requests_total" in text,
              "metrics: %r" % status)
    except Exception as e:  # report with the logs below
        check(False, "static: error: %r" % e)
    finally:
        log, vg = w.stop()
    check_clean("static", w, log, vg)


def gate_pod(index, size):
    """Pod `index` of a `size`-pod PodSet that requires one rack (8 GPUs each)."""
    return job_pod("vg", size, index, topology=("required", RACK_LABEL), named=True,
                   restart_policy="Never", limits={"nvidia.com/gpu": "8"})


def case_daemon(args):
    api = WebhookApiEnv()
    w = None
    log = vg = ""
    size = 2
    try:
        api.admin("load", {"resource": "nodes", "count": 4, "gpus": 8, "nodes_per_rack": 4})
        api.admin("load", {"resource": "pods", "count": 4, "gpus": 8, "namespace": "filler"})
        w = start_daemon(api, args.webhook, "daemon",
                         ["--levels", FAKE_NODE_LEVELS, "--policy", "gate",
                          "--ungate-interval", "1", "--leader-elect", "true"], cls=VgWebhook)
        check_within("the only replica leads the ungater",
                     lambda: w.metrics().get("topo_webhook_ungater_leader") == 1, 30)
        for i in range(size):
            pod = gate_pod(i, size)
            resp = w.admit("d-%d" % i, pod)
            out = apply_patch(resp, pod)
            check(gates_of(out) == [WAIT_GATE], "pod %d gated (cluster full)" % i)
            api.create("/api/v1/namespaces/%s/pods" % NS, out)
        # Free two nodes: the PodSet fits; the ungater patches both pods.
        for p in api.items("/api/v1/namespaces/filler/pods")[:size]:
            api.delete("/api/v1/namespaces/filler/pods/" + p["metadata"]["name"])

        def released():
            pods = [api.pod(NS, "vg-%d" % i) for i in range(size)]
            return all(p is not None and WAIT_GATE not in gates_of(p) and
                       p["spec"].get("nodeSelector") for p in pods)
        check_within("gated pods released by the ungater", released, 45)
    except Exception as e:  # report with the logs below
        check(False, "daemon: error: %r" % e)
    finally:
        if w is not None:
            log, vg = w.stop()
        apilog = api.server_log()
        api.close()
    if w is not None:
        check_clean("daemon", w, log, vg)
    if FAILURES:
        print("--- apiserver log (tail) ---\n" + apilog[-3000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("SKIP: valgrind not installed (scripts/lib/deps.sh lists it in the test packages)")
        return 0
    t0 = time.monotonic()
    with pki_tmpdir("topo-whv-") as (tmp, pki):
        case_static(args, pki, tmp)
    case_daemon(args)
    return finish("webhook_valgrind_e2e", " in %.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    sys.exit(main())
