package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
)

// fingerprintSize is the size of a request fingerprint (SHA-256).
const fingerprintSize = sha256.Size

// fingerprint identifies what a request asks for, so a key reused for a
// different request is told apart from a retry: SHA-256 over the method,
// the route (see [Route]), the request URI (path and query), the SHA-256
// of the body and extra (the application's own part, such as a tenant),
// each length-prefixed.
//
// It reads the body, at most rp.maxReqBody bytes (more is ErrRequestTooLarge),
// and gives r a new Body reading the same bytes, so the handler reads
// the request as sent.
func (rp *replay) fingerprint(r *http.Request, route string, extra func() (string, error)) ([fingerprintSize]byte, error) {
	var fp [fingerprintSize]byte
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, rp.maxReqBody+1))
		if err != nil {
			return fp, fmt.Errorf("%w: %w", ErrRequestBody, err)
		}
		if int64(len(body)) > rp.maxReqBody {
			return fp, ErrRequestTooLarge
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	var x string
	if extra != nil {
		var err error
		if x, err = extra(); err != nil {
			return fp, fmt.Errorf("%w: %w", ErrFingerprint, err)
		}
	}
	bodySum := sha256.Sum256(body)
	h := sha256.New()
	for _, part := range [][]byte{[]byte("syncguard-replay-v1"), []byte(r.Method), []byte(route),
		[]byte(r.URL.RequestURI()), bodySum[:], []byte(x)} {
		_, _ = h.Write(binary.AppendUvarint(nil, uint64(len(part))))
		_, _ = h.Write(part)
	}
	h.Sum(fp[:0])
	return fp, nil
}
