"""The PrometheusRule's alerts evaluated by the real promtool (Debian's
prometheus package): the rendered rule's spec written as a rules file,
`promtool check rules` on it, and `promtool test rules` with one firing and
one quiet case per alert.

The input series are the ones Prometheus would hold: the metric names and
label sets topo-webhook and topo-sync really served when the chart test
scraped them (a label's value may be varied, never a label added), with the
labels the Prometheus Operator's ServiceMonitor adds to each target
(namespace, service, job = the Service's name, pod, container, endpoint,
instance) and Prometheus's own `up` per target. Only the API server's
admission metrics are written by hand, with the labels kube-apiserver gives
them (cited at APISERVER)."""

import os
import re
import shutil
import subprocess

import yaml

INSTALL_HINT = ("promtool not found: it comes with Debian's prometheus package "
                "(apt-get install --no-install-recommends prometheus; scripts/test.sh "
                "installs it)")

# kube-apiserver's admission metrics, as kubernetes/kubernetes defines them in
# staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go:
#   apiserver_admission_webhook_fail_open_count   labels {name, type}
#   apiserver_admission_webhook_rejection_count   labels {name, type, operation,
#                                                         error_type, rejection_code}
# name is the webhook's name (webhooks[].name of the configuration); type is
# "admit" for a mutating webhook (plugin/webhook/mutating/dispatcher.go calls
# ObserveWebhookFailOpen(ctx, hook.Name, "admit")); error_type is
# calling_webhook_error when the call failed, no_error when the webhook
# itself refused. The target labels are those of the API server's scrape in
# kube-prometheus (job apiserver, the default/kubernetes Service).
APISERVER = {"job": "apiserver", "namespace": "default", "service": "kubernetes",
             "endpoint": "https", "instance": "172.18.0.2:6443"}

# Families served without a sample in the chart test's runs, whose label
# names are therefore not seen: each is labelled only once something
# happens that the runs avoid. Their labels as the daemon registers them:
# topo_sync_source_failures_total {source, reason} (controllers/sources.c,
# by_reason), counted when a read fails (every read succeeds here).
UNSEEN = {"topo_sync_source_failures_total": ("source", "reason")}

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Problem(Exception):
    pass


def anchor(title):
    """GitHub's anchor of a Markdown heading: lower case, spaces to '-',
    everything but letters, digits, '-' and '_' dropped."""
    return re.sub(r"[^a-z0-9_\- ]", "", title.strip().lower()).replace(" ", "-")


def runbook_anchors(install_md):
    """The anchors of the ### sections under "## Runbook" of docs/install.md."""
    out, inside = set(), False
    for line in install_md.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == "Runbook"
        elif inside and line.startswith("### "):
            out.add(anchor(line[4:]))
    return out


def parse_samples(lines):
    out = []
    for line in lines:
        m = SAMPLE.match(line)
        if m:
            out.append(dict(LABEL.findall(m.group(2) or "")))
    return out


def selector(name, labels):
    return "%s{%s}" % (name, ",".join('%s="%s"' % (k, v) for k, v in sorted(labels.items())))


def values(*parts):
    """One value a minute: values((1, 5), (0, 20)) is 1 five times, then 0
    twenty times; (start, n, step) counts up by step."""
    out = []
    for p in parts:
        start, n = p[0], p[1]
        step = p[2] if len(p) > 2 else 0
        out += [str(start + step * i) for i in range(n)]
    return " ".join(out)


class Series:
    """The series of one render's alerts: scraped label sets + target labels."""

    def __init__(self, render, families):
        self.render = render
        self.families = families
        self.ns = render.namespace
        self.targets = {}
        for component in ("webhook", "sync"):
            svc = render.one("Service", component)
            dep = render.one("Deployment", component)
            if dep is None:
                continue
            if svc is None:
                raise Problem("%s: no Service for the ServiceMonitor to scrape" % (
                    dep["metadata"]["name"]))
            c = dep["spec"]["template"]["spec"]["containers"][0]
            self.targets[component] = [
                {"namespace": self.ns, "service": svc["metadata"]["name"],
                 "job": svc["metadata"]["name"], "endpoint": "metrics",
                 "container": c["name"],
                 "pod": "%s-7d9c5b6f4-%s" % (dep["metadata"]["name"], suffix),
                 "instance": "10.244.%d.%d:8081" % (1 + i, 17 + i)}
                for i, suffix in enumerate(("x2k8q", "p4m7z"))]

    def job(self, component):
        return self.targets[component][0]["job"]

    def target(self, component, replica=0):
        return dict(self.targets[component][replica])

    def up(self, component, replica=0):
        """Prometheus's up of one target: the target's labels only."""
        return selector("up", self.target(component, replica))

    def of(self, name, component, replica=0, match=None, vary=None):
        """name as scraped, with the labels of a served sample that has
        match's values, vary's labels given other values (each one a label
        the sample has), plus the target's labels."""
        if name not in self.families:
            raise Problem("%s is not served by either daemon" % name)
        samples = parse_samples(self.families[name])
        if not samples and name in UNSEEN:
            samples = [{k: (match or {}).get(k, "error") for k in UNSEEN[name]}]
        found = [s for s in samples if all(s.get(k) == v for k, v in (match or {}).items())]
        if not found:
            raise Problem("no sample of %s with %r among those served: %r" % (
                name, match, samples[:5]))
        labels = dict(found[0])
        for k, v in (vary or {}).items():
            if k not in labels:
                raise Problem("%s is served without a label %s (has %r)" % (name, k, labels))
            labels[k] = v
        labels.update(self.target(component, replica))
        return selector(name, labels)

    def buckets(self, name, component):
        """The le values of a served histogram, in order."""
        les = sorted({s["le"] for s in parse_samples(self.families.get(name + "_bucket", []))
                      if "le" in s}, key=lambda x: float("inf") if x == "+Inf" else float(x))
        if not les:
            raise Problem("%s_bucket is not served (no le)" % name)
        return les


def apiserver(name, labels):
    out = dict(APISERVER)
    out.update(labels)
    return selector(name, out)


# ---------------------------------------------------------------- the cases

def scrape_up(s, component):
    """Both replicas scraped throughout (the quiet case of absent and down)."""
    return [(s.up(component, 0), values((1, 60))), (s.up(component, 1), values((1, 60)))]


def cases(s, alerts, hook):
    """{alert: [(what, input series [(series, values)], eval minutes,
    expected alerts [(labels, $value or None)])]}: a firing case, then a
    quiet one, for every alert of the render."""
    ns = s.ns
    v = s.render.values
    r = v["metrics"]["prometheusRule"]
    out = {}
    if "webhook" in s.targets:
        wh = s.job("webhook")
        sync_up = [(s.up("sync"), values((1, 60)))] if "sync" in s.targets else []
        out["TopoWebhookAbsent"] = [
            ("no webhook target, topo-sync's scraped", sync_up, 15,
             [({"namespace": ns, "job": wh}, None)]),
            ("both replicas scraped", scrape_up(s, "webhook"), 15, [])]
        out["TopoWebhookDown"] = [
            ("a replica not answering for 10 minutes",
             [(s.up("webhook", 0), values((1, 30))),
              (s.up("webhook", 1), values((1, 5), (0, 25)))], 15,
             [(s.target("webhook", 1), None)]),
            ("a replica down for 3 minutes only",
             [(s.up("webhook", 0), values((1, 30))),
              (s.up("webhook", 1), values((1, 5), (0, 3), (1, 22)))], 15, [])]
        fail_open = lambda n: apiserver("apiserver_admission_webhook_fail_open_count",  # noqa
                                        {"name": n, "type": "admit"})
        out["TopoWebhookFailOpen"] = [
            ("one call failed open", [(fail_open(hook), values((0, 3), (1, 30)))], 10, [({}, None)]),
            ("another webhook failing open, ours not",
             [(fail_open(hook), values((0, 30))),
              (fail_open("validation.gatekeeper.sh"), values((0, 30, 1)))], 10, [])]
        rejected = lambda n, et, code: apiserver(  # noqa
            "apiserver_admission_webhook_rejection_count",
            {"name": n, "type": "admit", "operation": "CREATE", "error_type": et,
             "rejection_code": code})
        out["TopoWebhookCallsFailing"] = [
            ("calls fail, pods refused",
             [(rejected(hook, "calling_webhook_error", "0"), values((0, 3), (0, 30, 1)))], 10,
             [({}, None)]),
            ("the webhook itself refuses pods (a Kueue validation error)",
             [(rejected(hook, "no_error", "403"), values((0, 30, 1))),
              (rejected("other.example.com", "calling_webhook_error", "0"),
               values((0, 30, 1)))], 10, [])]
        req = "controller_runtime_webhook_requests_total"
        ok = s.of(req, "webhook", match={"code": "200"})
        out["TopoWebhookErrors"] = [
            ("a third of the answers 500",
             [(ok, values((0, 30, 20))),
              (s.of(req, "webhook", match={"code": "200"}, vary={"code": "500"}),
               values((0, 30, 10)))], 25, [({"namespace": ns}, None)]),
            ("1 answer in 100 is 500",
             [(ok, values((0, 30, 99))),
              (s.of(req, "webhook", match={"code": "200"}, vary={"code": "500"}),
               values((0, 30, 1)))], 25, [])]
        lat = "controller_runtime_webhook_latency_seconds"
        les = s.buckets(lat, "webhook")
        limit = float(r["webhookLatencySeconds"])

        def latency(slow):
            # 100 requests a minute, all in the first bucket above the
            # threshold (slow) or in the lowest bucket (fast).
            first = les[0] if not slow else \
                next(le for le in les if le == "+Inf" or float(le) > limit)
            rank = les.index(first)
            return [(s.of(lat + "_bucket", "webhook", match={}, vary={"le": le}),
                     values((0, 30, 100 if les.index(le) >= rank else 0))) for le in les]
        out["TopoWebhookLatencyHigh"] = [
            ("every admission slower than %s s" % limit, latency(True), 25,
             [({"namespace": ns}, None)]),
            ("every admission in the lowest bucket", latency(False), 25, [])]
        placer = "topo_webhook_placer"
        out["TopoWebhookNoPlacer"] = [
            ("no replica holds the Lease",
             [(s.of(placer, "webhook", 0), values((0, 15))),
              (s.of(placer, "webhook", 1), values((0, 15)))], 10, [({"namespace": ns}, None)]),
            ("one replica places",
             [(s.of(placer, "webhook", 0), values((1, 15))),
              (s.of(placer, "webhook", 1), values((0, 15)))], 10, [])]
        oldest = "topo_webhook_gated_oldest_seconds"
        limit_s = r["gatedMinutes"] * 60
        out["TopoWebhookPodsGatedTooLong"] = [
            ("the placer's oldest gated pod ages past %d s" % limit_s,
             [(s.of(placer, "webhook", 0), values((1, 20))),
              (s.of(oldest, "webhook", 0), values((limit_s - 300, 20, 60))),
              (s.of(placer, "webhook", 1), values((0, 20))),
              (s.of(oldest, "webhook", 1), values((0, 20)))], 15, [({"namespace": ns}, None)]),
            ("a former placer's stale age, nothing gated on the placer",
             [(s.of(placer, "webhook", 0), values((1, 20))),
              (s.of(oldest, "webhook", 0), values((0, 20))),
              (s.of(placer, "webhook", 1), values((0, 20))),
              (s.of(oldest, "webhook", 1), values((limit_s * 10, 20, 60)))], 15, [])]
        failing = "topo_webhook_placement_failing"
        out["TopoWebhookPlacementFailing"] = [
            ("a replica's placements failing",
             [(s.of(failing, "webhook", 0), values((0, 2), (3, 15)))], 12,
             [({"namespace": ns, "pod": s.target("webhook", 0)["pod"]}, None)]),
            ("placements failing for 2 minutes",
             [(s.of(failing, "webhook", 0), values((0, 2), (3, 2), (0, 12)))], 12, [])]
    if "sync" in s.targets:
        sy = s.job("sync")
        wh_up = [(s.up("webhook"), values((1, 60)))] if "webhook" in s.targets else []
        out["TopoSyncAbsent"] = [
            ("no topo-sync target", wh_up, 20, [({"namespace": ns, "job": sy}, None)]),
            ("topo-sync scraped", scrape_up(s, "sync"), 20, [])]
        out["TopoSyncDown"] = [
            ("not answering for 15 minutes",
             [(s.up("sync", 0), values((1, 5), (0, 25)))], 20, [(s.target("sync", 0), None)]),
            ("not answering for 5 minutes",
             [(s.up("sync", 0), values((1, 5), (0, 5), (1, 20)))], 20, [])]
        last = "topo_sync_source_last_success_seconds"
        src = parse_samples(s.families.get(last, []))
        source = src[0]["source"] if src and "source" in src[0] else "netbox"
        stale = v["sync"]["staleAfter"]
        n = stale // 60 + 20
        out["TopoSyncSourceStale"] = [
            ("the last good read at time 0",
             [(s.of(last, "sync", match={"source": source}), values((0, n)))], n - 1,
             [({"namespace": ns, "source": source}, None)]),
            ("read every minute",
             [(s.of(last, "sync", match={"source": source}), values((0, n, 60)))], n - 1, [])]
        fails = "topo_sync_source_failures_total"
        out["TopoSyncSourceFailing"] = [
            ("a read fails every minute",
             [(s.of(fails, "sync", match={"source": source}), values((0, 75, 1)))], 70,
             [({"namespace": ns, "source": source}, None)]),
            ("one failure, then reads succeed",
             [(s.of(fails, "sync", match={"source": source}), values((0, 2), (1, 73)))], 70, [])]
        nodes = "topo_sync_nodes"
        out["TopoSyncLabelsIncomplete"] = [
            ("3 nodes incomplete",
             [(s.of(nodes, "sync", match={"state": "incomplete"}), values((3, 40))),
              (s.of(nodes, "sync", match={"state": "planned"}), values((4, 40)))], 35,
             [({"namespace": ns}, "3")]),
            ("every node planned",
             [(s.of(nodes, "sync", match={"state": "incomplete"}), values((0, 40))),
              (s.of(nodes, "sync", match={"state": "planned"}), values((4, 40)))], 35, [])]
        writes = "topo_sync_node_writes_total"
        any_write = parse_samples(s.families.get(writes, []))
        served = any_write[0].get("outcome") if any_write else "patched"
        out["TopoSyncWritesFailing"] = [
            ("a PATCH fails every minute",
             [(s.of(writes, "sync", match={"outcome": served}, vary={"outcome": "failed"}),
               values((0, 40, 1)))], 35, [({"namespace": ns}, None)]),
            ("PATCHes succeed",
             [(s.of(writes, "sync", match={"outcome": served}, vary={"outcome": "failed"}),
               values((0, 40))),
              (s.of(writes, "sync", match={"outcome": served}, vary={"outcome": "patched"}),
               values((0, 40, 5)))], 35, [])]
        rounds = "topo_sync_rounds_total"
        pod = s.target("sync", 0)["pod"]
        at = max(30, 3 * v["sync"]["resyncInterval"] // 60) + 20  # the window, then for: 15m
        n = at + 10

        def counted(outcome, replica, *parts):
            return (s.of(rounds, "sync", replica, match={"outcome": outcome}), values(*parts))
        out["TopoSyncRoundsFailing"] = [
            ("every round of the leader fails, the follower's plans complete",
             [counted("failed", 0, (0, n, 1)), counted("ok", 0, (0, n)),
              counted("ok", 1, (0, n, 1))], at, [({"namespace": ns, "pod": pod}, None)]),
            ("no round runs (a source never answered)",
             [counted("ok", 0, (0, n)), counted("failed", 0, (0, n))], at,
             [({"namespace": ns, "pod": pod}, None)]),
            ("some rounds fail, others complete",
             [counted("failed", 0, (0, n, 1)), counted("ok", 0, (0, n, 1))], at, [])]
    if "TopoSyncExportFailing" in alerts:
        cm = "topo_sync_configmap_exports_total"
        out["TopoSyncExportFailing"] = [
            ("the ConfigMap is someone else's",
             [(s.of(cm, "sync", match={}, vary={"outcome": "not_owned"}), values((0, 40, 1)))],
             30, [({"namespace": ns, "outcome": "not_owned"}, None)]),
            ("exported unchanged every round",
             [(s.of(cm, "sync", match={}, vary={"outcome": "unchanged"}), values((0, 40, 1)))],
             30, [])]
    if "sync" in s.targets:
        leader = "topo_sync_leader"
        out["TopoSyncNoLeader"] = [
            ("no replica leads", [(s.of(leader, "sync", 0), values((0, 20)))], 15,
             [({"namespace": ns}, None)]),
            ("a replica leads", [(s.of(leader, "sync", 0), values((1, 20)))], 15, [])]
    return out


def expand(text, labels, value):
    """An annotation as Prometheus expands it, for the {{ $labels.x }} and
    {{ $value }} the rule's templates use."""
    text = re.sub(r"\{\{\s*\$labels\.(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), text)
    if value is not None:
        text = re.sub(r"\{\{\s*\$value\s*\}\}", value, text)
    if "{{" in text:
        raise Problem("an annotation template the test does not expand: %r" % text)
    return text


def build(s, spec, hook):
    """The promtool unit tests of the rule's alerts; problems."""
    rules = {r["alert"]: r for g in spec["groups"] for r in g["rules"]}
    problems, tests = [], []
    try:
        by_alert = cases(s, set(rules), hook)
    except Problem as e:
        return None, [str(e)]
    v = s.render.values
    unwanted = {"TopoWebhookCallsFailing" if v["webhook"]["failurePolicy"] == "Ignore"
                else "TopoWebhookFailOpen"}
    if not v["sync"]["exportConfigMap"]:
        unwanted.add("TopoSyncExportFailing")
    problems += ["%s: not in the PrometheusRule" % a for a in sorted(by_alert)
                 if a not in rules and a not in unwanted]
    problems += ["%s: in the PrometheusRule with failurePolicy %s, exportConfigMap %r" % (
        a, v["webhook"]["failurePolicy"], v["sync"]["exportConfigMap"])
        for a in sorted(unwanted & set(rules))]
    for alert, rule in rules.items():
        if alert not in by_alert:
            problems.append("%s: no test case" % alert)
            continue
        fired = [c for c in by_alert[alert] if c[3]]
        if not fired or len(fired) == len(by_alert[alert]):
            problems.append("%s: wants a firing and a quiet case" % alert)
        for what, series, at, expected in by_alert[alert]:
            exp = []
            for labels, value in expected:
                lab = dict(labels)
                lab.update(rule.get("labels", {}))
                exp.append({"exp_labels": lab,
                            "exp_annotations": {k: expand(a, lab, value) for k, a in
                                                rule.get("annotations", {}).items()}})
            tests.append({"name": "%s: %s" % (alert, what), "interval": "1m",
                          "input_series": [{"series": x, "values": vals} for x, vals in series],
                          "alert_rule_test": [{"eval_time": "%dm" % at, "alertname": alert,
                                               "exp_alerts": exp}]})
    return tests, problems


def check(render, families, workdir, install_md, base_url):
    """promtool check rules and promtool test rules on the render's
    PrometheusRule; [problems]."""
    promtool = shutil.which("promtool")
    if promtool is None:
        return [INSTALL_HINT]
    rule = render.all("PrometheusRule")
    hooks = [w["name"] for c in render.all("MutatingWebhookConfiguration")
             for w in c["webhooks"]]
    if len(rule) != 1 or len(hooks) != 1:
        return ["want one PrometheusRule and one webhook, got %d and %r" % (len(rule), hooks)]
    spec = rule[0]["spec"]
    problems = []
    anchors = runbook_anchors(install_md)
    for g in spec["groups"]:
        for r in g["rules"]:
            url = r.get("annotations", {}).get("runbook_url", "")
            want = "%s#%s" % (base_url, r["alert"].lower())
            if url != want:
                problems.append("%s: runbook_url %r, want %r" % (r["alert"], url, want))
            if r["alert"].lower() not in anchors:
                problems.append("%s: docs/install.md has no \"### %s\" under \"## Runbook\"" % (
                    r["alert"], r["alert"]))
            for name, sel in re.findall(r"(apiserver_admission_\w+)\{([^}]*)\}", r["expr"]):
                if 'name="%s"' % hooks[0] not in sel:
                    problems.append("%s: %s does not select the webhook's name %s: {%s}" % (
                        r["alert"], name, hooks[0], sel))
    os.makedirs(workdir, exist_ok=True)
    rules_file = os.path.join(workdir, "rules.yaml")
    with open(rules_file, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    p = subprocess.run([promtool, "check", "rules", rules_file], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        return problems + ["promtool check rules: %s" % (p.stdout + p.stderr)]
    try:
        series = Series(render, families)
    except Problem as e:
        return problems + [str(e)]
    tests, more = build(series, spec, hooks[0])
    problems += more
    if tests is None:
        return problems
    tests_file = os.path.join(workdir, "tests.yaml")
    with open(tests_file, "w") as f:
        yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
                        "tests": tests}, f, sort_keys=False)
    p = subprocess.run([promtool, "test", "rules", "tests.yaml"], capture_output=True,
                       text=True, timeout=120, cwd=workdir)
    if p.returncode != 0:
        problems.append("promtool test rules (%d cases, %s):\n%s" % (
            len(tests), tests_file, (p.stdout + p.stderr)[-6000:]))
    return problems
