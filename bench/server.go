package main

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// server is the one redis-server a bench run measures against, started by
// redistest.Launch (see the package doc): a free loopback port (never
// 6379), a temp dir, persistence off, killed by Close and, on Linux, when
// this program dies.
type server struct {
	*redistest.Server
	Version string
}

func startServer(bin string) (*server, error) {
	rs, err := redistest.Launch(bin, redistest.WithArgs("--maxclients", "10000"))
	if err != nil {
		return nil, err
	}
	s := &server{Server: rs}
	c := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer c.Close()
	if info, err := c.Info(context.Background(), "server").Result(); err == nil {
		s.Version = infoField(info, "redis_version")
	}
	return s, nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// counter is a go-redis hook counting client round trips: one per command
// sent on its own, one per pipeline.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// newClient returns a client with the settings every library gets, and
// its round-trip counter.
func (s *server) newClient(poolSize int) (*redis.Client, *counter) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: poolSize})
	n := &counter{}
	c.AddHook(n)
	return c, n
}

// commandCalls sums INFO commandstats calls, leaving out the commands the
// harness itself or connection set-up sends (see harnessCommand). Commands
// run inside Lua scripts are counted by Redis too.
func commandCalls(ctx context.Context, c *redis.Client) (int64, error) {
	st, err := commandStats(ctx, c)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, s := range st {
		total += s.Calls
	}
	return total, nil
}

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct {
	Calls, Usec int64
}

// harnessCommand reports whether a command (INFO commandstats name,
// without "cmdstat_" and subcommand) is the harness's own or connection
// set-up: left out of every command figure.
func harnessCommand(name string) bool {
	switch name {
	case "info", "hello", "client", "ping", "flushall", "config":
		return true
	}
	return false
}

// commandStats returns INFO commandstats by command name (subcommands
// folded into their command), the harness's commands left out.
func commandStats(ctx context.Context, c *redis.Client) (map[string]cmdStat, error) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.SplitN(strings.TrimPrefix(name, "cmdstat_"), "|", 2)[0]
		if harnessCommand(name) {
			continue
		}
		s := out[name]
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				s.Calls += n
			} else if v, ok := strings.CutPrefix(f, "usec="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				s.Usec += n
			}
		}
		out[name] = s
	}
	return out, nil
}
