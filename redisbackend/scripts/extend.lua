-- Extend: replace the remaining TTL of the lease ARGV[1] with ARGV[3] ms.
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] ttlMs
-- Returns {1, newExpiresAtMs}, or 0 owned by another lease, -1 not found,
-- -2 expired.
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local ttlMs = tonumber(ARGV[3])

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end

local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
if data.lockId ~= ARGV[1] then return 0 end
if data.expiresAtMs <= nowMs - tonumber(ARGV[2]) then
  redis.call('DEL', lockKey, KEYS[1])
  return -2
end

local newExpiresAtMs = nowMs + ttlMs
data.expiresAtMs = newExpiresAtMs
redis.call('SET', lockKey, cjson.encode(data), 'PX', ttlMs)
redis.call('SET', KEYS[1], lockKey, 'PX', ttlMs)
return {1, newExpiresAtMs}
