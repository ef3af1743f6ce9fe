package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestFromIdempotencyKey runs the shared cases (guardtest): the draft's
// structured-field string, the bare form, and the errors, which never
// contain the value.
func TestFromIdempotencyKey(t *testing.T) {
	e := echo.New()
	guardtest.RunIdempotencyKeyCases(t, func(r *http.Request) (string, error) {
		return echolock.FromIdempotencyKey()(e.NewContext(r, httptest.NewRecorder()))
	})
}

// TestFromIdempotencyKeyForms checks that a key sent quoted and sent bare
// is one key, unlike with FromHeader, which reads the value as written.
func TestFromIdempotencyKeyForms(t *testing.T) {
	e := echo.New()
	read := func(f echolock.KeyExtractor, v string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/orders", nil)
		req.Header.Set("Idempotency-Key", v)
		k, err := f(e.NewContext(req, httptest.NewRecorder()))
		if err != nil {
			t.Fatalf("key of %q: %v", v, err)
		}
		return k
	}
	quoted, bare := read(echolock.FromIdempotencyKey(), `"k-1"`), read(echolock.FromIdempotencyKey(), "k-1")
	if quoted != bare {
		t.Errorf("FromIdempotencyKey: quoted %q, bare %q; want one key", quoted, bare)
	}
	if got := read(echolock.FromHeader("Idempotency-Key"), `"k-1"`); got != `"k-1"` {
		t.Errorf("FromHeader = %q, want the value as written", got)
	}
}
