package chaos

import (
	"sync"

	"github.com/syncguard-go/syncguard/lock"
)

// Register is a fenced store, the protected resource of the run: per key
// it remembers the highest fence it accepted and rejects a write with a
// lower one. Every write attempt is logged in the order the register
// decided it, so the rule can be re-checked from the log.
type Register struct {
	mu      sync.Mutex
	highest map[string]lock.Fence
	log     []Write
}

// Write is one write attempt on the register.
type Write struct {
	Key      string
	Fence    lock.Fence
	Worker   int
	Accepted bool
	// LeaseLost is true when the writer's lock.Do context had already been
	// cancelled (lease lost) when it wrote: a write in flight from a
	// holder that no longer holds.
	LeaseLost bool
}

// NewRegister returns an empty register.
func NewRegister() *Register {
	return &Register{highest: map[string]lock.Fence{}}
}

// Write stores a value for key under fence f, unless the register has
// accepted a higher fence for key; it reports whether it accepted. Equal
// fences are accepted: a holder may write more than once.
func (r *Register) Write(key string, f lock.Fence, worker int, leaseLost bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := f.Compare(r.highest[key]) >= 0
	if ok {
		r.highest[key] = f
	}
	r.log = append(r.log, Write{Key: key, Fence: f, Worker: worker, Accepted: ok, LeaseLost: leaseLost})
	return ok
}

// Log returns a copy of the write log in decision order.
func (r *Register) Log() []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Write(nil), r.log...)
}
