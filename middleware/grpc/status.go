package grpclock

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// ErrorDomain is the domain of the google.rpc.ErrorInfo in every refusal.
const ErrorDomain = "syncguard"

// PushbackKey is the trailer of a busy answer that grpc-go's retry
// policy waits for before its next attempt.
const PushbackKey = "grpc-retry-pushback-ms"

// codeOf is the status code of each of guard's answers
// (docs/grpc.md says why).
var codeOf = map[string]codes.Code{
	guard.TypeBusy:            codes.Aborted,
	guard.TypeLimitReached:    codes.ResourceExhausted,
	guard.TypeMisconfigured:   codes.Internal,
	guard.TypeInvalidKey:      codes.InvalidArgument,
	guard.TypeUnavailable:     codes.Unavailable,
	guard.TypeKeyReused:       codes.FailedPrecondition,
	guard.TypeRequestTooLarge: codes.InvalidArgument,
	guard.TypeBadRequestBody:  codes.InvalidArgument,
	guard.TypeBadRecord:       codes.Internal,
	guard.TypeNotReplayable:   codes.AlreadyExists,
	guard.TypeNoScope:         codes.Unauthenticated,
}

// refuse returns the status error of a call on route refused with err;
// a busy or unavailable answer also sets the pushback trailer on ctx's
// call. A backend that did not answer within the backend timeout is
// UNAVAILABLE: only the call's own end is a context error.
func (c *config) refuse(ctx context.Context, route string, err error) error {
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		return status.FromContextError(ctx.Err()).Err()
	case errors.Is(err, lock.ErrLocked):
		d := c.g.RetryAfter(route, err)
		pushback(ctx, d)
		return statusOf(guard.BusyProblem(d, err), d).Err()
	}
	p := guard.ErrorProblem(err)
	if p.Status == http.StatusServiceUnavailable {
		pushback(ctx, guard.UnavailableRetryAfter)
		return statusOf(p, guard.UnavailableRetryAfter).Err()
	}
	return statusOf(p, 0).Err()
}

// statusOf returns the gRPC status of one of guard's answers p: the
// code docs/grpc.md gives it, p's title and detail as the message, an
// ErrorInfo whose reason is p's type name ("LOCK_BUSY"), and a RetryInfo
// when retry is positive.
func statusOf(p guard.Problem, retry time.Duration) *status.Status {
	code, ok := codeOf[p.Type]
	if !ok {
		code = codes.Unavailable
	}
	name := strings.TrimPrefix(p.Type, guard.TypeURNPrefix)
	info := &errdetails.ErrorInfo{Reason: strings.ToUpper(strings.ReplaceAll(name, "-", "_")), Domain: ErrorDomain}
	if p.OriginalStatus != 0 {
		info.Metadata = map[string]string{"original_status": strconv.Itoa(p.OriginalStatus)}
	}
	st := status.New(code, p.Title+": "+p.Detail)
	var err error
	if retry > 0 {
		st, err = st.WithDetails(info, &errdetails.RetryInfo{RetryDelay: durationpb.New(retry)})
	} else {
		st, err = st.WithDetails(info)
	}
	if err != nil { // unreachable: both details marshal
		return status.New(code, p.Title+": "+p.Detail)
	}
	return st
}

// pushback sets the trailer that makes grpc-go's retry policy wait d,
// rounded up to the millisecond: the retry comes no earlier than d.
func pushback(ctx context.Context, d time.Duration) {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	_ = grpc.SetTrailer(ctx, metadata.Pairs(PushbackKey, strconv.FormatInt(int64(ms), 10)))
}
