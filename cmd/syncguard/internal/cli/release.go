package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

var releaseCommand = &command{
	name:    "release",
	args:    "--force [--yes] [--all | --slot FENCE] [--route R] [--scope S] [--key-prefix NS] KEY",
	summary: "evict the holder of KEY (or slots of a limit, or readers), handing on to its waiters; the fence counter stays",
	detail: "Releases the lock as its holder would (never deleting the fence counter), so the key's oldest\n" +
		"waiter gets it as after a release. The holder is not told: until its next extend it may still\n" +
		"write, with a fence that is now stale, which resources that check fences refuse. On a\n" +
		"terminal it asks first.\n" +
		"On a concurrency limit (lock.WithLimit) it evicts nothing unless told which slots: --all\n" +
		"releases every live slot, --slot FENCE the one with that fence (as show lists them); each\n" +
		"freed slot goes to the oldest waiter whose n admits it.\n" +
		"On a read-write lock (lock/rwlock) it evicts the writer as it evicts a lock's holder; readers only\n" +
		"when told which: --all releases every reader, --slot FENCE the one with that fence (as show lists\n" +
		"them). It releases only the holders it asked about; once the key is free its oldest waiters get it.\n" +
		"--route, --scope and --key-prefix build the key of the HTTP middleware, as for show.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.BoolVar(&o.force, "force", false, "required: release a lock this command does not hold")
		fs.BoolVar(&o.yes, "yes", false, "do not ask for confirmation (needed when stdin is not a terminal)")
		fs.BoolVar(&o.all, "all", false, "on a concurrency limit or read-write lock: release every live slot or reader")
		fs.StringVar(&o.slot, "slot", "", "on a concurrency limit or read-write lock: release the slot or holder with this fence")
		o.keyFlags(fs)
	},
	check: func(o *options, args []string) error {
		if _, err := oneKey("release", args); err != nil {
			return err
		}
		if !o.force {
			return usageErrorf("release needs --force: it evicts a holder that may still be working (see syncguard help release)")
		}
		if o.all && o.slot != "" {
			return usageErrorf("release takes --all or --slot FENCE, not both")
		}
		if o.slot != "" {
			if _, err := parseSlotFence(o.slot); err != nil {
				return err
			}
		}
		return nil
	},
	run: runRelease,
}

// parseSlotFence parses --slot: a fence as show prints it, or its number
// without the leading zeros.
func parseSlotFence(v string) (lock.Fence, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err == nil {
		if f, err := lockdriver.FormatFence(n); err == nil && n > 0 {
			return f, nil
		}
	}
	return "", usageErrorf("--slot %q: want a fence, such as 000000000000042 or 42", v)
}

func runRelease(ctx context.Context, s *session, o *options, args []string) error {
	key, err := oneKey("release", args)
	if err != nil {
		return err
	}
	st, err := s.read(ctx, keyOf(o, key))
	if err != nil {
		return err
	}
	st.Request = requestOf(o, key)
	key = st.Key
	if st.Limit != nil && st.Limit.ReadWrite {
		return releaseRW(ctx, s, o, st)
	}
	if st.Limit != nil {
		return releaseSlots(ctx, s, o, st)
	}
	if !st.Locked {
		return failf("%s is not locked: nothing released", display(st.Key))
	}
	if o.slot != "" {
		return usageErrorf("%s is a lock, not a concurrency limit: drop --slot", display(st.Key))
	}
	w := s.env.Stdout
	l := st.Lock
	err = s.confirm(o, fmt.Sprintf("%s is held by %s (fence %s, for %s, %s left).\n"+
		"Release it? Its holder is not told and may go on writing with a stale fence. [y/N] ",
		display(st.Key), l.Holder, l.Fence, duration(ms(l.AgeMs)), duration(ms(l.TTLMs))))
	if err != nil {
		return err
	}
	info, err := admin.ForceRelease(ctx, s.backend, key)
	switch {
	case errors.Is(err, lock.ErrNotHeld):
		return failf("%s is no longer locked (released or expired meanwhile): nothing released", display(st.Key))
	case err != nil:
		return failf("%s", message(err))
	}
	fmt.Fprintf(w, "released %s\n", display(st.Key))
	st.printRequest(w)
	fmt.Fprintf(w, "  removed  %s (fence %s, holder %s, acquired %s)\n",
		display(st.LockKey), info.Fence, info.IDHash, timestamp(info.AcquiredAt))
	fmt.Fprintf(w, "  removed  its index key (a release tombstone stays there for the resend window)\n")
	s.printKept(ctx, st.FenceKey)
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

// confirm asks question on stderr unless --yes, and fails unless the
// answer is yes; without a terminal it requires --yes.
func (s *session) confirm(o *options, question string) error {
	if o.yes {
		return nil
	}
	if !s.env.Interactive {
		return usageErrorf("release --force asks for confirmation and stdin is not a terminal: add --yes")
	}
	fmt.Fprint(s.env.Stderr, question)
	answer, _ := bufio.NewReader(s.env.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return failf("not confirmed: nothing released")
	}
	return nil
}

// printKept reports the fence counter a release kept (for the report
// only: a failure to read it says so).
func (s *session) printKept(ctx context.Context, fenceKey string) {
	w := s.env.Stdout
	counter, err := s.client.Get(ctx, fenceKey).Result()
	switch {
	case err == nil:
		fmt.Fprintf(w, "  kept     %s = %s (fence counters are never deleted)\n", display(fenceKey), counter)
	case errors.Is(err, redis.Nil):
		fmt.Fprintf(w, "  kept     nothing at %s: the counter is MISSING (evicted, or lost in a restart): run syncguard doctor\n", display(fenceKey))
	default:
		fmt.Fprintf(w, "  kept     %s (fence counters are never deleted; not read: %s)\n", display(fenceKey), oneLine(err.Error()))
	}
}
