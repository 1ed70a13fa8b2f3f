-- Generic cell rate algorithm (GCRA) for one rate-limit bucket, on Redis' own clock so replica
-- clocks never matter. Atomic: concurrent replicas cannot race between read and write.
-- Defines gcra(key, interval, burst) for the scripts sent after this text: charge.lua (the
-- limiter's check) and save_task.lua (a save that carries the charge of its call).
-- key = bucket key (the theoretical arrival time, TAT, in microseconds), interval = emission
-- interval T in microseconds (period / limit), burst = limit.
-- Returns {allowed (1/0), remaining, retry_after_us, reset_after_us}; a refusal changes nothing.
local function gcra(key, interval, burst)
  local clock = redis.call('TIME')
  local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then
    tat = now
  end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * burst
  if now < allow_at then
    return {0, 0, allow_at - now, tat - now}
  end
  redis.call('SET', key, new_tat, 'PX', math.ceil((new_tat - now) / 1000))
  return {1, math.floor((now - allow_at) / interval), 0, new_tat - now}
end
