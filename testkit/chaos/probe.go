package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// probe instruments a worker's go-redis client without changing its
// options: hooks that see what go-redis puts on the wire, so the report can
// say how often it re-sent a script command, a fault that loses script
// replies after the server ran the command, and a check of every busy
// acquire reply against the key's holder.
type probe struct {
	worker   int
	prefix   string        // the backend's key prefix, with its ':'
	observer *redis.Client // straight to redis-server, not through a proxy
	hist     *History
	stats    *probeStats
	// dropOneIn, while > 0, makes each script command's reply lost with
	// probability 1/dropOneIn (see probeConn).
	dropOneIn atomic.Int64
}

// probeStats is shared by the probes of a run.
type probeStats struct {
	calls     atomic.Int64 // script commands given to go-redis (once per command, whatever its retries)
	written   atomic.Int64 // script commands written to a connection (re-sends included)
	dropped   atomic.Int64 // replies lost by the client-side fault
	busy      atomic.Int64 // busy acquire replies checked against the holder
	unchecked atomic.Int64 // busy acquire replies the observer could not check (server down)
}

func (p *probe) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &probeConn{Conn: c, p: p}, nil
	}
}

func (p *probe) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		sent := time.Now()
		if isScript(cmd) {
			p.stats.calls.Add(1)
		}
		err := next(ctx, cmd)
		p.checkBusy(cmd, sent)
		return err
	}
}

func (p *probe) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		sent := time.Now()
		for _, cmd := range cmds {
			if isScript(cmd) {
				p.stats.calls.Add(1)
			}
		}
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			p.checkBusy(cmd, sent)
		}
		return err
	}
}

func isScript(cmd redis.Cmder) bool {
	switch strings.ToLower(cmd.Name()) {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}

// checkBusy looks at an acquire command that was answered "locked" and
// asks the server who holds the key. Held under the lock id the command
// itself carried, by a grant made since the command was handed to go-redis,
// it is a self-inflicted busy: an earlier copy of the same command (re-sent
// after its reply was lost) took the lock, and nobody knows it holds it.
// The acquire command is recognised by its keys (one of them is the fence
// key), so the check does not depend on the order of the script's
// arguments.
func (p *probe) checkBusy(cmd redis.Cmder, sent time.Time) {
	lockKey, id, reply, ok := p.busyAcquire(cmd)
	if !ok {
		return
	}
	answered := time.Now()
	p.stats.busy.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	raw, err := p.observer.Get(ctx, lockKey).Result()
	if err == redis.Nil {
		return
	}
	if err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") {
		// The sorted set of a concurrency limit's slots.
		p.checkSlotBusy(ctx, reply, lockKey, id, sent, answered)
		return
	}
	if err != nil {
		p.stats.unchecked.Add(1)
		return
	}
	p.checkLockBusy(raw, reply, lockKey, id, sent, answered)
}

// busyAcquire reports whether cmd is an acquire script answered busy, and
// returns its lock key, its lock id and the reply.
func (p *probe) busyAcquire(cmd redis.Cmder) (lockKey, id string, reply []interface{}, ok bool) {
	if !isScript(cmd) || cmd.Err() != nil {
		return "", "", nil, false
	}
	args := cmd.Args()
	if len(args) < 4 {
		return "", "", nil, false
	}
	nkeys, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || nkeys < 2 || len(args) < 3+nkeys {
		return "", "", nil, false
	}
	fences := 0
	for _, a := range args[3 : 3+nkeys] {
		k := fmt.Sprint(a)
		switch {
		case strings.HasPrefix(k, p.prefix+"fence:"):
			fences++
		case strings.HasPrefix(k, p.prefix+"id:"):
			id = strings.TrimPrefix(k, p.prefix+"id:")
		case lockKey == "":
			lockKey = k
		}
	}
	// One fence key: an acquire of one key. A multi-key acquire's busy
	// answer is about one of its keys; the history checks it.
	if fences != 1 || lockKey == "" || lockdriver.ValidateLockID(id) != nil {
		return "", "", nil, false
	}
	c, ok := cmd.(*redis.Cmd)
	if !ok {
		return "", "", nil, false
	}
	reply, _ = c.Val().([]interface{})
	if len(reply) == 0 {
		return "", "", nil, false
	}
	if status, _ := reply[0].(int64); status != 0 {
		return "", "", nil, false // granted, or not a contention answer
	}
	return lockKey, id, reply, true
}

// checkLockBusy is checkBusy for a lock, whose data raw the observer read
// after the busy reply.
func (p *probe) checkLockBusy(raw string, reply []interface{}, lockKey, id string, sent, answered time.Time) {
	var data struct {
		LockID       string `json:"lockId"`
		AcquiredAtMs int64  `json:"acquiredAtMs"`
		ExpiresAtMs  int64  `json:"expiresAtMs"`
		Fence        string `json:"fence"`
	}
	if json.Unmarshal([]byte(raw), &data) != nil || data.LockID != id {
		return
	}
	// The busy answer names the holder's expiry and fence: they must be
	// this lease's, so the answer was about it (not about an earlier
	// holder, with the same id taking the key just after: a hand-off from
	// the queue the busy attempt joined). The expiry alone cannot tell
	// when the earlier holder was granted and released in the
	// millisecond of the hand-off; the fence can.
	if len(reply) > 1 {
		if exp, ok := reply[1].(int64); ok && exp != data.ExpiresAtMs {
			return
		}
	}
	if len(reply) > 2 {
		if fence, ok := reply[2].(string); ok && fence != data.Fence {
			return
		}
	}
	// Granted to this lock id between the hand-over to go-redis and the
	// busy answer (server clock = host clock; 1 ms for truncation).
	if data.AcquiredAtMs < sent.UnixMilli()-1 || data.AcquiredAtMs > answered.UnixMilli()+1 {
		return
	}
	p.hist.Violation(Violation{KindSelfBusy, fmt.Sprintf(
		"key %s: acquire (worker %d) answered busy, but the key was held under its own lock id (fence %s, granted %d ms after the command was handed to go-redis)",
		lockdriver.HashKey(strings.TrimPrefix(lockKey, p.prefix)), p.worker, data.Fence, data.AcquiredAtMs-sent.UnixMilli())})
}

// checkSlotBusy is checkBusy for an acquire of a slot of the limit key
// lockKey, answered "all slots taken" (reply) while one of them may be
// the command's own lock id's: a slot granted to id between the hand-over
// of the command to go-redis and the answer, which the answer counted (it
// names that slot's expiry as the earliest), is a slot nobody knows it
// holds.
func (p *probe) checkSlotBusy(ctx context.Context, reply []interface{}, lockKey, id string, sent, answered time.Time) {
	score, err := p.observer.ZScore(ctx, lockKey, id).Result()
	if err == redis.Nil {
		return
	}
	idx, err2 := p.observer.Get(ctx, p.prefix+"id:"+id).Result()
	if err2 == redis.Nil {
		return
	}
	if err != nil || err2 != nil {
		p.stats.unchecked.Add(1)
		return
	}
	// The index of a slot: "\x01<fence> <acquiredAtMs> <n> ...".
	f := strings.SplitN(strings.TrimPrefix(idx, "\x01"), " ", 3)
	if !strings.HasPrefix(idx, "\x01") || len(f) < 3 {
		return
	}
	acquired, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return
	}
	if len(reply) < 2 || reply[1] != int64(score) {
		return
	}
	if acquired < sent.UnixMilli()-1 || acquired > answered.UnixMilli()+1 {
		return
	}
	p.hist.Violation(Violation{KindSelfBusy, fmt.Sprintf(
		"key %s: slot acquire (worker %d) answered all slots taken, but one was its own lock id's (fence %s, granted %d ms after the command was handed to go-redis)",
		lockdriver.HashKey(strings.TrimPrefix(lockKey, p.prefix)), p.worker, f[0], acquired-sent.UnixMilli())})
}

// probeConn is a worker's connection to its proxy. It counts script
// commands as they are written (go-redis's re-sends included), and
// implements the client half of the lost-reply fault: while the probe's
// dropOneIn is set, a write that carries a script command is, with that
// odds, marked so that the next read (the command's reply, sent by the
// server after running it) is swallowed and the connection closed, as if
// the connection broke after the command ran. go-redis sees io.EOF, which
// it retries: the command is sent again on a new connection.
type probeConn struct {
	net.Conn
	p    *probe
	drop atomic.Bool
}

var (
	evalshaBulk = []byte("\r\nevalsha\r\n")
	evalBulk    = []byte("\r\neval\r\n")
)

func (c *probeConn) Write(b []byte) (int, error) {
	lower := bytes.ToLower(b)
	if n := bytes.Count(lower, evalshaBulk) + bytes.Count(lower, evalBulk); n > 0 {
		c.p.stats.written.Add(int64(n))
		if d := c.p.dropOneIn.Load(); d > 0 && rand.Int64N(d) == 0 {
			c.drop.Store(true)
		}
	}
	return c.Conn.Write(b)
}

func (c *probeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.drop.Load() {
		c.p.stats.dropped.Add(1)
		_ = c.Conn.Close()
		return 0, io.EOF
	}
	return n, err
}
