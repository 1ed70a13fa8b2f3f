-- One rate-limit check of the shared limiter: gcra.lua, then this text.
-- KEYS[1] = bucket key. ARGV[1] = emission interval in picoseconds, ARGV[2] = burst (= limit),
-- ARGV[3] = the calls to charge at most (a lease; absent: one).
-- Returns gcra's reply.
return gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
