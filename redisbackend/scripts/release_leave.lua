-- Leaving a queue: a waiter that gives up (queue.go) takes its entry out
-- of the key's queue and releases whatever its lock id holds, so that a
-- hand-off that crossed its departure is handed on, not orphaned. Sent as
-- prelude.lua, lib.lua, this file, index_read.lua, rw.lua, rw_release.lua,
-- release_lock.lua and handoff.lua.
-- KEYS[1] the waiter's index key, KEYS[2] the queue key; ARGV[1] lockId,
-- ARGV[2] tombstone ttlMs, ARGV[3] nonce, ARGV[4] the start of the queue
-- keys, ARGV[5] the waiter's queue entry.
-- Returns release.lua's replies but {1, ...}: -1 when the id holds
-- nothing.
redis.call('ZREM', KEYS[2], ARGV[5])
local id, tombMs, nonce, queueStart = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local mine, localUs, cand -- no hand-off told in the reply (release.lua)
local markLock, markTTL, record -- no mark (release_mark.lua)
