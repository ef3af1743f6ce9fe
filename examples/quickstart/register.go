package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrStaleFence is returned (wrapped) by [Register.Write] when the write's
// fence is not newer than the newest the register accepted for the key.
var ErrStaleFence = errors.New("stale fence")

// Register is a fenced key-value store standing in for a database: it
// refuses a write whose fence is not higher than the key's highest. In a
// real store the check and the write are one atomic step, such as
// UPDATE ... WHERE fence < $1. Register is safe for concurrent use.
type Register struct {
	mu       sync.Mutex
	entries  map[string]entry
	accepted int
	rejected int
}

type entry struct {
	value string
	fence lock.Fence // highest fence accepted for the key
}

// NewRegister returns an empty Register.
func NewRegister() *Register {
	return &Register{entries: make(map[string]entry)}
}

// Write stores value under key if fence is greater than every fence
// accepted for key so far; otherwise it stores nothing and returns an
// error matching [ErrStaleFence].
//
// Equal fences are refused too; a store can accept them to let one lease
// write several times.
func (r *Register) Write(key string, fence lock.Fence, value string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.entries[key]
	if fence.Compare(cur.fence) <= 0 {
		r.rejected++
		return fmt.Errorf("%w: fence %s is not newer than %s", ErrStaleFence, fence, cur.fence)
	}
	r.entries[key] = entry{value: value, fence: fence}
	r.accepted++
	return nil
}

// Read returns the value last written under key and the fence it was
// written with ("" and "" when key was never written).
func (r *Register) Read(key string) (value string, fence lock.Fence) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[key]
	return e.value, e.fence
}

// Stats returns how many writes the register has accepted and how many
// it has refused as stale.
func (r *Register) Stats() (accepted, rejected int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted, r.rejected
}
