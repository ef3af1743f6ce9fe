package wire

import "github.com/syncguard-go/syncguard/lock"

// A done marker (lock.Recorder.ReleaseDone) holds the fence of the run
// that completed the key, as lock.Fence writes it; it lives at DoneKey
// until its TTL ends.

// DecodeDone parses a done marker's value: the fence of the run that
// completed. Any other value is an error (lock.ParseFence's).
func DecodeDone(v string) (lock.Fence, error) { return lock.ParseFence(v) }
