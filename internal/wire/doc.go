// Package wire is syncguard's storage format, shared by redisbackend and
// the syncguard command and compatible with the TypeScript syncguard
// library: key normalisation and storage keys, lock ids, fence thresholds
// and the liveness rule. Applications use package lock; these helpers are
// for code that reads or writes the stored format itself.
package wire

import "github.com/syncguard-go/syncguard/lock"

// internalError is a lock.Error with lock.CodeInternal: an invariant of the
// stored format broke.
func internalError(op, msg string, err error) *lock.Error {
	return &lock.Error{Code: lock.CodeInternal, Op: op, Msg: msg, Err: err}
}
