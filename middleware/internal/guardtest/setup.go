package guardtest

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Header is the request header the adapter under test must read the key
// from (its "from header" helper).
const Header = "X-Lock-Key"

// Statuses of the custom responses installed when Setup.Custom is set.
const (
	CustomBusyStatus  = http.StatusTooManyRequests
	CustomErrorStatus = http.StatusTeapot
)

// Handler is the application handler of a scenario. r.Context() must be
// the context the adapter gives the handler; l and ok are what the
// lock.LeaseFrom returns for r.Context().
type Handler func(w http.ResponseWriter, r *http.Request, l lock.Lease, ok bool)

// Setup is what a scenario asks the adapter to build.
type Setup struct {
	Backend  lock.Backend
	NoKey    bool   // build with a nil key function
	Prefix   string // the middleware's key namespace
	TTL      time.Duration
	Wait     time.Duration
	FailOpen bool
	// Custom asks for busy and error handlers that call WriteCustomBusy
	// and WriteCustomError.
	Custom bool
	// Skip, when not nil, is the skipper.
	Skip func(*http.Request) bool
	// Routes are the paths served, each for every method; nil means
	// {"/"}. Use paths that read the same to every router ("/orders").
	Routes []string
	// NoRouteScope turns route scoping off (httplock.WithRouteScope(false),
	// echolock.RouteScopeOff); RouteScope turns it on (for limits, whose
	// default is off).
	NoRouteScope, RouteScope bool
	// Scope, when not nil, is the request's scope (httplock.WithScope,
	// echolock.Config.Scope); see Principal.
	Scope func(*http.Request) (string, error)
	// Public asks for replay without a scope (httplock.Unscoped,
	// echolock.Config.Unscoped).
	Public bool
	// Replay, when not nil, turns replay mode on.
	Replay *Replay
	// Limit, when not 0, makes the key a concurrency limit of Limit slots
	// (httplock.WithLimit, echolock.Config.Limit).
	Limit   int
	Handler Handler
	// Front, when not nil, is middleware the application puts in front
	// of the adapter's handler (a recovering middleware, a body limit).
	Front func(http.Handler) http.Handler
}

// Replay is the replay mode a scenario asks for. Zero fields take the
// adapter's defaults (for httplock, WithReplay(DefaultReplayTTL)).
type Replay struct {
	TTL            time.Duration
	Headers        []string // nil: the default allow-list
	MaxBody        int64
	MaxRequestBody int64
	// Fingerprint, when not nil, is the application's part of the
	// fingerprint, read from the request.
	Fingerprint func(*http.Request) (string, error)
	// Statuses, when not nil, decides which statuses are stored.
	Statuses func(int) bool
}

// PrincipalHeader carries the principal of a scenario's request, as an
// authentication middleware would establish it; Principal reads it. (Only
// the suite takes a principal from a header: it stands in for the
// authentication in front.)
const PrincipalHeader = "X-Test-Principal"

// DefaultPrincipal is the principal of a request without PrincipalHeader.
const DefaultPrincipal = "alice"

// Principal is the scope function of the scenarios: the request's
// PrincipalHeader, DefaultPrincipal when it has none, and an error for
// the value "-" (a request that is not authenticated).
func Principal(r *http.Request) (string, error) {
	p := r.Header.Get(PrincipalHeader)
	switch p {
	case "":
		return DefaultPrincipal, nil
	case "-":
		return "", errors.New("not authenticated")
	}
	return p, nil
}

// RoutesOf returns s.Routes, or {"/"} when it is empty.
func RoutesOf(s Setup) []string {
	if len(s.Routes) == 0 {
		return []string{"/"}
	}
	return s.Routes
}

// Adapter builds the handler under test.
type Adapter struct {
	// New returns an http.Handler serving the paths RoutesOf(s) for
	// every method, each as a route of its own (a ServeMux pattern, an
	// Echo route), with the middleware configured from s in front of
	// s.Handler; or the error of the adapter's constructor.
	New func(s Setup) (http.Handler, error)
	// Build is New for a Setup that must build; Run sets it.
	Build func(t *testing.T, s Setup) http.Handler
	// RecoversPanics is true when Build's handler turns a handler panic
	// into a 500 response (Echo with its Recover middleware); otherwise
	// the panic must reach the caller of ServeHTTP.
	RecoversPanics bool
	// StatusAtFirstWrite is true when the framework's writer sends the
	// status at the first write or when the chain ends, not at
	// WriteHeader (gin's), so headers set after WriteHeader still go out.
	StatusAtFirstWrite bool

	proto protocol                                 // set by Run
	raw   func(t *testing.T, s Setup) http.Handler // Build as the adapter gave it
	acl   *aclEnv                                  // set by RunACL
}

// WriteCustomBusy is the busy handler installed for Setup.Custom.
func WriteCustomBusy(w http.ResponseWriter, retryAfter time.Duration, err error) {
	w.Header().Set("X-Custom-Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	w.Header().Set("X-Custom-Locked", strconv.FormatBool(isLocked(err)))
	w.WriteHeader(CustomBusyStatus)
}

// WriteCustomError is the error handler installed for Setup.Custom.
func WriteCustomError(w http.ResponseWriter, err error) {
	w.Header().Set("X-Custom-Code", string(lock.CodeOf(err)))
	w.WriteHeader(CustomErrorStatus)
}
