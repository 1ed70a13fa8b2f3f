-- wrk script for the A2A load benchmark: one call per request (JSON-RPC on the 0.3 or the 1.0
-- wire, or the HTTP+JSON binding), a unique messageId per send, an optional bearer token, an optional fixed delay between requests of a
-- connection (for the latency-at-half-peak run), and one machine-readable result line at the end.
--
-- Environment:
--   BENCH_MODE     send | get          JSON-RPC 0.3 `message/send` / `tasks/get` (default send)
--                  send1 | get1        JSON-RPC 1.0 `SendMessage` / `GetTask`
--                  rest_send | rest_get  HTTP+JSON `POST …/message:send` / `GET …/tasks/{id}`
--                                      (the URL given to wrk is the binding's base path)
--   BENCH_TOKEN    bearer token        omitted when empty
--   BENCH_TASK_ID  task id             for `get`
--   BENCH_PREFIX   messageId prefix    unique per run, so ids never repeat across runs
--   BENCH_DELAY_MS milliseconds        pause of each connection between two requests
--   BENCH_EXPECT   answer | error      what every answer must be: an HTTP 200 without an error
--                                      member, or an error (any status); the answers that are
--                                      not are counted as `wrong` (a JSON-RPC error under HTTP
--                                      200 is not a served request)

local SEND = '{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":'
  .. '{"kind":"message","messageId":"%s","role":"user","parts":[{"kind":"data","data":'
  .. '{"date":"2026-12-08"}}],"metadata":{"skillId":"saints_of_the_day"}}}}'
local GET = '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"%s"}}'
local MESSAGE1 = '{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"data":'
  .. '{"date":"2026-12-08"}}],"metadata":{"skillId":"saints_of_the_day"}}}'
local SEND1 = '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":%s}'
local GET1 = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"%s"}}'

local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "")
if delay_ms then
  function delay()
    return delay_ms
  end
end

local next_thread = 0
local threads = {}
function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

wrong = 0
local expect = os.getenv("BENCH_EXPECT") or ""
if expect == "answer" then
  function response(status, headers, body)
    if status ~= 200 or string.find(body, '"error":{', 1, true) then
      wrong = wrong + 1
    end
  end
elseif expect == "error" then
  function response(status, headers, body)
    if not string.find(body, '"error":{', 1, true) then
      wrong = wrong + 1
    end
  end
end

local counter = 0
local prefix, mode, fixed

function init(args)
  mode = os.getenv("BENCH_MODE") or "send"
  prefix = (os.getenv("BENCH_PREFIX") or "bench") .. "-" .. tostring(thread_index) .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  if mode ~= "send" and mode ~= "get" then
    wrk.headers["A2A-Version"] = "1.0"
  end
  local token = os.getenv("BENCH_TOKEN") or ""
  if token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
  local task_id = os.getenv("BENCH_TASK_ID") or "none"
  if mode == "get" then
    fixed = wrk.format(nil, nil, nil, string.format(GET, task_id))
  elseif mode == "get1" then
    fixed = wrk.format(nil, nil, nil, string.format(GET1, task_id))
  elseif mode == "rest_get" then
    wrk.headers["Content-Type"] = nil
    fixed = wrk.format("GET", wrk.path .. "/tasks/" .. task_id, nil, nil)
  end
end

function request()
  if fixed then
    return fixed
  end
  counter = counter + 1
  local id = prefix .. counter
  if mode == "send1" then
    return wrk.format(nil, nil, nil, string.format(SEND1, counter, string.format(MESSAGE1, id)))
  elseif mode == "rest_send" then
    return wrk.format(nil, wrk.path .. "/message:send", nil, string.format(MESSAGE1, id))
  end
  return wrk.format(nil, nil, nil, string.format(SEND, counter, id))
end

function done(summary, latency, requests)
  local errors = summary.errors
  local wrong_answers = 0
  for _, thread in ipairs(threads) do
    wrong_answers = wrong_answers + (thread:get("wrong") or 0)
  end
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,'
      .. '"wrong":%d,"p50_us":%d,"p99_us":%d,"p999_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout, wrong_answers,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.mean, latency.max))
end
