-- IsLocked (after prelude.lua and lib.lua): 1 when KEYS[1] holds a live
-- lease, else 0.
-- KEYS[1] lock key; ARGV[1] "1" to clean up an expired lock, ARGV[2] the
-- index key prefix ("<prefix>:id:").
-- Cleanup deletes only the lock key and its index key, never a fence key.
local nowMs = serverMs()

local lockData, slots = lib().typed('GET', KEYS[1])
if slots then
  -- A limit's slots (limit.go): a mismatch while one is live.
  if redis.call('ZCOUNT', KEYS[1], string.format('(%d', nowMs), '+inf') > 0 then return redis.error_reply(kindMsg) end
  return 0
end
if not lockData then return 0 end
local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.expiresAtMs > nowMs - tolMs then return 1 end
if ARGV[1] == '1' then
  redis.call('DEL', KEYS[1])
  if type(data.lockId) == 'string' and string.match(data.lockId, '^[A-Za-z0-9_-]+$') and #data.lockId == 22 then
    local idKey = ARGV[2] .. data.lockId
    -- Only remove an index that still points at this lock key.
    if redis.call('GET', idKey) == KEYS[1] then
      redis.call('DEL', idKey)
    end
  end
end
return 0
