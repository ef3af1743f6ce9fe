package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/lock"
)

var releaseCommand = &command{
	name:    "release",
	args:    "--force [--yes] KEY",
	summary: "evict the holder of KEY, waking its waiters; the fence counter stays",
	detail: "Deletes the lock and its index key (never the fence counter) and wakes the key's waiters as a\n" +
		"release does. The holder is not told: until its next extend it may still write, with a fence\n" +
		"that is now stale, which resources that check fences refuse. On a terminal it asks first.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.BoolVar(&o.force, "force", false, "required: release a lock this command does not hold")
		fs.BoolVar(&o.yes, "yes", false, "do not ask for confirmation (needed when stdin is not a terminal)")
	},
	check: func(o *options, args []string) error {
		if _, err := oneKey("release", args); err != nil {
			return err
		}
		if !o.force {
			return usageErrorf("release needs --force: it evicts a holder that may still be working (see syncguard help release)")
		}
		return nil
	},
	run: runRelease,
}

func runRelease(ctx context.Context, s *session, o *options, args []string) error {
	key, err := oneKey("release", args)
	if err != nil {
		return err
	}
	st, err := s.read(ctx, key)
	if err != nil {
		return err
	}
	if !st.Locked {
		return failf("%s is not locked: nothing released", display(st.Key))
	}
	w := s.env.Stdout
	l := st.Lock
	if !o.yes {
		if !s.env.Interactive {
			return usageErrorf("release --force asks for confirmation and stdin is not a terminal: add --yes")
		}
		fmt.Fprintf(s.env.Stderr, "%s is held by %s (fence %s, for %s, %s left).\n"+
			"Release it? Its holder is not told and may go on writing with a stale fence. [y/N] ",
			display(st.Key), l.Holder, l.Fence, duration(ms(l.AgeMs)), duration(ms(l.TTLMs)))
		answer, _ := bufio.NewReader(s.env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return failf("not confirmed: nothing released")
		}
	}
	info, err := s.backend.ForceRelease(ctx, key)
	switch {
	case errors.Is(err, lock.ErrNotHeld):
		return failf("%s is no longer locked (released or expired meanwhile): nothing released", display(st.Key))
	case err != nil:
		return failf("%s", message(err))
	}
	fmt.Fprintf(w, "released %s\n", display(st.Key))
	fmt.Fprintf(w, "  removed  %s (fence %s, holder %s, acquired %s)\n",
		display(st.LockKey), info.Fence, info.IDHash, timestamp(info.AcquiredAt))
	fmt.Fprintf(w, "  removed  its index key (a release tombstone stays there for the resend window)\n")
	counter := s.client.Get(ctx, st.FenceKey).Val() // for the report only
	fmt.Fprintf(w, "  kept     %s = %s (fence counters are never deleted)\n", display(st.FenceKey), counter)
	// A release hands the lock to the oldest waiter queued in Redis, if
	// any: say who has the key now.
	after, err := s.read(ctx, key)
	switch {
	case err != nil:
		fmt.Fprintf(w, "  now      unknown: %s\n", message(err))
	case after.Locked && after.Lock.Fence != info.Fence:
		fmt.Fprintf(w, "  now      held by %s (fence %s): handed on to a waiter, as a release does\n", after.Lock.Holder, after.Lock.Fence)
	default:
		fmt.Fprintf(w, "  now      free (waiters that poll take it at their next attempt)\n")
	}
	return nil
}
