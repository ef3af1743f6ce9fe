// Package wire is syncguard's storage format, defined once for
// redisbackend, the HTTP middleware and the syncguard command. It names a
// lock's keys, and reads and writes lock data, fences, index values, done
// markers and records, as the TypeScript syncguard library does where they
// share keys. The Lua scripts write the same bytes; the tests here pin
// them. docs/redis-keys.md describes the format.
package wire

import "github.com/syncguard-go/syncguard/lock"

// internalError is a lock.Error with lock.CodeInternal: an invariant of the
// stored format broke.
func internalError(op, msg string, err error) *lock.Error {
	return &lock.Error{Code: lock.CodeInternal, Op: op, Msg: msg, Err: err}
}
