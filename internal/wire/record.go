package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Record is a response stored for replay (the HTTP middleware), as
// lock.Recorder.ReleaseRecord keeps it: the response
// to replay, or, when the response could not be stored (too large), the
// fact that the request completed. Its encoding (version 2):
//
//	"SGR" 0x02                     magic and format version
//	fence                          15 ASCII digits: the run that produced it
//	fingerprint                    32 bytes: SHA-256 of the request (the middleware's)
//	kind                           'r' a response to replay, 'c' completed, not replayable
//	status                         uint16, big endian, 200-599
//	header count                   uvarint (0 for 'c')
//	  name length, name            uvarint, canonical token; names ascending
//	  value count                  uvarint, at least 1
//	    value length, value        uvarint, no control characters but tab
//	trailer count, trailers        as the headers (0 for 'c')
//	body                           the rest (empty for 'c')
//
// Lengths are minimal uvarints, so a record has exactly one encoding:
// DecodeRecord accepts only what Encode writes.
type Record struct {
	// Fence is the fence of the run that produced it.
	Fence lock.Fence
	// Fingerprint identifies the request it answers.
	Fingerprint [FingerprintSize]byte
	// Completed is kind 'c': the request completed, its response was not
	// stored (Header, Trailer and Body are empty).
	Completed bool
	// Status is the response's status, 200 to 599.
	Status int
	// Header and Trailer are the stored headers and trailers.
	Header, Trailer http.Header
	// Body is the response body.
	Body []byte
}

// The record format's magic and limits: a record holds at most
// RecordMaxHeaders headers (and as many trailers), each with at most
// RecordMaxValues values; a name is at most RecordMaxName bytes, a value
// at most RecordMaxValue.
const (
	RecordMagic      = "SGR\x02"
	FingerprintSize  = 32
	RecordMaxHeaders = 64
	RecordMaxValues  = 64
	RecordMaxName    = 256
	RecordMaxValue   = 16 << 10
)

// ErrBadRecord is the cause of every DecodeRecord failure.
var ErrBadRecord = errors.New("not a syncguard replay record (version 2)")

// Encode returns the record's bytes.
func (r *Record) Encode() []byte {
	n := len(RecordMagic) + lockdriver.FenceDigits + FingerprintSize + 3 + len(r.Body) + 16
	for _, h := range []http.Header{r.Header, r.Trailer} {
		for name, vs := range h {
			n += len(name) + 4
			for _, v := range vs {
				n += len(v) + 3
			}
		}
	}
	b := make([]byte, 0, n)
	b = append(b, RecordMagic...)
	b = append(b, r.Fence...)
	b = append(b, r.Fingerprint[:]...)
	kind := byte('r')
	if r.Completed {
		kind = 'c'
	}
	b = append(b, kind)
	b = binary.BigEndian.AppendUint16(b, uint16(r.Status))
	b = appendHeader(b, r.Header)
	b = appendHeader(b, r.Trailer)
	return append(b, r.Body...)
}

// appendHeader appends h's encoding (count, then names ascending) to b.
func appendHeader(b []byte, h http.Header) []byte {
	names := slices.Sorted(maps.Keys(h))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		vs := h[name]
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return b
}

// DecodeRecord parses b, checking every field; it never panics, and
// returns an error wrapping ErrBadRecord for anything Encode cannot have
// written.
func DecodeRecord(b []byte) (*Record, error) {
	d := decoder{b: b}
	if !bytes.HasPrefix(b, []byte(RecordMagic)) {
		if len(b) >= len(RecordMagic) && string(b[:3]) == RecordMagic[:3] {
			return nil, fmt.Errorf("%w: format version %d", ErrBadRecord, b[3])
		}
		return nil, fmt.Errorf("%w: no magic (%d bytes)", ErrBadRecord, len(b))
	}
	d.b = b[len(RecordMagic):]
	r := &Record{}
	fence, err := lockdriver.ParseFence(string(d.next(lockdriver.FenceDigits)))
	if err != nil || d.err != nil {
		return nil, fmt.Errorf("%w: bad fence", ErrBadRecord)
	}
	r.Fence = fence
	copy(r.Fingerprint[:], d.next(FingerprintSize))
	kind := d.next(1)
	st := d.next(2)
	if d.err != nil {
		return nil, d.err
	}
	switch kind[0] {
	case 'r':
	case 'c':
		r.Completed = true
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrBadRecord, kind[0])
	}
	r.Status = int(binary.BigEndian.Uint16(st))
	if r.Status < 200 || r.Status > 599 {
		return nil, fmt.Errorf("%w: status %d", ErrBadRecord, r.Status)
	}
	r.Header = d.header()
	r.Trailer = d.header()
	if d.err != nil {
		return nil, d.err
	}
	r.Body = d.b
	if r.Completed && (r.Header != nil || r.Trailer != nil || len(r.Body) > 0) {
		return nil, fmt.Errorf("%w: a completed record with a response", ErrBadRecord)
	}
	return r, nil
}

// header reads a header block (see record); nil when it is empty.
func (d *decoder) header() http.Header {
	var h http.Header
	nh := d.count(RecordMaxHeaders, 0)
	if nh > 0 {
		h = make(http.Header, nh)
	}
	prev := ""
	for i := 0; i < nh && d.err == nil; i++ {
		name := string(d.next(d.count(RecordMaxName, 1)))
		if d.err != nil {
			break
		}
		if !ValidHeaderName(name) || http.CanonicalHeaderKey(name) != name || name <= prev {
			d.err = fmt.Errorf("%w: header name %q", ErrBadRecord, name)
			break
		}
		prev = name
		nv := d.count(RecordMaxValues, 1)
		vs := make([]string, 0, nv)
		for j := 0; j < nv && d.err == nil; j++ {
			v := string(d.next(d.count(RecordMaxValue, 0)))
			if !ValidHeaderValue(v) {
				d.err = fmt.Errorf("%w: a value of header %q", ErrBadRecord, name)
				break
			}
			vs = append(vs, v)
		}
		h[name] = vs
	}
	return h
}

// decoder reads a record's fields; the first failure sticks in err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) next(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = fmt.Errorf("%w: truncated", ErrBadRecord)
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

// count reads a minimal uvarint in [lo, hi].
func (d *decoder) count(hi, lo int) int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) || v < uint64(lo) || v > uint64(hi) {
		d.err = fmt.Errorf("%w: bad length or count", ErrBadRecord)
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// ValidHeaderName reports whether s is an RFC 9110 token, the syntax of a
// header field name.
func ValidHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c < 0x80 && isTokenPunct[c]:
		default:
			return false
		}
	}
	return true
}

var isTokenPunct = func() (t [0x80]bool) {
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// ValidHeaderValue reports whether s can be sent as a header field value:
// no control characters other than tab.
func ValidHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
