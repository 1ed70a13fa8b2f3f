-- Renews the runner's lease on a working task, and replaces the task's JSON when given.
-- KEYS[1] = working record, KEYS[2] = owner's running tasks (one hash tag).
-- ARGV[1] = runner id, ARGV[2] = lease ms, ARGV[3] = task id, ARGV[4] = task JSON or ''.
-- Returns 1, or 0 when the record is gone or another runner's (the task was canceled or
-- ended by a reaper): the runner stops.
if redis.call('HGET', KEYS[1], 'runner') ~= ARGV[1] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease_end = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'lease', lease_end)
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'task', ARGV[4])
end
redis.call('ZADD', KEYS[2], lease_end, ARGV[3])
return 1
