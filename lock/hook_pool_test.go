package lock_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// keptOpChild is the environment variable that makes TestHookKeepingOpIsCaught's
// child process run the faulty hook.
const keptOpChild = "SYNCGUARD_TEST_KEPT_OP_CHILD"

// TestHookKeepingOpIsCaught: the Ops of hooked calls are pooled, and a hook
// must not keep one after its OpFunc returns. A hook that does is not a
// silent bug: the race detector (make test runs with -race) reports it. The
// test runs such a hook in a child process of this test binary and expects
// the report there.
func TestHookKeepingOpIsCaught(t *testing.T) {
	if os.Getenv(keptOpChild) == "1" {
		runKeptOpHook()
		return
	}
	if !raceEnabled {
		t.Skip("the race detector is off (go test without -race): nothing would catch the kept Op; make test runs with -race")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHookKeepingOpIsCaught$", "-test.count=1")
	cmd.Env = append(os.Environ(), keptOpChild+"=1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "WARNING: DATA RACE") {
		t.Fatalf("a hook that keeps its Op was not reported by the race detector; child output:\n%s", out)
	}
}

// runKeptOpHook calls a hooked backend whose hook hands its Op to another
// goroutine, which reads it after the call returned, while the call's Op
// goes back to the pool.
func runKeptOpHook() {
	kept := make(chan *lock.Op, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for op := range kept {
			time.Sleep(time.Millisecond)
			_ = op.Key // after the call returned: the pool has cleared or reused op
		}
	}()
	b := lock.WithHooks(newFake(), hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			err := next(ctx, op)
			kept <- op // the mistake: op outlives the call
			return err
		}
	}))
	ctx := context.Background()
	for i := 0; i < 8; i++ {
		_, _ = b.IsLocked(ctx, "k")
	}
	close(kept)
	<-done
}
