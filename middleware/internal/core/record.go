package core

import (
	"maps"
	"net/http"
	"slices"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// keepHeaders returns the allowed headers of h, for a record. A header
// that breaks the record's limits is left out rather than the record.
func (rp *replay) keepHeaders(h http.Header) http.Header {
	return KeepHeaders(h, func(name string) bool { return rp.headers[name] })
}

// KeepHeaders returns the headers of h that allowed accepts (by canonical
// name) and that fit a record's limits.
func KeepHeaders(h http.Header, allowed func(string) bool) http.Header {
	var out http.Header
	for name, vs := range h {
		cn := http.CanonicalHeaderKey(name)
		if !allowed(cn) || len(vs) == 0 || len(vs) > wire.RecordMaxValues || len(cn) > wire.RecordMaxName ||
			slices.ContainsFunc(vs, func(v string) bool { return len(v) > wire.RecordMaxValue || !wire.ValidHeaderValue(v) }) {
			continue
		}
		if out == nil {
			out = http.Header{}
		}
		out[cn] = append(out[cn], vs...)
		if len(out[cn]) > wire.RecordMaxValues { // names differing only in case
			delete(out, cn)
		}
	}
	for len(out) > wire.RecordMaxHeaders {
		delete(out, slices.Max(slices.Collect(maps.Keys(out))))
	}
	return out
}
