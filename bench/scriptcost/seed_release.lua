-- Seed 000's release script as written (the TypeScript syncguard library's
-- RELEASE_SCRIPT), for scriptcost's "seed" case.
local lockIdKey = KEYS[1]
local lockId = ARGV[1]
local toleranceMs = tonumber(ARGV[2])
local ttlMs = tonumber(ARGV[3])
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local lockKey = redis.call('GET', lockIdKey)
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end
local data = cjson.decode(lockData)
if data.expiresAtMs <= (nowMs - toleranceMs) then
  redis.call('DEL', lockKey, lockIdKey)
  return -2
end
if data.lockId ~= lockId then return 0 end
if not ttlMs then
  redis.call('DEL', lockKey, lockIdKey)
  return 1
end
return -9
