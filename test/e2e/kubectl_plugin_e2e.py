#!/usr/bin/env python3
"""`kubectl topo` (topoassign run through its link kubectl-topo, cli/main.c and
cli/live.c) against fake_apiserver.py over TLS: `show` and `assign` read the
live cluster through a kubeconfig (--kubeconfig, $KUBECONFIG, --context), give
the answers `topoassign` gives over the same objects as files, name nodes
that exist and have the room, follow the cluster as it changes; a bad
kubeconfig, an unknown context, an unreachable or refusing API server give
a clear message and exit 2; the temporary cache never stays behind.

usage: kubectl_plugin_e2e.py --kubectl-topo BUILD/cli/kubectl-topo (--list | --case NAME | --all)
"""

import json
import os
import socket
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

from harness import E2E_DIR, expect, registry, run_cases
from harness.fakeapi import FakeApiEnv
from harness.pki import encrypted_client_pair

SOURCE = os.path.dirname(os.path.dirname(E2E_DIR))
NODES = os.path.join(SOURCE, "fixtures/clusters/kubectl-nodes-small.json")
PODS = os.path.join(SOURCE, "fixtures/clusters/kubectl-pods-small.json")
PODSET = os.path.join(SOURCE, "fixtures/podsets/job-rack-4x8.yaml")
LEVELS = ("topology.topo.io/datacenter,topology.topo.io/spine,topology.topo.io/leaf,"
          "topology.topo.io/rack,kubernetes.io/hostname")
RACK = "topology.topo.io/rack"
GPU = "nvidia.com/gpu"

CASES, case = registry()


class Env(FakeApiEnv):
    """The fake API server holding the small kubectl fixture (4 nodes, 8
    pods), kubectl-topo, and topoassign (the link's target) for the offline
    answers."""

    PREFIX = "topo-kubectl-plugin-e2e-"
    TOKEN = "plugin-token"

    def __init__(self, plugin, keep):
        self.plugin = os.path.abspath(plugin)
        self.topoassign = os.path.join(os.path.dirname(self.plugin), "topoassign")
        super().__init__(keep)
        self.tmp = self.path("tmp")
        os.mkdir(self.tmp)

    def server_args(self):
        return [*super().server_args(), "--load", NODES, "--load", PODS]

    def kubectl_topo(self, *args, env=None, timeout=60):
        """kubectl-topo ARGS with TMPDIR in the case's directory: (exit, out,
        err, seconds). No KUBECONFIG or HOME config leaks in from the host."""
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.path("home"),
             "TMPDIR": self.tmp}
        e.update(env or {})
        t = time.monotonic()
        p = subprocess.run([self.plugin, *args], capture_output=True, text=True, env=e,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t

    def ok(self, *args, **kw):
        rc, out, err, _ = self.kubectl_topo(*args, **kw)
        expect(rc == 0, f"kubectl-topo {' '.join(args)}: exit {rc}\n{err}")
        self.expect_clean()
        return out

    def offline(self, *args):
        p = subprocess.run([self.topoassign, *args], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def dump(self, path, name):
        """The server's objects at path as a kubectl List file (what the
        offline answer reads)."""
        out = {"apiVersion": "v1", "kind": "List", "items": self.items(path)}
        self.write(self.path(name), json.dumps(out))
        return self.path(name)

    def expect_clean(self):
        left = os.listdir(self.tmp)
        expect(not left, f"the temporary cache stayed behind in TMPDIR: {left}")


# =================================================================== checks

def free_gpus(env):
    """Per schedulable, untainted, Ready node: GPUs allocatable minus those of
    its bound, unfinished pods, as the server holds them now."""
    free = {}
    for n in env.items("/api/v1/nodes"):
        ready = any(c["type"] == "Ready" and c["status"] == "True"
                    for c in n["status"].get("conditions", []))
        hard_taints = [t for t in n["spec"].get("taints", []) if t["effect"] != "PreferNoSchedule"]
        if ready and not hard_taints and not n["spec"].get("unschedulable"):
            free[n["metadata"]["name"]] = int(n["status"]["allocatable"].get(GPU, "0"))
    for p in env.items("/api/v1/pods"):
        node = p["spec"].get("nodeName")
        if node in free and p["status"].get("phase") not in ("Succeeded", "Failed"):
            for c in p["spec"]["containers"]:
                r = c.get("resources", {})
                free[node] -= int(r.get("requests", {}).get(GPU, r.get("limits", {}).get(GPU, "0")))
    return free


def expect_room(assignment, per_pod, free, what):
    """Every domain of a TopologyAssignment (hostname level: node names) is a
    node that exists, is eligible and has the GPUs for its pods."""
    expect(assignment["levels"][-1] == "kubernetes.io/hostname",
           f"{what}: levels {assignment['levels']}")
    placed = 0
    for d in assignment["domains"]:
        node = d["values"][-1]
        expect(node in free, f"{what}: {node} is not an eligible node of the cluster "
                             f"({sorted(free)})")
        expect(free[node] >= d["count"] * per_pod,
               f"{what}: {node} gets {d['count']} x {per_pod} GPUs with {free[node]} free")
        placed += d["count"]
    return placed


# =================================================================== cases

@case
def show_matches_files(env):
    """kubectl topo show over the API equals topoassign show over the same
    objects as kubectl dumps, byte for byte."""
    nodes, pods = env.dump("/api/v1/nodes", "nodes.json"), env.dump("/api/v1/pods", "pods.json")
    out = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", LEVELS)
    rc, want, err = env.offline("show", "--nodes", nodes, "--pods", pods, "--levels", LEVELS)
    expect(rc == 0, f"offline show: {rc} {err}")
    expect(out == want, f"live show differs from the files':\n{out}\n--- files ---\n{want}")
    # What the fixture says: 6 of a100-r1-a's 8 GPUs are used, a100-r1-b is
    # tainted, a100-r2-b NotReady.
    expect("a100-r1-a  2/8 free" in out, f"show:\n{out}")
    expect("a100-r2-b (NotReady)" in out, f"show: the NotReady node is not listed:\n{out}")
    # --live is what the plugin adds: given as well, it is taken once.
    expect(env.ok("show", "--live", "--kubeconfig", env.kubeconfig, "--levels", LEVELS) == out,
           "show --live differs")


@case
def assign_room(env):
    """kubectl topo assign answers where the job fits now: the nodes it
    names exist and have the room; -o json is topoassign's answer over the
    same objects; a job too big is Kueue's no-fit (exit 1)."""
    nodes, pods = env.dump("/api/v1/nodes", "nodes.json"), env.dump("/api/v1/pods", "pods.json")
    free = free_gpus(env)
    expect(free == {"a100-r1-a": 2, "a100-r2-a": 0}, f"the fixture changed: {free}")
    for req in (["--count", "1", "--request", f"{GPU}=2", "--required", RACK],
                ["--count", "2", "--request", f"{GPU}=1", "--preferred", RACK],
                ["--count", "2", "--request", f"{GPU}=1", "--unconstrained"]):
        out = env.ok("assign", "--kubeconfig", env.kubeconfig, "--levels", LEVELS, *req,
                     "-o", "json")
        rc, want, err = env.offline("assign", "--nodes", nodes, "--pods", pods,
                                    "--levels", LEVELS, *req, "-o", "json")
        expect(rc == 0 and out == want, f"{req}: live {out!r}\nfiles ({rc}) {want!r} {err}")
        a = json.loads(out)
        count, per_pod = int(req[1]), int(req[3].split("=")[1])
        expect(expect_room(a, per_pod, free, str(req)) == count, f"{req}: {a}")
    # The table names the node and the rack.
    out = env.ok("assign", "--kubeconfig", env.kubeconfig, "--levels", LEVELS,
                 "--count", "1", "--request", f"{GPU}=2", "--required", RACK)
    expect("a100-r1-a" in out and "all in rack rack-1" in out, f"table:\n{out}")
    # 4 GPUs on one node: none has them free (r1-b is tainted).
    rc, out, err, _ = env.kubectl_topo("assign", "--kubeconfig", env.kubeconfig, "--levels",
                                       LEVELS, "--count", "1", "--request", f"{GPU}=4",
                                       "--required", RACK)
    expect(rc == 1 and out == "" and err.startswith("does not fit: topology \"default\""),
           f"a job too big: exit {rc}, out {out!r}, err {err!r}")
    env.expect_clean()
    # A PodSet from a manifest (4 pods x 8 GPUs in one rack): no room now.
    rc, _, err, _ = env.kubectl_topo("assign", "--kubeconfig", env.kubeconfig, "--levels", LEVELS,
                                     "--podset", PODSET)
    expect(rc == 1 and "does not fit" in err, f"--podset: exit {rc}, {err!r}")


@case
def generated_cluster(env):
    """A 256-node generated cluster with busy nodes (topoassign generate):
    jobs of 8-GPU pods placed by rack, leaf and block name only nodes with a
    whole node free, and equal the offline answers."""
    nodes, pods = env.path("gen-nodes.json"), env.path("gen-pods.json")
    rc, _, err = env.offline("generate", "--nodes", "256", "--usage-seed", "7",
                             "--usage-fraction", "0.4", "-o", nodes, "--pods-out", pods)
    expect(rc == 0, f"generate: {rc} {err}")
    env.admin("load", {"file": nodes})
    env.admin("load", {"file": pods})
    levels = ("topology.topo.io/spine,topology.topo.io/block,topology.topo.io/leaf,"
              "topology.topo.io/rack,kubernetes.io/hostname")
    free = free_gpus(env)
    expect(len(free) >= 256, f"{len(free)} eligible nodes listed")
    whole = sum(1 for v in free.values() if v == 8)
    expect(0 < whole < 256, f"{whole} nodes wholly free: no usage drawn?")
    both = ["--nodes", env.dump("/api/v1/nodes", "n.json"), "--pods",
            env.dump("/api/v1/pods", "p.json")]
    for count, level in ((4, "rack"), (16, "leaf"), (32, "block")):
        req = ["--count", str(count), "--request", f"{GPU}=8",
               "--required", f"topology.topo.io/{level}"]
        rc, out, err, _ = env.kubectl_topo("assign", "--kubeconfig", env.kubeconfig,
                                           "--levels", levels, *req, "-o", "json")
        want = env.offline("assign", *both, "--levels", levels, *req, "-o", "json")
        expect((rc, out) == want[:2], f"{req}: live ({rc}) {out!r} {err}\nfiles {want}")
        if rc == 0:
            placed = expect_room(json.loads(out), 8, free, f"{count} x 8 GPUs in one {level}")
            expect(placed == count, f"{req}: {placed} placed")
    env.expect_clean()


@case
def follows_the_cluster(env):
    """Each answer is the cluster now: a pod bound to the only node with
    room makes the same question not fit; its deletion makes it fit again."""
    ask = ["assign", "--kubeconfig", env.kubeconfig, "--levels", LEVELS, "--count", "1",
           "--request", f"{GPU}=2", "--required", RACK, "-o", "json"]
    a = json.loads(env.ok(*ask))
    expect(a["domains"][0]["values"][-1] == "a100-r1-a", f"before: {a}")
    env.create("/api/v1/namespaces/ml/pods", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "train-1", "namespace": "ml"},
        "spec": {"nodeName": "a100-r1-a", "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {GPU: "2"},
                                                      "limits": {GPU: "2"}}}]},
        "status": {"phase": "Running"}})
    rc, out, err, _ = env.kubectl_topo(*ask)
    expect(rc == 1 and "does not fit" in err, f"after the pod: exit {rc} {out} {err}")
    out = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", LEVELS)
    expect("a100-r1-a  0/8 free" in out, f"show after the pod:\n{out}")
    env.delete("/api/v1/namespaces/ml/pods/train-1")
    a = json.loads(env.ok(*ask))
    expect(a["domains"][0]["values"][-1] == "a100-r1-a", f"after the deletion: {a}")


@case
def kubeconfig_sources(env):
    """--kubeconfig, else $KUBECONFIG's files, else ~/.kube/config; the
    current-context, else --context (a second context whose server is down
    proves which one was used)."""
    down = closed_port()
    with open(env.kubeconfig) as fh:
        kc = json.load(fh)
    kc["users"][0]["user"]["tokenFile"] = env.path("token")  # the copies live elsewhere
    kc["clusters"].append({"name": "down", "cluster": dict(kc["clusters"][0]["cluster"],
                                                           server=f"https://127.0.0.1:{down}")})
    kc["contexts"].append({"name": "other", "context": {"cluster": "down", "user": "u"}})
    env.write(env.path("two.yaml"), json.dumps(kc))
    want = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", LEVELS)
    # $KUBECONFIG (a list: the missing file skipped).
    got = env.ok("show", "--levels", LEVELS,
                 env={"KUBECONFIG": f"{env.kubeconfig}:{env.path('missing')}"})
    expect(got == want, "show through $KUBECONFIG differs")
    # ~/.kube/config
    os.makedirs(env.path("home/.kube"))
    env.write(env.path("home/.kube/config"), json.dumps(kc))
    expect(env.ok("show", "--levels", LEVELS) == want, "show through ~/.kube/config differs")
    # --context picks the other entry: it is down, so it was used.
    rc, _, err, secs = env.kubectl_topo("show", "--context", "other", "--levels", LEVELS)
    expect(rc == 2 and f"127.0.0.1:{down}" in err and len(err.splitlines()) == 1,
           f"--context other: exit {rc} {err!r}")
    expect(secs < 30, f"an API server that refuses connections took {secs:.1f} s")
    env.expect_clean()
    # The current-context made "other": --context test is the one that works.
    kc["current-context"] = "other"
    env.write(env.path("two.yaml"), json.dumps(kc))
    expect(env.ok("show", "--kubeconfig", env.path("two.yaml"), "--context", "test",
                  "--levels", LEVELS) == want, "--context test differs")
    rc, _, err, _ = env.kubectl_topo("show", "--kubeconfig", env.path("two.yaml"),
                                     "--levels", LEVELS)
    expect(rc == 2, f"current-context other (down): exit {rc} {err!r}")


@case
def kubeconfig_merged(env):
    """$KUBECONFIG as kubectl reads it: every file of the list merged (an
    empty file and a missing one change nothing; the context in one file,
    its user in another, whose relative tokenFile is the other file's
    directory's), and inside a pod (KUBERNETES_SERVICE_HOST set) a
    ~/.kube/config wins over the pod's service account."""
    want = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", LEVELS)
    with open(env.kubeconfig) as fh:
        kc = json.load(fh)
    env.write(env.path("empty.yaml"), "apiVersion: v1\nkind: Config\n")
    for value in (f"{env.path('empty.yaml')}:{env.kubeconfig}",
                  f"{env.path('missing.yaml')}:{env.kubeconfig}"):
        got = env.ok("show", "--levels", LEVELS, env={"KUBECONFIG": value})
        expect(got == want, f"KUBECONFIG={value}: {got!r}")
    # a/config: the context and its cluster; b/config: the user, whose
    # tokenFile "token" is b's (a has no token).
    os.makedirs(env.path("a"))
    os.makedirs(env.path("b"))
    env.write(env.path("a/config"), json.dumps(dict(kc, users=[])))
    env.write(env.path("b/config"), json.dumps({"apiVersion": "v1", "kind": "Config",
                                                 "users": kc["users"]}))
    env.write(env.path("b/token"), env.token)
    got = env.ok("show", "--levels", LEVELS,
                 env={"KUBECONFIG": f"{env.path('a/config')}:{env.path('b/config')}"})
    expect(got == want, "the context of one file with the user of another differs")
    # In a pod with a ~/.kube/config: the file, as kubectl (no service
    # account here: going in-cluster would fail).
    os.makedirs(env.path("home/.kube"))
    kc["users"][0]["user"]["tokenFile"] = env.path("token")
    env.write(env.path("home/.kube/config"), json.dumps(kc))
    pod = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(closed_port())}
    expect(env.ok("show", "--levels", LEVELS, env=pod) == want,
           "in a pod, ~/.kube/config was not used")
    # Neither a file nor a pod: the message says what was tried.
    os.remove(env.path("home/.kube/config"))
    rc, _, err, _ = env.kubectl_topo("show", "--levels", LEVELS,
                                     env={"KUBECONFIG": env.path("missing.yaml")})
    expect(rc == 2 and "no Kubernetes configuration" in err, f"exit {rc} {err!r}")


@case
def encrypted_client_key(env):
    """A kubeconfig user whose client key is encrypted (data or file): exit 2
    at once naming the field, without a crash and without asking for the
    passphrase (no terminal, stdin closed: nothing to wait on)."""
    cert, key, enc = encrypted_client_pair(env.dir)
    users = {"data": ({"client-certificate-data": cert, "client-key-data": key},
                      "users[0].user.client-key-data: an encrypted private key: topo cannot "
                      "ask for its passphrase"),
             "file": ({"client-certificate": env.path("client.pem"), "client-key": enc},
                      "users[0].user.client-key: an encrypted private key")}
    for name, (user, message) in users.items():
        kc = env.write_kubeconfig(f"enc-{name}.yaml", user=user)
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": env.path("home"),
             "TMPDIR": env.tmp}
        p = subprocess.run([env.plugin, "show", "--levels", LEVELS, "--kubeconfig", kc],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, env=e,
                           start_new_session=True, timeout=30)
        expect(p.returncode == 2 and message in p.stderr and "pass phrase" not in p.stderr,
               f"{name}: exit {p.returncode}, stderr {p.stderr!r}")
        env.expect_clean()


@case
def bad_configuration(env):
    """What an operator gets wrong, each a message and exit 2, nothing left
    in TMPDIR."""
    with open(env.kubeconfig) as fh:
        kc = json.load(fh)
    bad_token = dict(kc, users=[{"name": "u", "user": {"token": "wrong"}}])
    env.write(env.path("badtoken.yaml"), json.dumps(bad_token))
    env.write(env.path("garbage.yaml"), "clusters: [\n")
    missing = env.path("nope.yaml")
    cases = [
        (["show", "--kubeconfig", missing], ["kubectl topo show: reading the cluster:",
                                             "nope.yaml"]),
        (["assign", "--context", "nope", "--kubeconfig", env.kubeconfig, "--count", "1",
          "--request", f"{GPU}=1", "--unconstrained"],
         ['kubectl topo assign: reading the cluster:', 'context "nope"']),
        (["show", "--context", "nope"], ['context "nope": no kubeconfig']),
        (["show"], ["no Kubernetes configuration"]),
        (["show", "--kubeconfig", env.path("garbage.yaml")], ["garbage.yaml"]),
        (["show", "--kubeconfig", env.path("badtoken.yaml")], ["401"]),
        (["show", "--kubeconfig", env.kubeconfig, "--db", env.path("x.db")],
         ["--db cannot be combined with the live cluster"]),
        (["show", "--kubeconfig", env.kubeconfig, "--nodes", NODES],
         ["--nodes cannot be combined with the live cluster"]),
        (["show", "--kubeconfig", env.kubeconfig, "--pods", PODS],
         ["--pods cannot be combined with the live cluster"]),
        (["generate", "--nodes", "4"], ["kubectl topo: unknown command 'generate'"]),
        (["show", "--kubeconfig", env.kubeconfig, "--frob"],
         ["kubectl topo show: unknown option '--frob' (see 'kubectl topo show --help')"]),
    ]
    for args, messages in cases:
        if args[0] in ("show", "assign") and "--levels" not in args:
            args = [*args, "--levels", LEVELS]
        rc, out, err, secs = env.kubectl_topo(*args)
        for m in messages:
            expect(rc == 2 and m in err, f"{args}: exit {rc}, want {m!r} in stderr {err!r}")
        expect(out == "" or args[0] == "generate", f"{args}: printed {out!r}")
        expect(secs < 30, f"{args}: took {secs:.1f} s")
        env.expect_clean()


@case
def help_and_version(env):
    """The plugin's own help and each command's, naming the plugin's flags."""
    rc, out, err, _ = env.kubectl_topo("--help")
    expect(rc == 0 and out.startswith("usage: kubectl topo <show|assign|release>") and
           "--context NAME" in out and "kubectl topo assign" in out, f"--help: {rc} {out}")
    rc, _, err, _ = env.kubectl_topo()
    expect(rc == 2 and "usage: kubectl topo" in err, f"no command: {rc} {err}")
    for cmd in ("show", "assign"):
        rc, out, _, _ = env.kubectl_topo(cmd, "--help")
        expect(rc == 0 and f"kubectl topo {cmd} [--kubeconfig FILE] [--context NAME]" in out
               and "--kubeconfig FILE" in out and "--context NAME" in out,
               f"{cmd} --help: {rc}\n{out}")
    rc, out, _, _ = env.kubectl_topo("--version")
    expect(rc == 0 and out.startswith("kubectl topo (topoassign) "), f"--version: {out!r}")
    # topoassign itself, by its own name, stays the offline tool.
    rc, out, _ = env.offline("--help")
    expect(rc == 0 and out.startswith("usage: topoassign <command>") and "kubectl topo" in out,
           f"topoassign --help: {out}")


# ---------------------------------------------- --levels from the cluster

CHART_LEVELS = "topology.topo.io/spine,topology.topo.io/leaf,kubernetes.io/hostname"
# The webhook's ConfigMap as `helm template gpu charts/topo -n gpu-system`
# renders it (templates/webhook-configmap.yaml, default values): the labels
# and the config.yaml key are what kubectl topo looks for.
CHART_CONFIG = """defaultPolicy: gate
maxUnclaimed:
  perNamespace:
    pods: 2048
  total:
    pods: 8192
namespacePolicyLabel: topology.topo.io/no-fit-policy
nodeReplacement:
  failFast: false
reservationTTL: 10m
topologies:
- levels:
  - topology.topo.io/spine
  - topology.topo.io/leaf
  - kubernetes.io/hostname
  name: default
unclaimedTTL: 2m
ungateInterval: 5s
"""


def chart_configmap(release, ns, config=CHART_CONFIG, component="webhook"):
    name = f"{release}-topo-{component}" if release != "topo" else f"topo-{component}"
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": {
                "helm.sh/chart": "topo-0.1.0", "app.kubernetes.io/name": "topo",
                "app.kubernetes.io/instance": release, "app.kubernetes.io/version": "0.1.0",
                "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/part-of": "topo",
                "app.kubernetes.io/component": component}},
            "data": {"config.yaml": config}}


def add_configmap(env, cm):
    env.create(f"/api/v1/namespaces/{cm['metadata']['namespace']}/configmaps", cm)


def chart_registration(release, ns):
    """The MutatingWebhookConfiguration as the chart renders it
    (templates/webhook-mutatingwebhookconfiguration.yaml, the fields kubectl
    topo reads and the API server requires)."""
    name = f"{release}-topo-webhook" if release != "topo" else "topo-webhook"
    labels = chart_configmap(release, ns)["metadata"]["labels"]
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name, "labels": labels},
            "webhooks": [{"name": "pods.topology.topo.io", "admissionReviewVersions": ["v1"],
                          "clientConfig": {"service": {"name": name, "namespace": ns,
                                                       "path": "/mutate", "port": 443}},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                     "apiVersions": ["v1"], "resources": ["pods"],
                                     "scope": "Namespaced"}],
                          "failurePolicy": "Ignore", "timeoutSeconds": 2,
                          "sideEffects": "NoneOnDryRun"}]}


def add_install(env, release, ns, config=CHART_CONFIG):
    """What the chart installs for kubectl topo to find: the webhook's
    registration and its ConfigMap."""
    env.create("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
               chart_registration(release, ns))
    add_configmap(env, chart_configmap(release, ns, config=config))


def kueue_topology(name, *labels, version="v1beta2"):
    return {"apiVersion": f"kueue.x-k8s.io/{version}", "kind": "Topology",
            "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": label} for label in labels]}}


def add_topology(env, topology):
    env.create(f"/apis/{topology['apiVersion']}/topologies", topology)


def levels_read(env):
    """The paths of the requests kubectl topo made for the levels."""
    return [r["path"] for r in env.admin("requests")["requests"]
            if "/configmaps" in r["path"] or "/topologies" in r["path"]]


def without_levels(env, *args):
    """kubectl topo ARGS without --levels: (exit, stdout, stderr)."""
    rc, out, err, _ = env.kubectl_topo(*args, "--kubeconfig", env.kubeconfig)
    env.expect_clean()
    return rc, out, err


SHOW_ASSIGN = (["show"], ["assign", "--count", "1", "--request", f"{GPU}=2", "--unconstrained",
                          "-o", "json"])


@case
def levels_from_chart_configmap(env):
    """No --levels: the levels of topo-webhook's ConfigMap as the chart
    renders it, found by its labels in a namespace the user never named;
    one line on stderr says where from, stdout is the answer --levels gives.
    topo-sync's ConfigMap and a ConfigMap of someone else are not read."""
    add_install(env, "gpu", "gpu-system")
    add_configmap(env, chart_configmap("gpu", "gpu-system", config="labels: {}\n",
                                       component="sync"))
    add_configmap(env, {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "other", "namespace": "ml"},
                        "data": {"config.yaml": "topologies: [{name: x, levels: [a]}]\n"}})
    env.admin("requests/clear", {})
    for args in SHOW_ASSIGN:
        rc, out, err = without_levels(env, *args)
        expect(rc == 0, f"{args}: exit {rc}: {err}")
        expect(err == 'levels from ConfigMap gpu-system/gpu-topo-webhook, topology "default": '
                      f"{CHART_LEVELS}\n", f"{args}: stderr {err!r}")
        want = env.ok(*args, "--kubeconfig", env.kubeconfig, "--levels", CHART_LEVELS)
        expect(out == want, f"{args}: stdout differs from --levels':\n{out}\n---\n{want}")
    paths = levels_read(env)
    selector = ("app.kubernetes.io/part-of=topo,app.kubernetes.io/component=webhook,"
                "app.kubernetes.io/instance=gpu")
    expect(paths and all(p.startswith("/api/v1/namespaces/gpu-system/configmaps?") and
                         parse_qs(urlsplit(p).query).get("labelSelector") == [selector]
                         for p in paths),
           f"the ConfigMaps were not listed by the registered install's labels: {paths}")
    # A second installation with the same topology (a rollout side by side):
    # the same answer. One with other levels: which one is the user's to say.
    add_install(env, "topo", "topo-system")
    rc, _, err = without_levels(env, "show")
    expect(rc == 0 and err.startswith("levels from ConfigMap "), f"two alike: {rc} {err!r}")
    other = CHART_CONFIG.replace("  - topology.topo.io/leaf\n", "")
    add_install(env, "b", "b-system", config=other.replace("name: default", "name: small"))
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and out == "" and "2 topologies" in err and
           'ConfigMap b-system/b-topo-webhook, topology "small" (topology.topo.io/spine,'
           'kubernetes.io/hostname)' in err and "--topology NAME" in err,
           f"two installations that differ: exit {rc} {err!r}")
    rc, _, err = without_levels(env, "show", "--topology", "small")
    expect(rc == 0 and err == 'levels from ConfigMap b-system/b-topo-webhook, topology '
                              '"small": topology.topo.io/spine,kubernetes.io/hostname\n',
           f"--topology small: {rc} {err!r}")


@case
def levels_from_webhook_topologies(env):
    """A webhook configuration with two topologies: --topology picks one and
    its nodeLabels choose the nodes (as the webhook's own placement does),
    --node-label and --topology-name still win; a configuration the webhook
    would refuse is an error naming the ConfigMap and the field."""
    config = ("topologies:\n"
              "- name: racks\n"
              "  levels: [topology.topo.io/rack, kubernetes.io/hostname]\n"
              "  nodeLabels: {topology.topo.io/rack: rack-1}\n"
              "- name: leaves\n"
              "  levels: [topology.topo.io/leaf, kubernetes.io/hostname]\n")
    add_install(env, "topo", "topo-system", config=config)
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and out == "" and "2 topologies" in err and '"racks"' in err and
           '"leaves"' in err and "--topology NAME" in err, f"two topologies: {rc} {err!r}")
    racks = "topology.topo.io/rack,kubernetes.io/hostname"
    rc, out, err = without_levels(env, "show", "--topology", "racks")
    expect(rc == 0 and err == 'levels from ConfigMap topo-system/topo-webhook, topology '
                              f'"racks": {racks} (nodes with topology.topo.io/rack=rack-1)\n',
           f"--topology racks: {rc} {err!r}")
    want = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", racks, "--node-label",
                  "topology.topo.io/rack=rack-1", "--topology-name", "racks")
    expect(out == want, f"--topology racks differs:\n{out}\n---\n{want}")
    rc, out, err = without_levels(env, "show", "--topology", "leaves", "--topology-name", "x")
    want = env.ok("show", "--kubeconfig", env.kubeconfig, "--levels",
                  "topology.topo.io/leaf,kubernetes.io/hostname", "--topology-name", "x")
    expect(rc == 0 and out == want, f"--topology leaves: {rc} {err!r}")
    # --topology naming none of them, and no Kueue: what was tried.
    rc, out, err = without_levels(env, "show", "--topology", "spines")
    expect(rc == 2 and 'no topology "spines" in the ConfigMap(s) of the 1 topo-webhook '
           'install(s) registered (1 found)' in err and
           "Kueue's Topology is not served" in err and "--levels" in err,
           f"--topology spines: {rc} {err!r}")
    # The webhook would not start on this file: neither does a guess.
    bad = config.replace("topology.topo.io/leaf", "topology.topo.io/leaf x")
    env.delete("/api/v1/namespaces/topo-system/configmaps/topo-webhook")
    add_configmap(env, chart_configmap("topo", "topo-system", config=bad))
    rc, out, err = without_levels(env, "show", "--topology", "racks")
    expect(rc == 2 and out == "" and
           "ConfigMap topo-system/topo-webhook: config.yaml:" in err and
           "topologies[1].levels[0]" in err, f"a bad config: {rc} {err!r}")


@case
def levels_from_kueue_topology(env):
    """No webhook registered: Kueue's Topology (v1beta2, else v1beta1 on an
    older Kueue); several need --topology, which names a missing one
    clearly; a Topology whose nodeLabel is no label key is an error naming
    the field; nothing at all says what was tried."""
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and out == "" and "none found in the cluster" in err and
           "topo-webhook is not registered (no MutatingWebhookConfiguration with the webhook "
           "pods.topology.topo.io)" in err and
           "Kueue's Topology is not served (kueue.x-k8s.io v1beta2, v1beta1)" in err and
           "give --levels" in err, f"nothing at all: {rc} {err!r}")
    env.admin("config", {"kueue": True})
    rc, _, err = without_levels(env, "show")
    expect(rc == 2 and "no Kueue Topology;" in err, f"Kueue, no Topology: {rc} {err!r}")
    add_topology(env, kueue_topology("gpu", *LEVELS.split(",")))
    for args in SHOW_ASSIGN:
        rc, out, err = without_levels(env, *args)
        expect(rc == 0 and err == f'levels from Topology "gpu" (kueue.x-k8s.io/v1beta2): '
                                  f"{LEVELS}\n", f"{args}: {rc} {err!r}")
        want = env.ok(*args, "--kubeconfig", env.kubeconfig, "--levels", LEVELS,
                      "--topology-name", "gpu")
        expect(out == want, f"{args}: stdout differs:\n{out}\n---\n{want}")
    # Kueue's message names its Topology.
    rc, out, err = without_levels(env, "assign", "--count", "1", "--request", f"{GPU}=4",
                                  "--required", RACK)
    expect(rc == 1 and 'does not fit: topology "gpu"' in err, f"no fit: {rc} {err!r}")
    add_topology(env, kueue_topology("racks", RACK, "kubernetes.io/hostname"))
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and out == "" and "2 Kueue Topologies: gpu, racks" in err and
           "--topology NAME" in err, f"two Topologies: {rc} {err!r}")
    rc, out, err = without_levels(env, "show", "--topology", "racks")
    expect(rc == 0 and err == 'levels from Topology "racks" (kueue.x-k8s.io/v1beta2): '
                              f'{RACK},kubernetes.io/hostname\n', f"--topology racks: {rc} {err!r}")
    rc, out, err = without_levels(env, "show", "--topology", "nope")
    expect(rc == 2 and out == "" and 'no Kueue Topology "nope" (there are: gpu, racks)' in err,
           f"--topology nope: {rc} {err!r}")
    add_topology(env, kueue_topology("bad", "topology.topo.io/rack x", "kubernetes.io/hostname"))
    rc, out, err = without_levels(env, "show", "--topology", "bad")
    expect(rc == 2 and out == "" and 'Topology "bad": spec.levels[0].nodeLabel: invalid label '
                                     'key "topology.topo.io/rack x"' in err,
           f"a bad Topology: {rc} {err!r}")
    # --levels and --topology ask two things; offline there is no cluster.
    rc, _, err = without_levels(env, "show", "--topology", "gpu", "--levels", LEVELS)
    expect(rc == 2 and "--topology and --levels are mutually exclusive" in err, f"{rc} {err!r}")
    rc, _, err = env.offline("show", "--nodes", NODES, "--topology", "gpu")
    expect(rc == 2 and "--topology: only with the live cluster" in err, f"offline: {rc} {err!r}")
    rc, _, err = env.offline("show", "--nodes", NODES)
    expect(rc == 2 and "--levels: required" in err, f"offline without --levels: {rc} {err!r}")


@case
def levels_from_kueue_v1beta1(env):
    """A Kueue before v1beta2 (v0.14 and older) serves Topology as v1beta1
    only: read there."""
    env.admin("config", {"kueue": True, "kueue_versions": ["v1beta1"]})
    add_topology(env, kueue_topology("default", *LEVELS.split(","), version="v1beta1"))
    rc, out, err = without_levels(env, "show")
    expect(rc == 0 and err == f'levels from Topology "default" (kueue.x-k8s.io/v1beta1): '
                              f"{LEVELS}\n", f"v1beta1: {rc} {err!r}")
    expect(out == env.ok("show", "--kubeconfig", env.kubeconfig, "--levels", LEVELS),
           "v1beta1: stdout differs")


@case
def levels_forbidden_configmaps(env):
    """A user who may read neither the webhook's registration nor
    ConfigMaps in every namespace (no ClusterRole: the usual non-admin)
    goes on to Kueue's Topology; forbidden both, the message says so.
    Given --levels, nothing is read for them."""
    no_mwc = {"resource": "mutatingwebhookconfigurations", "verbs": ["list"]}
    env.admin("config", {"kueue": True, "forbid": [
        no_mwc, {"resource": "configmaps", "verbs": ["list", "watch"], "scope": "cluster"}]})
    add_configmap(env, chart_configmap("topo", "topo-system"))
    add_topology(env, kueue_topology("default", *LEVELS.split(",")))
    rc, out, err = without_levels(env, "show")
    expect(rc == 0 and err == f'levels from Topology "default" (kueue.x-k8s.io/v1beta2): '
                              f"{LEVELS}\n", f"403 on ConfigMaps: {rc} {err!r}")
    statuses = [r["status"] for r in env.admin("requests")["requests"]
                if r["path"].startswith("/api/v1/configmaps")]
    expect(403 in statuses, f"the fake did not refuse the list: {statuses}")
    env.admin("config", {"forbid": [
        no_mwc, {"resource": "configmaps", "verbs": ["list"], "scope": "cluster"},
        {"resource": "topologies", "verbs": ["list"]}]})
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and out == "" and
           "reading topo-webhook's registration and listing ConfigMaps in all namespaces are "
           "forbidden to you" in err and
           "listing Kueue's Topologies is forbidden to you" in err and "give --levels" in err,
           f"403 on both: {rc} {err!r}")
    # --levels: nothing read for the levels, nothing said on stderr.
    env.admin("config", {"forbid": []})
    env.admin("requests/clear", {})
    rc, out, err, _ = env.kubectl_topo("show", "--kubeconfig", env.kubeconfig, "--levels",
                                       CHART_LEVELS)
    expect(rc == 0 and err == "", f"--levels: {rc} {err!r}")
    expect(levels_read(env) == [], f"--levels read the cluster's levels: {levels_read(env)}")


# A tenant (anyone who may create a ConfigMap in their namespace) can put
# the chart's labels on one.
TENANT_BROKEN = chart_configmap("x", "tenant-a", config="topologies: [\n")
# Past the YAML reader's nesting limit: refused with TOPO_ELIMIT, not a
# syntax error, and still only a tenant's mistake.
TENANT_DEEP = chart_configmap("z", "tenant-c", config="x: " + "[" * 129 + "]" * 129 + "\n")
TENANT_OTHER = chart_configmap("y", "tenant-b", config=CHART_CONFIG.replace(
    "  - topology.topo.io/leaf\n", ""))


@case
def levels_tenant_configmaps(env):
    """Tenants' ConfigMaps with the chart's labels, one broken and one with
    other levels for the same topology name, neither block nor steer the
    lookup: with the webhook's registration readable, the registered
    install's ConfigMap is read, theirs never. Without it (403), the label
    search ignores the broken one with a warning naming it and calls the
    differing ones what they are: an error listing them, asking for
    --levels (not --topology: both are named default)."""
    add_install(env, "gpu", "gpu-system")
    add_configmap(env, TENANT_BROKEN)
    add_configmap(env, TENANT_OTHER)
    env.admin("requests/clear", {})
    for args in SHOW_ASSIGN:
        rc, out, err = without_levels(env, *args)
        expect(rc == 0 and err == 'levels from ConfigMap gpu-system/gpu-topo-webhook, topology '
                                  f'"default": {CHART_LEVELS}\n', f"{args}: {rc} {err!r}")
    rc, _, err = without_levels(env, "show", "--topology", "default")
    expect(rc == 0 and err.startswith("levels from ConfigMap gpu-system/"), f"{rc} {err!r}")
    expect(not any("tenant" in p for p in levels_read(env)),
           f"a tenant's namespace was read: {levels_read(env)}")
    # The registration is not readable to this user: the label search.
    env.admin("config", {"forbid": [{"resource": "mutatingwebhookconfigurations"}]})
    rc, out, err = without_levels(env, "show")
    lines = err.splitlines()
    expect(rc == 2 and out == "" and len(lines) == 2, f"forbidden: {rc} {err!r}")
    expect(lines[0].startswith("kubectl topo: warning: ignoring ConfigMap tenant-a/x-topo-webhook")
           and "config.yaml" in lines[0], f"the warning: {lines[0]!r}")
    expect("ConfigMap tenant-b/y-topo-webhook, topology \"default\" (topology.topo.io/spine,"
           "kubernetes.io/hostname)" in lines[1] and
           "ConfigMap gpu-system/gpu-topo-webhook, topology \"default\"" in lines[1] and
           "give --levels" in lines[1] and "--topology NAME" not in lines[1],
           f"the differing ones: {lines[1]!r}")
    # The tenant's other one gone: the install's, the broken ones still
    # only warnings (one that breaks a limit of the reader too).
    env.delete("/api/v1/namespaces/tenant-b/configmaps/y-topo-webhook")
    add_configmap(env, TENANT_DEEP)
    rc, out, err = without_levels(env, "show")
    lines = err.splitlines()
    expect(rc == 0 and len(lines) == 3 and "ignoring ConfigMap tenant-a/" in lines[0] and
           "ignoring ConfigMap tenant-c/" in lines[1] and
           lines[2] == 'levels from ConfigMap gpu-system/gpu-topo-webhook, topology "default": '
                       f"{CHART_LEVELS}", f"broken ignored: {rc} {err!r}")


def expect_escaped(text, what):
    for c in ("\x1b", "\x9b", "\x85", "\r"):
        expect(c not in text, f"{what}: a raw control character {c!r} reached the terminal: "
                              f"{text!r}")


@case
def cluster_text_escaped(env):
    """Nothing from the cluster reaches the terminal raw: a level name, a
    topology name or a node label value with ESC, CR/LF, C1 and invalid
    UTF-8 is printed escaped (\\x1b, \\n, \\u009b, \\xff), in errors, the
    warning of the label search, the "levels from" line and show's and
    assign's tables; a line like ours cannot be forged."""
    evil = "a\x1b[31mRED\nlevels from ConfigMap fake"
    config = f"topologies:\n- name: default\n  levels: [{json.dumps(evil)}]\n"
    add_install(env, "gpu", "gpu-system", config=config)
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and "\\x1b[31mRED\\nlevels from ConfigMap fake" in err and
           len(err.splitlines()) == 1, f"a bad level: {rc} {err!r}")
    expect_escaped(err, "a bad level")
    env.delete("/api/v1/namespaces/gpu-system/configmaps/gpu-topo-webhook")
    name = "\x1b[2J\u009b31m\rx"
    add_configmap(env, chart_configmap("gpu", "gpu-system", config=json.dumps(
        {"topologies": [{"name": name, "levels": [RACK]}]})))
    rc, out, err = without_levels(env, "show")
    expect(rc == 2 and "\\x1b[2J\\u009b31m\\rx" in err, f"a bad name: {rc} {err!r}")
    expect_escaped(err, "a bad name")
    # The same, found by the label search: the warning is escaped too.
    env.admin("config", {"forbid": [{"resource": "mutatingwebhookconfigurations"}]})
    rc, out, err = without_levels(env, "show")
    expect("warning: ignoring ConfigMap gpu-system/gpu-topo-webhook" in err and
           "\\x1b[2J" in err, f"the warning: {rc} {err!r}")
    expect_escaped(err, "the warning")
    env.admin("config", {"forbid": []})
    # A node label value (the fake, unlike kube-apiserver, stores any):
    # show's tree and assign's table.
    env.delete("/api/v1/namespaces/gpu-system/configmaps/gpu-topo-webhook")
    add_configmap(env, chart_configmap("gpu", "gpu-system", config=(
        f"topologies:\n- name: default\n  levels: [{RACK}, kubernetes.io/hostname]\n")))
    node = env.items("/api/v1/nodes")[0]["metadata"]["name"]
    status, body = env.request("PATCH", f"/api/v1/nodes/{node}",
                               {"metadata": {"labels": {RACK: "r\x1b[2J\x85\nx"}}},
                               ctype="application/merge-patch+json")
    expect(status == 200, f"PATCH node: {status} {body}")
    p = subprocess.run([env.plugin, "show", "--kubeconfig", env.kubeconfig], capture_output=True,
                       env={"PATH": os.environ.get("PATH", ""), "HOME": env.path("home"),
                            "TMPDIR": env.tmp})
    out = p.stdout.decode("utf-8", "replace")
    expect(p.returncode == 0 and "r\\x1b[2J\\u0085\\nx" in out, f"show: {p.returncode} {out!r}")
    expect_escaped(out, "show")
    p = subprocess.run([env.plugin, "assign", "--kubeconfig", env.kubeconfig, "--count", "1",
                        "--request", f"{GPU}=1", "--unconstrained"], capture_output=True,
                       env={"PATH": os.environ.get("PATH", ""), "HOME": env.path("home"),
                            "TMPDIR": env.tmp})
    out = p.stdout.decode("utf-8", "replace")
    expect(p.returncode == 0, f"assign: {p.returncode} {p.stderr!r}")
    expect_escaped(out, "assign")


def closed_port():
    """A local port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


if __name__ == "__main__":
    sys.exit(run_cases(CASES, Env, bin_flag="--kubectl-topo"))
