-- Lookup by id: the lock data of the live lease ARGV[1], or nil.
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] toleranceMs
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return nil end
local lockData = redis.call('GET', lockKey)
if not lockData then return nil end

local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
if data.lockId ~= ARGV[1] then return nil end
if data.expiresAtMs <= nowMs - tonumber(ARGV[2]) then return nil end
return lockData
