-- Ends a working task once: whoever runs this first for a task (its runner, a cancel, or a
-- reaper after the lease ran out) removes the working record and stores the terminal task;
-- every later call changes nothing. store_task.lua comes before this text in the script that
-- runs.
-- KEYS[1] = working record, KEYS[2] = task key, KEYS[3] = context key, KEYS[4] = owner index,
-- KEYS[5] = owner's running tasks (one hash tag).
-- ARGV[2..8] as in save_task.lua; ARGV[9] = 'runner', 'cancel' or 'expired';
-- ARGV[10] = the runner id (for 'runner').
-- Returns {1} when this call ended the task, {0} when the record is gone or not this runner's,
-- {-1} for 'expired' when the lease has not run out.
local runner = redis.call('HGET', KEYS[1], 'runner')
if not runner then
  return {0}
end
if ARGV[9] == 'runner' and runner ~= ARGV[10] then
  return {0}
end
if ARGV[9] == 'expired' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  if tonumber(redis.call('HGET', KEYS[1], 'lease')) > now then
    return {-1}
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[5], ARGV[4])
store_task()
return {1}
