-- The hand-off, last of a release (after release_lock.lua): the lock
-- lockKey, released by id (its lock data lockData, data decoded or nil),
-- goes to the oldest live entry of its queue (queueStart .. lockKey): a new
-- lease for the entry's lock id and TTL, with the next fence, announced on
-- the entry's channel (PUBLISH "<id> <fence> <expiresAtMs>"), so that the
-- waiter's process hands it to the waiter with no further round trip. An
-- entry past its deadline (its score, the time it queued in microseconds,
-- plus its wait) is dropped; so is one whose channel has no subscriber
-- when its entry asks for that check ("l": its process died or lost its
-- connection; in Redis Cluster PUBLISH counts only the node's own
-- subscribers). A queue of dead entries is popped 16 at a time; without a
-- live entry the lock is deleted. Only a lease somebody queued for
-- (queuedMark) looks at the queue: the others cost one command less.
--
-- Locality within a bound (sync.Mutex's model; release.lua only): while
-- the oldest entry has queued for less than localUs, a waiter of the
-- releasing Backend (mine, its channel) goes first: its oldest live entry
-- among the first 16, else the candidate the Backend names (cand, the
-- entry of a waiter of its own that did not queue here, because the key
-- was held by the Backend when it arrived: queue.go). The Backend hands it
-- the lease from this reply, with no message and no other process woken,
-- so the lock stays where it is hot; an entry that has waited localUs is
-- served in queue order.
local marked = string.sub(lockData, -1) == queuedMark
if not marked and not cand then
  redis.call('DEL', lockKey)
  return 1
end
local queue = queueStart .. lockKey
local nowMs, t = serverMs()
local head
if mine and localUs then
  localUs = tonumber(localUs)
  local entries = {}
  if marked then entries = redis.call('ZRANGE', queue, 0, 15, 'WITHSCORES') end
  if #entries == 0 or t[1] * 1000000 + t[2] - tonumber(entries[2]) < localUs then
    for i = 1, #entries, 2 do
      local wait, clen, rest = string.match(entries[i], '^%S+ %d+ (%d+) [ln][sk] (%d+) (.*)$')
      if wait and string.sub(rest, 1, tonumber(clen)) == mine and tonumber(entries[i + 1]) / 1000 + tonumber(wait) > nowMs then
        redis.call('ZREM', queue, entries[i])
        head = {entries[i], entries[i + 1]}
        break
      end
    end
    if not head and cand then
      if marked then redis.call('ZREM', queue, cand) end
      head = {cand, t[1] * 1000000 + t[2]}
    end
  end
end
if not head then
  if not marked then
    redis.call('DEL', lockKey)
    return 1
  end
  head = redis.call('ZPOPMIN', queue)
  if #head == 0 then
    redis.call('DEL', lockKey)
    return 1
  end
end
data = data or decodeLock(lockData)
local userKey = lib().jsonText((data and data.key) or '')
-- The index key of a lock id: KEYS[1] is this prefix followed by the id
-- (in the cluster layout too: the ids of one lock key share its tag).
local idPrefix = string.sub(KEYS[1], 1, #KEYS[1] - #id)
for i = 1, 16 do
  if i > 1 then
    head = redis.call('ZPOPMIN', queue)
    if #head == 0 then break end
  end
  -- "<id> <ttlMs> <waitMs> <l|n><s|k> <channel length> <channel><fence key>"
  local wid, ttl, wait, live, striped, clen, rest =
    string.match(head[1], '^(%S+) (%d+) (%d+) ([ln])([sk]) (%d+) (.*)$')
  if wid and tonumber(head[2]) / 1000 + tonumber(wait) > nowMs then
    clen = tonumber(clen)
    local n
    if striped == 's' then
      n = lib().nextFence(string.sub(rest, clen + 1), true, nowMs)
    else
      n = redis.call('INCR', string.sub(rest, clen + 1))
    end
    -- Past the maximum, the waiter's own attempt reports the overflow.
    if n > fenceMax then break end
    local fence = string.format('%015d', n)
    local expiresAtMs = nowMs + tonumber(ttl)
    local channel = string.sub(rest, 1, clen)
    local own = channel == mine
    -- (PUBLISH first: an "n" entry is told too, whatever the count.)
    local granted = own or redis.call('PUBLISH', channel, wid .. ' ' .. fence .. ' ' .. string.format('%d', expiresAtMs)) > 0 or live == 'n'
    if granted and head[1] == cand then
      -- The candidate's id is retired when it left meanwhile (its
      -- release, a tombstone): then it takes nothing.
      granted = redis.call('SET', idPrefix .. wid, lockKey, 'NX', 'PX', ttl)
    elseif granted then
      redis.call('SET', idPrefix .. wid, lockKey, 'PX', ttl)
    end
    if granted then
      -- Marked when waiters may be queued behind this one.
      local value = string.format(lockFormat, wid, expiresAtMs, nowMs, userKey, n)
      if marked then value = value .. queuedMark end
      redis.call('SET', lockKey, value, 'PX', ttl)
      if own then return {1, wid, fence, expiresAtMs} end
      return {2, fence}
    end
  end
end
redis.call('DEL', lockKey)
return 1
