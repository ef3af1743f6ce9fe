-- Release: delete the lock and its index when owned by ARGV[1]; with a
-- done-marker key (ReleaseDone), also mark the key done, in the same step.
-- KEYS[1] index key, KEYS[2] (optional) done-marker key
-- ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the release channel
-- ("<prefix>:released"); with KEYS[2]: ARGV[4] the lease's lock key (the
-- marker key was derived from it), ARGV[5] marker ttlMs
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired.
-- A deleted lock (1 or -2) is announced: PUBLISH ARGV[3] <lock key>, so
-- waiters wake instead of polling (channels are not keys; in Redis Cluster
-- PUBLISH reaches every node). The marker is written only on 1.
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local marker = KEYS[2]

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
if marker and lockKey ~= ARGV[4] then return 0 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end

local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
-- Ownership first: a stale index must never touch another lease's lock.
if data.lockId ~= ARGV[1] then return 0 end
local live = data.expiresAtMs > nowMs - tonumber(ARGV[2])
redis.call('DEL', lockKey, KEYS[1])
if live and marker then
  redis.call('SET', marker, data.fence or '1', 'PX', tonumber(ARGV[5]))
end
redis.call('PUBLISH', ARGV[3], lockKey)
if live then return 1 end
return -2
