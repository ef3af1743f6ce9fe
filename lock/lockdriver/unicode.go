package lockdriver

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Why keys and prefixes must consist of assigned code points:
//
// Go's NFC (golang.org/x/text/unicode/norm) uses the tables of one Unicode
// version (norm.Version, 15.0.0 before Go 1.27), while a JavaScript runtime
// uses its own (Node 20: Unicode 17). A character assigned after the Go
// tables' version is "unassigned" to Go, which leaves it alone, but the
// newer runtime may reorder or compose it: "a\u0897\u0316" is
// "a\u0316\u0897" in Node and "\U00016D67\U00016D67" is "\U00016D68". The
// two languages would then store one key under two Redis keys and both
// hold the lock. Unicode's normalization stability policy guarantees that a
// string of characters assigned in version X has the same NFC in every
// later version, so refusing every code point that norm.Version does not
// assign makes Go agree with any newer JavaScript on every key Go accepts.
// Private-use characters (category Co) are assigned and accepted;
// noncharacters (such as U+FFFF) and reserved code points are not.

// assigned is the set of code points assigned in the normaliser's Unicode
// version, built once.
var assigned = assignedTable()

func assignedTable() *unicode.RangeTable {
	if t := rangetable.Assigned(norm.Version); t != nil {
		return t
	}
	// Not reached: x/text ships the assigned table for the version its
	// normaliser uses (both are chosen by the same build tags). Should
	// that ever change, accept ASCII only rather than keys whose NFC may
	// differ from JavaScript's.
	return &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: utf8.RuneSelf - 1, Stride: 1}}, LatinOffset: 1}
}

// AllAssigned reports whether s is valid UTF-8 and every code point in it
// is assigned (has a General Category other than Cn) in the Unicode
// version of the NFC tables that [NormalizeKey] uses (norm.Version of
// golang.org/x/text/unicode/norm). The NFC form of such a string is the
// same in that version and every later one, so JavaScript runtimes with
// newer Unicode tables normalise it exactly as Go does. Backends use it to
// validate key prefixes the way NormalizeKey validates keys.
func AllAssigned(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf { // ASCII is assigned in every version
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
