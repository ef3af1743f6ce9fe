package redisbackend

import (
	"fmt"
	"strings"
	"time"
)

// Features reports which optional features a Backend uses and why, as New
// decided them from Options and from the methods of the client. The lock
// operations themselves (every lock.Backend method, safe to run twice and
// bounded by their contexts) need only the redis.Scripter methods; each
// feature below needs more, which every go-redis client has but a wrapper
// that exposes only redis.Scripter does not.
type Features struct {
	// Notifications: lock.Acquire waits in the key's queue and a release
	// hands the lock straight to it (see Join and queue.go; the Backend
	// subscribes to a channel of its own while it has waiters) instead of
	// only polling with its backoff. Needs a Subscribe method; off with
	// Options.DisableNotifications and with Options.ReplicaAck.
	Notifications Feature
	// Coalescing: the script calls of concurrent goroutines share
	// pipelines (see Options.DisableCoalescing). Needs Pipeline and
	// Process methods.
	Coalescing Feature
	// BatchExtend: ExtendBatch (lock.Keep's batched keep-alive) sends a
	// batch in one pipeline instead of one Extend per lease. Needs a
	// Pipelined method.
	BatchExtend Feature
	// ReplicaAck: Acquire waits for replicas (Options.ReplicaAck). New
	// rejects ReplicaAck for a client that cannot pipeline to one node, so
	// it is on exactly when it was asked for.
	ReplicaAck Feature
	// DirectCalls: every call whose context has a deadline is sent from
	// its caller's goroutine, and go-redis ends it at the deadline. On
	// when the client's options set ContextTimeoutEnabled (and its
	// ReadTimeout and WriteTimeout are not -2). Off, a call goes out from
	// its caller's goroutine when its context has no deadline or one no
	// earlier than the client's own bound (its timeouts and retries), and
	// waits for its reply on a goroutine of its own otherwise (direct.go).
	DirectCalls Feature
	// ResendWindow is how long a finished release is remembered
	// (Options.ResendWindow).
	ResendWindow time.Duration
	// ResendWindowFrom says where ResendWindow came from:
	// "Options.ResendWindow", the client's options (retries, read timeout
	// and backoff of a client with an Options method), or go-redis's
	// defaults for a client whose options New cannot read.
	ResendWindowFrom string
}

// Feature is whether one optional feature is on, and what decided it.
type Feature struct {
	// On reports whether the feature is in use.
	On bool
	// Why names the option or the client method that decided On.
	Why string
}

// Features returns the optional features in use and why (see Features).
func (b *Backend) Features() Features { return b.features }

// String lists the features in one line, e.g. for a log.
func (f Features) String() string {
	var s strings.Builder
	for _, x := range []struct {
		name string
		f    Feature
	}{
		{"notifications", f.Notifications},
		{"coalescing", f.Coalescing},
		{"batch extend", f.BatchExtend},
		{"replica ack", f.ReplicaAck},
		{"direct calls", f.DirectCalls},
	} {
		state := "off"
		if x.f.On {
			state = "on"
		}
		fmt.Fprintf(&s, "%s %s (%s); ", x.name, state, x.f.Why)
	}
	fmt.Fprintf(&s, "resend window %v (%s)", f.ResendWindow, f.ResendWindowFrom)
	return s.String()
}

// Values of Feature.Why.
const (
	whyOption = "off by Options."
	whyLacks  = "the client (%T) has no %s method"
	whyHas    = "the client has %s"
)

// featuresOf works out the Features New gives a Backend on client with o;
// the resend window and its source come from New.
func featuresOf(client any, o Options, window time.Duration, windowFrom string) Features {
	f := Features{ResendWindow: window, ResendWindowFrom: windowFrom}
	_, canSub := client.(subscriber)
	switch {
	case o.DisableNotifications:
		f.Notifications.Why = whyOption + "DisableNotifications"
	case o.ReplicaAck.N > 0:
		f.Notifications.Why = whyOption + "ReplicaAck (a handed-off lease would skip the replicas' acknowledgement)"
	case canSub:
		f.Notifications = Feature{On: true, Why: fmt.Sprintf(whyHas, "Subscribe")}
	default:
		f.Notifications.Why = fmt.Sprintf(whyLacks, client, "Subscribe")
	}
	_, canCoalesce := client.(pipelineProcessor)
	switch {
	case o.DisableCoalescing:
		f.Coalescing.Why = whyOption + "DisableCoalescing"
	case canCoalesce:
		f.Coalescing = Feature{On: true, Why: fmt.Sprintf(whyHas, "Pipeline and Process")}
	default:
		f.Coalescing.Why = fmt.Sprintf(whyLacks, client, "Pipeline or Process")
	}
	if _, ok := client.(pipeliner); ok {
		f.BatchExtend = Feature{On: true, Why: fmt.Sprintf(whyHas, "Pipelined")}
	} else {
		f.BatchExtend.Why = fmt.Sprintf(whyLacks, client, "Pipelined")
	}
	if o.ReplicaAck.N > 0 {
		f.ReplicaAck = Feature{On: true, Why: fmt.Sprintf("Options.ReplicaAck (N %d, Timeout %v)", o.ReplicaAck.N, o.ReplicaAck.Timeout)}
	} else {
		f.ReplicaAck.Why = "Options.ReplicaAck is zero"
	}
	return f
}

// lacking reports whether the client, rather than an option, turned a
// feature off or left the resend window at go-redis's defaults.
func (f Features) lacking() bool {
	for _, x := range []Feature{f.Notifications, f.Coalescing, f.BatchExtend} {
		if !x.On && !strings.HasPrefix(x.Why, whyOption) {
			return true
		}
	}
	return f.ResendWindowFrom == windowFromDefaults
}
