-- rw.lua: read-write locks (rw.go), for the scripts that include it after
-- lib.lua. The lock key of a read-write lock is a sorted set of its
-- holders, "r<lock id>" for a reader and "w<lock id>" for the writer ->
-- expiresAtMs, live until that time exactly by the server's clock (as a
-- slot of a limit). A writer never shares the set, so its lowest member
-- tells the state. A holder's index key holds, version 1,
--   "\2" .. "1 <r|w> <fence> <acquiredAtMs> <expiresAtMs> <lock key length> <lock key><user key>"
-- (its expiry is its score: a release, an extension or a lookup by id reads
-- no score). The index expires with its holder (PX of the holder's TTL,
-- with no tolerance), so an index still there names a live holder and a
-- release reads no clock. Its queue entry ends its flags with its mode:
-- "<l|n><s|k><r|w>".
-- rwlib is made only when the run wants it (wantRW, prelude.lua).
local rwlib = wantRW and function()
  local R, L = {}, nil
  -- lib.lua's helpers, made on first use: the uncontended release needs none.
  local function lb()
    L = L or lib()
    return L
  end

  -- R.member reports whether lockKey holds member (false too when
  -- lockKey holds another kind now).
  function R.member(lockKey, member)
    local s = redis.pcall('ZSCORE', lockKey, member)
    if type(s) == 'table' then
      if string.find(s.err or '', 'WRONGTYPE', 1, true) then return false end
      return redis.call('ZSCORE', lockKey, member) ~= false
    end
    return s ~= false
  end

  -- R.index: the index value of a holder in mode (r or w), live until
  -- expiresAtMs (its score in the set: both are written together).
  function R.index(mode, fence, nowMs, expiresAtMs, lockKey, userKey)
    return "\0021 " .. mode .. ' ' .. fence .. ' ' .. string.format('%d %d', nowMs, expiresAtMs) .. ' ' .. #lockKey .. ' ' .. lockKey .. userKey
  end

  -- R.parse: mode, fence, acquiredAtMs, expiresAtMs, lock key, user key of
  -- an R.index value.
  function R.parse(v)
    local mode, fence, acq, exp, klen, rest = string.match(v, "^\0021 ([rw]) (%d+) (%d+) (%d+) (%d+) (.*)$")
    if not mode then return nil end
    klen = tonumber(klen)
    return mode, fence, tonumber(acq), tonumber(exp), string.sub(rest, 1, klen), string.sub(rest, klen + 1)
  end

  -- R.state drops the holders that expired by nowMs and returns 'w' when a
  -- writer holds lockKey, 'r' when readers do, '' when nobody does; or nil
  -- and the kind error while a plain lock or a limit holds it (an expired
  -- plain lock is deleted).
  function R.state(lockKey, nowMs)
    if redis.call('EXISTS', lockKey) == 0 then return '' end
    if not lb().reclaim(lockKey, nowMs) then
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
  -- past their wait, or of another kind, are dropped. Returns a table
  -- lock id -> {fence, expiresAtMs} of the grants, whether a live entry
  -- may still wait, the state after, and the fence of the first grant.
  function R.grant(lockKey, queue, idPrefix, userKey, nowMs, state)
    local granted, first, blocked = {}, nil, false
    if state == 'w' then return granted, true, state end
    local entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES')
    if #entries == 0 then return granted, false, state end
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
        local f = lb().nextFence(string.sub(rest, clen + 1), striped == 's', nowMs)
        if f > fenceMax then blocked = true break end -- the waiter's own attempt reports it
        local fence = string.format('%015d', f)
        local expiresAtMs = nowMs + tonumber(ttl)
        done[#done + 1] = e
        local heard = redis.call('PUBLISH', string.sub(rest, 1, clen), id .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs))
        if heard > 0 or live == 'n' then
          lb().add(lockKey, idPrefix .. id, mode .. id, expiresAtMs, tonumber(ttl), R.index(mode, fence, nowMs, expiresAtMs, lockKey, userKey), true)
          granted[id] = {fence, expiresAtMs}
          first = first or fence
          state = mode
        end
      end
    end
    if #done > 0 then redis.call('ZREM', queue, unpack(done)) end
    if not blocked and #entries == 32 then blocked = redis.call('EXISTS', queue) == 1 end
    return granted, blocked, state, first
  end

  return R
end
