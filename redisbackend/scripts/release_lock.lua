-- The release of the lease id whose index held lockKey (index_swap.lua,
-- index_read.lua), with the release's mark when markTTL is set
-- (release_mark.lua: KEYS[2] the mark's key). Every outcome but a release
-- returns here; a released lock goes on to handoff.lua with lockData, the
-- lease's lock data, and data, that data decoded (or nil: not needed yet).
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
-- Safe to run twice: the index key is not deleted but replaced, for the
-- tombstone ttl (the time in which a client may re-send a command), by a
-- tombstone "\0<result>:<nonce>". A copy of the same call (same nonce)
-- returns the first run's result, so a release whose reply was lost and
-- that go-redis sent again is still a release, while a lease that was
-- really lost still reads -1 or -2 and a second Release call of a released
-- lease reads -1. A release of an id with no index key (never acquired, or
-- long gone) leaves the tombstone "\0-1:<nonce>": a copy of an acquisition
-- with that id still in flight then takes nothing.
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
  -- oldest waiters whose n admits them.
  local L = lib()
  local nowMs = serverMs()
  local _, _, _, slotKey, userKey = L.parse(lockKey)
  if not slotKey or (markLock and slotKey ~= markLock) then
    if written then redis.call('SET', KEYS[1], lockKey, 'PX', tombMs) end
    return 0
  end
  local expiresAtMs = L.typed('ZSCORE', slotKey, id)
  if not expiresAtMs then
    redis.call('SET', KEYS[1], tombstone('-1', nonce), 'PX', tombMs)
    return -1
  end
  local result = '-2'
  if tonumber(expiresAtMs) > nowMs then result = '1' end
  redis.call('ZREM', slotKey, id)
  L.reclaim(slotKey, nowMs)
  redis.call('SET', KEYS[1], tombstone(result, nonce), 'PX', tombMs)
  if result == '1' and markTTL then
    redis.call('SET', KEYS[2], record or L.parse(lockKey), 'PX', tonumber(markTTL))
  end
  local to = L.grant(slotKey, queueStart .. slotKey, string.sub(KEYS[1], 1, #KEYS[1] - #id), userKey, nowMs)
  if to and result == '1' then return {2, to} end
  return tonumber(result)
end
if k == RW and not markLock then
  -- A holder of a read-write lock (rw.lua).
  return rwRelease(KEYS[1], lockKey, id, nonce, tombMs, queueStart, written)
end
if markLock and lockKey ~= markLock then return 0 end

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
if markTTL then
  local mark = record
  if not mark then
    data = data or decodeLock(lockData)
    mark = (data and data.fence) or '1'
  end
  redis.call('SET', KEYS[2], mark, 'PX', tonumber(markTTL))
end
