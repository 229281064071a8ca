#!/usr/bin/env python3
"""A fake kube-apiserver for topo's end-to-end tests (Python 3 standard library only).

It speaks the real wire format for the resources topo uses:

  core/v1 nodes                     /api/v1/nodes[/NAME[/status]]
  core/v1 pods                      /api/v1/pods (all namespaces: list, watch)
                                    /api/v1/namespaces/NS/pods[/NAME[/status]]
                                    /api/v1/namespaces/NS/pods/NAME/binding (POST a
                                    Binding: the scheduler's bind)
                                    (DELETE is graceful as kube-apiserver's: a bound
                                    pod not Succeeded/Failed gets deletionTimestamp and
                                    stays Terminating while its node is NotReady or has
                                    no Ready condition; the fake's kubelets of Ready
                                    nodes confirm at once; gracePeriodSeconds 0 forces)
  batch/v1 jobs                     /apis/batch/v1/jobs, /apis/batch/v1/namespaces/NS/jobs[/NAME[/status]]
  coordination.k8s.io/v1 leases     /apis/coordination.k8s.io/v1/leases,
                                    /apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME]
  core/v1 namespaces                /api/v1/namespaces[/NAME] (list, watch, labelSelector)
  kueue.x-k8s.io/v1beta2            topologies, resourceflavors (cluster-scoped; served only
                                    after POST /_fake/config {"kueue": true}: the CRDs;
                                    "kueue_versions": ["v1beta1"] serves them at those
                                    versions instead, as Kueue before 0.15 does)
  core/v1 configmaps                /api/v1/configmaps (all namespaces: list, watch)
                                    /api/v1/namespaces/NS/configmaps[/NAME]
  admissionregistration.k8s.io/v1   /apis/admissionregistration.k8s.io/v1/
    mutatingwebhookconfigurations   mutatingwebhookconfigurations[/NAME] (cluster-scoped;
                                    stored as given: no call is made to the webhooks)
  core/v1 resourcequotas            /api/v1/resourcequotas (all namespaces: list, watch)
                                    /api/v1/namespaces/NS/resourcequotas[/NAME[/status]]
                                    (the quota controller is the test: it writes status)
  core/v1 events                    /api/v1/events (all namespaces: list, watch)
                                    /api/v1/namespaces/NS/events[/NAME]
                                    (created with kube-apiserver's checks of core/v1
                                    Events: the namespace of an event about a
                                    cluster-scoped object is "default"; with eventTime,
                                    reportingComponent, reportingInstance, action and
                                    reason are required; fieldSelector on involvedObject.*,
                                    reason, type, reportingComponent)

Semantics follow kube-apiserver backed by etcd3:
  * one global, monotonically increasing resourceVersion (a decimal string);
  * GET, LIST (limit/continue; the continue token is opaque and the whole paged
    list is one consistent snapshot at the first page's resourceVersion;
    labelSelector; fieldSelector on the fields the real server indexes),
    WATCH (?watch=1&resourceVersion=X&allowWatchBookmarks=true&timeoutSeconds=N:
    chunked stream of {"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": ...}
    lines from a bounded event history; a resourceVersion older than the history
    is 410 Gone, either as an HTTP status or as an in-stream ERROR event);
  * POST (201; 409 AlreadyExists), PUT (409 Conflict on a stale
    metadata.resourceVersion), DELETE (optional preconditions), PATCH with
    application/merge-patch+json (RFC 7386), application/strategic-merge-patch+json
    (a merge patch whose lists with a patch merge key in the built-in types,
    such as status.conditions by type or spec.containers by name, are merged
    item by item, "$patch": "delete" removing one; other lists replaced) and
    application/json-patch+json (RFC 6902: add, remove, replace, move, copy,
    test; a failed op is 422); a patched or updated object whose
    metadata.resourceVersion differs from the stored one, or whose metadata.uid
    is not the stored one's (a uid precondition), is 409 Conflict; on /status
    only the status changes;
  * errors are Status objects (kind Status, status Failure, message, reason,
    details, code) with the apiserver's messages;
  * the Accept header is negotiated as kube-apiserver does for JSON
    (handlers/negotiation, handlers/response.go): plain application/json (or
    */*, application/*, no header) gives full objects;
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" a list
    as a PartialObjectMetadataList (apiVersion meta.k8s.io/v1, each item
    {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
    "metadata": ...}: everything but the metadata dropped), and
    "...;as=PartialObjectMetadata;..." a get, a write's answer or each watch
    event's object (bookmarks too) as a PartialObjectMetadata (v=v1beta1 the
    same in meta.k8s.io/v1beta1). The first acceptable clause by q wins;
    as=PartialObjectMetadata on a list, or ...List on a single object, is 406
    NotAcceptable with the apiserver's message (a watch asked for ...List
    sends full objects, as the apiserver's watch encoder falls back to them);
    no acceptable clause is 406 "only the following media types are
    accepted: ...". YAML, protobuf, CBOR and Table are not served by this
    fake (skipped as if not acceptable). POST /_fake/config
    {"metadata_406": true} makes it a server that cannot transform (an
    aggregated API server, kube-apiserver before 1.15): every as= clause is
    skipped, so a metadata-only Accept alone is 406.

Fault injection and test control live under /_fake/ on the same server
(JSON in, JSON out, no authentication):

  POST /_fake/fault     {"kind": "status", "code": 429, "count": N, "retry_after": S,
                         "method": "GET", "path": "/api/v1/nodes"}      next N matching requests
                        {"kind": "drop", "count": N}    headers + half the body, then close
                        {"kind": "reset", "count": N}   close without answering
                        {"kind": "slow", "count": N, "chunk": 1024, "delay_ms": 50}
                        (every fault: optional "method", "path" prefix, "watch": true/false,
                         "auth": identity prefix such as "cert:" or "bearer:", "continued":
                         true/false (only requests with/without a continue token), "list": true
                         (only LISTs: a GET of a collection, not a watch; with "path" the
                         collection's path exactly), "seconds": S (active for S seconds
                         from now, however many requests match; with "count" too, ends at
                         whichever comes first). A LIST answered by a status fault counts
                         in stats' "verbs" as a LIST of its resource, a 410 in "gone")
                        {"kind": "status", "code": 410, "list": true, "seconds": 3,
                         "path": "/api/v1/nodes"}   every node LIST 410 Expired for 3 s
                        {"kind": "delay", "count": N, "delay_ms": 2000}  wait, then answer
                        {"kind": "touch", "count": N, "method": "PATCH"}  another writer
                           modifies the named object just before the request is handled
                           (so a resourceVersion precondition in it is stale): adds an
                           annotation, or with "patch": [RFC 6902 ops] applies those (a
                           controller removing a gate, say)
  POST /_fake/faults/clear
  POST /_fake/compact   {"expire_watches": true}  forget all history (old RVs become 410);
                        optionally end open watches with an in-stream ERROR 410
  POST /_fake/watches/close   {"mode": "close" | "expire"}  end every open watch
  POST /_fake/config    {"gone_mode": "http" | "event", "bookmark_interval": S, "kueue": B,
                         "kueue_versions": [V...], "history": N, "token_grace": S,
                         "watch_timeout": S, "metadata_406": B,
                         "forbid": [{"resource": R, "verbs": [V...], "scope": S}]}
                        forbid: RBAC that does not grant them (replacing the previous
                        list; [] grants all again): requests for resource R with one of
                        the verbs (get, list, watch, create, update, patch, delete;
                        absent: all) at scope S ("cluster": without a namespace, or a
                        namespace's name; absent: any) are 403 Forbidden with
                        kube-apiserver's message (User "<identity>" cannot list resource
                        "configmaps" in API group "" at the cluster scope)
  POST /_fake/load      {"resource": "nodes", "count": N, "gpus": 8, ...}  generated objects
                        {"resource": "pods", "count": N}   pods bound to existing nodes
                        {"file": PATH}   a List (NodeList/PodList/JobList/List) or one object
  POST /_fake/bulk      {"nodes": N, "pods": M, "jobs": J, "kueue_fraction": 0.25,
                         "not_ready": 0.0, "seed": 1, "gpus": 8, "node_annotations": {K: V}}
                        realistic GPU nodes, pods bound to them (DaemonSet pods and GPU
                        workloads that fit, some finished, some Kueue TAS-annotated) and
                        their Jobs, from JSON templates: 10,000 nodes + 100,000 pods in a
                        few seconds. No watch events: the history is compacted to the new
                        RV. Returns counts, JSON bytes per kind, rv, seconds.
                        node_annotations (given with the first bulk load: the template
                        is made once) are added to every node; @@name@@, @@dc@@,
                        @@spine@@, @@leaf@@ and @@rack@@ in a value become the node's
                        own (what its topology.topo.io/ labels say).
                        "topology_labels": false (also with the first load) leaves
                        out the topology.topo.io/ labels (and topo-sync's managedFields
                        entry): nodes topo-sync has never labelled.
  POST /_fake/churn     {"resource": "nodes", "count": M}  M label changes (MODIFIED events)
                        {"resource": "pods", "count": M}   M pod creations/deletions
                        {"count": M, "mix": {"pod_update": .5, "pod_delete": .2,
                         "pod_create": .2, "node_label": .1, "job_update": 0,
                         "pod_pending": 0},
                         "rate": R, "async": false, "seed": S}
                           M events of that mix (any of "mix", "rate", "async" selects this
                           form; mix defaults to the one shown; pod_pending creates unbound
                           Pending pods that a later pod_update binds and starts), as fast
                           as possible or R/s;
                           answers once the last is in the history (watchers get them as
                           they come) with first_rv, last_rv, per-op and per-resource counts,
                           last_rv_by_resource, the deleted pods and seconds; "async": true
                           answers at once and /_fake/churn/wait answers at the end
  POST /_fake/churn/wait {"timeout": S}  the last churn's result once it has finished
  POST /_fake/churn/stop  ends a running churn early; its result
  GET  /_fake/index?resource=R[&rv=N]  every object of R, now or as it was at RV N (inside
                        the history): namespace, name, uid, rv (pods: phase, nodeName)
  GET  /_fake/events?resource=R&after=A[&upto=B]  how many events of R the history holds
                        with A < rv <= B, by type
  GET  /_fake/stats     current RV, compacted RV, object counts, open watches, request counts
                        by method and status, "verbs": per resource LIST/WATCH/GET/PATCH/...
                        requests, "gone": per resource 410s sent, "watch_starts": the last
                        watches opened (resource, resourceVersion asked, identity),
                        "churn": progress (watch_starts also give the Accept header),
                        "in_flight_max": the most API requests (not watches) answered at
                        once
  GET  /_fake/requests  the last requests (method, path, status, auth, content type,
                        accept)
  POST /_fake/requests/clear   (also the counters in stats)
  POST /_fake/shutdown

Authentication: with --token-file, a request needs "Authorization: Bearer T" where
T is the file's current content (re-read on every request, so a test rotates the
token by rewriting the file; the previous token stays valid for token_grace
seconds, default 0) or, with --client-ca, a TLS client certificate signed by that
CA. Otherwise 401 Unauthorized.

usage: fake_apiserver.py [--port N] [--tls-cert F --tls-key F [--client-ca F]]
                         [--token-file F] [--history N] [--bookmark-interval S]
                         [--gone-mode http|event] [--load FILE]... [--nodes N] [--pods N]
                         [--bulk-nodes N] [--bulk-pods N] [--bulk-jobs N]
                         [--port-file F] [--verbose]
It binds 127.0.0.1 only and prints the port on stdout once it listens.
"""

import argparse
import base64
import bisect
import copy
import datetime
import json
import os
import random
import re
import signal
import socket
import ssl
import sys
import threading
import time
import uuid
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


# --------------------------------------------------------------------------- resources

class Resource:
    def __init__(self, name, group, version, kind, namespaced, fields):
        self.name = name
        self.group = group
        self.version = version
        self.kind = kind
        self.namespaced = namespaced
        self.list_kind = kind + "List"
        self.api_version = f"{group}/{version}" if group else version
        self.fields = fields  # field selectors the real server supports
        # Bytes prepended to a stored item to make it a full object.
        self.head = (b'{"kind":' + json.dumps(kind).encode() + b',"apiVersion":' +
                     json.dumps(self.api_version).encode() + b',')
        self.has_status = name not in ("leases", "events", "topologies", "resourceflavors",
                                       "configmaps", "mutatingwebhookconfigurations")

    def qualified(self):
        return f"{self.name}.{self.group}" if self.group else self.name

    def at_version(self, version):
        """The same resource (and store) served at another version of its group."""
        if version == self.version:
            return self
        other = copy.copy(self)
        other.version = version
        other.api_version = f"{self.group}/{version}" if self.group else version
        other.head = (b'{"kind":' + json.dumps(self.kind).encode() + b',"apiVersion":' +
                      json.dumps(other.api_version).encode() + b',')
        return other


RESOURCES = {
    "nodes": Resource("nodes", "", "v1", "Node", False,
                      {"metadata.name", "spec.unschedulable"}),
    "pods": Resource("pods", "", "v1", "Pod", True,
                     {"metadata.name", "metadata.namespace", "spec.nodeName",
                      "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                      "status.phase", "status.podIP", "status.nominatedNodeName"}),
    "jobs": Resource("jobs", "batch", "v1", "Job", True,
                     {"metadata.name", "metadata.namespace", "status.successful"}),
    "leases": Resource("leases", "coordination.k8s.io", "v1", "Lease", True,
                       {"metadata.name", "metadata.namespace"}),
    "namespaces": Resource("namespaces", "", "v1", "Namespace", False,
                           {"metadata.name", "status.phase"}),
    "resourcequotas": Resource("resourcequotas", "", "v1", "ResourceQuota", True,
                               {"metadata.name", "metadata.namespace"}),
    "events": Resource("events", "", "v1", "Event", True,
                       {"metadata.name", "metadata.namespace", "involvedObject.apiVersion",
                        "involvedObject.kind", "involvedObject.name",
                        "involvedObject.namespace", "involvedObject.uid",
                        "involvedObject.resourceVersion", "involvedObject.fieldPath",
                        "reason", "reportingComponent", "type"}),
    "configmaps": Resource("configmaps", "", "v1", "ConfigMap", True,
                           {"metadata.name", "metadata.namespace"}),
    "mutatingwebhookconfigurations": Resource(
        "mutatingwebhookconfigurations", "admissionregistration.k8s.io", "v1",
        "MutatingWebhookConfiguration", False, {"metadata.name"}),
    # Kueue's CRDs, served only once POST /_fake/config {"kueue": true} installs them.
    "topologies": Resource("topologies", "kueue.x-k8s.io", "v1beta2", "Topology", False,
                           {"metadata.name"}),
    "resourceflavors": Resource("resourceflavors", "kueue.x-k8s.io", "v1beta2",
                                "ResourceFlavor", False, {"metadata.name"}),
}
KIND_TO_RESOURCE = {r.kind: r for r in RESOURCES.values()}
GROUP_VERSIONS = {("", "v1"): "/api/v1", ("batch", "v1"): "/apis/batch/v1",
                  ("coordination.k8s.io", "v1"): "/apis/coordination.k8s.io/v1",
                  ("admissionregistration.k8s.io", "v1"):
                      "/apis/admissionregistration.k8s.io/v1"}

NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def dumps(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- media types

# What kube-apiserver lists in its 406 for the built-in resources.
MEDIA_TYPES_ACCEPTED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
META_KINDS = ("PartialObjectMetadata", "PartialObjectMetadataList")


def parse_accept(header):
    """The clauses of an Accept header as (media type, params), most preferred
    first (by q, then by order; q=0 dropped)."""
    clauses = []
    for i, part in enumerate(header.split(",")):
        fields = [f.strip() for f in part.split(";")]
        mt = fields[0].lower()
        if not mt:
            continue
        params = {}
        for f in fields[1:]:
            if "=" in f:
                k, v = f.split("=", 1)
                params[k.strip().lower()] = v.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q > 0:
            clauses.append((-q, i, mt, params))
    clauses.sort(key=lambda c: (c[0], c[1]))
    return [(mt, params) for _, _, mt, params in clauses]


def negotiate(accept, can_transform):
    """None for full objects, or (kind, version) of a metadata-only answer;
    ApiError 406 when no clause is acceptable."""
    if accept is None or not accept.strip():
        return None
    for mt, params in parse_accept(accept):
        if mt not in ("application/json", "application/*", "*/*"):
            continue  # YAML, protobuf, CBOR: real, but not served here
        target = params.get("as")
        if target is None:
            return None
        if (can_transform and target in META_KINDS and params.get("g") == "meta.k8s.io"
                and params.get("v") in ("v1", "v1beta1")):
            return (target, params["v"])
    raise ApiError(406, "NotAcceptable",
                   f"only the following media types are accepted: {MEDIA_TYPES_ACCEPTED}")


def go_type(res, lst):
    """The Go type kube-apiserver names in its transform errors."""
    if res.group == "":
        return f"*core.{res.list_kind if lst else res.kind}"
    if "." in res.group and not res.group.endswith(".k8s.io"):
        return "*unstructured.UnstructuredList" if lst else "*unstructured.Unstructured"
    return f"*{res.group.split('.')[0]}.{res.list_kind if lst else res.kind}"


def partial_object(entry, version):
    """entry as a PartialObjectMetadata: its metadata only (cached for v1)."""
    if version == "v1" and entry._partial is not None:
        return entry._partial
    md = json.loads(entry.raw).get("metadata", {})
    out = (b'{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/' + version.encode() +
           b'","metadata":' + dumps(md) + b"}")
    if version == "v1":
        entry._partial = out
    return out


# --------------------------------------------------------------------------- errors

class ApiError(Exception):
    """An apiserver error, answered as a Status object."""

    def __init__(self, code, reason, message, details=None, headers=()):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = list(headers)

    def status(self):
        return status_object(self.code, self.reason, self.message, self.details)


def status_object(code, reason, message, details=None):
    st = OrderedDict([("kind", "Status"), ("apiVersion", "v1"), ("metadata", {}),
                      ("status", "Failure"), ("message", message), ("reason", reason)])
    if details is not None:
        st["details"] = details
    st["code"] = code
    return st


def not_found(res, name):
    return ApiError(404, "NotFound", f'{res.qualified()} "{name}" not found',
                    details_for(res, name))


def details_for(res, name):
    d = {"name": name, "kind": res.name}
    if res.group:
        d["group"] = res.group
    return d


def conflict(res, name):
    return ApiError(409, "Conflict",
                    f'Operation cannot be fulfilled on {res.qualified()} "{name}": the object '
                    "has been modified; please apply your changes to the latest version and "
                    "try again", details_for(res, name))


def already_exists(res, name):
    return ApiError(409, "AlreadyExists", f'{res.qualified()} "{name}" already exists',
                    details_for(res, name))


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def invalid(res, name, message):
    return ApiError(422, "Invalid", f'{res.kind} "{name}" is invalid: {message}',
                    details_for(res, name))


def gone(message):
    return ApiError(410, "Expired", message)


def generic_status(code, message=None, retry_after=None):
    """The Status kube-apiserver sends for code (the fault injector's answers)."""
    table = {
        400: ("BadRequest", "the server rejected our request for an unknown reason"),
        401: ("Unauthorized", "Unauthorized"),
        403: ("Forbidden", "forbidden: injected fault"),
        404: ("NotFound", "the server could not find the requested resource"),
        409: ("Conflict", "the object has been modified; please apply your changes to the "
                          "latest version and try again"),
        410: ("Expired", "too old resource version"),
        429: ("TooManyRequests", "Too many requests, please try again later."),
        500: ("InternalError", "Internal error occurred: injected fault"),
        503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
        504: ("Timeout", "the server was unable to return a response in the time allotted, "
                         "but may still be processing the request"),
    }
    reason, msg = table.get(code, ("Unknown", f"the server responded with the status code "
                                              f"{code} but did not return more information"))
    details = None
    headers = []
    if retry_after is not None:
        details = {"causes": [{"message": msg}], "retryAfterSeconds": int(retry_after)}
        headers.append(("Retry-After", str(int(retry_after))))
    return ApiError(code, reason, message or msg, details, headers)


def check_event(res, ev, ns):
    """kube-apiserver's checks of a core/v1 Event on create (legacyValidateEvent
    in pkg/apis/core/validation/events.go, as the v1 endpoint applies them)."""
    name = ev["metadata"]["name"]
    involved = ev.get("involvedObject") if isinstance(ev.get("involvedObject"), dict) else {}
    errs = []
    if not ev.get("eventTime"):
        if not involved.get("namespace"):
            if ns not in ("", "default"):
                errs.append('involvedObject.namespace: Invalid value: "": does not match '
                            "event.namespace")
        elif involved["namespace"] != ns:
            errs.append(f'involvedObject.namespace: Invalid value: "{involved["namespace"]}": '
                        "does not match event.namespace")
    else:
        if not involved.get("namespace") and ns not in ("default", "kube-system"):
            errs.append('involvedObject.namespace: Invalid value: "": does not match '
                        "event.namespace")
        for field in ("reportingComponent", "reportingInstance", "action", "reason"):
            if not ev.get(field):
                errs.append(f"{field}: Required value")
        for field, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128),
                             ("message", 1024)):
            if len(ev.get(field) or "") > limit:
                errs.append(f'{field}: Invalid value: "": can have at most {limit} characters')
    if errs:
        raise invalid(res, name, ", ".join(errs) if len(errs) == 1 else
                      "[" + ", ".join(errs) + "]")


# --------------------------------------------------------------------------- selectors

SEL_REQ_RE = re.compile(
    r"^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9][-A-Za-z0-9_./]*)\s*"
    r"(?:(?P<op>==|=|!=|\s+in\s+|\s+notin\s+)\s*(?P<val>.*?))?\s*$")


def check_webhooks(res, obj):
    """The checks of admissionregistration/validation that a configuration
    written by hand can miss: each webhook has a fully qualified name (three
    segments at least), a unique one, exactly one of clientConfig.url and
    clientConfig.service (with namespace and name), sideEffects and
    admissionReviewVersions."""
    name = obj["metadata"]["name"]
    seen = set()
    for i, w in enumerate(obj.get("webhooks") or []):
        f = f"webhooks[{i}]"
        wname = w.get("name", "")
        if wname.count(".") < 2:
            raise invalid(res, name, f'{f}.name: Invalid value: "{wname}": should be a domain '
                                     "with at least three segments separated by dots")
        if wname in seen:
            raise invalid(res, name, f'{f}.name: Duplicate value: "{wname}"')
        seen.add(wname)
        cc = w.get("clientConfig") or {}
        if ("url" in cc) == ("service" in cc):
            raise invalid(res, name, f"{f}.clientConfig: Required value: exactly one of url or "
                                     "service is required")
        svc = cc.get("service")
        if svc is not None and not (svc.get("namespace") and svc.get("name")):
            raise invalid(res, name, f"{f}.clientConfig.service: Required value: namespace and "
                                     "name are required")
        if w.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise invalid(res, name, f"{f}.sideEffects: Unsupported value")
        if not w.get("admissionReviewVersions"):
            raise invalid(res, name, f"{f}.admissionReviewVersions: Required value")


def split_top(text):
    """Splits a selector at commas outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def parse_label_selector(text):
    reqs = []
    for part in split_top(text or ""):
        m = SEL_REQ_RE.match(part)
        if not m:
            raise bad_request(f"unable to parse requirement: {part!r}")
        key, op, val, neg = m.group("key"), m.group("op"), m.group("val"), m.group("neg")
        if op is None:
            reqs.append(("notexists" if neg else "exists", key, None))
            continue
        if neg:
            raise bad_request(f"unable to parse requirement: {part!r}")
        op = op.strip()
        if op in ("in", "notin"):
            v = val.strip()
            if not (v.startswith("(") and v.endswith(")")):
                raise bad_request(f"unable to parse requirement: {part!r}")
            values = {x.strip() for x in v[1:-1].split(",") if x.strip()}
            reqs.append((op, key, values))
        else:
            reqs.append(("ne" if op == "!=" else "eq", key, val.strip()))
    return reqs


def label_match(reqs, labels):
    for op, key, val in reqs:
        present = key in labels
        if op == "exists" and not present:
            return False
        if op == "notexists" and present:
            return False
        if op == "eq" and (not present or labels[key] != val):
            return False
        if op == "ne" and present and labels[key] == val:
            return False
        if op == "in" and (not present or labels[key] not in val):
            return False
        if op == "notin" and present and labels[key] in val:
            return False
    return True


def parse_field_selector(res, text):
    reqs = []
    for part in split_top(text or ""):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, val = m.groups()
        if path not in res.fields:
            raise bad_request(f'field label not supported: {path}')
        reqs.append((path.split("."), op == "!=", val))
    return reqs


def field_value(obj, path):
    cur = obj
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return ""
        cur = cur[p]
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


def field_match(reqs, obj):
    for path, negate, val in reqs:
        if (field_value(obj, path) == val) == negate:
            return False
    return True


class Filter:
    def __init__(self, res, namespace, params):
        self.namespace = namespace
        self.labels = parse_label_selector(params.get("labelSelector", ""))
        self.fields = parse_field_selector(res, params.get("fieldSelector", ""))
        self.trivial = namespace is None and not self.labels and not self.fields

    def match(self, entry):
        if self.trivial:
            return True
        if self.namespace is not None and entry.namespace != self.namespace:
            return False
        if self.labels and not label_match(self.labels,
                                           entry.data["metadata"].get("labels") or {}):
            return False
        return not self.fields or field_match(self.fields, entry.data)


# --------------------------------------------------------------------------- patches

def merge_patch(target, patch):
    """RFC 7386 JSON merge patch; returns a new value, target is not modified."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Lists that a strategic merge patch merges (Kubernetes' patchMergeKey /
# patchStrategy "merge" on the built-in types), by path of field names from
# the object's root; None: a list of scalars merged as a set. The others are
# replaced, as the API server does for lists without a strategy.
SMP_MERGE_KEYS = {
    ("metadata", "finalizers"): None,
    ("metadata", "ownerReferences"): "uid",
    ("spec", "containers"): "name",
    ("spec", "initContainers"): "name",
    ("spec", "ephemeralContainers"): "name",
    ("spec", "volumes"): "name",
    ("spec", "schedulingGates"): "name",
    ("spec", "template", "spec", "containers"): "name",
    ("spec", "template", "spec", "initContainers"): "name",
    ("spec", "template", "spec", "volumes"): "name",
    ("status", "conditions"): "type",
    ("status", "addresses"): "type",
}


def strategic_merge_patch(target, patch, path=()):
    """A strategic merge patch of the built-in types (see SMP_MERGE_KEYS);
    returns a new value, target is not modified."""
    if not isinstance(patch, dict):
        if isinstance(patch, list) and path in SMP_MERGE_KEYS and isinstance(target, list):
            return merge_list(target, patch, SMP_MERGE_KEYS[path], path)
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = strategic_merge_patch(out.get(k), v, path + (k,))
    return out


def merge_list(target, patch, key, path):
    out = list(target)
    if key is None:
        for v in patch:
            if v not in out:
                out.append(v)
        return out
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"{'.'.join(path)}: an item without its merge key {key!r}")
        at = next((i for i, cur in enumerate(out)
                   if isinstance(cur, dict) and cur.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                out.pop(at)
        elif at is None:
            out.append(strategic_merge_patch({}, item, path))
        else:
            out[at] = strategic_merge_patch(out[at], item, path)
    return out


class PatchError(Exception):
    pass


def json_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return a == b


def pointer_tokens(ptr):
    if ptr == "":
        return []
    if not isinstance(ptr, str) or not ptr.startswith("/"):
        raise PatchError(f"invalid JSON pointer {ptr!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in ptr[1:].split("/")]


def list_index(container, tok, allow_end):
    if tok == "-" and allow_end:
        return len(container)
    if not re.fullmatch(r"0|[1-9][0-9]*", tok):
        raise PatchError(f"invalid array index {tok!r}")
    i = int(tok)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(f"array index {i} out of bounds")
    return i


def pointer_get(doc, toks, ptr):
    cur = doc
    for t in toks:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"missing value at {ptr}")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[list_index(cur, t, False)]
        else:
            raise PatchError(f"missing value at {ptr}")
    return cur


def json_patch(doc, ops):
    """RFC 6902; doc is a fresh copy that may be modified. Returns the new doc."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be an array of operations")

    def parent_of(d, ptr):
        toks = pointer_tokens(ptr)
        if not toks:
            return None, None
        return pointer_get(d, toks[:-1], ptr), toks[-1]

    def put(d, ptr, value, replace):
        par, last = parent_of(d, ptr)
        if par is None:
            return value
        if isinstance(par, dict):
            if replace and last not in par:
                raise PatchError(f"replace operation does not apply: doc is missing key: {ptr}")
            par[last] = value
        elif isinstance(par, list):
            i = list_index(par, last, not replace)
            if replace:
                par[i] = value
            else:
                par.insert(i, value)
        else:
            raise PatchError(f"doc is missing path: {ptr}")
        return d

    def remove(d, ptr):
        par, last = parent_of(d, ptr)
        if par is None:
            raise PatchError("cannot remove the whole document")
        if isinstance(par, dict):
            if last not in par:
                raise PatchError(f"remove operation does not apply: doc is missing key: {ptr}")
            return par.pop(last)
        if isinstance(par, list):
            return par.pop(list_index(par, last, False))
        raise PatchError(f"doc is missing path: {ptr}")

    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or "path" not in op:
            raise PatchError("an operation needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"{kind} operation needs a 'value'")
        if kind == "add":
            doc = put(doc, path, json.loads(json.dumps(op["value"])), False)
        elif kind == "replace":
            pointer_get(doc, pointer_tokens(path), path)
            doc = put(doc, path, json.loads(json.dumps(op["value"])), True)
        elif kind == "remove":
            remove(doc, path)
        elif kind == "test":
            got = pointer_get(doc, pointer_tokens(path), path)
            if not json_equal(got, op["value"]):
                raise PatchError(f"testing value {path} failed: test failed")
        elif kind in ("move", "copy"):
            src = op.get("from")
            val = pointer_get(doc, pointer_tokens(src), src)
            val = json.loads(json.dumps(val))
            if kind == "move":
                remove(doc, src)
            doc = put(doc, path, val, False)
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc


# --------------------------------------------------------------------------- store

class Entry:
    """One stored object version: immutable once built. Bulk-loaded and churned
    objects (Entry.of_raw) keep only their JSON text; .data parses it on demand
    (a fresh dict each time: read it, don't keep it), so 100,000 pods cost their
    bytes and not a Python object tree each."""
    __slots__ = ("key", "namespace", "name", "rv", "uid", "_data", "raw", "_partial")

    def __init__(self, data):
        md = data["metadata"]
        self.namespace = md.get("namespace")
        self.name = md["name"]
        self.key = (self.namespace or "", self.name)
        self.rv = int(md["resourceVersion"])
        self.uid = md.get("uid") or ""
        self._data = data
        self.raw = dumps(data)  # the list-item form: no kind/apiVersion
        self._partial = None

    @classmethod
    def of_raw(cls, namespace, name, rv, uid, raw):
        e = cls.__new__(cls)
        e.namespace = namespace
        e.name = name
        e.key = (namespace or "", name)
        e.rv = rv
        e.uid = uid
        e._data = None
        e.raw = raw
        e._partial = None
        return e

    @property
    def data(self):
        return self._data if self._data is not None else json.loads(self.raw)


class Event:
    __slots__ = ("rv", "res", "type", "entry", "prev")

    def __init__(self, rv, res, etype, entry, prev):
        self.rv = rv
        self.res = res
        self.type = etype
        self.entry = entry
        self.prev = prev


class KeyPool:
    """The keys of one table in a list: O(1) random picks, adds and removals."""
    __slots__ = ("keys", "pos")

    def __init__(self):
        self.keys = []
        self.pos = {}

    def add(self, key):
        if key not in self.pos:
            self.pos[key] = len(self.keys)
            self.keys.append(key)

    def remove(self, key):
        i = self.pos.pop(key, None)
        if i is None:
            return
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.pos[last] = i

    def pick(self, rng):
        return self.keys[int(rng.random() * len(self.keys))] if self.keys else None


class Store:
    def __init__(self, history):
        self.cond = threading.Condition()
        self.rv = 1
        self.compacted = 1  # a watch/list from an RV below this is 410
        self.objects = {name: {} for name in RESOURCES}
        self.pools = {name: KeyPool() for name in RESOURCES}
        self.sorted_keys = {name: None for name in RESOURCES}
        self.bulk = None      # BulkFactory, made on first use
        self.churn = None     # the last churn's status (ChurnRun)
        self.events = []    # Event, ascending rv
        self.event_rvs = []
        self.history = history
        self.snapshots = OrderedDict()  # continue-token id -> (rv, [Entry])
        self.snap_seq = 0
        self.kill_gen = 0
        self.kill_mode = "close"
        self.closing = False
        self.quiet = False  # record() leaves the notify to the caller (a churn step)

    # All methods below run with self.cond held.

    def next_rv(self):
        self.rv += 1
        return self.rv

    def record(self, res, etype, entry, prev):
        self.events.append(Event(entry.rv, res, etype, entry, prev))
        self.event_rvs.append(entry.rv)
        # Trimmed in steps of history/16 (exactly for small histories): dropping
        # one event per write would move the whole list every time.
        if len(self.events) > self.history + self.history // 16:
            drop = len(self.events) - self.history
            self.compacted = max(self.compacted, self.events[drop - 1].rv)
            del self.events[:drop]
            del self.event_rvs[:drop]
        if not self.quiet:
            self.cond.notify_all()

    def compact(self):
        self.compacted = self.rv
        self.events = []
        self.event_rvs = []
        self.snapshots.clear()
        self.cond.notify_all()

    def keys(self, res):
        ks = self.sorted_keys[res.name]
        if ks is None:
            ks = sorted(self.objects[res.name])
            self.sorted_keys[res.name] = ks
        return ks

    def put(self, res, data, etype, prev):
        return self.put_entry(res, Entry(data), etype, prev)

    def put_entry(self, res, entry, etype, prev, record=True):
        table = self.objects[res.name]
        if entry.key not in table:
            self.sorted_keys[res.name] = None
            self.pools[res.name].add(entry.key)
        table[entry.key] = entry
        if record:
            self.record(res, etype, entry, prev)
        return entry

    def create(self, res, data):
        md = data["metadata"]
        key = (md.get("namespace") or "", md["name"])
        if key in self.objects[res.name]:
            raise already_exists(res, md["name"])
        md["uid"] = str(uuid.uuid4())
        md.setdefault("creationTimestamp", now_rfc3339())
        md["resourceVersion"] = str(self.next_rv())
        return self.put(res, data, "ADDED", None)

    def delete(self, res, key):
        table = self.objects[res.name]
        prev = table.pop(key)
        self.sorted_keys[res.name] = None
        self.pools[res.name].remove(key)
        rv = self.next_rv()
        raw = replace_rv(prev, rv)
        if raw is not None:
            entry = Entry.of_raw(prev.namespace, prev.name, rv, prev.uid, raw)
        else:
            data = json.loads(prev.raw)
            data["metadata"]["resourceVersion"] = str(rv)
            entry = Entry(data)
        self.record(res, "DELETED", entry, prev)
        return entry

    def state_at(self, res, rv):
        """The resource's objects as they were at rv ({key: Entry}), undoing the
        events after it; None when rv is older than the history."""
        if rv < self.compacted or rv > self.rv:
            return None
        table = dict(self.objects[res.name])
        for ev in reversed(self.events):
            if ev.rv <= rv:
                break
            if ev.res is not res:
                continue
            if ev.type == "ADDED":
                table.pop(ev.entry.key, None)
            else:
                table[ev.entry.key] = ev.prev
        return table


def replace_rv(prev, rv):
    """prev's JSON text with metadata.resourceVersion set to rv, by a byte
    substitution; None when the text does not hold the old value exactly once."""
    old = b'"resourceVersion":"%d"' % prev.rv
    if prev.raw.count(old) != 1:
        return None
    return prev.raw.replace(old, b'"resourceVersion":"%d"' % rv, 1)


def node_ready(node):
    """The status of a node's Ready condition: "True", "False", "Unknown", or
    None when it has none."""
    for c in (node.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status")
    return None


# --------------------------------------------------------------------------- generated objects

def gen_node(i, opts):
    """A realistic GPU node, labelled as topo-sync and GPU feature discovery label it."""
    gpus = int(opts.get("gpus", 8))
    npr = int(opts.get("nodes_per_rack", 8))
    rpl = int(opts.get("racks_per_leaf", 4))
    lps = int(opts.get("leaves_per_spine", 8))
    prefix = opts.get("prefix", "dc1")
    rack_g, in_rack = divmod(i, npr)
    leaf_g, rack = divmod(rack_g, rpl)
    spine_g, leaf = divmod(leaf_g, lps)
    spine = f"{prefix}-sp{spine_g + 1:02d}"
    leafn = f"{spine}-lf{leaf + 1:02d}"
    rackn = f"{leafn}-r{rack + 1:02d}"
    host = f"{rackn}-n{in_rack + 1:02d}"
    ip = f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
    ts = "2026-01-05T08:00:00Z"
    labels = OrderedDict([
        ("beta.kubernetes.io/arch", "amd64"), ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"), ("kubernetes.io/hostname", host),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", "hgx-h100-8"),
        ("nvidia.com/cuda.driver.major", "550"), ("nvidia.com/cuda.driver.minor", "90"),
        ("nvidia.com/cuda.driver.rev", "07"), ("nvidia.com/gpu.count", str(gpus)),
        ("nvidia.com/gpu.family", "hopper"), ("nvidia.com/gpu.machine", "DGX-H100"),
        ("nvidia.com/gpu.memory", "81559"), ("nvidia.com/gpu.present", "true"),
        ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
        ("nvidia.com/gpu.replicas", "1"), ("nvidia.com/mig.capable", "true"),
        ("topology.topo.io/datacenter", prefix), ("topology.topo.io/spine", spine),
        ("topology.topo.io/block", spine), ("topology.topo.io/leaf", leafn),
        ("topology.topo.io/rack", rackn), ("topology.topo.io/nvlink", host),
    ])
    resources = {"cpu": "224", "ephemeral-storage": "3750000000Ki", "hugepages-1Gi": "0",
                 "hugepages-2Mi": "0", "memory": "2113730560Ki", "nvidia.com/gpu": str(gpus),
                 "pods": "110"}
    alloc = dict(resources, cpu="222", memory="2111633408Ki")

    def cond(t, status, reason, msg):
        return {"type": t, "status": status, "lastHeartbeatTime": ts,
                "lastTransitionTime": ts, "reason": reason, "message": msg}

    return {
        "metadata": {
            "name": host, "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "nfd.node.kubernetes.io/feature-labels": "cpu-cpuid.AVX512F,pci-10de.present",
            },
        },
        "spec": {"podCIDR": f"10.244.{i % 256}.0/24", "podCIDRs": [f"10.244.{i % 256}.0/24"],
                 "providerID": f"baremetal://{host}"},
        "status": {
            "capacity": resources, "allocatable": alloc,
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                     "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                     "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID",
                     "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": ip},
                          {"type": "Hostname", "address": host}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": f"{i:032x}", "systemUUID": str(uuid.UUID(int=i + 1)),
                "bootID": str(uuid.UUID(int=(i + 1) << 64)),
                "kernelVersion": "5.15.0-105-generic", "osImage": "Ubuntu 22.04.4 LTS",
                "containerRuntimeVersion": "containerd://1.7.13", "kubeletVersion": "v1.30.2",
                "kubeProxyVersion": "v1.30.2", "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def gen_pod(i, node, gpus, namespace="ml"):
    name = f"train-{i:06d}"
    return {
        "metadata": {
            "name": name, "namespace": namespace,
            "labels": {"app": "train", "batch.kubernetes.io/job-name": f"job-{i // 8:05d}"},
        },
        "spec": {
            "nodeName": node, "restartPolicy": "Never", "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "containers": [{
                "name": "worker", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                "resources": {"requests": {"cpu": "8", "memory": "64Gi",
                                           "nvidia.com/gpu": str(gpus)},
                              "limits": {"nvidia.com/gpu": str(gpus)}},
            }],
        },
        "status": {"phase": "Running", "podIP": f"10.245.{(i >> 8) & 255}.{i & 255}",
                   "qosClass": "Burstable"},
    }


# --------------------------------------------------------------------------- bulk objects

# Bulk loading and fast churn build objects from JSON templates made once
# (json.dumps of a realistic object with @@name@@ placeholders, turned into a
# str.format pattern): a few microseconds per object instead of building and
# dumping a dict. "@@#name@@" (in quotes) is a JSON number.
PH_NUM_RE = re.compile(r'"@@#(\w+)@@"')
PH_STR_RE = re.compile(r"@@(\w+)@@")
PHASE_RE = re.compile(rb'"phase":"([A-Za-z]*)"')
NODE_NAME_RE = re.compile(rb'"nodeName":"([^"]*)"')
GFD_TS = b'"nvidia.com/gfd.timestamp":"'
BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

DAEMONSETS = (  # name, namespace, image, cpu, memory
    ("kube-proxy", "kube-system", "registry.k8s.io/kube-proxy:v1.30.2", "100m", "128Mi"),
    ("cilium", "kube-system", "quay.io/cilium/cilium:v1.15.6", "100m", "512Mi"),
    ("node-exporter", "monitoring", "quay.io/prometheus/node-exporter:v1.8.1", "50m", "64Mi"),
    ("nvidia-device-plugin-daemonset", "gpu-operator",
     "nvcr.io/nvidia/k8s-device-plugin:v0.15.0", "50m", "64Mi"),
    ("nvidia-dcgm-exporter", "gpu-operator", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.6-3.4.2",
     "100m", "256Mi"),
    ("gpu-feature-discovery", "gpu-operator", "nvcr.io/nvidia/k8s-device-plugin:v0.15.0",
     "50m", "64Mi"),
)


def make_template(obj):
    text = json.dumps(obj, separators=(",", ":"))
    text = text.replace("{", "{{").replace("}", "}}")
    text = PH_NUM_RE.sub(r"{\1}", text)
    return PH_STR_RE.sub(r"{\1}", text)


def base36(n, width=5):
    out = []
    for _ in range(width):
        n, d = divmod(n, 36)
        out.append(BASE36[d])
    return "".join(out)


def fake_uid(rng):
    x = "%032x" % rng.getrandbits(128)
    return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-a{x[17:20]}-{x[20:]}"


def managed_fields(manager, operation, fields, subresource=None):
    mf = {"manager": manager, "operation": operation, "apiVersion": "v1",
          "time": "2026-01-05T08:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        mf["subresource"] = subresource
    return mf


def node_template(gpus, annotations=None, topology_labels=True):
    n = gen_node(0, {"gpus": gpus})
    md, labels = n["metadata"], n["metadata"]["labels"]
    for k, v in (annotations or {}).items():
        md["annotations"][str(k)] = str(v)
    md["name"] = "@@name@@"
    md["uid"] = "@@uid@@"
    md["resourceVersion"] = "@@rv@@"
    md["creationTimestamp"] = "2026-01-05T08:00:00Z"
    for k, v in (("kubernetes.io/hostname", "@@name@@"), ("topology.topo.io/nvlink", "@@name@@"),
                 ("topology.topo.io/spine", "@@spine@@"), ("topology.topo.io/block", "@@spine@@"),
                 ("topology.topo.io/leaf", "@@leaf@@"), ("topology.topo.io/rack", "@@rack@@"),
                 ("topology.topo.io/datacenter", "@@dc@@")):
        labels[k] = v
    if not topology_labels:  # a cluster topo-sync has never labelled
        for k in [k for k in labels if k.startswith("topology.topo.io/")]:
            del labels[k]
    labels["nvidia.com/gfd.timestamp"] = "@@gfdts@@"   # GFD rewrites it: the churned label
    md["annotations"]["csi.volume.kubernetes.io/nodeid"] = '{"csi.tigera.io":"@@name@@"}'
    md["managedFields"] = [
        managed_fields("kubelet", "Update", {"f:metadata": {"f:annotations": {
            ".": {}, "f:node.alpha.kubernetes.io/ttl": {},
            "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
            "f:labels": {".": {}, "f:kubernetes.io/arch": {}, "f:kubernetes.io/hostname": {},
                         "f:kubernetes.io/os": {}}}}),
        managed_fields("gpu-feature-discovery", "Update", {"f:metadata": {"f:labels": {
            "f:nvidia.com/gfd.timestamp": {}, "f:nvidia.com/gpu.count": {},
            "f:nvidia.com/gpu.product": {}, "f:nvidia.com/gpu.memory": {}}}}),
    ] + ([
        managed_fields("topo-sync", "Apply", {"f:metadata": {"f:labels": {
            "f:topology.topo.io/block": {}, "f:topology.topo.io/leaf": {},
            "f:topology.topo.io/rack": {}, "f:topology.topo.io/spine": {}}}}),
    ] if topology_labels else []) + [
        managed_fields("kubelet", "Update", {"f:status": {
            "f:allocatable": {"f:nvidia.com/gpu": {}}, "f:capacity": {"f:nvidia.com/gpu": {}},
            "f:conditions": {"k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}}},
            "f:images": {}, "f:nodeInfo": {"f:bootID": {}}}}, "status"),
    ]
    n["spec"] = {"podCIDR": "@@cidr@@", "podCIDRs": ["@@cidr@@"],
                 "providerID": "baremetal://@@name@@"}
    st = n["status"]
    st["addresses"] = [{"type": "InternalIP", "address": "@@ip@@"},
                       {"type": "Hostname", "address": "@@name@@"}]
    for c in st["conditions"]:
        if c["type"] == "Ready":
            c.update(status="@@ready@@", reason="@@readyreason@@")
    info = st["nodeInfo"]
    info.update(machineID="@@machine@@", systemUUID="@@uid@@", bootID="@@boot@@")
    st["images"] = [{"names": [f"{img}@sha256:{'%064x' % (k * 7919)}", img],
                     "sizeBytes": size} for k, (img, size) in enumerate((
                        ("nvcr.io/nvidia/pytorch:24.05-py3", 9825344227),
                        ("nvcr.io/nvidia/k8s/dcgm-exporter:3.3.6-3.4.2", 1321474910),
                        ("nvcr.io/nvidia/k8s-device-plugin:v0.15.0", 141354234),
                        ("quay.io/cilium/cilium:v1.15.6", 209582834),
                        ("registry.k8s.io/kube-proxy:v1.30.2", 29034457),
                        ("quay.io/prometheus/node-exporter:v1.8.1", 11729355),
                        ("nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.6.8", 587348521),
                        ("registry.k8s.io/pause:3.9", 321520)))]
    return make_template(n)


def pod_template(kind, gpu):
    """kind: "ds" (a DaemonSet pod), "job" (an indexed Job's pod), "kueue" (the
    same, admitted by Kueue with a TAS annotation); gpu: requests nvidia.com/gpu."""
    md = OrderedDict([("name", "@@name@@"), ("generateName", "@@gen@@"),
                      ("namespace", "@@ns@@"), ("uid", "@@uid@@"),
                      ("resourceVersion", "@@rv@@"),
                      ("creationTimestamp", "2026-01-05T09:00:00Z")])
    if kind == "ds":
        md["labels"] = {"app.kubernetes.io/name": "@@app@@",
                        "controller-revision-hash": "7d9f8c6b5d", "pod-template-generation": "3"}
        owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "@@app@@"}
    else:
        md["labels"] = {"app": "train", "batch.kubernetes.io/controller-uid": "@@owner@@",
                        "batch.kubernetes.io/job-completion-index": "@@index@@",
                        "batch.kubernetes.io/job-name": "@@job@@", "controller-uid": "@@owner@@",
                        "job-name": "@@job@@"}
        md["annotations"] = {"batch.kubernetes.io/job-completion-index": "@@index@@"}
        if kind == "kueue":
            md["labels"].update({"kueue.x-k8s.io/managed": "true", "kueue.x-k8s.io/podset": "main",
                                 "kueue.x-k8s.io/queue-name": "gpu-queue",
                                 "kueue.x-k8s.io/tas": "true"})
            md["annotations"].update({
                "kueue.x-k8s.io/podset-required-topology": "topology.topo.io/rack",
                "kueue.x-k8s.io/workload": "job-@@job@@-5e3a1"})
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "@@job@@"}
    owner.update(uid="@@owner@@", controller=True, blockOwnerDeletion=True)
    md["ownerReferences"] = [owner]
    md["managedFields"] = [
        managed_fields("kube-controller-manager" if kind != "ds" else "kube-controller-manager",
                       "Update", {"f:metadata": {"f:labels": {".": {}, "f:app": {}},
                                                 "f:ownerReferences": {".": {}}},
                                  "f:spec": {"f:containers": {"k:{\"name\":\"worker\"}": {
                                      ".": {}, "f:image": {}, "f:resources": {}}},
                                      "f:restartPolicy": {}, "f:schedulerName": {}}}),
        managed_fields("kubelet", "Update", {"f:status": {
            "f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}}},
            "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
            "f:startTime": {}}}, "status"),
    ]
    requests = {"cpu": "@@cpu@@", "memory": "@@mem@@"}
    limits = {"memory": "@@mem@@"}
    if gpu:
        requests["nvidia.com/gpu"] = "@@gpus@@"
        limits["nvidia.com/gpu"] = "@@gpus@@"
    container = {
        "name": "worker" if kind != "ds" else "@@app@@", "image": "@@image@@",
        "command": ["/bin/sh", "-c"] if kind == "ds" else ["torchrun", "--nnodes=8",
                                                           "--nproc-per-node=8", "train.py"],
        "env": [{"name": "NCCL_DEBUG", "value": "WARN"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                "fieldPath": "metadata.name"}}}],
        "resources": {"requests": requests, "limits": limits},
        "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
    }
    tolerations = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300},
                   {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300}]
    if gpu or kind == "ds":
        tolerations.append({"key": "nvidia.com/gpu", "operator": "Exists",
                            "effect": "NoSchedule"})
    spec = {
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt",
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
        "containers": [container],
        "restartPolicy": "Always" if kind == "ds" else "Never",
        "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "nodeName": "@@node@@",
        "securityContext": {}, "schedulerName": "default-scheduler",
        "tolerations": tolerations, "priority": 0, "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    ts = "2026-01-05T09:00:05Z"
    status = {
        "phase": "@@phase@@",
        "conditions": [{"type": t, "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": ts}
                       for t in ("PodReadyToStartContainers", "Initialized", "Ready",
                                 "ContainersReady", "PodScheduled")],
        "hostIP": "@@hostip@@", "hostIPs": [{"ip": "@@hostip@@"}], "podIP": "@@podip@@",
        "podIPs": [{"ip": "@@podip@@"}], "startTime": ts,
        "containerStatuses": [{"name": container["name"], "state": {"running": {
            "startedAt": ts}}, "lastState": {}, "ready": True, "restartCount": 0,
            "image": "@@image@@", "imageID": "@@image@@", "containerID":
            "containerd://@@uid@@", "started": True}],
        "qosClass": "Burstable",
    }
    return make_template({"metadata": md, "spec": spec, "status": status})


def job_template():
    return make_template({
        "metadata": {"name": "@@name@@", "namespace": "@@ns@@", "uid": "@@uid@@",
                     "resourceVersion": "@@rv@@", "generation": 1,
                     "creationTimestamp": "2026-01-05T08:59:00Z",
                     "labels": {"kueue.x-k8s.io/queue-name": "gpu-queue"},
                     "annotations": {"kueue.x-k8s.io/podset-required-topology":
                                     "topology.topo.io/rack"}},
        "spec": {"parallelism": "@@#par@@", "completions": "@@#par@@",
                 "completionMode": "Indexed", "backoffLimit": 6, "suspend": False,
                 "manualSelector": False, "podReplacementPolicy": "TerminatingOrFailed",
                 "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "@@uid@@"}},
                 "template": {"metadata": {"labels": {"app": "train",
                                                      "batch.kubernetes.io/job-name": "@@name@@"}},
                              "spec": {"restartPolicy": "Never", "containers": [{
                                  "name": "worker", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                  "resources": {"requests": {"cpu": "8", "memory": "64Gi",
                                                             "nvidia.com/gpu": "@@gpus@@"},
                                                "limits": {"nvidia.com/gpu": "@@gpus@@"}}}]}}},
        "status": {"active": "@@#active@@", "ready": "@@#active@@", "startTime":
                   "2026-01-05T08:59:01Z", "terminating": 0,
                   "uncountedTerminatedPods": {}},
    })


class BulkFactory:
    """Realistic nodes, pods and jobs as JSON text, deterministic for a seed.

    Nodes: HGX-style GPU nodes, racks of 8, leaves of 4 racks, spines of 8
    leaves (gen_node's labels), a "not_ready" share of them NotReady. Pods: the
    j-th pod of a load goes to node j % N at slot j // N; slots 0-5 are the six
    DaemonSet pods every GPU node runs, slots 6-9 the node's workload (by node:
    one 8-GPU pod; two 4-GPU; four 2-GPU; 2+2+1+1 GPUs; a finished 8-GPU pod and
    three 1-GPU ones; four finished pods, i.e. an idle node), never more GPUs
    than the node has; further slots are CPU-only pods. A "kueue" share of the
    GPU pods carry Kueue's labels and TAS annotation. Jobs are the indexed Jobs
    the GPU pods belong to (one per rack and slot)."""

    def __init__(self, seed=1, gpus=8, node_annotations=None, topology_labels=True):
        self.rng = random.Random(seed)
        self.gpus = gpus
        self.node_tmpl = node_template(gpus, node_annotations, topology_labels)
        self.pod_tmpl = {(k, g): pod_template(k, g) for k in ("ds", "job", "kueue")
                         for g in (False, True)}
        self.job_tmpl = job_template()
        self.nodes = []         # names of the nodes made, in order
        self.job_uids = {}
        self.next_pod = 0       # index of the next bulk pod
        self.next_job = 0

    def node(self, i, rv, ready=True):
        rack_g, in_rack = divmod(i, 8)
        leaf_g, rack = divmod(rack_g, 4)
        spine_g, leaf = divmod(leaf_g, 8)
        spine = f"dc1-sp{spine_g + 1:02d}"
        leafn = f"{spine}-lf{leaf + 1:02d}"
        rackn = f"{leafn}-r{rack + 1:02d}"
        name = f"{rackn}-n{in_rack + 1:02d}"
        uid = fake_uid(self.rng)
        raw = self.node_tmpl.format(
            name=name, uid=uid, rv=rv, spine=spine, leaf=leafn, rack=rackn, dc="dc1",
            gfdts=str(1767600000 + i), cidr=f"10.{64 + (i >> 8) % 64}.{i & 255}.0/24",
            ip=f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}",
            ready="True" if ready else "False",
            readyreason="KubeletReady" if ready else "NodeStatusUnknown",
            machine="%032x" % (i + 1), boot=fake_uid(self.rng)).encode()
        return Entry.of_raw(None, name, rv, uid, raw)

    def job_uid(self, job):
        uid = self.job_uids.get(job)
        if uid is None:
            uid = self.job_uids[job] = fake_uid(self.rng)
        return uid

    def pod(self, j, node_index, node, slot, rv, kueue_fraction):
        """The j-th bulk pod (node_index-th node, at slot)."""
        p = {"rv": rv, "node": node, "uid": fake_uid(self.rng), "phase": "Running",
             "hostip": f"10.{(node_index >> 16) & 255}.{(node_index >> 8) & 255}."
                       f"{node_index & 255}",
             "podip": f"10.{64 + (j >> 16) % 64}.{(j >> 8) & 255}.{j & 255}",
             "index": "0", "job": "", "owner": "", "gpus": "0", "app": ""}
        if slot < len(DAEMONSETS):
            app, ns, image, cpu, mem = DAEMONSETS[slot]
            suffix = base36(node_index * 7 + slot * 1000003)
            p.update(name=f"{app}-{suffix}", gen=f"{app}-", ns=ns, image=image, cpu=cpu,
                     mem=mem, app=app, owner=self.job_uid("ds/" + app))
            return Entry.of_raw(ns, p["name"], rv, p["uid"],
                                self.pod_tmpl[("ds", False)].format(**p).encode())
        pattern = node_index % 6
        w = slot - len(DAEMONSETS)
        gpus = 0
        if w < 4:
            gpus = ((8, 0, 0, 0), (4, 4, 0, 0), (2, 2, 2, 2), (2, 2, 1, 1), (8, 1, 1, 1),
                    (8, 8, 8, 8))[pattern][w]
            if pattern == 4 and w == 0 or pattern == 5:
                p["phase"] = "Succeeded"
        gpus = gpus * self.gpus // 8
        if gpus:
            job = f"train-{node_index // 8:05d}-s{slot}"
            kind = "kueue" if self.rng.random() < kueue_fraction else "job"
        else:
            job = f"etl-{node_index // 8:05d}-s{slot}"
            kind = "job"
        ns = f"ml-team-{(node_index // 8) % 4}"
        index = node_index % 8
        name = f"{job}-{index}-{base36(j)}"
        p.update(name=name, gen=f"{job}-{index}-", ns=ns, job=job, owner=self.job_uid(job),
                 index=str(index), gpus=str(gpus), cpu="16" if gpus else "2",
                 mem="128Gi" if gpus else "4Gi", image="nvcr.io/nvidia/pytorch:24.05-py3")
        return Entry.of_raw(ns, name, rv, p["uid"],
                            self.pod_tmpl[(kind, gpus > 0)].format(**p).encode())

    def churn_pod(self, seq, node, rv, gpus):
        """A new pod bound to node and Running, or with node "" Pending (not
        scheduled yet: nodeName "" stands for the absent field)."""
        ns = "churn"
        name = f"churn-{seq}"
        uid = fake_uid(self.rng)
        p = {"rv": rv, "node": node, "uid": uid, "phase": "Running" if node else "Pending",
             "hostip": "10.0.0.1",
             "podip": f"10.200.{(seq >> 8) & 255}.{seq & 255}", "index": "0",
             "job": f"churn-{seq}", "owner": uid, "gpus": str(gpus), "app": "",
             "name": name, "gen": "churn-", "ns": ns, "cpu": "1", "mem": "1Gi",
             "image": "nvcr.io/nvidia/pytorch:24.05-py3"}
        return Entry.of_raw(ns, name, rv, uid,
                            self.pod_tmpl[("job", gpus > 0)].format(**p).encode())

    def job(self, k, rv):
        """The k-th bulk Job: the Job of rack k // 4's pods at workload slot k % 4."""
        rack, w = divmod(k, 4)
        name = f"train-{rack:05d}-s{6 + w}"
        ns = f"ml-team-{rack % 4}"
        uid = self.job_uid(name)
        raw = self.job_tmpl.format(name=name, ns=ns, uid=uid, rv=rv, par=8, active=8,
                                   gpus=(8, 4, 2, 1)[w]).encode()
        return Entry.of_raw(ns, name, rv, uid, raw)


def bulk_load(st, spec):
    """Adds generated objects fast, without watch events: the history is
    compacted to the new resourceVersion (a watch from before the load is
    410, as after a long disconnection). Returns the counts and the RV."""
    t0 = time.monotonic()
    nn, npods, njobs = (int(spec.get(k, 0)) for k in ("nodes", "pods", "jobs"))
    kueue = float(spec.get("kueue_fraction", 0.25))
    not_ready = float(spec.get("not_ready", 0.0))
    with st.cond:
        if st.bulk is None:
            st.bulk = BulkFactory(int(spec.get("seed", 1)), int(spec.get("gpus", 8)),
                                  spec.get("node_annotations"),
                                  bool(spec.get("topology_labels", True)))
        f = st.bulk
        nodes_res, pods_res, jobs_res = RESOURCES["nodes"], RESOURCES["pods"], RESOURCES["jobs"]
        nbytes = {"nodes": 0, "pods": 0, "jobs": 0}
        for _ in range(nn):
            i = len(f.nodes)
            ready = not_ready <= 0 or f.rng.random() >= not_ready
            e = f.node(i, st.next_rv(), ready)
            if e.key in st.objects["nodes"]:
                raise ValueError(f"node {e.name} exists")
            f.nodes.append(e.name)
            st.put_entry(nodes_res, e, "ADDED", None, record=False)
            nbytes["nodes"] += len(e.raw)
        if npods and not f.nodes:
            raise ValueError("bulk-load nodes before pods")
        total = len(f.nodes)
        for _ in range(npods):
            j = f.next_pod
            f.next_pod += 1
            slot, ni = divmod(j, total)
            e = f.pod(j, ni, f.nodes[ni], slot, st.next_rv(), kueue)
            st.put_entry(pods_res, e, "ADDED", None, record=False)
            nbytes["pods"] += len(e.raw)
        for _ in range(njobs):
            e = f.job(f.next_job, st.next_rv())
            f.next_job += 1
            st.put_entry(jobs_res, e, "ADDED", None, record=False)
            nbytes["jobs"] += len(e.raw)
        if nn or npods or njobs:
            st.compact()
        return {"loaded": {"nodes": nn, "pods": npods, "jobs": njobs}, "bytes": nbytes,
                "rv": st.rv, "objects": {k: len(v) for k, v in st.objects.items()},
                "seconds": round(time.monotonic() - t0, 3)}


# --------------------------------------------------------------------------- churn

CHURN_OPS = ("pod_update", "pod_delete", "pod_create", "pod_pending", "node_label",
             "job_update")
DEFAULT_MIX = {"pod_update": 0.5, "pod_delete": 0.2, "pod_create": 0.2, "node_label": 0.1}


class ChurnRun:
    """M watch events of a mix of kinds, generated in steps of at most 2,000
    events per hold of the store's lock (watchers stream meanwhile), as fast as
    possible or at `rate` events/s. Byte substitutions on the stored JSON (the
    resourceVersion, status.phase, GFD's timestamp label) keep it at a few
    microseconds an event; objects not made by the bulk factory are changed
    through json instead."""

    def __init__(self, st, spec):
        self.st = st
        self.count = int(spec.get("count", 1))
        self.rate = float(spec.get("rate", 0) or 0)
        mix = spec.get("mix") or DEFAULT_MIX
        bad = [k for k in mix if k not in CHURN_OPS]
        if bad or not mix:
            raise ValueError(f"churn mix: unknown ops {bad}; known: {', '.join(CHURN_OPS)}")
        total = float(sum(mix.values()))
        self.ops, self.cum, acc = [], [], 0.0
        for k, w in mix.items():
            if w > 0:
                acc += w / total
                self.ops.append(k)
                self.cum.append(acc)
        self.rng = random.Random(int(spec.get("seed", 1)))
        self.kueue = float(spec.get("kueue_fraction", 0.25))
        self.done = 0
        self.first_rv = None
        self.last_rv = None
        self.by_op = {k: 0 for k in CHURN_OPS}
        self.by_res = {"nodes": 0, "pods": 0, "jobs": 0}
        self.last_by_res = {}
        self.deleted = []    # (namespace, name, uid), at most 10,000
        self.running = True
        self.stopped = False
        self.error = None
        self.t0 = self.t1 = time.monotonic()
        self.finished = threading.Event()

    def result(self):
        return {"count": self.done, "first_rv": self.first_rv, "last_rv": self.last_rv,
                "rv": self.st.rv, "ops": {k: v for k, v in self.by_op.items() if v},
                "events": dict(self.by_res), "last_rv_by_resource": dict(self.last_by_res),
                "deleted": self.deleted[:10000], "running": self.running,
                "error": self.error, "seconds": round(self.t1 - self.t0, 4)}

    def run(self):
        try:
            step = 2000
            while self.done < self.count and not self.stopped:
                if self.rate > 0:
                    due = int((time.monotonic() - self.t0) * self.rate) + 1
                    n = min(step, self.count - self.done, max(0, due - self.done))
                    if n == 0:
                        time.sleep(min(0.005, 1.0 / self.rate))
                        continue
                else:
                    n = min(step, self.count - self.done)
                with self.st.cond:
                    if self.st.closing:
                        break
                    self.st.quiet = True
                    try:
                        for _ in range(n):
                            self.one()
                    finally:
                        self.st.quiet = False
                        self.st.cond.notify_all()
                if self.rate <= 0:
                    time.sleep(0)  # let watchers take the lock
        except (ValueError, KeyError) as e:
            self.error = str(e)
        finally:
            self.t1 = time.monotonic()
            self.running = False
            self.finished.set()

    def note(self, res, entry):
        self.done += 1
        if self.first_rv is None:
            self.first_rv = entry.rv
        self.last_rv = entry.rv
        self.by_res[res.name] += 1
        self.last_by_res[res.name] = entry.rv

    def one(self):
        st, rng = self.st, self.rng
        r = rng.random()
        op = self.ops[-1]
        for k, c in zip(self.ops, self.cum):
            if r < c:
                op = k
                break
        pods, nodes = st.pools["pods"], st.pools["nodes"]
        if op in ("pod_update", "pod_delete") and not pods.keys:
            op = "pod_create"
        if op == "job_update" and not st.pools["jobs"].keys:
            op = "pod_update" if pods.keys else "pod_create"
        if op in ("pod_create", "pod_pending", "node_label") and not nodes.keys:
            raise ValueError("churn: no nodes")
        self.by_op[op] += 1
        if op == "pod_delete":
            res = RESOURCES["pods"]
            key = pods.pick(rng)
            entry = st.delete(res, key)
            if len(self.deleted) < 10000:
                self.deleted.append([entry.namespace, entry.name, entry.uid])
        elif op in ("pod_create", "pod_pending"):
            res = RESOURCES["pods"]
            if st.bulk is None:
                st.bulk = BulkFactory()
            node = nodes.pick(rng)[1] if op == "pod_create" else ""
            rv = st.next_rv()
            entry = st.bulk.churn_pod(rv, node, rv, rng.choice((0, 0, 1, 2)))
            st.put_entry(res, entry, "ADDED", None)
        else:
            res = RESOURCES[{"pod_update": "pods", "node_label": "nodes",
                             "job_update": "jobs"}[op]]
            prev = st.objects[res.name][st.pools[res.name].pick(rng)]
            rv = st.next_rv()
            raw = replace_rv(prev, rv)
            if raw is not None and op == "pod_update":
                if b'"phase":"Pending"' in raw:  # scheduled: bound and started
                    node = nodes.pick(rng)[1].encode() if nodes.keys else b""
                    raw = raw.replace(b'"phase":"Pending"', b'"phase":"Running"', 1)
                    raw = raw.replace(b'"nodeName":""', b'"nodeName":"' + node + b'"', 1)
                elif b'"phase":"Running"' in raw and rng.random() < 0.3:
                    raw = raw.replace(b'"phase":"Running"', b'"phase":"Succeeded"', 1)
            elif raw is not None and op == "node_label":
                at = raw.find(GFD_TS)
                if at < 0:
                    raw = None
                else:
                    at += len(GFD_TS)
                    end = raw.index(b'"', at)
                    raw = raw[:at] + b"%d" % (1767600000 + rv) + raw[end:]
            if raw is not None:
                entry = Entry.of_raw(prev.namespace, prev.name, rv, prev.uid, raw)
            else:
                data = json.loads(prev.raw)
                md = data["metadata"]
                md.setdefault("labels" if op == "node_label" else "annotations",
                              {})["topo.test/churn"] = str(rv)
                md["resourceVersion"] = str(rv)
                entry = Entry(data)
            st.put_entry(res, entry, "MODIFIED", prev)
        self.note(res, entry)


def churn_mix(st, spec):
    """POST /_fake/churn with "mix", "rate" or "async": a ChurnRun. Returns its
    result once every event is in the history, or at once with "async"."""
    if st.churn is not None and st.churn.running:
        raise ValueError("a churn is already running")
    run = ChurnRun(st, spec)
    st.churn = run
    if spec.get("async"):
        threading.Thread(target=run.run, daemon=True).start()
        return {"started": True, "count": run.count, "rv": st.rv}
    run.run()
    return run.result()


# --------------------------------------------------------------------------- the server

class Fault:
    def __init__(self, spec):
        self.kind = spec.get("kind", "status")
        if self.kind not in ("status", "drop", "reset", "slow", "delay", "touch"):
            raise ValueError(f"unknown fault kind {self.kind!r}")
        self.seconds = spec.get("seconds")
        # A time-bounded fault matches any number of requests unless counted too.
        self.count = int(spec.get("count", 1 if self.seconds is None else 1 << 62))
        self.until = (time.monotonic() + float(self.seconds)) if self.seconds is not None \
            else None
        self.list = bool(spec.get("list", False))
        self.code = int(spec.get("code", 500))
        self.retry_after = spec.get("retry_after")
        self.message = spec.get("message")
        self.method = spec.get("method")
        self.path = spec.get("path")
        self.watch = spec.get("watch")  # None: any; True/False: only watches / non-watches
        # None: any; True/False: only requests with / without a continue token
        self.continued = spec.get("continued")
        self.auth = spec.get("auth")    # only requests whose identity starts with this
                                        # ("cert:", "bearer:", "none")
        self.chunk = int(spec.get("chunk", 1024))
        self.delay_ms = int(spec.get("delay_ms", 50))
        self.patch = spec.get("patch")  # touch: the other writer's JSON patch

    def matches(self, method, path, is_watch, auth, continued=False):
        if self.count <= 0:
            return False
        if self.continued is not None and bool(self.continued) != continued:
            return False
        if self.until is not None and time.monotonic() >= self.until:
            self.count = 0
            return False
        if self.list:
            if method != "GET" or is_watch or list_resource(path) is None:
                return False
            if self.path and path != self.path:
                return False
            return not self.auth or auth.startswith(self.auth)
        if self.auth and not auth.startswith(self.auth):
            return False
        if self.method and self.method != method:
            return False
        if self.path and not path.startswith(self.path):
            return False
        return self.watch is None or bool(self.watch) == is_watch


class State:
    def __init__(self, args):
        self.store = Store(args.history)
        self.lock = threading.Lock()  # faults, config, logs, tokens
        self.faults = []
        self.gone_mode = args.gone_mode
        self.kueue = False  # Kueue's CRDs installed (topologies, resourceflavors served)
        self.kueue_versions = ["v1beta2"]  # the versions their CRDs serve
        self.forbid = []    # RBAC not granted: [{"resource", "verbs", "scope"}]
        self.metadata_406 = False  # no metadata-only answers: every as= clause refused
        self.bookmark_interval = args.bookmark_interval
        self.watch_timeout = args.watch_timeout
        self.token_file = args.token_file
        self.token_grace = 0.0
        self.tokens = (None, None, 0.0)  # current, previous, changed at
        self.client_auth = bool(args.client_ca)
        self.requests = []
        self.counts = {}
        self.verbs = {}         # resource -> {"LIST": n, "WATCH": n, "GET": n, "PATCH": n, ...}
        self.gone = {}          # resource -> 410s answered (HTTP status or in-stream ERROR)
        self.watch_starts = []  # {"resource", "rv", "t"} of the last watches opened
        self.watches = 0
        self.in_flight = 0      # API requests (not watches) being answered now
        self.in_flight_max = 0  # the most at once since the last requests/clear
        self.verbose = args.verbose
        self.server = None

    def take_fault(self, method, path, is_watch, auth, continued=False):
        with self.lock:
            for f in self.faults:
                if f.matches(method, path, is_watch, auth, continued):
                    f.count -= 1
                    return f
        return None

    def valid_tokens(self):
        if not self.token_file:
            return None
        try:
            with open(self.token_file, "r", encoding="utf-8") as fh:
                cur = fh.read().strip()
        except OSError:
            cur = ""
        with self.lock:
            current, previous, changed = self.tokens
            if cur != current:
                previous, changed = current, time.monotonic()
                self.tokens = (cur, previous, changed)
            ok = {cur} if cur else set()
            if previous and time.monotonic() - changed < self.token_grace:
                ok.add(previous)
        return ok

    def count_verb(self, res, verb, rv=None, auth=None, accept=None):
        with self.lock:
            v = self.verbs.setdefault(res.name, {})
            v[verb] = v.get(verb, 0) + 1
            if verb == "WATCH":
                self.watch_starts.append({"resource": res.name, "rv": rv, "auth": auth,
                                          "accept": accept, "t": time.time()})
                if len(self.watch_starts) > 2000:
                    del self.watch_starts[:1000]

    def count_gone(self, res):
        with self.lock:
            self.gone[res.name] = self.gone.get(res.name, 0) + 1

    def log_request(self, method, path, status, auth, ctype, accept=None):
        with self.lock:
            self.requests.append({"method": method, "path": path, "status": status,
                                  "auth": auth, "content_type": ctype, "accept": accept,
                                  "t": time.time()})
            if len(self.requests) > 5000:
                del self.requests[:1000]
            k = f"{method} {status}"
            self.counts[k] = self.counts.get(k, 0) + 1


ROUTE_RE = re.compile(
    r"^(?:/api/(?P<cv>v1)|/apis/(?P<group>[^/]+)/(?P<gv>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<res>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")


def list_resource(path):
    """The resource a GET of path lists (a collection, all namespaces or one), else None."""
    m = ROUTE_RE.match(path)
    if not m or m.group("name"):
        return None
    return RESOURCES.get(unquote(m.group("res")))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver/1.0"
    timeout = 120

    # ------------------------------------------------------------ plumbing

    def log_message(self, fmt, *args):
        if self.server.state.verbose:
            sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError):
            self.close_connection = True

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline(3)
        n = int(self.headers.get("Content-Length") or 0)
        if n > 3 * 1024 * 1024:
            raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is "
                           "3145728")
        return self.rfile.read(n) if n else b""

    def abort_connection(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_bytes(self, code, body, headers=(), ctype="application/json"):
        fault = self.fault if self.fault and self.fault.kind in ("drop", "slow") else None
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.status_sent = code
        if fault is None:
            self.wfile.write(body)
        elif fault.kind == "drop":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.abort_connection()
        else:
            for off in range(0, len(body), max(1, fault.chunk)):
                self.wfile.write(body[off: off + fault.chunk])
                self.wfile.flush()
                time.sleep(fault.delay_ms / 1000.0)

    def send_obj(self, code, obj, headers=()):
        self.send_bytes(code, dumps(obj), headers)

    def send_error_status(self, e):
        self.send_obj(e.code, e.status(), e.headers)

    # ------------------------------------------------------------ dispatch

    def dispatch(self, method):
        state = self.server.state
        self.fault = None
        self.status_sent = 0
        self.convert = None
        url = urlsplit(self.path)
        path = url.path
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        auth = "none"
        counted = False
        try:
            body = self.read_body()
            if path.startswith("/_fake/"):
                self.admin(method, path, body, params)
                return
            auth = self.auth = self.authenticate()
            is_watch = params.get("watch", "") in ("1", "true", "True")
            if not is_watch:
                with state.lock:
                    state.in_flight += 1
                    state.in_flight_max = max(state.in_flight_max, state.in_flight)
                counted = True
            self.fault = state.take_fault(method, path, is_watch, auth,
                                          bool(params.get("continue")))
            if self.fault is not None:
                if self.fault.kind == "reset":
                    self.abort_connection()
                    return
                if self.fault.kind == "delay":
                    time.sleep(self.fault.delay_ms / 1000.0)
                elif self.fault.kind == "touch":
                    self.touch(path, self.fault.patch)
                elif self.fault.kind == "status":
                    res = list_resource(path) if method == "GET" and not is_watch else None
                    if res is not None:
                        state.count_verb(res, "LIST", params.get("resourceVersion", ""), auth,
                                         self.headers.get("Accept"))
                        if self.fault.code == 410:
                            state.count_gone(res)
                    raise generic_status(self.fault.code, self.fault.message,
                                         self.fault.retry_after)
            if path in ("/healthz", "/readyz", "/livez"):
                self.send_bytes(200, b"ok", ctype="text/plain; charset=utf-8")
                return
            if path == "/version":
                self.send_obj(200, {"major": "1", "minor": "30", "gitVersion": "v1.30.2-fake",
                                    "platform": "linux/amd64"})
                return
            self.api(method, path, params, body, is_watch)
        except ApiError as e:
            self.send_error_status(e)
        except (ConnectionError, ssl.SSLError, socket.timeout, BrokenPipeError):
            self.close_connection = True
        finally:
            if counted:
                with state.lock:
                    state.in_flight -= 1
            if not path.startswith("/_fake/"):
                state.log_request(method, self.path, self.status_sent, auth,
                                  self.headers.get("Content-Type"), self.headers.get("Accept"))

    def authenticate(self):
        state = self.server.state
        if state.token_file is None and not state.client_auth:
            return "none"
        if state.client_auth:
            try:
                cert = self.connection.getpeercert()
            except (AttributeError, ValueError):
                cert = None
            if cert:
                for rdn in cert.get("subject", ()):
                    for k, v in rdn:
                        if k == "commonName":
                            return "cert:" + v
                return "cert"
        h = self.headers.get("Authorization", "")
        ok = state.valid_tokens() or set()
        if h.startswith("Bearer ") and h[7:].strip() in ok:
            return "bearer:" + h[7:].strip()[:12]
        raise ApiError(401, "Unauthorized", "Unauthorized")

    def touch(self, path, patch=None):
        m = ROUTE_RE.match(path)
        res = RESOURCES.get(unquote(m.group("res"))) if m else None
        if res is None or not m.group("name"):
            return
        key = (unquote(m.group("ns") or ""), unquote(m.group("name")))
        st = self.server.state.store
        with st.cond:
            prev = st.objects[res.name].get(key)
            if prev is None:
                return
            data = json.loads(prev.raw)
            if patch is not None:
                data = json_patch(data, patch)
            rv = st.next_rv()
            if patch is None:
                data["metadata"].setdefault("annotations", {})["fake.topo.io/touched"] = str(rv)
            data["metadata"]["resourceVersion"] = str(rv)
            st.put(res, data, "MODIFIED", prev)

    # ------------------------------------------------------------ the API

    def api(self, method, path, params, body, is_watch):
        m = ROUTE_RE.match(path)
        if not m:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        group = m.group("group") or ""
        version = m.group("cv") or m.group("gv")
        res = RESOURCES.get(unquote(m.group("res")))
        state = self.server.state
        if res is not None and res.group == "kueue.x-k8s.io" and res.group == group:
            if not state.kueue or version not in state.kueue_versions:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            res = res.at_version(version)
        if res is None or res.group != group or res.version != version:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = unquote(m.group("ns")) if m.group("ns") else None
        name = unquote(m.group("name")) if m.group("name") else None
        sub = m.group("sub")
        if ns is not None and not res.namespaced:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub == "binding" and res.name == "pods" and ns and name and method == "POST":
            self.bind(res, (ns or "", name), name, body)
            return
        if sub is not None and (sub != "status" or not res.has_status):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if res.namespaced and ns is None and (name is not None or method != "GET"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        key = (ns or "", name) if name is not None else None
        self.authorize(res, method, name, is_watch, ns, sub)
        if name is None and method == "GET":
            state.count_verb(res, "WATCH" if is_watch else "LIST",
                             params.get("resourceVersion", ""), self.auth,
                             self.headers.get("Accept"))
        else:
            state.count_verb(res, method)
        self.convert = negotiate(self.headers.get("Accept"), not state.metadata_406)

        if name is None:
            if method == "GET":
                if is_watch:
                    self.watch(res, ns, params)
                else:
                    self.list(res, ns, params)
            elif method == "POST":
                self.create(res, ns, body)
            else:
                raise ApiError(405, "MethodNotAllowed",
                               f"the server does not allow this method on the requested "
                               f"resource")
            return
        if method == "GET":
            st = self.server.state.store
            with st.cond:
                entry = st.objects[res.name].get(key)
            if entry is None:
                raise not_found(res, name)
            self.send_bytes(200, self.object_body(res, entry))
        elif method == "PUT":
            self.update(res, key, name, body, sub)
        elif method == "PATCH":
            self.patch(res, key, name, body, sub)
        elif method == "DELETE":
            self.delete(res, key, name, body)
        else:
            raise ApiError(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource")

    def authorize(self, res, method, name, is_watch, ns, sub):
        """RBAC as POST /_fake/config {"forbid": [...]} leaves it: a request a
        rule matches is 403 with the apiserver's Forbidden (forbiddenMessage
        in apiserver/pkg/endpoints/handlers/responsewriters/errors.go)."""
        state = self.server.state
        if not state.forbid:
            return
        verb = {"GET": "watch" if is_watch else ("get" if name else "list"), "POST": "create",
                "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method.lower())
        with state.lock:
            rules = list(state.forbid)
        for r in rules:
            scope = r.get("scope")
            if (r.get("resource") != res.name or verb not in r.get("verbs", [verb]) or
                    (scope == "cluster" and ns) or
                    (scope not in (None, "cluster") and scope != ns)):
                continue
            user = self.auth.split(":", 1)[-1]
            resource = res.name + (f"/{sub}" if sub else "")
            where = f'in the namespace "{ns}"' if ns else "at the cluster scope"
            msg = (f'User "{user}" cannot {verb} resource "{resource}" in API group '
                   f'"{res.group}" {where}')
            what = f'{res.qualified()} "{name}"' if name else res.qualified()
            raise ApiError(403, "Forbidden", f"{what} is forbidden: {msg}",
                           {"name": name or "", "group": res.group, "kind": res.name})
        return

    def object_body(self, res, entry):
        """One object as negotiated: whole, or its PartialObjectMetadata."""
        if self.convert is None:
            return res.head + entry.raw[1:]
        kind, version = self.convert
        if kind != "PartialObjectMetadata":
            raise ApiError(406, "NotAcceptable",
                           f"you requested {kind}, but the requested object is not a list "
                           f"({go_type(res, False)})")
        return partial_object(entry, version)

    def decode(self, body):
        try:
            return json.loads(body or b"null")
        except ValueError as e:
            raise bad_request(f"error decoding request body: {e}")

    def list(self, res, ns, params):
        if self.convert is not None and self.convert[0] != "PartialObjectMetadataList":
            raise ApiError(406, "NotAcceptable",
                           f"you requested {self.convert[0]}, but the requested object is a "
                           f"list ({go_type(res, True)})")
        st = self.server.state.store
        flt = Filter(res, ns, params)
        try:
            limit = int(params.get("limit") or 0)
        except ValueError:
            raise bad_request("invalid limit")
        cont = params.get("continue", "")
        rvp = params.get("resourceVersion", "")
        with st.cond:
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont.encode() + b"=="))
                    snap_id, offset, rv = int(tok["snap"]), int(tok["offset"]), int(tok["rv"])
                except (ValueError, KeyError, TypeError):
                    raise bad_request("continue key is not valid: incorrect encoded start "
                                      "resourceVersion (version meta.k8s.io/v1)")
                snap = st.snapshots.get(snap_id)
                if snap is None or rv < st.compacted:
                    self.server.state.count_gone(res)
                    raise gone("The provided continue parameter is too old to display a "
                               "consistent list result. You can start a new list without the "
                               "continue parameter, or use the continue token in this response "
                               "to retrieve the remainder of the results. Continuing with the "
                               "provided token results in an inconsistent list - objects that "
                               "were created, modified, or deleted between the time the first "
                               "chunk was returned and now may show up in the list.")
                st.snapshots.move_to_end(snap_id)
                items = snap[1]
            else:
                if rvp not in ("", "0"):
                    try:
                        want = int(rvp)
                    except ValueError:
                        raise bad_request(f"invalid resource version: {rvp}")
                    if want < st.compacted:
                        self.server.state.count_gone(res)
                        raise gone(f"too old resource version: {want} ({st.compacted})")
                table = st.objects[res.name]
                items = [table[k] for k in st.keys(res)]
                if not flt.trivial:
                    items = [e for e in items if flt.match(e)]
                rv = st.rv
                offset = 0
                snap_id = None
            end = len(items) if limit <= 0 else min(len(items), offset + limit)
            token = ""
            if end < len(items):
                if snap_id is None:
                    st.snap_seq += 1
                    snap_id = st.snap_seq
                    st.snapshots[snap_id] = (rv, items)
                    while len(st.snapshots) > 256:
                        st.snapshots.popitem(last=False)
                token = base64.urlsafe_b64encode(dumps(
                    {"v": "meta.k8s.io/v1", "rv": rv, "snap": snap_id, "offset": end,
                     "start": items[end].key[1] + "\u0000"})).decode().rstrip("=")
            page = items[offset:end]
            remaining = len(items) - end
        md = {"resourceVersion": str(rv)}
        if token:
            md["continue"] = token
            md["remainingItemCount"] = remaining
        if self.convert is None:
            head = dumps({"kind": res.list_kind, "apiVersion": res.api_version, "metadata": md})
            raws = [e.raw for e in page]
        else:
            version = self.convert[1]
            head = dumps({"kind": "PartialObjectMetadataList",
                          "apiVersion": "meta.k8s.io/" + version, "metadata": md})
            raws = [partial_object(e, version) for e in page]
        body = head[:-1] + b',"items":[' + b",".join(raws) + b"]}"
        self.send_bytes(200, body)

    def watch(self, res, ns, params):
        state = self.server.state
        st = state.store
        flt = Filter(res, ns, params)
        bookmarks = params.get("allowWatchBookmarks", "") in ("1", "true", "True")
        try:
            timeout = float(params.get("timeoutSeconds") or state.watch_timeout)
        except ValueError:
            raise bad_request("invalid timeoutSeconds")
        rvp = params.get("resourceVersion", "")
        initial = []
        too_old = None
        with st.cond:
            if rvp in ("", "0"):
                table = st.objects[res.name]
                initial = [table[k] for k in st.keys(res) if flt.match(table[k])]
                last = st.rv
            else:
                try:
                    last = int(rvp)
                except ValueError:
                    raise bad_request(f"invalid resource version: {rvp}")
                if last < st.compacted:
                    too_old = f"too old resource version: {last} ({st.compacted})"
            gen = st.kill_gen
        if too_old:
            state.count_gone(res)
        if too_old and state.gone_mode == "http":
            raise gone(too_old)

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.status_sent = 200
        with state.lock:
            state.watches += 1
        try:
            if too_old:
                self.chunk(dumps({"type": "ERROR", "object": status_object(410, "Expired",
                                                                           too_old)}))
                self.chunk(b"")
                return
            self.send_lines([self.event_line("ADDED", self.watch_object(res, e))
                             for e in initial])
            if self.fault is not None and self.fault.kind == "drop":
                self.abort_connection()
                return
            deadline = time.monotonic() + timeout
            next_bookmark = time.monotonic() + state.bookmark_interval
            while True:
                out = []
                ended = None
                with st.cond:
                    while True:
                        nowm = time.monotonic()
                        if st.closing or nowm >= deadline:
                            ended = "timeout"
                            break
                        if st.kill_gen != gen:
                            ended = st.kill_mode
                            break
                        if last < st.compacted:
                            ended = "expire"
                            break
                        if st.rv > last or (bookmarks and nowm >= next_bookmark):
                            break
                        st.cond.wait(min(deadline, next_bookmark if bookmarks else deadline)
                                     - nowm)
                    if ended is None:
                        i = bisect.bisect_right(st.event_rvs, last)
                        for ev in st.events[i:]:
                            if ev.res is res:
                                out.append(ev)
                        last = st.rv
                    compacted = st.compacted
                lines = []
                for ev in out:
                    line = self.event_for(res, flt, ev)
                    if line is not None:
                        lines.append(line)
                self.send_lines(lines)
                if ended == "expire":
                    state.count_gone(res)
                    msg = f"too old resource version: {last} ({compacted})"
                    self.chunk(dumps({"type": "ERROR",
                                      "object": status_object(410, "Expired", msg)}))
                    break
                if ended is not None:
                    break
                if bookmarks and time.monotonic() >= next_bookmark:
                    kind, api_version = res.kind, res.api_version
                    if self.watch_meta() is not None:
                        kind = "PartialObjectMetadata"
                        api_version = "meta.k8s.io/" + self.watch_meta()
                    self.chunk(dumps({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": api_version,
                        "metadata": {"resourceVersion": str(last),
                                     "creationTimestamp": None}}}) + b"\n")
                    next_bookmark = time.monotonic() + state.bookmark_interval
            self.chunk(b"")
        finally:
            with state.lock:
                state.watches -= 1

    def chunk(self, data):
        if data and not data.endswith(b"\n"):
            data += b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    @staticmethod
    def event_line(etype, obj):
        return b'{"type":"' + etype.encode() + b'","object":' + obj + b"}\n"

    def watch_meta(self):
        """The version of PartialObjectMetadata a watch sends, or None: full
        objects (also for as=PartialObjectMetadataList, which kube-apiserver's
        watch encoder cannot make of one object: it logs and sends it whole)."""
        c = self.convert
        return c[1] if c is not None and c[0] == "PartialObjectMetadata" else None

    def watch_object(self, res, entry):
        version = self.watch_meta()
        return res.head + entry.raw[1:] if version is None else partial_object(entry, version)

    def send_lines(self, lines):
        """Event lines, many per HTTP chunk and write (a flush per event would
        cap a watch at a few thousand events a second)."""
        buf, size = [], 0
        for line in lines:
            buf.append(line)
            size += len(line)
            if size >= 1 << 20:
                self.chunk(b"".join(buf))
                buf, size = [], 0
        if buf:
            self.chunk(b"".join(buf))

    def event_for(self, res, flt, ev):
        new = flt.match(ev.entry)
        old = ev.prev is not None and flt.match(ev.prev)
        if ev.type == "ADDED":
            etype = "ADDED" if new else None
        elif ev.type == "DELETED":
            etype = "DELETED" if old else None
        elif new and old:
            etype = "MODIFIED"
        elif new:
            etype = "ADDED"
        elif old:
            etype = "DELETED"
        else:
            etype = None
        return self.event_line(etype, self.watch_object(res, ev.entry)) if etype else None

    # ------------------------------------------------------------ writes

    def check_object(self, res, obj, ns, name=None):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request was in an unknown format")
        if obj.get("kind") not in (None, res.kind) or \
                obj.get("apiVersion") not in (None, res.api_version):
            raise bad_request(f"the API version in the data ({obj.get('apiVersion')}) does "
                              f"not match the expected API version ({res.api_version})")
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if res.namespaced:
            if md.get("namespace") not in (None, "", ns):
                raise bad_request("the namespace of the provided object does not match the "
                                  "namespace sent on the request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        if name is not None and md.get("name") not in (None, name):
            raise bad_request("the name of the object (%s) does not match the name on the URL "
                              "(%s)" % (md.get("name"), name))
        if name is not None:
            md["name"] = name
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        return md

    def create(self, res, ns, body):
        obj = self.decode(body)
        md = self.check_object(res, obj, ns)
        st = self.server.state.store
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise invalid(res, "", "metadata.name: Required value: name or generateName "
                                       "is required")
        if not NAME_RE.match(md["name"]):
            raise invalid(res, md["name"], f'metadata.name: Invalid value: "{md["name"]}": a '
                          "lowercase RFC 1123 subdomain must consist of lower case "
                          "alphanumeric characters, '-' or '.'")
        md.pop("resourceVersion", None)
        if res.name == "events":
            check_event(res, obj, ns)
        if res.name == "mutatingwebhookconfigurations":
            check_webhooks(res, obj)
        with st.cond:
            entry = st.create(res, obj)
        self.send_bytes(201, self.object_body(res, entry))

    def commit(self, res, key, name, cur, new, sub):
        """Stores new in place of cur (both plain dicts) with the apiserver's rules:
        identity fields kept, status only through /status and vice versa, a
        resourceVersion in new is a precondition, a no-op is no write."""
        st = self.server.state.store
        md = new.get("metadata")
        if not isinstance(md, dict):
            md = new["metadata"] = {}
        want_rv = md.get("resourceVersion") or ""
        if want_rv and want_rv != cur["metadata"]["resourceVersion"]:
            raise conflict(res, name)
        # A uid is a precondition too (the object may have been recreated
        # under its name): the apiserver refuses a mismatch with 409.
        want_uid = md.get("uid") or ""
        have_uid = cur["metadata"].get("uid", "")
        if want_uid and want_uid != have_uid:
            raise ApiError(409, "Conflict",
                           f'Operation cannot be fulfilled on {res.qualified()} "{name}": '
                           f"Precondition failed: UID in precondition: {want_uid}, UID in "
                           f"object meta: {have_uid}", details_for(res, name))
        for k in ("name", "namespace", "uid", "creationTimestamp"):
            if k in cur["metadata"]:
                md[k] = cur["metadata"][k]
            else:
                md.pop(k, None)
        if res.has_status:
            if sub == "status":
                new = dict(cur, status=new.get("status"))
                if new["status"] is None:
                    new.pop("status")
            elif "status" in cur:
                new["status"] = cur["status"]
            else:
                new.pop("status", None)
        md = new["metadata"]
        md["resourceVersion"] = cur["metadata"]["resourceVersion"]
        new.pop("kind", None)
        new.pop("apiVersion", None)
        if not isinstance(new.get("metadata", {}).get("labels", {}), dict):
            raise invalid(res, name, "metadata.labels: Invalid value")
        if json_equal(new, cur):
            entry = st.objects[res.name][key]
            return entry
        md["resourceVersion"] = str(st.next_rv())
        prev = st.objects[res.name][key]
        return st.put(res, new, "MODIFIED", prev)

    def update(self, res, key, name, body, sub):
        obj = self.decode(body)
        self.check_object(res, obj, key[0] or None, name)
        st = self.server.state.store
        with st.cond:
            prev = st.objects[res.name].get(key)
            if prev is None:
                raise not_found(res, name)
            cur = json.loads(prev.raw)
            entry = self.commit(res, key, name, cur, obj, sub)
        self.send_bytes(200, self.object_body(res, entry))

    def patch(self, res, key, name, body, sub):
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype not in ("application/merge-patch+json", "application/json-patch+json",
                         "application/strategic-merge-patch+json"):
            raise ApiError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted "
                           "media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/apply-patch+yaml")
        patch = self.decode(body)
        st = self.server.state.store
        with st.cond:
            prev = st.objects[res.name].get(key)
            if prev is None:
                raise not_found(res, name)
            cur = json.loads(prev.raw)
            full = dict(cur, kind=res.kind, apiVersion=res.api_version)
            if ctype == "application/json-patch+json":
                try:
                    new = json_patch(json.loads(json.dumps(full)), patch)
                except PatchError as e:
                    raise ApiError(422, "Invalid", str(e))
            else:
                if not isinstance(patch, dict):
                    raise bad_request("json: cannot unmarshal into Go value of type "
                                      "map[string]interface {}")
                try:
                    new = (strategic_merge_patch(full, patch)
                           if ctype == "application/strategic-merge-patch+json"
                           else merge_patch(full, patch))
                except PatchError as e:
                    raise ApiError(422, "Invalid", str(e))
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "the patched object is not an object")
            new = json.loads(json.dumps(new))
            entry = self.commit(res, key, name, cur, new, sub)
        self.send_bytes(200, self.object_body(res, entry))

    def delete(self, res, key, name, body):
        opts = self.decode(body) if body else None
        pre = (opts or {}).get("preconditions") or {} if isinstance(opts, dict) else {}
        st = self.server.state.store
        with st.cond:
            prev = st.objects[res.name].get(key)
            if prev is None:
                raise not_found(res, name)
            if pre.get("resourceVersion") and pre["resourceVersion"] != str(prev.rv):
                raise conflict(res, name)
            if pre.get("uid") and pre["uid"] != prev.data["metadata"].get("uid"):
                raise conflict(res, name)
            entry = None
            if res.name == "pods":
                entry = self.delete_gracefully(st, res, prev, opts)
            if entry is None:
                entry = st.delete(res, key)
        self.send_bytes(200, self.object_body(res, entry))

    def delete_gracefully(self, st, res, prev, opts):
        """kube-apiserver's graceful deletion of a pod (the pod strategy's
        CheckGracefulDelete and the registry's BeforeDelete): the grace period
        is DeleteOptions.gracePeriodSeconds, else spec.terminationGracePeriodSeconds
        (defaulted to 30); 0 for a pod not bound to a node or whose phase is
        Succeeded or Failed. A pod given a grace period is only marked
        (metadata.deletionTimestamp = now + the period,
        deletionGracePeriodSeconds; a MODIFIED event) and stays until its
        kubelet confirms with a deletion of grace 0. The fake has no kubelets:
        the kubelet of a node whose Ready condition is True confirms at once
        (the pod is deleted in one step), so only a pod bound to a node that is
        NotReady or has no Ready condition stays Terminating, as on a cluster
        whose node died; a pod of a deleted node is deleted at once (the pod
        garbage collector). A second deletion with a shorter period shortens
        it, with 0 deletes. Returns the marked pod's Entry, or None to
        delete it now."""
        pod = json.loads(prev.raw)  # prev stays as it was (the history)
        spec = pod.get("spec") or {}
        md = pod["metadata"]
        grace = (opts or {}).get("gracePeriodSeconds") if isinstance(opts, dict) else None
        if not isinstance(grace, int) or grace < 0:
            grace = spec.get("terminationGracePeriodSeconds")
            if not isinstance(grace, int) or grace < 0:
                grace = 30
        if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in (
                "Succeeded", "Failed"):
            grace = 0
        if grace == 0:
            return None
        node = st.objects["nodes"].get(("", spec["nodeName"]))
        if node is None or node_ready(node.data) == "True":
            return None
        old = md.get("deletionGracePeriodSeconds")
        if md.get("deletionTimestamp") and isinstance(old, int) and old <= grace:
            return prev
        md["deletionTimestamp"] = (datetime.datetime.now(datetime.timezone.utc) +
                                   datetime.timedelta(seconds=grace)).strftime(
                                       "%Y-%m-%dT%H:%M:%SZ")
        md["deletionGracePeriodSeconds"] = grace
        md["resourceVersion"] = str(st.next_rv())
        return st.put(res, pod, "MODIFIED", prev)

    def bind(self, res, key, name, body):
        """POST pods/NAME/binding (core/v1 Binding, the scheduler's write): the
        pod's spec.nodeName set to target.name and its PodScheduled condition
        True; 409 when the pod is bound already or being deleted (the
        registry's BindingREST.assignPod). Answers a Status Success, 201."""
        obj = self.decode(body)
        if not isinstance(obj, dict) or obj.get("kind") not in (None, "Binding"):
            raise bad_request("the body of the request was in an unknown format")
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if md.get("name") not in (None, "", name):
            raise bad_request("name in URL does not match name in Binding object")
        target = obj.get("target") if isinstance(obj.get("target"), dict) else {}
        if not target.get("name"):
            raise invalid(RESOURCES["pods"], name, "target.name: Required value")
        if target.get("kind") not in (None, "", "Node"):
            raise invalid(RESOURCES["pods"], name,
                          'target.kind: Not supported: "%s": supported values: "Node"'
                          % target["kind"])
        st = self.server.state.store
        with st.cond:
            prev = st.objects[res.name].get(key)
            if prev is None:
                raise not_found(res, name)
            pod = json.loads(prev.raw)
            if pod["metadata"].get("deletionTimestamp"):
                raise ApiError(409, "Conflict", "Operation cannot be fulfilled on pods/binding "
                               f'"{name}": pod {name} is being deleted, cannot be assigned to '
                               "a host", details_for(res, name))
            if (pod.get("spec") or {}).get("nodeName"):
                raise ApiError(409, "Conflict", "Operation cannot be fulfilled on pods/binding "
                               f'"{name}": pod {name} is already assigned to node '
                               f'"{pod["spec"]["nodeName"]}"', details_for(res, name))
            pod.setdefault("spec", {})["nodeName"] = target["name"]
            status = pod.setdefault("status", {})
            conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True",
                          "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conds
            pod["metadata"]["resourceVersion"] = str(st.next_rv())
            st.put(res, pod, "MODIFIED", prev)
        ok = OrderedDict([("kind", "Status"), ("apiVersion", "v1"), ("metadata", {}),
                          ("status", "Success"), ("code", 201)])
        self.send_obj(201, ok)

    # ------------------------------------------------------------ admin

    def admin(self, method, path, body, params):
        state = self.server.state
        st = state.store
        try:
            spec = json.loads(body or b"{}")
            if not isinstance(spec, dict):
                raise ValueError("body must be a JSON object")
            if method == "GET" and path == "/_fake/stats":
                with st.cond:
                    out = {"rv": st.rv, "compacted": st.compacted,
                           "objects": {k: len(v) for k, v in st.objects.items()},
                           "events": len(st.events)}
                    run = st.churn
                    if run is not None:
                        out["churn"] = {"running": run.running, "done": run.done,
                                        "count": run.count, "last_rv": run.last_rv}
                with state.lock:
                    out["watches"] = state.watches
                    out["counts"] = dict(state.counts)
                    out["verbs"] = {k: dict(v) for k, v in state.verbs.items()}
                    out["gone"] = dict(state.gone)
                    out["watch_starts"] = list(state.watch_starts[-100:])
                    out["faults"] = sum(max(0, f.count) for f in state.faults
                                        if f.until is None or time.monotonic() < f.until)
                    out["in_flight_max"] = state.in_flight_max
                self.send_obj(200, out)
            elif method == "GET" and path == "/_fake/requests":
                with state.lock:
                    self.send_obj(200, {"requests": list(state.requests)})
            elif method == "POST" and path == "/_fake/requests/clear":
                with state.lock:
                    state.requests = []
                    state.counts = {}
                    state.verbs = {}
                    state.gone = {}
                    state.watch_starts = []
                    state.in_flight_max = state.in_flight
                self.send_obj(200, {})
            elif method == "POST" and path == "/_fake/fault":
                f = Fault(spec)
                with state.lock:
                    state.faults = [x for x in state.faults if x.count > 0] + [f]
                self.send_obj(200, {})
            elif method == "POST" and path == "/_fake/faults/clear":
                with state.lock:
                    state.faults = []
                self.send_obj(200, {})
            elif method == "POST" and path == "/_fake/compact":
                with st.cond:
                    st.compact()
                    if spec.get("expire_watches"):
                        st.kill_mode = "expire"
                        st.kill_gen += 1
                    rv = st.rv
                self.send_obj(200, {"rv": rv})
            elif method == "POST" and path == "/_fake/watches/close":
                mode = spec.get("mode", "close")
                if mode not in ("close", "expire"):
                    raise ValueError("mode is close or expire")
                with st.cond:
                    st.kill_mode = mode
                    st.kill_gen += 1
                    st.cond.notify_all()
                self.send_obj(200, {})
            elif method == "POST" and path == "/_fake/config":
                with state.lock:
                    if "gone_mode" in spec:
                        if spec["gone_mode"] not in ("http", "event"):
                            raise ValueError("gone_mode is http or event")
                        state.gone_mode = spec["gone_mode"]
                    if "bookmark_interval" in spec:
                        state.bookmark_interval = float(spec["bookmark_interval"])
                    if "token_grace" in spec:
                        state.token_grace = float(spec["token_grace"])
                    if "watch_timeout" in spec:
                        state.watch_timeout = float(spec["watch_timeout"])
                    if "kueue" in spec:
                        state.kueue = bool(spec["kueue"])
                    if "kueue_versions" in spec:
                        state.kueue_versions = [str(v) for v in spec["kueue_versions"]]
                    if "forbid" in spec:
                        state.forbid = [dict(r) for r in spec["forbid"]]
                    if "metadata_406" in spec:
                        state.metadata_406 = bool(spec["metadata_406"])
                if "history" in spec:
                    with st.cond:
                        st.history = max(1, int(spec["history"]))
                self.send_obj(200, {})
            elif method == "POST" and path == "/_fake/load":
                self.send_obj(200, load(st, spec))
            elif method == "POST" and path == "/_fake/bulk":
                self.send_obj(200, bulk_load(st, spec))
            elif method == "POST" and path == "/_fake/churn":
                if any(k in spec for k in ("mix", "rate", "async")):
                    self.send_obj(200, churn_mix(st, spec))
                else:
                    self.send_obj(200, churn(st, spec))
            elif method == "POST" and path == "/_fake/churn/wait":
                run = st.churn
                if run is None:
                    raise ValueError("no churn was started")
                run.finished.wait(float(spec.get("timeout", 600)))
                self.send_obj(200, run.result())
            elif method == "POST" and path == "/_fake/churn/stop":
                run = st.churn
                if run is not None:
                    run.stopped = True
                    run.finished.wait(10)
                self.send_obj(200, run.result() if run is not None else {})
            elif method == "GET" and path == "/_fake/index":
                self.send_obj(200, index(st, params))
            elif method == "GET" and path == "/_fake/events":
                self.send_obj(200, event_counts(st, params))
            elif method == "POST" and path == "/_fake/shutdown":
                self.send_obj(200, {})
                threading.Thread(target=state.server.shutdown, daemon=True).start()
            else:
                self.send_obj(404, {"error": f"no admin endpoint {method} {path}"})
        except (ValueError, KeyError, TypeError, OSError) as e:
            self.send_obj(400, {"error": str(e)})
        except ApiError as e:
            self.send_obj(400, {"error": e.message})


def load_object(st, data):
    res = KIND_TO_RESOURCE.get(data.get("kind"))
    if res is None:
        raise ValueError(f"cannot load kind {data.get('kind')!r}")
    data = dict(data)
    data.pop("kind", None)
    data.pop("apiVersion", None)
    md = data.setdefault("metadata", {})
    if res.namespaced:
        md.setdefault("namespace", "default")
    else:
        md.pop("namespace", None)
    md.pop("resourceVersion", None)
    key = (md.get("namespace") or "", md["name"])
    prev = st.objects[res.name].get(key)
    if prev is None:
        st.create(res, data)
    else:
        md["uid"] = prev.data["metadata"].get("uid")
        md["creationTimestamp"] = prev.data["metadata"].get("creationTimestamp")
        md["resourceVersion"] = str(st.next_rv())
        st.put(res, data, "MODIFIED", prev)


def load(st, spec):
    """Bulk-loads objects: generated, or from a file. Returns counts and the RV."""
    n = 0
    if "file" in spec:
        with open(spec["file"], "rb") as fh:
            doc = json.load(fh)
        items = doc.get("items") if isinstance(doc, dict) and "items" in doc else [doc]
        default_kind = None
        if isinstance(doc, dict) and doc.get("kind", "").endswith("List") and \
                doc["kind"] != "List":
            default_kind = doc["kind"][:-4]
        with st.cond:
            for it in items:
                if "kind" not in it and default_kind:
                    it = dict(it, kind=default_kind)
                load_object(st, it)
                n += 1
            return {"loaded": n, "rv": st.rv}
    res = RESOURCES.get(spec.get("resource", "nodes"))
    count = int(spec.get("count", 0))
    start = int(spec.get("start", 0))
    with st.cond:
        if res.name == "nodes":
            for i in range(start, start + count):
                d = gen_node(i, spec)
                d["kind"] = "Node"
                load_object(st, d)
        elif res.name == "pods":
            nodes = st.keys(RESOURCES["nodes"])
            if not nodes:
                raise ValueError("load nodes before pods")
            for i in range(start, start + count):
                node = nodes[i % len(nodes)][1]
                d = gen_pod(i, node, int(spec.get("gpus", 8)), spec.get("namespace", "ml"))
                d["kind"] = "Pod"
                load_object(st, d)
        else:
            raise ValueError(f"cannot generate {res.name}")
        return {"loaded": count, "rv": st.rv}


def churn(st, spec):
    """A burst of watch events: label changes on nodes, or pod creations and deletions."""
    res = RESOURCES.get(spec.get("resource", "nodes"))
    count = int(spec.get("count", 1))
    rng = random.Random(int(spec.get("seed", 1)))
    label = spec.get("label", "topo.test/churn")
    with st.cond:
        first = st.rv + 1
        if res.name == "nodes":
            keys = list(st.keys(res))
            if not keys:
                raise ValueError("no nodes")
            for i in range(count):
                prev = st.objects["nodes"][keys[rng.randrange(len(keys))]]
                data = json.loads(prev.raw)
                data["metadata"].setdefault("labels", {})[label] = str(st.rv + 1)
                data["metadata"]["resourceVersion"] = str(st.next_rv())
                st.put(res, data, "MODIFIED", prev)
        elif res.name == "pods":
            nodes = st.keys(RESOURCES["nodes"])
            for i in range(count):
                pods = st.objects["pods"]
                if pods and (rng.random() < 0.5 or not nodes):
                    st.delete(res, st.pools["pods"].pick(rng))
                else:
                    seq = st.rv + 1
                    node = nodes[rng.randrange(len(nodes))][1]
                    d = gen_pod(seq, node, rng.choice((1, 2, 4, 8)), "churn")
                    d["metadata"]["name"] = f"churn-{seq}"
                    st.create(res, d)
        else:
            raise ValueError(f"cannot churn {res.name}")
        return {"first_rv": first, "last_rv": st.rv, "rv": st.rv}


def index(st, params):
    """GET /_fake/index?resource=R[&rv=N]: every object of R (now, or as it was
    at resourceVersion N while N is in the history) as {namespace, name, uid,
    rv}, pods with their phase and nodeName too. For comparing a mirror."""
    res = RESOURCES.get(params.get("resource", ""))
    if res is None:
        raise ValueError(f"index: unknown resource {params.get('resource')!r}")
    with st.cond:
        rv = int(params["rv"]) if params.get("rv") else st.rv
        table = st.state_at(res, rv)
        if table is None:
            raise ValueError(f"index: resourceVersion {rv} is outside the history "
                             f"({st.compacted}..{st.rv})")
        compacted = st.compacted
    items = []
    for e in table.values():
        item = {"namespace": e.namespace or "", "name": e.name, "uid": e.uid, "rv": str(e.rv)}
        if res.name == "pods":
            m = PHASE_RE.search(e.raw)
            item["phase"] = m.group(1).decode() if m else ""
            m = NODE_NAME_RE.search(e.raw)
            item["nodeName"] = m.group(1).decode() if m else ""
        items.append(item)
    return {"resource": res.name, "rv": rv, "compacted": compacted, "items": items}


def event_counts(st, params):
    """GET /_fake/events?resource=R&after=A[&upto=B]: the events of R with
    A < rv <= B (default: now) by type; 400 when A is older than the history."""
    res = RESOURCES.get(params.get("resource", ""))
    if res is None:
        raise ValueError(f"events: unknown resource {params.get('resource')!r}")
    with st.cond:
        after = int(params.get("after", 0))
        upto = int(params["upto"]) if params.get("upto") else st.rv
        if after < st.compacted:
            raise ValueError(f"events: {after} is older than the history ({st.compacted})")
        types = {}
        i = bisect.bisect_right(st.event_rvs, after)
        j = bisect.bisect_right(st.event_rvs, upto)
        for ev in st.events[i:j]:
            if ev.res is res:
                types[ev.type] = types.get(ev.type, 0) + 1
    return {"resource": res.name, "after": after, "upto": upto,
            "count": sum(types.values()), "types": types}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, state, ssl_ctx):
        self.state = state
        self.ssl_ctx = ssl_ctx
        super().__init__(addr, Handler)

    def finish_request(self, request, client_address):
        # The TLS handshake runs here, in the connection's own thread.
        request.settimeout(Handler.timeout)
        # A response goes out as two writes (headers, then body): with Nagle's
        # algorithm the body waits for the client's delayed ACK of the
        # headers, about 40 ms per small response, which capped a client at
        # ~22 requests/s whatever its own QPS limit (kube-apiserver, in Go,
        # sets TCP_NODELAY on every connection).
        try:
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        if self.ssl_ctx is not None:
            try:
                request = self.ssl_ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                if self.state.verbose:
                    sys.stderr.write(f"fake-apiserver: TLS handshake failed: {e}\n")
                request.close()
                return
        try:
            self.RequestHandlerClass(request, client_address, self)
        finally:
            try:
                request.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        if self.state.verbose:
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="fake kube-apiserver for tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--client-ca", help="verify TLS client certificates against this CA")
    ap.add_argument("--token-file", help="the valid bearer token, re-read on every request")
    ap.add_argument("--history", type=int, default=100000, help="events kept for watches")
    ap.add_argument("--bookmark-interval", type=float, default=60.0)
    ap.add_argument("--watch-timeout", type=float, default=1800.0)
    ap.add_argument("--gone-mode", choices=("http", "event"), default="event")
    ap.add_argument("--load", action="append", default=[], help="a List JSON file to load")
    ap.add_argument("--nodes", type=int, default=0, help="generate N GPU nodes")
    ap.add_argument("--pods", type=int, default=0, help="generate N bound pods")
    ap.add_argument("--bulk-nodes", type=int, default=0,
                    help="bulk-load N realistic GPU nodes (as POST /_fake/bulk)")
    ap.add_argument("--bulk-pods", type=int, default=0, help="bulk-load N realistic pods")
    ap.add_argument("--bulk-jobs", type=int, default=0, help="bulk-load N Jobs")
    ap.add_argument("--port-file")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    state = State(args)
    for f in args.load:
        load(state.store, {"file": f})
    if args.nodes:
        load(state.store, {"resource": "nodes", "count": args.nodes})
    if args.pods:
        load(state.store, {"resource": "pods", "count": args.pods})
    if args.bulk_nodes or args.bulk_pods or args.bulk_jobs:
        bulk_load(state.store, {"nodes": args.bulk_nodes, "pods": args.bulk_pods,
                                "jobs": args.bulk_jobs})

    ctx = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        if args.client_ca:
            ctx.load_verify_locations(args.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
    server = Server(("127.0.0.1", args.port), state, ctx)
    state.server = server

    def stop(_signum, _frame):
        with state.store.cond:
            state.store.closing = True
            state.store.cond.notify_all()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        with state.store.cond:
            state.store.closing = True
            state.store.cond.notify_all()
        server.server_close()


if __name__ == "__main__":
    main()
