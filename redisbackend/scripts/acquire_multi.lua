-- Acquire several keys of one slot (after prelude.lua and lib.lua), all
-- or none (multi.go): acquire.lua for every key, with nothing written
-- until every key is known free.
-- KEYS: per key i, from 0: KEYS[3i+1] lock key, KEYS[3i+2] index key,
-- KEYS[3i+3] fence key. ARGV[1] ttlMs, ARGV[2] "1" when the fence keys
-- are striped counters (stripes.go), then per key ARGV[2i+3] its lockId
-- and ARGV[2i+4] the user key as the text of a JSON string.
-- Returns {1, data...}: the lock data of every key's lease, in order;
-- {0, holderExpiresAtMs, holderFence, i} when key i (from 0) is held by
-- another live lease (acquire.lua's answer, and the key); {-3, fence} when a fence counter passed the maximum (the leases
-- this run wrote are deleted); {-4, i} when key i's lock id was released
-- (its index holds a tombstone); the SYNCGUARD_KIND error while live
-- slots of a limit hold a key.
--
-- Safe to run twice: a key whose live lease has the given lock id counts
-- as taken and keeps that lease (same fence), so a copy of a run that
-- took every key returns the same leases; once they were released, the
-- tombstones make it take nothing.
local nowMs = serverMs()
local n = #KEYS / 3
local held = {}

for i = 0, n - 1 do
  local lockKey, id = KEYS[3 * i + 1], ARGV[2 * i + 3]
  local existing = redis.pcall('GET', lockKey)
  if type(existing) == 'table' then
    if not string.find(existing.err or '', 'WRONGTYPE', 1, true) then return existing end
    lib().reclaim(lockKey, nowMs)
    if redis.call('EXISTS', lockKey) == 1 then return redis.error_reply(kindMsg) end
    existing = false
  end
  if existing then
    local data, corrupt = decodeLock(existing)
    if not data then return corrupt end
    if data.expiresAtMs > nowMs - tolMs then
      if data.lockId ~= id then return {0, data.expiresAtMs, tostring(data.fence), i} end
      held[i] = existing
    end
  end
  if not held[i] then
    local index = redis.call('GET', KEYS[3 * i + 2])
    if index and string.byte(index, 1) == TOMB then return {-4, i} end
  end
  if existing and not held[i] and string.sub(existing, -1) == queuedMark then
    -- An expired lease somebody queued for: the new one's release
    -- looks at the queue.
    held[i] = false
  end
end

local out = {1}
for i = 0, n - 1 do
  local lockKey, idKey, fenceKey = KEYS[3 * i + 1], KEYS[3 * i + 2], KEYS[3 * i + 3]
  if held[i] then
    out[i + 2] = held[i]
  else
    local f
    if ARGV[2] == '1' then
      f = lib().nextFence(fenceKey, true, nowMs)
    else
      f = redis.call('INCR', fenceKey)
    end
    if f > fenceMax then
      for j = 0, i - 1 do
        if not held[j] then redis.call('DEL', KEYS[3 * j + 1], KEYS[3 * j + 2]) end
      end
      return {-3, string.format('%015d', f)}
    end
    local data = string.format(lockFormat, ARGV[2 * i + 3], nowMs + ARGV[1], nowMs, ARGV[2 * i + 4], f)
    if held[i] == false then data = data .. queuedMark end
    redis.call('SET', idKey, lockKey, 'PX', ARGV[1])
    redis.call('SET', lockKey, data, 'PX', ARGV[1])
    out[i + 2] = data
  end
end
return out
