-- Generic cell rate algorithm (GCRA) for one rate-limit bucket, on Redis' own clock so replica
-- clocks never matter. Atomic: concurrent replicas cannot race between read and write.
-- Defines gcra(key, interval, burst, want) for the scripts sent after this text: charge.lua (the
-- limiter's check, which may take a lease of several calls at once) and save_task.lua (a save
-- that carries the charge of its call).
-- interval = emission interval T in picoseconds (a minute over the limit: 60e12 / limit, at
-- least 13,969 for the largest limit), burst = limit. A picosecond interval keeps every limit
-- exact, one call a microsecond (60,000,000 a minute) and far beyond included; every number
-- below stays an integer under 2^53, exact in Lua's doubles.
-- key = the bucket's theoretical arrival time (TAT) in microseconds on Redis' clock, written
-- with six decimals (its picoseconds), read as whole microseconds and picoseconds apart.
-- want = the calls to charge at most (nil: one); as many as the burst has room for are charged,
-- at least one or the call is refused.
-- Returns {allowed (1/0), remaining, retry_after_us, reset_after_us, charged}; a refusal changes
-- nothing.
local PS_PER_US = 1000000
local function gcra(key, interval, burst, want)
  local clock = redis.call('TIME')
  local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
  local stored = redis.call('GET', key)
  local backlog = 0
  if stored then
    local split = string.find(stored, '.', 1, true)
    local whole, extra = tonumber(stored), 0
    if split then
      whole = tonumber(string.sub(stored, 1, split - 1))
      extra = tonumber(string.sub(stored, split + 1))
    end
    backlog = math.max(0, (whole - now) * PS_PER_US + extra)
  end
  local tolerance = interval * burst
  if backlog + interval > tolerance then
    return {0, 0, math.ceil((backlog + interval - tolerance) / PS_PER_US), math.ceil(backlog / PS_PER_US), 0}
  end
  local charged = math.max(1, math.min(want or 1, math.floor((tolerance - backlog) / interval)))
  local new_backlog = backlog + charged * interval
  local whole_us = math.floor(new_backlog / PS_PER_US)
  local tat = string.format('%d.%06d', now + whole_us, new_backlog - whole_us * PS_PER_US)
  redis.call('SET', key, tat, 'PX', math.ceil(new_backlog / 1000000000))
  return {1, math.floor((tolerance - new_backlog) / interval), 0, math.ceil(new_backlog / PS_PER_US), charged}
end
