-- Appends one event to a task's log (a stream) and wakes its subscribers on every replica.
-- The log is closed by its final event; an event after that is refused. A log at its cap in
-- events or bytes refuses further events but the final one, so every subscriber reads the same
-- log, and a late one reads it whole.
-- KEYS[1] = the stream, KEYS[2] = the log's counters (hash: bytes, closed); one hash tag.
-- ARGV[1] = event JSON, ARGV[2] = '1' for the final event, ARGV[3] = most events,
-- ARGV[4] = most bytes, ARGV[5] = TTL seconds, ARGV[6] = signal channel, ARGV[7] = signal.
-- Returns the entry id, 0 when the log is closed, -1 when it is full.
if redis.call('HGET', KEYS[2], 'closed') then
  return 0
end
local size = string.len(ARGV[1])
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[2], 'closed', '1')
else
  local bytes = tonumber(redis.call('HGET', KEYS[2], 'bytes') or '0')
  if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[3]) - 1 or bytes + size > tonumber(ARGV[4]) then
    return -1
  end
end
redis.call('HINCRBY', KEYS[2], 'bytes', size)
local id = redis.call('XADD', KEYS[1], 'MAXLEN', tonumber(ARGV[3]), '*', 'e', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return id
