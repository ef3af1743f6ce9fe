package echocore

import (
	"net/http"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
)

// Keys makes key extractors of type K over the context C.
type Keys[C any, K ~func(C) (string, error)] struct {
	Request         func(C) *http.Request
	ParamOf, FormOf func(C, string) string
}

// OnRequest reads the key from the request with f.
func (k Keys[C, K]) OnRequest(f guard.KeyFunc) K {
	return func(c C) (string, error) { return f(k.Request(c)) }
}

// Param reads the path parameter name.
func (k Keys[C, K]) Param(name string) K { return value[C, K]("path parameter", k.ParamOf, name) }

// Form reads the form value name.
func (k Keys[C, K]) Form(name string) K { return value[C, K]("form value", k.FormOf, name) }

// value reads what get gives for name; "" is a missing kind.
func value[C any, K ~func(C) (string, error)](kind string, get func(C, string) string, name string) K {
	return func(c C) (string, error) {
		if v := get(c, name); v != "" {
			return v, nil
		}
		return "", guard.Missing(kind, name)
	}
}

// sources maps each KeyLookup source to its extractor of a name.
func (k Keys[C, K]) sources() map[string]func(name string) K {
	return map[string]func(name string) K{
		"header":      func(n string) K { return k.OnRequest(guard.FromHeader(n)) },
		"idempotency": func(n string) K { return k.OnRequest(guard.FromIdempotencyHeader(n)) },
		"param":       k.Param,
		"query":       func(n string) K { return k.OnRequest(guard.FromQuery(n)) },
		"form":        k.Form,
		"cookie":      func(n string) K { return k.OnRequest(guard.FromCookie(n)) },
	}
}

// Extractor returns the key extractor of a Config: extractor, or lookup
// parsed. Nil when neither is set, for the guard to refuse.
func (k Keys[C, K]) Extractor(lookup string, extractor K) (K, error) {
	switch {
	case lookup != "" && extractor != nil:
		return nil, lockdriver.InvalidArgument("config", "Config.KeyLookup and Config.KeyExtractor are both set; set one")
	case lookup == "":
		return extractor, nil
	}
	return core.ParseLookup[C]("Config.KeyLookup", lookup, k.sources())
}

// Compose joins the results of fns into one key (guard.Compose).
func Compose[C any, K ~func(C) (string, error)](fns ...K) K {
	parts := make([]func(C) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
