-- Extend: replace the remaining TTL of the lease ARGV[1] with ARGV[3] ms.
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] ttlMs,
-- ARGV[4] tombstone ttlMs (see release.lua)
-- Returns {1, newExpiresAtMs}, or 0 owned by another lease, -1 not found,
-- -2 expired (the lock is deleted and the index becomes a tombstone).
-- Running it twice extends twice, from the server's time of each run.
local nowMs = serverMs()
local ttlMs = tonumber(ARGV[3])

local lockKey = redis.call('GET', KEYS[1])
-- No index, or a tombstone (release.lua): the lease is over.
if not lockKey or isTomb(lockKey) then return -1 end
if isSlot(lockKey) then
  -- A slot of a limit (limit.go).
  local S = slotLib()
  local _, _, _, slotKey = S.parse(lockKey)
  local expiresAtMs = slotKey and typed('ZSCORE', slotKey, ARGV[1])
  if not expiresAtMs then return -1 end
  if tonumber(expiresAtMs) <= nowMs - tonumber(ARGV[2]) then
    redis.call('ZREM', slotKey, ARGV[1])
    redis.call('SET', KEYS[1], tombstone(-2, ''), 'PX', tonumber(ARGV[4]))
    return -2
  end
  local newExpiresAtMs = nowMs + ttlMs
  S.add(slotKey, KEYS[1], ARGV[1], newExpiresAtMs, ttlMs, tonumber(ARGV[2]), lockKey)
  return {1, newExpiresAtMs}
end
local lockData = typed('GET', lockKey)
if not lockData then return -1 end

local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.lockId ~= ARGV[1] then return 0 end
if data.expiresAtMs <= nowMs - tonumber(ARGV[2]) then
  redis.call('DEL', lockKey)
  redis.call('SET', KEYS[1], tombstone(-2, ''), 'PX', tonumber(ARGV[4]))
  return -2
end

local newExpiresAtMs = nowMs + ttlMs
data.expiresAtMs = newExpiresAtMs
redis.call('SET', lockKey, cjson.encode(data), 'PX', ttlMs)
redis.call('SET', KEYS[1], lockKey, 'PX', ttlMs)
return {1, newExpiresAtMs}
