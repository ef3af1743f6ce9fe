package redisbackend

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/errmap"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// MinRedisVersion is the oldest Redis the scripts run on (SET ... GET).
const MinRedisVersion = "6.2"

// DefaultPrefix is the key prefix when Options.Prefix is empty.
const DefaultPrefix = "syncguard"

// Storage key limits shared with syncguard's Redis backend.
const (
	// KeyBudget is the byte budget of a storage key.
	KeyBudget = wire.KeyBudget
	// KeyReserve is the room kept for the longest derived suffix.
	KeyReserve = wire.KeyReserve
	// MaxPrefixBytes is the longest accepted prefix.
	MaxPrefixBytes = 256
)

// Options configures a Backend. The zero value (or nil) means the defaults.
type Options struct {
	// Prefix namespaces all keys (docs/redis-keys.md has its rules).
	Prefix string
	// CleanupInIsLocked lets IsLocked delete an expired lock it finds.
	CleanupInIsLocked bool
	// Logger receives the fence-threshold warning, and the warning that
	// the Redis user may not subscribe (waiters then poll); default
	// slog.Default().
	Logger *slog.Logger
	// DisableNotifications turns off the waiter queue for this Backend:
	// lock.Acquire polls instead (docs/waiting.md).
	DisableNotifications bool
	// Layout selects the key layout; LayoutAuto picks by the client.
	Layout Layout
	// ReplicaAck makes Acquire wait for replicas to acknowledge the lock.
	ReplicaAck ReplicaAck
	// DisableCoalescing sends every script call on a round trip of its own
	// instead of sharing pipelines (docs/client-retries.md).
	DisableCoalescing bool
	// ResendWindow is how long a finished release is remembered, so that a
	// re-sent copy gets the first run's answer. The default covers the
	// client's retries (docs/client-retries.md).
	ResendWindow time.Duration
	// FenceStripes, when N > 0, gives every lock key its fences from one of N
	// counters, for unbounded keys (docs/redis-keys.md). At most
	// MaxFenceStripes.
	FenceStripes int
	// HandOffLocality is how long a hot lock may stay with this Backend's
	// waiters; default DefaultHandOffLocality, negative for strict queue order
	// (docs/waiting.md).
	HandOffLocality time.Duration
	// DisableConfigRecord stops New from recording the layout and
	// FenceStripes under ConfigKey. Set it for a Backend that takes no
	// application locks, such as one only for admin.Check.
	DisableConfigRecord bool
}

// Backend is a lock.Backend and lock.IDBackend on Redis. It is safe for
// concurrent use. Close ends the release subscription it opens.
type Backend struct {
	locals   lock.Locals
	client   redis.UniversalClient
	prefix   string
	idPrefix string // prefix + ":id:"
	layout   Layout
	ack      ReplicaAck
	cleanup  bool
	log      *slog.Logger
	notify   *notifier
	sender   *transport.Sender
	// The *Arg fields are script arguments, boxed once.
	queueArg    any // "<prefix>:queue:"
	tombArg     any // resend window in ms
	nonceBase   string
	calls       atomic.Uint64 // with nonceBase, makes release nonces
	channelArg  any
	ttlArg      atomic.Pointer[boxedMs] // the last TTL sent
	stripes     int
	stripedArg  any
	quantum     time.Duration // HandOffLocality; 0 when off
	localityArg any
}

var _ lock.Backend = (*Backend)(nil)

// New returns a Backend on client: a *redis.Client, a failover client, a
// *redis.ClusterClient, or a wrapper embedding one. A nil client, a
// *redis.Ring, a bad prefix or Options the client cannot serve are refused
// with an InvalidArgument *lock.Error. New records the configuration under
// ConfigKey (a failure is not an error). docs/client-retries.md says what
// it reads of the client.
func New(client redis.UniversalClient, opts *Options) (*Backend, error) {
	if client == nil {
		return nil, lockdriver.InvalidArgument("config", "nil redis client")
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
	if err := validStripes(o.FenceStripes); err != nil {
		return nil, err
	}
	if o.ResendWindow < 0 {
		return nil, lockdriver.InvalidArgument("config", "ResendWindow must not be negative")
	}
	window := o.ResendWindow
	if window == 0 {
		window = transport.ResendWindow(client)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if !o.DisableConfigRecord {
		recordConfig(client, prefix+configKeySuffix, Config{Layout: layout, FenceStripes: o.FenceStripes})
	}
	b := &Backend{
		client:      client,
		sender:      transport.New(client, !o.DisableCoalescing),
		notify:      newNotifier(client, prefix, o.DisableNotifications || o.ReplicaAck.N > 0, layout == LayoutSingle, log),
		prefix:      prefix,
		idPrefix:    wire.IndexPrefix(prefix),
		layout:      layout,
		ack:         o.ReplicaAck,
		cleanup:     o.CleanupInIsLocked,
		log:         log,
		queueArg:    wire.QueuePrefix(prefix),
		tombArg:     max(window.Milliseconds(), 1),
		nonceBase:   newNonceBase(),
		stripes:     o.FenceStripes,
		stripedArg:  boolArg(o.FenceStripes > 0),
		quantum:     localQuantum(o.HandOffLocality, layout),
		localityArg: localityArg(quantum(o.HandOffLocality)),
	}
	b.channelArg = b.notify.channel
	return b, nil
}

// validatePrefix checks Options.Prefix and returns it without trailing
// ':' (docs/redis-keys.md).
func validatePrefix(p string) (string, error) {
	if p == "" {
		return DefaultPrefix, nil
	}
	p = strings.TrimRight(p, ":")
	switch {
	case p == "":
		return "", lockdriver.InvalidArgument("config", "prefix must not be only ':'")
	case len(p) > MaxPrefixBytes:
		return "", lockdriver.InvalidArgument("config", "prefix exceeds "+strconv.Itoa(MaxPrefixBytes)+" bytes")
	case !utf8.ValidString(p):
		return "", lockdriver.InvalidArgument("config", "prefix must be valid UTF-8")
	case !lockdriver.AllAssigned(p):
		return "", lockdriver.InvalidArgument("config", "prefix contains a code point not assigned in Unicode "+norm.Version+
			" (the version of Go's NFC tables); newer JavaScript runtimes may normalise it differently")
	case !norm.NFC.IsNormalString(p):
		return "", lockdriver.InvalidArgument("config",
			"prefix must be in Unicode NFC: the TypeScript library derives fence keys from the normalised prefix")
	}
	for _, seg := range strings.Split(p, ":") {
		if wire.ReservedPrefixSegment(seg) {
			return "", lockdriver.InvalidArgument("config",
				`prefix must not contain a segment "id", "fence", "done", "record", "queue" or "config": its lock keys could overlap internal keys`)
		}
	}
	return p, nil
}

// Prefix returns the key prefix in use, without a trailing ':'.
func (b *Backend) Prefix() string { return b.prefix }

// Capabilities reports {Backend: "redis", Fencing: true, TimeAuthority: "server"}.
func (b *Backend) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "redis", Fencing: true, TimeAuthority: "server", FencePerKey: b.stripes == 0}
}

// lockKey validates a user key and returns its normalised form and the
// lock key.
func (b *Backend) lockKey(op, key string) (norm, lockKey string, err error) {
	norm, err = lockdriver.NormalizeKey(key)
	if err != nil {
		return "", "", withOp(err, op)
	}
	if wire.ReservedKey(norm) {
		return "", "", lockdriver.InvalidArgument(op, `key must not begin with "id:", "fence:", "done:", "record:" or "queue:" (reserved for index, fence, done-marker, record and queue keys)`)
	}
	if norm == wire.ConfigKeyName {
		return "", "", lockdriver.InvalidArgument(op, `key must not be "`+wire.ConfigKeyName+`" (the name of the backends' configuration record)`)
	}
	lockKey, err = wire.MakeStorageKey(b.keyPrefix(norm), norm, KeyBudget, KeyReserve)
	if err != nil {
		return "", "", withOp(err, op)
	}
	return norm, lockKey, nil
}

// fenceKey returns the fence counter of a lock on norm.
func (b *Backend) fenceKey(norm, lockKey string) (string, error) {
	if b.stripes > 0 {
		return b.stripeKey(lockKey, b.stripe(b.slotSource(norm))), nil
	}
	return wire.FenceKey(b.tagPrefix(lockKey), lockKey)
}

func (b *Backend) idKey(op, id string) (string, error) {
	if err := lockdriver.ValidateLockID(id); err != nil {
		return "", withOp(err, op)
	}
	return b.indexKey(id), nil
}

func validTTL(op string, ttl time.Duration) (int64, error) {
	ms := ttl.Milliseconds()
	if ms <= 0 {
		return 0, lockdriver.InvalidArgument(op, "ttl must be at least 1ms")
	}
	return ms, nil
}

// checkCtx is errmap.CheckCtx.
func checkCtx(op string, ctx context.Context) error { return errmap.CheckCtx(op, ctx) }

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
