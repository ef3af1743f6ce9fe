package echolock

import (
	"fmt"
	"strings"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// lookupSources maps a KeyLookup source to the extractor of a name.
var lookupSources = map[string]func(name string) KeyExtractor{
	"header":      FromHeader,
	"idempotency": fromIdempotencyHeader,
	"param":       FromParam,
	"query":       FromQuery,
	"form":        FromForm,
	"cookie":      FromCookie,
}

// parseKeyLookup turns Config.KeyLookup into a KeyExtractor: one part is
// its extractor as is, several are joined by Compose. Errors have
// lock.CodeInvalidArgument and name the part at fault.
func parseKeyLookup(lookup string) (KeyExtractor, error) {
	sources := strings.Split(lookup, ",")
	parts := make([]KeyExtractor, 0, len(sources))
	for i, src := range sources {
		src = strings.TrimSpace(src)
		kind, name, found := strings.Cut(src, ":")
		from, known := lookupSources[kind]
		var problem string
		switch {
		case src == "":
			problem = fmt.Sprintf("part %d is empty", i+1)
		case !found:
			problem = fmt.Sprintf("part %q is not <source>:<name>, such as idempotency:Idempotency-Key or param:id", src)
		case !known:
			problem = fmt.Sprintf("part %q: unknown source %q (want header, idempotency, param, query, form or cookie)", src, kind)
		case name == "":
			problem = fmt.Sprintf("part %q has no name after %q", src, kind+":")
		case strings.TrimSpace(name) != name:
			problem = fmt.Sprintf("part %q: the name has leading or trailing space", src)
		case kind == "header" && strings.Contains(name, ":"):
			problem = fmt.Sprintf("part %q: a header value prefix (Echo's header:<name>:<prefix>) is not supported", src)
		case (kind == "header" || kind == "idempotency") && !guard.ValidHeaderName(name):
			problem = fmt.Sprintf("part %q: %q is not a valid header name", src, name)
		}
		if problem != "" {
			return nil, lockdriver.InvalidArgument("config", fmt.Sprintf("echolock: KeyLookup %q: %s", lookup, problem))
		}
		parts = append(parts, from(name))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return Compose(parts...), nil
}
