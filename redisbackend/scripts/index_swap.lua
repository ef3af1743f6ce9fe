-- The index of a release, swapped for the tombstone of a release in one
-- command (SET GET): lockKey is what the index held (false: nothing),
-- written that the tombstone is written. Every other outcome then writes
-- its own tombstone over it, or puts back what the index held
-- (release_lock.lua). The single layout's release only: in the cluster
-- layout a resharding can move the lock key away from its index, and the
-- GET of the lock key then fails after this write (index_read.lua).
local lockKey = redis.call('SET', KEYS[1], tombstone('1', nonce), 'GET', 'PX', tombMs)
local written = true
wantRW = lockKey ~= false and lockKey > '\2' and lockKey < '\3' -- first byte RW: a read-write lock's holder
