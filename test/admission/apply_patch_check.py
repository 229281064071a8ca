#!/usr/bin/env python3
"""Independent check of the admission patches (python3-jsonpatch).

For every fixtures/admission/<case>/ with an expected-response.json carrying a
patch, decodes the base64 patch (the exact bytes test_admission checks the C
encoder produces), checks it equals expected-patch.json, applies it to the
request's Pod with jsonpatch, and checks the result carries every nodeSelector
entry and annotation of case.json (and the gate exactly once), that nothing
else of the Pod changed, and that the patch is idempotent: re-running the
checks on the patched Pod needs no further operation."""
import argparse
import base64
import copy
import json
import os
import sys

import jsonpatch


def check(case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    resp_path = os.path.join(case_dir, "expected-response.json")
    if not os.path.exists(resp_path):
        return 0
    with open(resp_path) as f:
        resp = json.load(f)["response"]
    if "patch" not in resp:
        return 0
    assert resp["patchType"] == "JSONPatch", "patchType"
    ops = json.loads(base64.b64decode(resp["patch"], validate=True))
    with open(os.path.join(case_dir, "expected-patch.json")) as f:
        assert ops == json.load(f), "base64 patch differs from expected-patch.json"
    with open(os.path.join(case_dir, "request.json")) as f:
        pod = json.load(f)["request"]["object"]
    patched = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(pod))
    sel = patched["spec"].get("nodeSelector", {})
    for k, v in case.get("nodeSelector", {}).items():
        assert sel.get(k) == v, f"nodeSelector {k}={sel.get(k)!r}, want {v!r}"
    ann = patched["metadata"].get("annotations", {})
    for k, v in case.get("annotations", {}).items():
        assert ann.get(k) == v, f"annotation {k}={ann.get(k)!r}, want {v!r}"
    if "gate" in case:
        names = [g["name"] for g in patched["spec"].get("schedulingGates", [])]
        assert names.count(case["gate"]) == 1, f"gates {names}"
    # Nothing but the three touched maps/lists changed.
    for part, keys in (("spec", ("nodeSelector", "schedulingGates")), ("metadata", ("annotations",))):
        a = {k: v for k, v in pod[part].items() if k not in keys}
        b = {k: v for k, v in patched[part].items() if k not in keys}
        assert a == b, f"{part} changed outside {keys}"
    for k, v in pod["spec"].get("nodeSelector", {}).items():
        assert sel[k] == v, f"existing nodeSelector {k} changed"
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    root = os.path.join(args.source, "fixtures", "admission")
    failed = checked = 0
    for name in sorted(os.listdir(root)):
        try:
            checked += check(os.path.join(root, name))
        except (AssertionError, jsonpatch.JsonPatchException, KeyError, ValueError) as e:
            print(f"{name}: FAIL: {e}")
            failed += 1
    print(f"{checked} patches applied, {failed} failed")
    return 1 if failed or checked < 3 else 0


if __name__ == "__main__":
    sys.exit(main())
