-- spec-minimal acquire (bench only): the least seed 000's Redis backend
-- specification requires of an acquisition, in its wire format.
-- KEYS[1] lock key "<prefix>:<key>", KEYS[2] index key "<prefix>:id:<lockId>",
-- KEYS[3] fence key "<prefix>:fence:<prefix>:<key>" (two-step derivation)
-- ARGV[1] lockId, ARGV[2] ttlMs, ARGV[3] user key (the lock data's "key")
-- Returns {1, fence, expiresAtMs} on success, 0 on contention.
--
-- Server time (TIME, ADR-005); a live lock (isLive with the fixed 1000 ms
-- tolerance) is contention; otherwise INCR the fence counter (never
-- expired or deleted), format it as 15 digits, SET the lock JSON
-- (cjson.encode, as the spec requires) and the index (the lock key), both
-- PX ttl. Left out, as no requirement asks for them: a fence maximum
-- check in Lua (the backend checks the returned fence), deleting a stale
-- index (unreachable: a key Redis still returns has not reached its PX
-- expiry, so it is live), the tolerance and storage key as arguments
-- (a constant, and KEYS[1]).
local t = redis.call('TIME')
local nowMs = t[1] * 1000 + math.floor(t[2] / 1000)
local existing = redis.call('GET', KEYS[1])
if existing then
  if cjson.decode(existing).expiresAtMs > nowMs - 1000 then
    return 0
  end
end
local fence = string.format('%015d', redis.call('INCR', KEYS[3]))
local ttlMs = tonumber(ARGV[2])
local expiresAtMs = nowMs + ttlMs
redis.call('SET', KEYS[1], cjson.encode({
  lockId = ARGV[1],
  expiresAtMs = expiresAtMs,
  acquiredAtMs = nowMs,
  key = ARGV[3],
  fence = fence,
}), 'PX', ttlMs)
redis.call('SET', KEYS[2], KEYS[1], 'PX', ttlMs)
return {1, fence, expiresAtMs}
