-- Makes a pending push delivery due again ARGV[2] ms from now on Redis' clock and frees its
-- places in flight. Sent after `push_release.lua`.
-- KEYS[1] = due set, KEYS[2] = deliveries, KEYS[3] = in flight, KEYS[4] = holding.
-- ARGV[1] = id, ARGV[2] = delay, ARGV[3] = owner in flight, ARGV[4] = host in flight.
-- Returns 1 if it was pending.
release(KEYS[3], KEYS[4], ARGV[1], ARGV[3], ARGV[4])
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
