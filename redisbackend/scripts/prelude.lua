-- Prelude: scripts.go puts this in front of every script before hashing it,
-- so each script is still one self-contained EVAL/EVALSHA body and the
-- server's clock, lock-data decoding and the tombstone format are written
-- once. Local values only (Redis forbids globals).
--
-- The helper functions below (every top-level "local function") are not
-- sent as they are: a local function is a closure made on every run of
-- the script, used or not (TestScriptCostParts). scripts.go instead puts
-- each helper's code where a script calls it, as an anonymous function
-- called in place, so a helper costs only the runs that call it (get_record
-- and is_done pay nothing, acquire and release nothing on their hot paths).
-- So "--" in a script only ever starts a comment (scripts.go strips
-- comments from a helper's body by it).

-- Constants of the contract (lock.TimeToleranceMs and lock.FenceMax;
-- TestScriptConstants checks them): a lease is live until its
-- expiresAtMs plus tolMs, and no fence above fenceMax is ever granted.
local tolMs = 1000
local fenceMax = 900000000000000

-- lockFormat: the lock data (JSON {lockId, expiresAtMs, acquiredAtMs, key,
-- fence}), for string.format(lockFormat, lockId, expiresAtMs, acquiredAtMs,
-- key, fence) with the key's text as a JSON string holds it (escaped,
-- without quotes: lockdata.go's jsonText, or lib().jsonText) and the fence
-- a number or digits. The lock id (validated by the client:
-- [A-Za-z0-9_-]{22}) needs no escaping. One string.format makes the whole
-- value: cheaper than cjson.encode of a table, or than concatenating
-- formatted parts (TestScriptCostParts).
local lockFormat = '{"lockId":"%s","expiresAtMs":%d,"acquiredAtMs":%d,"key":"%s","fence":"%015d"}'

-- queuedMark: the lock data of a lease whose key someone queued for
-- (queue.go) ends with it, one space (JSON allows trailing whitespace:
-- cjson, JSON.parse and encoding/json read the same data), so that its
-- release looks at the queue (release.lua) and the release of a lease
-- nobody queued for does not. acquire.lua appends it when an attempt
-- queues (APPEND keeps the TTL) and writes it on a waiter's lease, and so
-- does release.lua on a lease it hands off; extend.lua keeps it.
local queuedMark = ' '

-- serverMs: the server's clock in milliseconds (TIME), and TIME's reply
-- (seconds, microseconds) for a caller that needs microseconds. Every
-- script judges expiry by it, never by a client's clock.
local function serverMs()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000), t
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

-- Index values. An index key holds the lock key of its lease; or, for the
-- resend window after the lease ended (release.lua, resend.go), a
-- tombstone "\0<result>:<nonce>"; or, for a slot of a limit, "\1..."
-- (lib().index). Neither first byte starts a key name this library writes:
-- string.byte(v, 1) is TOMB, SLOT, or another (a lock key).
local TOMB, SLOT = 0, 1

-- tombstone: the tombstone of a lease that ended with result (a string,
-- '1', '-1' or '-2': no number to format) for the call nonce.
local function tombstone(result, nonce)
  return '\0' .. result .. ':' .. nonce
end

-- Concurrency limits (limit.go). The lock key of a limit is a sorted set
-- of its slots, lock id -> expiresAtMs; a slot's index key holds
-- lib().index(...) ("\1" first: neither a key name nor a tombstone) instead
-- of the lock key. A key is a lock (a string) or a limit (a sorted set),
-- never both: the other kind's scripts answer the kind error while it is
-- live, redis.error_reply(kindMsg).
local kindMsg = 'SYNCGUARD_KIND the key is held as a lock and asked for as a concurrency limit, or the reverse'

-- lib returns the helpers off the lock's hot paths, made only by the
-- scripts (or the branches) that use them.
local function lib()
  local L = {}

  -- L.typed: redis.call(...) and false, or nil and true when Redis answers
  -- WRONGTYPE (a key of the other kind). Any other error is raised as
  -- redis.call raises it (the command is sent again to raise it: only
  -- read-only commands, and ones that failed, go through typed).
  function L.typed(...)
    local r = redis.pcall(...)
    if type(r) == 'table' and r.err then
      if string.find(r.err, 'WRONGTYPE', 1, true) then return nil, true end
      return redis.call(...), false
    end
    return r, false
  end

  -- L.nextFence: the next fence of a lock whose counter is fenceKey (as a
  -- number). The fence counter never expires and is never deleted. A
  -- striped counter (striped true, shared by many keys, stripes.go) moves
  -- to max(counter + 1, now in ms): strictly increasing for every key on
  -- it, and increasing across a change of stripes or a lost counter as
  -- long as the clock went forward. A key's own counter is INCRemented.
  function L.nextFence(fenceKey, striped, nowMs)
    if striped then
      local n = (tonumber(redis.call('GET', fenceKey)) or 0) + 1
      if n < nowMs then n = nowMs end
      redis.call('SET', fenceKey, string.format('%d', n))
      return n
    end
    return redis.call('INCR', fenceKey)
  end

  -- L.jsonText: s as the text of a JSON string (escaped, without quotes),
  -- for lockFormat.
  function L.jsonText(s)
    return string.sub(cjson.encode(s), 2, -2)
  end

  -- L.index: "\1<fence> <acquiredAtMs> <n> <lock key length> <lock key><user key>".
  function L.index(fence, nowMs, n, lockKey, userKey)
    return '\1' .. fence .. ' ' .. string.format('%d', nowMs) .. ' ' .. n .. ' ' .. #lockKey .. ' ' .. lockKey .. userKey
  end

  -- L.parse: fence, acquiredAtMs, n, lock key, user key of an L.index value.
  function L.parse(v)
    local fence, acq, n, klen, rest = string.match(v, '^\1(%d+) (%d+) (%d+) (%d+) (.*)$')
    if not fence then return nil end
    klen = tonumber(klen)
    return fence, tonumber(acq), n, string.sub(rest, 1, klen), string.sub(rest, klen + 1)
  end

  -- L.reclaim removes the expired slots of a limit's lock key (expiry by
  -- the server's clock, less the tolerance) and returns how many it
  -- removed; or nil when the key holds something else (a lock).
  function L.reclaim(lockKey, cutoff)
    return (L.typed('ZREMRANGEBYSCORE', lockKey, '-inf', cutoff))
  end

  -- L.add writes a slot of lockKey for lock id id (index key idKey) until
  -- expiresAtMs, and keeps the sorted set alive as long as its last slot.
  function L.add(lockKey, idKey, id, expiresAtMs, ttlMs, index)
    redis.call('ZADD', lockKey, expiresAtMs, id)
    if redis.call('PTTL', lockKey) < ttlMs then
      redis.call('PEXPIRE', lockKey, ttlMs)
    end
    -- The index outlives the slot by the tolerance, within which the slot
    -- still counts as live.
    redis.call('SET', idKey, index, 'PX', ttlMs + tolMs)
  end

  -- L.grant hands free slots of lockKey (user key userKey) to the oldest
  -- live entries of its queue whose n admits them (queue.go: a slot
  -- entry's flags end in "m<n>"), up to 16 entries read; entries of
  -- another kind or past their wait are dropped, entries whose n is
  -- reached stay. Returns the fence of the first slot granted, if any.
  function L.grant(lockKey, queue, idPrefix, userKey, nowMs)
    local entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES')
    if #entries == 0 then return end
    local count = redis.call('ZCARD', lockKey)
    local done, first = {}, nil
    for i = 1, #entries, 2 do
      local e = entries[i]
      local id, ttl, wait, live, striped, n, clen, rest =
        string.match(e, '^(%S+) (%d+) (%d+) ([ln])([sk])m(%d+) (%d+) (.*)$')
      if not id or tonumber(entries[i + 1]) / 1000 + tonumber(wait) <= nowMs then
        done[#done + 1] = e
      elseif count < tonumber(n) then
        clen = tonumber(clen)
        local f = L.nextFence(string.sub(rest, clen + 1), striped == 's', nowMs)
        if f > fenceMax then break end -- the waiter's own attempt reports it
        local fence = string.format('%015d', f)
        local expiresAtMs = nowMs + tonumber(ttl)
        done[#done + 1] = e
        local heard = redis.call('PUBLISH', string.sub(rest, 1, clen), id .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs))
        if heard > 0 or live == 'n' then
          L.add(lockKey, idPrefix .. id, id, expiresAtMs, tonumber(ttl), L.index(fence, nowMs, n, lockKey, userKey))
          count = count + 1
          first = first or fence
        end
      end
    end
    if #done > 0 then redis.call('ZREM', queue, unpack(done)) end
    return first
  end

  return L
end
