-- Release leaving a mark: free the lease ARGV[1] and, in the same step,
-- mark its key done (done.go: ReleaseDone's done marker, ReleaseRecord's
-- record). Sent as prelude.lua, lib.lua, this file, index_read.lua, rw.lua,
-- rw_release.lua, release_lock.lua and handoff.lua. The mark is written only when the
-- lease is released (1, or a hand-off), and the hand-off publishes to
-- every waiter, those of the releasing Backend too.
-- KEYS[1] index key, KEYS[2] the mark's key (done marker or record key,
-- derived from the lease's lock key); ARGV[1] lockId, ARGV[2] tombstone
-- ttlMs, ARGV[3] nonce, ARGV[4] the start of the queue keys, ARGV[5] the
-- lease's lock key (a lease of another key is not released: 0), ARGV[6]
-- the mark's ttlMs, ARGV[7] (optional) the record; without it the mark is
-- the lease's fence.
-- Returns release.lua's replies but {1, ...}.
local id, tombMs, nonce, queueStart = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local mine, localUs, cand -- no hand-off told in the reply (release.lua)
local markLock, markTTL, record = ARGV[5], ARGV[6], ARGV[7]
