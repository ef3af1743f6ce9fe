-- Prelude: scripts.go puts this in front of every script before hashing it,
-- so each script is still one self-contained EVAL/EVALSHA body and the
-- server's clock, lock-data decoding and the tombstone format are written
-- once. Local functions only (Redis forbids globals): a run makes one
-- closure for each, which costs nothing measurable (see newScript).

-- serverMs: the server's clock in milliseconds (TIME). Every script judges
-- expiry by it, never by a client's clock.
local function serverMs()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
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

