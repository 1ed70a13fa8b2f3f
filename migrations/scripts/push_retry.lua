-- Makes a pending push delivery due again ARGV[2] ms from now on Redis' clock.
-- KEYS[1] = due set, KEYS[2] = deliveries. ARGV[1] = id. Returns 1 if it was pending.
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
