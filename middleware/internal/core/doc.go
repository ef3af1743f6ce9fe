// Package core is the behaviour shared by the middleware adapters
// (httplock, echolock, ginlock and grpclock): it validates a request's lock key and scopes it
// by prefix and route, runs the handler under [lock.Do] ([Guard.Serve]),
// stores and replays responses in replay mode (a fingerprint per request,
// a versioned record written by lock.Recorder.ReleaseRecord), estimates
// Retry-After from each route's hold time, and renders the answers for a
// busy key, a bad key, a reused key and a failing backend as RFC 9457
// problem details.
//
// The adapters only translate framework shapes: how a key is read from a
// request, how the held context reaches the handler, and the signatures of
// the overridable responses.
package core
