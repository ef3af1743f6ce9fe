package redisbackend_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The fleet test runs this test binary as worker processes: TestMain calls
// fleetWorker first, which runs one and exits when the environment asks
// for a worker.
const (
	fleetAddrEnv   = "SYNCGUARD_FLEET_WORKER_ADDR"
	fleetPrefixEnv = "SYNCGUARD_FLEET_WORKER_PREFIX"
	fleetRoundsEnv = "SYNCGUARD_FLEET_WORKER_ROUNDS"
)

// fleetWorker, in a worker process, takes the hot key rounds times with
// lock.Acquire on a Backend of its own (go-redis's default options) and,
// inside the critical section, INCRs and DECRs a counter on the server: a
// value other than 1 after the INCR means two holders at once. It prints
// "ok" or the violations and exits.
func fleetWorker() {
	addr := os.Getenv(fleetAddrEnv)
	if addr == "" {
		return
	}
	rounds, _ := strconv.Atoi(os.Getenv(fleetRoundsEnv))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: os.Getenv(fleetPrefixEnv)})
	if err != nil {
		fmt.Println("New:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	counter := os.Getenv(fleetPrefixEnv) + ":inside"
	bad := 0
	for range rounds {
		l, err := lock.Acquire(ctx, b, "hot", lock.WithTTL(10*time.Second), lock.WithWait(30*time.Second))
		if err != nil {
			fmt.Println("Acquire:", err)
			os.Exit(2)
		}
		if n := rdb.Incr(ctx, counter).Val(); n != 1 {
			bad++
		}
		rdb.Decr(ctx, counter)
		if err := b.Release(ctx, l.ID); err != nil {
			fmt.Println("Release:", err)
			os.Exit(2)
		}
	}
	_ = b.Close()
	if bad > 0 {
		fmt.Println("overlaps:", bad)
		os.Exit(1)
	}
	fmt.Println("ok")
	os.Exit(0)
}

// TestFleetMutualExclusion: 4 OS processes, each a Backend on its own
// client, take one hot key 150 times each with no pause between a release
// and the next acquisition (hand-offs through the queue, across
// processes): never two holders at once, every acquisition within its
// wait, and the grants spread over the processes.
func TestFleetMutualExclusion(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	const procs, rounds = 4, 150
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*strings.Builder, procs)
	for i := range cmds {
		outs[i] = &strings.Builder{}
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), fleetAddrEnv+"="+srv.Addr(), fleetPrefixEnv+"="+prefix, fleetRoundsEnv+"="+strconv.Itoa(rounds))
		c.Stdout, c.Stderr = outs[i], outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("worker %d: %v: %s", i, err, outs[i])
		}
	}
	rdb := srv.Client(t)
	ctx := context.Background()
	// Every grant took a fence: 600 of them, one key.
	fence := rdb.Get(ctx, prefix+":fence:"+prefix+":hot").Val()
	if fence != strconv.Itoa(procs*rounds) {
		t.Errorf("fence counter %q, want %d (one per acquisition)", fence, procs*rounds)
	}
	if n := rdb.Exists(ctx, prefix+":hot").Val(); n != 0 {
		t.Error("the hot key is still locked after every worker released")
	}
	if stats := rdb.Info(ctx, "commandstats").Val(); !strings.Contains(stats, "cmdstat_publish:") {
		t.Error("no hand-off was published: the workers never queued")
	}
}
