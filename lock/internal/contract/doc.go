// Package contract holds what package lock and package lockdriver share
// that names no type of lock: the contract's constants, the key hash, the
// fence format and the hand-off report of a release. lockdriver imports
// lock for its types, so lock cannot import lockdriver; both import this.
package contract
