-- AcquireSlot (after prelude.lua and lib.lua): take one of n slots of a limit (limit.go) when fewer than n
-- live slots hold it, with a fence from the key's counter; when n are
-- held and the caller waits in the key's queue (queue.go), take or keep
-- the caller's place there.
-- KEYS[1] lock key (the sorted set of slots), KEYS[2] index key, KEYS[3]
-- fence key, KEYS[4] (optional) the key's queue of waiters
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] user key, ARGV[4] "1" for a
-- striped fence counter, ARGV[5] n, ARGV[6] the start of the queue keys
-- ("<prefix>:queue:"); with KEYS[4]: ARGV[7] the caller's queue entry,
-- ARGV[8] "1" when it may be queued already, ARGV[9] the queue's TTL in ms.
-- Returns acquire.lua's replies ({0, earliest slot expiry} when n are
-- held), and SYNCGUARD_KIND while a live lock holds the key.
--
-- Safe to run twice like acquire.lua: the id of a live slot gets that slot
-- back; after its release the tombstone on the index key takes nothing.
local nowMs, t = serverMs()
local nowUs = t[1] * 1000000 + t[2]
local ttlMs = tonumber(ARGV[2])
local n = tonumber(ARGV[5])
local lockKey = KEYS[1]
local queue = KEYS[4]

local S = lib()

local freed = S.reclaim(lockKey, nowMs)
if not freed then
  -- A lock's JSON: refuse while it is live, take the key when it expired.
  local data, corrupt = decodeLock(redis.call('GET', lockKey))
  if not data then return corrupt end
  if data.expiresAtMs > nowMs - tolMs then return redis.error_reply(kindMsg) end
  redis.call('DEL', lockKey)
  freed = 0
end

-- A read-write lock's holders ("r<id>", "w<id>": rw.lua) are not slots:
-- a member longer than a lock id is one. An empty set (a free limit, the
-- uncontended case) needs no look at a member.
local card = redis.call('ZCARD', lockKey)
if card > 0 and #redis.call('ZRANGE', lockKey, 0, 0)[1] ~= #ARGV[1] then
  return redis.error_reply(kindMsg)
end

local idx = redis.call('GET', KEYS[2])
if idx then
  if string.byte(idx, 1) == TOMB then return {-4} end
  local mine = string.byte(idx, 1) == SLOT and redis.call('ZSCORE', lockKey, ARGV[1])
  if mine then
    local fence = S.parse(idx)
    return {1, fence, tonumber(mine)}
  end
end

local idPrefix = string.sub(KEYS[2], 1, #KEYS[2] - #ARGV[1])
if freed > 0 then
  -- Slots that expired go to the waiters first, the caller among them if
  -- it is queued: then it has its slot.
  S.grant(lockKey, ARGV[6] .. lockKey, idPrefix, ARGV[3], nowMs)
  local mine = redis.call('ZSCORE', lockKey, ARGV[1])
  if mine then
    local fence = S.parse(redis.call('GET', KEYS[2]))
    return {1, fence, tonumber(mine)}
  end
  card = redis.call('ZCARD', lockKey)
end
if card >= n then
  if queue then
    redis.call('ZADD', queue, 'NX', nowUs, ARGV[7])
    redis.call('PEXPIRE', queue, ARGV[9])
  end
  local first = redis.call('ZRANGE', lockKey, 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2])}
end

local f = S.nextFence(KEYS[3], ARGV[4] == '1', nowMs)
local fence = string.format('%015d', f)
if f > fenceMax then
  return {-3, fence}
end
local expiresAtMs = nowMs + ttlMs
S.add(lockKey, KEYS[2], ARGV[1], expiresAtMs, ttlMs, S.index(fence, nowMs, n, lockKey, ARGV[3]))
if queue and ARGV[8] == '1' then
  redis.call('ZREM', queue, ARGV[7])
end
return {1, fence, expiresAtMs}
