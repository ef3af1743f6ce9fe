package cli

import (
	"unicode/utf8"
)

// globMatch reports whether key matches pattern, a Redis glob (as SCAN
// MATCH and KEYS read it: * any run, ? one character, [abc] [^abc] [a-z]
// a class, \x the character x), matched against the key itself rather
// than the name Redis stores it under: a key longer than the storage
// budget is stored under a hash of it, which no pattern over the name
// could match. A character is a UTF-8 character here (Redis matches
// bytes): "caf?" matches "café".
func globMatch(pattern, key string) bool {
	// Iterative, with one backtracking point: the last '*' (as Redis's
	// stringmatchlen, without its recursion).
	p, k := 0, 0
	star, starK := -1, 0
	for k < len(key) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				if p == len(pattern) {
					return true
				}
				star, starK = p, k
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(key[k:])
				p++
				k += n
				continue
			case '[':
				r, n := utf8.DecodeRuneInString(key[k:])
				if end, ok := matchClass(pattern, p, r); ok {
					p = end
					k += n
					continue
				}
			default:
				c, pn := literal(pattern, p)
				r, n := utf8.DecodeRuneInString(key[k:])
				if c == r {
					p = pn
					k += n
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the last '*' take one more character and try again.
		_, n := utf8.DecodeRuneInString(key[starK:])
		starK += n
		p, k = star, starK
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// literal returns the character at pattern[p] (after a '\', the one it
// escapes) and the position after it.
func literal(pattern string, p int) (rune, int) {
	if pattern[p] == '\\' && p+1 < len(pattern) {
		p++
	}
	r, n := utf8.DecodeRuneInString(pattern[p:])
	return r, p + n
}

// matchClass matches r against the class "[...]" at pattern[p] and
// returns the position after the class, as Redis reads a class: "^" first
// negates, "\x" is x, "a-z" is a range (either way round; its end is the
// character after the '-', whatever it is), and a class without its
// closing ']' runs to the end of the pattern.
func matchClass(pattern string, p int, r rune) (int, bool) {
	p++ // '['
	not := p < len(pattern) && pattern[p] == '^'
	if not {
		p++
	}
	match := false
	for p < len(pattern) {
		if pattern[p] == '\\' && p+1 < len(pattern) {
			c, n := utf8.DecodeRuneInString(pattern[p+1:])
			match = match || c == r
			p += 1 + n
			continue
		}
		if pattern[p] == ']' {
			p++
			break
		}
		lo, n := utf8.DecodeRuneInString(pattern[p:])
		if p+n+1 < len(pattern) && pattern[p+n] == '-' {
			hi, m := utf8.DecodeRuneInString(pattern[p+n+1:])
			if lo > hi {
				lo, hi = hi, lo
			}
			match = match || (lo <= r && r <= hi)
			p += n + 1 + m
			continue
		}
		match = match || lo == r
		p += n
	}
	return p, match != not
}
