-- Acquire: take the lock when it is free or expired, bump the fence; when
-- it is busy and the caller waits in the key's queue (queue.go), take or
-- keep the caller's place there.
-- KEYS[1] lock key, KEYS[2] index key (prefix:id:<lockId>), KEYS[3] fence
-- key, KEYS[4] (optional) the key's queue of waiters
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] toleranceMs, ARGV[4] user key (for
-- the lock data), ARGV[5] max fence, ARGV[6] "1" when KEYS[3] is a striped
-- counter shared by many keys (stripes.go), else "0"; with KEYS[4]: ARGV[7]
-- the caller's queue entry, ARGV[8] "1" when the entry may be queued
-- already (an earlier attempt queued it), ARGV[9] the queue's TTL in ms.
-- The index holds the lock key, KEYS[1].
-- Returns {1, fence, expiresAtMs} on success; {0, holderExpiresAtMs,
-- holderFence} on contention (the fence says which lease the answer was
-- about; internal/chaos's probe reads it); {-3, fence} when the fence counter passed the maximum (nothing
-- is written but the counter, which only ever grows); {-4} when the lock id
-- was released or retired (its index key holds a tombstone, see release.lua);
-- the SYNCGUARD_KIND error while live slots of a limit hold the key
-- (limit.go).
--
-- Safe to run twice: a second run with the lock id of the live lease on
-- KEYS[1] (a command re-sent after its reply was lost, the next attempt of
-- one lock.Acquire, or an attempt of a waiter a release handed the lock
-- to) returns that grant unchanged, same fence, instead of contention;
-- after the lease was released it returns {-4} and writes nothing, so a
-- late copy can never take the key again. ZADD NX keeps a queued entry's
-- place.
local nowMs, nowUs = serverMs()
local ttlMs = tonumber(ARGV[2])
local queue = KEYS[4]

local existing, slots = typed('GET', KEYS[1])
if slots then
  -- Not a string: a limit's slots (limit.go). Refuse while one is live.
  slotLib().reclaim(KEYS[1], nowMs - tonumber(ARGV[3]))
  if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply(kindMsg) end
end
if existing then
  local data, corrupt = decodeLock(existing)
  if not data then return corrupt end
  if data.expiresAtMs > nowMs - tonumber(ARGV[3]) then
    if data.lockId == ARGV[1] then
      return {1, data.fence, data.expiresAtMs}
    end
    if queue then
      -- Entries are ordered by the time they first queued, in
      -- microseconds (no two scripts run in the same one); release.lua
      -- pops the head. The queue goes away on its own when nobody queues
      -- for its TTL.
      redis.call('ZADD', queue, 'NX', nowUs, ARGV[7])
      redis.call('PEXPIRE', queue, ARGV[9])
    end
    return {0, data.expiresAtMs, data.fence}
  end
end
local tomb = redis.call('GET', KEYS[2])
if tomb and isTomb(tomb) then
  return {-4}
end

local n = nextFence(KEYS[3], ARGV[6] == '1', nowMs)
local fence = string.format('%015d', n)
if n > tonumber(ARGV[5]) then
  return {-3, fence}
end

local expiresAtMs = nowMs + ttlMs
redis.call('SET', KEYS[1], lockJSON(ARGV[1], expiresAtMs, nowMs, ARGV[4], fence), 'PX', ttlMs)
redis.call('SET', KEYS[2], KEYS[1], 'PX', ttlMs)
if queue and ARGV[8] == '1' then
  redis.call('ZREM', queue, ARGV[7])
end
return {1, fence, expiresAtMs}
