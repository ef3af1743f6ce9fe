-- Acquire (after prelude.lua and lib.lua): take the lock when it is free
-- or expired, bump the fence; when it is busy and the caller waits in the
-- key's queue (queue.go), take or keep the caller's place there.
-- KEYS[1] lock key, KEYS[2] index key (prefix:id:<lockId>), KEYS[3] fence
-- key, KEYS[4] (optional) the key's queue of waiters
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] the user key (for the lock data)
-- as the text of a JSON string (wire.JSONText), ARGV[4] (optional without
-- KEYS[4]) "1" when KEYS[3] is a striped counter shared by many keys
-- (stripes.go), else "0"; with KEYS[4]: ARGV[5] the caller's queue entry,
-- ARGV[6] "1" when the entry may be queued already (an earlier attempt
-- queued it), ARGV[7] the queue's TTL in ms.
-- The index holds the lock key, KEYS[1].
-- Returns the lock data (a string) of the caller's lease on success: the
-- fence and expiresAtMs are read from it (wire.DecodeGrant); {0,
-- holderExpiresAtMs, holderFence} on contention (the fence says which
-- lease the answer was about); {-3, fence} when the fence counter passed
-- the maximum (nothing is written but the counter, which only ever
-- grows); {-4} when the lock id was released or retired (its index key
-- holds a tombstone, see release_lock.lua); the SYNCGUARD_KIND error while
-- live slots of a limit hold the key (limit.go).
--
-- Safe to run twice: a second run with the lock id of the live lease on
-- KEYS[1] (a command re-sent after its reply was lost, the next attempt of
-- one lock.Acquire, or an attempt of a waiter a release handed the lock
-- to) returns that lease's lock data unchanged, same fence, instead of
-- contention; after the lease was released it returns {-4} and writes
-- nothing, so a late copy can never take the key again. ZADD NX keeps a
-- queued entry's place.
--
-- The path of a free key runs five commands (TIME, GET, SET NX, INCR,
-- SET), passes the ttl to PX as the string it came as, makes the lock data
-- with one string.format and sends it back as the reply (a table costs
-- more than a string). A busy key's lock data is not decoded: its
-- expiresAtMs and fence are found as text. The GET comes before the
-- fence, so that an attempt that finds the key busy writes nothing and
-- uses up no fence: a key's fences are consecutive, as the TypeScript
-- library's. A queued attempt marks the holder's lock data (queuedMark).
local nowMs, t = serverMs()
local queue = KEYS[4]

local existing = redis.pcall('GET', KEYS[1])
if type(existing) == 'table' then
  -- An error reply: WRONGTYPE is a limit's slots (limit.go), refused while
  -- one is live; any other error is the script's.
  if not string.find(existing.err or '', 'WRONGTYPE', 1, true) then return existing end
  lib().reclaim(KEYS[1], nowMs)
  if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply(kindMsg) end
  existing = false
end
if existing then
  -- The lock data's expiresAtMs and fence members, found as text:
  -- '"expiresAtMs":' outside a JSON string is that member, wherever a
  -- writer put it (inside a string every '"' is escaped). Anything but
  -- digits there (a float, a string, no member) is decoded instead.
  local at = string.find(existing, '"expiresAtMs":', 1, true)
  local exp = at and tonumber(string.match(existing, '^(%d+)[,}%s]', at + 14))
  if not exp then
    local decoded, corrupt = decodeLock(existing)
    if not decoded then return corrupt end
    exp = decoded.expiresAtMs
  end
  if exp > nowMs - tolMs then
    if string.find(existing, '"lockId":"' .. ARGV[1] .. '"', 1, true) then
      return existing
    end
    if queue then
      -- Entries are ordered by the time they first queued, in
      -- microseconds (no two scripts run in the same one); a release
      -- (handoff.lua) pops the head. The queue goes away on its own when nobody queues
      -- for its TTL.
      redis.call('ZADD', queue, 'NX', t[1] * 1000000 + t[2], ARGV[5])
      redis.call('PEXPIRE', queue, ARGV[7])
      -- The holder's release then looks at the queue.
      if string.sub(existing, -1) ~= queuedMark then
        redis.call('APPEND', KEYS[1], queuedMark)
      end
    end
    at = string.find(existing, '"fence":"', 1, true)
    return {0, exp, at and string.match(existing, '^%d+', at + 9) or ''}
  end
end

-- The index first, with NX: it exists when the id was released (a
-- tombstone: this is a late copy, which takes nothing) or, rarely, when
-- this id's own expired lease left it.
if not redis.call('SET', KEYS[2], KEYS[1], 'NX', 'PX', ARGV[2]) then
  if string.byte(redis.call('GET', KEYS[2]), 1) == TOMB then
    return {-4}
  end
  redis.call('SET', KEYS[2], KEYS[1], 'PX', ARGV[2])
end

local n
if ARGV[4] == '1' then
  n = lib().nextFence(KEYS[3], true, nowMs)
else
  n = redis.call('INCR', KEYS[3])
end
if n > fenceMax then
  redis.call('DEL', KEYS[2])
  return {-3, string.format('%015d', n)}
end

local data = string.format(lockFormat, ARGV[1], nowMs + ARGV[2], nowMs, ARGV[3], n)
if queue or (existing and string.sub(existing, -1) == queuedMark) then
  -- A waiter's lease (other waiters may be queued behind it), or one that
  -- takes over an expired lease somebody queued for: its release looks at
  -- the queue.
  data = data .. queuedMark
end
redis.call('SET', KEYS[1], data, 'PX', ARGV[2])
if queue and ARGV[6] == '1' then
  redis.call('ZREM', queue, ARGV[5])
end
return data
