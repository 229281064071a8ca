-- wrk script: a pod without topology annotations (fixtures/admission/
-- plain-pod/request.json with a unique uid and name per request), which the
-- webhook must allow unchanged: the pass-through path (decode, classify,
-- answer). The request is built per request like topology.lua's so both
-- scripts cost the client the same.
--   wrk ... -s passthrough.lua URL -- nopatch|allow
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local common = dofile(dir .. "common.lua")

local template = [[
{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"%s",
"kind":{"group":"","version":"v1","kind":"Pod"},
"resource":{"group":"","version":"v1","resource":"pods"},
"requestKind":{"group":"","version":"v1","kind":"Pod"},
"requestResource":{"group":"","version":"v1","resource":"pods"},
"name":"%s","namespace":"default","operation":"CREATE",
"userInfo":{"username":"system:serviceaccount:kube-system:job-controller",
"uid":"5d0c3a4e-8d55-4a4b-9a3c-0f3b1c2d3e4f",
"groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},
"object":{"kind":"Pod","apiVersion":"v1",
"metadata":{"name":"%s","namespace":"default","labels":{"app":"web"}},
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
    local name = string.format("web-t%d-%d", tid, sent + 1)
    return common.request(string.format(template, uid, name, name))
end
