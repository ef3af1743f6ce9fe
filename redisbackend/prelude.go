package redisbackend

import (
	"fmt"
	"regexp"
	"strings"
)

// preludeConsts is prelude.lua without its helper functions, and
// preludeHelpers those functions, by name (splitPrelude).
var preludeConsts, preludeHelpers = splitPrelude(preludeSrc)

// helper is one top-level "local function name(params)" of prelude.lua:
// its parameter list and its body without comments.
type helper struct {
	params, body string
}

// splitPrelude splits prelude.lua into its helper functions, each from
// its "local function" line to the next line that is exactly "end", and
// the rest (the constants, with every comment outside the helpers).
func splitPrelude(src string) (string, map[string]helper) {
	helpers := map[string]helper{}
	lines := strings.SplitAfter(src, "\n")
	var consts strings.Builder
	for i := 0; i < len(lines); i++ {
		m := helperStart.FindStringSubmatch(lines[i])
		if m == nil {
			consts.WriteString(lines[i])
			continue
		}
		var body []string
		for i++; i < len(lines) && strings.TrimRight(lines[i], "\n") != "end"; i++ {
			if code := stripComment(lines[i]); strings.TrimSpace(code) != "" {
				body = append(body, code)
			}
		}
		if i == len(lines) {
			panic("redisbackend: prelude.lua: helper " + m[1] + " has no closing \"end\" line")
		}
		helpers[m[1]] = helper{params: m[2], body: strings.Join(body, "\n")}
	}
	return consts.String(), helpers
}

// helperStart matches the first line of a helper of prelude.lua.
var helperStart = regexp.MustCompile(`^local function ([A-Za-z_][A-Za-z0-9_]*)\(([^)]*)\)\s*$`)

// stripComment is line without its "--" comment (the scripts write "--"
// nowhere else).
func stripComment(line string) string {
	if i := strings.Index(line, "--"); i >= 0 {
		return strings.TrimRight(line[:i], " \t")
	}
	return strings.TrimRight(line, "\n")
}

// expandHelpers returns body with every call of a prelude helper (its
// name, not part of a longer name or a field, then "(") replaced by the
// helper as an anonymous function, "(function(params) body end)(": the
// closure is made only when that call runs. Comments are left as they are,
// and so is a call written in one (it is not code).
func expandHelpers(body string) string {
	return expandIn(body, 0)
}

func expandIn(body string, depth int) string {
	if depth > 4 {
		panic("redisbackend: prelude.lua: helpers call each other too deep")
	}
	lines := strings.SplitAfter(body, "\n")
	changed := false
	for i, line := range lines {
		code, rest := line, ""
		if j := strings.Index(line, "--"); j >= 0 {
			code, rest = line[:j], line[j:]
		}
		out := replaceCalls(code)
		if out != code {
			changed = true
			lines[i] = out + rest
		}
	}
	if !changed {
		return body
	}
	return expandIn(strings.Join(lines, ""), depth+1)
}

// replaceCalls replaces the helper calls in code, one line of a script
// without its comment.
func replaceCalls(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); {
		j := i
		for j < len(code) && isIdent(code[j]) {
			j++
		}
		if j == i {
			b.WriteByte(code[i])
			i++
			continue
		}
		name := code[i:j]
		h, ok := preludeHelpers[name]
		if ok && j < len(code) && code[j] == '(' && (i == 0 || code[i-1] != '.' && code[i-1] != ':') {
			fmt.Fprintf(&b, "(function(%s)\n%s\nend)", h.params, h.body)
		} else {
			b.WriteString(name)
		}
		i = j
	}
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
