-- Release: delete the lock and its index when owned by ARGV[1]; with a
-- done-marker key (ReleaseDone), also mark the key done, in the same step.
-- KEYS[1] index key, KEYS[2] (optional) done-marker key
-- ARGV[1] lockId, ARGV[2] toleranceMs, ARGV[3] the start of the release
-- channels ("<prefix>:released:"), ARGV[4] tombstone ttlMs, ARGV[5] this call's nonce
-- (unique per Release call, the same in every copy of its command); with
-- KEYS[2]: ARGV[6] the lease's lock key (the marker key was derived from
-- it), ARGV[7] marker ttlMs, ARGV[8] (optional) the marker's value, a
-- record (ReleaseRecord; the lease's fence when absent)
-- Returns 1 released, 0 owned by another lease, -1 not found, -2 expired.
-- A deleted lock (1 or -2) is announced on its own channel: PUBLISH
-- ARGV[3] .. <lock key> (an empty message; notify.go subscribes to the
-- channels of the keys it waits on), so
-- waiters wake instead of polling (channels are not keys; in Redis Cluster
-- PUBLISH reaches every node). The marker is written only on 1.
--
-- Safe to run twice: the index key is not deleted but replaced, for
-- ARGV[4] ms (the time in which a client may re-send a command), by a
-- tombstone "\0<result>:<nonce>" (never a key name: it starts with a NUL
-- byte). A copy of the same call (same nonce) returns the first run's
-- result, so a release whose reply was lost and that go-redis sent again is
-- still a release, while a lease that was really lost still reads -1 or -2
-- and a second Release call of a released lease reads -1, as without the
-- tombstone. A release of an id with no index key (never acquired, or long
-- gone) leaves the tombstone "\0-1:<nonce>": a copy of an acquisition with
-- that id still in flight then takes nothing.
local nowMs = serverMs()
local marker = KEYS[2]
local tombMs = tonumber(ARGV[4])

local lockKey = redis.call('GET', KEYS[1])
if not lockKey then
  redis.call('SET', KEYS[1], tombstone(-1, ARGV[5]), 'PX', tombMs)
  return -1
end
if isTomb(lockKey) then
  local result, nonce = string.match(lockKey, '^%z(-?%d+):(.*)$')
  if nonce == ARGV[5] then return tonumber(result) end
  return -1
end
if marker and lockKey ~= ARGV[6] then return 0 end
local lockData = redis.call('GET', lockKey)
if not lockData then
  redis.call('SET', KEYS[1], tombstone(-1, ARGV[5]), 'PX', tombMs)
  return -1
end

local data, corrupt = decodeLock(lockData)
if not data then return corrupt end
-- Ownership first: a stale index must never touch another lease's lock.
if data.lockId ~= ARGV[1] then return 0 end
local result = -2
if data.expiresAtMs > nowMs - tonumber(ARGV[2]) then result = 1 end
redis.call('DEL', lockKey)
redis.call('SET', KEYS[1], tombstone(result, ARGV[5]), 'PX', tombMs)
if result == 1 and marker then
  redis.call('SET', marker, ARGV[8] or data.fence or '1', 'PX', tonumber(ARGV[7]))
end
redis.call('PUBLISH', ARGV[3] .. lockKey, '')
return result
