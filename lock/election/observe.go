package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// Observe reports every change of key's leader on the returned channel,
// in order: first the current leader, then each new term, and a zero
// Leader when a term ends with no successor. The channel is closed when
// ctx ends. The observers and candidates of a key on one Backend share
// one watcher, which reads the key only when a term ends or expires.
func Observe(ctx context.Context, b lock.Backend, key string) (<-chan Leader, error) {
	if err := validate("observe", ctx, b, key); err != nil {
		return nil, err
	}
	f, leave := follow(b, key, true)
	ch := make(chan Leader)
	go func() {
		defer close(ch)
		defer leave()
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.wake:
			}
			for _, l := range f.take() {
				select {
				case ch <- l:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return ch, nil
}
