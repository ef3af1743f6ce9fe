-- Acquire unless marked (done.go: AcquireDone, AcquireRecord), sent
-- before prelude.lua, lib.lua and acquire.lua: when the mark KEYS[4]
-- exists (a done marker, or a record key, derived from the lock key
-- KEYS[1]), the reply is {2, its value} and nothing is written, for the
-- cost of a GET: the prelude has not run yet. Else acquire.lua runs on
-- KEYS[1] to KEYS[3] and ARGV as it documents (no queue: the local KEYS
-- below hides KEYS[4] from it).
-- Safe to run twice, as acquire.lua is: a mark is only written by the
-- release of the key's lease (release_mark.lua), so a copy of a call that
-- took the lock finds no mark while that lease lives.
local mark = redis.call('GET', KEYS[4])
if mark then return {2, mark} end
local KEYS = {KEYS[1], KEYS[2], KEYS[3]}
