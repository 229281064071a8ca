-- wrk script: a pod without topology annotations (fixtures/admission/
-- plain-pod/request.json with a unique uid and name per request), which the
-- webhook must allow unchanged: the pass-through path (decode, classify,
-- answer). The request is built per request like topology.lua's so both
-- scripts cost the client the same.
--   wrk ... -s passthrough.lua URL -- nopatch|allow
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local common = dofile(dir .. "common.lua")

common.install("web", "default", [["labels":{"app":"web"}]])
