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
	// maxReadableQueue is the longest queue name kept readable: a readable
	// queue then leaves room for a hashed type ("h:" and 64 hex digits)
	// and the payload's 64 hex digits (64+1+66+1+64 <= 256).
	maxReadableQueue = 64
)

// defaultQueue is asynq's default queue, where a task enqueued without
// asynq.Queue goes.
const defaultQueue = "default"

// DefaultKey is the default KeyFunc: DefaultKeyIn of the queue the task
// was taken from (asynq.GetQueueName of ctx), or of "default", asynq's
// default queue, when ctx names none (a handler called outside an asynq
// server). Like asynq's own Unique option, it tells apart tasks of one type
// and payload in different queues. It never fails.
func DefaultKey(ctx context.Context, t *asynq.Task) (string, error) {
	q, ok := asynq.GetQueueName(ctx)
	if !ok {
		q = defaultQueue
	}
	return DefaultKeyIn(q, t), nil
}

// DefaultKeyIn returns the default key of t in queue: the queue, ':', the
// task type, ':' and the hex SHA-256 of the payload, so identical tasks of
// one queue share a key and tasks differing in queue, type or payload do
// not ("default:email:send:ba7816bf..."; asynq's Unique key is queue, type
// and payload too).
//
// The queue is kept readable only when it is valid UTF-8 already in NFC,
// at most 64 bytes long, without ':' and not "h"; the type only when it is
// valid UTF-8 already in NFC, does not begin with "h:" and the whole key
// then has at most lockdriver.MaxKeyBytes-MaxPrefixBytes bytes. Any other queue
// or type is hashed: "h:" and the hex SHA-256 of it. Distinct (queue, type,
// payload) triples therefore never share a key (short of a SHA-256
// collision): a readable queue has no ':' and a hashed one a fixed length,
// so the queue part ends unambiguously; the payload part has a fixed length
// (64 hex digits), so it cannot absorb a ':' of the type; only hashed parts
// begin with "h:" (a readable queue "h" would look like one, hence the
// exception); and no part is replaced by its normal form (NFC would merge
// "cafe\u0301" with "café", which asynq routes apart). The key has at most
// lockdriver.MaxKeyBytes-MaxPrefixBytes bytes, so it is valid under any prefix
// that New accepts.
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
