// Demo is the last part of make demo: it takes a few locks on an embedded
// Redis (miniredis) with the library, as an application would, then runs
// the syncguard command on that Redis to list them:
//
//	go run ./cmd/syncguard/internal/demo
//
// It exits non-zero when the command fails or lists other locks than the
// ones taken.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/cmd/syncguard/internal/cli"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncguard demo FAILED:", err)
		os.Exit(1)
	}
}

// run takes the demo's locks on a fresh miniredis and lists them with
// syncguard ls, writing the story to w.
func run(ctx context.Context, w io.Writer) error {
	mr, err := miniredis.Run()
	if err != nil {
		return err
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	b, err := redisbackend.New(rdb, nil) // prefix "syncguard": the server is the demo's own
	if err != nil {
		return err
	}
	defer b.Close()

	fmt.Fprintf(w, "== syncguard, the operator's command ==\n")
	fmt.Fprintf(w, "Redis: embedded miniredis at %s; an application takes locks:\n", mr.Addr())
	if err := takeLocks(ctx, b); err != nil {
		return err
	}
	fmt.Fprintln(w, "  invoice:42 held (its third holder), order:7 held, report:daily done and released,")
	fmt.Fprintln(w, "  exports:user-7 a concurrency limit of 3 with 2 slots taken")
	return list(ctx, w, "redis://"+mr.Addr())
}

// takeLocks takes what an application would leave for the operator to
// see: two held locks, a done marker and a concurrency limit.
func takeLocks(ctx context.Context, b *redisbackend.Backend) error {
	for i := range 3 { // invoice:42 changes hands twice: its fence is 3
		l, err := b.Acquire(ctx, "invoice:42", 30*time.Second)
		if err != nil {
			return err
		}
		if i < 2 {
			if err := b.Release(ctx, l.ID); err != nil {
				return err
			}
		}
	}
	if _, err := b.Acquire(ctx, "order:7", 2*time.Minute); err != nil {
		return err
	}
	report, err := b.Acquire(ctx, "report:daily", time.Minute)
	if err != nil {
		return err
	}
	if err := b.ReleaseDone(ctx, report, time.Hour); err != nil { // done: a marker, no lock
		return err
	}
	for range 2 { // two exports running under a limit of 3 (lock.WithLimit)
		id, err := b.NewLockID("exports:user-7")
		if err != nil {
			return err
		}
		if _, err := b.AcquireSlot(ctx, "exports:user-7", id, 3, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// list runs syncguard ls on the server at url and checks that it lists
// the locks and the limit takeLocks left.
func list(ctx context.Context, w io.Writer, url string) error {
	fmt.Fprintf(w, "\n$ syncguard ls --redis %s\n", url)
	var out strings.Builder
	code := cli.Run(ctx, []string{"ls", "--redis", url}, cli.Env{
		Stdin: strings.NewReader(""), Stdout: io.MultiWriter(w, &out), Stderr: w,
		Getenv: func(string) string { return "" },
	})
	if code != cli.ExitOK {
		return fmt.Errorf("syncguard ls exited %d", code)
	}
	if !strings.Contains(out.String(), "invoice:42") || !strings.Contains(out.String(), "order:7") ||
		!strings.Contains(out.String(), "exports:user-7") || !strings.Contains(out.String(), "\n2 locks, 1 limit (2 slots) (") {
		return fmt.Errorf("syncguard ls did not list the two locks and the limit held")
	}
	return nil
}
