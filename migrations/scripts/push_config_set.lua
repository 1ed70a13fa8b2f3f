-- Sets one push config of a task, unless the task already has the most allowed (replacing a
-- config of the same id is always allowed). The task's configs live as long as tasks do.
-- KEYS[1] = the task's configs (config id -> config JSON).
-- ARGV[1] = config id, ARGV[2] = config JSON, ARGV[3] = cap, ARGV[4] = TTL seconds.
-- Returns 1 when set, 0 when the cap refused it.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
