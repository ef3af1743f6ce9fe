-- Extend (after prelude.lua, lib.lua, index_get.lua and rw.lua): replace the remaining TTL of the
-- lease ARGV[1] with ARGV[2] ms.
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] tombstone
-- ttlMs (see release_lock.lua)
-- Returns {1, newExpiresAtMs}, or 0 owned by another lease, -1 not found,
-- -2 expired (the lock is deleted and the index becomes a tombstone).
-- Running it twice extends twice, from the server's time of each run.
local nowMs = serverMs()
local ttlMs = tonumber(ARGV[2])

-- lockKey: the index's value (index_get.lua).
-- No index, or a tombstone (release_lock.lua): the lease is over.
if not lockKey or string.byte(lockKey, 1) == TOMB then return -1 end
if string.byte(lockKey, 1) == SLOT then
  -- A slot of a limit (limit.go).
  local S = lib()
  local _, _, _, slotKey = S.parse(lockKey)
  local expiresAtMs = slotKey and S.typed('ZSCORE', slotKey, ARGV[1])
  if not expiresAtMs then return -1 end
  if tonumber(expiresAtMs) <= nowMs then
    redis.call('ZREM', slotKey, ARGV[1])
    redis.call('SET', KEYS[1], tombstone(-2, ''), 'PX', tonumber(ARGV[3]))
    return -2
  end
  local newExpiresAtMs = nowMs + ttlMs
  S.add(slotKey, KEYS[1], ARGV[1], newExpiresAtMs, ttlMs, lockKey)
  return {1, newExpiresAtMs}
end
if string.byte(lockKey, 1) == RW then
  -- A holder of a read-write lock (rw.lua).
  local R = rwlib()
  local mode, fence, acq, exp, rwKey, userKey = R.parse(lockKey)
  if not mode or not R.member(rwKey, mode .. ARGV[1]) then return -1 end
  if exp <= nowMs then
    redis.pcall('ZREM', rwKey, mode .. ARGV[1])
    redis.call('SET', KEYS[1], tombstone(-2, ''), 'PX', tonumber(ARGV[3]))
    return -2
  end
  local newExpiresAtMs = nowMs + ttlMs
  lib().add(rwKey, KEYS[1], mode .. ARGV[1], newExpiresAtMs, ttlMs, R.index(mode, fence, acq, newExpiresAtMs, rwKey, userKey), true)
  return {1, newExpiresAtMs}
end
local lockData = redis.pcall('GET', lockKey)
if type(lockData) == 'table' then
  -- An error reply: WRONGTYPE is a limit's slots since (the lock expired).
  if not string.find(lockData.err or '', 'WRONGTYPE', 1, true) then return lockData end
  lockData = false
end
if not lockData then return -1 end

local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.lockId ~= ARGV[1] then return 0 end
if data.expiresAtMs <= nowMs - tolMs then
  redis.call('DEL', lockKey)
  redis.call('SET', KEYS[1], tombstone(-2, ''), 'PX', tonumber(ARGV[3]))
  return -2
end

local newExpiresAtMs = nowMs + ttlMs
data.expiresAtMs = newExpiresAtMs
local value = cjson.encode(data)
if string.sub(lockData, -1) == queuedMark then
  value = value .. queuedMark -- its release looks at the queue
end
redis.call('SET', lockKey, value, 'PX', ARGV[2])
redis.call('SET', KEYS[1], lockKey, 'PX', ttlMs)
return {1, newExpiresAtMs}
