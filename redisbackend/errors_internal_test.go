package redisbackend

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// timeoutErr is a net.Error that timed out, as a read past its deadline.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// nearDeadline is a context whose deadline is a moment away and that has
// not ended yet, whenever it is asked: the instant between the socket's
// deadline and the context's timer.
type nearDeadline struct{ context.Context }

func (nearDeadline) Deadline() (time.Time, bool) { return time.Now().Add(100 * time.Microsecond), true }

// TestMapErrorAtDeadline: go-redis's read deadline is the context's, and
// its i/o timeout can arrive a moment before the context reports the
// deadline; the error still matches context.DeadlineExceeded, as every
// call ended by its deadline does.
func TestMapErrorAtDeadline(t *testing.T) {
	ctx := nearDeadline{context.Background()}
	ioTimeout := &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}
	err := mapError(ctx, "acquire", ioTimeout)
	if lock.CodeOf(err) != lock.CodeNetworkTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("mapError at the deadline = %v, want NetworkTimeout matching context.DeadlineExceeded", err)
	}
	far, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	defer cancel2()
	if err := mapError(far, "acquire", ioTimeout); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("mapError an hour before the deadline = %v, want no context.DeadlineExceeded (go-redis's own timeout)", err)
	}
}
