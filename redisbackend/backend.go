package redisbackend

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// DefaultPrefix is the key prefix used when Options.Prefix is empty, the
// same as the TypeScript library's.
const DefaultPrefix = "syncguard"

// Storage key limits shared with syncguard's Redis backend.
const (
	// KeyBudget is the byte budget of a storage key.
	KeyBudget = 1000
	// KeyReserve is the room kept for the longest derived suffix
	// (":id:" plus a lock id).
	KeyReserve = 26
	// MaxPrefixBytes is the longest accepted prefix.
	MaxPrefixBytes = 256
)

// Options configures a Backend. The zero value (or nil) means the defaults.
type Options struct {
	// Prefix namespaces all keys (default "syncguard"). Trailing ':' are
	// ignored. A prefix with a ':'-separated segment "id" or "fence" is
	// rejected (likewise "done"): lock keys under it could alias another
	// prefix's index, fence or done-marker keys.
	Prefix string
	// CleanupInIsLocked lets IsLocked delete an expired lock it finds (the
	// lock key and its index key, never the fence counter). Off by
	// default, keeping IsLocked read-only.
	CleanupInIsLocked bool
	// Logger receives the fence-threshold warning (with the key's hash,
	// never the raw key). Default: slog.Default().
	Logger *slog.Logger
	// DisableNotifications turns off waiting for release notifications:
	// the Backend never subscribes and lock.Acquire polls with its backoff
	// alone. Releases still publish, so other processes' waiters wake.
	// Notifications are also off, without this option, for a client that
	// has no Subscribe method and for *redis.Ring (see WatchKey).
	DisableNotifications bool
	// Layout selects the key layout (see Layout and layout.go). The
	// default, LayoutAuto, picks LayoutCluster for a *redis.ClusterClient
	// or a *redis.Ring and the syncguard-compatible LayoutSingle otherwise.
	Layout Layout
	// ReplicaAck, when set, makes Acquire wait for replicas to acknowledge
	// the lock and its fence (WAIT) before returning; see ReplicaAck.
	ReplicaAck ReplicaAck
	// DisableCoalescing sends every script call on a round trip of its
	// own. By default the calls of concurrent goroutines share pipelines
	// (one write and one read for many calls, on both sides): a call that
	// finds four round trips under way queues and goes out with the next
	// one. A lone call goes out at once, with its own context, so a tracing
	// hook (redisotel) sees it as usual; a shared pipeline is traced as one
	// span under the context of the caller that sent it. Coalescing needs a
	// client with Pipeline and Process methods, as every go-redis client has;
	// an Acquire with ReplicaAck is never coalesced (its WAIT must follow
	// its own write on its connection).
	DisableCoalescing bool
}

// Backend is a lock.Backend on Redis. It is safe for concurrent use. It
// also implements lock.Notifier, so lock.Acquire and lock.Do wake on a
// release instead of polling (see WatchKey); Close ends the subscription
// that this opens.
type Backend struct {
	client   redis.Scripter
	prefix   string
	idPrefix string // prefix + ":id:"
	layout   Layout // LayoutSingle or LayoutCluster (layout.go)
	ack      ReplicaAck
	cleanup  bool
	log      *slog.Logger
	notify   *notifier  // release notifications (notify.go)
	coalesce *coalescer // nil: each call on its own round trip (coalesce.go)
	proc     processor  // nil: only the redis.Scripter methods (scripts.go)
	// channelArg is notify.channel boxed once, the release scripts' ARGV.
	channelArg any
}

var _ lock.Backend = (*Backend)(nil)

// New returns a Backend using client, which may be any go-redis client
// (*redis.Client, *redis.ClusterClient, *redis.Ring, a failover client).
// It returns an error with lock.CodeInvalidArgument for a nil client or a
// bad prefix. New does no I/O: the release subscription is opened on the
// first contended lock.Acquire; call Close to end it.
func New(client redis.Scripter, opts *Options) (*Backend, error) {
	if client == nil {
		return nil, lock.InvalidArgument("config", "nil redis client")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	prefix, err := validatePrefix(o.Prefix)
	if err != nil {
		return nil, err
	}
	layout, err := resolveLayout(o.Layout, client, prefix)
	if err != nil {
		return nil, err
	}
	if err := checkReplicaAck(o.ReplicaAck, client); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	notify := newNotifier(client, prefix, o.DisableNotifications)
	proc, _ := client.(processor)
	var co *coalescer
	if !o.DisableCoalescing {
		co = newCoalescer(client)
	}
	return &Backend{
		coalesce:   co,
		proc:       proc,
		client:     client,
		prefix:     prefix,
		idPrefix:   prefix + ":id:",
		layout:     layout,
		ack:        o.ReplicaAck,
		cleanup:    o.CleanupInIsLocked,
		log:        log,
		notify:     notify,
		channelArg: notify.channel,
	}, nil
}

func validatePrefix(p string) (string, error) {
	if p == "" {
		return DefaultPrefix, nil
	}
	p = strings.TrimRight(p, ":")
	switch {
	case p == "":
		return "", lock.InvalidArgument("config", "prefix must not be only ':'")
	case len(p) > MaxPrefixBytes:
		return "", lock.InvalidArgument("config", "prefix exceeds "+strconv.Itoa(MaxPrefixBytes)+" bytes")
	case !utf8.ValidString(p):
		return "", lock.InvalidArgument("config", "prefix must be valid UTF-8")
	}
	for _, seg := range strings.Split(p, ":") {
		if seg == "id" || seg == "fence" || seg == "done" {
			return "", lock.InvalidArgument("config",
				`prefix must not contain a segment "id", "fence" or "done": its lock keys could overlap internal keys`)
		}
	}
	return p, nil
}

// Prefix returns the key prefix in use, without a trailing ':'.
func (b *Backend) Prefix() string { return b.prefix }

// Capabilities reports {Backend: "redis", Fencing: true, TimeAuthority: "server"}.
func (b *Backend) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "redis", Fencing: true, TimeAuthority: "server"}
}

// keys validates a user key and returns its normalised form and the
// lock key.
func (b *Backend) lockKey(op, key string) (norm, lockKey string, err error) {
	norm, err = lock.NormalizeKey(key)
	if err != nil {
		return "", "", withOp(err, op)
	}
	if strings.HasPrefix(norm, "id:") || strings.HasPrefix(norm, "fence:") || strings.HasPrefix(norm, "done:") {
		return "", "", lock.InvalidArgument(op, `key must not begin with "id:", "fence:" or "done:" (reserved for index, fence and done-marker keys)`)
	}
	lockKey, err = lock.MakeStorageKey(b.keyPrefix(norm), norm, KeyBudget, KeyReserve)
	if err != nil {
		return "", "", withOp(err, op)
	}
	return norm, lockKey, nil
}

// fenceKey derives the fence key from the lock key in two steps, as
// syncguard does: "<prefix>:fence:<lock key>", hashed when too long.
func (b *Backend) fenceKey(lockKey string) (string, error) {
	p := b.tagPrefix(lockKey) // the prefix, plus ":{T}" in the cluster layout
	if len(p)+len(":fence:")+len(lockKey) <= KeyBudget-KeyReserve {
		// What MakeStorageKey returns when no hashing is needed, in one
		// allocation instead of two.
		return p + ":fence:" + lockKey, nil
	}
	return lock.MakeStorageKey(p, "fence:"+lockKey, KeyBudget, KeyReserve)
}

func (b *Backend) idKey(op, id string) (string, error) {
	if err := lock.ValidateLockID(id); err != nil {
		return "", withOp(err, op)
	}
	return b.indexKey(id), nil
}

func validTTL(op string, ttl time.Duration) (int64, error) {
	ms := ttl.Milliseconds()
	if ms <= 0 {
		return 0, lock.InvalidArgument(op, "ttl must be at least 1ms")
	}
	return ms, nil
}

func checkCtx(op string, ctx context.Context) error {
	if ctx == nil {
		return lock.InvalidArgument(op, "nil context")
	}
	if err := ctx.Err(); err != nil {
		return &lock.Error{Code: lock.CodeAborted, Op: op, Msg: "context done", Err: err}
	}
	return nil
}

// withOp sets the Op of a validation error from package lock.
func withOp(err error, op string) error {
	var le *lock.Error
	if errors.As(err, &le) {
		c := *le
		c.Op = op
		return &c
	}
	return err
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms) }

func internal(op, msg string) error {
	return &lock.Error{Code: lock.CodeInternal, Op: op, Msg: msg}
}
