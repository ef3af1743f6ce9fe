package grpclock_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestBadConfig: every bad configuration is an InvalidArgument
// *lock.Error naming what is wrong, for each constructor, and nothing
// reaches Redis.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := grpclock.WithKeyFunc(grpclock.FromIdempotencyKey())
	replay := []grpclock.Option{key, grpclock.WithScope(user), httpguard.WithReplay(time.Minute)}
	tests := []struct {
		desc  string
		nilB  bool
		opts  []grpclock.Option
		want  string
		build func(lock.Backend, ...grpclock.Option) error
	}{
		{desc: "nil backend", nilB: true, opts: []grpclock.Option{key}, want: "backend"},
		{desc: "no key function", want: "WithKeyFunc"},
		{desc: "replay without a scope decision", opts: []grpclock.Option{key, httpguard.WithReplay(time.Minute)}, want: "WithScope"},
		{desc: "zero TTL", opts: []grpclock.Option{key, httpguard.WithTTL(0)}, want: "WithTTL"},
		{desc: "negative wait", opts: []grpclock.Option{key, httpguard.WithWait(-time.Second)}, want: "WithWait"},
		{desc: "limit of zero", opts: []grpclock.Option{key, httpguard.WithLimit(0)}, want: "WithLimit"},
		{desc: "HTTP statuses", opts: append(replay, httpguard.WithReplayStatuses(func(int) bool { return true })), want: "WithReplayCodes"},
		{desc: "problem type base", opts: []grpclock.Option{key, httpguard.WithProblemTypeBase("https://example.com/p/")}, want: "WithProblemTypeBase"},
		{desc: "reserved replay metadata", opts: append(replay, httpguard.WithReplayHeaders("grpc-status")), want: "WithReplayHeaders"},
		{desc: "replay codes without replay", opts: []grpclock.Option{key, grpclock.WithReplayCodes(func(codes.Code) bool { return true })}, want: "WithReplay"},
		{desc: "an HTTP key function", opts: []grpclock.Option{httplock.WithKeyFunc(httpguard.FromIdempotencyKey())}, want: "WithKeyFunc"},
		{desc: "an HTTP busy handler", opts: []grpclock.Option{key, httplock.WithBusyHandler(httpguard.DefaultBusyHandler)}, want: "WithBusyHandler"},
		{desc: "stream replay", opts: replay, want: "WithReplay", build: stream},
		{desc: "limiter without a limit", opts: []grpclock.Option{key, httpguard.WithTTL(time.Second)}, want: "WithLimit", build: limiter},
		{desc: "limiter without a window", opts: []grpclock.Option{key, httpguard.WithLimit(2)}, want: "WithTTL", build: limiter},
	}
	before := e.cmds.Commands.Load()
	for _, tt := range tests {
		build := tt.build
		if build == nil {
			build = unary
		}
		var b lock.Backend = e.b
		if tt.nilB {
			b = nil
		}
		err := build(b, tt.opts...)
		if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want InvalidArgument naming %s", tt.desc, err, tt.want)
		}
	}
	if n := e.cmds.Commands.Load() - before; n != 0 {
		t.Errorf("%d Redis commands, want none", n)
	}
	if err := unary(e.b, append(replay, httpguard.WithReplayHeaders("x-order"), httpguard.WithReplayMaxBody(10),
		grpclock.WithReplayCodes(func(codes.Code) bool { return true }))...); err != nil {
		t.Errorf("every replay option: %v", err)
	}
}

func unary(b lock.Backend, opts ...grpclock.Option) error {
	_, err := grpclock.UnaryServerInterceptor(b, opts...)
	return err
}

func stream(b lock.Backend, opts ...grpclock.Option) error {
	_, err := grpclock.StreamServerInterceptor(b, opts...)
	return err
}

func limiter(b lock.Backend, opts ...grpclock.Option) error {
	_, err := grpclock.NewLimiter(b, opts...)
	return err
}

// TestMetadataNames: the replay's metadata keys are httpguard's headers.
func TestMetadataNames(t *testing.T) {
	if grpclock.MetadataReplayed != strings.ToLower(httpguard.HeaderReplayed) ||
		grpclock.MetadataNotStored != strings.ToLower(httpguard.HeaderNotStored) ||
		http.CanonicalHeaderKey(grpclock.MetadataIdempotencyKey) != httpguard.HeaderIdempotencyKey {
		t.Error("the metadata keys differ from httpguard's header names")
	}
}
