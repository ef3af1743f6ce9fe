package redisbackend

// QueuedCalls reports how many script calls wait in b's coalescing queue
// (0 without coalescing), for tests that must know the queue has formed.
func QueuedCalls(b *Backend) int { return b.sender.Queued() }

// UsesFunctions reports whether b sends acquire and release as FCALL
// (functions.go).
func UsesFunctions(b *Backend) bool { return b.functions.Load() }

// DisableFunctions has b send every script as EVALSHA, as on a server
// without functions, for tests of that path on Redis 7.
func DisableFunctions(b *Backend) { b.functions.Store(false) }

// FunctionLibrary is the name of the library of Redis functions
// (functions.go).
func FunctionLibrary() string { return functionLib.name }
