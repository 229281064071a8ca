#!/usr/bin/env python3
"""topo-webhook's command line: conflicting or incomplete flags and bad
configuration files stop it at once with exit status 2 and a message naming
the problem, before any port is bound; --help exits 0."""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

from harness import check, finish
from harness.pki import encrypted_client_pair, make_pki


def run(binary, args, timeout=20):
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    wh = args.webhook
    fixtures = os.path.join(args.source, "fixtures", "webhook")
    levels = "topology.topo.io/rack,kubernetes.io/hostname"
    with tempfile.TemporaryDirectory(prefix="topo-whf-") as tmp:
        # TLS files exist but are never read: every case fails before.
        cert, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        for f in (cert, key):
            open(f, "w").close()
        tls = ["--tls-cert-file", cert, "--tls-private-key-file", key, "--log-format", "text"]

        rc, out = run(wh, ["--version"])
        check(rc == 0 and out.startswith("topo-webhook "), "--version: rc %d, %r" % (rc, out))
        rc, out = run(wh, ["--help"])
        check(rc == 0 and "--config FILE" in out and "--kubeconfig FILE" in out and
              "--resource-quotas true|false" in out,
              "--help: rc %d" % rc)
        for flag in ("--header-timeout", "--min-body-rate", "--idle-timeout", "--metrics-port",
                     "--metrics-address"):
            check(flag in out, "--help documents " + flag)

        cases = [
            (["--port", "0"] + tls, "--port: must be between 1 and 65535, got 0"),
            (["--policy", "sometimes", "--levels", levels] + tls,
             '--policy: expected gate, deny or ignore, got "sometimes"'),
            (["--leader-elect", "yes"] + tls, '--leader-elect: expected true or false, got "yes"'),
            (["--port"], "--port: missing value"),
            (["--port=9443", "--port", "0"] + tls, "--port: must be between 1 and 65535, got 0"),
            (["--lease-duration", "601"] + tls, "--lease-duration: must be between 2 and 600"),
            (["--header-timeout", "0"] + tls, "--header-timeout: expected a positive number up to 3600, got \"0\""),
            (["--header-timeout", "0.05"] + tls, "--header-timeout: at least 0.1"),
            (["--idle-timeout", "x"] + tls, "--idle-timeout: expected an integer, got \"x\""),
            (["--min-body-rate", "-1"] + tls, "--min-body-rate: expected a non-negative integer, got \"-1\""),
            (["--metrics-port", "70000"] + tls, "--metrics-port: must be between 1 and 65535, got 70000"),
            (["--metrics-address", "127.0.0.1"] + tls, "--metrics-address goes with --metrics-port"),
            (["--levels", levels], "--tls-cert-file and --tls-private-key-file are required"),
            (["--config", "x.yaml", "--levels", levels] + tls, "exclude each other"),
            (["--policy", "deny"] + tls, "--policy goes with --levels"),
            (["--db", os.path.join(tmp, "c.db")] + tls, "needs --config FILE or --levels"),
            (["--levels", levels, "--pods", "p.json"] + tls, "--pods goes with --inventory"),
            (["--levels", levels, "--inventory", "n.json", "--kubeconfig", "k"] + tls,
             "exclude each other"),
            (["--levels", "topology.topo.io/rack,topology.topo.io/rack"] + tls,
             "duplicate level"),
            (["--config", os.path.join(tmp, "missing.yaml")] + tls, "missing.yaml"),
            (["--levels", levels, "--inventory", os.path.join(tmp, "missing.json")] + tls,
             "missing.json"),
            (["--levels", levels, "--resource-quotas", "yes"] + tls,
             "--resource-quotas: expected true or false, got \"yes\""),
            (["--levels", levels, "--inventory", "n.json", "--resource-quotas", "true"] + tls,
             "--resource-quotas true needs an API server"),
        ]
        # --record-key-file: every bad file stops it, naming the flag and the file.
        nodes = os.path.join(tmp, "nodes.json")
        with open(nodes, "w") as fh:
            fh.write('{"apiVersion":"v1","kind":"NodeList","items":[]}')
        keys = {"short": b"0123456789abcde", "long": b"k" * (64 * 1024 + 1)}
        for i in range(8):
            keys["k%d" % i] = b"record key number %d" % i
        for name, data in keys.items():
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
        os.mkfifo(os.path.join(tmp, "fifo"))  # no writer: opening it would block
        static = ["--levels", levels, "--inventory", nodes] + tls

        def rk(*names):
            return [a for n in names for a in ("--record-key-file", os.path.join(tmp, n))]

        cases += [
            (static + rk("k0", "missing"),
             "--record-key-file: %s: No such file or directory" % os.path.join(tmp, "missing")),
            (static + ["--record-key-file", tmp], "--record-key-file: %s: not a regular file" % tmp),
            (static + rk("fifo"), "--record-key-file: %s: not a regular file"
             % os.path.join(tmp, "fifo")),
            (static + rk("short"), "--record-key-file: %s: 15 bytes, a key needs at least 16"
             % os.path.join(tmp, "short")),
            (static + rk("long"), "--record-key-file: %s: file is larger than the limit of "
             "65536 bytes" % os.path.join(tmp, "long")),
            (static + rk(*("k%d" % i for i in range(8))),
             "--record-key-file: %s: given 8 times, at most 7" % os.path.join(tmp, "k7")),
            (tls + rk("k0"), "placement needs --config FILE or --levels"),
        ]
        for argv, want in cases:
            rc, out = run(wh, argv)
            check(rc == 2 and want in out,
                  "%s: want exit 2 and %r, got %d: %s" % (" ".join(argv[:4]), want, rc,
                                                         out.strip()[-300:]))

        # A kubeconfig whose client key is encrypted: exit 2 naming the field,
        # no crash in the TLS setup and no passphrase asked for (no terminal,
        # stdin closed: a prompt would wait for ever).
        pki = os.path.join(tmp, "pki")
        make_pki(pki)
        cert_b64, key_b64, _ = encrypted_client_pair(pki)
        kc = os.path.join(tmp, "enc-kubeconfig.json")
        with open(kc, "w") as fh:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "t",
                       "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1",
                                                              "insecure-skip-tls-verify": True}}],
                       "contexts": [{"name": "t", "context": {"cluster": "k", "user": "u"}}],
                       "users": [{"name": "u", "user": {"client-certificate-data": cert_b64,
                                                        "client-key-data": key_b64}}]}, fh)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        p = subprocess.run([wh, "--kubeconfig", kc, "--levels", levels, "--db",
                            os.path.join(tmp, "enc.db"), "--port", str(port),
                            "--tls-cert-file", os.path.join(pki, "server.pem"),
                            "--tls-private-key-file", os.path.join(pki, "server.key"),
                            "--log-format", "text"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           start_new_session=True, timeout=30)
        want = "users[0].user.client-key-data: an encrypted private key: topo cannot ask"
        check(p.returncode == 2 and want in p.stderr and "pass phrase" not in p.stderr,
              "encrypted client key: exit %d, stderr %r" % (p.returncode, p.stderr[-1000:]))

        # Every malformed configuration file: exit 2, its expected message.
        bad = sorted(f for f in os.listdir(fixtures) if f.startswith("bad-"))
        check(len(bad) >= 20, "malformed configuration fixtures found: %d" % len(bad))
        for name in bad:
            path = os.path.join(fixtures, name)
            with open(path) as fh:
                first = fh.readline()
            want = first.split("# error:", 1)[1].strip() if "# error:" in first else None
            rc, out = run(wh, ["--config", path] + tls)
            check(rc == 2, "%s: exit %d, want 2" % (name, rc))
            if want:
                # fixtures name the file by its base name; the webhook by the path given
                check(want.split(": ", 1)[-1] in out, "%s: want %r in %r" % (name, want, out))
    return finish("webhook_flags_e2e")


if __name__ == "__main__":
    sys.exit(main())
