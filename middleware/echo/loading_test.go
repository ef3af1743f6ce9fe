package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestLockFreeAfterLoadingRestart: a request's lock attempt takes the key,
// but its reply is lost as Redis is killed (-9), so the request is
// answered 503; Redis restarts from its AOF (fsync on every write: the lock
// is in it) and answers -LOADING for about two seconds. Once Redis serves
// again, the next request for the key must get it within about a second,
// not 409 for the rest of the 30 s TTL.
func TestLockFreeAfterLoadingRestart(t *testing.T) {
	srv := redistest.Start(t, redistest.WithAOF(), redistest.WithSlowLoad(time.Millisecond))
	srv.Pad(t, 2000)
	rdb := srv.Client(t)
	loser, loading := &redistest.ReplyLoser{}, &redistest.LoadingReplies{}
	rdb.AddHook(loser)
	rdb.AddHook(loading)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	cfg := echolock.DefaultConfig
	cfg.Backend = b
	cfg.KeyExtractor = echolock.FromParam("id")
	cfg.TTL = 30 * time.Second
	cfg.Wait = time.Second
	e := newEcho("/accounts/:id/withdraw", echolock.NewWithConfig(cfg), func(c echo.Context) error {
		return c.String(http.StatusOK, "done")
	})
	web := httptest.NewServer(e)
	t.Cleanup(web.Close)
	post := func(account string) int {
		t.Helper()
		resp, err := web.Client().Post(web.URL+"/accounts/"+account+"/withdraw", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("warm"); got != http.StatusOK { // loads the scripts
		t.Fatalf("warm-up request: status %d, want 200", got)
	}

	loser.Arm(func() { srv.Kill(t) })
	if got := post("42"); got != http.StatusServiceUnavailable {
		t.Fatalf("request during the outage: status %d, want 503", got)
	}
	if loser.Lost() != 1 {
		t.Fatalf("%d replies lost, want 1", loser.Lost())
	}
	srv.Restart(t) // returns once the data is loaded and PING answers
	serving := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		got := post("42") // waits up to cfg.Wait for the key
		if got == http.StatusOK {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("request %v after Redis served again: status %d, want 200: the lock of the lost attempt stayed behind", time.Since(serving).Round(time.Millisecond), got)
		}
	}
	t.Logf("the key served a request %v after Redis served again (%d -LOADING replies before)",
		time.Since(serving).Round(10*time.Millisecond), loading.Count())
	if loading.Count() == 0 {
		t.Error("the clean-up met no -LOADING reply: the restart loaded too fast for this test")
	}
}
