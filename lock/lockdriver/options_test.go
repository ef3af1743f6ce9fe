package lockdriver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestValidateOptions: lock's own validation, reached from lockdriver.
func TestValidateOptions(t *testing.T) {
	if err := lockdriver.ValidateOptions(lock.WithTTL(time.Second), lock.WithLimit(3)); err != nil {
		t.Errorf("valid options: %v", err)
	}
	for _, o := range []lock.Option{lock.WithTTL(0), lock.WithWait(-1), lock.WithLimit(lockdriver.MaxLimit + 1)} {
		if err := lockdriver.ValidateOptions(o); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("ValidateOptions = %v, want InvalidArgument", err)
		}
	}
}

// TestValidateLimit: n's range, and a backend that is not an IDBackend
// (the embedded interfaces are nil: nothing is called).
func TestValidateLimit(t *testing.T) {
	if err := lockdriver.ValidateLimit(struct{ lock.Backend }{}, 2); lock.CodeOf(err) != lock.CodeInvalidArgument || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ValidateLimit on a backend without limits: %v", err)
	}
	if err := lockdriver.ValidateLimit(struct{ lock.IDBackend }{}, 2); err != nil {
		t.Errorf("ValidateLimit on a lock.IDBackend: %v", err)
	}
	if err := lockdriver.ValidateLimit(nil, 0); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("ValidateLimit(nil, 0): %v", err)
	}
	if err := lockdriver.ValidateLimit(nil, 2); err != nil {
		t.Errorf("ValidateLimit(nil, 2): %v", err)
	}
}

// TestExtension: an extension is found on a backend and under its hooks,
// and not where there is none.
func TestExtension(t *testing.T) {
	type pinger interface{ Ping() }
	plain := lock.WithHooks(lock.WithHooks(extBackend{}))
	if _, ok := lockdriver.Extension[lock.IDBackend](plain); ok {
		t.Error("Extension found an IDBackend under hooks of a plain backend")
	}
	if _, ok := lockdriver.Extension[pinger](plain); !ok {
		t.Error("Extension did not find the extension two hooks down")
	}
	if p, ok := lockdriver.Extension[pinger](extBackend{}); !ok || p == nil {
		t.Error("Extension did not find the backend's own extension")
	}
}

// extBackend is a lock.Backend with an extension of its own, Ping.
type extBackend struct{ lock.Backend }

func (extBackend) Ping()                           {}
func (extBackend) Capabilities() lock.Capabilities { return lock.Capabilities{} }
