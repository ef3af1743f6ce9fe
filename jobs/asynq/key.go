package asynqlock

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// maxReadableType is the longest task type that DefaultKey keeps readable:
// type, ':' and 64 hex digits then fit in lock.MaxKeyBytes-MaxPrefixBytes
// bytes, so any accepted prefix still leaves a valid key.
const maxReadableType = lock.MaxKeyBytes - MaxPrefixBytes - 1 - 2*sha256.Size

// DefaultKey is the default KeyFunc: the task type, ':' and the hex SHA-256
// of the payload, so identical tasks share a key and different payloads do
// not. A type that is not valid UTF-8 or longer than 191 bytes (after NFC
// normalisation) is hashed too: the key is then "h:", the hex SHA-256 of
// the type, ':' and that of the payload. Either way the key has at most
// lock.MaxKeyBytes-MaxPrefixBytes bytes, so it is valid under any prefix
// that New accepts. It never fails.
func DefaultKey(t *asynq.Task) (string, error) {
	sum := sha256.Sum256(t.Payload())
	payload := hex.EncodeToString(sum[:])
	if typ, err := lock.NormalizeKey(t.Type()); err == nil && len(typ) <= maxReadableType {
		return typ + ":" + payload, nil
	}
	tsum := sha256.Sum256([]byte(t.Type()))
	return "h:" + hex.EncodeToString(tsum[:]) + ":" + payload, nil
}

// key derives, prefixes and validates the lock key of t, before any
// backend call. Its errors match ErrInvalidKey and asynq.SkipRetry.
func (g *Guard) key(t *asynq.Task) (string, error) {
	k, err := g.keyFunc(t)
	if err != nil {
		return "", invalidKey(err)
	}
	if k == "" {
		return "", invalidKey(lock.InvalidArgument("validate", "key function returned an empty key"))
	}
	k, err = lock.NormalizeKey(g.prefix + k)
	if err != nil {
		return "", invalidKey(err)
	}
	return k, nil
}

func invalidKey(cause error) error {
	return fmt.Errorf("%w: %w: %w", ErrInvalidKey, cause, asynq.SkipRetry)
}
