package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

// defaultURL is the Redis used without --redis and REDIS_URL, as
// redis-cli's default.
const defaultURL = "redis://127.0.0.1:6379"

// session is a connection to the Redis of the locks and a Backend on it,
// named as the application recorded its configuration.
type session struct {
	client  redis.UniversalClient // *redis.Client or *redis.ClusterClient
	cluster *redis.ClusterClient  // nil for one server
	backend *redisbackend.Backend // configured as the flags say, else as recorded
	names   namer
	where   string // the server's address, or the cluster's first seed, for messages
	// defaulted says no --redis or REDIS_URL named the server: it is
	// defaultURL's.
	defaulted bool
	env       Env
	// recorded is what the application's backends recorded under the
	// prefix (admin.RecordedConfigs), newest first.
	recorded []admin.ConfigRecord
	// unread says the record could not be read (configure said why).
	unread bool
	seed   maphash.Seed // watch's fingerprints of key names
	// timeout is --timeout: no command waits longer for its reply.
	timeout time.Duration
}

func (s *session) close() {
	_ = s.backend.Close()
	_ = s.client.Close()
}

// connect opens the Redis of o.urls (else REDIS_URL, else defaultURL):
// one server, or a cluster when several URLs are given or the one server is
// a cluster node. It checks the connection with PING, so that an
// unreachable server or refused credentials fail here with one clear line.
func connect(ctx context.Context, o *options, env Env) (*session, error) {
	opts, defaulted, err := parseURLs(o, env)
	if err != nil {
		return nil, err
	}
	bopts, err := backendOptions(o)
	if err != nil {
		return nil, err
	}
	// The first round trips tell an unreachable server or refused
	// credentials apart before any command runs: --timeout bounds them
	// together, and each command after them (boundHook).
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	s := &session{where: opts[0].Addr, defaulted: defaulted, env: env, timeout: o.timeout}
	if err := s.dial(ctx, pctx, opts); err != nil {
		return nil, err
	}
	s.configure(pctx, o, bopts)
	b, err := redisbackend.New(s.client, bopts)
	if err != nil {
		_ = s.client.Close()
		return nil, usageErrorf("%s", message(err))
	}
	s.backend = b
	s.seed = maphash.MakeSeed()
	s.names = namer{prefix: b.Prefix(), cluster: b.Layout() == redisbackend.LayoutCluster}
	s.noteConfig(o)
	return s, nil
}

// parseURLs parses o.urls, else REDIS_URL's comma-separated list, else
// the default URL, which it reports as defaulted.
func parseURLs(o *options, env Env) (opts []*redis.Options, defaulted bool, err error) {
	urls := []string(o.urls)
	if len(urls) == 0 {
		for _, u := range strings.Split(env.Getenv("REDIS_URL"), ",") {
			if u = strings.TrimSpace(u); u != "" {
				urls = append(urls, u)
			}
		}
	}
	defaulted = len(urls) == 0
	if defaulted {
		urls = []string{cmp.Or(env.defaultURL, defaultURL)}
	}
	opts = make([]*redis.Options, len(urls))
	for i, u := range urls {
		opt, err := redis.ParseURL(u)
		var uerr *url.Error
		switch {
		case errors.As(err, &uerr):
			// Its message quotes the URL, which may hold a password.
			return nil, false, usageErrorf("--redis: not a valid URL: %v", uerr.Err)
		case err != nil:
			return nil, false, usageErrorf("--redis %s: %s", redact(u), strings.TrimPrefix(err.Error(), "redis: "))
		}
		opts[i] = opt
	}
	return opts, defaulted, nil
}

// backendOptions returns the Backend's options that the flags give,
// refusing a bad layout, stripe count, timeout or prefix before any I/O.
func backendOptions(o *options) (*redisbackend.Options, error) {
	layout, err := parseLayout(o.layout)
	if err != nil {
		return nil, err
	}
	if o.timeout <= 0 {
		return nil, usageErrorf("--timeout must be positive (got %v)", o.timeout)
	}
	if o.stripes.set && (o.stripes.n < 0 || o.stripes.n > redisbackend.MaxFenceStripes) {
		return nil, usageErrorf("--fence-stripes must be between 0 and %d", redisbackend.MaxFenceStripes)
	}
	bopts := &redisbackend.Options{
		Prefix:               o.prefix,
		Layout:               layout,
		FenceStripes:         o.stripes.n,
		DisableNotifications: true, // a release still publishes and hands on; nothing here waits
		DisableCoalescing:    true,
		DisableConfigRecord:  true, // the command reads the application's record, never writes one
		Logger:               slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	// A bad prefix is a usage error before any I/O (New does none without
	// its record; the probe client is never used).
	probe := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	_, err = redisbackend.New(probe, bopts)
	_ = probe.Close()
	if err != nil {
		return nil, usageErrorf("--prefix %q: %s", o.prefix, message(err))
	}
	return bopts, nil
}

// dial sets s.client (and s.cluster for a cluster) and pings every
// server within pctx; ctx tells the caller's cancellation from a timeout.
func (s *session) dial(ctx, pctx context.Context, opts []*redis.Options) error {
	bound := boundHook{d: s.timeout}
	if len(opts) == 1 {
		opts[0].ContextTimeoutEnabled = true // a round trip ends at its deadline (boundHook)
		c := redis.NewClient(opts[0])
		c.AddHook(bound)
		if err := c.Ping(pctx).Err(); err != nil {
			_ = c.Close()
			return tlsHint(opts[0], s.connError(ctx, opts[0].Addr, err))
		}
		if !isClusterNode(pctx, c) {
			s.client = c
			return nil
		}
		_ = c.Close()
	} else {
		for _, opt := range opts {
			if opt.DB != 0 {
				return usageErrorf("--redis %s: a Redis Cluster has only database 0", opt.Addr)
			}
		}
	}
	s.cluster = redis.NewClusterClient(clusterOptions(opts))
	// On every node client: the commands run on the nodes themselves
	// (SCAN per master) as well as those the cluster client routes.
	s.cluster.OnNewNode(func(c *redis.Client) { c.AddHook(bound) })
	s.client = s.cluster
	return s.pingMasters(ctx, pctx, opts[0].Addr)
}

// pingMasters pings every master of the cluster, naming the first that
// fails (else addr) in the error.
func (s *session) pingMasters(ctx, pctx context.Context, addr string) error {
	err := s.cluster.ForEachMaster(pctx, func(ctx context.Context, n *redis.Client) error {
		if err := n.Ping(ctx).Err(); err != nil {
			return &nodeError{addr: n.Options().Addr, err: err}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	_ = s.client.Close()
	var ne *nodeError
	if errors.As(err, &ne) {
		addr, err = ne.addr, ne.err
	}
	return s.connError(ctx, addr, err)
}

// configure reads the configuration the application's backends recorded
// under the prefix and sets, in bopts, the layout and stripes that the
// flags do not give: the newest record's (or, without a record, the
// defaults: the layout by the server, a counter per key). A record it
// cannot read is a note, not an error: the flags and defaults still work.
func (s *session) configure(ctx context.Context, o *options, bopts *redisbackend.Options) {
	recs, err := admin.RecordedConfigs(ctx, s.client, o.prefix)
	if err != nil {
		fmt.Fprintf(s.env.Stderr, "syncguard: note: cannot read the configuration the application recorded: %s; naming keys as the flags say\n", oneLine(message(err)))
		s.unread = true
		return
	}
	s.recorded = recs
	if len(recs) == 0 {
		return
	}
	if bopts.Layout == redisbackend.LayoutAuto {
		bopts.Layout = recs[0].Layout
	}
	if !o.stripes.set {
		bopts.FenceStripes = recs[0].FenceStripes
	}
}

// noteConfig says on stderr when the keys are named otherwise than every
// record says: several configurations recorded (instances disagree, or a
// configuration changed), or flags that differ from the newest.
// Without any record it warns: the server (or the prefix) is likely not
// the application's, and it names the server read. A server chosen by
// default is named either way, so that output from the wrong server is
// never taken for the application's.
func (s *session) noteConfig(o *options) {
	if len(s.recorded) == 0 && !s.unread {
		fmt.Fprintln(s.env.Stderr, "syncguard: warning: "+s.noRecord())
		return
	}
	if s.defaulted {
		fmt.Fprintf(s.env.Stderr, "syncguard: note: reading %s%s\n", s.where, defaultedNote)
	}
	if s.unread {
		return // whether there is a record is unknown; configure said so
	}
	used, newest := s.backend.Config(), s.recorded[0].Config
	switch {
	case used != newest:
		fmt.Fprintf(s.env.Stderr, "syncguard: note: naming keys as the flags say (%s), not as the application recorded (%s)\n", used, newest)
	case len(s.recorded) > 1:
		fmt.Fprintf(s.env.Stderr, "syncguard: note: instances on this prefix recorded %d configurations; naming keys as the newest (%s): see syncguard doctor\n",
			len(s.recorded), newest)
	}
}

// defaultedNote follows the server's address when no --redis or
// REDIS_URL named it.
const defaultedNote = " (the default: no --redis or REDIS_URL given)"

// noRecord says that the server holds no configuration record under the
// prefix, naming the server and how it was chosen.
func (s *session) noRecord() string {
	key, _ := redisbackend.ConfigKey(s.backend.Prefix()) // the prefix was validated
	how := ""
	if s.defaulted {
		how = defaultedNote
	}
	return fmt.Sprintf("%s%s holds no syncguard configuration record under the prefix (%s): no application's Backend has recorded one there; check --redis and --prefix",
		s.where, how, key)
}

type nodeError struct {
	addr string
	err  error
}

func (e *nodeError) Error() string { return e.addr + ": " + e.err.Error() }
func (e *nodeError) Unwrap() error { return e.err }

func parseLayout(s string) (redisbackend.Layout, error) {
	switch s {
	case "auto", "":
		return redisbackend.LayoutAuto, nil
	case "single":
		return redisbackend.LayoutSingle, nil
	case "cluster":
		return redisbackend.LayoutCluster, nil
	}
	return 0, usageErrorf("--layout %q: want auto, single or cluster", s)
}

// clusterOptions takes the seeds' addresses and the first URL's
// credentials and TLS settings.
func clusterOptions(opts []*redis.Options) *redis.ClusterOptions {
	first := opts[0]
	co := &redis.ClusterOptions{
		Username:              first.Username,
		Password:              first.Password,
		TLSConfig:             first.TLSConfig,
		ContextTimeoutEnabled: true, // a round trip ends at its deadline (boundHook)
	}
	for _, o := range opts {
		co.Addrs = append(co.Addrs, o.Addr)
	}
	return co
}

// isClusterNode reports whether the server says it is in cluster mode
// (INFO cluster); a server without INFO, such as miniredis, is not.
func isClusterNode(ctx context.Context, c *redis.Client) bool {
	info, err := c.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}

// tlsHint adds to a timeout on a rediss:// URL that the server may not
// speak TLS: the handshake then waits for an answer that never comes.
func tlsHint(o *redis.Options, err error) error {
	var ex *exitError
	if o.TLSConfig != nil && errors.As(err, &ex) && strings.Contains(ex.msg, "did not answer") {
		ex.msg += " (a rediss:// URL needs a server that speaks TLS on that port)"
	}
	return err
}

// redact returns u with its password replaced by "xxxxx", or a
// placeholder when u does not parse as a URL (it may hold one anyway).
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return p.Redacted()
}
