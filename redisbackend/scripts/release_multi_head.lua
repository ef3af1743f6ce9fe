-- Release several leases of one slot at once (multi.go): the release
-- script's files (release.lua, index_swap.lua or index_read.lua,
-- release_lock.lua, handoff.lua) are the body of releaseOne, sent between
-- this file and release_multi_tail.lua, and run once per lease with the
-- lease's own KEYS and ARGV. KEYS[i] is the index key of lease i; ARGV
-- holds 7 values per lease, release.lua's ARGV[1] to ARGV[7], "" for one
-- not sent. Returns release.lua's reply for each lease, in order.
local function releaseOne(KEYS, ARGV)
