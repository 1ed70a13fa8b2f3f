-- Migration 2: rate-limit buckets join the layout (`a2a:v1:{o:<owner>}:rl:<plan>:<bucket>`,
-- strings holding a GCRA arrival time, expiring when the bucket is full again). New keys only:
-- nothing to transform. Raises the schema version to 2 if it is lower, atomically.
-- KEYS[1] = schema version key. Returns the version after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < 2 then
  redis.call('SET', KEYS[1], '2')
  return 2
end
return current
