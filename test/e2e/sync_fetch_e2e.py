#!/usr/bin/env python3
"""topo-sync fetching its sources over HTTP (lib/sync/fetch) from fake NetBox and
UFM servers (harness.fakenetbox, harness.fakeufm) and an LLDP collector,
serving the real payload shapes of fixtures/sources.

usage: sync_fetch_e2e.py --topo-sync BIN --source DIR (--list | --case NAME)

Every successful case checks that the labels planned from the HTTP run are
those planned from the same payloads read as files. Failures (exit 2) must
name the source and the request and never show a credential. Timeouts,
retries and backoffs are small, set through the configuration, so that
each case takes a second or two.
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, expect  # noqa: E402
from harness.fakenetbox import FakeNetBox  # noqa: E402
from harness.fakeufm import FakeUFM  # noqa: E402
from harness.pki import make_pki  # noqa: E402
from harness.sourcefake import FakeSource  # noqa: E402

P = "topology.topo.io/"
ARGS = None
CASES = {}
V1_TOKEN = "0123456789abcdef0123456789abcdef01234567"
V2_TOKEN = "nbt_k3yk3yk3y.s3cr3ts3cr3ts3cr3t"
UFM_USER, UFM_PASSWORD, UFM_TOKEN = "admin", "hunter2 with spaces", "ufmtok3nufmtok3n"
# Quick failures: 2 retries 50 ms apart, 800 ms per request.
FAST = {"timeout": "800ms", "retries": 2, "backoff": "50ms"}
# The device fields topo-sync asks NetBox 4 for (`fields=`): what its parser reads.
DEVICE_FIELDS = "name,role,site,rack"


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def fixture(*parts):
    return os.path.join(ARGS.source, "fixtures", *parts)


class Env:
    """A temporary directory with secret files, the servers a case starts
    (closed at the end), and topo-sync runs."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="topo-fetch-")
        self.servers = []
        self.pki = None

    def close(self):
        for s in self.servers:
            s.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        # Atomic, as a Secret volume's symlink swap is.
        path = self.path(name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        return path

    def tls(self):
        if self.pki is None:
            self.pki = self.path("pki")
            make_pki(self.pki)
        return self.pki

    def serve(self, server):
        self.servers.append(server)
        return server

    def netbox(self, tls=False, token=V1_TOKEN):
        return self.serve(FakeNetBox(fixture("sources", "netbox"),
                                     self.write("server-netbox-token", token),
                                     self.tls() if tls else None))

    def ufm(self, tls=False):
        return self.serve(FakeUFM(fixture("sources", "ufm"),
                                  self.write("server-ufm-creds", UFM_USER + ":" + UFM_PASSWORD),
                                  self.write("server-ufm-token", UFM_TOKEN),
                                  self.tls() if tls else None))

    def run(self, config=None, *args, expect_rc=0, secrets=()):
        """topo-sync --print-labels with the config (a dict, written as
        JSON, which YAML reads) and flags; the labels, or the process when
        the exit status is not 0."""
        cmd = [ARGS.topo_sync, "--once", "--dry-run", "--print-labels", "--log-format", "text"]
        if config is not None:
            cmd += ["--config", self.write("sync-%d.yaml" % time.monotonic_ns(),
                                           json.dumps(config, indent=1))]
        cmd += list(args)
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
        if p.returncode != expect_rc:
            raise Failure("%s: exit %d, want %d\nstderr: %s" % (" ".join(cmd), p.returncode,
                                                               expect_rc, p.stderr[-3000:]))
        for s in secrets:
            expect(s not in p.stderr and s not in p.stdout,
                   "a secret appears in topo-sync's output:\n" + p.stderr[-2000:])
        p.took = took
        return json.loads(p.stdout) if expect_rc == 0 else p


def env_files_netbox():
    nb = fixture("sources", "netbox")
    return {"files": {"devices": [os.path.join(nb, "v4-devices-page1.json"),
                                  os.path.join(nb, "v4-devices-page2.json")],
                      "racks": [os.path.join(nb, "v4-racks.json")],
                      "sites": [os.path.join(nb, "v4-sites.json")]}}


def netbox_files_labels(env, extra=None):
    src = env_files_netbox()
    src.update(extra or {})
    return env.run({"labels": {"levels": ["datacenter", "rack", "hostname"]},
                    "sources": {"netbox": src}})


def netbox_config(server, token_file, **http):
    src = {"url": server.url, "tokenFile": token_file}
    src.update(FAST)
    src.update(http)
    return {"labels": {"levels": ["datacenter", "rack", "hostname"]},
            "sources": {"netbox": src}}


def ufm_files_labels(env):
    return env.run(None, "--ufm-systems-file",
                   fixture("sources", "ufm", "ufm-resources-systems.json"), "--ufm-links-file",
                   fixture("sources", "ufm", "derived-links.json"))


def same_labels(got, want, what):
    expect(got == want and got, "%s: the labels over HTTP differ from those from the files "
                                "(%d vs %d nodes)" % (what, len(got), len(want)))


# --- NetBox -----------------------------------------------------------------------------

@case
def netbox_pages(env):
    """TLS with the test CA, a v1 token, three objects a page: every page
    followed, the labels those of the files."""
    nb = env.netbox(tls=True)
    token = env.write("token", V1_TOKEN + "\n")
    got = env.run(netbox_config(nb, token, caFile=os.path.join(env.tls(), "ca.pem"),
                                pageSize=3), secrets=[V1_TOKEN])
    same_labels(got, netbox_files_labels(env), "netbox")
    # R01 within dc-west: its name and the FNV-1a of "21:datacenter:7:dc-west;R01".
    expect(got["gpu-001"] == {P + "datacenter": "dc-west", P + "rack": "R01-b0097ac751"}, got)
    devices = nb.seen("/api/dcim/devices/")
    expect(len(devices) == 4 and all(r.status == 200 for r in devices),
           "want 4 device pages of 3, got %s" % [(r.target, r.status) for r in devices])
    expect([r.query.get("offset", ["0"])[0] for r in devices] == ["0", "3", "6", "9"],
           [r.target for r in devices])
    expect(all(r.query["exclude"] == ["config_context"] and r.query["limit"] == ["3"] and
               r.query["fields"] == [DEVICE_FIELDS] for r in devices), [r.target for r in devices])
    expect(nb.seen("/api/dcim/racks/")[0].query["fields"] == ["id,name"] and
           nb.seen("/api/dcim/sites/")[0].query["fields"] == ["id,slug,name"],
           [r.target for r in nb.seen()])
    expect(all(r.authorization == "Token " + V1_TOKEN for r in nb.seen()), "Token scheme")
    expect(sorted({r.path for r in nb.seen()}) ==
           ["/api/dcim/devices/", "/api/dcim/racks/", "/api/dcim/sites/"],
           sorted({r.path for r in nb.seen()}))
    expect(not any("exclude" in r.query for r in nb.seen("/api/dcim/racks/")), "racks query")


@case
def netbox_bearer_v2(env):
    """A v2 token (nbt_...) goes with tokenScheme Bearer; with the default
    Token scheme NetBox answers 403 and the message says what to check."""
    nb = env.netbox(token=V2_TOKEN)
    token = env.write("token", V2_TOKEN)
    got = env.run(netbox_config(nb, token, tokenScheme="Bearer"), secrets=[V2_TOKEN])
    same_labels(got, netbox_files_labels(env), "netbox")
    expect(nb.seen()[0].authorization == "Bearer " + V2_TOKEN, nb.seen()[0].authorization)
    p = env.run(netbox_config(nb, token), expect_rc=2, secrets=[V2_TOKEN, "k3yk3y"])
    expect("netbox: GET /api/dcim/devices/?limit=1000&fields=" + DEVICE_FIELDS +
           "&exclude=config_context: 403 Forbidden: "
           "Invalid v2 token" in p.stderr and "Bearer for v2 tokens" in p.stderr, p.stderr)


@case
def netbox_wrong_token(env):
    nb = env.netbox()
    token = env.write("token", "ffffffffffffffffffffffffffffffffffffffff")
    p = env.run(netbox_config(nb, token), expect_rc=2,
                secrets=["ffffffffffffffffffffffffffffffff", V1_TOKEN])
    expect("netbox: GET /api/dcim/devices/" in p.stderr and "403 Forbidden: Invalid token"
           in p.stderr, p.stderr)
    # One request, and one resent after the token file was re-read (unchanged: no more).
    expect(len(nb.seen()) == 1, [r.target for r in nb.seen()])


@case
def netbox_token_rotated(env):
    """The token rotates between topo-sync's start and its first request:
    NetBox's 403 makes it re-read the file, and the request goes again."""
    nb = env.netbox(token="1111111111111111111111111111111111111111")
    token = env.write("token", "2222222222222222222222222222222222222222")
    refused = []

    def rotate(req):
        refused.append(req.target)
        env.write("token", "1111111111111111111111111111111111111111\n")
    nb.on_refused = rotate
    got = env.run(netbox_config(nb, token), secrets=["1111111111", "2222222222"])
    same_labels(got, netbox_files_labels(env), "netbox")
    expect(len(refused) == 1, refused)


@case
def netbox_next_other_host(env):
    """A next link to another origin is not followed: the token stays."""
    nb = env.netbox()
    evil = env.serve(FakeNetBox(fixture("sources", "netbox"), env.path("server-netbox-token")))
    nb.next_origin = evil.url
    token = env.write("token", V1_TOKEN)
    p = env.run(netbox_config(nb, token, pageSize=4), expect_rc=2, secrets=[V1_TOKEN])
    expect("the next link points to http://127.0.0.1:%d, not to the configured "
           "http://127.0.0.1:%d; not followed" % (evil.server_address[1], nb.server_address[1])
           in p.stderr, p.stderr)
    expect(evil.seen() == [], "the other host got %d requests" % len(evil.seen()))
    # Behind a proxy under /netbox: links must stay under it.
    nb.prefix, nb.next_origin = "/netbox", None
    cfg = netbox_config(nb, token, pageSize=4)
    cfg["sources"]["netbox"]["url"] = nb.url + "/netbox/"
    same_labels(env.run(cfg), netbox_files_labels(env), "netbox under /netbox")
    nb.next_origin = nb.url + "/elsewhere"
    p = env.run(cfg, expect_rc=2)
    expect("the next link's path \"/elsewhere/netbox/api/dcim/devices/?" in p.stderr and
           "is not under the configured \"/netbox/\"" in p.stderr, p.stderr)


@case
def netbox_next_loop(env):
    """A next link back to a page already read (a proxy or a NetBox bug
    looping the pages) is refused at the first repeat: three requests, not
    10,000, and no labels from part of a list."""
    nb = env.netbox()

    def loop(req, offset, limit, body):
        if req.path == "/api/dcim/devices/" and offset >= 2 * limit:
            body["next"] = nb.page_link(req, limit)  # back to the second page
    nb.on_page = loop
    token = env.write("token", V1_TOKEN)
    p = env.run(netbox_config(nb, token, pageSize=3), expect_rc=2, secrets=[V1_TOKEN])
    devices = nb.seen("/api/dcim/devices/")
    expect([r.query.get("offset", ["0"])[0] for r in devices] == ["0", "3", "6"],
           [r.target for r in devices])
    expect("netbox: GET /api/dcim/devices/?limit=3&fields=" in p.stderr and
           "&offset=3: next link repeats a page already read (a loop): page 2 of the list, "
           "linked from page 3" in p.stderr, p.stderr)
    expect(p.took < 1.0, "refused after %.1f s" % p.took)


@case
def netbox_next_endless(env):
    """Links that never end (each page a new URL, empty past the count of
    10): followed no further than count / results a page + 1 = 4 pages."""
    nb = env.netbox()

    def endless(req, offset, limit, body):
        if req.path == "/api/dcim/devices/":
            body["next"] = nb.page_link(req, offset + limit)
    nb.on_page = endless
    token = env.write("token", V1_TOKEN)
    p = env.run(netbox_config(nb, token, pageSize=3), expect_rc=2, secrets=[V1_TOKEN])
    devices = nb.seen("/api/dcim/devices/")
    expect([r.query.get("offset", ["0"])[0] for r in devices] == ["0", "3", "6", "9"],
           [r.target for r in devices])
    expect("&offset=12: next link goes past the 4 pages the list's count allows (count 10, "
           "3 results a page); not followed" in p.stderr, p.stderr)
    expect(p.took < 1.0, "refused after %.1f s" % p.took)
    # The same server answering as NetBox does is read whole (the bound is no off-by-one).
    nb.on_page = None
    same_labels(env.run(netbox_config(nb, token, pageSize=3)), netbox_files_labels(env),
                "netbox")


@case
def netbox_filters(env):
    """Roles, sites and one tag go to NetBox as query parameters (escaped);
    the labels are what the parser's own filtering gives from the files."""
    nb = env.netbox()
    token = env.write("token", V1_TOKEN)
    filters = {"switchRoles": ["leaf-switch", "spine-switch"], "hostRoles": ["gpu-server"],
               "sites": ["dc-west"], "tags": ["compute"]}
    cfg = netbox_config(nb, token)
    cfg["sources"]["netbox"].update(filters)
    got = env.run(cfg)
    same_labels(got, netbox_files_labels(env, filters), "netbox with filters")
    expect(sorted(got) == ["gpu-001", "gpu-002", "gpu-003"], sorted(got))
    d = nb.seen("/api/dcim/devices/")[0]
    expect(d.query["role"] == ["leaf-switch", "spine-switch", "gpu-server"] and
           d.query["site"] == ["dc-west"] and d.query["tag"] == ["compute"], d.target)
    expect(nb.seen("/api/dcim/sites/")[0].query["slug"] == ["dc-west"], "sites by slug")
    expect(nb.seen("/api/dcim/racks/")[0].query["site"] == ["dc-west"], "racks by site")
    # Two tags: NetBox would AND them, the parser ORs: none is sent.
    cfg["sources"]["netbox"]["tags"] = ["compute", "gpu"]
    env.run(cfg)
    expect("tag" not in nb.seen("/api/dcim/devices/")[-1].query, nb.seen()[-1].target)
    # A slug NetBox does not know (escaped on the way): its 400, named.
    cfg["sources"]["netbox"]["sites"] = ["dc west&x=1"]
    p = env.run(cfg, expect_rc=2)
    expect("site=dc%20west%26x%3D1" in p.stderr and "400 Bad Request" in p.stderr, p.stderr)


@case
def netbox_fields(env):
    """The fields asked for follow what the parser reads: the custom fields
    with an NVLink field (devices and racks), the tags with a tag filter;
    the fake answers only those, and the labels are the full files'."""
    nb = env.netbox()
    token = env.write("token", V1_TOKEN)
    extra = {"nvlinkField": "nvl_domain", "tags": ["compute"]}
    levels = {"levels": ["datacenter", "rack", "nvlink", "hostname"]}
    cfg = netbox_config(nb, token)
    cfg["sources"]["netbox"].update(extra)
    cfg["labels"] = levels
    # One host has no NVLink field: it is its own NVLink domain, named by it.
    got = env.run(cfg)
    want = env.run({"labels": levels, "sources": {"netbox": dict(env_files_netbox(), **extra)}})
    expect(sum(v.get(P + "nvlink") not in (None, n) for n, v in want.items()) == 3, want)
    same_labels(got, want, "netbox with fields")
    q = {r.path: r.query["fields"] for r in nb.seen()}
    expect(q == {"/api/dcim/devices/": [DEVICE_FIELDS + ",custom_fields,tags"],
                 "/api/dcim/racks/": ["id,name,custom_fields"],
                 "/api/dcim/sites/": ["id,slug,name"]}, q)


@case
def netbox_5xx_then_ok(env):
    nb = env.netbox()
    nb.fault("/api/dcim/devices/", "status", 503, times=2)
    got = env.run(netbox_config(nb, env.write("token", V1_TOKEN)))
    same_labels(got, netbox_files_labels(env), "netbox")
    expect([r.status for r in nb.seen("/api/dcim/devices/")] == [503, 503, 200],
           [r.status for r in nb.seen("/api/dcim/devices/")])


@case
def netbox_5xx_persists(env):
    nb = env.netbox()
    nb.fault("/api/dcim/racks/", "status", 503)
    p = env.run(netbox_config(nb, env.write("token", V1_TOKEN)), expect_rc=2)
    expect("netbox: GET /api/dcim/racks/?limit=1000&fields=id,name: 503 Service Unavailable "
           "after 2 retries"
           in p.stderr, p.stderr)
    expect(p.stdout == "", "no labels from half a source: " + p.stdout[:200])


@case
def netbox_timeout(env):
    """A server that stalls: each attempt times out (400 ms), retried once."""
    nb = env.netbox()
    nb.fault("/api/dcim/devices/", "stall", 5.0)
    p = env.run(netbox_config(nb, env.write("token", V1_TOKEN), timeout="400ms", retries=1),
                expect_rc=2)
    expect("netbox: GET " in p.stderr and "/api/dcim/devices/" in p.stderr and
           "timed out" in p.stderr.lower() and "(2 attempts)" in p.stderr, p.stderr)
    expect(p.took < 3.0, "took %.1f s" % p.took)
    expect(len(nb.seen("/api/dcim/devices/")) == 2, "two attempts")


@case
def netbox_count_short(env):
    """A page set whose count disagrees with what was read: the second page
    of devices answered as the last, empty (a list that shrank while paged,
    a proxy that lost records). A failed read naming the list, not the
    facts of half the devices."""
    nb = env.netbox()
    cfg = netbox_config(nb, env.write("token", V1_TOKEN), pageSize=5)
    nb.fault("/api/dcim/devices/", "json",
             {"count": 5, "next": None, "previous": None, "results": []},
             when=lambda r: r.query.get("offset") == ["5"])
    p = env.run(cfg, expect_rc=2)
    expect(re.search(r"netbox: GET /api/dcim/devices/: count: the first page says \d+ objects, "
                     r"the 2 pages held 5; the list changed while read, or records were lost",
                     p.stderr), p.stderr[-2000:])


@case
def netbox_garbage(env):
    """An HTML error page with status 200 on the second page."""
    nb = env.netbox()
    cfg = netbox_config(nb, env.write("token", V1_TOKEN), pageSize=5)
    nb.fault("/api/dcim/devices/", "garbage", when=lambda r: r.query.get("offset") == ["5"])
    p = env.run(cfg, expect_rc=2)
    expect("netbox: GET /api/dcim/devices/?limit=5&fields=name%2Crole%2Csite%2Crack"
           "&exclude=config_context&offset=5:1:1:"
           in p.stderr, p.stderr)
    pages = [r.query.get("offset", ["0"])[0] for r in nb.seen("/api/dcim/devices/")]
    expect(pages == ["0", "5"], "garbage is not retried: %s" % pages)


@case
def netbox_body_limit(env):
    nb = env.netbox()
    p = env.run(netbox_config(nb, env.write("token", V1_TOKEN), maxResponseBytes=2000),
                expect_rc=2)
    expect("exceeds the limit of 2000 bytes" in p.stderr and "/api/dcim/devices/" in p.stderr,
           p.stderr)


# --- UFM --------------------------------------------------------------------------------

def ufm_targets(api):
    """What topo-sync asks UFM for: the switches, gateways and routers (not
    the hosts: the links name them), then the links."""
    return [api + "/resources/systems?type=" + t for t in ("switch", "gateway", "router")] + \
        [api + "/resources/links"]


def ufm_basic_config(server, env, **http):
    src = {"url": server.url, "usernameFile": env.write("ufm-user", UFM_USER + "\n"),
           "passwordFile": env.write("ufm-password", UFM_PASSWORD + "\n")}
    src.update(FAST)
    src.update(http)
    return {"sources": {"ufm": src}}


@case
def ufm_basic(env):
    """TLS, HTTP Basic from a username file and a password file (with a
    blank inside): the labels those of the saved responses."""
    ufm = env.ufm(tls=True)
    got = env.run(ufm_basic_config(ufm, env, caFile=os.path.join(env.tls(), "ca.pem")),
                  secrets=[UFM_PASSWORD])
    same_labels(got, ufm_files_labels(env), "ufm")
    want = "Basic " + base64.b64encode((UFM_USER + ":" + UFM_PASSWORD).encode()).decode()
    expect([(r.target, r.authorization == want) for r in ufm.seen()] ==
           [(t, True) for t in ufm_targets("/ufmRest")], [r.target for r in ufm.seen()])


@case
def ufm_token(env):
    """A UFM access token, by flags alone: /ufmRestV3 with "Basic <token>"."""
    ufm = env.ufm()
    token = env.write("ufm-token", UFM_TOKEN + "\n")
    got = env.run(None, "--ufm-url", ufm.url, "--ufm-token-file", token, secrets=[UFM_TOKEN])
    same_labels(got, ufm_files_labels(env), "ufm")
    expect([(r.target, r.authorization) for r in ufm.seen()] ==
           [(t, "Basic " + UFM_TOKEN) for t in ufm_targets("/ufmRestV3")],
           [r.target for r in ufm.seen()])


@case
def ufm_old_links(env):
    """A UFM whose links carry no node descriptions (before 6.20): the
    hosts are asked for too, and the labels are the files' all the same."""
    ufm = env.ufm()
    ufm.old_links = True
    token = env.write("ufm-token", UFM_TOKEN + "\n")
    got = env.run(None, "--ufm-url", ufm.url, "--ufm-token-file", token,
                  secrets=[UFM_TOKEN])
    same_labels(got, ufm_files_labels(env), "ufm")
    api = "/ufmRestV3/resources/"
    want = [api + "systems?type=" + t for t in ("switch", "gateway", "router")] + \
        [api + "links", api + "systems?type=host"]
    expect([r.target for r in ufm.seen()] == want, [r.target for r in ufm.seen()])


@case
def ufm_switch_only_files(env):
    """UFM's `?type=switch` response saved (the fixture's switch records)
    with the links: the labels of the full systems response, the hosts and
    their adapters read from the links' node descriptions."""
    with open(fixture("sources", "ufm", "ufm-resources-systems.json")) as f:
        switches = [r for r in json.load(f) if r["type"] == "switch"]
    path = env.write("switch-systems.json", json.dumps(switches))
    got = env.run(None, "--ufm-systems-file", path, "--ufm-links-file",
                  fixture("sources", "ufm", "derived-links.json"))
    want = ufm_files_labels(env)
    expect(len(want) == 1330, len(want))
    same_labels(got, want, "ufm")


@case
def ufm_wrong_password(env):
    ufm = env.ufm()
    cfg = ufm_basic_config(ufm, env)
    env.write("ufm-password", "not-the-password")
    p = env.run(cfg, expect_rc=2, secrets=["not-the-password", UFM_PASSWORD])
    expect("ufm: GET /ufmRest/resources/systems?type=switch: 401 Unauthorized" in p.stderr and
           "the credentials were refused" in p.stderr, p.stderr)


@case
def ufm_password_rotated(env):
    """The password changes under topo-sync: the 401 makes it re-read the
    files, the request goes again; the flags name the user and the file."""
    ufm = env.ufm()
    password = env.write("ufm-password", "old-password\n")

    def rotate(req):
        env.write("ufm-password", UFM_PASSWORD)
    ufm.on_refused = rotate
    got = env.run(None, "--ufm-url", ufm.url, "--ufm-username", UFM_USER, "--ufm-password-file",
                  password, secrets=[UFM_PASSWORD, "old-password"])
    same_labels(got, ufm_files_labels(env), "ufm")
    expect([r.status for r in ufm.seen()] == [401, 200, 200, 200, 200],
           [r.status for r in ufm.seen()])


@case
def ufm_flags(env):
    """Flags that do not go together stop topo-sync before any request."""
    ufm = env.ufm()
    pw = env.write("ufm-password", UFM_PASSWORD)
    systems = fixture("sources", "ufm", "ufm-resources-systems.json")
    p = env.run(None, "--ufm-url", ufm.url, "--ufm-systems-file", systems, expect_rc=2)
    expect("--ufm-url and --ufm-systems-file exclude each other" in p.stderr, p.stderr)
    p = env.run(None, "--ufm-username", UFM_USER, "--ufm-password-file", pw, expect_rc=2)
    expect("only with a URL" in p.stderr, p.stderr)
    p = env.run(None, "--ufm-url", ufm.url, expect_rc=2)
    expect("ufm: credentials required" in p.stderr, p.stderr)
    p = env.run(None, "--ufm-url", ufm.url, "--ufm-username", UFM_USER, "--ufm-password-file",
                pw, "--ufm-token-file", pw, expect_rc=2, secrets=[UFM_PASSWORD])
    expect("not both" in p.stderr, p.stderr)
    p = env.run(None, "--netbox-url", "https://admin:pw@netbox.example.com", expect_rc=2)
    expect("user information" in p.stderr and "admin:pw" not in p.stderr, p.stderr)
    expect(ufm.seen() == [], "requests were made")


# --- LLDP -------------------------------------------------------------------------------

class Collector(FakeSource):
    """An LLDP collector: GET /lldp answers {host: lldpcli document}, with a
    bearer token."""

    def __init__(self, docs, token):
        super().__init__()
        self.body = json.dumps(docs).encode()
        self.token = token

    def route(self, h, req):
        if req.authorization != "Bearer " + self.token:
            return h.send_json(req, 401, {"error": "unauthorized"})
        if req.path != "/lldp":
            return h.send_json(req, 404, {"error": "not found"})
        return h.send(req, 200, self.body)


@case
def lldp_url(env):
    """The same documents from a collector and from a directory plan the
    same labels."""
    docs, lldp_dir = {}, env.path("lldp")
    os.mkdir(lldp_dir)
    for host, name in [("node-a", "sonic-lldpctl.json"), ("node-b", "sonic-lldpctl.json"),
                       ("node-c", "derived-json0-interface_only.json")]:
        shutil.copy(fixture("sources", "lldp", name), os.path.join(lldp_dir, host + ".json"))
        with open(fixture("sources", "lldp", name)) as f:
            docs[host] = json.load(f)
    col = env.serve(Collector(docs, "lldp-t0ken"))
    cfg = {"labels": {"levels": ["leaf", "hostname"]},
           "sources": {"lldp": dict(FAST, url=col.url + "/lldp?format=json",
                                    tokenFile=env.write("lldp-token", "lldp-t0ken"))}}
    got = env.run(cfg, secrets=["lldp-t0ken"])
    want = env.run(None, "--lldp-dir", lldp_dir, "--levels", "leaf,hostname")
    same_labels(got, want, "lldp")
    expect(sorted(got) == ["node-a", "node-b", "node-c"], sorted(got))
    expect([r.target for r in col.seen()] == ["/lldp?format=json"], col.seen())
    # Not an object of hosts: refused, named.
    col.body = b"[1, 2]"
    p = env.run(cfg, expect_rc=2)
    expect("lldp: GET /lldp?format=json: expected an object of host names" in p.stderr,
           p.stderr)


# --- hostile bodies (issue 33 item 4) --------------------------------------------------

# A body of empty objects: 3 bytes of text, a tree of over 70 times that.
HOSTILE_BYTES = 16 * 1024 * 1024
# The process's peak RSS a 16 MiB hostile body may cost (the goal).
HOSTILE_RSS_MAX = 512 * 1024 * 1024


def empty_objects(prefix, suffix, size):
    """prefix [{},{},...] suffix, size bytes in all."""
    n = (size - len(prefix) - len(suffix) - 2) // 3
    return prefix + b"[" + b"{}," * (n - 1) + b"{}]" + suffix


class Canned(FakeSource):
    """Answers every GET with one body (no authentication checked)."""

    def __init__(self, body):
        super().__init__()
        self.body = body

    def route(self, h, req):
        return h.send(req, 200, self.body)


# Runs argv[2:] as its child and writes the child's peak RSS (kB, wait4's
# ru_maxrss) to argv[1]; exits as the child did. Linux keeps a process's
# peak RSS across exec, and a child forked from this test starts from the
# test's own (tens of MiB: the fake servers and their bodies live here):
# forked from this small interpreter instead, topo-sync's peak is its own.
RSS_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(ru.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_rss(env, config, *args):
    """topo-sync --once as env.run runs it; (process, peak RSS in bytes)
    of topo-sync alone (RSS_LAUNCHER)."""
    cmd = [ARGS.topo_sync, "--once", "--dry-run", "--print-labels", "--log-format", "text",
           "--config", env.write("sync-%d.yaml" % time.monotonic_ns(), json.dumps(config))]
    cmd += list(args)
    rss_file = env.path("rss")
    with open(env.path("out"), "w+") as out, open(env.path("err"), "w+") as err:
        p = subprocess.Popen([sys.executable, "-c", RSS_LAUNCHER, rss_file] + cmd, stdout=out,
                             stderr=err, start_new_session=True)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
            raise Failure("topo-sync did not finish in 120 s: " + " ".join(cmd))
        out.seek(0)
        err.seek(0)
        p.stdout, p.stderr = out.read(), err.read()
    with open(rss_file) as f:
        return p, int(f.read()) * 1024


def refused_within(env, config, what, why="needs more than"):
    p, rss = run_rss(env, config)
    print("%s: exit %d, peak RSS %d MiB" % (what, p.returncode, rss >> 20))
    expect(p.returncode == 2, "exit %d, want 2: %s" % (p.returncode, p.stderr[-2000:]))
    expect(what in p.stderr and why in p.stderr, p.stderr[-2000:])
    if os.environ.get("TOPO_E2E_SANITIZED"):
        return  # ASan's allocator (redzones, quarantine) is not the one bounded
    expect(rss <= HOSTILE_RSS_MAX, "topo-sync peaked at %d MiB RSS (at most %d MiB): %s"
           % (rss >> 20, HOSTILE_RSS_MAX >> 20, p.stderr[-500:]))


@case
def lldp_hostile_body(env):
    """A 16 MiB collector answer of empty objects is refused with a message
    naming the source and the memory it would take, and topo-sync's RSS
    stays under 512 MiB (it took 1.26 GB); a real answer still plans."""
    body = empty_objects(b'{"h1":{"lldp":{"interface":', b"}}}", HOSTILE_BYTES)
    col = env.serve(Canned(body))
    cfg = {"labels": {"levels": ["leaf", "hostname"]},
           "sources": {"lldp": dict(FAST, url=col.url + "/lldp")}}
    # One host's document is bounded as a host file is (1 MiB), by name.
    refused_within(env, cfg, 'lldp: GET /lldp: "h1": its lldpd document is %d bytes, more than '
                   "the 1048576" % (len(body) - len(b'{"h1":}')), "refused")
    # Hosts within that bound, each of empty objects: each host's parse is
    # refused by its own budget (16 times its document).
    host = empty_objects(b'{"lldp":{"interface":', b"}}", 1024 * 1024 - 64)
    col.body = b"{" + b",".join(b'"h%02d":%s' % (i, host) for i in range(16)) + b"}"
    refused_within(env, cfg, 'lldp: GET /lldp: "h00": the body of %d bytes' % len(host))
    # Hosts without neighbours cost their facts and labels (540 bytes each,
    # 25 times their text): a million of them took 554 MiB.
    col.body = b"{" + b",".join(b'"h%07d":{"lldp":{}}' % i for i in range(100001)) + b"}"
    refused_within(env, cfg, "lldp: GET /lldp: more than 100000 hosts in one answer", "refused")
    with open(fixture("sources", "lldp", "sonic-lldpctl.json")) as f:
        col.body = json.dumps({"node-a": json.load(f)}).encode()
    p, rss = run_rss(env, cfg)
    expect(p.returncode == 0, p.stderr[-2000:])
    expect(sorted(json.loads(p.stdout)) == ["node-a"], p.stdout[:500])


@case
def lldp_collector_bad_host(env):
    """One host's document in a collector's answer that cannot be read (over
    1 MiB, malformed inside its brackets, a scalar) is that host's problem:
    skipped with a warning naming it, the other hosts planned (the whole
    source failed, --once exited 2). An answer that is not one JSON object
    (cut in the middle), or where no host can be read, still fails."""
    with open(fixture("sources", "lldp", "sonic-lldpctl.json")) as f:
        doc = f.read()
    big = '{"lldp":{"interface":{"eth0":{"descr":"%s"}}}}' % ("x" * (1024 * 1024 + 10))
    body = '{"node-a":%s,"h-big":%s,"h-bad":{"lldp":{"interface" 1}},"h-scalar":7,"node-b":%s}' % (
        doc, big, doc)
    col = env.serve(Canned(body.encode()))
    cfg = {"labels": {"levels": ["leaf", "hostname"]},
           "sources": {"lldp": dict(FAST, url=col.url + "/lldp")}}
    p, _ = run_rss(env, cfg)
    expect(p.returncode == 0, p.stderr[-2000:])
    expect(sorted(json.loads(p.stdout)) == ["node-a", "node-b"], p.stdout[:500])
    for host, why in (("h-big", ": its lldpd document is 1048630 bytes"),
                      ("h-bad", ":1:22: ':' expected"),
                      ("h-scalar", ": expected an lldpd document (an object), got an integer")):
        warn = 'source lldp: skipped lldp: GET /lldp: \\"%s\\"%s' % (host, why)  # logfmt
        expect(p.stderr.count(warn) == 1, (warn, p.stderr[-3000:]))
    expect("5 hosts (3 skipped)" in p.stderr, p.stderr[-2000:])
    col.body = body.encode()[: len(body) // 2]
    p, _ = run_rss(env, cfg)
    expect(p.returncode == 2, p.stderr[-2000:])
    col.body = b'{"h-bad":{"lldp":{"interface" 1}},"h-scalar":7}'
    p, _ = run_rss(env, cfg)
    expect(p.returncode == 2 and 'GET /lldp: "h-bad"' in p.stderr.splitlines()[-1],
           p.stderr[-2000:])


# What an accepted body may cost: its size this many times over in RSS,
# above a run with a tiny body (the goal).
ACCEPTED_RSS_RATIO = 8


@case
def lldp_collector_compact(env):
    """A real collector answer, compact, of 6 MiB (450 hosts of a SONiC
    switch's lldpd document, 14 KB each) plans every host and costs at
    most 8 times its size in RSS over a one-host answer: each host's
    document is parsed and freed on its own. Parsed as one tree, jansson
    took 16 times the body."""
    with open(fixture("sources", "lldp", "sonic-lldpctl.json")) as f:
        doc = json.load(f)
    col = env.serve(Canned(json.dumps({"node-0000": doc}, separators=(",", ":")).encode()))
    cfg = {"labels": {"levels": ["leaf", "hostname"]},
           "sources": {"lldp": dict(FAST, url=col.url + "/lldp")}}
    p, base = run_rss(env, cfg)
    expect(p.returncode == 0, p.stderr[-2000:])
    hosts = ["node-%04d" % i for i in range(450)]
    col.body = json.dumps({h: doc for h in reversed(hosts)}, separators=(",", ":")).encode()
    p, rss = run_rss(env, cfg)
    print("%d hosts, %.1f MiB compact: peak RSS %d MiB, %d MiB over one host's (%.1f times "
          "the body)" % (len(hosts), len(col.body) / 2**20, rss >> 20, (rss - base) >> 20,
                         (rss - base) / len(col.body)))
    expect(p.returncode == 0, p.stderr[-2000:])
    expect(sorted(json.loads(p.stdout)) == hosts, p.stdout[:500])
    if os.environ.get("TOPO_E2E_SANITIZED"):
        print("sanitizer build: ASan's allocator is not the one measured; bound not checked")
        return
    expect(rss - base <= ACCEPTED_RSS_RATIO * len(col.body),
           "peak RSS %d MiB, %d MiB over one host's, more than %d times the body of %d bytes"
           % (rss >> 20, (rss - base) >> 20, ACCEPTED_RSS_RATIO, len(col.body)))


class DevicesPage(FakeSource):
    """NetBox: the devices list is one canned page; every other list is empty."""

    def __init__(self, devices):
        super().__init__()
        self.devices = devices

    def route(self, h, req):
        if "/api/dcim/devices/" in req.target:
            return h.send(req, 200, self.devices)
        return h.send(req, 200, b'{"count":0,"next":null,"previous":null,"results":[]}')


@case
def netbox_page_compact(env):
    """A compact NetBox devices page of 4 MiB (2,000 devices of the v4
    sample, as MAX_PAGE_SIZE=0 or a large limit gives) labels every host
    and costs at most 8 times its size in RSS over a one-device page: its
    results are parsed and freed one at a time. Parsed as one tree, jansson
    took 9 times the body."""
    with open(fixture("sources", "netbox", "v4-devices-page1.json")) as f:
        gpu = json.load(f)["results"][0]

    def page(names):
        results = [dict(gpu, id=1000 + i, name=n, display=n) for i, n in enumerate(names)]
        return json.dumps({"count": len(results), "next": None, "previous": None,
                           "results": results}, separators=(",", ":")).encode()
    nb = env.serve(DevicesPage(page(["gpu-00000"])))
    cfg = netbox_config(nb, env.write("token", "t0ken\n"))
    p, base = run_rss(env, cfg)
    expect(p.returncode == 0, p.stderr[-2000:])
    hosts = ["gpu-%05d" % i for i in range(2000)]
    nb.devices = page(hosts)
    p, rss = run_rss(env, cfg)
    print("%d devices, %.1f MiB compact: peak RSS %d MiB, %d MiB over one device's (%.1f times "
          "the body)" % (len(hosts), len(nb.devices) / 2**20, rss >> 20, (rss - base) >> 20,
                         (rss - base) / len(nb.devices)))
    expect(p.returncode == 0, p.stderr[-2000:])
    expect(sorted(json.loads(p.stdout)) == hosts, p.stdout[:500])
    if os.environ.get("TOPO_E2E_SANITIZED"):
        print("sanitizer build: ASan's allocator is not the one measured; bound not checked")
        return
    expect(rss - base <= ACCEPTED_RSS_RATIO * len(nb.devices),
           "peak RSS %d MiB, %d MiB over one device's, more than %d times the body of %d bytes"
           % (rss >> 20, (rss - base) >> 20, ACCEPTED_RSS_RATIO, len(nb.devices)))


@case
def ufm_hostile_record(env):
    """A UFM systems list whose one record holds a 16 MiB array: refused,
    named, under 512 MiB RSS, over HTTP and from a file (read a record at
    a time, the record itself is the tree)."""
    body = empty_objects(b'[{"system_guid":"aa00000000000001","type":"switch","ports":',
                         b"}]", HOSTILE_BYTES)
    ufm = env.serve(Canned(body))
    refused_within(env, ufm_basic_config(ufm, env),
                   "ufm: GET /ufmRest/resources/systems?type=switch: the body of")
    with open(env.path("systems.json"), "wb") as f:
        f.write(body)
    refused_within(env, {"sources": {"ufm": {"systemsFile": env.path("systems.json")}}},
                   "the body of %d bytes" % len(body))


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo-sync")
    ap.add_argument("--source")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--case")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    if not ARGS.topo_sync or not ARGS.source or ARGS.case not in CASES:
        ap.error("--topo-sync, --source and --case NAME (one of --list) are required")
    env = Env()
    t0 = time.monotonic()
    try:
        CASES[ARGS.case](env)
    except Failure as e:
        print("FAIL %s: %s" % (ARGS.case, e))
        return 1
    finally:
        env.close()
    print("ok: %s (%.1f s)" % (ARGS.case, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
