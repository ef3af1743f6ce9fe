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
// request's context, where User reads it. A request without it gets 401.
//
// The user is the principal of the locks behind it: the scope of replay
// mode and the key of a per-user limit. Never take the principal from a
// header the client chooses, or from the path: any client could name
// another user there.
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

// User returns the user Authenticate established for r, or an error when
// r did not go through Authenticate. Its signature is that of
// httplock.WithScope's and httplock.WithKeyFunc's functions.
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
