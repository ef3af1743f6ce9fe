package lockdriver

import "github.com/syncguard-go/syncguard/lock/internal/contract"

// HashKey returns syncguard's 96-bit hash of a key or lock id, 24 hex
// digits, for logs that must not reveal it. It is not cryptographic.
func HashKey(s string) string { return contract.HashKey(s) }
