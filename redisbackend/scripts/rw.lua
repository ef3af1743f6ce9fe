-- rw.lua: read-write locks (rw.go), for the scripts that include it after
-- lib.lua. The lock key of a read-write lock is a sorted set of its
-- holders, "r<lock id>" for a reader and "w<lock id>" for the writer ->
-- expiresAtMs, live until that time exactly by the server's clock (as a
-- slot of a limit). A writer never shares the set, so its lowest member
-- tells the state. A holder's index key holds, version 1,
--   "\2" .. "1 <r|w> <fence> <acquiredAtMs> <lock key length> <lock key><user key>"
-- and its queue entry ends its flags with its mode: "<l|n><s|k><r|w>".
local RW = 2
local function rwlib(L)
  local R = {}

  -- R.index: the index value of a holder in mode (r or w).
  function R.index(mode, fence, nowMs, lockKey, userKey)
    return "\0021 " .. mode .. ' ' .. fence .. ' ' .. string.format('%d', nowMs) .. ' ' .. #lockKey .. ' ' .. lockKey .. userKey
  end

  -- R.parse: mode, fence, acquiredAtMs, lock key, user key of an R.index value.
  function R.parse(v)
    local mode, fence, acq, klen, rest = string.match(v, "^\0021 ([rw]) (%d+) (%d+) (%d+) (.*)$")
    if not mode then return nil end
    klen = tonumber(klen)
    return mode, fence, tonumber(acq), string.sub(rest, 1, klen), string.sub(rest, klen + 1)
  end

  -- R.state drops the holders that expired by nowMs and returns 'w' when a
  -- writer holds lockKey, 'r' when readers do, '' when nobody does; or nil
  -- and the kind error while a plain lock or a limit holds it (an expired
  -- plain lock is deleted).
  function R.state(lockKey, nowMs)
    if not L.reclaim(lockKey, nowMs) then
      local data, corrupt = decodeLock(redis.call('GET', lockKey))
      if not data then return nil, corrupt end
      if data.expiresAtMs > nowMs - tolMs then return nil, redis.error_reply(kindMsg) end
      redis.call('DEL', lockKey)
      return ''
    end
    local first = redis.call('ZRANGE', lockKey, 0, 0)[1]
    if not first then return '' end
    local m = string.sub(first, 1, 1)
    if #first ~= 23 or (m ~= 'r' and m ~= 'w') then return nil, redis.error_reply(kindMsg) end
    return m
  end

  -- R.grant hands lockKey (in state, R.state's) to the oldest live
  -- entries of its queue, in order: a writer when nobody holds it, readers
  -- while no writer does. It stops at the first live entry it cannot
  -- grant, so a waiting writer keeps the readers behind it out. Entries
  -- past their wait, or of another kind, are dropped. Returns the fence of
  -- the first grant (or nil), a table lock id -> {fence, expiresAtMs} of
  -- the grants, whether a live entry still waits, and the state after.
  function R.grant(lockKey, queue, idPrefix, userKey, nowMs, state)
    local granted, first, blocked = {}, nil, false
    if state == 'w' then return nil, granted, true, state end
    local entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES')
    if #entries == 0 then return nil, granted, false, state end
    local done = {}
    for i = 1, #entries, 2 do
      local e = entries[i]
      local id, ttl, wait, live, striped, mode, clen, rest =
        string.match(e, '^(%S+) (%d+) (%d+) ([ln])([sk])([rw]) (%d+) (.*)$')
      if not id or tonumber(entries[i + 1]) / 1000 + tonumber(wait) <= nowMs then
        done[#done + 1] = e
      elseif state == 'w' or (mode == 'w' and state == 'r') then
        blocked = true
        break
      else
        clen = tonumber(clen)
        local f = L.nextFence(string.sub(rest, clen + 1), striped == 's', nowMs)
        if f > fenceMax then blocked = true break end -- the waiter's own attempt reports it
        local fence = string.format('%015d', f)
        local expiresAtMs = nowMs + tonumber(ttl)
        done[#done + 1] = e
        local heard = redis.call('PUBLISH', string.sub(rest, 1, clen), id .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs))
        if heard > 0 or live == 'n' then
          L.add(lockKey, idPrefix .. id, mode .. id, expiresAtMs, tonumber(ttl), R.index(mode, fence, nowMs, lockKey, userKey))
          granted[id] = {fence, expiresAtMs}
          first = first or fence
          state = mode
        end
      end
    end
    if #done > 0 then redis.call('ZREM', queue, unpack(done)) end
    if not blocked and #entries == 32 then blocked = redis.call('EXISTS', queue) == 1 end
    return first, granted, blocked, state
  end

  -- R.release frees the holder id (index key idKey, whose value v names its
  -- lock key) and hands the key on: release_lock.lua's results.
  function R.release(idKey, v, id, nonce, tombMs, queueStart, written)
    local mode, _, _, lockKey, userKey = R.parse(v)
    if not mode then
      if written then redis.call('SET', idKey, v, 'PX', tombMs) end
      return 0
    end
    local nowMs = serverMs()
    local exp = L.typed('ZSCORE', lockKey, mode .. id)
    if not exp then
      redis.call('SET', idKey, tombstone('-1', nonce), 'PX', tombMs)
      return -1
    end
    local result = '-2'
    if tonumber(exp) > nowMs then result = '1' end
    redis.call('ZREM', lockKey, mode .. id)
    redis.call('SET', idKey, tombstone(result, nonce), 'PX', tombMs)
    local state = R.state(lockKey, nowMs)
    if not state then return tonumber(result) end
    local to = R.grant(lockKey, queueStart .. lockKey, string.sub(idKey, 1, #idKey - #id), userKey, nowMs, state)
    if to and result == '1' then return {2, to} end
    return tonumber(result)
  end

  return R
end
