package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestShowRouteRecord: show --route --scope --key-prefix finds the record
// replay mode stored for a request, also for a principal the key writes
// encoded (one that Unicode normalisation would change), and tells two
// principals that normalise alike apart.
func TestShowRouteRecord(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p, FenceStripes: redisbackend.DefaultFenceStripes})
	mw, err := httplock.New(b, httplock.FromHeader("Idempotency-Key"), httplock.WithPrefix("api:"),
		httplock.WithScope(func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }),
		httplock.WithReplay(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /orders/{id}", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "order of "+r.Header.Get("X-User"))
	})))
	web := httptest.NewServer(mux)
	defer web.Close()
	users := []string{"\u00e9", "e\u0301"} // NFC and NFD of one letter: two principals
	for _, user := range users {
		req, err := http.NewRequest(http.MethodPost, web.URL+"/orders/7", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", "k-1")
		req.Header.Set("X-User", user)
		res, err := web.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("request of %q: %d", user, res.StatusCode)
		}
	}
	for _, user := range users {
		r := syncguard(t, "show", "--json", "--redis", urlOf(srv), "--prefix", p,
			"--route", "POST /orders/{id}", "--scope", user, "--key-prefix", "api:", "k-1")
		var st state
		if r.code != 0 || json.Unmarshal([]byte(r.out), &st) != nil {
			t.Fatalf("show: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
		}
		want := "order of " + user
		if !st.HasRecord || st.Response == nil || st.Response.Status != http.StatusCreated || st.Response.BodyText != want {
			t.Errorf("show of %q: record %v at %q, response %+v; want 201 %q", user, st.HasRecord, st.RecordKey, st.Response, want)
		}
		if !strings.HasPrefix(st.RecordKey, p+":record:"+p+":api:POST /orders/{id}:") {
			t.Errorf("record key %q, want %s:record:%s:api:POST /orders/{id}:...", st.RecordKey, p, p)
		}
	}
}
