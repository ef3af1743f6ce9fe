package guard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/syncguard-go/syncguard/lock"
)

// A record is a stored response, as ReleaseRecord keeps it: the response
// to replay, or, when the response could not be stored (too large), the
// fact that the request completed. Its encoding (version 2):
//
//	"SGR" 0x02                     magic and format version
//	fence                          15 ASCII digits: the run that produced it
//	fingerprint                    32 bytes (see fingerprint.go)
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
// decode accepts only what encode writes.
type record struct {
	fence       lock.Fence
	fingerprint [fingerprintSize]byte
	completed   bool // kind 'c': the request completed, its response was not stored
	status      int
	header      http.Header
	trailer     http.Header
	body        []byte
}

const (
	recordMagic   = "SGR\x02"
	maxRecHeaders = 64
	maxRecValues  = 64
	maxRecName    = 256
	maxRecValue   = 16 << 10
)

// errBadRecord is the cause under ErrBadRecord of every decoding failure.
var errBadRecord = errors.New("not a syncguard replay record (version 2)")

// encode returns the record's bytes.
func (r *record) encode() []byte {
	n := len(recordMagic) + lock.FenceDigits + fingerprintSize + 3 + len(r.body) + 16
	for _, h := range []http.Header{r.header, r.trailer} {
		for name, vs := range h {
			n += len(name) + 4
			for _, v := range vs {
				n += len(v) + 3
			}
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recordMagic...)
	b = append(b, r.fence...)
	b = append(b, r.fingerprint[:]...)
	kind := byte('r')
	if r.completed {
		kind = 'c'
	}
	b = append(b, kind)
	b = binary.BigEndian.AppendUint16(b, uint16(r.status))
	b = appendHeader(b, r.header)
	b = appendHeader(b, r.trailer)
	return append(b, r.body...)
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

// decodeRecord parses b, checking every field; it never panics, and
// returns an error wrapping errBadRecord for anything encode cannot have
// written.
func decodeRecord(b []byte) (*record, error) {
	d := decoder{b: b}
	if !bytes.HasPrefix(b, []byte(recordMagic)) {
		if len(b) >= len(recordMagic) && string(b[:3]) == recordMagic[:3] {
			return nil, fmt.Errorf("%w: format version %d", errBadRecord, b[3])
		}
		return nil, fmt.Errorf("%w: no magic (%d bytes)", errBadRecord, len(b))
	}
	d.b = b[len(recordMagic):]
	r := &record{}
	fence, err := lock.ParseFence(string(d.next(lock.FenceDigits)))
	if err != nil || d.err != nil {
		return nil, fmt.Errorf("%w: bad fence", errBadRecord)
	}
	r.fence = fence
	copy(r.fingerprint[:], d.next(fingerprintSize))
	kind := d.next(1)
	st := d.next(2)
	if d.err != nil {
		return nil, d.err
	}
	switch kind[0] {
	case 'r':
	case 'c':
		r.completed = true
	default:
		return nil, fmt.Errorf("%w: kind %q", errBadRecord, kind[0])
	}
	r.status = int(binary.BigEndian.Uint16(st))
	if r.status < 200 || r.status > 599 {
		return nil, fmt.Errorf("%w: status %d", errBadRecord, r.status)
	}
	r.header = d.header()
	r.trailer = d.header()
	if d.err != nil {
		return nil, d.err
	}
	r.body = d.b
	if r.completed && (r.header != nil || r.trailer != nil || len(r.body) > 0) {
		return nil, fmt.Errorf("%w: a completed record with a response", errBadRecord)
	}
	return r, nil
}

// header reads a header block (see record); nil when it is empty.
func (d *decoder) header() http.Header {
	var h http.Header
	nh := d.count(maxRecHeaders, 0)
	if nh > 0 {
		h = make(http.Header, nh)
	}
	prev := ""
	for i := 0; i < nh && d.err == nil; i++ {
		name := string(d.next(d.count(maxRecName, 1)))
		if d.err != nil {
			break
		}
		if !ValidHeaderName(name) || http.CanonicalHeaderKey(name) != name || name <= prev {
			d.err = fmt.Errorf("%w: header name %q", errBadRecord, name)
			break
		}
		prev = name
		nv := d.count(maxRecValues, 1)
		vs := make([]string, 0, nv)
		for j := 0; j < nv && d.err == nil; j++ {
			v := string(d.next(d.count(maxRecValue, 0)))
			if !validHeaderValue(v) {
				d.err = fmt.Errorf("%w: a value of header %q", errBadRecord, name)
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
		d.err = fmt.Errorf("%w: truncated", errBadRecord)
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
		d.err = fmt.Errorf("%w: bad length or count", errBadRecord)
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// keepHeaders returns the allowed headers of h, for a record. A header
// that breaks the record's limits is left out rather than the record.
func (rp *replay) keepHeaders(h http.Header) http.Header {
	return keepHeaders(h, func(name string) bool { return rp.headers[name] })
}

// keepHeaders returns the headers of h that allowed accepts (by canonical
// name) and that fit a record's limits.
func keepHeaders(h http.Header, allowed func(string) bool) http.Header {
	var out http.Header
	for name, vs := range h {
		cn := http.CanonicalHeaderKey(name)
		if !allowed(cn) || len(vs) == 0 || len(vs) > maxRecValues || len(cn) > maxRecName ||
			slices.ContainsFunc(vs, func(v string) bool { return len(v) > maxRecValue || !validHeaderValue(v) }) {
			continue
		}
		if out == nil {
			out = http.Header{}
		}
		out[cn] = append(out[cn], vs...)
		if len(out[cn]) > maxRecValues { // names differing only in case
			delete(out, cn)
		}
	}
	for len(out) > maxRecHeaders {
		delete(out, slices.Max(slices.Collect(maps.Keys(out))))
	}
	return out
}
