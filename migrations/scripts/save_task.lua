-- Saves a terminal task with its message record, context index and owner index, atomically.
-- KEYS[1] = message key, KEYS[2] = task key, KEYS[3] = context key, KEYS[4] = owner index
-- (one hash tag: one slot).
-- ARGV[1] = message record (the task id), ARGV[2] = task JSON, ARGV[3] = TTL seconds,
-- ARGV[4] = task id, ARGV[5] = '1' for a new task (appended to its context; not yet in the
-- owner index), ARGV[6] = context cap, ARGV[7] = owner index cap, ARGV[8] = owner index entry
-- (`<taskId>\t…`).
-- Returns {1} when saved, {0, existing record} when the message was already seen.
local existing = redis.call('GET', KEYS[1])
if existing then
  return {0, existing}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
if ARGV[5] == '1' then
  redis.call('RPUSH', KEYS[3], ARGV[4])
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[6]), -1)
else
  -- A continued task: its earlier entry leaves the owner index.
  local prefix = ARGV[4] .. '\t'
  for _, entry in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
    if string.sub(entry, 1, #prefix) == prefix then
      redis.call('LREM', KEYS[4], 0, entry)
    end
  end
end
redis.call('EXPIRE', KEYS[3], ARGV[3])
redis.call('RPUSH', KEYS[4], ARGV[8])
redis.call('LTRIM', KEYS[4], -tonumber(ARGV[7]), -1)
redis.call('EXPIRE', KEYS[4], ARGV[3])
return {1}
