package lock

import "sync"

// Locals holds the state lock and lock/election keep per Backend in a
// process: Keep's scheduler, the election's watchers. A Backend offers
// one with a method Locals() *Locals, as redisbackend does; WithHooks
// passes on the wrapped one's. Without it, that state is per call. The
// zero Locals is ready; do not copy it.
type Locals struct {
	mu sync.Mutex
	m  map[any]any
}

// Load returns the value under key, storing init's result first. A key
// is a comparable value of the caller's own type.
func (l *Locals) Load(key any, init func() any) any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.m[key]; ok {
		return v
	}
	if l.m == nil {
		l.m = map[any]any{}
	}
	v := init()
	l.m[key] = v
	return v
}

// localsOf returns the Locals b offers, or nil.
func localsOf(b Backend) *Locals {
	if h, ok := b.(interface{ Locals() *Locals }); ok {
		return h.Locals()
	}
	return nil
}
