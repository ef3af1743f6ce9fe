// Package contract holds what package lock and package lockdriver share
// without lock exporting it: the contract's constants, the key hash, the
// fence format, the hand-off report of a release, lock's option
// validation, which lock registers here for lockdriver to call, and the
// check that a value can key a process-wide map (MapKey), which lock's
// and lock/election's registries share. lock
// cannot import lockdriver (lockdriver imports lock), so both import this.
package contract
