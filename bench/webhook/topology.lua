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

common.install("bench", "bench",
               [["annotations":{"kueue.x-k8s.io/podset-required-topology":"topology.topo.io/rack"}]])
