// Package transport sends redisbackend's commands on a go-redis client,
// out of the way of the lock semantics: every call returns by its
// context's deadline even while the server stalls, the script calls of
// concurrent goroutines share pipelines, and the resend window covers the
// copies of a command that go-redis may send after losing its reply.
//
// A Sender sends one command at a time (Do); Bounded bounds anything else
// that blocks on go-redis (a pipeline, a series of commands) by its
// context. A call that stops waiting returns an error matching ErrNotSent
// (the command did not run) or ErrAbandoned (it may have run), and the
// context's error.
package transport
