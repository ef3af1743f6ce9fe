package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// server is the redis-server a run measures, and, under callgrind, how to
// read its counts.
type server struct {
	*redistest.Server
	rdb   *redis.Client
	dumps string // callgrind's dump directory; "" when not under callgrind
	pid   string
}

// start launches redis-server (under callgrind, collecting only inside
// the script commands, when c.callgrind) and a client of it.
func start(c config) (*server, error) {
	s := &server{}
	bin := c.bin
	if c.callgrind {
		path, err := exec.LookPath(c.bin)
		if err != nil {
			return nil, err
		}
		if s.dumps = c.dumps; s.dumps == "" {
			if s.dumps, err = os.MkdirTemp("", "scriptcost-"); err != nil {
				return nil, err
			}
		}
		wrapper := "#!/bin/sh\nexec valgrind --tool=callgrind --collect-atstart=no" +
			" --toggle-collect=evalShaCommand --toggle-collect=evalCommand --toggle-collect=fcallCommand" +
			" --callgrind-out-file=" + s.dumps + "/callgrind.out " + path + " \"$@\"\n"
		bin = filepath.Join(s.dumps, "redis-server")
		if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
			return nil, err
		}
	}
	rs, err := redistest.Launch(bin)
	if err != nil {
		return nil, err
	}
	s.Server = rs
	s.rdb = redis.NewClient(&redis.Options{Addr: rs.Addr()})
	s.pid = s.rdb.InfoMap(context.Background(), "server").Item("Server", "process_id")
	return s, nil
}

func (s *server) close() {
	s.rdb.Close()
	s.Server.Close()
}

// dump has callgrind dump its counts (which it then zeroes) and returns
// the instructions counted since the last dump.
func (s *server) dump(label string) (int64, error) {
	if out, err := exec.Command("callgrind_control", "--dump="+label, s.pid).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("callgrind_control: %v: %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(s.dumps, "callgrind.out.*"))
	var newest string
	var newestN int
	for _, f := range files {
		n, err := strconv.Atoi(f[strings.LastIndexByte(f, '.')+1:])
		if err == nil && n > newestN {
			newest, newestN = f, n
		}
	}
	raw, err := os.ReadFile(newest)
	if err != nil {
		return 0, err
	}
	if !strings.Contains(string(raw), label) {
		return 0, fmt.Errorf("newest dump %s is not %s", newest, label)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "totals: "); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no totals in %s", newest)
}
