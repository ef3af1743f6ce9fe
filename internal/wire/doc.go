// Package wire is syncguard's storage format on Redis, shared by
// redisbackend, the middleware and the syncguard command and compatible
// with the TypeScript syncguard library: storage keys, lock data, fence
// thresholds, the liveness rule and the stored records. What every
// backend must do whatever its store (key normalisation, lock ids, fence
// formatting) is in lock/lockdriver.
package wire

import "github.com/syncguard-go/syncguard/lock"

// internalError is a lock.Error with lock.CodeInternal: an invariant of the
// stored format broke.
func internalError(op, msg string, err error) *lock.Error {
	return &lock.Error{Code: lock.CodeInternal, Op: op, Msg: msg, Err: err}
}
