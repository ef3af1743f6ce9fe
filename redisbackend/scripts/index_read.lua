-- The index of a release, read before anything is written: lockKey is
-- what it holds (false: nothing); written is false, release_lock.lua
-- writes the tombstone. A release that fails on the lock key (moved away
-- by a resharding, in the cluster layout) has then written nothing.
local lockKey = redis.call('GET', KEYS[1])
local written = false
wantRW = lockKey ~= false and lockKey > '\2' and lockKey < '\3' -- first byte RW: a read-write lock's holder
