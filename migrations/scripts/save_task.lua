-- Saves a terminal task with its message record, context index and owner index, atomically.
-- KEYS[1] = message key, KEYS[2] = task key, KEYS[3] = context key, KEYS[4] = owner index
-- (one hash tag: one slot).
-- ARGV[1] = message record (the task id), ARGV[2] = task JSON, ARGV[3] = TTL seconds,
-- ARGV[4] = task id, ARGV[5] = '1' for a new task (appended to its context; not yet in the
-- owner index), ARGV[6] = context cap, ARGV[7] = owner index cap, ARGV[8] = owner index entry
-- (`<taskId>\t…`).
-- Returns {1} when saved, {0, existing record} when the message was already seen.
-- store_task.lua follows this text in the script that runs.
local existing = redis.call('GET', KEYS[1])
if existing then
  return {0, existing}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
