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

// MinRedisVersion is the oldest Redis the scripts run on: a release
// replaces the lock's index by its tombstone with SET ... GET, which Redis
// 6.2 added.
const MinRedisVersion = "6.2"

// DefaultPrefix is the key prefix used when Options.Prefix is empty, the
// same as the TypeScript library's.
const DefaultPrefix = "syncguard"

// Storage key limits shared with syncguard's Redis backend.
const (
	// KeyBudget is the byte budget of a storage key.
	KeyBudget = wire.KeyBudget
	// KeyReserve is the room kept for the longest derived suffix
	// (":id:" plus a lock id).
	KeyReserve = wire.KeyReserve
	// MaxPrefixBytes is the longest accepted prefix.
	MaxPrefixBytes = 256
)

// Options configures a Backend. The zero value (or nil) means the defaults.
type Options struct {
	// Prefix namespaces all keys (default "syncguard"). Trailing ':' are
	// ignored. A prefix with a ':'-separated segment "id" or "fence" is
	// rejected (likewise "done", "record", "queue" and "config"): lock keys
	// under it could alias another prefix's index, fence, done-marker,
	// record, queue or configuration keys.
	Prefix string
	// CleanupInIsLocked lets IsLocked delete an expired lock it finds (the
	// lock key and its index key, never the fence counter). Off by
	// default, keeping IsLocked read-only.
	CleanupInIsLocked bool
	// Logger receives the fence-threshold warning (with the key's hash,
	// never the raw key). Default: slog.Default().
	Logger *slog.Logger
	// DisableNotifications turns off the waiter queue for this Backend:
	// it never subscribes, Join reports errors.ErrUnsupported, and
	// lock.Acquire polls with its backoff alone. Its releases still hand
	// the lock to other Backends' queued waiters. Queueing is also off,
	// without this option, with ReplicaAck (see Join).
	DisableNotifications bool
	// Layout selects the key layout (see Layout). The
	// default, LayoutAuto, picks LayoutCluster for a *redis.ClusterClient
	// and the syncguard-compatible LayoutSingle otherwise.
	Layout Layout
	// ReplicaAck, when set, makes Acquire wait for replicas to acknowledge
	// the lock and its fence (WAIT) before returning; see ReplicaAck.
	ReplicaAck ReplicaAck
	// DisableCoalescing sends every script call on a round trip of its
	// own. By default the calls of concurrent goroutines share pipelines
	// (one write and one read for many calls, on both sides): a call that
	// finds two round trips under way queues and goes out with the next
	// one. A lone call goes out at once, with its own context, so a tracing
	// hook (redisotel) sees it as usual; a shared pipeline is traced as one
	// span under the context of the caller that sent it. An Acquire with
	// ReplicaAck is never coalesced (its WAIT must follow its own write on
	// its connection).
	DisableCoalescing bool
	// ResendWindow is how long a finished release is remembered (a
	// tombstone of a few bytes at the lease's index key), so that a copy of
	// a command that go-redis re-sent after losing its reply gets the first
	// run's answer: a release re-sent after it ran is still a release, not
	// a lost lease, and a late acquisition with a released lock id takes
	// nothing. The default covers the client's retries, read from its
	// options: MaxRetries x (ReadTimeout + MaxRetryBackoff) + 1 s, between
	// 5 s and 2 min (docs/client-retries.md). Redis then holds one small
	// key per lease released in the last window.
	ResendWindow time.Duration
	// FenceStripes, when N > 0, gives every lock key its fences from one
	// of N persistent counters instead of a counter of its own, so Redis
	// holds at most N fence counters whatever the number of distinct keys
	// (DefaultFenceStripes is a good N). A key's fences
	// still strictly increase and survive restarts, but they are no longer
	// consecutive and not comparable with a TypeScript client's for the
	// same key. 0, the default, keeps one counter per key, as the
	// TypeScript library does. Use it wherever keys are unbounded
	// (Idempotency-Key, a hash of a job's payload). At most
	// MaxFenceStripes. In the cluster layout every instance on a prefix
	// must use the same value (it picks the locks' hash tags).
	FenceStripes int
	// HandOffLocality is how long a hot lock may stay with the waiters of
	// the Backend it came to while waiters of other processes queue:
	// its releases then hand it to a waiter of their own
	// Backend, one round trip per hand-off, where handing it to another
	// process costs a message and a wake-up there; after that it goes on
	// in queue order, so the processes take turns. A waiter that has
	// queued for five times this is served in queue order whatever the
	// lock's turn. Default DefaultHandOffLocality (10 ms); negative: strict
	// queue order. It applies to the single layout.
	HandOffLocality time.Duration
	// DisableConfigRecord stops New from recording the Backend's layout
	// and FenceStripes under the prefix (ConfigKey), which
	// it otherwise does once, for operator tools (syncguard reads them)
	// and for admin.CheckRecordedConfig. Set it for a Backend that does not take
	// the application's locks, such as one made only to run admin.Check or to
	// read a prefix another program owns: its record would claim a
	// configuration no instance uses.
	DisableConfigRecord bool
}

// Backend is a lock.Backend on Redis. It is safe for concurrent use. It
// also implements lock.IDBackend, so lock.Acquire and lock.Do wait in the
// key's queue and a release hands them the lock instead of leaving them to
// poll (see Join); Close ends the subscription that this
// opens.
type Backend struct {
	locals   lock.Locals // the keep-alive scheduler and election watchers of this Backend
	client   redis.UniversalClient
	prefix   string
	idPrefix string // prefix + ":id:"
	layout   Layout // LayoutSingle or LayoutCluster (layout.go)
	ack      ReplicaAck
	cleanup  bool
	log      *slog.Logger
	notify   *notifier         // release notifications (notify.go)
	sender   *transport.Sender // script calls, bounded by their contexts, coalesced (scripts.go)
	// queueArg is the start of the queue keys, "<prefix>:queue:" (the lock
	// key follows), boxed once for the scripts (queue.go).
	queueArg any
	// tombArg is the resend window in ms, boxed once (nonce.go).
	tombArg any
	// nonceBase and calls make the release calls' nonces (nonce.go).
	nonceBase string
	calls     atomic.Uint64
	// channelArg is the notifier's hand-off channel, boxed once for the
	// release script (release.go).
	channelArg any
	// ttlArg is the last TTL in ms an acquisition sent, boxed (ttlBox).
	ttlArg atomic.Pointer[boxedMs]
	// stripes is Options.FenceStripes (stripes.go); stripedArg its flag
	// for acquire.lua.
	stripes    int
	stripedArg any
	// quantum is Options.HandOffLocality with its default, 0 when off;
	// localityArg is release.lua's locality bound (local.go).
	quantum     time.Duration
	localityArg any
}

var _ lock.Backend = (*Backend)(nil)

// New returns a Backend on client: a *redis.Client, a failover (Sentinel)
// client, a *redis.ClusterClient, or a wrapper embedding one. It returns
// an error with lock.CodeInvalidArgument for a nil client, a *redis.Ring
// (it moves keys between shards when one is marked down, so a lock could
// be held twice and its fences restart), a bad prefix or an Options value
// the client cannot serve (ReplicaAck needs a *redis.Client or a
// *redis.ClusterClient). New sends one command, whose failure is not an
// error: it records the Backend's layout and FenceStripes under the prefix
// (one HSET on ConfigKey, waited for 200 ms at most, then left to finish in
// the background; see Config and Options.DisableConfigRecord), so that
// operator tools name the same keys and admin.CheckRecordedConfig can tell when
// instances disagree. The release subscription is opened on the first
// contended lock.Acquire; call Close to end it.
//
// New reads the client's options through its Options method, so a wrapper
// embedding a go-redis client is judged as that client: for the Ring
// check, LayoutAuto (LayoutCluster for a cluster client) and the default
// Options.ResendWindow, and for which calls go-redis ends by their
// deadlines itself (ContextTimeoutEnabled; see docs/client-retries.md). A
// wrapper that hides the Options method (one embedding the
// redis.UniversalClient interface, say) gets LayoutSingle from LayoutAuto
// and a fixed default resend window, and only its calls without a deadline
// go out from their callers' goroutines; set Options.Layout and
// Options.ResendWindow for it.
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
		notify:      newNotifier(client, prefix, o.DisableNotifications || o.ReplicaAck.N > 0, layout == LayoutSingle),
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

// validatePrefix checks Options.Prefix and returns it without trailing ':'
// (DefaultPrefix when empty). The prefix must be in NFC and consist of
// code points assigned in Go's Unicode tables (lockdriver.AllAssigned): the
// TypeScript library derives the fence key from the NFC-normalised
// "prefix:key" while the lock key keeps the raw prefix, so only with such
// a prefix do both languages derive the same lock and fence keys.
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
	return lock.Capabilities{Backend: "redis", Fencing: true, TimeAuthority: "server"}
}

// keys validates a user key and returns its normalised form and the
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
		// Only this one name: "config:..." keys are common, and only this
		// one is the configuration record's (config.go).
		return "", "", lockdriver.InvalidArgument(op, `key must not be "`+wire.ConfigKeyName+`" (the name of the backends' configuration record)`)
	}
	lockKey, err = wire.MakeStorageKey(b.keyPrefix(norm), norm, KeyBudget, KeyReserve)
	if err != nil {
		return "", "", withOp(err, op)
	}
	return norm, lockKey, nil
}

// fenceKey returns the fence counter of a lock on norm (lockKey its lock
// key): with FenceStripes, its stripe's (stripes.go); otherwise derived
// from the lock key in two steps, as syncguard does: "<prefix>:fence:<lock
// key>", hashed when too long.
func (b *Backend) fenceKey(norm, lockKey string) (string, error) {
	if b.stripes > 0 {
		return b.stripeKey(lockKey, b.stripe(norm)), nil
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
