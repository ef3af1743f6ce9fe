package asynqlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Sizes of the parts of a default key.
const (
	// keyBudget is the length of a default key at most, so that it is
	// valid under any prefix that New accepts.
	keyBudget = lockdriver.MaxKeyBytes - MaxPrefixBytes
	// maxReadableQueue is the longest queue name kept readable, leaving
	// room for a hashed type and the payload's hash: 64+1+66+1+64 <= 256.
	maxReadableQueue = 64
)

// defaultQueue is asynq's default queue, where a task enqueued without
// asynq.Queue goes.
const defaultQueue = "default"

// DefaultKey is the default KeyFunc: DefaultKeyIn of the queue the task
// was taken from, or of asynq's "default" queue when ctx names none. Like
// asynq's Unique option, it tells apart tasks of one type and payload in
// different queues. It never fails.
func DefaultKey(ctx context.Context, t *asynq.Task) (string, error) {
	q, ok := asynq.GetQueueName(ctx)
	if !ok {
		q = defaultQueue
	}
	return DefaultKeyIn(q, t), nil
}

// DefaultKeyIn returns the default key of t in queue: the queue, the task
// type and the hex SHA-256 of the payload, joined by ':'. Identical tasks
// of one queue share a key; tasks differing in queue, type or payload do
// not. A queue or type that is not plain NFC text is hashed. The key is
// valid under any prefix New accepts. docs/asynq.md has the exact rules.
func DefaultKeyIn(queue string, t *asynq.Task) string {
	sum := sha256.Sum256(t.Payload())
	payload := hex.EncodeToString(sum[:])
	q := hashed(queue)
	if len(queue) <= maxReadableQueue && queue != "h" && !strings.Contains(queue, ":") && isNFC(queue) {
		q = queue
	}
	typ := t.Type()
	if len(q)+1+len(typ)+1+len(payload) <= keyBudget && !strings.HasPrefix(typ, "h:") && isNFC(typ) {
		return q + ":" + typ + ":" + payload
	}
	return q + ":" + hashed(typ) + ":" + payload
}

// hashed is the hashed form of a key part: "h:" and its hex SHA-256.
func hashed(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h:" + hex.EncodeToString(sum[:])
}

// isNFC reports whether s is a valid lock key already in its normal form
// (so the empty string is not).
func isNFC(s string) bool {
	n, err := lockdriver.NormalizeKey(s)
	return err == nil && n == s
}

// key derives, prefixes and validates the lock key of t, before any
// backend call. Its errors match ErrInvalidKey and asynq.SkipRetry.
func (g *Guard) key(ctx context.Context, t *asynq.Task) (string, error) {
	k, err := g.keyFunc(ctx, t)
	if err != nil {
		return "", invalidKey(err)
	}
	if k == "" {
		return "", invalidKey(lockdriver.InvalidArgument("validate", "key function returned an empty key"))
	}
	k, err = lockdriver.NormalizeKey(g.prefix + k)
	if err != nil {
		return "", invalidKey(err)
	}
	return k, nil
}

func invalidKey(cause error) error {
	return fmt.Errorf("%w: %w: %w", ErrInvalidKey, cause, asynq.SkipRetry)
}
