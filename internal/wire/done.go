package wire

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// A done marker (lock.Recorder.ReleaseDone) holds the fence of the run
// that completed the key, as lock.Fence writes it; it lives at DoneKey
// until its TTL ends.

// DecodeDone parses a done marker's value: the fence of the run that
// completed. Any other value is an error (lockdriver.ParseFence's).
func DecodeDone(v string) (lock.Fence, error) { return lockdriver.ParseFence(v) }
