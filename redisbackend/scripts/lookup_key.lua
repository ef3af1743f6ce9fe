-- Lookup by key: the lock data at KEYS[1] when live, or nil. Read-only.
-- KEYS[1] lock key; ARGV[1] toleranceMs
local nowMs = serverMs()

local lockData = redis.call('GET', KEYS[1])
if not lockData then return nil end
local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
if data.expiresAtMs <= nowMs - tonumber(ARGV[1]) then return nil end
return lockData
