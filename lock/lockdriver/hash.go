package lockdriver

import "github.com/syncguard-go/syncguard/lock/internal/contract"

// HashKey returns syncguard's 96-bit sanitising hash of a key or lock id:
// 24 lowercase hex digits, identical to the TypeScript library's hashKey.
// lock.Info carries these hashes instead of the raw key and id; use it for
// telemetry and logs that must not reveal the value. It is not a
// cryptographic hash.
func HashKey(s string) string { return contract.HashKey(s) }
