package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

func (s *server) retryPart(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "\n== Part 2: the first response lost, grpc-go's retry policy (UNAVAILABLE) sends it again ==\n")
	before := s.runs.Load()
	s.lose.Store(true)
	r := s.call(ctx, pay, "alice", "pay-2", "30.00")
	fmt.Fprintf(w, "  answer: %q, replayed %v; payments made for it: %d\n", r.msg, r.replayed, s.runs.Load()-before)
	if r.err != nil || !r.replayed || s.runs.Load()-before != 1 || s.lose.Load() {
		return fmt.Errorf("retry: %v, replayed %v, %d runs; want the stored response and one run", r.err, r.replayed, s.runs.Load()-before)
	}
	return nil
}

func (s *server) reusePart(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "\n== Part 3: alice's key pay-1 with another amount ==\n")
	r := s.call(ctx, pay, "alice", "pay-1", "99.00")
	fmt.Fprintf(w, "  answer: %s\n", status.Code(r.err))
	if status.Code(r.err) != codes.FailedPrecondition {
		return fmt.Errorf("reused key: %v, want FAILED_PRECONDITION", r.err)
	}
	return nil
}

func (s *server) limitPart(ctx context.Context, w io.Writer) error {
	fmt.Fprintf(w, "\n== Part 4: 5 reports of bob, at most %d per minute (ratelimit + grpclock.NewLimiter) ==\n", limit)
	limiter, err := grpclock.NewLimiter(s.backend,
		func(ctx context.Context, _ any) (string, error) { return userOf(ctx) },
		grpclock.WithLimit(limit), grpclock.WithTTL(time.Minute)) // shared by every instance on the backend
	if err != nil {
		return err
	}
	s.limit = ratelimit.UnaryServerInterceptor(limiter)
	ok := 0
	for i := range 5 {
		r := s.call(ctx, report, "bob", fmt.Sprintf("r-%d", i), "")
		pushback := r.trailer.Get(grpclock.PushbackKey)
		fmt.Fprintf(w, "  report %d: %s %v\n", i+1, status.Code(r.err), pushback)
		switch {
		case r.err == nil:
			ok++
		case status.Code(r.err) != codes.ResourceExhausted || len(pushback) != 1:
			return fmt.Errorf("report %d: %v, want OK or RESOURCE_EXHAUSTED with a pushback", i+1, r.err)
		}
	}
	if ok != limit {
		return fmt.Errorf("%d reports ran, want %d", ok, limit)
	}
	fmt.Fprintf(w, "OK: one payment per key however often sent, retries replayed, a reused key refused, %d reports per minute\n", limit)
	return nil
}
