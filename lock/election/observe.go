package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// Observe reports every change of key's leader on the returned channel,
// in order: first the current leader (a zero Leader when none), then each
// new term, and a zero Leader when a term ends with no successor. The
// channel is closed when ctx ends. All the observers and candidates of a
// key on one Backend in a process share one watcher: on a Store it reads
// the key only when a term's expiry passes with no notice of an
// extension, and after a term ends; otherwise it reads the key at each
// term's expiry, and every second while nobody leads.
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
