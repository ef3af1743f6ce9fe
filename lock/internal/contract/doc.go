// Package contract holds what package lock and package lockdriver share
// that names no type of lock: the contract's constants, the key hash, the
// fence format, the hand-off report of a release, and the check that a
// value can key a process-wide map (MapKey). lockdriver imports
// lock for its types, so lock cannot import lockdriver; both import this.
package contract
