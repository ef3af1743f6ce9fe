package redisbackend_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// idAlphabet is the base64url alphabet lock ids are drawn from.
const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// oneCharOff returns every well-formed id that differs from id in exactly
// one position (22 x 63 ids), the closest guesses an attacker can make.
func oneCharOff(id string) []string {
	var out []string
	for i := 0; i < len(id); i++ {
		for _, c := range []byte(idAlphabet) {
			if c == id[i] {
				continue
			}
			b := []byte(id)
			b[i] = c
			out = append(out, string(b))
		}
	}
	return out
}

// TestHostileForgedID checks that no forged or guessed lock id releases or
// extends a lease: random well-formed ids and every id one character away
// from the real one get ErrNotHeld, and the holder's lease is untouched
// (same fence, same id, same expiry) and still releasable by its holder.
func TestHostileForgedID(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	b := newBackend(t, rdb, strings.TrimSuffix(redistest.Prefix(t), ":"))
	ctx := context.Background()

	l, err := b.Acquire(ctx, "victim", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	before, err := b.LookupKey(ctx, "victim")
	if err != nil || before == nil {
		t.Fatalf("LookupKey = %v, %v; want the victim's lease", before, err)
	}

	guesses := oneCharOff(l.ID)
	for i := 0; i < 200; i++ {
		guesses = append(guesses, lockdriver.NewLockID())
	}
	for _, id := range guesses {
		if id == l.ID {
			t.Fatalf("a fresh lock id equals the victim's: ids are not random")
		}
		if err := b.Release(ctx, id); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Release(forged id) = %v, want ErrNotHeld", err)
		}
		if exp, err := b.Extend(ctx, id, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Extend(forged id) = %v, %v; want ErrNotHeld", exp, err)
		}
		if info, err := b.LookupID(ctx, id); info != nil || err != nil {
			t.Fatalf("LookupID(forged id) = %+v, %v; want nil, nil", info, err)
		}
	}

	after, err := b.LookupKey(ctx, "victim")
	if err != nil || after == nil {
		t.Fatalf("LookupKey after forgeries = %v, %v; want the victim's lease", after, err)
	}
	if *after != *before {
		t.Errorf("lease after %d forged releases/extends = %+v, want unchanged %+v", len(guesses), *after, *before)
	}
	if after.IDHash != lockdriver.HashKey(l.ID) || after.Fence != l.Fence {
		t.Errorf("lease id hash, fence = %s, %s; want the holder's %s, %s", after.IDHash, after.Fence, lockdriver.HashKey(l.ID), l.Fence)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Errorf("holder's Release after forgeries = %v, want nil", err)
	}
}

// TestHostileOOM runs Acquire on a Redis at maxmemory with noeviction.
//
// What Redis 7 does: EVAL/EVALSHA of a script without flags is not refused
// up front; the OOM check runs at the script's first write command (our
// INCR of the fence counter) and only while the script has written nothing
// yet. So the script dies at INCR with "OOM command not allowed", before any
// write: no fence increment, no lock key, no index key. Once a write went
// through, later writes of the same script are not refused, so the script
// can never stop half-way on OOM. The test asserts the observable result:
// a ServiceUnavailable error that says "memory", and not a single key
// written; after memory is freed the next grant gets fence 1. An Acquire
// of a held key at maxmemory writes nothing, so it is not refused: it
// returns ErrLocked.
func TestHostileOOM(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--maxmemory-policy", "noeviction"))
	rdb := srv.Client(t)
	ctx := context.Background()

	// Fill 4 MB, then set maxmemory to 1 MB: memory stays well over the
	// limit whatever the size of a command's own buffers (filling up to
	// the limit leaves used memory hovering at it, and a small script can
	// slip under).
	val := strings.Repeat("x", 64<<10)
	var fill []string
	for i := 0; i < 64; i++ {
		fill = append(fill, fmt.Sprintf("fill:%d", i))
	}
	overfill := func() {
		t.Helper()
		for _, k := range fill {
			if err := rdb.Set(ctx, k, val, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rdb.ConfigSet(ctx, "maxmemory", "1mb").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Set(ctx, "probe", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
			t.Fatalf("SET at maxmemory = %v, want an OOM error", err)
		}
	}
	overfill()

	b := newBackend(t, rdb, "oom")
	_, err := b.Acquire(ctx, "k", time.Minute)
	if code := lock.CodeOf(err); code != lock.CodeServiceUnavailable {
		t.Fatalf("Acquire at maxmemory: code %q (err %v), want %q", code, err, lock.CodeServiceUnavailable)
	}
	if !strings.Contains(err.Error(), "memory") {
		t.Errorf("Acquire at maxmemory: %q, want a message about memory", err)
	}

	// Nothing written: not the lock, not an index, not the fence counter.
	keys, err := rdb.Keys(ctx, "oom:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys after the refused Acquire = %q, want none (no half-written lock)", keys)
	}

	// Free memory: the key is acquirable and its first fence is 1, so the
	// refused script never incremented the counter.
	if err := rdb.Del(ctx, fill...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after freeing memory: %v", err)
	}
	if l.Fence != "000000000000001" {
		t.Errorf("first fence after the refused Acquire = %s, want 000000000000001", l.Fence)
	}
	if n, err := rdb.Exists(ctx, "oom:k", "oom:id:"+l.ID, "oom:fence:oom:k").Result(); err != nil || n != 3 {
		t.Errorf("lock, index and fence keys present = %d (%v), want 3", n, err)
	}
	// A held key at maxmemory: the script finds it busy and writes
	// nothing, so Redis lets it run to its answer, ErrLocked.
	overfill()
	if _, err := b.Acquire(ctx, "k", time.Minute); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("Acquire of a held key at maxmemory: %v, want ErrLocked", err)
	}
}

// TestHostileNoRawKeyInErrors checks that failing calls never put the raw
// key or lock id in err.Error() (nor %v / %+v): invalid input, corrupt data
// at the lock key, and a server that is down.
func TestHostileNoRawKeyInErrors(t *testing.T) {
	t.Parallel()
	const secret = "customer-4711@example.com"
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) {
		o.MaxRetries = -1
		o.DialTimeout = 300 * time.Millisecond
	})
	b := newBackend(t, rdb, "leak")
	ctx := context.Background()
	key := "user:" + secret
	secretID := lockdriver.NewLockID()

	check := func(desc string, err error, raw ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: err = nil, want a failure", desc)
			return
		}
		for _, f := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err)} {
			for _, r := range raw {
				if strings.Contains(f, r) {
					t.Errorf("%s: error %q contains the raw value %q", desc, f, r)
				}
			}
		}
	}

	// Invalid input.
	_, err := b.Acquire(ctx, key, 0)
	check("Acquire, ttl 0", err, secret)
	_, err = b.Acquire(ctx, key+strings.Repeat("z", 600), time.Minute)
	check("Acquire, key too long", err, secret)
	_, err = b.Acquire(ctx, "id:"+secret, time.Minute)
	check("Acquire, reserved key", err, secret)
	_, err = b.Acquire(ctx, "fence:"+secret, time.Minute)
	check("Acquire, reserved fence key", err, secret)
	_, err = b.Extend(ctx, secretID, 0)
	check("Extend, ttl 0", err, secretID)
	check("Release, malformed id", b.Release(ctx, secret), secret)
	_, err = b.Extend(ctx, "x"+secretID, time.Minute)
	check("Extend, malformed id", err, secretID)
	_, err = b.LookupID(ctx, secretID+"!")
	check("LookupID, malformed id", err, secretID)

	// Corrupt data at the lock key.
	if err := rdb.Set(ctx, "leak:"+key, "not json "+secret, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, key, time.Minute)
	check("Acquire, corrupt lock data", err, secret)
	_, err = b.LookupKey(ctx, key)
	check("LookupKey, corrupt lock data", err, secret)
	if err := rdb.Set(ctx, "leak:"+key, `{"lockId":"`+secretID+`","expiresAtMs":"soon","acquiredAtMs":1,"key":"`+key+`","fence":"1"}`, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = b.LookupKey(ctx, key)
	check("LookupKey, wrong-typed lock data", err, secret, secretID)
	_, err = b.Acquire(ctx, key, time.Minute)
	check("Acquire, wrong-typed lock data", err, secret, secretID)
	if err := rdb.Set(ctx, "leak:id:"+secretID, "leak:"+key, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = b.LookupID(ctx, secretID)
	check("LookupID, corrupt lock data", err, secret, secretID)
	if err := rdb.Del(ctx, "leak:"+key, "leak:id:"+secretID).Err(); err != nil {
		t.Fatal(err)
	}
	// Wrong type at the lock key.
	if err := rdb.HSet(ctx, "leak:"+key, "f", secret).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = b.Acquire(ctx, key, time.Minute)
	check("Acquire, hash at the lock key", err, secret)
	_, err = b.IsLocked(ctx, key)
	check("IsLocked, hash at the lock key", err, secret)

	// Server down.
	l, err := b.Acquire(ctx, "user:other-"+secret, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	_, err = b.Acquire(ctx, key, time.Minute)
	check("Acquire, server down", err, secret)
	_, err = b.IsLocked(ctx, key)
	check("IsLocked, server down", err, secret)
	_, err = b.LookupKey(ctx, key)
	check("LookupKey, server down", err, secret)
	check("Release, server down", b.Release(ctx, l.ID), l.ID, secret)
	_, err = b.Extend(ctx, l.ID, time.Minute)
	check("Extend, server down", err, l.ID, secret)
	_, err = b.LookupID(ctx, l.ID)
	check("LookupID, server down", err, l.ID, secret)
}
