-- Holds one of the owner's stream places, unless every place is held. A place is held until
-- its end (renewed while the stream lives), so a replica that dies frees its places.
-- KEYS[1] = owner's open streams (sorted set by end).
-- ARGV[1] = stream id, ARGV[2] = hold ms, ARGV[3] = most streams.
-- Returns 1 when held, 0 when every place is taken.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false
    and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
