-- Prelude: the first file of every script (scripts.go sends each script as
-- the plain concatenation of its files): the contract's constants, the
-- server's clock, lock-data decoding and the tombstone format, written
-- once. Local values only (Redis forbids globals). A local function is a
-- closure made on every run of the script, so the prelude keeps to the
-- three helpers nearly every script calls; lib.lua holds the rest.

-- Constants of the contract (lock.TimeToleranceMs and lock.FenceMax;
-- TestScriptConstants checks them): a lock is live until its expiresAtMs
-- plus tolMs (the specification's predicate; Redis removes its keys at
-- expiresAtMs, PX), and no fence above fenceMax is ever granted. A slot
-- of a limit is live until its expiresAtMs exactly, by the server's
-- clock that wrote it: the tolerance is for clocks that disagree, and
-- added to a slot it would make a rate window (grpclock.NewLimiter's) a
-- second longer than asked, and its pushback false.
local tolMs = 1000
local fenceMax = 900000000000000

-- lockFormat: the lock data (JSON {lockId, expiresAtMs, acquiredAtMs, key,
-- fence}), for string.format(lockFormat, lockId, expiresAtMs, acquiredAtMs,
-- key, fence) with the key's text as a JSON string holds it (escaped,
-- without quotes: wire.JSONText, or lib().jsonText) and the fence a number
-- or digits. The lock id (validated by the client: [A-Za-z0-9_-]{22})
-- needs no escaping. One string.format makes the whole value: cheaper than
-- cjson.encode of a table, or than concatenating formatted parts.
local lockFormat = '{"lockId":"%s","expiresAtMs":%d,"acquiredAtMs":%d,"key":"%s","fence":"%015d"}'

-- queuedMark: the lock data of a lease whose key someone queued for
-- (queue.go) ends with it, one space (JSON allows trailing whitespace:
-- cjson, JSON.parse and encoding/json read the same data), so that its
-- release looks at the queue (handoff.lua) and the release of a lease
-- nobody queued for does not. acquire.lua appends it when an attempt
-- queues (APPEND keeps the TTL) and writes it on a waiter's lease, and so
-- does handoff.lua on a lease it hands off; extend.lua keeps it.
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
-- resend window after the lease ended (release_lock.lua, nonce.go), a
-- tombstone "\0<result>:<nonce>"; or, for a slot of a limit, "\1..."
-- (lib().index), or for a holder of a read-write lock "\2..." (rw.lua).
-- No first byte of these starts a key name this library writes:
-- string.byte(v, 1) is TOMB, SLOT, RW, or another (a lock key).
local TOMB, SLOT, RW = 0, 1, 2

-- wantRW: whether this run needs the helpers of read-write locks (rw.lua
-- makes them only then: a closure costs every run that makes it). A
-- script that reads a lease's index first (index_swap.lua, index_read.lua,
-- index_get.lua) sets it from what the index holds.
local wantRW = true

-- tombstone: the tombstone of a lease that ended with result (a string,
-- '1', '-1' or '-2': no number to format) for the call nonce.
local function tombstone(result, nonce)
  return '\0' .. result .. ':' .. nonce
end

-- Concurrency limits (limit.go). The lock key of a limit is a sorted set
-- of its slots, lock id -> expiresAtMs; a slot's index key holds
-- lib().index(...) ("\1" first: neither a key name nor a tombstone) instead
-- of the lock key. A key is a lock (a string), a limit or a read-write
-- lock (sorted sets, rw.lua), never two at once: the other kinds' scripts
-- answer the kind error while it is live, redis.error_reply(kindMsg).
local kindMsg = 'SYNCGUARD_KIND the key is held as one kind (a lock, a concurrency limit or a read-write lock) and asked for as another'
