-- Generic cell rate algorithm (GCRA) for one rate-limit bucket, on Redis' own clock so replica
-- clocks never matter. Atomic: concurrent replicas cannot race between read and write.
-- KEYS[1] = bucket key (the theoretical arrival time, TAT, in microseconds).
-- ARGV[1] = emission interval T in microseconds (period / limit), ARGV[2] = burst (= limit).
-- Returns {allowed (1/0), remaining, retry_after_us, reset_after_us}.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local new_tat = tat + interval
local allow_at = new_tat - interval * burst
if now < allow_at then
  return {0, 0, allow_at - now, tat - now}
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil((new_tat - now) / 1000))
return {1, math.floor((now - allow_at) / interval), 0, new_tat - now}
