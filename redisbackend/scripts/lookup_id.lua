-- Lookup by id (after prelude.lua, lib.lua, index_get.lua and rw.lua): the lock data of the live
-- lease ARGV[1], or nil. Read-only.
-- KEYS[1] index key; ARGV[1] lockId
local nowMs = serverMs()

-- lockKey: the index's value (index_get.lua).
-- No index, or a tombstone (release_lock.lua): no live lease.
if not lockKey or string.byte(lockKey, 1) == TOMB then return nil end
if string.byte(lockKey, 1) == SLOT then
  local L = lib()
  -- A slot of a limit (limit.go): its lock data, as a lock's would be.
  local fence, acquiredAtMs, _, slotKey, userKey = L.parse(lockKey)
  local expiresAtMs = slotKey and L.typed('ZSCORE', slotKey, ARGV[1])
  if not expiresAtMs then return nil end
  expiresAtMs = tonumber(expiresAtMs)
  if expiresAtMs <= nowMs then return nil end
  return string.format(lockFormat, ARGV[1], expiresAtMs, acquiredAtMs, L.jsonText(userKey), fence)
end
if string.byte(lockKey, 1) == RW then
  -- A holder of a read-write lock (rw.lua): its lock data, as a lock's would be.
  local mode, fence, acquiredAtMs, exp, _, userKey = rwlib().parse(lockKey)
  if not mode or exp <= nowMs then return nil end
  return string.format(lockFormat, ARGV[1], exp, acquiredAtMs, lib().jsonText(userKey), fence)
end
local lockData = redis.pcall('GET', lockKey)
if type(lockData) == 'table' then
  -- An error reply: WRONGTYPE is a limit's slots since (the lock expired).
  if not string.find(lockData.err or '', 'WRONGTYPE', 1, true) then return lockData end
  lockData = false
end
if not lockData then return nil end

local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.lockId ~= ARGV[1] then return nil end
if data.expiresAtMs <= nowMs - tolMs then return nil end
return lockData
