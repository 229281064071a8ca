-- Shared by the request scripts here (loaded with dofile): unique
-- request uids and pod names per thread, the response check, and the summary
-- line run.sh parses. Each wrk thread has its own Lua state; setup() runs in
-- the main state and numbers the threads, done() reads their counters.

local common = {}

local threads = {}
local next_id = 0

-- Main state: give each thread an id and remember it for done().
function common.setup(thread)
    next_id = next_id + 1
    thread:set("tid", next_id)
    table.insert(threads, thread)
end

-- Thread state: what every answer must be: "patch" (allowed with a JSON
-- Patch placing the pod), "nopatch" (allowed unchanged) or "allow" (allowed,
-- nothing more: the --noop floor's fixed answer).
function common.init(args)
    expect = args[1] or "allow"
    sent = 0
    bad = 0
    checked = 0
    first_bad = nil
    wrk.headers["Content-Type"] = "application/json"
end

-- A v4-shaped uid, unique per thread and request.
function common.uid()
    return string.format("%08x-0000-4000-8000-%012x", tid, sent)
end

function common.request(body)
    sent = sent + 1
    return wrk.format("POST", "/mutate", nil, body)
end

-- Every answer is checked (plain string.find: cheap next to the request):
-- 200, allowed, and for topology pods a patch whose first operation sets
-- the nodeSelector (placed, not gated: expected_patch_prefix, set by the
-- script, is the base64 of that operation's opening bytes).
function common.response(status, headers, body)
    checked = checked + 1
    local ok = status == 200 and string.find(body, '"allowed":true', 1, true) ~= nil
    if ok and expect == "patch" then
        ok = string.find(body, '"patch":"' .. common.expected_patch_prefix, 1, true) ~= nil
    elseif ok and expect == "nopatch" then
        ok = string.find(body, '"patch"', 1, true) == nil
    end
    if not ok then
        bad = bad + 1
        if first_bad == nil then
            first_bad = status .. " " .. string.sub(body, 1, 300)
        end
    end
end

-- A real-shaped AdmissionReview of a Pod CREATE (from fixtures/admission):
-- the pod `name` in `namespace`, with `meta` (the JSON of its labels or
-- annotations member) spliced into its metadata.
local review_template = [[
{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"%s",
"kind":{"group":"","version":"v1","kind":"Pod"},
"resource":{"group":"","version":"v1","resource":"pods"},
"requestKind":{"group":"","version":"v1","kind":"Pod"},
"requestResource":{"group":"","version":"v1","resource":"pods"},
"name":"%s","namespace":"%s","operation":"CREATE",
"userInfo":{"username":"system:serviceaccount:kube-system:job-controller",
"uid":"5d0c3a4e-8d55-4a4b-9a3c-0f3b1c2d3e4f",
"groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]},
"object":{"kind":"Pod","apiVersion":"v1",
"metadata":{"name":"%s","namespace":"%s",%s},
"spec":{"containers":[{"name":"worker","image":"nvcr.io/nvidia/pytorch:24.05-py3",
"resources":%s}],
"restartPolicy":"Never","schedulerName":"default-scheduler","terminationGracePeriodSeconds":30,
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}%s]},
"status":{}},
"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}
]]

-- The container's resources unless a script gives its own (cpu 100m only,
-- so that the cluster's capacity outlasts a run).
common.default_resources = [[{"requests":{"cpu":"100m"}}]]

-- The request posting that review for pod `name` with `meta`, a fresh uid;
-- `resources` (the container's resources member, JSON) and `tolerations`
-- (JSON appended to the pod's one toleration, starting with a comma) are
-- optional.
function common.review(name, namespace, meta, resources, tolerations)
    return common.request(string.format(review_template, common.uid(), name, namespace, name,
                                        namespace, meta, resources or common.default_resources,
                                        tolerations or ""))
end

-- Makes the calling script a wrk script posting that review for a new pod
-- per request (named prefix-t<thread>-<n>, a fresh uid; meta a string, or a
-- function of the pod's number in its thread, 0 first, returning one; pod, when
-- given, such a function returning the container's resources and extra
-- tolerations for common.review): wrk
-- looks up setup/init/request/response/done as globals. PACE_MS in the
-- environment (a number of milliseconds) makes each connection wait that
-- long before each request (wrk's delay() hook, not counted in latency): a
-- paced load the server is not saturated by, as an API server's admission
-- traffic is, so latency is the request's own and not the queue behind it.
function common.install(prefix, namespace, meta, pod)
    local pace = tonumber(os.getenv("PACE_MS") or "")
    if pace and pace > 0 then
        delay = function() return pace end
    end
    setup = common.setup
    init = common.init
    response = common.response
    done = common.done
    request = function()
        local m = type(meta) == "function" and meta(sent) or meta
        local resources, tolerations
        if pod then
            resources, tolerations = pod(sent)
        end
        return common.review(string.format("%s-t%d-%d", prefix, tid, sent + 1), namespace, m,
                             resources, tolerations)
    end
end

-- One line for run.sh: BENCH key=value ... (latencies in microseconds).
function common.done(summary, latency, requests)
    local bad_total, checked_total, sample = 0, 0, nil
    for _, t in ipairs(threads) do
        bad_total = bad_total + (t:get("bad") or 0)
        checked_total = checked_total + (t:get("checked") or 0)
        sample = sample or t:get("first_bad")
    end
    local e = summary.errors
    io.write(string.format(
        "BENCH requests=%d duration_us=%d p50_us=%.1f p99_us=%.1f max_us=%.1f " ..
        "non2xx=%d sockerr=%d checked=%d bad=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        latency.max, e.status, e.connect + e.read + e.write + e.timeout, checked_total, bad_total))
    if sample then
        io.write("BENCH_FIRST_BAD " .. sample .. "\n")
    end
end

return common
