-- rw_release.lua: the release of a read-write lock's holder (rw.lua), for
-- the release scripts, after rw.lua: rwRelease(idKey, v, ...) frees the
-- holder id (index key idKey, whose value v names its lock key) and hands
-- the key to the waiters (R.grant); release_lock.lua's results.
local rwRelease = wantRW and function(idKey, v, id, nonce, tombMs, queueStart, written)
  -- R.parse's fields, read here: the uncontended release makes no rwlib.
  local mode, exp, klen, rest = string.match(v, "^\0021 ([rw]) %d+ %d+ (%d+) (%d+) (.*)$")
  if not mode then
    if written then redis.call('SET', idKey, v, 'PX', tombMs) end
    return 0
  end
  klen = tonumber(klen)
  local lockKey = string.sub(rest, 1, klen)
  -- (pcall: the key may be another kind's since the holder expired.)
  local removed = redis.pcall('ZREM', lockKey, mode .. id)
  if removed ~= 1 then
    if type(removed) == 'table' and not string.find(removed.err or '', 'WRONGTYPE', 1, true) then return removed end
    redis.call('SET', idKey, tombstone('-1', nonce), 'PX', tombMs)
    return -1
  end
  local nowMs = serverMs()
  local result = '-2'
  if tonumber(exp) > nowMs then result = '1' end
  if result ~= '1' or not written then
    redis.call('SET', idKey, tombstone(result, nonce), 'PX', tombMs)
  end
  -- Nobody queued (the uncontended release): the next attempt drops
  -- holders that expired.
  local queue = queueStart .. lockKey
  if redis.call('EXISTS', queue) == 0 then return tonumber(result) end
  local R = rwlib()
  local state = R.state(lockKey, nowMs)
  if not state then return tonumber(result) end
  local _, _, _, to = R.grant(lockKey, queue, string.sub(idKey, 1, #idKey - #id), string.sub(rest, klen + 1), nowMs, state)
  if to and result == '1' then return {2, to} end
  return tonumber(result)
end
