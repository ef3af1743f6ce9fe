-- rw_release.lua: the release of a read-write lock's holder (rw.lua), for
-- the release scripts, after rw.lua: rwRelease(idKey, v, ...) frees the
-- holder id (index key idKey, whose value v names its lock key) and hands
-- the key to the waiters (R.grant); release_lock.lua's results.
local rwRelease = wantRW and function(idKey, v, id, nonce, tombMs, queueStart, written)
  -- R.parse's fields, read here: the uncontended release makes no rwlib.
  local mode, klen, at = string.match(v, "^\0021 ([rw]) %d+ %d+ %d+ (%d+) ()")
  if not mode then
    if written then redis.call('SET', idKey, v, 'PX', tombMs) end
    return 0
  end
  local keyEnd = at + klen - 1
  local lockKey = string.sub(v, at, keyEnd)
  -- The index is there, so the holder was live when this run started
  -- (both expire at its expiresAtMs, rw.lua): removed from the set, it is
  -- released; not in it, it is not found (the set was deleted, or the key
  -- is another kind's since: pcall).
  local removed = redis.pcall('ZREM', lockKey, mode .. id)
  if removed ~= 1 then
    if type(removed) == 'table' and not string.find(removed.err or '', 'WRONGTYPE', 1, true) then return removed end
    redis.call('SET', idKey, tombstone('-1', nonce), 'PX', tombMs)
    return -1
  end
  if not written then redis.call('SET', idKey, tombstone('1', nonce), 'PX', tombMs) end
  -- Nobody queued (the uncontended release): the next attempt drops
  -- holders that expired.
  local queue = queueStart .. lockKey
  if redis.call('EXISTS', queue) == 0 then return 1 end
  local R, nowMs = rwlib(), serverMs()
  local state = R.state(lockKey, nowMs)
  if not state then return 1 end
  local _, _, _, to = R.grant(lockKey, queue, string.sub(idKey, 1, #idKey - #id), string.sub(v, keyEnd + 1), nowMs, state)
  if to then return {2, to} end
  return 1
end
