package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestProbeSelfBusy feeds the probe busy acquire replies: one while the key
// is held under the command's own lock id (granted since the command was
// sent), which it must report, and the ordinary kinds, which it must not.
func TestProbeSelfBusy(t *testing.T) {
	srv := redistest.Start(t)
	obs := srv.Client(t)
	ctx := context.Background()
	hist := NewHistory()
	var stats probeStats
	p := &probe{worker: 1, prefix: "chaos:", observer: obs, hist: hist, stats: &stats}

	own, other := lockdriver.NewLockID(), lockdriver.NewLockID()
	// busy is an acquire command by lock id id answered "locked by a
	// lease expiring at exp".
	busy := func(id string, exp int64) *redis.Cmd {
		cmd := redis.NewCmd(ctx, "evalsha", "0123", 3, "chaos:k", "chaos:id:"+id, "chaos:fence:chaos:k", id, 500)
		cmd.SetVal([]interface{}{int64(0), exp, "000000000000007"})
		return cmd
	}
	// busyFence is busy naming the holder's fence too.
	busyFence := func(id string, exp int64, fence string) *redis.Cmd {
		cmd := busy(id, exp)
		cmd.SetVal([]interface{}{int64(0), exp, fence})
		return cmd
	}
	// hold stores a lease of id acquired at acquired, and returns its expiry.
	hold := func(id string, acquired time.Time) int64 {
		exp := acquired.Add(time.Second).UnixMilli()
		v := fmt.Sprintf(`{"lockId":%q,"expiresAtMs":%d,"acquiredAtMs":%d,"key":"k","fence":"000000000000007"}`,
			id, exp, acquired.UnixMilli())
		if err := obs.Set(ctx, "chaos:k", v, time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		return exp
	}

	sent := time.Now()
	exp := hold(other, sent)
	p.checkBusy(busy(own, exp), sent) // held by someone else: true contention
	exp = hold(own, sent.Add(-time.Minute))
	p.checkBusy(busy(own, exp), sent) // own id, but granted before the command was sent
	exp = hold(own, time.Now())
	p.checkBusy(busy(own, exp-1), sent) // own id taking the key just after a busy answer about another lease
	exp = hold(own, time.Now())
	// own id handed the key (from the queue the busy attempt joined) by a
	// holder granted and released in the same millisecond: same expiry,
	// but the answer named the earlier holder's fence
	p.checkBusy(busyFence(own, exp, "000000000000006"), sent)
	obs.Del(ctx, "chaos:k")
	p.checkBusy(busy(own, exp), sent) // free by now
	if vs := hist.Found(); len(vs) != 0 {
		t.Fatalf("violations %v, want none", vs)
	}

	exp = hold(own, time.Now())
	p.checkBusy(busy(own, exp), sent)
	if vs := hist.Found(); len(vs) != 1 || vs[0].Check != KindSelfBusy {
		t.Fatalf("violations %v, want one %q", vs, KindSelfBusy)
	}
	if n := stats.busy.Load(); n != 6 {
		t.Errorf("busy replies checked: %d, want 6", n)
	}
}

// TestProbeLosesReplies checks the client half of the lost-reply fault:
// the script runs, its reply is lost, go-redis (default options) sends it
// again, up to MaxRetries times.
func TestProbeLosesReplies(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var stats probeStats
	p := &probe{prefix: "chaos:", observer: srv.Client(t), hist: NewHistory(), stats: &stats}
	rdb := srv.Client(t)
	rdb.AddHook(p)
	incr := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	if err := incr.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}

	p.dropOneIn.Store(1) // every reply
	if err := incr.Run(ctx, rdb, []string{"n"}).Err(); err == nil {
		t.Fatal("script reply arrived with every reply lost")
	}
	p.dropOneIn.Store(0)
	n, err := rdb.Get(ctx, "n").Int()
	if err != nil {
		t.Fatal(err)
	}
	// go-redis's default MaxRetries is 3: four runs.
	if n != 4 || stats.dropped.Load() != 4 || stats.written.Load() != 4 {
		t.Errorf("script ran %d times, %d replies dropped, %d writes; want 4 each", n, stats.dropped.Load(), stats.written.Load())
	}
}
