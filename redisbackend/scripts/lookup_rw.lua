-- LookupRW (after prelude.lua, lib.lua and rw.lua): the live holders of a
-- read-write lock (rw.lua). Read-only.
-- KEYS[1] lock key; ARGV[1] the index key prefix ("<prefix>:id:", or the
-- lock's "<prefix>:{T}:id:").
-- Returns {member, expiresAtMs, index value, ...} for the live holders,
-- the earliest expiry first ({} when none); SYNCGUARD_KIND while a live
-- plain lock or limit holds the key.
local nowMs = serverMs()

local holders, lockData = lib().typed('ZRANGEBYSCORE', KEYS[1], string.format('(%d', nowMs), '+inf', 'WITHSCORES')
if lockData then
  local data, corrupt = decodeLock(redis.call('GET', KEYS[1]))
  if not data then return corrupt end
  if data.expiresAtMs > nowMs - tolMs then return redis.error_reply(kindMsg) end
  return {}
end
local out = {}
for i = 1, #holders, 2 do
  local m = holders[i]
  if #m ~= 23 then return redis.error_reply(kindMsg) end
  out[#out + 1] = m
  out[#out + 1] = holders[i + 1]
  out[#out + 1] = redis.call('GET', ARGV[1] .. string.sub(m, 2)) or ''
end
return out
