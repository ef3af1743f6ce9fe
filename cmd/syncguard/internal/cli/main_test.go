package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests.
func TestMain(m *testing.M) { redistest.Main(m) }

// result is what one run of the command printed and returned.
type result struct {
	out, err string
	code     int
}

// syncguard runs the command line args with stdin (not a terminal) and no
// REDIS_URL.
func syncguard(t *testing.T, args ...string) result {
	t.Helper()
	return syncguardWith(t, Env{Stdin: strings.NewReader("")}, args...)
}

func syncguardWith(t *testing.T, env Env, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return syncguardCtx(ctx, env, args...)
}

// syncguardCtx runs the command line args until ctx is done.
func syncguardCtx(ctx context.Context, env Env, args ...string) result {
	var out, errOut bytes.Buffer
	env.Stdout, env.Stderr = &out, &errOut
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	code := Run(ctx, args, env)
	return result{out: out.String(), err: errOut.String(), code: code}
}

// urlOf is the redis:// URL of a test server.
func urlOf(srv *redistest.Server) string { return "redis://" + srv.Addr() }

// newBackend returns a Backend on rdb under prefix, as an application
// would build it.
func newBackend(t *testing.T, rdb redis.UniversalClient, o redisbackend.Options) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(rdb, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// prefix is a key prefix of the test's own (redistest.Prefix without its
// trailing ':').
func prefix(t *testing.T) string { return strings.TrimSuffix(redistest.Prefix(t), ":") }

// lines splits output into its lines.
func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
