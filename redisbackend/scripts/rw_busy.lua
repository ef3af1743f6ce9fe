-- The first test of AcquireRW (acquire_rw.lua), before rw.lua: busy when
-- the key's set, its queue or the caller's index exists (one EXISTS). A
-- free key (the uncontended attempt) needs none of rw.lua's helpers, and
-- rw.lua makes them only when wantRW is set.
local busy = redis.call('EXISTS', KEYS[1], ARGV[6] .. KEYS[1], KEYS[2]) > 0
wantRW = busy
