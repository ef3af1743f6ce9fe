-- Prelude: scripts.go puts this in front of every script before hashing it,
-- so each script is still one self-contained EVAL/EVALSHA body and the
-- server's clock, lock-data decoding and the tombstone format are written
-- once. Local functions only (Redis forbids globals): a run makes one
-- closure for each, a fraction of a microsecond in all (see newScript),
-- so helpers only some scripts need are made on demand (slotLib).

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

-- Concurrency limits (limit.go). The lock key of a limit is a sorted set
-- of its slots, lock id -> expiresAtMs; a slot's index key holds
-- slotLib().index(...) ("\1" first: neither a key name nor a tombstone) instead
-- of the lock key. A key is a lock (a string) or a limit (a sorted set),
-- never both: the other kind's scripts answer the kind error while it is
-- live, redis.error_reply(kindMsg).
local kindMsg = 'SYNCGUARD_KIND the key is held as a lock and asked for as a concurrency limit, or the reverse'

-- typed: redis.call(...) and false, or nil and true when Redis answers
-- WRONGTYPE (a key of the other kind). Any other error is raised as
-- redis.call raises it (the command is sent again to raise it: only
-- read-only commands, and ones that failed, go through typed).
local function typed(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'WRONGTYPE', 1, true) then return nil, true end
    return redis.call(...), false
  end
  return r, false
end

local function isSlot(v)
  return string.byte(v, 1) == 1
end

-- slotLib returns the helpers of slots, made only by the scripts (or the
-- branches) that handle slots: every local function of the prelude is a
-- closure made on every run of every script, which costs a lock's
-- acquire, release and extend about 0.05 µs each.
local function slotLib()
  local S = {}

  -- S.index: "\1<fence> <acquiredAtMs> <n> <lock key length> <lock key><user key>".
  function S.index(fence, nowMs, n, lockKey, userKey)
    return '\1' .. fence .. ' ' .. string.format('%d', nowMs) .. ' ' .. n .. ' ' .. #lockKey .. ' ' .. lockKey .. userKey
  end

  -- S.parse: fence, acquiredAtMs, n, lock key, user key of an S.index value.
  function S.parse(v)
    local fence, acq, n, klen, rest = string.match(v, '^\1(%d+) (%d+) (%d+) (%d+) (.*)$')
    if not fence then return nil end
    klen = tonumber(klen)
    return fence, tonumber(acq), n, string.sub(rest, 1, klen), string.sub(rest, klen + 1)
  end

  -- S.reclaim removes the expired slots of a limit's lock key (expiry by
  -- the server's clock, less the tolerance) and returns how many it
  -- removed; or nil when the key holds something else (a lock).
  function S.reclaim(lockKey, cutoff)
    return (typed('ZREMRANGEBYSCORE', lockKey, '-inf', cutoff))
  end

  -- S.add writes a slot of lockKey for lock id id (index key idKey) until
  -- expiresAtMs, and keeps the sorted set alive as long as its last slot.
  function S.add(lockKey, idKey, id, expiresAtMs, ttlMs, tolMs, index)
    redis.call('ZADD', lockKey, expiresAtMs, id)
    if redis.call('PTTL', lockKey) < ttlMs then
      redis.call('PEXPIRE', lockKey, ttlMs)
    end
    -- The index outlives the slot by the tolerance, within which the slot
    -- still counts as live.
    redis.call('SET', idKey, index, 'PX', ttlMs + tolMs)
  end

  -- S.grant hands free slots of lockKey (user key userKey) to the oldest
  -- live entries of its queue whose n admits them (queue.go: a slot
  -- entry's flags end in "m<n>"), up to 16 entries read; entries of
  -- another kind or past their wait are dropped, entries whose n is
  -- reached stay.
  function S.grant(lockKey, queue, idPrefix, userKey, nowMs, tolMs, fenceMax)
    local entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES')
    if #entries == 0 then return end
    local count = redis.call('ZCARD', lockKey)
    local done = {}
    for i = 1, #entries, 2 do
      local e = entries[i]
      local id, ttl, wait, live, striped, n, clen, rest =
        string.match(e, '^(%S+) (%d+) (%d+) ([ln])([sk])m(%d+) (%d+) (.*)$')
      if not id or tonumber(entries[i + 1]) / 1000 + tonumber(wait) <= nowMs then
        done[#done + 1] = e
      elseif count < tonumber(n) then
        clen = tonumber(clen)
        local f = nextFence(string.sub(rest, clen + 1), striped == 's', nowMs)
        if f > fenceMax then break end -- the waiter's own attempt reports it
        local fence = string.format('%015d', f)
        local expiresAtMs = nowMs + tonumber(ttl)
        done[#done + 1] = e
        local heard = redis.call('PUBLISH', string.sub(rest, 1, clen), id .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs))
        if heard > 0 or live == 'n' then
          S.add(lockKey, idPrefix .. id, id, expiresAtMs, tonumber(ttl), tolMs, S.index(fence, nowMs, n, lockKey, userKey))
          count = count + 1
        end
      end
    end
    if #done > 0 then redis.call('ZREM', queue, unpack(done)) end
  end

  return S
end
