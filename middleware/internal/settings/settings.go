// Package settings holds what the options of every HTTP adapter set,
// before the guard checks it.
package settings

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// RouteScope says whether lock keys include the request's route.
type RouteScope int

// The route scopes; the default leaves the route out only for limits.
const (
	RouteDefault RouteScope = iota
	RouteOn
	RouteOff
)

// Settings is one middleware's configuration. Zero fields take defaults.
type Settings struct {
	Prefix string
	TTL    time.Duration
	Wait   time.Duration
	// BackendTimeout bounds each call to the backend.
	BackendTimeout time.Duration
	FailOpen       bool
	LockOptions    []lock.Option
	RouteScope     RouteScope
	Unscoped       bool
	ProblemBase    string
	Limit          int
	Replay         Replay
	ReplayOn       bool

	// Set records options given with a zero value that has no default
	// (WithTTL(0), WithLimit(0), WithReplay(0)), by option name.
	Set map[string]bool
	// Tuned names a replay option given, for the error without replay.
	Tuned string
	// Fields: the adapter is configured by struct fields, so errors name
	// "Config.TTL" rather than "WithTTL".
	Fields bool

	// HasKey and HasScope say that the adapter was given a key function
	// and a scope function; the adapter keeps the functions, typed.
	HasKey, HasScope bool
}

// Replay is replay mode's part of Settings.
type Replay struct {
	TTL            time.Duration
	Headers        []string // nil: the defaults
	MaxBody        int64
	MaxRequestBody int64
	Statuses       func(status int) bool
}

// Mark records that the option named name was given.
func (s *Settings) Mark(name string) {
	if s.Set == nil {
		s.Set = map[string]bool{}
	}
	s.Set[name] = true
}

// optionNames maps a setting to the option that sets it, where it is not
// "With" followed by the setting's name.
var optionNames = map[string]string{
	"Backend":               "the backend argument of New",
	"Key":                   "the key function argument",
	"Unscoped":              "Unscoped()",
	"Replay.TTL":            "WithReplay",
	"Replay.Headers":        "WithReplayHeaders",
	"Replay.MaxBody":        "WithReplayMaxBody",
	"Replay.MaxRequestBody": "WithReplayMaxRequestBody",
	"Replay.Statuses":       "WithReplayStatuses",
	"Stores":                "WithReplayCodes",
}

// fieldNames maps a setting to its Config field, where it is not
// "Config." followed by the setting's name.
var fieldNames = map[string]string{
	"Key":         "Config.KeyLookup or Config.KeyExtractor",
	"ProblemBase": "Config.ProblemTypeBase",
}

// Name returns how the caller spells the setting name: an option
// ("WithTTL") or a Config field ("Config.TTL").
func (s *Settings) Name(name string) string {
	if s.Fields {
		if n, ok := fieldNames[name]; ok {
			return n
		}
		return "Config." + name
	}
	if n, ok := optionNames[name]; ok {
		return n
	}
	if name == "ProblemBase" {
		return "WithProblemTypeBase"
	}
	return "With" + name
}

// Invalid returns the InvalidArgument error of a bad setting name.
func (s *Settings) Invalid(name, problem string) error {
	return lockdriver.InvalidArgument("config", s.Name(name)+": "+problem)
}

// Wrap returns err, a lock option's InvalidArgument error, as one that
// names the setting.
func (s *Settings) Wrap(name string, err error) error {
	return &lock.Error{Code: lock.CodeInvalidArgument, Op: "config", Msg: s.Name(name), Err: err}
}

type problemBaseKey struct{}

// WithProblemBase returns ctx carrying base, the URI the problem types of
// the default answers start with.
func WithProblemBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, problemBaseKey{}, base)
}

// ProblemBase returns the base set by WithProblemBase, or "".
func ProblemBase(ctx context.Context) string {
	b, _ := ctx.Value(problemBaseKey{}).(string)
	return b
}

// Request is what an HTTP adapter's options set: the shared Settings and
// the framework's functions, on its request type R (*http.Request,
// *gin.Context), with its answer types B (busy) and E (other refusals).
type Request[R, B, E any] struct {
	S           Settings
	Scope       func(R) (string, error)
	Fingerprint func(R) (string, error)
	Busy        B
	Error       E
	Skip        func(R) bool
}
