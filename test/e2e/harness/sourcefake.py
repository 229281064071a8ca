"""The base of the fake infrastructure APIs topo-sync fetches from
(harness.fakenetbox, harness.fakeufm, the LLDP collector of
sync_fetch_e2e.py): a threaded HTTP/1.1 server on 127.0.0.1 (plain, or TLS
with the test PKI) in the test's own process, every request recorded, and
faults a test arms per path:

    server.fault("/api/dcim/devices/", "status", 503, times=2)
    server.fault("/api/dcim/devices/", "stall", 5.0)      # seconds, then 200
    server.fault("/api/dcim/devices/", "garbage")         # 200, not JSON
    server.fault("/api/dcim/devices/", "huge", 1 << 20)   # 200, a body that size

A fault matches requests whose path (without the query) starts with its
prefix, and for which `when(request)` is true when given; `times` bounds
how many requests it takes (None: all). The server's
own routes (subclasses' `route`) answer everything else.
"""

import json
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Request:
    """One request as the server saw it."""

    def __init__(self, method, target, headers):
        self.method = method
        self.target = target  # path and query, as sent
        url = urllib.parse.urlsplit(target)
        self.path = url.path
        self.query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        self.authorization = headers.get("Authorization")
        self.status = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "topo-fake-source/1"

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    def do_GET(self):
        req = Request(self.command, self.path, self.headers)
        srv = self.server
        with srv.lock:
            srv.requests.append(req)
        try:
            if not srv.apply_fault(self, req):
                srv.route(self, req)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True  # the client gave up (a timeout): not an error

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def send(self, req, status, body, content_type="application/json", headers=()):
        req.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, req, status, obj, headers=()):
        self.send(req, status, (json.dumps(obj) + "\n").encode(), headers=headers)


class FakeSource(ThreadingHTTPServer):
    """Subclasses implement route(handler, request)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, pki=None):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.requests = []
        self.faults = []
        self.scheme = "https" if pki else "http"
        if pki:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(pki + "/server.pem", pki + "/server.key")
            self.socket = ctx.wrap_socket(self.socket, server_side=True)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def server_bind(self):
        # HTTPServer.server_bind would look up our FQDN: slow without DNS.
        import socketserver
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address):
        pass  # a client that hung up (a timeout, a body over its limit): expected here

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % (self.scheme, self.server_address[1])

    def close(self):
        self.shutdown()
        self.server_close()

    # --- faults ------------------------------------------------------------------------

    def fault(self, prefix, kind, arg=None, times=None, when=None):
        with self.lock:
            self.faults.append({"prefix": prefix, "kind": kind, "arg": arg, "left": times,
                                "when": when})

    def apply_fault(self, h, req):
        with self.lock:
            hit = None
            for f in self.faults:
                if req.path.startswith(f["prefix"]) and f["left"] != 0 and \
                        (f["when"] is None or f["when"](req)):
                    if f["left"] is not None:
                        f["left"] -= 1
                    hit = f
                    break
        if hit is None:
            return False
        kind, arg = hit["kind"], hit["arg"]
        if kind == "status":
            h.send_json(req, arg, {"detail": "injected status %d" % arg})
        elif kind == "stall":
            time.sleep(arg)
            return False  # then answers normally (the client has given up by then)
        elif kind == "garbage":
            h.send(req, 200, b"<html><body>502 Bad Gateway</body></html>\n", "text/html")
        elif kind == "json":
            h.send_json(req, 200, arg(req) if callable(arg) else arg)
        elif kind == "huge":
            h.send(req, 200, b"[" + b" " * arg + b"]")
        else:
            raise ValueError("unknown fault " + kind)
        return True

    # --- what happened -----------------------------------------------------------------

    def seen(self, prefix=""):
        with self.lock:
            return [r for r in self.requests if r.path.startswith(prefix)]
