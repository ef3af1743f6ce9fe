package grpclock_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// TestBadConfig: every bad configuration is an InvalidArgument
// *lock.Error naming what is wrong, for each constructor, and nothing
// reaches Redis.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := grpclock.FromIdempotencyKey()
	replay := []grpclock.Option{grpclock.WithScope(user), grpclock.WithReplay(time.Minute)}
	tests := []struct {
		desc  string
		nilB  bool
		nokey bool
		opts  []grpclock.Option
		want  string
		build func(lock.Backend, grpclock.KeyFunc, ...grpclock.Option) error
	}{
		{desc: "nil backend", nilB: true, want: "backend"},
		{desc: "nil key function", nokey: true, want: "key function argument"},
		{desc: "nil key function, nil options", nokey: true, opts: []grpclock.Option{nil, nil}, want: "key function argument"},
		{desc: "replay without a scope decision", opts: []grpclock.Option{grpclock.WithReplay(time.Minute)}, want: "WithScope"},
		{desc: "zero TTL", opts: []grpclock.Option{grpclock.WithTTL(0)}, want: "WithTTL"},
		{desc: "negative wait", opts: []grpclock.Option{grpclock.WithWait(-time.Second)}, want: "WithWait"},
		{desc: "limit of zero", opts: []grpclock.Option{grpclock.WithLimit(0)}, want: "WithLimit"},
		{desc: "reserved replay metadata", opts: append(replay, grpclock.WithReplayHeaders("grpc-status")), want: "WithReplayHeaders"},
		{desc: "replay codes without replay", opts: []grpclock.Option{grpclock.WithReplayCodes(func(codes.Code) bool { return true })}, want: "WithReplay"},
		{desc: "stream replay", opts: replay, want: "WithReplay", build: stream},
		{desc: "stream without a key", nokey: true, want: "key function argument", build: stream},
		{desc: "limiter without a key", nokey: true, opts: []grpclock.Option{grpclock.WithLimit(2), grpclock.WithTTL(time.Second)}, want: "key function argument", build: limiter},
		{desc: "limiter without a limit", opts: []grpclock.Option{grpclock.WithTTL(time.Second)}, want: "WithLimit", build: limiter},
		{desc: "limiter without a window", opts: []grpclock.Option{grpclock.WithLimit(2)}, want: "WithTTL", build: limiter},
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
		k := key
		if tt.nokey {
			k = nil
		}
		err := build(b, k, tt.opts...)
		if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want InvalidArgument naming %s", tt.desc, err, tt.want)
		}
	}
	if n := e.cmds.Commands.Load() - before; n != 0 {
		t.Errorf("%d Redis commands, want none", n)
	}
	if err := unary(e.b, key, append(replay, nil, grpclock.WithReplayHeaders("x-order"), grpclock.WithReplayMaxBody(10),
		grpclock.WithReplayCodes(func(codes.Code) bool { return true }))...); err != nil {
		t.Errorf("every replay option, and a nil one: %v", err)
	}
}

// TestMust: the Must forms panic with the error of their constructor,
// and return the interceptor otherwise.
func TestMust(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if grpclock.MustUnaryServerInterceptor(e.b, grpclock.FromIdempotencyKey()) == nil ||
		grpclock.MustStreamServerInterceptor(e.b, grpclock.FromIdempotencyKey()) == nil {
		t.Error("Must form returned nil")
	}
	for name, f := range map[string]func(){
		"unary":  func() { grpclock.MustUnaryServerInterceptor(e.b, nil) },
		"stream": func() { grpclock.MustStreamServerInterceptor(nil, grpclock.FromIdempotencyKey()) },
	} {
		func() {
			defer func() {
				if err, _ := recover().(error); lock.CodeOf(err) != lock.CodeInvalidArgument {
					t.Errorf("%s: recovered %v, want an InvalidArgument error", name, err)
				}
			}()
			f()
		}()
	}
}

func unary(b lock.Backend, key grpclock.KeyFunc, opts ...grpclock.Option) error {
	_, err := grpclock.UnaryServerInterceptor(b, key, opts...)
	return err
}

func stream(b lock.Backend, key grpclock.KeyFunc, opts ...grpclock.Option) error {
	_, err := grpclock.StreamServerInterceptor(b, key, opts...)
	return err
}

func limiter(b lock.Backend, key grpclock.KeyFunc, opts ...grpclock.Option) error {
	_, err := grpclock.NewLimiter(b, key, opts...)
	return err
}

// TestMetadataNames: the replay's metadata keys are guard's headers.
func TestMetadataNames(t *testing.T) {
	if grpclock.MetadataReplayed != strings.ToLower(guard.HeaderReplayed) ||
		grpclock.MetadataNotStored != strings.ToLower(guard.HeaderNotStored) ||
		http.CanonicalHeaderKey(grpclock.MetadataIdempotencyKey) != guard.HeaderIdempotencyKey {
		t.Error("the metadata keys differ from guard's header names")
	}
}
