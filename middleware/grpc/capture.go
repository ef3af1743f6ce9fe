package grpclock

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// capture is the call's transport stream as the handler sees it in
// replay mode: it passes metadata on and keeps a copy of what went
// through, for the record.
type capture struct {
	grpc.ServerTransportStream
	mu              sync.Mutex
	header, trailer metadata.MD
}

// newCapture returns ctx with a capture of its transport stream, or ctx
// and nil when it has none (a handler called outside a server).
func newCapture(ctx context.Context) (context.Context, *capture) {
	sts := grpc.ServerTransportStreamFromContext(ctx)
	if sts == nil {
		return ctx, nil
	}
	c := &capture{ServerTransportStream: sts}
	return grpc.NewContextWithServerTransportStream(ctx, c), c
}

// SetHeader passes md on and keeps it.
func (c *capture) SetHeader(md metadata.MD) error {
	return c.keep(&c.header, md, c.ServerTransportStream.SetHeader(md))
}

// SendHeader passes md on and keeps it.
func (c *capture) SendHeader(md metadata.MD) error {
	return c.keep(&c.header, md, c.ServerTransportStream.SendHeader(md))
}

// SetTrailer passes md on and keeps it.
func (c *capture) SetTrailer(md metadata.MD) error {
	return c.keep(&c.trailer, md, c.ServerTransportStream.SetTrailer(md))
}

// keep adds md to *dst unless the stream refused it with err.
func (c *capture) keep(dst *metadata.MD, md metadata.MD, err error) error {
	if err == nil {
		c.mu.Lock()
		*dst = metadata.Join(*dst, md)
		c.mu.Unlock()
	}
	return err
}

// got returns copies of the metadata kept so far.
func (c *capture) got() (header, trailer metadata.MD) {
	if c == nil {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.header.Copy(), c.trailer.Copy()
}
