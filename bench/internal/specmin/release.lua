-- spec-minimal release (bench only): the least seed 000's Redis backend
-- specification requires of a release, in its wire format.
-- KEYS[1] index key "<prefix>:id:<lockId>"
-- ARGV[1] lockId
-- Returns 1 released, 0 owned by another lease, -1 not found.
--
-- The index gives the lock key (ADR-013); the lock data is decoded with
-- cjson and its lockId compared (ADR-003, explicit ownership); both keys
-- go in one DEL. No TIME: the spec's expiry branch (-2) cannot be taken,
-- because the lock key is written with PX ttl = expiresAtMs - now, so a
-- key Redis still returns has not expired (and isLive adds a tolerance).
local lockKey = redis.call('GET', KEYS[1])
if not lockKey then return -1 end
local lockData = redis.call('GET', lockKey)
if not lockData then return -1 end
if cjson.decode(lockData).lockId ~= ARGV[1] then return 0 end
redis.call('DEL', lockKey, KEYS[1])
return 1
