"""A fake NVIDIA UFM Enterprise REST API over fixtures/sources/ufm (the real
systems dump and the links derived from it; see its README), for
topo-sync's fetch tests.

As UFM does (SOURCE-FORMATS.md section 4):
  - GET /ufmRest/resources/systems and /ufmRest/resources/links with HTTP
    Basic (`curl -u user:password`), checked against a credentials file
    holding "user:password" read per request;
  - the same under /ufmRestV3/ with an access token sent as
    "Authorization: Basic <token>" (literally "Basic"), checked against a
    token file read per request;
  - 401 with WWW-Authenticate for missing or wrong credentials;
  - the systems list's documented `type` filter (switch/host/gateway/router,
    UFM REST API guide v6.11 to v6.22, "Systems REST API", "Possible
    Filters"): only the records of that type, so `?type=switch` leaves out
    hosts and SHArP submodules; other query parameters are ignored here.
The bodies are the fixture files' bytes, unchanged; a filtered list is the
fixture's records of that type, re-serialised. With `old_links` set, the
links are those of a UFM before 6.20, whose REST API guide's example link
(v6.11 to v6.19, "Links REST API") has neither `*_port_name` nor
`*_port_node_description`: those members are left out.

Test hooks: `on_refused` (called with the request when credentials are
refused) and the faults of harness.sourcefake.
"""

import base64
import json
import os

from harness.sourcefake import FakeSource


class FakeUFM(FakeSource):
    def __init__(self, fixtures, credentials_file, token_file=None, pki=None):
        super().__init__(pki)
        self.bodies = {}
        for what, name in (("systems", "ufm-resources-systems.json"),
                           ("links", "derived-links.json")):
            with open(os.path.join(fixtures, name), "rb") as f:
                self.bodies[what] = f.read()
        self.systems = json.loads(self.bodies["systems"])
        self.old_links = False
        self.credentials_file = credentials_file
        self.token_file = token_file
        self.on_refused = None

    @staticmethod
    def read(path):
        if not path:
            return None
        with open(path) as f:
            return f.read().strip()

    def route(self, h, req):
        for api in ("/ufmRest/resources/", "/ufmRestV3/resources/"):
            if req.path.startswith(api) and req.path[len(api):] in self.bodies:
                break
        else:
            return h.send_json(req, 404, {"error": "Not Found"})
        if api == "/ufmRest/resources/":
            creds = self.read(self.credentials_file)
            want = "Basic " + base64.b64encode(creds.encode()).decode() if creds else None
        else:
            token = self.read(self.token_file)
            want = "Basic " + token if token else None
        if want is None or req.authorization != want:
            if self.on_refused:
                self.on_refused(req)
            return h.send(req, 401, b"Unauthorized\n", "text/plain",
                          [("WWW-Authenticate", 'Basic realm="UFM"')])
        what = req.path[len(api):]
        if what == "systems" and "type" in req.query:
            want = req.query["type"][-1]
            return h.send_json(req, 200, [r for r in self.systems if r.get("type") == want])
        if what == "links" and self.old_links:
            gone = {e + f for e in ("source_", "destination_")
                    for f in ("port_name", "port_node_description")}
            return h.send_json(req, 200, [{k: v for k, v in r.items() if k not in gone}
                                          for r in json.loads(self.bodies["links"])])
        return h.send(req, 200, self.bodies[what])
