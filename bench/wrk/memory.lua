-- wrk script for the memory benchmark: exactly BENCH_TOTAL `message/send` calls (the same body
-- as rpc.lua, a unique messageId each), split across the wrk threads. A thread that has sent its
-- share asks for GET /healthz (which stores nothing) until every one of its sends has been
-- answered, then stops; wrk itself is stopped by bench/memory.py with SIGINT. One result line at
-- the end counts the answers.
--
-- Environment:
--   BENCH_TOKEN    bearer token
--   BENCH_PREFIX   messageId prefix; the ids are PREFIX-THREAD-1 … PREFIX-THREAD-SHARE
--   BENCH_TOTAL    number of `message/send` calls over all threads
--   BENCH_THREADS  number of wrk threads (the same as wrk's -t)
--   BENCH_BODIES   optional: a file of request bodies, one a line, each holding `%s` once where
--                  the messageId goes; a thread's k-th send is line ((k - 1) mod lines) + 1 (the
--                  mixed tasks of bench/memory). Without it every send is SEND below.

local SEND = '{"jsonrpc":"2.0","id":%d,"method":"message/send","params":{"message":'
  .. '{"kind":"message","messageId":"%s","role":"user","parts":[{"kind":"data","data":'
  .. '{"date":"2026-12-08"}}],"metadata":{"skillId":"saints_of_the_day"}}}}'

local threads = {}
local next_thread = 0
function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

-- Per thread: its share, how many sends went out, how many sends were answered with a completed
-- task (ok) or anything else (bad), and how many filler requests were answered.
share, sent, ok, bad, filler = 0, 0, 0, 0, 0
local prefix, idle
-- The bodies of BENCH_BODIES, each split where its messageId goes: {head, tail}.
local bodies = {}
-- wrk calls request() once on thread 0 before the run, to check the script, and drops what it
-- returns: that call must not use up a messageId.
local checked = false

function init(args)
  local total = tonumber(os.getenv("BENCH_TOTAL") or "0")
  local count = tonumber(os.getenv("BENCH_THREADS") or "1")
  share = math.floor(total / count)
  if thread_index < total % count then
    share = share + 1
  end
  prefix = (os.getenv("BENCH_PREFIX") or "memory") .. "-" .. tostring(thread_index) .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local token = os.getenv("BENCH_TOKEN") or ""
  if token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
  idle = wrk.format("GET", "/healthz", {}, "")
  local path = os.getenv("BENCH_BODIES") or ""
  if path ~= "" then
    for line in io.lines(path) do
      local at = string.find(line, "%s", 1, true)
      table.insert(bodies, {string.sub(line, 1, at - 1), string.sub(line, at + 2)})
    end
  end
end

-- The k-th send's body with its messageId.
local function body(k, message_id)
  if #bodies == 0 then
    return string.format(SEND, k, message_id)
  end
  local parts = bodies[((k - 1) % #bodies) + 1]
  return parts[1] .. message_id .. parts[2]
end

function request()
  if thread_index == 0 and not checked then
    checked = true
    return idle
  end
  if sent >= share then
    return idle
  end
  sent = sent + 1
  return wrk.format(nil, nil, nil, body(sent, prefix .. sent))
end

function response(status, headers, body)
  if string.find(body, '"jsonrpc"', 1, true) then
    if status == 200 and string.find(body, '"state":"completed"', 1, true) then
      ok = ok + 1
    else
      bad = bad + 1
    end
    if ok + bad >= share then
      wrk.thread:stop()
    end
  else
    filler = filler + 1
  end
end

function done(summary, latency, requests)
  local s, o, b, f, shares = 0, 0, 0, 0, {}
  for _, thread in ipairs(threads) do
    s = s + thread:get("sent")
    o = o + thread:get("ok")
    b = b + thread:get("bad")
    f = f + thread:get("filler")
    table.insert(shares, tostring(thread:get("share")))
  end
  io.write(string.format(
    'BENCH_MEMORY {"sent":%d,"ok":%d,"bad":%d,"filler":%d,"shares":[%s],"requests":%d,'
      .. '"duration_us":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d}\n',
    s, o, b, f, table.concat(shares, ","), summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
