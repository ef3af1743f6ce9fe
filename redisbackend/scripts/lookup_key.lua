-- Lookup by key (after prelude.lua and lib.lua): the lock data at KEYS[1]
-- when live, or nil. Read-only.
-- KEYS[1] lock key
local nowMs = serverMs()

local lockData, slots = lib().typed('GET', KEYS[1])
if slots then
  -- A limit's slots (limit.go): a mismatch while one is live.
  if redis.call('ZCOUNT', KEYS[1], string.format('(%d', nowMs), '+inf') > 0 then return redis.error_reply(kindMsg) end
  return nil
end
if not lockData then return nil end
local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.expiresAtMs <= nowMs - tolMs then return nil end
return lockData
