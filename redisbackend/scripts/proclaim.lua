-- Proclaim: store the leader's identity with its term and publish a
-- leader notice (lock/election; redisbackend/election.go).
-- KEYS[1] lock key; ARGV[1] lockId, ARGV[2] identity, ARGV[3] channel
-- Returns 1, 0 owned by another lease, -1 not found.
-- The identity is the member "owner" of the lock data, which extend.lua
-- keeps (it re-encodes the data with cjson). Running it twice stores the
-- same member and publishes the notice twice, which observers ignore.
local raw = redis.call('GET', KEYS[1])
if not raw then return -1 end
local data, corrupt = decodeLock(raw)
if not data then return corrupt end
if data.lockId ~= ARGV[1] then return 0 end
if data.owner ~= ARGV[2] then
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl <= 0 then return -1 end
  data.owner = ARGV[2]
  local value = cjson.encode(data)
  if string.sub(raw, -1) == queuedMark then
    value = value .. queuedMark -- its release looks at the queue
  end
  redis.call('SET', KEYS[1], value, 'PX', pttl)
end
-- The identity is appended, not formatted: '%s' would cut it at a NUL.
redis.call('PUBLISH', ARGV[3], string.format('%s %d ', data.fence, data.expiresAtMs) .. ARGV[2])
return 1
