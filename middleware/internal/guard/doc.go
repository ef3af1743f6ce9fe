// Package guard is the behaviour shared by the HTTP middleware adapters
// (httplock and echolock): it validates and namespaces a request's lock
// key, runs the handler under [lock.Do], and renders the answers for a busy
// key, a bad key and a failing backend as RFC 9457 problem details.
//
// The adapters only translate framework shapes: how a key is read from a
// request, how the held context reaches the handler, and the signatures of
// the overridable responses.
package guard
