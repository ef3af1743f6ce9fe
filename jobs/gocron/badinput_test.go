package gocronlock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// plainBackend hides every extension of a Backend: not a lock.Recorder.
type plainBackend struct{ lock.Backend }

// TestBadInput: NewLocker and NewElector refuse bad input with an
// InvalidArgument error naming it, without a command to Redis.
func TestBadInput(t *testing.T) {
	t.Parallel()
	in := instances(t, 1)[0]
	b := in.backend
	locker := []struct {
		desc string
		b    lock.Backend
		opts []gocronlock.Option
		want string
	}{
		{"nil backend", nil, nil, "backend is nil"},
		{"nil option", b, []gocronlock.Option{nil}, "nil option"},
		{"negative window", b, []gocronlock.Option{gocronlock.WithWindow(-time.Second)}, "window must not be negative"},
		{"tiny window", b, []gocronlock.Option{gocronlock.WithWindow(time.Microsecond)}, "at least 1ms"},
		{"window without Recorder", plainBackend{b}, nil, "lock.Recorder"},
		{"prefix not UTF-8", b, []gocronlock.Option{gocronlock.WithPrefix("\xff")}, "prefix must be valid UTF-8"},
		{"long prefix", b, []gocronlock.Option{gocronlock.WithPrefix(strings.Repeat("p", 257))}, "prefix exceeds 256 bytes"},
		{"bad TTL", b, []gocronlock.Option{gocronlock.WithLockOptions(lock.WithTTL(0))}, "ttl"},
		{"limit", b, []gocronlock.Option{gocronlock.WithLockOptions(lock.WithLimit(2))}, "WithLimit"},
	}
	for _, tc := range locker {
		_, err := gocronlock.NewLocker(tc.b, tc.opts...)
		checkInvalid(t, "NewLocker: "+tc.desc, err, tc.want)
	}
	elector := []struct {
		desc          string
		b             lock.Backend
		key, identity string
		opts          []election.Option
		want          string
	}{
		{"nil backend", nil, "k", "me", nil, "backend is nil"},
		{"empty key", b, "", "me", nil, "key is empty"},
		{"key not UTF-8", b, "\xff", "me", nil, "UTF-8"},
		{"empty identity", b, "k", "", nil, "identity is empty"},
		{"long identity", b, "k", strings.Repeat("i", 257), nil, "identity must be valid UTF-8 of at most 256 bytes"},
		{"short TTL", b, "k", "me", []election.Option{election.WithTTL(500 * time.Millisecond)}, "ttl must be at least 1s"},
		{"zero TTL", b, "k", "me", []election.Option{election.WithTTL(0)}, "ttl must be at least 1s"},
		{"slow heartbeat", b, "k", "me", []election.Option{election.WithTTL(3 * time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 2 * time.Second})}, "half the ttl"},
		{"negative heartbeat", b, "k", "me", []election.Option{election.WithHeartbeat(lock.Heartbeat{Interval: -time.Second})}, "heartbeat interval must not be negative"},
	}
	for _, tc := range elector {
		_, err := gocronlock.NewElector(tc.b, tc.key, tc.identity, tc.opts...)
		checkInvalid(t, "NewElector: "+tc.desc, err, tc.want)
	}
	e, err := gocronlock.NewElector(b, "k", "me")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.IsLeader(context.Background()); err != gocronlock.ErrNotLeader {
		t.Errorf("IsLeader before Start: got %v, want ErrNotLeader", err)
	}
	if n := in.cmds.Commands.Load(); n != 0 {
		t.Errorf("%d commands sent to Redis, want none", n)
	}
}

func checkInvalid(t *testing.T, desc string, err error, want string) {
	t.Helper()
	if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
		t.Errorf("%s: got %v, want InvalidArgument naming %q", desc, err, want)
	}
}
