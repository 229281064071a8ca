#!/usr/bin/env python3
"""A fake HTTPS server for topo's HTTP client tests (Python 3 standard library only).

    fake_http_server.py --pki DIR [--token-file FILE] [--exit-on-stdin-eof]
                        [--lifetime SECONDS] [--verbose]
    fake_http_server.py --self-test [--pki-script make_test_pki.sh]

DIR holds the files test/e2e/make_test_pki.sh writes (ca.pem, server.pem,
server.key). Two listeners are bound on 127.0.0.1 with port 0, both HTTP/1.1
with keep-alive over TLS:

    main   no client certificate asked for
    mtls   a client certificate signed by DIR/ca.pem required (CERT_REQUIRED)

Once both listen, one line "MAIN_PORT MTLS_PORT" is printed on stdout. The
server stops on SIGTERM, after --lifetime seconds (default 300), and, with
--exit-on-stdin-eof, when its stdin reaches end of file (the parent closed
the pipe or died).

Endpoints (both listeners; query parameters in brackets). KEY names a counter
(default: the path); each counter counts the requests that named it since the
last /control/reset.

    GET  /json                  fixed JSON list
    ANY  /echo                  JSON: method, path, selected headers, body
    GET  /whoami                JSON: the client certificate's CN (mtls)
    ANY  /auth/<rest>           <rest>, but only with "Authorization: Bearer T"
                                where T is the current content of --token-file
                                (re-read per request, so a test rotates it by
                                rewriting the file); otherwise 401
    ANY  /basic/<rest>          <rest>, but only with "Authorization: Basic B" where B
                                is the base64 of the current content of --token-file
                                ("user:password", re-read per request); otherwise 401
    ANY  /status/CODE[n,key,retry_after]
                                status CODE (Kubernetes Status body, Retry-After
                                when asked) for the first n requests of key
                                (every request when n is absent), then 200
    GET  /drop[n,key]           the first n requests of key: headers promising
                                1000 bytes, 10 bytes, then the TCP connection is
                                cut; then 200
    GET  /slow[bytes,delay_ms]  a body of `bytes` bytes, one byte per delay_ms
    GET  /huge[bytes,chunked]   a body of `bytes` bytes ('x'), with
                                Content-Length or chunked
    GET  /gzip[bytes]           `bytes` bytes ('x') sent gzip-compressed
                                (Content-Encoding: gzip; a tiny "zip bomb")
    GET  /stream[lines,delay_ms,batch,pad,long_line,long_bytes,split,crlf,
                 no_final_newline,hang_ms]
                                chunked newline-delimited JSON watch events
                                {"type":"ADDED","object":{...,"seq":i}}; `batch`
                                lines per chunk, delay_ms between chunks; line
                                number long_line gets long_bytes of padding;
                                split=1 cuts every chunk in two; hang_ms: stay
                                silent that long before ending the stream
    GET  /control/stats[key]    JSON counters: connections (distinct connections
                                that served requests since reset), accepted,
                                handshake_failures, requests, unauthorized,
                                key_count
    POST /control/reset         zero every counter
/control requests are not counted.
"""

import argparse
import base64
import gzip
import itertools
import json
import os
import shutil
import signal
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    """Counters shared by both listeners, behind one lock."""

    def __init__(self, token_file):
        self.token_file = token_file
        self.lock = threading.Lock()
        self.conn_ids = itertools.count(1)
        self.reset()

    def reset(self):
        with self.lock:
            self.accepted = 0
            self.handshake_failures = 0
            self.requests = 0
            self.unauthorized = 0
            self.conns_seen = set()
            self.keys = {}

    def add(self, field, n=1):
        with self.lock:
            setattr(self, field, getattr(self, field) + n)

    def hit(self, key):
        with self.lock:
            self.keys[key] = self.keys.get(key, 0) + 1
            return self.keys[key]

    def request(self, conn_id):
        with self.lock:
            self.requests += 1
            self.conns_seen.add(conn_id)

    def snapshot(self, key):
        with self.lock:
            return {
                "connections": len(self.conns_seen),
                "accepted": self.accepted,
                "handshake_failures": self.handshake_failures,
                "requests": self.requests,
                "unauthorized": self.unauthorized,
                "key_count": self.keys.get(key, 0) if key else 0,
            }

    def token(self):
        if not self.token_file:
            return None
        try:
            with open(self.token_file, "r", encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            return None


def k8s_status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
           410: "Expired", 429: "TooManyRequests", 500: "InternalError",
           503: "ServiceUnavailable", 504: "Timeout"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "topo-fake/1"
    timeout = 30  # an idle keep-alive connection is closed after this

    def setup(self):
        super().setup()
        self.conn_id = next(self.server.state.conn_ids)

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        if self.server.verbose:
            sys.stderr.write("fake_http_server: %s %s\n" % (self.server.name, format % args))

    # Every method goes through dispatch.
    def do_GET(self):
        self.dispatch()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    # --- responses ---------------------------------------------------------------------

    def send_bytes(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status, obj, headers=()):
        self.send_bytes(status, (json.dumps(obj) + "\n").encode(), headers=headers)

    def start_chunked(self, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut_connection(self):
        """Closes the TCP connection at once (no TLS close_notify)."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # --- dispatch ----------------------------------------------------------------------

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length > 0 else b""
        path = url.path
        state = self.server.state
        if path.startswith("/control/"):
            return self.control(path)
        state.request(self.conn_id)
        try:
            if path.startswith("/auth/"):
                want = state.token()
                got = self.headers.get("Authorization", "")
                if want is None or got != "Bearer " + want:
                    state.add("unauthorized")
                    return self.send_json(401, k8s_status(401, "Unauthorized", "Unauthorized"))
                path = path[len("/auth"):]
            elif path.startswith("/basic/"):
                want = state.token()
                got = self.headers.get("Authorization", "")
                if want is None or got != "Basic " + base64.b64encode(want.encode()).decode():
                    state.add("unauthorized")
                    return self.send_json(401, k8s_status(401, "Unauthorized", "Unauthorized"),
                                          [("WWW-Authenticate", 'Basic realm="fake"')])
                path = path[len("/basic"):]
            self.route(path)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout, OSError):
            # The client went away (an aborted stream, a timeout): not an error here.
            self.close_connection = True

    def qint(self, name, default):
        return int(self.query.get(name, default))

    def route(self, path):
        if path == "/json":
            return self.send_json(200, {"kind": "List", "apiVersion": "v1",
                                        "items": [{"name": "a"}, {"name": "b"}]})
        if path == "/echo":
            names = ["Content-Type", "Accept", "Accept-Encoding", "User-Agent", "Expect",
                     "Authorization"]
            headers = {n.lower(): self.headers.get(n) for n in names if n in self.headers}
            return self.send_json(200, {"method": self.command, "path": self.path,
                                        "headers": headers,
                                        "body": self.body.decode("utf-8", "replace")})
        if path == "/whoami":
            cert = self.connection.getpeercert() or {}
            cn = None
            for rdn in cert.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        cn = value
            return self.send_json(200, {"cn": cn})
        if path.startswith("/status/"):
            return self.status(int(path[len("/status/"):]))
        if path == "/drop":
            return self.drop()
        if path == "/slow":
            return self.slow()
        if path == "/huge":
            return self.huge()
        if path == "/gzip":
            body = gzip.compress(b"x" * self.qint("bytes", 1000))
            return self.send_bytes(200, body, "text/plain", [("Content-Encoding", "gzip")])
        if path == "/stream":
            return self.stream()
        return self.send_json(404, k8s_status(404, "NotFound", "no route " + path))

    def control(self, path):
        state = self.server.state
        if path == "/control/stats":
            return self.send_json(200, state.snapshot(self.query.get("key")))
        if path == "/control/reset":
            state.reset()
            return self.send_json(200, {"ok": True})
        return self.send_json(404, k8s_status(404, "NotFound", "no control " + path))

    def status(self, code):
        hits = self.server.state.hit(self.query.get("key", self.path))
        limit = self.query.get("n")
        if limit is not None and hits > int(limit):
            return self.send_json(200, {"ok": True, "hits": hits})
        headers = []
        if "retry_after" in self.query:
            headers.append(("Retry-After", self.query["retry_after"]))
        return self.send_json(code, k8s_status(code, REASONS.get(code, "Unknown"),
                                               "injected status %d" % code), headers)

    def drop(self):
        hits = self.server.state.hit(self.query.get("key", self.path))
        if hits > self.qint("n", 1 << 30):
            return self.send_json(200, {"ok": True, "hits": hits})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"items":[')
        self.cut_connection()

    def slow(self):
        size, delay = self.qint("bytes", 100), self.qint("delay_ms", 100) / 1000.0
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.flush()
        for _ in range(size):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(delay)

    def huge(self):
        size, chunked = self.qint("bytes", 1 << 20), self.qint("chunked", 0)
        piece = b"x" * 65536
        if chunked:
            self.start_chunked()
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
        left = size
        while left > 0:
            data = piece[:min(left, len(piece))]
            if chunked:
                self.chunk(data)
            else:
                self.wfile.write(data)
            left -= len(data)
        if chunked:
            self.end_chunked()

    def stream(self):
        lines = self.qint("lines", 10)
        delay = self.qint("delay_ms", 0) / 1000.0
        batch = max(1, self.qint("batch", 1))
        pad = self.qint("pad", 0)
        long_line, long_bytes = self.qint("long_line", -1), self.qint("long_bytes", 0)
        split, crlf = self.qint("split", 0), self.qint("crlf", 0)
        no_final_newline = self.qint("no_final_newline", 0)
        end = b"\r\n" if crlf else b"\n"
        self.start_chunked()
        pending = b""
        for i in range(lines):
            event = {"type": "ADDED",
                     "object": {"kind": "Node", "apiVersion": "v1", "seq": i,
                                "metadata": {"name": "node-%d" % i, "resourceVersion": str(i + 1)},
                                "pad": "x" * (long_bytes if i == long_line else pad)}}
            pending += json.dumps(event, separators=(",", ":")).encode()
            if not (no_final_newline and i == lines - 1):
                pending += end
            if (i + 1) % batch == 0 or i == lines - 1:
                if split and len(pending) > 1:
                    half = len(pending) // 2
                    self.chunk(pending[:half])
                    time.sleep(0.002)
                    self.chunk(pending[half:])
                else:
                    self.chunk(pending)
                pending = b""
                if delay:
                    time.sleep(delay)
        hang = self.qint("hang_ms", 0)
        if hang:
            time.sleep(hang / 1000.0)
        self.end_chunked()


class TLSServer(ThreadingHTTPServer):
    """ThreadingHTTPServer whose connections are wrapped in TLS in their own
    thread, so a client that never finishes its handshake blocks nobody."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, name, context, state, verbose):
        self.name, self.context, self.state, self.verbose = name, context, state, verbose
        super().__init__(("127.0.0.1", 0), Handler)

    def server_bind(self):
        # HTTPServer.server_bind would look up our FQDN: slow without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def finish_request(self, request, client_address):
        self.state.add("accepted")
        request.settimeout(10)
        # Headers and body go out in separate writes: without this, Nagle plus
        # the client's delayed ACK cost 40 ms per request.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.state.add("handshake_failures")
            if self.verbose:
                sys.stderr.write("fake_http_server: %s handshake failed: %s\n" % (self.name, e))
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (ssl.SSLError, OSError):
            pass
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)


def make_context(pki, require_client_cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(pki, "server.pem"), os.path.join(pki, "server.key"))
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(os.path.join(pki, "ca.pem"))
    return ctx


def start(pki, token_file=None, verbose=False):
    """Starts both listeners on daemon threads; returns (state, main, mtls)."""
    state = State(token_file)
    servers = []
    for name, require in (("main", False), ("mtls", True)):
        server = TLSServer(name, make_context(pki, require), state, verbose)
        threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
        servers.append(server)
    return state, servers[0], servers[1]


def exit_on_eof():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    os._exit(0)


def self_test(pki_script):
    """A short check of the server itself with urllib (ctest e2e.fake_http_server)."""
    tmp = tempfile.mkdtemp(prefix="topo-fake-http-")
    try:
        subprocess.run(["sh", pki_script, tmp], check=True)
        token_file = os.path.join(tmp, "token")
        with open(token_file, "w") as f:
            f.write("first\n")
        _, main, mtls = start(tmp, token_file)
        base = "https://127.0.0.1:%d" % main.server_address[1]
        ctx = ssl.create_default_context(cafile=os.path.join(tmp, "ca.pem"))

        def get(url, token=None, context=ctx):
            req = urllib.request.Request(url)
            if token:
                req.add_header("Authorization", "Bearer " + token)
            try:
                with urllib.request.urlopen(req, context=context, timeout=10) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()

        assert get(base + "/json")[0] == 200
        assert get(base + "/auth/json", "first")[0] == 200
        with open(token_file, "w") as f:
            f.write("second\n")
        assert get(base + "/auth/json", "first")[0] == 401
        assert get(base + "/auth/json", "second")[0] == 200
        basic = urllib.request.Request(base + "/basic/json")
        basic.add_header("Authorization", "Basic " + base64.b64encode(b"second").decode())
        with urllib.request.urlopen(basic, context=ctx, timeout=10) as r:
            assert r.status == 200
        assert get(base + "/status/500?n=1&key=k")[0] == 500
        assert get(base + "/status/500?n=1&key=k")[0] == 200
        status, body = get(base + "/stream?lines=5&batch=2&split=1")
        seqs = [json.loads(line)["object"]["seq"] for line in body.splitlines()]
        assert status == 200 and seqs == list(range(5)), seqs
        status, body = get(base + "/control/stats?key=k")
        assert json.loads(body)["key_count"] == 2
        mbase = "https://127.0.0.1:%d" % mtls.server_address[1]
        cctx = ssl.create_default_context(cafile=os.path.join(tmp, "ca.pem"))
        cctx.load_cert_chain(os.path.join(tmp, "client.pem"), os.path.join(tmp, "client.key"))
        status, body = get(mbase + "/whoami", context=cctx)
        assert status == 200 and json.loads(body)["cn"] == "topo-test-client", body
        try:
            get(mbase + "/whoami")
            raise AssertionError("mtls listener accepted a client without a certificate")
        except (urllib.error.URLError, ssl.SSLError, ConnectionError):
            pass
        main.shutdown()
        mtls.shutdown()
        print("fake_http_server self-test: ok")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pki", help="directory written by make_test_pki.sh")
    ap.add_argument("--token-file", help="file holding the currently valid bearer token")
    ap.add_argument("--lifetime", type=float, default=300.0, help="exit after this many seconds")
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--pki-script", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "make_test_pki.sh"))
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.pki_script)
    if not args.pki:
        ap.error("--pki is required")

    _, main_server, mtls_server = start(args.pki, args.token_file, args.verbose)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if args.exit_on_stdin_eof:
        threading.Thread(target=exit_on_eof, daemon=True).start()
    print("%d %d" % (main_server.server_address[1], mtls_server.server_address[1]), flush=True)
    time.sleep(args.lifetime)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
