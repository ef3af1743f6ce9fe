-- Release: delete the lock and its index when owned by ARGV[1], or hand
-- the lock to the head of the key's queue of waiters (queue.go); with a
-- done marker (ReleaseDone, ReleaseRecord), also mark the key done, in the
-- same step; when a waiter leaves its queue, take its entry out first.
-- KEYS[1] index key; KEYS[2] the done-marker or record key (mode "d") or the queue
-- key (mode "l")
-- ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the start of the queue keys
-- ("<prefix>:queue:", followed by the lock key), ARGV[4] tombstone ttlMs,
-- ARGV[5] this call's nonce (unique per Release call, the same in every
-- copy of its command), ARGV[6] max fence, ARGV[7] mode: "r" release, "d"
-- release and mark done: ARGV[8] the lease's lock key (the marker key was
-- derived from it), ARGV[9] marker ttlMs, ARGV[10] (optional) the marker's
-- value, a record (the lease's fence when absent); "l" leave the queue:
-- ARGV[8] the waiter's queue entry; in mode "r", ARGV[8] (optional) the
-- hand-off channel of the releasing Backend (notify.go).
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired;
-- or, when the lock was handed to a waiter of the releasing Backend (its
-- entry names ARGV[8] as its channel, mode "r"), {1 or -2, <lock id>,
-- <fence>, <expiresAtMs>}: the Backend gives that waiter the lease itself,
-- and nothing is published.
-- The marker is written only on 1. A slot of a limit (its index holds
-- slotLib().index, limit.go) is released the same way, and its freed slot (with
-- any expired ones) goes to the oldest waiters whose n admits them.
--
-- Hand-off: a lock released (1) or found expired (-2) goes to the oldest
-- live entry of its queue: a new lease for the entry's lock id and TTL,
-- with the next fence, announced on the entry's channel (PUBLISH "<id>
-- <fence> <expiresAtMs>"), so that the waiter's process hands it to the
-- waiter with no further round trip. An entry past its deadline (its score,
-- the time it queued in microseconds, plus its wait) is dropped; so is one whose channel
-- has no subscriber when its entry asks for that check (the single layout:
-- its process died or lost its connection; in Redis Cluster PUBLISH counts
-- only the node's own subscribers). A queue of dead entries is popped 16
-- at a time; without a live entry the lock is deleted. No queue, no
-- message: a release nobody waits on is delivered to no one.
--
-- Safe to run twice: the index key is not deleted but replaced, for
-- ARGV[4] ms (the time in which a client may re-send a command), by a
-- tombstone "\0<result>:<nonce>" (never a key name: it starts with a NUL
-- byte). A copy of the same call (same nonce) returns the first run's
-- result, so a release whose reply was lost and that go-redis sent again is
-- still a release, while a lease that was really lost still reads -1 or -2
-- and a second Release call of a released lease reads -1, as without the
-- tombstone. A release of an id with no index key (never acquired, or long
-- gone) leaves the tombstone "\0-1:<nonce>": a copy of an acquisition with
-- that id still in flight then takes nothing.
local nowMs = serverMs()
local mode = ARGV[7]
local tombMs = tonumber(ARGV[4])
local mine = mode == 'r' and ARGV[8]

-- handOff gives the lock on lockKey (user key userKey) to the oldest live
-- entry of its queue, and reports whether it did: false, true, or the
-- grant {lock id, fence, expiresAtMs} when the entry's channel is mine
-- (the releasing Backend's own waiter, which it is alive to tell).
local function handOff(lockKey, userKey)
  local queue = ARGV[3] .. lockKey
  -- The index key of a lock id: KEYS[1] is this prefix followed by ARGV[1]
  -- (in the cluster layout too: the ids of one lock key share its tag).
  local idPrefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
  for _ = 1, 16 do
    local head = redis.call('ZPOPMIN', queue)
    if #head == 0 then return false end
    -- "<id> <ttlMs> <waitMs> <l|n><s|k> <channel length> <channel><fence key>"
    local id, ttl, wait, live, striped, clen, rest =
      string.match(head[1], '^(%S+) (%d+) (%d+) ([ln])([sk]) (%d+) (.*)$')
    if id and tonumber(head[2]) / 1000 + tonumber(wait) > nowMs then
      clen = tonumber(clen)
      local n = nextFence(string.sub(rest, clen + 1), striped == 's', nowMs)
      if n > tonumber(ARGV[6]) then
        -- The waiter's own attempt reports the overflow.
        return false
      end
      local fence = string.format('%015d', n)
      local expiresAtMs = nowMs + tonumber(ttl)
      local channel = string.sub(rest, 1, clen)
      local own = channel == mine
      -- (PUBLISH first: an "n" entry is told too, whatever the count.)
      if own or redis.call('PUBLISH', channel, id .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs)) > 0 or live == 'n' then
        redis.call('SET', lockKey, lockJSON(id, expiresAtMs, nowMs, userKey, fence), 'PX', ttl)
        redis.call('SET', idPrefix .. id, lockKey, 'PX', ttl)
        if own then return {id, fence, expiresAtMs} end
        return true
      end
    end
  end
  return false
end

if mode == 'l' then
  redis.call('ZREM', KEYS[2], ARGV[8])
end

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then
  redis.call('SET', KEYS[1], tombstone(-1, ARGV[5]), 'PX', tombMs)
  return -1
end
if isTomb(lockKey) then
  local result, nonce = string.match(lockKey, '^%z(-?%d+):(.*)$')
  if nonce == ARGV[5] then return tonumber(result) end
  return -1
end
if isSlot(lockKey) then
  -- A slot of a limit (limit.go): free it and hand what is free to the
  -- waiters.
  local S = slotLib()
  local _, _, _, slotKey, userKey = S.parse(lockKey)
  if not slotKey or (mode == 'd' and slotKey ~= ARGV[8]) then return 0 end
  local cutoff = nowMs - tonumber(ARGV[2])
  local expiresAtMs = typed('ZSCORE', slotKey, ARGV[1])
  if not expiresAtMs then
    redis.call('SET', KEYS[1], tombstone(-1, ARGV[5]), 'PX', tombMs)
    return -1
  end
  local result = -2
  if tonumber(expiresAtMs) > cutoff then result = 1 end
  redis.call('ZREM', slotKey, ARGV[1])
  S.reclaim(slotKey, cutoff)
  redis.call('SET', KEYS[1], tombstone(result, ARGV[5]), 'PX', tombMs)
  if result == 1 and mode == 'd' then
    redis.call('SET', KEYS[2], ARGV[10] or S.parse(lockKey), 'PX', tonumber(ARGV[9]))
  end
  S.grant(slotKey, ARGV[3] .. slotKey, string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1]), userKey, nowMs, tonumber(ARGV[2]), tonumber(ARGV[6]))
  return result
end
if mode == 'd' and lockKey ~= ARGV[8] then return 0 end
-- typed: the key may have become a limit since (its lock expired).
local lockData = typed('GET', lockKey)
if not lockData then
  redis.call('SET', KEYS[1], tombstone(-1, ARGV[5]), 'PX', tombMs)
  return -1
end

local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
-- Ownership first: a stale index must never touch another lease's lock.
if data.lockId ~= ARGV[1] then return 0 end
local result = -2
if data.expiresAtMs > nowMs - tonumber(ARGV[2]) then result = 1 end
redis.call('SET', KEYS[1], tombstone(result, ARGV[5]), 'PX', tombMs)
if result == 1 and mode == 'd' then
  redis.call('SET', KEYS[2], ARGV[10] or data.fence or '1', 'PX', tonumber(ARGV[9]))
end
local given = handOff(lockKey, data.key or '')
if not given then
  redis.call('DEL', lockKey)
elseif given ~= true then
  return {result, given[1], given[2], given[3]}
end
return result
