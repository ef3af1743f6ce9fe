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

// A record is a stored response, as ReleaseRecord keeps it. Its encoding
// (version 1):
//
//	"SGR" 0x01                     magic and format version
//	fence                          15 ASCII digits: the run that produced it
//	fingerprint                    32 bytes (see fingerprint.go)
//	status                         uint16, big endian, 200-499
//	header count                   uvarint
//	  name length, name            uvarint, canonical token; names ascending
//	  value count                  uvarint, at least 1
//	    value length, value        uvarint, no control characters but tab
//	body                           the rest
//
// Lengths are minimal uvarints, so a record has exactly one encoding:
// decode accepts only what encode writes.
type record struct {
	fence       lock.Fence
	fingerprint [fingerprintSize]byte
	status      int
	header      http.Header
	body        []byte
}

const (
	recordMagic   = "SGR\x01"
	maxRecHeaders = 64
	maxRecValues  = 64
	maxRecName    = 256
	maxRecValue   = 16 << 10
)

// errBadRecord is the cause under ErrBadRecord of every decoding failure.
var errBadRecord = errors.New("not a syncguard replay record (version 1)")

// encode returns the record's bytes.
func (r *record) encode() []byte {
	names := slices.Sorted(maps.Keys(r.header))
	n := len(recordMagic) + lock.FenceDigits + fingerprintSize + 2 + len(r.body) + 8
	for _, name := range names {
		n += len(name) + 4
		for _, v := range r.header[name] {
			n += len(v) + 3
		}
	}
	b := make([]byte, 0, n)
	b = append(b, recordMagic...)
	b = append(b, r.fence...)
	b = append(b, r.fingerprint[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(r.status))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		vs := r.header[name]
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return append(b, r.body...)
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
	st := d.next(2)
	if d.err != nil {
		return nil, d.err
	}
	r.status = int(binary.BigEndian.Uint16(st))
	if !storable(r.status) {
		return nil, fmt.Errorf("%w: status %d", errBadRecord, r.status)
	}
	nh := d.count(maxRecHeaders, 0)
	if nh > 0 {
		r.header = make(http.Header, nh)
	}
	prev := ""
	for i := 0; i < nh && d.err == nil; i++ {
		name := string(d.next(d.count(maxRecName, 1)))
		if d.err != nil {
			break
		}
		if !ValidHeaderName(name) || http.CanonicalHeaderKey(name) != name || name <= prev {
			return nil, fmt.Errorf("%w: header name %q", errBadRecord, name)
		}
		prev = name
		nv := d.count(maxRecValues, 1)
		vs := make([]string, 0, nv)
		for j := 0; j < nv && d.err == nil; j++ {
			v := string(d.next(d.count(maxRecValue, 0)))
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("%w: a value of header %q", errBadRecord, name)
			}
			vs = append(vs, v)
		}
		r.header[name] = vs
	}
	if d.err != nil {
		return nil, d.err
	}
	r.body = d.b
	return r, nil
}

// storable reports whether a response with status may be stored: a
// final answer (2xx-4xx); a 5xx says the client may retry.
func storable(status int) bool { return 200 <= status && status <= 499 }

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
	var out http.Header
	for name, vs := range h {
		cn := http.CanonicalHeaderKey(name)
		if !rp.headers[cn] || len(vs) == 0 || len(vs) > maxRecValues || len(cn) > maxRecName ||
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
