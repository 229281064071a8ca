"""A rendered Deployment's container run as a local process: the binary
from the build in place of the image's, the exact arguments, the
ConfigMaps and Secrets it mounts written as files (the chart's own, or
ones the test provides for an existing Secret), emptyDirs as empty
directories. What cannot be the same outside a pod is remapped, and only
that: each mountPath to a directory under the test's, each container port
to a free port, $(POD_IP) to 127.0.0.1, the in-cluster API server to the
fake one (KUBECONFIG), and the URLs of the sources in a config file to the
fake servers (with their CA)."""

import base64
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import time

import yaml

READY_TIMEOUT = 30  # seconds until /readyz answers 200
STOP_TIMEOUT = 20   # seconds from SIGTERM to the exit


class RunError(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(port, path, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode("utf-8", "replace")
    finally:
        c.close()


class Pod:
    """One Deployment of a render as a process. binaries: image path ->
    local binary; secrets: Secret name -> {key: text} for Secrets the chart
    does not render (existingSecret); config_hook(path, obj) may change a
    YAML config file's parsed content (the sources' URLs)."""

    def __init__(self, render, deployment, binaries, workdir, kubeconfig, secrets=None,
                 config_hook=None):
        self.render = render
        self.name = deployment["metadata"]["name"]
        self.workdir = os.path.join(workdir, self.name)
        os.makedirs(self.workdir)
        spec = deployment["spec"]["template"]["spec"]
        self.container = c = spec["containers"][0]
        self.mounts = {}
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        for m in c.get("volumeMounts", []):
            local = os.path.join(self.workdir, "vol", m["name"])
            self.volume(vols[m["name"]], local, secrets or {})
            self.mounts[m["mountPath"]] = local
        for m in c.get("volumeMounts", []):
            if "configMap" in vols[m["name"]]:
                self.remap_files(self.mounts[m["mountPath"]], config_hook)
        self.ports = {p["name"]: (p["containerPort"], free_port()) for p in c.get("ports", [])}
        env = {"POD_IP": "127.0.0.1"}
        for e in c.get("env", []):
            if e["name"] != "POD_IP":
                if "value" not in e:
                    raise RunError("%s: env %s comes from %r" % (self.name, e["name"],
                                                                 e.get("valueFrom")))
                env[e["name"]] = e["value"]
        self.args = [self.arg(a, env) for a in c.get("args", [])]
        image_cmd = c["command"][0]
        if image_cmd not in binaries:
            raise RunError("%s: command %s is not one of the image's binaries %s" % (
                self.name, image_cmd, sorted(binaries)))
        self.argv = [binaries[image_cmd], *c["command"][1:], *self.args]
        self.env = dict(os.environ, KUBECONFIG=kubeconfig, HOME=self.workdir, **env)
        self.env.pop("KUBERNETES_SERVICE_HOST", None)
        self.log_path = os.path.join(self.workdir, "log")
        self.proc = None

    # ------------------------------------------------------------ volumes

    def volume(self, vol, local, secrets):
        os.makedirs(local)
        if "configMap" in vol or "secret" in vol:
            if "configMap" in vol:
                src, kind = vol["configMap"], "ConfigMap"
                obj = self.render.get(kind, src["name"])
                data = dict(obj["data"]) if obj else None
            else:
                src, kind = vol["secret"], "Secret"
                obj = self.render.get(kind, src["secretName"])
                data = ({k: base64.b64decode(v).decode() for k, v in obj["data"].items()}
                        if obj else secrets.get(src["secretName"]))
            name = src.get("name") or src.get("secretName")
            if data is None:
                raise RunError("%s: %s %s is neither rendered nor given by the test" % (
                    self.name, kind, name))
            items = src.get("items") or [{"key": k, "path": k} for k in data]
            for it in items:
                if it["key"] not in data:
                    raise RunError("%s: %s %s has no key %s" % (self.name, kind, name, it["key"]))
                with open(os.path.join(local, it["path"]), "w") as f:
                    f.write(data[it["key"]])
        elif not ("emptyDir" in vol or "persistentVolumeClaim" in vol):
            raise RunError("%s: volume %s of a kind the test cannot make" % (self.name,
                                                                            vol["name"]))

    def remap(self, s):
        for mp in sorted(self.mounts, key=len, reverse=True):
            if s == mp or s.startswith(mp.rstrip("/") + "/"):
                return self.mounts[mp] + s[len(mp.rstrip("/")):]
        return s

    def remap_files(self, local, hook):
        """Paths inside the YAML files of a mounted ConfigMap: each string
        naming a mounted path is remapped; the hook may change the rest."""
        for name in os.listdir(local):
            path = os.path.join(local, name)
            if not name.endswith(".yaml"):
                continue
            with open(path) as f:
                obj = yaml.safe_load(f)

            def walk(x):
                if isinstance(x, dict):
                    return {k: walk(v) for k, v in x.items()}
                if isinstance(x, list):
                    return [walk(v) for v in x]
                return self.remap(x) if isinstance(x, str) else x

            obj = walk(obj)
            if hook:
                obj = hook(name, obj)
            with open(path, "w") as f:
                yaml.safe_dump(obj, f)

    def arg(self, a, env):
        a = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a)
        for container_port, local in self.ports.values():
            if a == str(container_port):
                return str(local)
            if a.endswith(":%d" % container_port):
                return a[:-len(str(container_port))] + str(local)
        return self.remap(a)

    # ------------------------------------------------------------ the process

    def port(self, name):
        return self.ports[name][1]

    def start(self):
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.workdir,
                                     stdout=self.log_file, stderr=subprocess.STDOUT)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Seconds until /readyz on the health port answered 200."""
        t0 = time.monotonic()
        last = None
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RunError("%s exited with status %d before it was ready:\n%s\n%s" % (
                    self.name, self.proc.returncode, " ".join(self.argv), self.log()[-3000:]))
            try:
                last = http_get(self.port("health"), "/readyz?verbose")
                if last[0] == 200:
                    return time.monotonic() - t0
            except OSError as e:
                last = (None, str(e))
            time.sleep(0.1)
        raise RunError("%s not ready within %d s (last /readyz: %r):\n%s\n%s" % (
            self.name, timeout, last, " ".join(self.argv), self.log()[-3000:]))

    def metrics(self):
        """{family: [sample lines]} of /metrics on the health port."""
        status, text = http_get(self.port("health"), "/metrics")
        if status != 200:
            raise RunError("%s: /metrics answered %d" % (self.name, status))
        fams, samples = {}, []
        for line in text.splitlines():
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m:
                fams[m.group(1)] = []
                if m.group(2) in ("histogram", "summary"):
                    for sfx in ("_bucket", "_sum", "_count"):
                        fams[m.group(1) + sfx] = []
            elif line and not line.startswith("#"):
                samples.append(line)
        for line in samples:
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
            fams.setdefault(name, []).append(line)
        return fams

    def stop(self):
        """SIGTERM; the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed after %d s" % STOP_TIMEOUT
        finally:
            self.log_file.close()


def admit(pod, ca_pem, server_name, obj, uid="chart-test-1"):
    """An AdmissionReview for creating obj, over HTTPS to the pod's webhook
    port, the certificate checked against ca_pem for server_name (as the API
    server checks it against the caBundle for the Service's name)."""
    ctx = ssl.create_default_context(cadata=ca_pem)
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": "", "version": "v1",
                                                        "kind": "Pod"},
                                   "resource": {"group": "", "version": "v1",
                                                "resource": "pods"},
                                   "namespace": obj["metadata"]["namespace"],
                                   "operation": "CREATE", "object": obj}})
    sock = socket.create_connection(("127.0.0.1", pod.port("webhook")), timeout=10)
    conn = http.client.HTTPSConnection(server_name, pod.port("webhook"), context=ctx, timeout=10)
    conn.sock = ctx.wrap_socket(sock, server_hostname=server_name)
    try:
        conn.request("POST", "/mutate?timeout=2s", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()
