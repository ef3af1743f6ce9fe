package asynqlock

import (
	"testing"
	"time"
)

// FuzzParseUniqueHeader: a header value parses without panicking, and a
// parsed one prints back to a value that parses to the same header.
func FuzzParseUniqueHeader(f *testing.F) {
	f.Add(uniqueHeader{key: "asynq-unique:default:t:ab", lease: 30 * time.Second, backstop: 24 * time.Hour}.String())
	f.Add("1000 1000 k")
	f.Add("1000 999 k")
	f.Add(" ")
	f.Add("-1 5 key with spaces")
	f.Fuzz(func(t *testing.T, v string) {
		h, err := parseUniqueHeader(v)
		if err != nil {
			return
		}
		if h.lease < MinTTL || h.backstop < h.lease || h.key == "" {
			t.Fatalf("parsed %q to %+v, which is not valid", v, h)
		}
		again, err := parseUniqueHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("%q: printed back %q parses to %+v, %v; want %+v", v, h.String(), again, err, h)
		}
	})
}
