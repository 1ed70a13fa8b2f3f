-- Removes a push delivery that succeeded or was given up, lowers its counters and frees its
-- places in flight. Sent after `push_release.lua`.
-- KEYS[1] = due set, KEYS[2] = deliveries, KEYS[3] = attempts, KEYS[4] = counters,
-- KEYS[5] = routes, KEYS[6] = in flight, KEYS[7] = holding.
-- ARGV[1] = id, ARGV[2] = task counter, ARGV[3] = owner counter, ARGV[4] = owner in flight,
-- ARGV[5] = host in flight. Returns 1 if it was pending.
release(KEYS[6], KEYS[7], ARGV[1], ARGV[4], ARGV[5])
redis.call('HDEL', KEYS[5], ARGV[1])
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
for _, counter in ipairs({ARGV[2], ARGV[3]}) do
  if redis.call('HINCRBY', KEYS[4], counter, -1) <= 0 then
    redis.call('HDEL', KEYS[4], counter)
  end
end
return 1
