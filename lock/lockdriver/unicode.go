package lockdriver

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

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
