-- wrk script: pods of Indexed Jobs of JOB_SIZE pods each (the environment's
-- JOB_SIZE, default 32), in order: the first pod of a Job places the whole
-- PodSet and reserves it, the other JOB_SIZE - 1 claim their completion
-- index's slot in that reservation (the slot claims). The Job is the
-- PodSet (labels batch.kubernetes.io/job-name and controller-uid, the
-- Job's ownerReference, annotation topology.topo.io/podset-size), rack
-- required, cpu 100m per pod as topology.lua's. Every answer must place its
-- pod (patch).
--   [JOB_SIZE=64] wrk ... -s slots.lua URL -- patch|allow
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local common = dofile(dir .. "common.lua")

local JOB_SIZE = math.floor(tonumber(os.getenv("JOB_SIZE") or "") or 32)
if JOB_SIZE < 1 then
    error("slots.lua: JOB_SIZE must be a whole number of pods >= 1")
end

-- As topology.lua's: the first operation of a placed pod's patch.
common.expected_patch_prefix = "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvbm9kZVNlbGVjdG9y"

local meta_template = [=["labels":{"batch.kubernetes.io/controller-uid":"%s",
"batch.kubernetes.io/job-name":"%s","batch.kubernetes.io/job-completion-index":"%d",
"controller-uid":"%s","job-name":"%s"},
"annotations":{"batch.kubernetes.io/job-completion-index":"%d",
"kueue.x-k8s.io/podset-required-topology":"topology.topo.io/rack",
"topology.topo.io/podset-size":"%d"},
"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"%s","uid":"%s",
"controller":true,"blockOwnerDeletion":true}]]=]

common.install("slots", "bench", function(n)
    local job = string.format("slots-t%d-j%d", tid, math.floor(n / JOB_SIZE))
    local uid = string.format("%08x-0000-4000-9000-%012x", tid, math.floor(n / JOB_SIZE))
    local index = n % JOB_SIZE
    return string.format(meta_template, uid, job, index, uid, job, index, JOB_SIZE, job, uid)
end)
