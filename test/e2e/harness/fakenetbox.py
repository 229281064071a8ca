"""A fake NetBox REST API (4.x) over the v4 payloads of fixtures/sources/netbox
(make_v4.py's, see its README), for topo-sync's fetch tests.

What it does as NetBox does (SOURCE-FORMATS.md section 3):
  - /api/dcim/{devices,racks,sites,interfaces,cables}/ list endpoints, the
    trailing slash required (without it: 301 to the slashed path, as
    Django's APPEND_SLASH answers);
  - pagination {count, next, previous, results} by limit and offset
    (default 50, at most 1000), `next` an absolute URL on the server's own
    origin carrying the request's other parameters;
  - filters: role= (device role slug; several OR), site= (site slug; several
    OR; devices, racks, interfaces and cables), slug= (sites), tag= (tag slug;
    several AND, NetBox's TagFilter), an unknown role or site slug answered
    400 {"role": ["Select a valid choice. ..."]}; exclude=config_context
    (devices carry a config_context unless it is asked);
  - fields=a,b,c (NetBox 4.0+, "Dynamic REST API Fields"): each record with
    only those of its top-level fields, in its own order; names a record
    lacks are skipped, as NetBox's serializer skips names it does not have
    (BaseModelSerializer.fields); nested objects stay as they are (NetBox
    renders them brief whatever `fields` says); the last `fields` wins (Django's
    QueryDict.get); other query parameters NetBox does not know are ignored,
    as NetBox ignores them;
  - authentication: "Authorization: Token <v1 token>" or "Bearer nbt_<key>.<token>"
    (v2, NetBox 4.5+), checked against the token file read per request (so a
    test rotates it by rewriting the file); no header, a malformed one or a
    wrong token: 403 with NetBox's `detail` messages (NetBox answers 403, not
    401).

Test hooks: `prefix` (a path NetBox is served under, "/netbox": behind a
reverse proxy), `next_origin` (what the `next` links start with instead of
the server's own origin), `on_refused` (called with the request when a token is
refused, e.g. to rotate the client's token file), `on_page` (called with the
request, its offset and limit and the page about to be sent, which it may
change: a `next` link that loops or never ends; page_link builds links as
the server does), and the faults of harness.sourcefake.

Run alone for a look:  PYTHONPATH=test/e2e python3 -m harness.fakenetbox
"""

import json
import os
import time
import urllib.parse

from harness.sourcefake import FakeSource

KINDS = ("devices", "racks", "sites", "interfaces", "cables")
DEFAULT_LIMIT, MAX_LIMIT = 50, 1000


def load_fixtures(fixtures):
    """Every list's records, from the v4 fixture pages."""
    def results(*names):
        out = []
        for n in names:
            with open(os.path.join(fixtures, n)) as f:
                out += json.load(f)["results"]
        return out
    return {
        "devices": results("v4-devices-page1.json", "v4-devices-page2.json"),
        "racks": results("v4-racks.json"),
        "sites": results("v4-sites.json"),
        "interfaces": results("v4-interfaces.json"),
        "cables": results("v4-cables.json"),
    }


def slug(brief):
    return (brief or {}).get("slug")


class FakeNetBox(FakeSource):
    def __init__(self, fixtures, token_file, pki=None):
        super().__init__(pki)
        self.data = load_fixtures(fixtures)
        self.token_file = token_file
        self.prefix = ""
        self.next_origin = None
        self.on_refused = None
        self.on_page = None
        self.device_site = {d["id"]: slug(d.get("site")) for d in self.data["devices"]}

    # --- authentication ----------------------------------------------------------------

    def refuse(self, h, req, detail):
        if self.on_refused:
            self.on_refused(req)
        h.send_json(req, 403, {"detail": detail})

    def authorised(self, h, req):
        with open(self.token_file) as f:
            token = f.read().strip()
        got = req.authorization
        if not got:
            self.refuse(h, req, "Authentication credentials were not provided.")
            return False
        scheme, _, value = got.partition(" ")
        if scheme not in ("Token", "Bearer") or not value:
            self.refuse(h, req, 'Invalid authorization header: Must be in the form '
                                '"Bearer <key>.<token>" or "Token <token>"')
            return False
        v2 = value.startswith("nbt_")
        if value != token or (scheme == "Bearer") != v2:
            self.refuse(h, req, "Invalid v2 token" if v2 else "Invalid token")
            return False
        return True

    # --- lists -------------------------------------------------------------------------

    def filtered(self, kind, q):
        """The records of a list after its filters; a str for a 400."""
        rows = self.data[kind]
        sites = q.get("slug" if kind == "sites" else "site", [])
        known_sites = {s["slug"] for s in self.data["sites"]}
        for s in sites:
            if s not in known_sites:
                return "site", s
        if sites:
            if kind == "sites":
                rows = [r for r in rows if r["slug"] in sites]
            elif kind in ("devices", "racks"):
                rows = [r for r in rows if slug(r.get("site")) in sites]
            elif kind == "interfaces":
                rows = [r for r in rows if self.device_site.get(r["device"]["id"]) in sites]
            else:
                rows = [r for r in rows if any(
                    self.device_site.get(((t.get("object") or {}).get("device") or {}).get("id"))
                    in sites for t in r.get("a_terminations", []) + r.get("b_terminations", []))]
        if kind == "devices":
            roles = q.get("role", [])
            known_roles = {slug(d.get("role")) for d in self.data["devices"]}
            for r in roles:
                if r not in known_roles:
                    return "role", r
            if roles:
                rows = [d for d in rows if slug(d.get("role")) in roles]
            for t in q.get("tag", []):  # AND, as NetBox's TagFilter
                rows = [d for d in rows if t in {x.get("slug") for x in d.get("tags", [])}]
            if "config_context" not in q.get("exclude", []):
                rows = [dict(d, config_context={"ntp": ["10.0.0.1"], "rendered": True})
                        for d in rows]
        return rows

    def page_link(self, req, offset):
        params = [(k, v) for k, vs in req.query.items() for v in vs if k != "offset"]
        if offset > 0:
            params.append(("offset", str(offset)))
        origin = self.next_origin or self.url
        return "%s%s?%s" % (origin, req.path, urllib.parse.urlencode(params))

    def route(self, h, req):
        if not req.path.startswith(self.prefix + "/"):
            return h.send_json(req, 404, {"detail": "Not found."})
        parts = req.path[len(self.prefix):].split("/")
        # ["", "api", "dcim", kind, ""]
        if len(parts) == 4 and parts[:3] == ["", "api", "dcim"] and parts[3] in KINDS:
            return h.send(req, 301, b"", "text/html", [("Location", req.path + "/")])
        if len(parts) != 5 or parts[:3] != ["", "api", "dcim"] or parts[3] not in KINDS \
                or parts[4] != "":
            return h.send_json(req, 404, {"detail": "Not found."})
        if not self.authorised(h, req):
            return None
        try:
            limit = int(req.query.get("limit", [DEFAULT_LIMIT])[-1])
            offset = int(req.query.get("offset", ["0"])[-1])
        except ValueError:
            return h.send_json(req, 400, {"detail": "Invalid limit or offset."})
        limit = MAX_LIMIT if limit <= 0 or limit > MAX_LIMIT else limit
        rows = self.filtered(parts[3], req.query)
        if isinstance(rows, tuple):
            field, value = rows
            return h.send_json(req, 400, {field: ["Select a valid choice. %s is not one of the "
                                                  "available choices." % value]})
        page = rows[offset:offset + limit]
        if req.query.get("fields", [""])[-1]:
            want = set(req.query["fields"][-1].split(","))
            page = [{k: v for k, v in r.items() if k in want} for r in page]
        more = offset + limit < len(rows)
        body = {
            "count": len(rows),
            "next": self.page_link(req, offset + limit) if more else None,
            "previous": self.page_link(req, max(0, offset - limit)) if offset > 0 else None,
            "results": page,
        }
        if self.on_page:
            self.on_page(req, offset, limit, body)
        return h.send_json(req, 200, body)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--fixtures", default=os.path.join(here, "..", "..", "..", "fixtures",
                                                       "sources", "netbox"))
    ap.add_argument("--token-file", required=True)
    args = ap.parse_args()
    server = FakeNetBox(args.fixtures, args.token_file)
    print(server.url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
