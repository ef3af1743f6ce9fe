package lock

import "sync"

// Locals is a place for the state that lock and lock/election keep for one
// Backend in a process: the keep-alive scheduler of Keep, the watchers of
// Lead and Observe. A Backend offers one with a method Locals() *Locals,
// as redisbackend.Backend does; the result of WithHooks offers the
// wrapped backend's, and so does a type that embeds a Backend. Without
// one that state is per call: each Keep extends its lease from a
// goroutine of its own, and each Lead and Observe has its own watcher.
// The zero Locals is ready to use; it must not be copied.
type Locals struct {
	mu sync.Mutex
	m  map[any]any
}

// Load returns the value stored under key, storing init's result first
// when there is none. A key is a comparable value of the caller's own
// type, as with context.WithValue.
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
