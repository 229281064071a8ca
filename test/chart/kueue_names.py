"""The Kueue PodSet annotations topo-webhook classifies a pod by
(topo_kueue_has_podset_annotation, lib/kueue/podset_request.c), read from
the C sources themselves so that the chart's matchConditions cannot drift
from them: the names come from include/topo/kueue_names.h, which of them
count from the function's body (and topo_kueue_has_topology_request's, and
the TOPO_KUEUE_TAS_ANNOTATIONS list it walks)."""

import os
import re

SOURCE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HEADER = os.path.join(SOURCE, "include", "topo", "kueue_names.h")
CLASSIFIER = os.path.join(SOURCE, "lib", "kueue", "podset_request.c")


def defines(text):
    """{macro: body} of the header, continuation lines joined."""
    text = text.replace("\\\n", " ")
    return {m.group(1): m.group(2).strip()
            for m in re.finditer(r"^#define\s+(\w+)\s+(.*)$", text, flags=re.M)}


def body(text, function):
    """The body of C function `function` (from its definition to the first
    closing brace in column 0)."""
    m = re.search(r"^int %s\([^)]*\)\n\{\n(.*?)^\}" % re.escape(function), text,
                  flags=re.M | re.S)
    if m is None:
        raise ValueError("%s: no definition of %s" % (CLASSIFIER, function))
    return m.group(1)


def podset_annotations():
    """The annotation names, in the header's order."""
    with open(HEADER) as f:
        macros = defines(f.read())
    with open(CLASSIFIER) as f:
        c = f.read()
    used = re.findall(r"\bTOPO_KUEUE_\w+", body(c, "topo_kueue_has_podset_annotation") +
                      body(c, "topo_kueue_has_topology_request"))
    if "topo_kueue_has_topology_request" not in body(c, "topo_kueue_has_podset_annotation"):
        raise ValueError("topo_kueue_has_podset_annotation no longer calls "
                         "topo_kueue_has_topology_request: update %s" % __file__)
    names = set()
    for m in used:
        value = macros.get(m)
        if value is None:
            raise ValueError("%s: %s is not defined in %s" % (CLASSIFIER, m, HEADER))
        if value.startswith("{"):  # a NULL-ended list of other macros
            for x in re.findall(r"\bTOPO_KUEUE_\w+", value):
                names.add(macros[x])
        else:
            names.add(value)
    out = [v.strip('"') for v in macros.values() if v in names]
    if not out or any(not n.startswith("kueue.x-k8s.io/podset-") for n in out):
        raise ValueError("unexpected PodSet annotations %r from %s" % (out, HEADER))
    return out


if __name__ == "__main__":
    print("\n".join(podset_annotations()))
