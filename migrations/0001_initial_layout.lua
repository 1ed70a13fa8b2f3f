-- Migration 1: the v1 key layout (see README.md). Nothing to transform: a fresh Redis has no
-- keys of an older layout. Raises the schema version to 1 if it is lower, atomically.
-- KEYS[1] = schema version key. Returns the version after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < 1 then
  redis.call('SET', KEYS[1], '1')
  return 1
end
return current
