-- Release: delete the lock and its index when owned by ARGV[1].
-- KEYS[1] index key; ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the
-- release channel ("<prefix>:released")
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired.
-- A deleted lock (1 or -2) is announced: PUBLISH ARGV[3] <lock key>, so
-- waiters wake instead of polling (channels are not keys; in Redis Cluster
-- PUBLISH reaches every node).
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)

-- released announces that lockKey is free, on the channel ARGV[3].
local function released(lockKey)
  redis.call('PUBLISH', ARGV[3], lockKey)
end

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end

local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
-- Ownership first: a stale index must never touch another lease's lock.
if data.lockId ~= ARGV[1] then return 0 end
if data.expiresAtMs <= nowMs - tonumber(ARGV[2]) then
  redis.call('DEL', lockKey, KEYS[1])
  released(lockKey)
  return -2
end
redis.call('DEL', lockKey, KEYS[1])
released(lockKey)
return 1
