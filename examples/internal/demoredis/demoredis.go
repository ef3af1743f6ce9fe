// Package demoredis gives the example programs their Redis: an embedded
// miniredis by default, so `make demo` needs no set-up, or the server at
// REDIS_URL. On a real server the examples use a random key prefix and
// never FLUSHALL; their lock keys expire on their own and only fence
// counters stay, as fence counters must.
package demoredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Connect starts an embedded miniredis when url is empty, and otherwise
// connects to the Redis server at url (checked with PING). It tells w
// which one it uses, and what the server does for fences (PrintCheck). It
// returns the client, the embedded server (nil for a real one), and a func
// that closes both.
func Connect(ctx context.Context, w io.Writer, url string) (*redis.Client, *miniredis.Miniredis, func(), error) {
	if url == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, nil, nil, err
		}
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		fmt.Fprintf(w, "Redis: embedded miniredis at %s (set REDIS_URL to use a real server)\n", mr.Addr())
		PrintCheck(ctx, w, rdb)
		return rdb, mr, func() { rdb.Close(); mr.Close() }, nil
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(o)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, nil, nil, fmt.Errorf("REDIS_URL: cannot reach %s: %w", o.Addr, err)
	}
	fmt.Fprintf(w, "Redis: %s, db %d (from REDIS_URL)\n", o.Addr, o.DB)
	PrintCheck(ctx, w, rdb)
	return rdb, nil, func() { rdb.Close() }, nil
}

// Prefix returns name, ':' and 12 random hex digits: a key prefix no other
// run shares.
func Prefix(name string) string {
	var b [6]byte
	rand.Read(b[:]) // never fails (Go 1.24+)
	return name + ":" + hex.EncodeToString(b[:])
}
