-- Defines `release(in_flight, holding, id, owner, host)`: frees the places in flight a claim of
-- the delivery holds, if it holds any. Sent first in `push_finish.lua`'s script and
-- `push_retry.lua`'s.
local function release(in_flight, holding, id, owner, host)
  if redis.call('SREM', holding, id) == 0 then
    return
  end
  for _, counter in ipairs({owner, host}) do
    if redis.call('HINCRBY', in_flight, counter, -1) <= 0 then
      redis.call('HDEL', in_flight, counter)
    end
  end
end
