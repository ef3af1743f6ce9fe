-- Release and mark done: release.lua, then, only on success, a done marker.
-- KEYS[1] index key, KEYS[2] done-marker key
-- ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the lease's lock key,
-- ARGV[4] marker ttlMs, ARGV[5] the release channel ("<prefix>:released")
-- Returns 1 released and marked, 0 owned by another lease, -1 not found,
-- -2 expired.
-- A deleted lock (1 or -2) is announced like release.lua does.
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)

-- released announces that lockKey is free, on the channel ARGV[5].
local function released(lockKey)
  redis.call('PUBLISH', ARGV[5], lockKey)
end

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
-- The marker key was derived from the lease's key: it must be this lock.
if lockKey ~= ARGV[3] then return 0 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end

local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
if data.lockId ~= ARGV[1] then return 0 end
if data.expiresAtMs <= nowMs - tonumber(ARGV[2]) then
  redis.call('DEL', lockKey, KEYS[1])
  released(lockKey)
  return -2
end
redis.call('DEL', lockKey, KEYS[1])
redis.call('SET', KEYS[2], data.fence or '1', 'PX', tonumber(ARGV[4]))
released(lockKey)
return 1
