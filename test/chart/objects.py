"""Checks of one render's objects: the kinds present, labels, the webhook's
registration, TLS, RBAC exactly, every pod's security context and
resources, the probes on the health ports. Each check returns a list of
problems (empty: passed)."""

import base64
import os
import re
import subprocess
import tempfile

import kueue_names
import rbac
from render import NAMESPACE, RELEASE

FULL = "topo" if "topo" in RELEASE else RELEASE + "-topo"
WEBHOOK, SYNC, LLDP = FULL + "-webhook", FULL + "-sync", FULL + "-lldp"
RELEASE_HOOK = FULL + "-release"  # the uninstall hook's Job, ServiceAccount and ClusterRole
HOOK_EVENTS = "pre-delete,post-delete"
# The PodSet annotations that make a pod topo's, as the webhook's C code
# has them (kueue_names.py reads the sources): the matchConditions must send
# exactly the pods carrying one of these.
TOPOLOGY_ANNOTATIONS = kueue_names.podset_annotations()
CLUSTER_KINDS = {"ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration"}


def annotation_list(expr):
    """The names of a matchConditions expression's `k in [...]` list (the
    annotation keys it sends), in order, repeats kept; None without one."""
    m = re.search(r"\bk in \[([^\]]*)\]", expr)
    return re.findall(r"'([^']*)'", m.group(1)) if m else None


def flag(args, name):
    """The value after flag name in a container's args, or None."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return None


def pod_templates(r):
    return [d for d in r.docs if d["kind"] in ("Deployment", "DaemonSet", "Job")]


CRITICAL = ("system-cluster-critical", "system-node-critical")


def service_account(v, component):
    """The ServiceAccount a component's pods run as, from the values."""
    sa = v[component]["serviceAccount"]
    return sa["name"] or (FULL + "-" + component)


def release_service_account(v):
    """The ServiceAccount the uninstall hook's Job runs as, from the values."""
    return v["uninstall"]["serviceAccount"]["name"] or RELEASE_HOOK


def expected_kinds(v):
    kinds = {"ConfigMap", "ClusterRole", "ClusterRoleBinding", "Role",
             "RoleBinding", "Service", "Deployment", "MutatingWebhookConfiguration"}
    w = v["webhook"]
    s = v["sync"]
    if w["serviceAccount"]["create"] or (s["enabled"] and s["serviceAccount"]["create"]) or \
            (s["enabled"] and v["lldp"]["enabled"] and v["lldp"]["serviceAccount"]["create"]) or \
            (v["uninstall"]["releaseGatedPods"] and v["uninstall"]["serviceAccount"]["create"]):
        kinds.add("ServiceAccount")
    if w["podDisruptionBudget"]["enabled"] and w["replicaCount"] > 1:
        kinds.add("PodDisruptionBudget")
    if w["networkPolicy"]["enabled"] or (s["enabled"] and s["networkPolicy"]["enabled"]):
        kinds.add("NetworkPolicy")
    classes = [w["priorityClassName"]] + ([s["priorityClassName"]] if s["enabled"] else []) + \
        ([v["uninstall"]["priorityClassName"]] if v["uninstall"]["releaseGatedPods"] else [])
    if v["criticalPodQuota"] and any(c in CRITICAL for c in classes):
        kinds.add("ResourceQuota")
    if not w["recordKeys"]["existingSecret"]:
        kinds.add("Secret")
    if w["tls"]["provider"] == "helm":
        kinds.add("Secret")
    else:
        kinds.add("Certificate")
        if not w["tls"]["certManager"]["issuerRef"].get("name"):
            kinds.add("Issuer")
    if s["enabled"] and ((s["netbox"]["url"] and not s["netbox"]["existingSecret"]) or
                         (s["ufm"]["url"] and not s["ufm"]["existingSecret"])):
        kinds.add("Secret")
    if s["enabled"] and v["lldp"]["enabled"]:
        kinds.add("DaemonSet")
    if v["metrics"]["serviceMonitor"]["enabled"]:
        kinds.add("ServiceMonitor")
    if v["metrics"]["prometheusRule"]["enabled"]:
        kinds.add("PrometheusRule")
    if v["uninstall"]["releaseGatedPods"]:
        kinds.add("Job")
    return kinds


def check_kinds(r):
    want, got = expected_kinds(r.values), set(r.kinds())
    out = []
    if want != got:
        out.append("kinds: want %s, got %s" % (sorted(want), sorted(got)))
    for name, kind in ((WEBHOOK, "Deployment"), (WEBHOOK, "Service"),
                       (WEBHOOK, "MutatingWebhookConfiguration")):
        if r.get(kind, name) is None:
            out.append("no %s %s" % (kind, name))
    if r.values["sync"]["enabled"] != (r.get("Deployment", SYNC) is not None):
        out.append("Deployment %s rendered: %s, sync.enabled %s" % (
            SYNC, r.get("Deployment", SYNC) is not None, r.values["sync"]["enabled"]))
    return out


def check_labels(r):
    out = []
    rec = {"app.kubernetes.io/name": "topo", "app.kubernetes.io/instance": RELEASE,
           "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/part-of": "topo"}
    # commonLabels on every object and every pod, a component's podLabels
    # over them on its pods; its podAnnotations beside the chart's.
    rec.update(r.values["commonLabels"])
    for d in pod_templates(r):
        meta = d["spec"]["template"]["metadata"]
        labels = meta.get("labels") or {}
        component = d["metadata"]["labels"]["app.kubernetes.io/component"]
        cv = r.values.get(component) or {}
        want = dict(r.values["commonLabels"], **cv.get("podLabels", {}))
        for k, val in want.items():
            if labels.get(k) != val:
                out.append("%s %s: pod label %s=%r, want %r" % (d["kind"], d["metadata"]["name"],
                                                              k, labels.get(k), val))
        ann = dict(meta.get("annotations") or {})
        if component in ("webhook", "sync") and "checksum/config" not in ann:
            out.append("%s %s: no checksum/config annotation" % (d["kind"],
                                                               d["metadata"]["name"]))
        ann.pop("checksum/config", None)
        if ann != cv.get("podAnnotations", {}):
            out.append("%s %s: pod annotations %r, want %r" % (
                d["kind"], d["metadata"]["name"], ann, cv.get("podAnnotations", {})))
    for d in r.docs:
        what = "%s %s" % (d["kind"], d["metadata"]["name"])
        labels = d["metadata"].get("labels") or {}
        for k, val in rec.items():
            if labels.get(k) != val:
                out.append("%s: label %s=%r, want %r" % (what, k, labels.get(k), val))
        for k in ("helm.sh/chart", "app.kubernetes.io/version"):
            if k not in labels:
                out.append("%s: no label %s" % (what, k))
        ns = d["metadata"].get("namespace")
        if d["kind"] in CLUSTER_KINDS:
            if ns is not None:
                out.append("%s: cluster-scoped with a namespace" % what)
        elif ns not in (NAMESPACE, "default"):
            out.append("%s: namespace %r" % (what, ns))
        if len(d["metadata"]["name"]) > 63:
            out.append("%s: name over 63 characters" % what)
    for d in pod_templates(r) + r.all("Service") + r.all("PodDisruptionBudget"):
        sel = (d["spec"].get("selector") or {})
        sel = sel.get("matchLabels", sel)
        if "app.kubernetes.io/version" in sel or "helm.sh/chart" in sel:
            out.append("%s %s: the selector names the version" % (d["kind"],
                                                                 d["metadata"]["name"]))
        tmpl = (d["spec"].get("template") or {}).get("metadata", {}).get("labels")
        if tmpl is not None and any(tmpl.get(k) != v for k, v in sel.items()):
            out.append("%s %s: its pods do not match its selector" % (d["kind"],
                                                                   d["metadata"]["name"]))
    return out


def check_webhook_registration(r):
    v = r.values["webhook"]
    m = r.get("MutatingWebhookConfiguration", WEBHOOK)
    if m is None:
        return ["no MutatingWebhookConfiguration"]
    out = []
    hooks = m.get("webhooks") or []
    if len(hooks) != 1:
        return ["%d webhooks, want 1" % len(hooks)]
    h = hooks[0]

    def want(field, got, exp):
        if got != exp:
            out.append("webhook %s: %r, want %r" % (field, got, exp))

    want("admissionReviewVersions", h.get("admissionReviewVersions"), ["v1"])
    want("rules", h.get("rules"), [{"operations": ["CREATE"], "apiGroups": [""],
                                    "apiVersions": ["v1"], "resources": ["pods"],
                                    "scope": "Namespaced"}])
    want("sideEffects", h.get("sideEffects"), "NoneOnDryRun")
    want("failurePolicy", h.get("failurePolicy"), v["failurePolicy"])
    want("timeoutSeconds", h.get("timeoutSeconds"), v["timeoutSeconds"])
    if not 1 <= h.get("timeoutSeconds", 0) <= 10:
        out.append("timeoutSeconds %r is not short" % h.get("timeoutSeconds"))
    want("reinvocationPolicy", h.get("reinvocationPolicy"), "Never")
    svc = h.get("clientConfig", {}).get("service", {})
    want("clientConfig.service", svc, {"name": WEBHOOK, "namespace": NAMESPACE,
                                       "path": "/mutate", "port": 443})
    conds = h.get("matchConditions")
    if v["matchConditions"]:
        if not conds or len(conds) != 1:
            out.append("matchConditions: %r" % conds)
        else:
            listed = annotation_list(conds[0]["expression"])
            if listed is None or sorted(listed) != sorted(TOPOLOGY_ANNOTATIONS):
                out.append("matchConditions: annotations %r, want exactly those the webhook "
                           "classifies by (include/topo/kueue_names.h) %r" % (
                               listed, TOPOLOGY_ANNOTATIONS))
    elif conds:
        out.append("matchConditions present with webhook.matchConditions false")
    exprs = (h.get("namespaceSelector") or {}).get("matchExpressions") or []
    excluded = [e for e in exprs if e.get("key") == "kubernetes.io/metadata.name" and
                e.get("operator") == "NotIn"]
    if len(excluded) != 1 or not {"kube-system", NAMESPACE} <= set(excluded[0]["values"]) or \
            not set(v["excludeNamespaces"]) <= set(excluded[0]["values"]):
        out.append("namespaceSelector does not exclude kube-system, %s and %s: %r" % (
            NAMESPACE, v["excludeNamespaces"], exprs))
    # The Service's port 443 leads to the container's HTTPS port.
    service = r.get("Service", WEBHOOK)
    dep = r.get("Deployment", WEBHOOK)
    if service and dep:
        c = dep["spec"]["template"]["spec"]["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        sp = [p for p in service["spec"]["ports"] if p["port"] == 443]
        target = sp[0]["targetPort"] if sp else None
        target = ports.get(target, target)
        if str(target) != flag(c["args"], "--port"):
            out.append("Service port 443 leads to %r, the webhook serves --port %s" % (
                target, flag(c["args"], "--port")))
    return out


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], capture_output=True, text=True, input=stdin,
                          timeout=30)


def check_tls(r):
    """The caBundle, the serving certificate and the replicas' peer settings
    agree, whichever provider."""
    v = r.values["webhook"]
    m = r.get("MutatingWebhookConfiguration", WEBHOOK)
    dep = r.get("Deployment", WEBHOOK)
    if m is None or dep is None:
        return ["no webhook"]
    out = []
    h = m["webhooks"][0]
    spec = dep["spec"]["template"]["spec"]
    args = spec["containers"][0]["args"]
    mounts = {mt["name"]: mt["mountPath"] for mt in spec["containers"][0]["volumeMounts"]}
    tls_vol = [vol for vol in spec["volumes"] if "secret" in vol and
               os.path.dirname(flag(args, "--tls-cert-file")) == mounts.get(vol["name"])]
    if len(tls_vol) != 1:
        return ["--tls-cert-file is not in a mounted Secret"]
    secret_name = tls_vol[0]["secret"]["secretName"]
    tls_dir = mounts[tls_vol[0]["name"]]
    for f, key in (("--tls-cert-file", "tls.crt"), ("--tls-private-key-file", "tls.key"),
                   ("--peer-ca-file", "ca.crt")):
        if flag(args, f) != tls_dir + "/" + key:
            out.append("%s %r, want %s/%s" % (f, flag(args, f), tls_dir, key))
    server_name = "%s.%s.svc" % (WEBHOOK, NAMESPACE)
    if flag(args, "--peer-server-name") != server_name:
        out.append("--peer-server-name %r, want %s" % (flag(args, "--peer-server-name"),
                                                        server_name))
    if v["tls"]["provider"] == "helm":
        secret = r.get("Secret", secret_name)
        if secret is None:
            return out + ["no Secret %s" % secret_name]
        if h["clientConfig"].get("caBundle") != secret["data"]["ca.crt"]:
            out.append("caBundle is not the Secret's ca.crt")
        if m["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from"):
            out.append("cert-manager annotation with provider helm")
        with tempfile.TemporaryDirectory() as d:
            for k in ("ca.crt", "tls.crt", "tls.key"):
                with open(os.path.join(d, k), "wb") as f:
                    f.write(base64.b64decode(secret["data"][k]))
            p = openssl("verify", "-CAfile", os.path.join(d, "ca.crt"),
                        "-verify_hostname", server_name, os.path.join(d, "tls.crt"))
            if p.returncode != 0:
                out.append("the serving certificate does not verify for %s against the CA: %s"
                           % (server_name, (p.stdout + p.stderr).strip()))
            pub = [openssl(*a).stdout for a in
                   (("x509", "-noout", "-pubkey", "-in", os.path.join(d, "tls.crt")),
                    ("pkey", "-pubout", "-in", os.path.join(d, "tls.key")))]
            if not pub[0] or pub[0] != pub[1]:
                out.append("tls.key is not the certificate's key")
    else:
        ann = m["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from")
        cert = r.get("Certificate", WEBHOOK)
        if ann != "%s/%s" % (NAMESPACE, WEBHOOK) or cert is None:
            out.append("cert-manager.io/inject-ca-from %r, Certificate %s: %s" % (
                ann, WEBHOOK, cert is not None))
        if h["clientConfig"].get("caBundle"):
            out.append("a caBundle of the chart's with provider certManager")
        if cert is not None:
            cs = cert["spec"]
            if cs["secretName"] != secret_name:
                out.append("the Certificate's Secret %s is not the one mounted (%s)" % (
                    cs["secretName"], secret_name))
            if not cs.get("dnsNames") or cs["dnsNames"][0] != server_name:
                out.append("the Certificate's first DNS name is not %s" % server_name)
            issuer = cs["issuerRef"]
            if issuer.get("kind", "Issuer") == "Issuer" and r.get("Issuer", issuer["name"]) is None:
                out.append("no Issuer %s rendered" % issuer["name"])
        if r.get("Secret", secret_name) is not None:
            out.append("the chart renders the Secret cert-manager owns")
    return out


def check_rbac(r):
    out = []
    exp = rbac.expected(r.values, WEBHOOK, SYNC)
    for component in ("webhook", "sync", "release"):
        # The ServiceAccount the pods run as: the chart's, or the operator's
        # (serviceAccount.create false), which the bindings must name; the
        # uninstall hook's is always the chart's own.
        if component == "release" and not r.values["uninstall"]["serviceAccount"]["create"]:
            # The operator's ServiceAccount: the chart binds it to nothing.
            if r.get("ClusterRole", RELEASE_HOOK) is not None or \
                    r.get("ClusterRoleBinding", RELEASE_HOOK) is not None:
                out.append("uninstall.serviceAccount.create false, yet RBAC %s rendered" %
                           RELEASE_HOOK)
            continue
        sa = release_service_account(r.values) if component == "release" else \
            service_account(r.values, component)
        grants, problems = rbac.granted(r, sa)
        out += problems
        for scope in sorted(set(grants) | {s for c, s in exp if c == component},
                            key=lambda s: s or ""):
            want = rbac.expand(exp.get((component, scope), []))
            got = rbac.expand(grants.get(scope, []))
            if want != got:
                out.append("%s rules in %s: missing %s, extra %s" % (
                    component, scope or "the cluster", sorted(want - got, key=str),
                    sorted(got - want, key=str)))
    for d in r.all("ClusterRole") + r.all("Role"):
        for ru in d.get("rules") or []:
            if "*" in str(ru):
                out.append("%s %s: a wildcard" % (d["kind"], d["metadata"]["name"]))
            if "secrets" in ru.get("resources", []):
                out.append("%s %s: access to Secrets" % (d["kind"], d["metadata"]["name"]))
    for ds in r.all("DaemonSet"):
        if ds["spec"]["template"]["spec"].get("automountServiceAccountToken") is not False:
            out.append("DaemonSet %s mounts a token it never uses" % ds["metadata"]["name"])
    return out


def check_security(r):
    """Restricted Pod Security (every pod), resources on every container."""
    out = []
    for d in pod_templates(r):
        what = "%s %s" % (d["kind"], d["metadata"]["name"])
        spec = d["spec"]["template"]["spec"]
        psc = spec.get("securityContext") or {}
        for k in ("hostNetwork", "hostPID", "hostIPC"):
            if spec.get(k) and not (k == "hostNetwork" and d["metadata"]["name"] == WEBHOOK and
                                    r.values["webhook"]["hostNetwork"]):
                out.append("%s: %s" % (what, k))
        if psc.get("runAsNonRoot") is not True:
            out.append("%s: pod runAsNonRoot not true" % what)
        if (psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            out.append("%s: pod seccompProfile not RuntimeDefault" % what)
        for vol in spec.get("volumes") or []:
            if "hostPath" in vol and d["metadata"]["name"] != LLDP:
                out.append("%s: hostPath volume %s" % (what, vol["name"]))
        for c in (spec.get("initContainers") or []) + spec["containers"]:
            cw = "%s container %s" % (what, c["name"])
            sc = c.get("securityContext") or {}
            if sc.get("allowPrivilegeEscalation") is not False:
                out.append("%s: allowPrivilegeEscalation not false" % cw)
            if sc.get("readOnlyRootFilesystem") is not True:
                out.append("%s: readOnlyRootFilesystem not true" % cw)
            if sc.get("privileged"):
                out.append("%s: privileged" % cw)
            caps = sc.get("capabilities") or {}
            if caps.get("drop") != ["ALL"] or caps.get("add"):
                out.append("%s: capabilities %r, want drop [ALL] only" % (cw, caps))
            # No uid given (OpenShift assigns one) is fine: runAsNonRoot makes the
            # kubelet refuse uid 0.
            if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is not True or \
                    sc.get("runAsUser", psc.get("runAsUser")) == 0:
                out.append("%s: may run as root" % cw)
            if (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type") != \
                    "RuntimeDefault":
                out.append("%s: seccompProfile not RuntimeDefault" % cw)
            res = c.get("resources") or {}
            for part, keys in (("requests", ("cpu", "memory")), ("limits", ("memory",))):
                for k in keys:
                    if k not in (res.get(part) or {}):
                        out.append("%s: no %s.%s" % (cw, part, k))
    return out


def check_probes(r):
    """Readiness on /readyz and liveness on /livez of the health port, the
    port the binary's --health-port opens."""
    out = []
    for name in (WEBHOOK, SYNC):
        d = r.get("Deployment", name)
        if d is None:
            continue
        c = d["spec"]["template"]["spec"]["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        health = flag(c["args"], "--health-port")
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/livez")):
            g = (c.get(probe) or {}).get("httpGet") or {}
            port = ports.get(g.get("port"), g.get("port"))
            if g.get("path") != path or str(port) != health:
                out.append("%s %s: %r, want GET %s on --health-port %s" % (name, probe, g, path,
                                                                         health))
        if flag(c["args"], "--health-address") != "$(POD_IP)":
            out.append("%s: --health-address is not the pod's IP" % name)
        env = {e["name"]: e for e in c.get("env", [])}
        if (env.get("POD_IP", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
                != "status.podIP"):
            out.append("%s: POD_IP does not come from status.podIP" % name)
    return out


def check_webhook_deployment(r):
    v = r.values["webhook"]
    d = r.get("Deployment", WEBHOOK)
    if d is None:
        return ["no webhook Deployment"]
    out = []
    spec = d["spec"]["template"]["spec"]
    c = spec["containers"][0]
    args = c["args"]
    if d["spec"]["replicas"] != v["replicaCount"]:
        out.append("replicas %r, want %r" % (d["spec"]["replicas"], v["replicaCount"]))
    anti = (spec.get("affinity") or {}).get("podAntiAffinity") or {}
    want_anti = {"soft": "preferredDuringSchedulingIgnoredDuringExecution",
                 "hard": "requiredDuringSchedulingIgnoredDuringExecution"}.get(v["podAntiAffinity"])
    if (list(anti) != [want_anti]) if want_anti else bool(anti):
        out.append("podAntiAffinity %r for %s" % (list(anti), v["podAntiAffinity"]))
    pdb = r.get("PodDisruptionBudget", WEBHOOK)
    if (pdb is not None) != (v["podDisruptionBudget"]["enabled"] and v["replicaCount"] > 1):
        out.append("PodDisruptionBudget rendered: %s with %d replicas" % (pdb is not None,
                                                                         v["replicaCount"]))
    if pdb is not None and pdb["spec"].get("minAvailable") != 1:
        out.append("PodDisruptionBudget minAvailable %r" % pdb["spec"].get("minAvailable"))
    mounts = {mt["mountPath"]: mt["name"] for mt in c["volumeMounts"]}
    vols = {vol["name"]: vol for vol in spec["volumes"]}
    db = flag(args, "--db") or ""
    cache = vols.get(mounts.get(os.path.dirname(db)), {}).get("emptyDir")
    if not cache or cache.get("medium") != "Memory" or not cache.get("sizeLimit"):
        out.append("--db %r is not on an emptyDir of medium Memory with a sizeLimit" % db)
    port = flag(args, "--port")
    if flag(args, "--peer-address") != "$(POD_IP):%s" % port:
        out.append("--peer-address %r, want $(POD_IP):%s" % (flag(args, "--peer-address"), port))
    for f, want in (("--lease-namespace", NAMESPACE), ("--leader-elect", "true"),
                    ("--config", None), ("--threads", str(v["threads"]))):
        if flag(args, f) is None or (want is not None and flag(args, f) != want):
            out.append("%s %r, want %r" % (f, flag(args, f), want))
    if spec["terminationGracePeriodSeconds"] <= int(flag(args, "--shutdown-timeout")) + 2:
        out.append("terminationGracePeriodSeconds does not exceed --shutdown-timeout + 2")
    return out


def check_record_keys(r, webhook=None):
    """The record keys (docs/webhook.md "Record keys"): the chart's Secret,
    kept (resource-policy keep), named after the release's fullname, holding
    a key of at least 16 bytes per listed name, or the operator's Secret and
    none of the chart's; the Deployment mounting the listed keys only and
    passing one --record-key-file per key, in the listed order (the first
    signs). webhook: the webhook's fullname (default this module's)."""
    webhook = webhook or WEBHOOK
    v = r.values["webhook"]["recordKeys"]
    keys = v["keys"]
    own = webhook + "-record-keys"
    name = v["existingSecret"] or own
    out = []
    secret = r.get("Secret", own)
    if v["existingSecret"]:
        if secret is not None:
            out.append("Secret %s rendered although existingSecret %s is given" % (
                own, v["existingSecret"]))
    elif secret is None:
        out.append("no Secret %s" % own)
    else:
        ann = secret["metadata"].get("annotations") or {}
        if ann.get("helm.sh/resource-policy") != "keep":
            out.append("Secret %s is not kept (helm.sh/resource-policy %r)" % (
                own, ann.get("helm.sh/resource-policy")))
        data = secret.get("data") or {}
        if list(data) != keys:
            out.append("Secret %s holds %s, want %s" % (own, list(data), keys))
        for k, b in data.items():
            if len(base64.b64decode(b)) < 16:
                out.append("Secret %s: key %s has %d bytes, under 16" % (
                    own, k, len(base64.b64decode(b))))
    d = r.get("Deployment", webhook)
    if d is None:
        return out + ["no Deployment %s" % webhook]
    spec = d["spec"]["template"]["spec"]
    c = spec["containers"][0]
    vols = [vol for vol in spec["volumes"] if vol.get("secret", {}).get("secretName") == name]
    if len(vols) != 1:
        return out + ["%d volumes of Secret %s" % (len(vols), name)]
    items = vols[0]["secret"].get("items") or []
    if [(i["key"], i["path"]) for i in items] != [(k, k) for k in keys]:
        out.append("volume %s mounts %s, want the keys %s" % (vols[0]["name"], items, keys))
    mounts = [m["mountPath"] for m in c["volumeMounts"] if m["name"] == vols[0]["name"]]
    if len(mounts) != 1:
        return out + ["volume %s mounted %d times" % (vols[0]["name"], len(mounts))]
    args = c["args"]
    files = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--record-key-file"]
    want = [os.path.join(mounts[0], k) for k in keys]
    if files != want:
        out.append("--record-key-file %s, want %s (one per key, in order)" % (files, want))
    return out


def check_network_policy(r):
    """With webhook.networkPolicy on: the policy selects exactly the webhook's
    pods (the Deployment's pod labels), lets the listed peers and the
    webhook's own pods (forwarding replicas) reach the HTTPS port and nobody
    else, and leaves the health port open (kubelet probes, Prometheus).
    Off: no policy."""
    v = r.values["webhook"]
    pol = r.get("NetworkPolicy", WEBHOOK)
    if not v["networkPolicy"]["enabled"]:
        return [] if pol is None else ["NetworkPolicy %s rendered while disabled" % WEBHOOK]
    if pol is None:
        return ["no NetworkPolicy %s" % WEBHOOK]
    out = []
    d = r.get("Deployment", WEBHOOK)
    labels = d["spec"]["template"]["metadata"]["labels"]
    sel = pol["spec"]["podSelector"].get("matchLabels") or {}
    if not sel or any(labels.get(k) != x for k, x in sel.items()):
        out.append("podSelector %s does not select the webhook's pods %s" % (sel, labels))
    if pol["spec"].get("policyTypes") != ["Ingress"]:
        out.append("policyTypes %r, want [Ingress]" % pol["spec"].get("policyTypes"))
    rules = pol["spec"].get("ingress") or []
    https = [x for x in rules if any(p.get("port") == v["port"] for p in x.get("ports", []))]
    health = [x for x in rules
              if any(p.get("port") == v["healthPort"] for p in x.get("ports", []))]
    if len(https) != 1:
        return out + ["%d rules for the HTTPS port %s, want 1" % (len(https), v["port"])]
    peers = https[0].get("from") or []
    want = list(v["networkPolicy"]["admissionFrom"]) + [{"podSelector": {"matchLabels": sel}}]
    if peers != want:
        out.append("HTTPS port open to %s, want %s" % (peers, want))
    metrics = v["networkPolicy"]["metricsFrom"]
    if len(health) != 1 or health[0].get("from", []) != metrics:
        out.append("the health port %s is not open to %s: %s" % (
            v["healthPort"], metrics or "all", health))
    return out


def check_sync_network_policy(r):
    """sync.networkPolicy: topo-sync's pods selected, only the health port
    open, to metricsFrom (empty: all). Off: no policy."""
    v = r.values["sync"]
    pol = r.get("NetworkPolicy", SYNC)
    if not (v["enabled"] and v["networkPolicy"]["enabled"]):
        return [] if pol is None else ["NetworkPolicy %s rendered while disabled" % SYNC]
    if pol is None:
        return ["no NetworkPolicy %s" % SYNC]
    out = []
    labels = r.get("Deployment", SYNC)["spec"]["template"]["metadata"]["labels"]
    sel = pol["spec"]["podSelector"].get("matchLabels") or {}
    if not sel or any(labels.get(k) != x for k, x in sel.items()) or \
            labels.get("app.kubernetes.io/component") != sel.get("app.kubernetes.io/component"):
        out.append("podSelector %s does not select topo-sync's pods %s" % (sel, labels))
    want = [{"ports": [{"port": v["healthPort"], "protocol": "TCP"}]}]
    if v["networkPolicy"]["metricsFrom"]:
        want[0]["from"] = v["networkPolicy"]["metricsFrom"]
    if pol["spec"].get("policyTypes") != ["Ingress"] or pol["spec"].get("ingress") != want:
        out.append("%s: ingress %r, want %r" % (SYNC, pol["spec"].get("ingress"), want))
    return out


def without_nulls(x):
    return {k: without_nulls(v) if isinstance(v, dict) else v
            for k, v in x.items() if v is not None} if isinstance(x, dict) else x


def check_pod_values(r):
    """The values every pod template takes (issue 29 part 4): security
    contexts as the values say (a key nulled by the operator absent),
    revisionHistoryLimit, the ServiceAccount (created with its annotations or
    the operator's), extraEnv after POD_IP, extraVolumes and their mounts,
    topologySpreadConstraints (with the component's labelSelector when none
    is given), priorityClassName, hostNetwork and dnsPolicy, topo-sync's
    anti-affinity with 2 replicas."""
    v = r.values
    out = []
    psc_want = without_nulls(v["podSecurityContext"])
    csc_want = without_nulls(v["containerSecurityContext"])
    for d in pod_templates(r):
        name = d["metadata"]["name"]
        component = d["metadata"]["labels"]["app.kubernetes.io/component"]
        cv = v["uninstall" if component == "release" else component]
        spec = d["spec"]["template"]["spec"]
        c = spec["containers"][0]
        psc = dict(spec.get("securityContext") or {})
        if component == "lldp":
            if psc.pop("supplementalGroups", []) != cv["supplementalGroups"]:
                out.append("%s: supplementalGroups lost" % name)
        if psc != psc_want:
            out.append("%s: pod securityContext %r, want %r" % (name, psc, psc_want))
        if c.get("securityContext") != csc_want:
            out.append("%s: container securityContext %r, want %r" % (
                name, c.get("securityContext"), csc_want))
        pull = [{"name": x} for x in v["imagePullSecrets"]]
        if spec.get("imagePullSecrets", []) != pull:
            out.append("%s: imagePullSecrets %r, want %r" % (name, spec.get("imagePullSecrets"),
                                                            pull))
        if component == "release":  # the uninstall hook's Job: its own checks (release hook)
            continue
        if d["spec"].get("revisionHistoryLimit") != v["revisionHistoryLimit"]:
            out.append("%s: revisionHistoryLimit %r, want %r" % (
                name, d["spec"].get("revisionHistoryLimit"), v["revisionHistoryLimit"]))
        sa = service_account(v, component)
        if spec.get("serviceAccountName") != sa:
            out.append("%s: serviceAccountName %r, want %r" % (name, spec.get("serviceAccountName"),
                                                               sa))
        obj = r.get("ServiceAccount", sa)
        if cv["serviceAccount"]["create"]:
            if obj is None:
                out.append("%s: no ServiceAccount %s" % (name, sa))
            elif (obj["metadata"].get("annotations") or {}) != cv["serviceAccount"]["annotations"]:
                out.append("ServiceAccount %s: annotations %r, want %r" % (
                    sa, obj["metadata"].get("annotations"), cv["serviceAccount"]["annotations"]))
        elif obj is not None:
            out.append("ServiceAccount %s rendered with %s.serviceAccount.create false" % (
                sa, component))
        if component == "lldp":
            continue
        env = c.get("env") or []
        if [e["name"] for e in env[:1]] != ["POD_IP"] or env[1:] != cv["extraEnv"]:
            out.append("%s: env %r, want POD_IP then %r" % (name, env, cv["extraEnv"]))
        vols, mounts = spec.get("volumes") or [], c.get("volumeMounts") or []
        for x in cv["extraVolumes"]:
            if x not in vols:
                out.append("%s: extra volume %r missing" % (name, x))
        for x in cv["extraVolumeMounts"]:
            if x not in mounts:
                out.append("%s: extra volume mount %r missing" % (name, x))
        sel = d["spec"]["selector"]["matchLabels"]
        want_tsc = [dict({"labelSelector": {"matchLabels": sel}}, **t)
                    for t in cv["topologySpreadConstraints"]]
        if spec.get("topologySpreadConstraints", []) != want_tsc:
            out.append("%s: topologySpreadConstraints %r, want %r" % (
                name, spec.get("topologySpreadConstraints"), want_tsc))
        if spec.get("priorityClassName", "") != cv["priorityClassName"]:
            out.append("%s: priorityClassName %r, want %r" % (
                name, spec.get("priorityClassName"), cv["priorityClassName"]))
        host = component == "webhook" and cv["hostNetwork"]
        dns = (cv.get("dnsPolicy") or ("ClusterFirstWithHostNet" if host else None))
        if spec.get("hostNetwork", False) != host or spec.get("dnsPolicy") != dns:
            out.append("%s: hostNetwork %r dnsPolicy %r, want %r %r" % (
                name, spec.get("hostNetwork"), spec.get("dnsPolicy"), host, dns))
        if component == "sync" and not cv["affinity"]:
            anti = (spec.get("affinity") or {}).get("podAntiAffinity") or {}
            want = {"soft": "preferredDuringSchedulingIgnoredDuringExecution",
                    "hard": "requiredDuringSchedulingIgnoredDuringExecution"}.get(
                        cv["podAntiAffinity"]) if cv["replicaCount"] > 1 else None
            if list(anti) != ([want] if want else []):
                out.append("%s: podAntiAffinity %r with %d replicas and %s" % (
                    name, list(anti), cv["replicaCount"], cv["podAntiAffinity"]))
            terms = anti.get(want) or []
            for t in terms:
                t = t.get("podAffinityTerm", t)
                if t.get("labelSelector", {}).get("matchLabels") != sel or \
                        t.get("topologyKey") != "kubernetes.io/hostname":
                    out.append("%s: anti-affinity term %r is not over its own pods per node" % (
                        name, t))
    quota = [q for q in r.all("ResourceQuota")]
    for q in quota:
        scope = q["spec"].get("scopeSelector", {}).get("matchExpressions", [])
        if scope != [{"scopeName": "PriorityClass", "operator": "In", "values": list(CRITICAL)}] \
                or q["metadata"].get("namespace") != NAMESPACE:
            out.append("ResourceQuota %s: %r" % (q["metadata"]["name"], q["spec"]))
    return out


def check_sync_deployment(r):
    v = r.values["sync"]
    d = r.get("Deployment", SYNC)
    if d is None:
        return [] if not v["enabled"] else ["no sync Deployment"]
    out = []
    c = d["spec"]["template"]["spec"]["containers"][0]
    args = c["args"]
    if d["spec"]["replicas"] != v["replicaCount"]:
        out.append("replicas %r, want %r" % (d["spec"]["replicas"], v["replicaCount"]))
    for f, want in (("--leader-elect", "true"), ("--lease-namespace", NAMESPACE),
                    ("--lease-name", SYNC), ("--kueue-objects", str(v["kueueObjects"]).lower())):
        if flag(args, f) != want:
            out.append("%s %r, want %r" % (f, flag(args, f), want))
    if "--once" in args or "--dry-run" in args:
        out.append("the controller runs with --once or --dry-run")
    return out


def check_release_hook(r):
    """The uninstall hook: a Job running topoassign release --all-namespaces
    with the chart's image, bounded (backoffLimit, a deadline), never
    restarted in place; it and its ServiceAccount, ClusterRole and binding
    are hooks of both delete events, made in that order before the Job and
    deleted once they succeeded."""
    v = r.values["uninstall"]
    hooks = [d for d in r.docs if (d["metadata"].get("annotations") or {}).get("helm.sh/hook")]
    if not v["releaseGatedPods"]:
        return ["hooks rendered with uninstall.releaseGatedPods false: %s" % [
            d["metadata"]["name"] for d in hooks]] if hooks else []
    out, weights = [], {}
    create = v["serviceAccount"]["create"]
    sa = release_service_account(r.values)
    kinds = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Job") if create else ("Job",)
    for kind in kinds:
        d = r.get(kind, sa if kind == "ServiceAccount" else RELEASE_HOOK)
        if d is None:
            out.append("no %s %s" % (kind, RELEASE_HOOK))
            continue
        a = d["metadata"].get("annotations") or {}
        if a.get("helm.sh/hook") != HOOK_EVENTS:
            out.append("%s: helm.sh/hook %r, want %r" % (kind, a.get("helm.sh/hook"),
                                                         HOOK_EVENTS))
        if set((a.get("helm.sh/hook-delete-policy") or "").split(",")) != \
                {"before-hook-creation", "hook-succeeded"}:
            out.append("%s: hook-delete-policy %r" % (kind, a.get("helm.sh/hook-delete-policy")))
        weights[kind] = int(a.get("helm.sh/hook-weight", "0"))
    if len(weights) == 4 and not (weights["ServiceAccount"] < weights["ClusterRole"] <
                                  weights["ClusterRoleBinding"] < weights["Job"]):
        out.append("hook weights %r: the Job must come after what it runs as" % weights)
    if len(hooks) != len(kinds):
        out.append("hooks: %s" % [(d["kind"], d["metadata"]["name"]) for d in hooks])
    if create:
        obj = r.get("ServiceAccount", sa)
        ann = dict((obj or {}).get("metadata", {}).get("annotations") or {})
        for k in ("helm.sh/hook", "helm.sh/hook-weight", "helm.sh/hook-delete-policy"):
            ann.pop(k, None)
        if ann != v["serviceAccount"]["annotations"]:
            out.append("ServiceAccount %s: annotations %r, want %r" % (
                sa, ann, v["serviceAccount"]["annotations"]))
    job = r.get("Job", RELEASE_HOOK)
    if job is None:
        return out
    spec = job["spec"]
    if spec.get("backoffLimit") != v["backoffLimit"] or \
            spec.get("activeDeadlineSeconds") != v["activeDeadlineSeconds"]:
        out.append("Job backoffLimit/activeDeadlineSeconds %r/%r" % (
            spec.get("backoffLimit"), spec.get("activeDeadlineSeconds")))
    pod = spec["template"]["spec"]
    c = pod["containers"][0]
    dep = r.get("Deployment", WEBHOOK)
    want_args = ["release", "--all-namespaces", "--concurrency", str(v["concurrency"]),
                 "--qps", str(v["qps"])]
    if c["command"] != ["/usr/bin/topoassign"] or c.get("args") != want_args:
        out.append("Job runs %r %r, want %r" % (c["command"], c.get("args"), want_args))
    for key, empty in (("priorityClassName", ""), ("nodeSelector", {}), ("tolerations", []),
                       ("affinity", {})):
        if pod.get(key, empty) != v[key]:
            out.append("Job pod %s %r, want %r" % (key, pod.get(key), v[key]))
    if dep is not None and c["image"] != dep["spec"]["template"]["spec"]["containers"][0]["image"]:
        out.append("Job image %s is not the chart's" % c["image"])
    if pod.get("restartPolicy") != "Never" or pod.get("serviceAccountName") != sa:
        out.append("Job pod: restartPolicy %r, serviceAccountName %r" % (
            pod.get("restartPolicy"), pod.get("serviceAccountName")))
    return out


CHECKS = [("kinds", check_kinds), ("labels", check_labels),
          ("webhook registration", check_webhook_registration), ("tls", check_tls),
          ("rbac", check_rbac), ("security", check_security), ("probes", check_probes),
          ("webhook deployment", check_webhook_deployment), ("record keys", check_record_keys),
          ("network policy", check_network_policy),
          ("sync network policy", check_sync_network_policy), ("pod values", check_pod_values),
          ("sync deployment", check_sync_deployment), ("release hook", check_release_hook)]
