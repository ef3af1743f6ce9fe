-- Seed 000's acquire script as written (the TypeScript syncguard library's
-- ACQUIRE_SCRIPT), for scriptcost's "seed" case.
local lockKey = KEYS[1]
local lockIdKey = KEYS[2]
local fenceKey = KEYS[3]
local lockId = ARGV[1]
local ttlMs = tonumber(ARGV[2])
local toleranceMs = tonumber(ARGV[3])
local storageKey = ARGV[4]
local userKey = ARGV[5]
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local existingData = redis.call('GET', lockKey)
if existingData then
  local data = cjson.decode(existingData)
  if data.expiresAtMs > (nowMs - toleranceMs) then
    return 0
  end
  if data.lockId then
    redis.call('DEL', lockIdKey)
  end
end
local fence = string.format("%015d", redis.call('INCR', fenceKey))
local expiresAtMs = nowMs + ttlMs
local lockData = cjson.encode({
  lockId=lockId,
  expiresAtMs=expiresAtMs,
  acquiredAtMs=nowMs,
  key=userKey,
  fence=fence
})
redis.call('SET', lockKey, lockData, 'PX', ttlMs)
redis.call('SET', lockIdKey, storageKey, 'PX', ttlMs)
return {1, fence, expiresAtMs}
