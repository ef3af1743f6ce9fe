package lockdriver

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// MaxKeyBytes is the longest user key accepted, in UTF-8 bytes after NFC
// normalisation.
const MaxKeyBytes = contract.MaxKeyBytes // 512

// NormalizeKey validates a user key and returns its NFC form. The key must
// be non-empty valid UTF-8 of at most MaxKeyBytes bytes after normalisation;
// it is not trimmed. Two kinds of keys, whose NFC differs between Go and
// JavaScript, are refused so that both languages always map a key to the
// same storage key:
//   - keys with a code point not assigned in the Unicode version of Go's
//     NFC tables (norm.Version; see [AllAssigned]): a newer JavaScript
//     runtime may normalise such a character differently, as Node 20
//     (Unicode 17) does with "a\u0897\u0316" and "\U00016D67\U00016D67";
//   - keys with a run of more than 30 combining marks, where Go's NFC
//     inserts U+034F (the Stream-Safe Text Format) and JavaScript's does not.
//
// Otherwise it returns an [*lock.Error] with [lock.CodeInvalidArgument] (the key
// itself is never part of the message). No I/O is done.
func NormalizeKey(key string) (string, error) {
	if key == "" {
		return "", InvalidArgument("validate", "key must not be empty")
	}
	if !utf8.ValidString(key) {
		return "", InvalidArgument("validate", "key must be valid UTF-8")
	}
	// Fast path: most keys are ASCII, which is always in NFC.
	if !isASCII(key) {
		// Characters newer than Go's tables may normalise differently in
		// a newer JavaScript runtime (see unicode.go).
		if !AllAssigned(key) {
			return "", InvalidArgument("validate", "key contains a code point not assigned in Unicode "+norm.Version+
				" (the version of Go's NFC tables); newer JavaScript runtimes may normalise it differently")
		}
		n := norm.NFC.String(key)
		// x/text applies the Unicode Stream-Safe format: after 30
		// combining marks in a row it inserts U+034F, which JavaScript's
		// normalize("NFC") does not. Such a key would map to a different
		// Redis key than in the TypeScript library, so refuse it.
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

// isASCII reports whether s is ASCII, which is always in NFC.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
