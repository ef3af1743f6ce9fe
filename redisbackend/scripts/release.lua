-- Release: delete the lock and its index when owned by the lock id, or hand
-- the lock to the head of the key's queue of waiters (queue.go); with a
-- done marker (ReleaseDone, ReleaseRecord), also mark the key done, in the
-- same step; when a waiter leaves its queue, take its entry out first.
--
-- Two argument layouts. Release's (release.go, 4 to 7 ARGV): KEYS[1]
-- index key; ARGV[1] lockId, ARGV[2] tombstone ttlMs, ARGV[3] this call's
-- nonce (unique per Release call, the same in every copy of its command),
-- ARGV[4] the start of the queue keys ("<prefix>:queue:", followed by the
-- lock key), ARGV[5] (optional) the hand-off channel of the releasing
-- Backend (notify.go), ARGV[6] (optional, with ARGV[5]) the locality bound
-- in µs and ARGV[7] (optional) the candidate's queue entry (local.go; see
-- the hand-off below).
-- The full layout (7 or more ARGV, done.go and queue.go): KEYS[1] index
-- key; KEYS[2] the done-marker or record key (mode "d") or the queue key
-- (mode "l"); ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the start of
-- the queue keys, ARGV[4] tombstone ttlMs, ARGV[5] nonce, ARGV[6] max
-- fence, ARGV[7] mode: "r" release, "d" release and mark done: ARGV[8]
-- the lease's lock key (the marker key was derived from it), ARGV[9]
-- marker ttlMs, ARGV[10] (optional) the marker's value, a record (the
-- lease's fence when absent); "l" leave the queue: ARGV[8] the waiter's
-- queue entry; in mode "r", ARGV[8] (optional) the hand-off channel.
-- (The tolerance and the max fence are the prelude's constants, tolMs and
-- fenceMax, which ARGV[2] and ARGV[6] of the full layout repeat.)
--
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired
-- (a slot of a limit); or, when the lock was handed to a waiter of the
-- releasing Backend (its entry names the releasing Backend's channel, mode
-- "r"), {1, <lock id>, <fence>, <expiresAtMs>}: the Backend gives that
-- waiter the lease itself, and nothing is published; when it was handed to
-- another waiter (or a slot's release granted slots: the first), {2,
-- <fence>} (released; the fence of the waiter's lease, for the release's
-- spans). A copy of the call reads 1 in both cases.
-- The marker is written only on 1. A slot of a limit (its index holds
-- lib().index, limit.go) is released the same way, and its freed slot
-- (with any expired ones) goes to the oldest waiters whose n admits them.
--
-- A lock key that still exists is live: both keys of a lease are written
-- with PX at its expiresAtMs (by every client of the wire format), and
-- Redis removes them then, while the lease is live until expiresAtMs plus
-- the tolerance. So the release of a lock reads no clock and decodes no
-- JSON: the lease's own lock data holds '"lockId":"<its id>"' (inside a
-- JSON string every '"' is escaped, so that text is the lockId member, in
-- whatever order a writer put the members); anything else is decoded, to
-- tell another lease's lock (0) from data that is not a lock (decodeLock's
-- error).
--
-- Hand-off: a lock released whose lock data is marked (queuedMark: an
-- attempt queued for it, or it was itself a waiter's) goes to the oldest
-- live entry of its queue: a new lease for the entry's lock id and TTL,
-- with the next fence, announced on the entry's channel (PUBLISH "<id>
-- <fence> <expiresAtMs>"), so that the waiter's process hands it to the
-- waiter with no further round trip. An entry past its deadline (its score, the time it queued
-- in microseconds, plus its wait) is dropped; so is one whose channel has
-- no subscriber when its entry asks for that check (the single layout:
-- its process died or lost its connection; in Redis Cluster PUBLISH counts
-- only the node's own subscribers). A queue of dead entries is popped 16
-- at a time; without a live entry the lock is deleted. No queue, no
-- message: a release nobody waits on is delivered to no one.
--
-- Safe to run twice: the index key is not deleted but replaced, for the
-- tombstone ttl (the time in which a client may re-send a command), by a
-- tombstone "\0<result>:<nonce>" (never a key name: it starts with a NUL
-- byte). A copy of the same call (same nonce) returns the first run's
-- result, so a release whose reply was lost and that go-redis sent again is
-- still a release, while a lease that was really lost still reads -1 or -2
-- and a second Release call of a released lease reads -1, as without the
-- tombstone. A release of an id with no index key (never acquired, or long
-- gone) leaves the tombstone "\0-1:<nonce>": a copy of an acquisition with
-- that id still in flight then takes nothing.
local id, tombMs, nonce, queueStart, mode, mine = ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'r', ARGV[5]
local localUs, cand = ARGV[6], ARGV[7]
if ARGV[7] and #ARGV[7] == 1 then
  tombMs, nonce, queueStart, mode, mine = ARGV[4], ARGV[5], ARGV[3], ARGV[7], nil
  localUs, cand = nil, nil
  if mode == 'r' then mine = ARGV[8] end
end

if mode == 'l' then
  redis.call('ZREM', KEYS[2], ARGV[8])
end

-- Release's layout (the hot path) swaps the index for the tombstone of a
-- release in one command (SET GET) and reads the lock key from its reply;
-- every other outcome then writes its own tombstone over it, or puts back
-- what the index held (written). The full layout reads the index first:
-- done.go and queue.go, and a Backend of the cluster layout, where a
-- resharding can move the lock key away from its index (the GET of the
-- lock key then fails with nothing written).
local lockKey, written
if not ARGV[7] then
  lockKey = redis.call('SET', KEYS[1], tombstone('1', nonce), 'GET', 'PX', tombMs)
  written = true
else
  lockKey = redis.call('GET', KEYS[1])
end
if not lockKey then
  redis.call('SET', KEYS[1], tombstone('-1', nonce), 'PX', tombMs)
  return -1
end
local k = string.byte(lockKey, 1)
if k == TOMB then
  if written then redis.call('SET', KEYS[1], lockKey, 'PX', tombMs) end
  local result, was = string.match(lockKey, '^%z(-?%d+):(.*)$')
  if was == nonce then return tonumber(result) end
  return -1
end
if k == SLOT then
  -- A slot of a limit (limit.go): free it and hand what is free to the
  -- waiters.
  local L = lib()
  local nowMs = serverMs()
  local _, _, _, slotKey, userKey = L.parse(lockKey)
  if not slotKey or (mode == 'd' and slotKey ~= ARGV[8]) then
    if written then redis.call('SET', KEYS[1], lockKey, 'PX', tombMs) end
    return 0
  end
  local cutoff = nowMs - tolMs
  local expiresAtMs = L.typed('ZSCORE', slotKey, id)
  if not expiresAtMs then
    redis.call('SET', KEYS[1], tombstone('-1', nonce), 'PX', tombMs)
    return -1
  end
  local result = '-2'
  if tonumber(expiresAtMs) > cutoff then result = '1' end
  redis.call('ZREM', slotKey, id)
  L.reclaim(slotKey, cutoff)
  redis.call('SET', KEYS[1], tombstone(result, nonce), 'PX', tombMs)
  if result == '1' and mode == 'd' then
    redis.call('SET', KEYS[2], ARGV[10] or L.parse(lockKey), 'PX', tonumber(ARGV[9]))
  end
  local to = L.grant(slotKey, queueStart .. slotKey, string.sub(KEYS[1], 1, #KEYS[1] - #id), userKey, nowMs)
  if to and result == '1' then return {2, to} end
  return tonumber(result)
end
if mode == 'd' and lockKey ~= ARGV[8] then return 0 end

-- pcall: the key may have become a limit since (its lock expired), whose
-- WRONGTYPE reads as no lock.
local lockData = redis.pcall('GET', lockKey)
if type(lockData) == 'table' then
  if not string.find(lockData.err or '', 'WRONGTYPE', 1, true) then return lockData end
  lockData = false
end
if not lockData then
  redis.call('SET', KEYS[1], tombstone('-1', nonce), 'PX', tombMs)
  return -1
end
local data
if not string.find(lockData, '"lockId":"' .. id .. '"', 1, true) then
  -- Ownership first: a stale index must never touch another lease's lock.
  local corrupt
  data, corrupt = decodeLock(lockData)
  if not data then
    if written then redis.call('SET', KEYS[1], lockKey, 'PX', tombMs) end
    return corrupt
  end
  if data.lockId ~= id then
    -- Another lease's lock (this id's index outlived its own lock: its
    -- lock was deleted by hand): the id is retired, and a copy of this
    -- call reads 0 again.
    if written then redis.call('SET', KEYS[1], tombstone('0', nonce), 'PX', tombMs) end
    return 0
  end
end
if not written then
  redis.call('SET', KEYS[1], tombstone('1', nonce), 'PX', tombMs)
end
if mode == 'd' then
  local marker = ARGV[10]
  if not marker then
    data = data or decodeLock(lockData)
    marker = (data and data.fence) or '1'
  end
  redis.call('SET', KEYS[2], marker, 'PX', tonumber(ARGV[9]))
end

-- The hand-off: the oldest live entry of the key's queue gets the lock.
-- Only a lease somebody queued for looks at the queue (queuedMark,
-- prelude.lua): the others cost one command less.
--
-- Locality within a bound (sync.Mutex's model; Release's layout only):
-- while the oldest entry has queued for less than localUs (ARGV[6]), a
-- waiter of the releasing Backend goes first: its oldest live entry among
-- the first 16, else the candidate the Backend names (ARGV[7], the entry of
-- a waiter of its own that did not queue here, because the key was held
-- by the Backend when it arrived: queue.go). The Backend hands it the lease
-- from this reply, with no message and no other process woken, so the lock
-- stays where it is hot; an entry that has waited localUs is served in
-- queue order.
local marked = string.sub(lockData, -1) == queuedMark
if not marked and not cand then
  redis.call('DEL', lockKey)
  return 1
end
local queue = queueStart .. lockKey
local nowMs, t = serverMs()
local head
if mine and localUs then
  localUs = tonumber(localUs)
  local entries = {}
  if marked then entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES') end
  if #entries == 0 or t[1] * 1000000 + t[2] - tonumber(entries[2]) < localUs then
    for i = 1, #entries, 2 do
      local wait, clen, rest = string.match(entries[i], '^%S+ %d+ (%d+) [ln][sk] (%d+) (.*)$')
      if wait and string.sub(rest, 1, tonumber(clen)) == mine and tonumber(entries[i + 1]) / 1000 + tonumber(wait) > nowMs then
        redis.call('ZREM', queue, entries[i])
        head = {entries[i], entries[i + 1]}
        break
      end
    end
    if not head and cand then
      if marked then redis.call('ZREM', queue, cand) end
      head = {cand, t[1] * 1000000 + t[2]}
    end
  end
end
if not head then
  if not marked then
    redis.call('DEL', lockKey)
    return 1
  end
  head = redis.call('ZPOPMIN', queue)
  if #head == 0 then
    redis.call('DEL', lockKey)
    return 1
  end
end
data = data or decodeLock(lockData)
local userKey = lib().jsonText((data and data.key) or '')
-- The index key of a lock id: KEYS[1] is this prefix followed by the id
-- (in the cluster layout too: the ids of one lock key share its tag).
local idPrefix = string.sub(KEYS[1], 1, #KEYS[1] - #id)
for i = 1, 16 do
  if i > 1 then
    head = redis.call('ZPOPMIN', queue)
    if #head == 0 then break end
  end
  -- "<id> <ttlMs> <waitMs> <l|n><s|k> <channel length> <channel><fence key>"
  local wid, ttl, wait, live, striped, clen, rest =
    string.match(head[1], '^(%S+) (%d+) (%d+) ([ln])([sk]) (%d+) (.*)$')
  if wid and tonumber(head[2]) / 1000 + tonumber(wait) > nowMs then
    clen = tonumber(clen)
    local n
    if striped == 's' then
      n = lib().nextFence(string.sub(rest, clen + 1), true, nowMs)
    else
      n = redis.call('INCR', string.sub(rest, clen + 1))
    end
    -- Past the maximum, the waiter's own attempt reports the overflow.
    if n > fenceMax then break end
    local fence = string.format('%015d', n)
    local expiresAtMs = nowMs + tonumber(ttl)
    local channel = string.sub(rest, 1, clen)
    local own = channel == mine
    -- (PUBLISH first: an "n" entry is told too, whatever the count.)
    local granted = own or redis.call('PUBLISH', channel, wid .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs)) > 0 or live == 'n'
    if granted and head[1] == cand then
      -- The candidate's id is retired when it left meanwhile (its
      -- release, a tombstone): then it takes nothing.
      granted = redis.call('SET', idPrefix .. wid, lockKey, 'NX', 'PX', ttl)
    elseif granted then
      redis.call('SET', idPrefix .. wid, lockKey, 'PX', ttl)
    end
    if granted then
      -- Marked when waiters may be queued behind this one.
      local value = string.format(lockFormat, wid, expiresAtMs, nowMs, userKey, n)
      if marked then value = value .. queuedMark end
      redis.call('SET', lockKey, value, 'PX', ttl)
      if own then return {1, wid, fence, expiresAtMs} end
      return {2, fence}
    end
  end
end
redis.call('DEL', lockKey)
return 1
