package lockdriver

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// MaxKeyBytes is the longest key accepted, in bytes after NFC.
const MaxKeyBytes = contract.MaxKeyBytes // 512

// NormalizeKey returns the NFC form of a user key, or an InvalidArgument
// error (docs/backends.md has the rules).
func NormalizeKey(key string) (string, error) {
	if key == "" {
		return "", InvalidArgument("validate", "key must not be empty")
	}
	if !utf8.ValidString(key) {
		return "", InvalidArgument("validate", "key must be valid UTF-8")
	}
	// Most keys are ASCII, which is always in NFC.
	if !isASCII(key) {
		// A newer JavaScript may normalise unassigned code points.
		if !AllAssigned(key) {
			return "", InvalidArgument("validate", "key contains a code point not assigned in Unicode "+norm.Version+
				" (the version of Go's NFC tables); newer JavaScript runtimes may normalise it differently")
		}
		n := norm.NFC.String(key)
		// x/text inserts U+034F after 30 marks; JavaScript does not.
		if strings.Count(n, "\u034f") != strings.Count(key, "\u034f") {
			return "", InvalidArgument("validate", "key has a run of more than 30 combining marks")
		}
		key = n
	}
	if len(key) > MaxKeyBytes {
		return "", InvalidArgument("validate", "key exceeds "+strconv.Itoa(MaxKeyBytes)+" bytes after NFC normalisation")
	}
	return key, nil
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
