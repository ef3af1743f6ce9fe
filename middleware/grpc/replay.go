package grpclock

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
)

// Metadata of replay mode: guard's HeaderReplayed and
// HeaderNotStored, as metadata keys.
const (
	// MetadataReplayed ("idempotent-replayed: true") marks the header
	// metadata of a replayed call.
	MetadataReplayed = "idempotent-replayed"
	// MetadataNotStored is a trailer of a call whose outcome is not, or
	// not yet, stored; its value is one of guard's NotStored values.
	MetadataNotStored = "idempotent-not-stored"
)

// replay answers a call on method in replay mode, through core.Recorded.
func (c *config) replay(ctx context.Context, key string, req any, method string, handler grpc.UnaryHandler) (any, error) {
	fp, err := c.fingerprintOf(ctx, method, req)
	if err != nil {
		return nil, c.refuse(ctx, method, err)
	}
	u := &unaryRun{c: c, req: req, method: method, handler: handler, fp: fp}
	r := c.g.Recorded(ctx, key, fp, u.run)
	switch r.Outcome {
	case core.Replayed:
		a, err := c.decode(r.Record)
		if err != nil {
			slog.ErrorContext(ctx, "syncguard: the record stored for this key is not a gRPC response this binary can replay; refusing its calls until it expires or is deleted",
				"key_hash", lockdriver.HashKey(key), "error", err)
			return nil, c.refuse(ctx, method, err)
		}
		_ = grpc.SetHeader(ctx, metadata.Join(a.header, metadata.Pairs(MetadataReplayed, "true")))
		if len(a.trailer) > 0 {
			_ = grpc.SetTrailer(ctx, a.trailer)
		}
		return a.resp, a.err
	case core.Ran:
		mark := u.mark
		if u.recorded {
			mark = r.StoreMark(ctx, key, mark)
		}
		if mark != "" {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(MetadataNotStored, mark))
		}
		return u.resp, u.err
	}
	return nil, c.refuse(ctx, method, r.Err)
}

// fingerprintOf identifies what a call asks for: its method, the SHA-256
// of its request message (deterministic protobuf encoding) and the
// application's part.
func (c *config) fingerprintOf(ctx context.Context, method string, req any) ([wire.FingerprintSize]byte, error) {
	var fp [wire.FingerprintSize]byte
	m, ok := req.(proto.Message)
	if !ok {
		return fp, fmt.Errorf("%w: the request is a %T, not a protobuf message", guard.ErrFingerprint, req)
	}
	if int64(proto.Size(m)) > c.maxReq {
		return fp, guard.ErrRequestTooLarge
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fp, fmt.Errorf("%w: %w", guard.ErrFingerprint, err)
	}
	var extra string
	if c.fingerprint != nil {
		if extra, err = c.fingerprint(ctx, req); err != nil {
			return fp, fmt.Errorf("%w: %w", guard.ErrFingerprint, err)
		}
	}
	sum := sha256.Sum256(b)
	return core.FingerprintOf([]byte("syncguard-grpc-v1"), []byte(method), sum[:], []byte(extra)), nil
}

// unaryRun is the run of one call in replay mode.
type unaryRun struct {
	c        *config
	req      any
	method   string
	handler  grpc.UnaryHandler
	fp       [wire.FingerprintSize]byte
	resp     any
	err      error
	mark     string // the mark of a response not stored whole
	recorded bool   // a record went to the release
}

func (u *unaryRun) run(held context.Context, l lock.Lease) ([]byte, error) {
	defer u.c.g.Timed(u.method)()
	hctx, cp := newCapture(held)
	u.resp, u.err = u.handler(hctx, u.req)
	rec, mark := u.c.encode(l, u.fp, u.resp, u.err, cp)
	u.mark, u.recorded = mark, rec != nil
	return rec, u.err
}
