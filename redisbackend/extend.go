package redisbackend

import (
	"context"
	"time"
)

// Extend sets the lease id to expire ttl from now by the server's clock
// and returns the new expiry. It returns a *lock.NotHeldError like
// Release.
func (b *Backend) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	const op = "extend"
	if err := checkCtx(op, ctx); err != nil {
		return time.Time{}, err
	}
	idKey, err := b.idKey(op, id)
	if err != nil {
		return time.Time{}, err
	}
	ttlMs, err := validTTL(op, ttl)
	if err != nil {
		return time.Time{}, err
	}
	v, err := b.run(ctx, b.extendCmd(idKey, id, ttlMs)).Result()
	return extendReply(ctx, op, v, err)
}

// extendCmd is the call of extend.lua for lease id: KEYS index key; ARGV
// lock id, the new ttl in ms, the tombstone ttl in ms (an expired lease's
// index becomes a tombstone).
func (b *Backend) extendCmd(idKey, id string, ttlMs int64) scriptCmd {
	return extendScript.cmd(1, idKey, id, ttlMs, b.tombArg)
}

// extendReply interprets one reply of the extend script as Extend does
// (v and err as a redis.Cmd holds them).
func extendReply(ctx context.Context, op string, v interface{}, err error) (time.Time, error) {
	if err != nil {
		return time.Time{}, mapError(ctx, op, err)
	}
	switch r := v.(type) {
	case int64:
		return time.Time{}, notHeld(op, r)
	case []interface{}:
		if len(r) == 2 {
			if exp, ok := r[1].(int64); ok && r[0] == int64(1) {
				return msTime(exp), nil
			}
		}
	}
	return time.Time{}, internal(op, "unexpected reply from the extend script")
}
