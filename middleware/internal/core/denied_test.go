package core

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// deniedBackend refuses every acquisition as Redis refuses a command its
// user's ACL rule does not allow, and counts the attempts.
type deniedBackend struct {
	nopBackend
	calls atomic.Int32
}

func (b *deniedBackend) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	b.calls.Add(1)
	return lock.Lease{}, &lock.Error{Code: lock.CodeAuthFailed, Op: "acquire", Msg: "permission denied"}
}

// TestDeniedAnsweredOnce: a backend that refuses the server's permissions
// is tried once per request, even with a wait, logged once, and answered
// as the server error it is: 500, lock misconfigured (gRPC: Internal).
func TestDeniedAnsweredOnce(t *testing.T) {
	b := &deniedBackend{}
	g, err := newFrom(b, Config{Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx := withLog(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)))
	start := time.Now()
	ran, err := g.Run(ctx, "order:1", func(context.Context) error { return nil })
	if ran || lock.CodeOf(err) != lock.CodeAuthFailed {
		t.Fatalf("Run = %v, %v; want not run, AuthFailed", ran, err)
	}
	if n := b.calls.Load(); n != 1 || time.Since(start) > 2*time.Second {
		t.Errorf("%d acquisitions in %v, want 1 at once: a permission error is not retried", n, time.Since(start))
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "docs/acl.md") {
		t.Errorf("log:\n%s\nwant one error line naming docs/acl.md", logs.String())
	}
	p := guard.ErrorProblem(err)
	if p.Status != http.StatusInternalServerError || p.Type != guard.TypeMisconfigured {
		t.Errorf("answer %d %s, want 500 %s", p.Status, p.Type, guard.TypeMisconfigured)
	}
}
