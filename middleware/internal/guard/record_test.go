package guard

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func sampleRecord() *record {
	r := &record{fence: "000000000000042", status: http.StatusCreated,
		header: http.Header{"Content-Type": {"application/json"}, "Link": {"</a>; rel=a", "</b>; rel=b"}, "Etag": {""}},
		body:   []byte("{\"id\":1}\x00\xff")}
	copy(r.fingerprint[:], bytes.Repeat([]byte{7}, fingerprintSize))
	return r
}

func TestRecordRoundTrip(t *testing.T) {
	withTrailer := sampleRecord()
	withTrailer.trailer = http.Header{"X-Checksum": {"abc"}}
	for _, r := range []*record{sampleRecord(), withTrailer, {fence: "000000000000001", status: 204},
		{fence: "000000000000001", status: 500}, {fence: "000000000000002", status: 201, completed: true}} {
		b := r.encode()
		got, err := decodeRecord(b)
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", r, err)
		}
		if !reflect.DeepEqual(got, r) && !(len(r.header) == 0 && len(got.header) == 0 && got.status == r.status && bytes.Equal(got.body, r.body)) {
			t.Errorf("decode(encode(r)) = %+v, want %+v", got, r)
		}
	}
}

// TestDecodeRecordRejects: every malformed or foreign value is an error
// matching errBadRecord, never a record.
func TestDecodeRecordRejects(t *testing.T) {
	good := sampleRecord().encode()
	kind := len(recordMagic) + 15 + fingerprintSize // offset of the kind
	hdr := kind + 1                                 // offset of the status
	tests := []struct {
		desc string
		b    []byte
	}{
		{"empty", nil},
		{"a done marker (a fence)", []byte("000000000000001")},
		{"JSON", []byte(`{"status":200}`)},
		{"a newer version", append([]byte("SGR\x03"), good[4:]...)},
		{"version 1", append([]byte("SGR\x01"), good[4:]...)},
		{"unknown kind", patch(good, kind, 'x')},
		{"completed with a response", patch(good, kind, 'c')},
		{"truncated in the fence", good[:10]},
		{"truncated in the fingerprint", good[:30]},
		{"bad fence", append(append([]byte(recordMagic), "00000000000004x"...), good[19:]...)},
		{"status 600", patch(good, hdr, 0x02, 0x58)},
		{"status 0", patch(good, hdr, 0, 0)},
		{"status 199", patch(good, hdr, 0, 199)},
		{"header count over the limit", patch(good, hdr+2, 65)},
		{"truncated header name", good[:hdr+5]},
		{"header name not canonical", bytes.Replace(good, []byte("Content-Type"), []byte("content-type"), 1)},
		{"header name not a token", bytes.Replace(good, []byte("Content-Type"), []byte("Content Type"), 1)},
		{"header names out of order", bytes.Replace(good, []byte("Link"), []byte("Aaaa"), 1)},
		{"header value with a newline", bytes.Replace(good, []byte("application/json"), []byte("application\n/json"), 1)},
		{"non-minimal count", func() []byte {
			b := append([]byte{}, good[:hdr+2]...)
			b = append(b, 0x83, 0x00) // 3 as two bytes
			return append(b, good[hdr+3:]...)
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			r, err := decodeRecord(tt.b)
			if r != nil || !errors.Is(err, errBadRecord) {
				t.Errorf("decodeRecord = %+v, %v; want nil and a bad-record error", r, err)
			}
		})
	}
}

// patch returns a copy of b with bytes from off replaced by p.
func patch(b []byte, off int, p ...byte) []byte {
	c := append([]byte{}, b...)
	copy(c[off:], p)
	return c
}

// FuzzDecodeRecord: decoding never panics, and accepts exactly what
// encode writes: a value that decodes encodes back to the same bytes, so
// no corrupt or foreign value can replay as something it is not.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(sampleRecord().encode())
	f.Add((&record{fence: "000000000000001", status: 200}).encode())
	f.Add([]byte("000000000000001"))
	f.Add([]byte("SGR\x02"))
	f.Add((&record{fence: "000000000000003", status: 201, completed: true}).encode())
	f.Add([]byte(strings.Repeat("\xff", 64)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			if r != nil || !errors.Is(err, errBadRecord) {
				t.Fatalf("decodeRecord(%q) = %+v, %v", b, r, err)
			}
			return
		}
		if r.status < 200 || r.status > 599 {
			t.Fatalf("decoded status %d", r.status)
		}
		if again := r.encode(); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed %q to %q", b, again)
		}
	})
}
