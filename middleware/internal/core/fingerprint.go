package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// fingerprintSize is the size of a request fingerprint (SHA-256), as a
// record keeps it.
const fingerprintSize = wire.FingerprintSize

// readBody reads r's body for the fingerprint, at most rp.maxReqBody
// bytes, and gives r a new Body reading the same bytes, so that the key
// extractor and the handler read the request as sent. A body over the
// limit, or one cut short by an http.MaxBytesReader in front, gives an
// error matching ErrRequestTooLarge; r.Body then reads what was read,
// then the rest.
func (rp *replay) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, rp.maxReqBody+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), orig), orig}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, fmt.Errorf("%w: %w", guard.ErrRequestTooLarge, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", guard.ErrRequestBody, err)
	case int64(len(body)) > rp.maxReqBody:
		return nil, guard.ErrRequestTooLarge
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

// fingerprint identifies what a request asks for, so a key reused for a
// different request is told apart from a retry: SHA-256 over the method,
// the route (see [Route]), the request URI (path and query), the SHA-256
// of the body (from readBody) and extra (the application's own part),
// each length-prefixed. The scope is not part of it: it is part of the
// key.
func (rp *replay) fingerprint(r *http.Request, route string, body []byte, extra func() (string, error)) ([fingerprintSize]byte, error) {
	var fp [fingerprintSize]byte
	var x string
	if extra != nil {
		var err error
		if x, err = extra(); err != nil {
			return fp, fmt.Errorf("%w: %w", guard.ErrFingerprint, err)
		}
	}
	bodySum := sha256.Sum256(body)
	return FingerprintOf([]byte("syncguard-replay-v1"), []byte(r.Method), []byte(route),
		[]byte(r.URL.RequestURI()), bodySum[:], []byte(x)), nil
}

// FingerprintOf is the SHA-256 of parts, each length-prefixed, so that
// distinct lists of parts never give one input. The first part names the
// protocol, so that two protocols' fingerprints never meet.
func FingerprintOf(parts ...[]byte) [fingerprintSize]byte {
	var fp [fingerprintSize]byte
	h := sha256.New()
	for _, part := range parts {
		_, _ = h.Write(binary.AppendUvarint(nil, uint64(len(part))))
		_, _ = h.Write(part)
	}
	h.Sum(fp[:0])
	return fp
}
