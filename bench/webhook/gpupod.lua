-- wrk script: a GPU pod without topology annotations (a notebook or an
-- inference replica: 1, 2, 4 or 8 GPUs, each with its own cpu and memory,
-- 12 shapes in turn, bench_admission's --kind packed), in namespace team-a,
-- tolerating the GPU nodes' taint. With packing on (bench/webhook/
-- packing.yaml) every answer must steer it: a patch whose first operation
-- adds spec.affinity with the preferred terms, the best domain's weight
-- 100 first; with packing off it is allowed unchanged.
--   wrk ... -s gpupod.lua URL -- patch|nopatch|allow
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local common = dofile(dir .. "common.lua")

-- base64 of '[{"op":"add","path":"/spec/affinity","value":{"nodeAffinity":
-- {"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100' (126
-- bytes, whole 3-byte groups).
common.expected_patch_prefix =
    "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvYWZmaW5pdHkiLCJ2YWx1ZSI6eyJub2RlQWZmaW5pdHkiOnsicHJl" ..
    "ZmVycmVkRHVyaW5nU2NoZWR1bGluZ0lnbm9yZWREdXJpbmdFeGVjdXRpb24iOlt7IndlaWdodCI6MTAw"

-- gpus, cpu, memory (a generated node has 16 cpu and 250Gi per GPU); the
-- same list as bench/bench_admission.c's gpu_shapes.
local shapes = {
    {1, "2", "16Gi"}, {1, "4", "32Gi"}, {1, "8", "64Gi"},
    {2, "6", "48Gi"}, {2, "12", "128Gi"}, {2, "16", "200Gi"},
    {4, "16", "256Gi"}, {4, "32", "500Gi"}, {4, "48", "800Gi"},
    {8, "64", "1000Gi"}, {8, "96", "1500Gi"}, {8, "120", "1900Gi"},
}
local toleration = [[,{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]]

common.install("notebook", "team-a", [["labels":{"app":"notebook"}]], function(n)
    local s = shapes[n % #shapes + 1]
    return string.format('{"requests":{"cpu":"%s","memory":"%s","nvidia.com/gpu":"%d"},' ..
                         '"limits":{"memory":"%s","nvidia.com/gpu":"%d"}}',
                         s[2], s[3], s[1], s[3], s[1]), toleration
end)
