-- Migration 4: each user's task index joins the layout (`a2a:v1:{o:<owner>}:tasks`, a list of
-- index entries, for ListTasks), and message records are keyed by the message's id and content
-- (`msg:<hash>`, holding the task id). Nothing to transform: records of the old form expire
-- with their tasks, and tasks saved before this version are readable by id but not listed.
-- Raises the schema version to 4 if it is lower, atomically.
-- KEYS[1] = schema version key. Returns the version after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current < 4 then
  redis.call('SET', KEYS[1], '4')
  return 4
end
return current
