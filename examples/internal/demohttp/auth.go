package demohttp

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
)

// userKey is the context key under which Authenticate puts the user.
type userKey struct{}

// Authenticate stands in for the application's authentication middleware.
// It accepts "Authorization: Bearer <user>" and puts the user in the
// request's context; otherwise it answers 401. Never take the principal
// from a header the client chooses.
func Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

// User returns the user Authenticate established for r, for
// httplock.WithScope and as httplock.New's key function.
func User(r *http.Request) (string, error) {
	user, ok := r.Context().Value(userKey{}).(string)
	if !ok || user == "" {
		return "", errors.New("not authenticated")
	}
	return user, nil
}

// As returns the headers of a request sent by user: a copy of h (which may
// be nil) with "Authorization: Bearer <user>".
func As(user string, h http.Header) http.Header {
	out := http.Header{}
	maps.Copy(out, h)
	out.Set("Authorization", "Bearer "+user)
	return out
}
