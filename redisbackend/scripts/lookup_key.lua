-- Lookup by key: the lock data at KEYS[1] when live, or nil. Read-only.
-- KEYS[1] lock key; ARGV[1] toleranceMs
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)

local lockData = redis.call('GET', KEYS[1])
if not lockData then return nil end
local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
if data.expiresAtMs <= nowMs - tonumber(ARGV[1]) then return nil end
return lockData
