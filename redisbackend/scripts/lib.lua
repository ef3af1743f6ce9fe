-- lib.lua: the helpers off the lock's hot paths, for the scripts that
-- include it after prelude.lua. lib() makes them, so a script pays for
-- them only on the runs (or the branches) that call it.
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

  -- L.reclaim removes the slots of a limit's lock key that expired by
  -- cutoff (the server's clock: a slot is live until its expiresAtMs, no
  -- tolerance, see prelude.lua) and returns how many it removed; or nil
  -- when the key holds something else (a lock).
  function L.reclaim(lockKey, cutoff)
    return (L.typed('ZREMRANGEBYSCORE', lockKey, '-inf', cutoff))
  end

  -- L.add writes a slot of lockKey for lock id id (index key idKey) until
  -- expiresAtMs, and keeps the sorted set alive as long as its last slot.
  -- The index of a slot outlives it by the tolerance, so that a Release or
  -- Extend just after the expiry still finds the slot and reads it
  -- expired; with exact (a read-write lock's holder, rw.lua) it goes with
  -- its holder, so that a release needs no clock.
  function L.add(lockKey, idKey, id, expiresAtMs, ttlMs, index, exact)
    redis.call('ZADD', lockKey, expiresAtMs, id)
    if redis.call('PTTL', lockKey) < ttlMs then
      redis.call('PEXPIRE', lockKey, ttlMs)
    end
    if exact then
      redis.call('SET', idKey, index, 'PX', ttlMs)
    else
      redis.call('SET', idKey, index, 'PX', ttlMs + tolMs)
    end
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
