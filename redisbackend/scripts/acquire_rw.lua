-- AcquireRW (after prelude.lua, lib.lua, rw_busy.lua and rw.lua): take key KEYS[1] as a
-- reader (ARGV[5] "r": while no writer holds it or waits before the
-- caller) or as the writer ("w": when nobody holds it or waits before the
-- caller), with a fence from the key's counter; when the key is busy and
-- the caller waits in the key's queue (queue.go), take or keep its place.
-- Holders that expired are dropped and the key handed to the waiters
-- first (rw.lua, R.grant).
-- KEYS[1] lock key (the sorted set of holders), KEYS[2] index key,
-- KEYS[3] fence key, KEYS[4] (optional) the key's queue
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] user key, ARGV[4] "1" for a
-- striped fence counter, ARGV[5] mode, ARGV[6] the start of the queue
-- keys; with KEYS[4]: ARGV[7] the caller's queue entry, ARGV[8] "1" when
-- it may be queued already, ARGV[9] the queue's TTL in ms.
-- Returns the caller's index value (rw.lua, R.index) when this run
-- granted it, else acquire_slot.lua's replies: {1, fence, expiresAtMs}
-- (a grant of an earlier run, or a hand-off), {0, the latest expiry among
-- the holders}, {-3, fence}, {-4}; SYNCGUARD_KIND while a live plain lock
-- or limit holds the key.
--
-- Safe to run twice: the id of a live holder gets its grant back; after
-- its release the tombstone on the index key takes nothing.
--
-- The uncontended attempt (no set, no queue, no index: busy is false,
-- rw_busy.lua) runs six commands (EXISTS, TIME, INCR, ZADD, PEXPIRE, SET),
-- makes none of rw.lua's helpers and answers with the index value it
-- wrote (a string: a table reply costs more).
local nowMs, t = serverMs()
local lockKey, id, mode = KEYS[1], ARGV[1], ARGV[5]
local queue = ARGV[6] .. lockKey -- (as rw_busy.lua's)
local state, granted, blocked = '', {}, false
if busy then
  local R = rwlib()
  local idx = redis.call('GET', KEYS[2])
  if idx then
    if string.byte(idx, 1) == TOMB then return {-4} end
    -- The index of a live holder (its expiry is its score's).
    local m, fence, _, exp = R.parse(idx)
    if m and exp > nowMs and R.member(lockKey, m .. id) then return {1, fence, exp} end
  end
  local kind
  state, kind = R.state(lockKey, nowMs)
  if not state then return kind end
  local idPrefix = string.sub(KEYS[2], 1, #KEYS[2] - #id)
  granted, blocked, state = R.grant(lockKey, queue, idPrefix, ARGV[3], nowMs, state)
  if granted[id] then return {1, granted[id][1], granted[id][2]} end
end

if blocked or state == 'w' or (mode == 'w' and state == 'r') then
  if KEYS[4] then
    redis.call('ZADD', KEYS[4], 'NX', t[1] * 1000000 + t[2], ARGV[7])
    redis.call('PEXPIRE', KEYS[4], ARGV[9])
  end
  local last = redis.call('ZRANGE', lockKey, -1, -1, 'WITHSCORES')
  return {0, tonumber(last[2]) or 0}
end

local f
if ARGV[4] == '1' then
  f = lib().nextFence(KEYS[3], true, nowMs)
else
  f = redis.call('INCR', KEYS[3])
end
local fence = string.format('%015d', f)
if f > fenceMax then return {-3, fence} end
local expiresAtMs = nowMs + tonumber(ARGV[2])
-- R.index's value, written here so the uncontended attempt needs no rwlib.
local index = "\0021 " .. mode .. ' ' .. fence .. ' ' .. string.format('%d %d', nowMs, expiresAtMs) .. ' ' .. #lockKey .. ' ' .. lockKey .. ARGV[3]
if state == '' then
  -- The first holder: the set lives as long as it does.
  redis.call('ZADD', lockKey, expiresAtMs, mode .. id)
  redis.call('PEXPIRE', lockKey, ARGV[2])
  redis.call('SET', KEYS[2], index, 'PX', ARGV[2])
else
  lib().add(lockKey, KEYS[2], mode .. id, expiresAtMs, tonumber(ARGV[2]), index, true)
end
if KEYS[4] and ARGV[8] == '1' then redis.call('ZREM', KEYS[4], ARGV[7]) end
return index
