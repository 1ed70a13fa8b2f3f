-- Saves a terminal task with its message record, context index and owner index, atomically.
-- With a charge (KEYS[5]), the call is charged to its rate-limit bucket in the same step, once
-- the message is known to be new, and nothing is stored when the charge is refused: a new
-- message of a cheap skill is then checked, charged and saved in one round trip.
-- gcra.lua and store_task.lua come before this text in the script that runs.
-- KEYS[1] = message key, KEYS[2] = task key, KEYS[3] = context key, KEYS[4] = owner index,
-- KEYS[5] = the caller's rate-limit bucket, only with a charge (one hash tag: one slot).
-- ARGV[1] = message record (the task id), ARGV[2] = task JSON, ARGV[3] = TTL seconds,
-- ARGV[4] = task id, ARGV[5] = '1' for a new task (appended to its context; not yet in the
-- owner index), ARGV[6] = context cap, ARGV[7] = owner index cap, ARGV[8] = owner index entry
-- (`<taskId>\t…`); with a charge, ARGV[9] = emission interval in picoseconds, ARGV[10] = burst.
-- Returns {0, existing record} when the message was already seen (nothing charged or stored);
-- {1} when saved without a charge; with one, {1, gcra reply…} when charged and saved and
-- {2, gcra reply…} when the charge was refused (nothing stored).
-- The record is written first (SET NX, one command for the check and the write) and taken back
-- when the charge is refused.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[3]) then
  return {0, redis.call('GET', KEYS[1])}
end
local charged = {}
if KEYS[5] then
  charged = gcra(KEYS[5], tonumber(ARGV[9]), tonumber(ARGV[10]))
  if charged[1] == 0 then
    redis.call('DEL', KEYS[1])
    return {2, unpack(charged)}
  end
end
store_task()
return {1, unpack(charged)}
