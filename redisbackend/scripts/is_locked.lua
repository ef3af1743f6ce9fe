-- IsLocked: 1 when KEYS[1] holds a live lease, else 0.
-- KEYS[1] lock key; ARGV[1] toleranceMs, ARGV[2] "1" to clean up an expired
-- lock, ARGV[3] the index key prefix ("<prefix>:id:").
-- Cleanup deletes only the lock key and its index key, never a fence key.
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)

local lockData = redis.call('GET', KEYS[1])
if not lockData then return 0 end
local ok, data = pcall(cjson.decode, lockData)
if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
  return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
end
if data.expiresAtMs > nowMs - tonumber(ARGV[1]) then return 1 end
if ARGV[2] == '1' then
  redis.call('DEL', KEYS[1])
  if type(data.lockId) == 'string' and string.match(data.lockId, '^[A-Za-z0-9_-]+$') and #data.lockId == 22 then
    local idKey = ARGV[3] .. data.lockId
    -- Only remove an index that still points at this lock key.
    if redis.call('GET', idKey) == KEYS[1] then
      redis.call('DEL', idKey)
    end
  end
end
return 0
