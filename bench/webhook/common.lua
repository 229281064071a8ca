-- Shared by topology.lua and passthrough.lua (loaded with dofile): unique
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
