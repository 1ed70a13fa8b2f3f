-- Defines store_task(), the end shared by save_task.lua and finish_task.lua (this text is sent
-- before each): stores the terminal task and updates its context and the owner index. Each
-- command inside a script costs Redis about as much as a whole small command sent alone, so a
-- trim runs only when a list is over its cap.
-- KEYS[2..4] and ARGV[2..8] as described in save_task.lua.
local function store_task()
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
  if ARGV[5] == '1' then
    local context_cap = tonumber(ARGV[6])
    if redis.call('RPUSH', KEYS[3], ARGV[4]) > context_cap then
      redis.call('LTRIM', KEYS[3], -context_cap, -1)
    end
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
  -- The owner index is trimmed once it is an eighth over its cap, not at every save past it:
  -- readers take its last ARGV[7] entries.
  local index_cap = tonumber(ARGV[7])
  if redis.call('RPUSH', KEYS[4], ARGV[8]) > index_cap + math.floor(index_cap / 8) then
    redis.call('LTRIM', KEYS[4], -index_cap, -1)
  end
  redis.call('EXPIRE', KEYS[4], ARGV[3])
end
