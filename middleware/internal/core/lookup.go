package core

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// ParseLookup turns a key lookup in Echo's extractor syntax, such as
// "param:tenant,idempotency:Idempotency-Key", into a key function of the
// framework's context C: sources maps each source name to the function
// of a name. Several parts are joined by guard.Compose. Errors are
// InvalidArgument and name field and the part at fault.
func ParseLookup[C any, K ~func(C) (string, error)](field, lookup string, sources map[string]func(name string) K) (K, error) {
	var parts []func(C) (string, error)
	for i, src := range strings.Split(lookup, ",") {
		src = strings.TrimSpace(src)
		kind, name, _ := strings.Cut(src, ":")
		_, known := sources[kind]
		if problem := lookupProblem(i, src, kind, name, known); problem != "" {
			return nil, lockdriver.InvalidArgument("config", fmt.Sprintf("%s %q: %s", field, lookup, problem))
		}
		parts = append(parts, sources[kind](name))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return guard.Compose(parts...), nil
}

// lookupProblem says what is wrong with the part src (number i) of a
// lookup, or "".
func lookupProblem(i int, src, kind, name string, known bool) string {
	switch {
	case src == "":
		return fmt.Sprintf("part %d is empty", i+1)
	case !strings.Contains(src, ":"):
		return fmt.Sprintf("part %q is not <source>:<name>, such as idempotency:Idempotency-Key or param:id", src)
	case !known:
		return fmt.Sprintf("part %q: unknown source %q (want header, idempotency, param, query, form or cookie)", src, kind)
	case name == "":
		return fmt.Sprintf("part %q has no name after %q", src, kind+":")
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("part %q: the name has leading or trailing space", src)
	case kind == "header" && strings.Contains(name, ":"):
		return fmt.Sprintf("part %q: a header value prefix (Echo's header:<name>:<prefix>) is not supported", src)
	case (kind == "header" || kind == "idempotency") && !wire.ValidHeaderName(name):
		return fmt.Sprintf("part %q: %q is not a valid header name", src, name)
	}
	return ""
}
