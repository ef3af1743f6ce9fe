package redistest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestLaunchClose(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil || os.Getenv(envNoRedis) == "1" {
		Start(t) // skips, or fails under SYNCGUARD_REQUIRE_REDIS=1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	s, err := Launch("", WithArgs("--maxclients", "100"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client(t)
	if got, err := c.ConfigGet(ctx, "maxclients").Result(); err != nil || got["maxclients"] != "100" {
		t.Errorf("CONFIG GET maxclients: got %v, %v; want 100 (WithArgs)", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("PING after Close: got an answer, want none")
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("data dir %s after Close: got %v, want it removed", s.dir, err)
	}
}

func TestLaunchNoBinary(t *testing.T) {
	if _, err := Launch("/nonexistent/redis-server"); err == nil {
		t.Error("Launch with a missing binary: got nil error")
	}
}

// TestLaunchOnATakenPort: a server launched on a port another server holds
// (a free port taken by another test between the pick and the bind) fails
// with errAddrInUse, so startFresh picks another port; it must not take the
// other server's PONG for its own readiness.
func TestLaunchOnATakenPort(t *testing.T) {
	other := Start(t)
	s := &Server{dir: t.TempDir(), bin: other.bin, port: other.port, addr: other.addr}
	err := s.launch()
	if err == nil {
		_ = s.stop()
		t.Fatal("launch on a taken port succeeded: the readiness check answered by the other server")
	}
	if !errors.Is(err, errAddrInUse) {
		t.Fatalf("launch on a taken port: %v, want errAddrInUse", err)
	}
}
