-- LookupLimit (after prelude.lua and lib.lua): the live slots of a limit
-- (limit.go). Read-only.
-- KEYS[1] lock key; ARGV[1] the index key prefix ("<prefix>:id:", or the
-- lock's "<prefix>:{T}:id:").
-- Returns {lockId, expiresAtMs, index value, ...} for the live slots, the
-- earliest expiry first ({} when none); SYNCGUARD_KIND while a live lock
-- holds the key.
local nowMs = serverMs()

local slots, lockData = lib().typed('ZRANGEBYSCORE', KEYS[1], string.format('(%d', nowMs), '+inf', 'WITHSCORES')
if lockData then
  local data, corrupt = decodeLock(redis.call('GET', KEYS[1]))
  if not data then return corrupt end
  if data.expiresAtMs > nowMs - tolMs then return redis.error_reply(kindMsg) end
  return {}
end
local out = {}
for i = 1, #slots, 2 do
  out[#out + 1] = slots[i]
  out[#out + 1] = slots[i + 1]
  out[#out + 1] = redis.call('GET', ARGV[1] .. slots[i]) or ''
end
return out
