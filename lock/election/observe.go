package election

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// observePoll is how often Observe looks at the key.
const observePoll = 500 * time.Millisecond

// Observe reports every change of key's leader on the returned channel:
// first the current leader (a zero Leader when none), then each new term,
// and a zero Leader when a term ends with no successor. The channel is
// closed when ctx ends.
func Observe(ctx context.Context, b lock.Backend, key string) (<-chan Leader, error) {
	if err := validate("observe", b, key); err != nil {
		return nil, err
	}
	ch := make(chan Leader, 1)
	go func() {
		defer close(ch)
		var last Leader
		first := true
		for {
			l, err := LeaderOf(ctx, b, key)
			if err == nil || errors.Is(err, ErrNoLeader) {
				if first || l.Fence != last.Fence {
					select {
					case ch <- l:
					case <-ctx.Done():
						return
					}
					last, first = l, false
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(observePoll):
			}
		}
	}()
	return ch, nil
}
