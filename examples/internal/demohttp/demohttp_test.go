package demohttp

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTally(t *testing.T) {
	rs := []Reply{{Status: 409}, {Status: 200}, {Status: 409}, {Status: 503}}
	if got, want := Tally(rs), "200: 1, 409: 2, 503: 1"; got != want {
		t.Errorf("Tally: got %q, want %q", got, want)
	}
}

// TestAuthenticate: the user comes from "Authorization: Bearer <user>"
// only; anything else stops at 401, and User fails outside Authenticate.
func TestAuthenticate(t *testing.T) {
	h := Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := User(r)
		if err != nil {
			t.Errorf("User behind Authenticate: %v", err)
		}
		w.Write([]byte(user))
	}))
	for _, tt := range []struct {
		header     http.Header
		code       int
		wantBody   string
		wantHeader string
	}{
		{header: As("alice", nil), code: http.StatusOK, wantBody: "alice"},
		{header: As("bob", http.Header{"X-User": {"alice"}}), code: http.StatusOK, wantBody: "bob"},
		{header: http.Header{"X-User": {"alice"}}, code: http.StatusUnauthorized, wantHeader: "Bearer"},
		{header: http.Header{"Authorization": {"Bearer "}}, code: http.StatusUnauthorized, wantHeader: "Bearer"},
		{header: http.Header{"Authorization": {"Basic YWxpY2U6"}}, code: http.StatusUnauthorized, wantHeader: "Bearer"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Header = tt.header
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.code || (tt.wantBody != "" && rec.Body.String() != tt.wantBody) || rec.Header().Get("WWW-Authenticate") != tt.wantHeader {
			t.Errorf("%v: %d %q (WWW-Authenticate %q), want %d %q (%q)", tt.header, rec.Code, rec.Body, rec.Header().Get("WWW-Authenticate"), tt.code, tt.wantBody, tt.wantHeader)
		}
	}
	if user, err := User(httptest.NewRequest(http.MethodGet, "/", nil)); err == nil {
		t.Errorf("User without Authenticate: %q, want an error", user)
	}
}

// TestAs: As adds Authorization to a copy, leaving its argument alone.
func TestAs(t *testing.T) {
	h := http.Header{"Idempotency-Key": {`"k1"`}}
	got := As("alice", h)
	if got.Get("Authorization") != "Bearer alice" || got.Get("Idempotency-Key") != `"k1"` {
		t.Errorf("As: %v", got)
	}
	if h.Get("Authorization") != "" {
		t.Errorf("As changed its argument: %v", h)
	}
}
