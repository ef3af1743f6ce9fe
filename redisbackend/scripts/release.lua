-- Release: free the lease ARGV[1] (release.go). Sent as prelude.lua,
-- lib.lua, this file, index_swap.lua (index_read.lua in the cluster
-- layout), rw.lua, rw_release.lua, release_lock.lua and handoff.lua: the
-- lock and its index are deleted when the lock id owns the lock, or the
-- lock goes to the head of the key's queue of waiters (queue.go).
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] tombstone ttlMs, ARGV[3] this
-- call's nonce (unique per Release call, the same in every copy of its
-- command), ARGV[4] the start of the queue keys ("<prefix>:queue:", the
-- lock key follows), ARGV[5] (optional) the hand-off channel of the
-- releasing Backend (notify.go), ARGV[6] (optional, with ARGV[5]) the
-- locality bound in µs and ARGV[7] (optional) a candidate's queue entry
-- (local.go; see handoff.lua).
--
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired
-- (a slot of a limit); or, when the lock was handed to a waiter of the
-- releasing Backend (its entry names ARGV[5]), {1, <lock id>, <fence>,
-- <expiresAtMs>}: the Backend gives that waiter the lease itself, and
-- nothing is published; when it was handed to another waiter (or a
-- slot's release granted slots: the first), {2, <fence>} (released; the
-- fence of the waiter's lease, for the release's spans). A copy of the
-- call reads 1 in both cases.
local id, tombMs, nonce, queueStart = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local mine, localUs, cand = ARGV[5], ARGV[6], ARGV[7]
local markLock, markTTL, record -- no mark (release_mark.lua)
