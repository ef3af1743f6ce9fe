// Package wire is syncguard's storage format, defined once for
// redisbackend, the HTTP middleware and the syncguard command, and
// compatible with the TypeScript syncguard library where it shares keys:
// key normalisation and storage keys, the names of a lock's other keys
// (index, fence, stripe, done marker, record, queue, configuration
// record), lock ids, lock data and the grant read from it, fence
// thresholds and the liveness rule, index values (slot indexes,
// tombstones), done markers and replay records. The Lua scripts write the
// same bytes; the tests here pin them. Applications use package lock; what
// every backend must do whatever its store (key normalisation, lock ids,
// fence formatting) is in lock/lockdriver.
package wire

import "github.com/syncguard-go/syncguard/lock"

// internalError is a lock.Error with lock.CodeInternal: an invariant of the
// stored format broke.
func internalError(op, msg string, err error) *lock.Error {
	return &lock.Error{Code: lock.CodeInternal, Op: op, Msg: msg, Err: err}
}
