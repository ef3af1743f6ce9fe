-- The index of a lease, read first by a script that acts on one lease
-- (extend.lua, lookup_id.lua): lockKey is what it holds (false: nothing),
-- and wantRW whether it is a read-write lock's holder (rw.lua).
local lockKey = redis.call('GET', KEYS[1])
wantRW = lockKey ~= false and lockKey > '\2' and lockKey < '\3' -- first byte RW: a read-write lock's holder
