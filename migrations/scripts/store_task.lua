-- Defines store_task(), the end shared by save_task.lua and finish_task.lua (this text is sent
-- before each): stores the terminal task and updates its context and the owner index.
-- KEYS[2..4] and ARGV[2..8] as described in save_task.lua.
local function store_task()
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
  if ARGV[5] == '1' then
    redis.call('RPUSH', KEYS[3], ARGV[4])
    redis.call('LTRIM', KEYS[3], -tonumber(ARGV[6]), -1)
  else
    -- A continued task: its earlier entry leaves the owner index.
    local prefix = ARGV[4] .. '\t'
    for _, entry in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
      if string.sub(entry, 1, #prefix) == prefix then
        redis.call('LREM', KEYS[4], 0, entry)
      end
    end
  end
  redis.call('EXPIRE', KEYS[3], ARGV[3])
  redis.call('RPUSH', KEYS[4], ARGV[8])
  redis.call('LTRIM', KEYS[4], -tonumber(ARGV[7]), -1)
  redis.call('EXPIRE', KEYS[4], ARGV[3])
end
