// Package httpkey builds the lock keys of the HTTP middleware from their
// parts, so that the syncguard command names the keys the middleware locks.
// A key is
//
//	<prefix><route>:<scope>:<key>
//
// The route and the scope are escaped, so no two triples share a name.
// docs/redis-keys.md has the escaping rules.
package httpkey

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// MaxRouteBytes bounds the route part of a key: a longer route is replaced
// by a hash, so that it does not use up the key's 512 bytes.
const MaxRouteBytes = 96

// Markers after a '\' that escaping never writes.
const (
	encodedMark = `\=` // base64url of a part's bytes
	hashedMark  = `\#` // base64url of the first 16 bytes of a long route's SHA-256
)

// WriteEscaped writes p to b with each '\' and ':' preceded by '\'. The
// result has no unescaped ':'.
func WriteEscaped(b *strings.Builder, p string) {
	if !strings.ContainsAny(p, `\:`) {
		b.WriteString(p)
		return
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\\' || c == ':' {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
}

// Unescape undoes WriteEscaped; ok is false when s has a '\' that escaping
// cannot have written.
func Unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 == len(s) || (s[i+1] != '\\' && s[i+1] != ':') {
				return "", false
			}
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

// Stable reports whether p goes into a key as written: Unicode
// normalisation leaves it, and anything after it, unchanged. It is ASCII,
// or NFC text of assigned code points that starts at a normalisation
// boundary.
func Stable(p string) bool {
	if isASCII(p) {
		return true
	}
	return utf8.ValidString(p) && lockdriver.AllAssigned(p) && norm.NFC.IsNormalString(p) &&
		norm.NFC.FirstBoundaryInString(p) == 0
}

// writePart writes a route or scope part: escaped when Stable, else
// encoded.
func writePart(b *strings.Builder, p string) {
	if Stable(p) {
		WriteEscaped(b, p)
		return
	}
	b.WriteString(encodedMark)
	b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(p)))
}

// Route returns route as it goes into a key: escaped, encoded (see
// Stable), or a hash when long.
func Route(route string) string {
	var b strings.Builder
	writePart(&b, route)
	if b.Len() <= MaxRouteBytes {
		return b.String()
	}
	sum := sha256.Sum256([]byte(route))
	return hashedMark + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Build returns the key of the parts (route and scope empty when absent),
// and how many of its bytes come before key.
func Build(prefix, route, scope, key string) (name string, used int) {
	var b strings.Builder
	b.WriteString(prefix)
	if route != "" {
		b.WriteString(Route(route))
	}
	b.WriteByte(':')
	if scope != "" {
		writePart(&b, scope)
	}
	b.WriteByte(':')
	used = b.Len()
	if Stable(key) && !strings.HasPrefix(key, `\`) {
		b.WriteString(key)
	} else {
		b.WriteString(encodedMark)
		b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(key)))
	}
	return b.String(), used
}

// isASCII reports whether s is ASCII, which normalisation never changes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
