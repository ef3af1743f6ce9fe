-- Acquire: take the lock when it is free or expired, bump the fence.
-- KEYS[1] lock key, KEYS[2] index key (prefix:id:<lockId>), KEYS[3] fence key
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] toleranceMs, ARGV[4] user key (for
-- the lock data), ARGV[5] max fence, ARGV[6] "1" when KEYS[3] is a striped
-- counter shared by many keys (stripes.go), else "0". The index holds the
-- lock key, KEYS[1].
-- Returns {1, fence, expiresAtMs} on success; {0, holderExpiresAtMs} on
-- contention; {-3, fence} when the fence counter passed the maximum (nothing
-- is written but the counter, which only ever grows); {-4} when the lock id
-- was released or retired (its index key holds a tombstone, see release.lua).
--
-- Safe to run twice: a second run with the lock id of the live lease on
-- KEYS[1] (a command re-sent after its reply was lost, or the next attempt
-- of one lock.Acquire) returns that grant unchanged, same fence, instead of
-- contention; after the lease was released it returns {-4} and writes
-- nothing, so a late copy can never take the key again.
local nowMs = serverMs()
local ttlMs = tonumber(ARGV[2])

local existing = redis.call('GET', KEYS[1])
if existing then
  local data, corrupt = decodeLock(existing)
  if not data then return corrupt end
  if data.expiresAtMs > nowMs - tonumber(ARGV[3]) then
    if data.lockId == ARGV[1] then
      return {1, data.fence, data.expiresAtMs}
    end
    return {0, data.expiresAtMs}
  end
end
local tomb = redis.call('GET', KEYS[2])
if tomb and isTomb(tomb) then
  return {-4}
end

-- The fence counter never expires and is never deleted. A striped counter
-- moves to max(counter + 1, now in ms): strictly increasing for every key
-- on it, and increasing across a change of stripes or a lost counter as
-- long as the clock went forward (stripes.go).
local n
if ARGV[6] == '1' then
  n = (tonumber(redis.call('GET', KEYS[3])) or 0) + 1
  if n < nowMs then n = nowMs end
  redis.call('SET', KEYS[3], string.format('%d', n))
else
  n = redis.call('INCR', KEYS[3])
end
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
