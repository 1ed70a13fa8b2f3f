-- Records a task that starts running: its working record (the runner's id, the task as JSON,
-- the lease's end), its place among the owner's running tasks and its message's record (so a
-- resend through any replica finds the task), unless the message was seen before or the owner
-- already runs as many tasks as allowed. Times are Redis' clock, in milliseconds.
-- KEYS[1] = working record (hash), KEYS[2] = owner's running tasks (sorted set by lease end),
-- KEYS[3] = the message's record (the task id, as save_task.lua keeps it); one hash tag.
-- ARGV[1] = runner id, ARGV[2] = task JSON, ARGV[3] = lease ms, ARGV[4] = most running tasks,
-- ARGV[5] = task id, ARGV[6] = TTL seconds of the working keys (a bound, never reached by a
-- live task) and of the message's record (that of a stored task).
-- Returns {1} when started, {0} when the owner runs the most allowed, {-1} when the task
-- already runs, {2, task id} when the message was seen before.
local seen = redis.call('GET', KEYS[3])
if seen then
  return {2, seen}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {-1}
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return {0}
end
local lease_end = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'runner', ARGV[1], 'task', ARGV[2], 'lease', lease_end)
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], lease_end, ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[6])
redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[6])
return {1}
