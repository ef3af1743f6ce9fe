package redisbackend

// Tests of the lock's hot scripts: the commands a cycle runs, and the
// behaviour each shortcut of theirs keeps (bench/scriptcost measures what
// they cost).

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestScriptConstants: the prelude's constants are the contract's.
func TestScriptConstants(t *testing.T) {
	for name, want := range map[string]string{
		"tolMs":    strconv.FormatInt(wire.TimeToleranceMs, 10),
		"fenceMax": strings.TrimLeft(string(wire.FenceMax), "0"),
	} {
		m := regexp.MustCompile(`(?m)^local ` + name + ` = (\d+)$`).FindStringSubmatch(preludeLua(t))
		if m == nil || m[1] != want {
			t.Errorf("prelude.lua: %s = %v, want %s", name, m, want)
		}
	}
}

// commandCalls returns the calls of every command since the last CONFIG
// RESETSTAT.
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	calls := map[string]int64{}
	for _, line := range strings.Split(rdb.Info(context.Background(), "commandstats").Val(), "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(rest, ":")
		v, _, _ := strings.Cut(strings.TrimPrefix(fields, "calls="), ",")
		calls[name], _ = strconv.ParseInt(v, 10, 64)
	}
	return calls
}

// ownServerBackend is a Backend with default options on a redis-server of
// the test's own (its command statistics count only the test's calls),
// and a client of that server for the test to look with.
func ownServerBackend(t *testing.T) (*redis.Client, *Backend) {
	t.Helper()
	srv := redistest.Start(t)
	b, err := New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv.Client(t), b
}

// TestCycleCommands: an acquire+release of a free key nobody waits for is
// two EVALSHAs that run TIME, GET, SET NX, INCR, SET and SET GET, GET,
// DEL: the release
// swaps the index for its tombstone in one command, reads no clock, looks
// at no queue and publishes nothing.
func TestCycleCommands(t *testing.T) {
	ctx := context.Background()
	checkCycleCommands(t, func(b *Backend, key string) error {
		l, err := b.Acquire(ctx, key, time.Minute)
		if err != nil {
			return err
		}
		return b.Release(ctx, l.ID)
	}, map[string]int64{"time": 1, "get": 2, "set": 3, "incr": 1, "del": 1})
}

// TestRWCycleCommands: a reader's or a writer's cycle on a free key nobody
// waits for runs TIME, EXISTS (of the set, the queue and the index at
// once), INCR, ZADD, PEXPIRE, SET and SET GET, ZREM, EXISTS: no GET of
// the index before the key is known busy, no clock on release (the index
// expires with its holder).
func TestRWCycleCommands(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []rwlock.Mode{rwlock.ModeRead, rwlock.ModeWrite} {
		checkCycleCommands(t, func(b *Backend, key string) error {
			id, err := b.NewLockID(key)
			if err != nil {
				return err
			}
			l, err := b.AcquireRW(ctx, key, id, mode, time.Minute)
			if err != nil {
				return err
			}
			return b.Release(ctx, l.ID)
		}, map[string]int64{"time": 1, "exists": 2, "incr": 1, "zadd": 1, "pexpire": 1, "set": 2, "zrem": 1})
	}
}

// checkCycleCommands runs cycle on 50 new keys against a server of its own
// (after one cycle that loads the scripts) and checks that they ran two
// EVALSHAs and perCycle's commands each, and nothing else.
func checkCycleCommands(t *testing.T, cycle func(b *Backend, key string) error, perCycle map[string]int64) {
	t.Helper()
	rdb, b := ownServerBackend(t)
	ctx := context.Background()
	if err := cycle(b, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		if err := cycle(b, "k"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	got := commandCalls(t, rdb)
	delete(got, "info")
	delete(got, "config|resetstat")
	want := map[string]int64{"evalsha": 2 * n}
	for name, c := range perCycle {
		want[name] = c * n
	}
	for name, c := range want {
		if got[name] != c {
			t.Errorf("%s: %d calls, want %d", name, got[name], c)
		}
	}
	for name, c := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %d calls, want none", name, c)
		}
	}
}

// TestResentAcquireAfterReleaseTakesNothing: the acquire checks the index
// with SET NX instead of a GET; a copy of an acquisition that arrives
// after its lease was released still finds the tombstone, takes nothing
// and leaves the fence counter alone.
func TestResentAcquireAfterReleaseTakesNothing(t *testing.T) {
	rdb, b := ownServerBackend(t)
	ctx := context.Background()
	id, _ := b.NewLockID("k")
	l, err := b.AcquireID(ctx, "k", id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.AcquireID(ctx, "k", id, time.Minute)
	if err != nil || again != l {
		t.Fatalf("a copy while held = %+v, %v; want the same lease %+v", again, err, l)
	}
	if err := b.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireID(ctx, "k", id, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("a copy after the release: %v, want ErrNotHeld", err)
	}
	if n := rdb.Exists(ctx, "syncguard:k").Val(); n != 0 {
		t.Error("a copy after the release took the key")
	}
	if v := rdb.Get(ctx, "syncguard:fence:syncguard:k").Val(); v != "1" {
		t.Errorf("fence counter = %s after the refused copy, want 1", v)
	}
	if v := rdb.Get(ctx, "syncguard:id:"+id).Val(); !strings.HasPrefix(v, "\x001:") {
		t.Errorf("index after the refused copy = %q, want the release's tombstone", v)
	}
	// An id released before it was ever granted is retired too.
	id2, _ := b.NewLockID("k2")
	if err := b.Release(ctx, id2); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("release of a never-granted id: %v", err)
	}
	if _, err := b.AcquireID(ctx, "k2", id2, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("acquire of a retired id: %v, want ErrNotHeld", err)
	}
	if n := rdb.Exists(ctx, "syncguard:k2", "syncguard:fence:syncguard:k2").Val(); n != 0 {
		t.Errorf("the retired id's acquire wrote %d keys", n)
	}
	if l, err := b.Acquire(ctx, "k2", time.Minute); err != nil {
		t.Errorf("a new acquisition after the refused copy: %v", err)
	} else if err := b.Release(ctx, l.ID); err != nil {
		t.Error(err)
	}
}

// TestReleaseFindsOwnershipInAnyOrder: the release finds the lease's id in
// lock data written in another member order (as the TypeScript library's
// cjson may write it), or with spaces; a lock of another id whose user key
// holds the id's text is not the lease's; data that is not a lock is the
// corrupt error, and stays.
func TestReleaseFindsOwnershipInAnyOrder(t *testing.T) {
	rdb, b := ownServerBackend(t)
	ctx := context.Background()
	const id = "AbCdEfGhIjKlMnOpQrStUv"
	const other = "ZyXwVuTsRqPoNmLkJiHgFe"
	exp := strconv.FormatInt(time.Now().UnixMilli()+60000, 10)
	for _, tc := range []struct {
		desc, value string
		want        error // nil: released
	}{
		{"cjson order", `{"fence":"000000000000041","key":"orders:7","lockId":"` + id + `","acquiredAtMs":1,"expiresAtMs":` + exp + `}`, nil},
		{"spaces", `{ "lockId" : "` + id + `", "expiresAtMs": ` + exp + `, "acquiredAtMs": 1, "key": "k", "fence": "000000000000041" }`, nil},
		{"another id, ours in the key", `{"lockId":"` + other + `","expiresAtMs":` + exp + `,"acquiredAtMs":1,"key":"\"lockId\":\"` + id + `\"","fence":"000000000000041"}`, lock.ErrNotHeld},
		{"not a lock", `{"lockId":7}`, errCorrupt},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			rdb.Set(ctx, "syncguard:k", tc.value, time.Minute)
			rdb.Set(ctx, "syncguard:id:"+id, "syncguard:k", time.Minute)
			err := b.Release(ctx, id)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Release = %v, want released", err)
			case tc.want == errCorrupt:
				var le *lock.Error
				if !errors.As(err, &le) || le.Code != lock.CodeInternal {
					t.Fatalf("Release = %v, want Internal", err)
				}
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("Release = %v, want %v", err, tc.want)
			}
			left := rdb.Exists(ctx, "syncguard:k").Val()
			if (tc.want == nil) != (left == 0) {
				t.Errorf("lock key left: %d", left)
			}
			rdb.Del(ctx, "syncguard:k", "syncguard:id:"+id)
		})
	}
}

var errCorrupt = errors.New("corrupt")

// TestMarkedReleaseHandsOff: the release of a lease nobody queued for
// does not look at the queue; one somebody queued for (marked, also after
// an Extend) hands the lock to the waiter, and the waiter's lease is
// marked for the next one.
func TestMarkedReleaseHandsOff(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	holder := newQueueBackend(t, srv.Client(t), Options{})
	waiter := newQueueBackend(t, srv.Client(t), Options{Prefix: holder.prefix})
	ctx := context.Background()
	l, res := holdAndQueue(t, rdb, holder, waiter, "k", 1)
	lockKey := holder.prefix + ":k"
	if v := rdb.Get(ctx, lockKey).Val(); !strings.HasSuffix(v, "} ") {
		t.Fatalf("lock data %q after a waiter queued: want it marked (a trailing space)", v)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(rdb.Get(ctx, lockKey).Val()), &data); err != nil || len(data) != 5 {
		t.Fatalf("marked lock data is not the 5-member JSON: %v", err)
	}
	if _, err := holder.Extend(ctx, l.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, lockKey).Val(); !strings.HasSuffix(v, "} ") {
		t.Fatalf("lock data %q after Extend: want it still marked", v)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	releaseExpectGrant(t, holder, l.ID, res, "a marked release did not hand off")
	if c := commandCalls(t, rdb)["zpopmin"]; c != 1 {
		t.Errorf("zpopmin calls = %d, want 1", c)
	}
	if v := rdb.Get(ctx, lockKey).Val(); !strings.HasSuffix(v, "} ") {
		t.Errorf("the waiter's lease %q: want it marked", v)
	}
}

// TestJSONTextIsCJSON: the user key the acquire puts into the lock data
// (wire.JSONText) reads back as the key in cjson (the scripts', the TypeScript
// library's) and in encoding/json, whatever its bytes.
func TestJSONTextIsCJSON(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	keys := []string{"", "plain:key", `quote"back\slash/`, "caf\u00e9 \U0001F512 \u2028\u2029", `\u0041`}
	for c := 0; c < 0x80; c++ {
		keys = append(keys, "a"+string(rune(c))+"b")
	}
	decode := redis.NewScript(`return cjson.decode('"' .. ARGV[1] .. '"') == ARGV[2] and 1 or 0`)
	for _, k := range keys {
		text := wire.JSONText(k)
		if ok, err := decode.Run(ctx, rdb, nil, text, k).Int(); err != nil || ok != 1 {
			t.Errorf("cjson reads %q as another key than %q (%v)", text, k, err)
		}
		var back string
		if err := json.Unmarshal([]byte(`"`+text+`"`), &back); err != nil || back != k {
			t.Errorf("encoding/json reads %q as %q, %v; want %q", text, back, err, k)
		}
	}
	if s := "no:escapes/here"; wire.JSONText(s) != s {
		t.Errorf("wire.JSONText(%q) = %q", s, wire.JSONText(s))
	}
}

// TestReleaseSwapsIndexForTombstone: the release writes its tombstone
// with the read of the index (SET GET); every outcome but a release then
// leaves the index as that outcome needs it: the first release's
// tombstone for a later call (whose copies still read "released"), the
// lock key for data that is not a lock, the tombstone of a 0 for another
// lease's lock.
func TestReleaseSwapsIndexForTombstone(t *testing.T) {
	rdb, b := ownServerBackend(t)
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	idKey := b.indexKey(l.ID)
	first := b.releaseCmd(idKey, l.ID, ownWaiters{})
	if n, err := b.run(ctx, first).Int64(); err != nil || n != 1 {
		t.Fatalf("release = %v, %v", n, err)
	}
	tomb := rdb.Get(ctx, idKey).Val()
	var nhe *lockdriver.NotHeldError
	if err := b.Release(ctx, l.ID); !errors.As(err, &nhe) || nhe.Reason != lockdriver.NotHeldNotFound {
		t.Fatalf("a second Release = %v, want not held (not found)", err)
	}
	if v := rdb.Get(ctx, idKey).Val(); v != tomb {
		t.Errorf("index after a second Release = %q, want the first release's tombstone %q", v, tomb)
	}
	if n, err := b.run(ctx, first).Int64(); err != nil || n != 1 {
		t.Errorf("a copy of the first release after a second Release = %v, %v; want 1", n, err)
	}

	// Not lock data at the lock key: an Internal error, the index as it was.
	l2, err := b.Acquire(ctx, "k2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, "syncguard:k2", "garbage{", time.Minute)
	if err := b.Release(ctx, l2.ID); lock.CodeOf(err) != lock.CodeInternal {
		t.Errorf("release of corrupt lock data = %v, want Internal", err)
	}
	if v := rdb.Get(ctx, b.indexKey(l2.ID)).Val(); v != "syncguard:k2" {
		t.Errorf("index after the refused release = %q, want the lock key", v)
	}

	// Another lease's lock (the index outlived its own): not the owner,
	// nothing deleted, and the id is retired.
	l3, err := b.Acquire(ctx, "k3", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(rdb.Get(ctx, "syncguard:k3").Val(), l3.ID, "BBBBBBBBBBBBBBBBBBBBBB", 1)
	rdb.Set(ctx, "syncguard:k3", other, time.Minute)
	if err := b.Release(ctx, l3.ID); !errors.As(err, &nhe) || nhe.Reason != lockdriver.NotHeldNotOwner {
		t.Errorf("release of another lease's lock = %v, want not held (not owner)", err)
	}
	if v := rdb.Get(ctx, "syncguard:k3").Val(); v != other {
		t.Errorf("the other lease's lock data = %q, want it untouched", v)
	}
	if v := rdb.Get(ctx, b.indexKey(l3.ID)).Val(); !strings.HasPrefix(v, "\x000:") {
		t.Errorf("index after that release = %q, want the tombstone of a 0 (the id retired, a copy reads 0)", v)
	}
}
