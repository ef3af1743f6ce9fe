package guardtest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// badInput checks that a's constructor refuses each bad Setup with an
// InvalidArgument *lock.Error whose message names the setting (each of
// names, as the option or Config field spells it), before any command
// reaches Redis.
func badInput(t *testing.T, a Adapter) {
	e := a.newEnv(t)
	replay := &Replay{}
	tests := []struct {
		desc  string
		s     Setup
		names []string
	}{
		{"nil backend", Setup{}, []string{"backend"}},
		{"nil key function", Setup{Backend: e.b, NoKey: true}, []string{"Key"}},
		{"replay without a scope decision", Setup{Backend: e.b, Replay: replay}, []string{"Scope", "Unscoped"}},
		{"a scope and unscoped", Setup{Backend: e.b, Scope: Principal, Public: true}, []string{"Unscoped"}},
		{"negative TTL", Setup{Backend: e.b, TTL: -time.Second}, []string{"TTL"}},
		{"TTL under MinTTL", Setup{Backend: e.b, TTL: time.Millisecond}, []string{"TTL"}},
		{"negative wait", Setup{Backend: e.b, Wait: -time.Second}, []string{"Wait"}},
		{"prefix not UTF-8", Setup{Backend: e.b, Prefix: "\xff"}, []string{"Prefix"}},
		{"limit over the maximum", Setup{Backend: e.b, Limit: lockdriver.MaxLimit + 1}, []string{"Limit"}},
		{"limit with replay", Setup{Backend: e.b, Limit: 2, Scope: Principal, Replay: replay}, []string{"Limit"}},
		{"replay failing open", Setup{Backend: e.b, FailOpen: true, Scope: Principal, Replay: replay}, []string{"FailOpen"}},
		{"replay TTL under 1ms", Setup{Backend: e.b, Scope: Principal, Replay: &Replay{TTL: time.Microsecond}}, []string{"Replay"}},
		{"a header replay cannot store", Setup{Backend: e.b, Scope: Principal, Replay: &Replay{Headers: []string{"Content-Length"}}}, []string{"Headers"}},
		{"negative replay body limit", Setup{Backend: e.b, Scope: Principal, Replay: &Replay{MaxBody: -1}}, []string{"MaxBody"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tt.s.Handler = func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) { ok(w) }
			before := e.cmds.Commands.Load()
			h, err := a.New(tt.s)
			var le *lock.Error
			switch {
			case err == nil:
				t.Fatalf("built %T; want an InvalidArgument error", h)
			case !errors.As(err, &le) || le.Code != lock.CodeInvalidArgument:
				t.Errorf("error %v (%T), want a *lock.Error with InvalidArgument", err, err)
			}
			for _, name := range tt.names {
				if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(name)) {
					t.Errorf("error %q does not name %s", err, name)
				}
			}
			if n := e.cmds.Commands.Load() - before; n != 0 {
				t.Errorf("%d Redis commands sent, want 0", n)
			}
		})
	}
}
