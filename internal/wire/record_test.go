package wire

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func sampleRecord() *Record {
	r := &Record{Fence: "000000000000042", Status: http.StatusCreated,
		Header: http.Header{"Content-Type": {"application/json"}, "Link": {"</a>; rel=a", "</b>; rel=b"}, "Etag": {""}},
		Body:   []byte("{\"id\":1}\x00\xff")}
	copy(r.Fingerprint[:], bytes.Repeat([]byte{7}, FingerprintSize))
	return r
}

func TestRecordRoundTrip(t *testing.T) {
	withTrailer := sampleRecord()
	withTrailer.Trailer = http.Header{"X-Checksum": {"abc"}}
	for _, r := range []*Record{sampleRecord(), withTrailer, {Fence: "000000000000001", Status: 204},
		{Fence: "000000000000001", Status: 500}, {Fence: "000000000000002", Status: 201, Completed: true}} {
		b := r.Encode()
		got, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", r, err)
		}
		if !reflect.DeepEqual(got, r) && !(len(r.Header) == 0 && len(got.Header) == 0 && got.Status == r.Status && bytes.Equal(got.Body, r.Body)) {
			t.Errorf("decode(encode(r)) = %+v, want %+v", got, r)
		}
	}
}

// TestDecodeRecordRejects: every malformed or foreign value is an error
// matching ErrBadRecord, never a record.
func TestDecodeRecordRejects(t *testing.T) {
	good := sampleRecord().Encode()
	kind := len(RecordMagic) + 15 + FingerprintSize // offset of the kind
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
		{"bad fence", append(append([]byte(RecordMagic), "00000000000004x"...), good[19:]...)},
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
			r, err := DecodeRecord(tt.b)
			if r != nil || !errors.Is(err, ErrBadRecord) {
				t.Errorf("DecodeRecord = %+v, %v; want nil and a bad-record error", r, err)
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
	f.Add(sampleRecord().Encode())
	f.Add((&Record{Fence: "000000000000001", Status: 200}).Encode())
	f.Add([]byte("000000000000001"))
	f.Add([]byte("SGR\x02"))
	f.Add((&Record{Fence: "000000000000003", Status: 201, Completed: true}).Encode())
	f.Add([]byte(strings.Repeat("\xff", 64)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			if r != nil || !errors.Is(err, ErrBadRecord) {
				t.Fatalf("DecodeRecord(%q) = %+v, %v", b, r, err)
			}
			return
		}
		if r.Status < 200 || r.Status > 599 {
			t.Fatalf("decoded status %d", r.Status)
		}
		if again := r.Encode(); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed %q to %q", b, again)
		}
	})
}

// TestRecordBytes pins the stored bytes of a record (version 2): records
// written by earlier releases must stay readable, and the syncguard command
// decodes the same bytes.
func TestRecordBytes(t *testing.T) {
	r := &Record{Fence: "000000000000042", Status: 201, Header: http.Header{"Content-Type": {"a/b"}},
		Trailer: http.Header{"X-Sum": {"1"}}, Body: []byte("x")}
	copy(r.Fingerprint[:], bytes.Repeat([]byte{7}, FingerprintSize))
	want := "SGR\x02000000000000042" + strings.Repeat("\a", 32) + "r\x00\xc9" +
		"\x01\x0cContent-Type\x01\x03a/b" + "\x01\x05X-Sum\x01\x011" + "x"
	if got := string(r.Encode()); got != want {
		t.Errorf("Encode = %q, want %q", got, want)
	}
}
