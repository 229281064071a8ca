#!/usr/bin/env python3
"""A kubeconfig exec credential plugin for the tests (exec_plugin_e2e.py,
test/net/test_exec_cred.c): what it prints is chosen by its arguments, as a
real plugin's is by the kubeconfig's exec.args.

  exec_plugin.py [--count FILE] [--record FILE] MODE...

--count FILE   appends one line per run (the tests count the runs)
--record FILE  writes {"argv", "info": KUBERNETES_EXEC_INFO parsed, "env":
               the variables named TOPO_TEST_*, "stdin_tty"} as JSON
modes:
  token T [T2 ...]      an ExecCredential with token T (run N prints the Nth
                        token, the last one for every later run)
  expires SECONDS       with token: expirationTimestamp now + SECONDS (may be
                        negative: already expired)
  cert CERT KEY         clientCertificateData and clientKeyData from files
  api VERSION           the apiVersion printed (default: the one in
                        KUBERNETES_EXEC_INFO)
  fail CODE MESSAGE     MESSAGE on stderr, exit CODE
  garbage TEXT          TEXT on stdout
  big BYTES             BYTES bytes of JSON-ish output
  sleep SECONDS PIDFILE starts a child `sleep SECONDS` (its pid in PIDFILE),
                        then waits for it
"""

import datetime
import json
import os
import subprocess
import sys
import time


def main(argv):
    args = list(argv)
    count_file = record_file = None
    while args and args[0] in ("--count", "--record"):
        flag, value = args[0], args[1]
        args = args[2:]
        if flag == "--count":
            count_file = value
        else:
            record_file = value
    runs = 0
    if count_file:
        with open(count_file, "a+") as fh:
            fh.seek(0)
            runs = len(fh.readlines())
            fh.write("run\n")
    info = json.loads(os.environ.get("KUBERNETES_EXEC_INFO", "null") or "null")
    if record_file:
        with open(record_file, "w") as fh:
            json.dump({"argv": argv, "info": info,
                       "env": {k: v for k, v in os.environ.items() if k.startswith("TOPO_TEST_")},
                       "stdin_tty": os.isatty(0)}, fh)

    api = (info or {}).get("apiVersion", "client.authentication.k8s.io/v1")
    status = {}
    while args:
        mode = args.pop(0)
        if mode == "token":
            tokens = []
            while args and args[0] not in ("expires", "cert", "api"):
                tokens.append(args.pop(0))
            status["token"] = tokens[min(runs, len(tokens) - 1)]
        elif mode == "expires":
            t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
                seconds=float(args.pop(0)))
            status["expirationTimestamp"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        elif mode == "cert":
            with open(args.pop(0)) as fh:
                status["clientCertificateData"] = fh.read()
            with open(args.pop(0)) as fh:
                status["clientKeyData"] = fh.read()
        elif mode == "api":
            api = args.pop(0)
        elif mode == "fail":
            code, message = int(args.pop(0)), args.pop(0)
            sys.stderr.write(message + "\n")
            return code
        elif mode == "garbage":
            sys.stdout.write(args.pop(0))
            return 0
        elif mode == "big":
            n = int(args.pop(0))
            chunk = "x" * 65536
            sys.stdout.write('{"kind": "ExecCredential", "pad": "')
            while n > 0:
                sys.stdout.write(chunk[:n])
                n -= len(chunk)
            sys.stdout.write('"}')
            return 0
        elif mode == "sleep":
            seconds, pidfile = args.pop(0), args.pop(0)
            child = subprocess.Popen(["sleep", seconds])
            with open(pidfile, "w") as fh:
                fh.write(f"{child.pid}\n")
            child.wait()
            time.sleep(float(seconds))
            return 0
        else:
            sys.stderr.write(f"exec_plugin.py: unknown mode {mode}\n")
            return 64
    print(json.dumps({"kind": "ExecCredential", "apiVersion": api, "status": status}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
