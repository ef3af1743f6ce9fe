-- Acquire: take the lock when it is free or expired, bump the fence.
-- KEYS[1] lock key, KEYS[2] index key (prefix:id:<lockId>), KEYS[3] fence key
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] toleranceMs, ARGV[4] user key (for
-- the lock data), ARGV[5] max fence. The index holds the lock key, KEYS[1].
-- Returns {1, fence, expiresAtMs} on success; {0, holderExpiresAtMs} on
-- contention; {-3, fence} when the fence counter passed the maximum (nothing
-- is written but the counter, which only ever grows).
local time = redis.call('TIME')
local nowMs = time[1] * 1000 + math.floor(time[2] / 1000)
local ttlMs = tonumber(ARGV[2])

local existing = redis.call('GET', KEYS[1])
if existing then
  local ok, data = pcall(cjson.decode, existing)
  if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
    return redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
  end
  if data.expiresAtMs > nowMs - tonumber(ARGV[3]) then
    return {0, data.expiresAtMs}
  end
end

-- The fence counter never expires and is never deleted.
local n = redis.call('INCR', KEYS[3])
local fence = string.format('%015d', n)
if n > tonumber(ARGV[5]) then
  return {-3, fence}
end

local expiresAtMs = nowMs + ttlMs
-- The JSON cjson.encode would write for these five fields, built directly
-- (cheaper than a table and its encoder): the lock id (validated by the
-- client: [A-Za-z0-9_-]{22}) and the fence (digits) need no escaping, the
-- user key goes through cjson.
local lockData = '{"lockId":"' .. ARGV[1] .. '","expiresAtMs":' .. string.format('%d', expiresAtMs) ..
  ',"acquiredAtMs":' .. string.format('%d', nowMs) .. ',"key":' .. cjson.encode(ARGV[4]) ..
  ',"fence":"' .. fence .. '"}'
redis.call('SET', KEYS[1], lockData, 'PX', ttlMs)
redis.call('SET', KEYS[2], KEYS[1], 'PX', ttlMs)
return {1, fence, expiresAtMs}
