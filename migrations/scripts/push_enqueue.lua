-- Adds a pending push delivery, due now on Redis' clock, unless a cap is reached.
-- KEYS[1] = due set (id -> due time, ms), KEYS[2] = deliveries (id -> record),
-- KEYS[3] = attempts (id -> count), KEYS[4] = counters (`t:<owner>:<task>`, `o:<owner>`),
-- KEYS[5] = routes (id -> the counters of its owner and host in flight, for fair claims);
-- one hash tag: one slot.
-- ARGV[1] = id, ARGV[2] = record, ARGV[3] = task counter, ARGV[4] = owner counter,
-- ARGV[5] = cap per task, ARGV[6] = cap per owner, ARGV[7] = cap in all,
-- ARGV[8] = route (`o:<owner>` and `h:<host>` on two lines).
-- Returns 1 when added (or already there), -1 total cap, -2 task cap, -3 owner cap.
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  return 1
end
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[7]) then
  return -1
end
if tonumber(redis.call('HGET', KEYS[4], ARGV[3]) or '0') >= tonumber(ARGV[5]) then
  return -2
end
if tonumber(redis.call('HGET', KEYS[4], ARGV[4]) or '0') >= tonumber(ARGV[6]) then
  return -3
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[8])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[3], 1)
redis.call('HINCRBY', KEYS[4], ARGV[4], 1)
return 1
