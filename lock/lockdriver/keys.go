package lockdriver

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

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

// assigned is the set of code points assigned in norm.Version.
var assigned = assignedTable()

func assignedTable() *unicode.RangeTable {
	if t := rangetable.Assigned(norm.Version); t != nil {
		return t
	}
	// Not reached: x/text ships this table. Else accept ASCII only.
	return &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: utf8.RuneSelf - 1, Stride: 1}}, LatinOffset: 1}
}

// AllAssigned reports whether s is valid UTF-8 of code points assigned in
// the Unicode version of Go's NFC tables.
func AllAssigned(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf { // ASCII
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if !unicode.Is(assigned, r) {
			return false
		}
		i += size
	}
	return true
}

// HashKey returns syncguard's 96-bit hash of a key or lock id, 24 hex
// digits, for logs that must not reveal it. It is not cryptographic.
func HashKey(s string) string { return contract.HashKey(s) }
