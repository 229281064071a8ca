-- wrk script: each request is a NEW single-pod PodSet (a pod with a unique
-- name and uid, no Job or pod-group labels: the webhook's "pod alone"
-- PodSet), annotated kueue.x-k8s.io/podset-required-topology with the rack
-- level of `topoassign generate`'s inventory, so every request computes a
-- placement and reserves it. The pod asks for cpu 100m only so that the
-- cluster's capacity outlasts a run. The body is
-- fixtures/admission/gate-new/request.json with that name, uid, annotation
-- and request.
--   wrk ... -s topology.lua URL -- patch|allow
-- patch: every answer must place the pod (admission handler); allow: only
-- allowed is checked (the --noop floor).
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local common = dofile(dir .. "common.lua")

-- base64 of '[{"op":"add","path":"/spec/nodeSelector"' cut to whole 3-byte
-- groups (39 bytes -> 52 characters): the first operation of a placed pod's
-- patch; a gated pod's starts with its annotations instead.
common.expected_patch_prefix = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvbm9kZVNlbGVjdG9y"

local template = [[
{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"%s",
"kind":{"group":"","version":"v1","kind":"Pod"},
"resource":{"group":"","version":"v1","resource":"pods"},
"requestKind":{"group":"","version":"v1","kind":"Pod"},
"requestResource":{"group":"","version":"v1","resource":"pods"},
"name":"%s","namespace":"bench","operation":"CREATE",
"userInfo":{"username":"system:serviceaccount:kube-system:job-controller",
"uid":"5d0c3a4e-8d55-4a4b-9a3c-0f3b1c2d3e4f",
"groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},
"object":{"kind":"Pod","apiVersion":"v1",
"metadata":{"name":"%s","namespace":"bench",
"annotations":{"kueue.x-k8s.io/podset-required-topology":"topology.topo.io/rack"}},
"spec":{"containers":[{"name":"worker","image":"nvcr.io/nvidia/pytorch:24.05-py3",
"resources":{"requests":{"cpu":"100m"}}}],
"restartPolicy":"Never","schedulerName":"default-scheduler","terminationGracePeriodSeconds":30,
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
"status":{}},
"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}
]]

setup = common.setup
init = common.init
response = common.response
done = common.done

function request()
    local uid = common.uid()
    local name = string.format("bench-t%d-%d", tid, sent + 1)
    return common.request(string.format(template, uid, name, name))
end
