"""helm lint and helm template of charts/topo, the rendered objects parsed,
and the values they were rendered from (values.yaml with the file merged
as Helm merges it)."""

import copy
import os
import shutil
import subprocess
import tempfile

import yaml

class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that repeats a key (PyYAML
    keeps the last; Flux's helm-controller and kubectl apply refuse it)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, "duplicate key %r" % (key,), key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_all_unique(text):
    """The documents of a render; a duplicate key anywhere raises."""
    return [d for d in yaml.load_all(text, Loader=UniqueKeyLoader) if d]


RELEASE = "topo"
NAMESPACE = "topo-system"


class Render:
    """One `helm template` of the chart: its objects and its values."""

    def __init__(self, name, values, docs, values_file=None, namespace=NAMESPACE):
        self.name = name
        self.namespace = namespace  # the release's
        self.values_file = values_file
        self.values = values
        self.docs = docs

    def all(self, kind):
        return [d for d in self.docs if d["kind"] == kind]

    def get(self, kind, name):
        for d in self.docs:
            if d["kind"] == kind and d["metadata"]["name"] == name:
                return d
        return None

    def one(self, kind, component):
        found = [d for d in self.all(kind)
                 if d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component]
        return found[0] if len(found) == 1 else None

    def kinds(self):
        return sorted({d["kind"] for d in self.docs})


def merge(base, over):
    """Helm's coalescing of a values file over the defaults: maps merge, the
    rest (lists included) is replaced, null deletes."""
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


class Helm:
    def __init__(self, binary, chart, home):
        self.binary = binary
        self.chart = chart
        self.home = home  # Helm's cache, config and data directories
        with open(os.path.join(chart, "values.yaml")) as f:
            self.defaults = yaml.safe_load(f)

    def run(self, *args, timeout=60):
        env = dict(os.environ, HELM_CACHE_HOME=self.home, HELM_CONFIG_HOME=self.home,
                   HELM_DATA_HOME=self.home)
        return subprocess.run([self.binary, *args], capture_output=True, text=True,
                              timeout=timeout, env=env)

    def lint(self, values_file=None):
        args = ["lint", "--strict", self.chart, "--namespace", NAMESPACE]
        if values_file:
            args += ["--values", values_file]
        return self.run(*args)

    def template(self, values_file=None, sets=(), name=None, release=RELEASE,
                 namespace=NAMESPACE):
        """Render (as release, in namespace); (Render, None) or (None, the
        failed process)."""
        args = ["template", release, self.chart, "--namespace", namespace]
        over = {}
        if values_file:
            args += ["--values", values_file]
            with open(values_file) as f:
                over = yaml.safe_load(f) or {}
        for s in sets:
            args += list(s)
        p = self.run(*args)
        if p.returncode != 0:
            return None, p
        try:
            docs = load_all_unique(p.stdout)
        except yaml.YAMLError as e:
            # The render has a key twice: a failure of the chart, reported
            # as the template's error.
            p.returncode = 1
            p.stderr = "the render repeats a key: %s" % e
            return None, p
        return Render(name or os.path.basename(values_file or "defaults"),
                      merge(self.defaults, over), docs, values_file, namespace), p

    def notes(self, values_file=None, release=RELEASE, namespace=NAMESPACE):
        """NOTES.txt as `helm install` prints it: rendered by helm template
        from a copy of the chart where a ConfigMap carries it (helm template
        leaves NOTES.txt out, helm install needs a cluster). (text, None) or
        (None, the failed process)."""
        with tempfile.TemporaryDirectory() as d:
            copy_ = os.path.join(d, "topo")
            shutil.copytree(self.chart, copy_)
            t = os.path.join(copy_, "templates")
            with open(os.path.join(t, "NOTES.txt")) as f:
                notes = f.read()
            os.remove(os.path.join(t, "NOTES.txt"))
            with open(os.path.join(t, "_notescheck.tpl"), "w") as f:
                f.write('{{- define "topo.notescheck" -}}\n' + notes + "{{- end }}\n")
            with open(os.path.join(t, "notescheck.yaml"), "w") as f:
                f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notescheck\n"
                        "data:\n  notes: {{ include \"topo.notescheck\" . | toJson }}\n")
            args = ["template", release, copy_, "--namespace", namespace,
                    "--show-only", "templates/notescheck.yaml"]
            if values_file:
                args += ["--values", values_file]
            p = self.run(*args)
            if p.returncode != 0:
                return None, p
            return yaml.safe_load(p.stdout)["data"]["notes"], p
