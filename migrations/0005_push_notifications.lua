-- Migration 5: push notifications join the layout: each task's push configs
-- (`a2a:v1:{o:<owner>}:push:<taskId>`) and the shared delivery queue (`a2a:v1:{push}:*`).
-- Nothing to transform. Raises the schema version to 5 if it is lower, atomically.
-- KEYS[1] = schema version key. Returns the version after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < 5 then
  redis.call('SET', KEYS[1], '5')
  return 5
end
return current
