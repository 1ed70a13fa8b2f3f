-- Claims up to ARGV[1] due push deliveries for a lease of ARGV[2] ms on Redis' clock: each is
-- made due again at the lease's end (so a replica that dies mid-delivery leaves it to another)
-- and its attempt count goes up by one.
-- KEYS[1] = due set, KEYS[2] = deliveries, KEYS[3] = attempts (one hash tag: one slot).
-- Returns a flat list: id, record, attempt, id, record, attempt, ...
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local claimed = {}
for _, id in ipairs(ids) do
  local record = redis.call('HGET', KEYS[2], id)
  if record then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    local attempt = redis.call('HINCRBY', KEYS[3], id, 1)
    table.insert(claimed, id)
    table.insert(claimed, record)
    table.insert(claimed, attempt)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return claimed
