package redisbackend

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
)

// cycle runs one Acquire+Release of key on b.
func cycle(t *testing.T, b *Backend, key string) {
	t.Helper()
	ctx := context.Background()
	l, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", key, err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatalf("Release(%s): %v", key, err)
	}
}

// TestFunctionsLoadOnDemand: on Redis 7 the cycle of a lock (and of a
// limit's slot) goes out as FCALL. The
// first call on a server without the library loads it (one FUNCTION
// LOAD); a Backend of another client then finds it loaded; after FUNCTION
// FLUSH the next call loads it again. Functions stay on throughout, and no
// script runs by EVALSHA.
func TestFunctionsLoadOnDemand(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	newB := func() *Backend {
		b, err := New(srv.Client(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := func(step string, fcalls, loads int64) {
		t.Helper()
		got := commandCalls(t, rdb)
		if got["fcall"] != fcalls || got["function|load"] != loads || got["evalsha"] != 0 || got["eval"] != 0 {
			t.Errorf("%s: fcall %d, function load %d, evalsha %d, eval %d; want %d, %d, 0, 0",
				step, got["fcall"], got["function|load"], got["evalsha"], got["eval"], fcalls, loads)
		}
		if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	a := newB()
	cycle(t, a, "k1")
	// The acquire's FCALL, not found, the load, the FCALL again; the
	// release's FCALL.
	want("first cycle", 3, 1)
	libs, err := rdb.Do(ctx, "function", "list", "libraryname", functionLib.name).Slice()
	if err != nil || len(libs) != 1 {
		t.Fatalf("FUNCTION LIST of %s = %v (%v), want one library", functionLib.name, libs, err)
	}

	cycle(t, newB(), "k2")
	want("another Backend's first cycle", 2, 0)

	// A slot of a limit is taken by a function too.
	id, _ := a.NewLockID("slot")
	l, err := a.AcquireSlot(ctx, "slot", id, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	want("a slot's cycle", 2, 0)

	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	cycle(t, a, "k3")
	want("cycle after FUNCTION FLUSH", 3, 1)
	if !a.functions.Load() {
		t.Error("functions off after a reload, want on")
	}
}

// TestFunctionsLoadRace: the library is loaded by someone else between
// the Backend's "Function not found" and its own FUNCTION LOAD (another
// instance starting at the same time); the load's "already exists" is
// success, and the FCALL goes out again.
func TestFunctionsLoadRace(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	racer := srv.Client(t)
	client := srv.Client(t)
	client.AddHook(loadFirst{racer})
	b, err := New(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, b, "k")
	got := commandCalls(t, rdb)
	if got["function|load"] != 2 || got["fcall"] != 3 || got["evalsha"] != 0 {
		t.Errorf("function load %d, fcall %d, evalsha %d; want 2 (the racer's and the Backend's), 3, 0",
			got["function|load"], got["fcall"], got["evalsha"])
	}
	if !b.functions.Load() {
		t.Error("functions off after a load that found the library there, want on")
	}
}

// loadFirst is a hook that has another client send every FUNCTION LOAD
// just before it goes out.
type loadFirst struct{ racer *redis.Client }

func (h loadFirst) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h loadFirst) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h loadFirst) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) == 3 && strings.EqualFold(cmd.Name(), "function") && a[1] == "load" {
			_ = h.racer.Do(ctx, a...).Err()
		}
		return next(ctx, cmd)
	}
}

// TestFunctionsOff: where the server cannot run functions for the
// client, the Backend turns them off after its first call and runs
// EVALSHA from then on, and the cycle works: a user whose ACL denies
// FUNCTION LOAD, one whose ACL denies FCALL, miniredis (no FCALL); and
// ReplicaAck never starts with them.
func TestFunctionsOff(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, user := range []string{"noload", "nofcall"} {
		deny := map[string]string{"noload": "-function", "nofcall": "-fcall"}[user]
		if err := rdb.Do(ctx, "acl", "setuser", user, "on", ">pw", "~*", "&*", "+@all", deny).Err(); err != nil {
			t.Fatal(err)
		}
	}
	mr := miniredis.RunT(t)
	mini := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = mini.Close() })
	for _, tc := range []struct {
		desc   string
		client redis.UniversalClient
		calls  func() map[string]int64 // commands seen by the server, or nil
	}{
		{"ACL denies FUNCTION", srv.Client(t, func(o *redis.Options) { o.Username, o.Password = "noload", "pw" }), func() map[string]int64 { return commandCalls(t, rdb) }},
		{"ACL denies FCALL", srv.Client(t, func(o *redis.Options) { o.Username, o.Password = "nofcall", "pw" }), func() map[string]int64 { return commandCalls(t, rdb) }},
		{"miniredis", mini, nil},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			b, err := New(tc.client, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !b.functions.Load() {
				t.Fatal("functions off before the first call, want on")
			}
			cycle(t, b, "k0")
			if b.functions.Load() {
				t.Error("functions on after a call the server refused, want off")
			}
			if tc.calls == nil {
				cycle(t, b, "k1")
				return
			}
			// Every script since goes out as EVALSHA.
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 2; i++ {
				cycle(t, b, "k"+strconv.Itoa(i))
			}
			got := tc.calls()
			if got["fcall"] != 0 || got["evalsha"] != 4 || got["function|load"] != 0 {
				t.Errorf("fcall %d, evalsha %d, function load %d in two cycles; want 0, 4, 0", got["fcall"], got["evalsha"], got["function|load"])
			}
		})
	}
	t.Run("ReplicaAck never uses them", func(t *testing.T) {
		ack, err := New(srv.Client(t), &Options{ReplicaAck: ReplicaAck{N: 1, Timeout: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		if ack.functions.Load() {
			t.Error("ReplicaAck: functions on, want off")
		}
	})
}

// TestFunctionError: the replies that mean the function did not run.
func TestFunctionError(t *testing.T) {
	for _, tt := range []struct {
		reply string
		want  fnResult
	}{
		{"ERR Function not found", fnNotFound},
		{"ERR unknown command 'FCALL', with args beginning with: 'syncguard_x_acquire' '3' ", fnUnsupported},
		{"ERR unknown command `fcall`, with args beginning with: `syncguard_x_acquire`, `3`, ", fnUnsupported},
		{"NOPERM User nofcall has no permissions to run the 'fcall' command", fnUnsupported},
		{"ERR unsupported command 'fcall'", fnUnsupported}, // a proxy's
		{"ERR wrong number of arguments for 'fcall' command", fnUnsupported},
		{"NOPERM User u has no permissions to access one of the keys used as arguments", fnOK},
		{"OOM command not allowed when used memory > 'maxmemory'.", fnOK},
		{"ERR user_script:12: Script attempted to access nonexistent global variable 'x'", fnOK},
	} {
		cmd := redis.NewCmd(context.Background())
		cmd.SetErr(redisError(tt.reply))
		if got := functionError(cmd.Err()); got != tt.want {
			t.Errorf("functionError(%q) = %d, want %d", tt.reply, got, tt.want)
		}
	}
	if got := functionError(context.DeadlineExceeded); got != fnOK {
		t.Errorf("functionError(a context error) = %d, want fnOK", got)
	}
}

// redisError is an error reply of the server, as go-redis reports one.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

// TestLibraryName: the library's name follows its source, so instances of
// versions with other scripts load a library of their own, and the same
// scripts always make the same name (instances of one version share it).
func TestLibraryName(t *testing.T) {
	lib := func(acquireBody string) *library {
		return newLibrary(map[string]*script{"acquire": newScript(acquireBody), "release": newScript(releaseSrc)})
	}
	a, b, other := lib(acquireSrc), lib(acquireSrc), lib(acquireSrc+"\n-- changed\n")
	if a.name != b.name {
		t.Errorf("one source, two names: %s, %s", a.name, b.name)
	}
	if other.name == a.name {
		t.Errorf("another acquire body kept the name %s", a.name)
	}
	if !strings.HasPrefix(a.src, "#!lua name="+a.name+"\n") || !strings.Contains(a.src, "'"+a.name+"_acquire'") {
		t.Errorf("library source does not declare %s and its functions", a.name)
	}
}
