package redisbackend

import "github.com/syncguard-go/syncguard/lock"

// Locals is where package lock keeps b's keep-alive scheduler and
// lock/election its watchers: one of each per Backend in a process.
func (b *Backend) Locals() *lock.Locals { return &b.locals }
