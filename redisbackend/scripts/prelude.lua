-- Prelude: scripts.go puts this in front of every script before hashing it,
-- so each script is still one self-contained EVAL/EVALSHA body and the
-- server's clock, lock-data decoding and the tombstone format are written
-- once. Local functions only (Redis forbids globals): a run makes one
-- closure for each, which costs nothing measurable (see newScript).

-- serverMs: the server's clock in milliseconds (TIME), and in
-- microseconds (exact in a double until the year 2255). Every script
-- judges expiry by it, never by a client's clock.
local function serverMs()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
end

-- decodeLock: the lock data stored at a lock key (JSON {lockId, expiresAtMs,
-- acquiredAtMs, key, fence}) as a table; or nil and the SYNCGUARD_CORRUPT
-- error reply (errors.go maps it to lock.CodeInternal) for anything else,
-- which the caller returns as is:
--   local data, corrupt = decodeLock(raw)
--   if not data then return corrupt end
-- (A returned error reply rather than error(): raised errors reach the
-- client differently across the Redis versions we support, 5.0 on.)
local function decodeLock(raw)
  local ok, data = pcall(cjson.decode, raw)
  if not ok or type(data) ~= 'table' or type(data.expiresAtMs) ~= 'number' then
    return nil, redis.error_reply('SYNCGUARD_CORRUPT the value at the lock key is not syncguard lock data')
  end
  return data
end

-- Tombstones. A finished lease's index key holds "\0<result>:<nonce>" for
-- the resend window (release.lua, resend.go) instead of the lock key; it
-- starts with a NUL byte, which no key name this library writes does.
local function isTomb(v)
  return string.byte(v, 1) == 0
end

local function tombstone(result, nonce)
  return '\0' .. result .. ':' .. nonce
end


-- nextFence: the next fence of a lock whose counter is fenceKey (as a
-- number). The fence counter never expires and is never deleted. A striped
-- counter (striped true, shared by many keys, stripes.go) moves to
-- max(counter + 1, now in ms): strictly increasing for every key on it,
-- and increasing across a change of stripes or a lost counter as long as
-- the clock went forward. A key's own counter is INCRemented.
local function nextFence(fenceKey, striped, nowMs)
  if striped then
    local n = (tonumber(redis.call('GET', fenceKey)) or 0) + 1
    if n < nowMs then n = nowMs end
    redis.call('SET', fenceKey, string.format('%d', n))
    return n
  end
  return redis.call('INCR', fenceKey)
end

-- lockJSON: the lock data, exactly the JSON cjson.encode would write for
-- these five fields, built directly (cheaper than a table and its
-- encoder): the lock id (validated by the client: [A-Za-z0-9_-]{22}) and
-- the fence (digits) need no escaping, the user key goes through cjson.
local function lockJSON(lockId, expiresAtMs, nowMs, key, fence)
  return '{"lockId":"' .. lockId .. '","expiresAtMs":' .. string.format('%d', expiresAtMs) ..
    ',"acquiredAtMs":' .. string.format('%d', nowMs) .. ',"key":' .. cjson.encode(key) ..
    ',"fence":"' .. fence .. '"}'
end
