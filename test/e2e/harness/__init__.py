"""What the end-to-end drivers in test/e2e share (Python 3 standard library
only; python3-jsonpatch where a patch is applied). No driver imports another:
what two of them need lives here.

  harness            failures (expect raises, check records and goes on), the
                     --list/--case/--all/--keep main loop of the per-case
                     drivers, TOPO_E2E_SLOWDOWN
  harness.pki        the test PKI (make_test_pki.sh), a temporary directory with it
  harness.fakeapi    fake_apiserver.py over TLS with a token file and a kubeconfig
                     (FakeApiEnv), requests to it and to its /_fake/ admin endpoints
  harness.filler     FakeApiEnv loaded with cluster objects for the cache filler,
                     and the cache file read back
  harness.linedriver a C driver answering one JSON line per line of names
  harness.webhook    topo-webhook started with the test PKI on free ports and
                     waited for, HTTPS requests and AdmissionReviews to it, its
                     health port and metrics
  harness.pods       pods, AdmissionReviews and the labels the webhook drivers use
"""

import argparse
import os
import time

E2E_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failure(Exception):
    pass


def slowdown():
    """How much slower this build runs (TOPO_E2E_SLOWDOWN, set by CMake for
    sanitizer builds; 1 otherwise): latency bounds are multiplied by it."""
    try:
        return max(1.0, float(os.environ.get("TOPO_E2E_SLOWDOWN", "1")))
    except ValueError:
        return 1.0


def expect(cond, msg):
    """A check that ends the case: raises Failure."""
    if not cond:
        raise Failure(msg)


FAILURES = []


def check(cond, msg):
    """A check that lets the run go on (the webhook drivers: one ctest runs a
    whole scenario, and every failed check of it is worth seeing): printed and
    recorded for finish(). Returns cond."""
    if not cond:
        FAILURES.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def check_within(what, fn, timeout, step=0.2):
    """Polls fn until it returns a true value or timeout seconds passed, and
    check()s that value; returns it."""
    t0 = time.monotonic()
    while True:
        v = fn()
        if v or time.monotonic() - t0 > timeout:
            check(v, "%s within %d s" % (what, timeout))
            return v
        time.sleep(step)


def finish(name, note=""):
    """The last line of a driver using check(), and its exit status."""
    print("%s: %s%s" % (name, "FAILED (%d)" % len(FAILURES) if FAILURES else "passed", note))
    return 1 if FAILURES else 0


def registry():
    """A driver's case table and the @case decorator that fills it."""
    cases = {}

    def case(fn):
        cases[fn.__name__] = fn
        return fn
    return cases, case


def run_cases(cases, make_env, bin_flag="--driver", pending=None, on_failure=None):
    """The drivers' main: --list (what ctest registers), --case NAME or --all,
    --keep; the binary under test after bin_flag, given to make_env(bin, keep)
    with one fresh environment per case. Cases named in `pending` (name ->
    reason) stay out of --list and --all and are shown by --list-pending (an
    option only where pending is given, even empty).
    on_failure(env) adds the driver's own diagnostics to a FAIL. Returns the
    exit status."""
    ap = argparse.ArgumentParser()
    ap.add_argument(bin_flag, dest="bin", metavar=bin_flag.lstrip("-").upper())
    ap.add_argument("--list", action="store_true", help="the cases ctest runs")
    if pending is not None:
        ap.add_argument("--list-pending", action="store_true",
                        help="cases the program does not pass yet, with the reason")
    ap.add_argument("--case")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    pending = pending or {}
    runnable = [n for n in cases if n not in pending]
    if args.list:
        print("\n".join(runnable))
        return 0
    if getattr(args, "list_pending", False):
        print("\n".join(f"{n}: {r}" for n, r in pending.items()))
        return 0
    names = runnable if args.all else [args.case]
    if not args.bin or None in names or any(n not in cases for n in names):
        ap.error(f"{bin_flag} and --case NAME (or --all) are required")
    failed = 0
    for name in names:
        t = time.monotonic()
        env = make_env(args.bin, args.keep)
        try:
            cases[name](env)
            print(f"PASS {name} ({time.monotonic() - t:.1f}s)")
        except Failure as e:
            failed += 1
            print(f"FAIL {name}: {e}")
            if on_failure is not None:
                on_failure(env)
            print("--- fake apiserver log ---\n" + env.server_log()[-3000:])
        finally:
            env.close()
    return 1 if failed else 0
