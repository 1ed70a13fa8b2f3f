-- Migration 3: the owner in every key (`{o:<owner>}`) is now a hash of the pair (issuer, sub)
-- instead of sub alone, so two issuers' users never share tasks or rate limits. A hash cannot
-- be recomputed from the old one, so nothing is transformed: keys of the old owners are no
-- longer read and expire on their own (tasks within the task TTL, 24 h by default; rate-limit
-- buckets within a minute). Raising the version makes a server of the previous layout refuse
-- to start against this Redis, so replicas of both layouts never serve side by side.
-- KEYS[1] = schema version key. Returns the version after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < 3 then
  redis.call('SET', KEYS[1], '3')
  return 3
end
return current
