-- wrk script for the A2A load benchmark: one JSON-RPC call per request, a unique messageId per
-- `message/send` request, an optional bearer token, an optional fixed delay between requests of a
-- connection (for the latency-at-half-peak run), and one machine-readable result line at the end.
--
-- Environment:
--   BENCH_MODE     send | get          which body to send (default send)
--   BENCH_TOKEN    bearer token        omitted when empty
--   BENCH_TASK_ID  task id             for `get`
--   BENCH_PREFIX   messageId prefix    unique per run, so ids never repeat across runs
--   BENCH_DELAY_MS milliseconds        pause of each connection between two requests

local SEND = '{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":'
  .. '{"kind":"message","messageId":"%s","role":"user","parts":[{"kind":"data","data":'
  .. '{"date":"2026-12-08"}}],"metadata":{"skillId":"saints_of_the_day"}}}}'
local GET = '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"%s"}}'

local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "")
if delay_ms then
  function delay()
    return delay_ms
  end
end

local next_thread = 0
function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end

local counter = 0
local prefix, mode, fixed

function init(args)
  mode = os.getenv("BENCH_MODE") or "send"
  prefix = (os.getenv("BENCH_PREFIX") or "bench") .. "-" .. tostring(thread_index) .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local token = os.getenv("BENCH_TOKEN") or ""
  if token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
  if mode == "get" then
    fixed = wrk.format(nil, nil, nil, string.format(GET, os.getenv("BENCH_TASK_ID") or "none"))
  end
end

function request()
  if fixed then
    return fixed
  end
  counter = counter + 1
  return wrk.format(nil, nil, nil, string.format(SEND, counter, prefix .. counter))
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,'
      .. '"p50_us":%d,"p99_us":%d,"p999_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.mean, latency.max))
end
