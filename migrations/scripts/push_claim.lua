-- Claims up to ARGV[1] due push deliveries for a lease of ARGV[2] ms on Redis' clock, oldest
-- first, skipping a delivery whose owner already has ARGV[3] deliveries in flight or whose
-- host has ARGV[4], and looking at no more than ARGV[5] due deliveries. Each claimed delivery
-- is made due again at the lease's end (so a replica that dies mid-delivery leaves it to
-- another), its attempt count goes up by one, and it holds one place of its owner and one of
-- its host in flight until it is finished or retried; a claim whose lease ran out still holds
-- its places, and the claim that takes it over keeps them.
-- KEYS[1] = due set, KEYS[2] = deliveries, KEYS[3] = attempts, KEYS[4] = routes (id ->
-- `o:<owner>` and `h:<host>` on two lines), KEYS[5] = in flight (`o:<owner>`, `h:<host>` ->
-- count), KEYS[6] = holding (ids whose claim holds places); one hash tag: one slot.
-- Returns a flat list: id, record, attempt, id, record, attempt, ...
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local limit, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
local caps = {o = tonumber(ARGV[3]), h = tonumber(ARGV[4])}
local scan = tonumber(ARGV[5])
local counts = {}
local function in_flight(counter)
  if counts[counter] == nil then
    counts[counter] = tonumber(redis.call('HGET', KEYS[5], counter) or '0')
  end
  return counts[counter]
end
local function has_room(counter)
  return in_flight(counter) < caps[string.sub(counter, 1, 1)]
end
-- Takes the places of one delivery; false when its owner or host has its share.
local function take_places(id)
  local route = redis.call('HGET', KEYS[4], id)
  if not route or redis.call('SISMEMBER', KEYS[6], id) == 1 then
    return true
  end
  local owner, host = string.match(route, '^([^\n]*)\n(.*)$')
  if not owner then
    return true
  end
  if not has_room(owner) or not has_room(host) then
    return false
  end
  for _, counter in ipairs({owner, host}) do
    counts[counter] = redis.call('HINCRBY', KEYS[5], counter, 1)
  end
  redis.call('SADD', KEYS[6], id)
  return true
end
local claimed, taken, skipped, looked = {}, 0, 0, 0
while taken < limit and looked < scan do
  -- Claimed and removed deliveries leave the due range, so the skipped ones are its head.
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', skipped,
    math.min(limit - taken + 64, scan - looked))
  if #ids == 0 then
    break
  end
  for _, id in ipairs(ids) do
    if taken >= limit or looked >= scan then
      break
    end
    looked = looked + 1
    if redis.call('HEXISTS', KEYS[2], id) == 0 then
      redis.call('ZREM', KEYS[1], id)
      redis.call('HDEL', KEYS[4], id)
    elseif take_places(id) then
      redis.call('ZADD', KEYS[1], now + lease, id)
      local attempt = redis.call('HINCRBY', KEYS[3], id, 1)
      table.insert(claimed, id)
      table.insert(claimed, redis.call('HGET', KEYS[2], id))
      table.insert(claimed, attempt)
      taken = taken + 1
    else
      skipped = skipped + 1
    end
  end
end
return claimed
