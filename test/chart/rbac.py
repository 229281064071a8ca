"""RBAC: the rules each component must have, exactly (docs/webhook.md
"RBAC", docs/sync.md, issue 14), and whether rendered rules allow a request
a daemon really made against the fake API server."""

import re
from urllib.parse import parse_qs, urlsplit

from render import NAMESPACE


def expand(rules):
    """Rules as a set of (group, resource, verb, resourceName or None)."""
    out = set()
    for r in rules:
        names = r.get("resourceNames") or [None]
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    for n in names:
                        out.add((g, res, v, n))
    return out


def rule(group, resources, verbs, names=None):
    return {"apiGroups": [group], "resources": resources, "verbs": verbs,
            **({"resourceNames": names} if names else {})}


def expected(values, webhook_name, sync_name):
    """{(component, binding namespace or None for cluster-wide): rules}."""
    w, s = values["webhook"], values["sync"]
    leases = "coordination.k8s.io"
    out = {}
    wc = [rule("", ["nodes"], ["get", "list", "watch"]),
          rule("", ["pods"], ["get", "list", "watch", "patch"]),
          rule("", ["pods/status"], ["patch"]),
          rule("batch", ["jobs"], ["list", "watch"]),
          # Events on the pods whose failed node was replaced, in their namespaces
          rule("", ["events"], ["create"])]
    # The no-fit policy label, and packing's opt-out label (every namespace)
    if w["config"].get("namespacePolicyLabel") or w["packing"]["enabled"]:
        wc.append(rule("", ["namespaces"], ["list", "watch"]))
    if w["resourceQuotas"]:
        wc.append(rule("", ["resourcequotas"], ["list", "watch"]))
    out[("webhook", None)] = wc
    out[("webhook", NAMESPACE)] = [rule(leases, ["leases"], ["create"]),
                                   rule(leases, ["leases"], ["get", "update"], [webhook_name])]
    if s["enabled"]:
        sc = [rule("", ["nodes"], ["get", "list", "watch", "patch"])]
        if s["kueueObjects"]:
            sc.append(rule("kueue.x-k8s.io", ["topologies", "resourceflavors"],
                           ["get", "list", "create", "update"]))
        out[("sync", None)] = sc
        sr = [rule(leases, ["leases"], ["create"]),
              rule(leases, ["leases"], ["get", "update"], [sync_name])]
        if s["exportConfigMap"]:
            sr += [rule("", ["configmaps"], ["create"]),
                   rule("", ["configmaps"], ["get", "update"], [s["exportConfigMap"]])]
        out[("sync", NAMESPACE)] = sr
        out[("sync", "default")] = [rule("", ["events"], ["create"])]
    if values["uninstall"]["releaseGatedPods"] and values["uninstall"]["serviceAccount"]["create"]:
        # topoassign release: list the pods, read one again when it changed,
        # patch the gate away (the uninstall hook)
        out[("release", None)] = [rule("", ["pods"], ["get", "list", "patch"])]
    return out


def granted(render, sa_name):
    """{binding namespace or None: rules} the ServiceAccount sa_name of the
    release namespace gets from the rendered bindings; problems found."""
    out, problems = {}, []
    namespace = render.namespace
    for b in render.all("ClusterRoleBinding") + render.all("RoleBinding"):
        subs = b.get("subjects") or []
        if not any(x.get("kind") == "ServiceAccount" and x.get("name") == sa_name and
                   x.get("namespace") == namespace for x in subs):
            continue
        if len(subs) != 1:
            problems.append("%s %s binds more than its ServiceAccount" % (b["kind"],
                                                                        b["metadata"]["name"]))
        ref = b["roleRef"]
        role = render.get(ref["kind"], ref["name"])
        scope = None if b["kind"] == "ClusterRoleBinding" else b["metadata"]["namespace"]
        if role is None:
            problems.append("%s %s: no %s %s rendered" % (b["kind"], b["metadata"]["name"],
                                                          ref["kind"], ref["name"]))
            continue
        if ref["kind"] == "Role" and role["metadata"].get("namespace") != scope:
            problems.append("RoleBinding %s: Role in another namespace" % b["metadata"]["name"])
        out.setdefault(scope, []).extend(role.get("rules") or [])
    return out, problems


ROUTE = re.compile(r"^(?:/api/(?P<cv>v1)|/apis/(?P<group>[^/]+)/(?P<gv>[^/]+))"
                   r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)"
                   r"(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")


def attributes(method, target):
    """A request as the API server's authorizer sees it: (verb, group,
    resource, namespace, name), or None for a non-resource path."""
    url = urlsplit(target)
    m = ROUTE.match(url.path)
    if not m:
        return None
    group = m.group("group") or ""
    res = m.group("res")
    ns, name = m.group("ns"), m.group("name")
    if m.group("sub"):
        res += "/" + m.group("sub")
    q = parse_qs(url.query)
    if method == "GET":
        verb = "get" if name else ("watch" if q.get("watch", [""])[0] in ("1", "true")
                                   else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())
    return verb, group, res, ns, name


def allowed(grants, attrs):
    verb, group, res, ns, name = attrs
    for scope, rules in grants.items():
        if scope is not None and scope != ns:
            continue
        for g, r, v, n in expand(rules):
            if g == group and r == res and v == verb and (n is None or n == name):
                return True
    return False
