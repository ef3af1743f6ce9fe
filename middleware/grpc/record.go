package grpclock

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
)

// A call's record is its response as grpc-go sends it over HTTP/2, in
// the HTTP replay's record (docs/grpc.md): status 200, these headers and
// the header metadata, the message as one uncompressed length-prefixed
// frame, these trailers and the trailer metadata.
const (
	contentType  = "application/grpc"
	hMessageType = "Grpc-Message-Type" // the message's full name
	tStatus      = "Grpc-Status"
	tMessage     = "Grpc-Message"
	tDetails     = "Grpc-Status-Details-Bin" // the google.rpc.Status
)

// reserved are metadata keys a record never holds, beside those starting
// with "grpc-": HTTP/2's and the replay's own.
var reserved = map[string]bool{"content-type": true, "te": true, "user-agent": true,
	MetadataReplayed: true, MetadataNotStored: true}

// encode returns the record of a call that ended with resp and err, and
// the mark of a response not stored whole ("" when it is).
func (c *config) encode(l lock.Lease, fp [wire.FingerprintSize]byte, resp any, err error, cp *capture) ([]byte, string) {
	st := status.Convert(err)
	if !c.stores(st.Code()) {
		return nil, guard.NotStoredStatus
	}
	hmd, tmd := cp.got()
	r := &wire.Record{Fence: l.Fence, Fingerprint: fp, Status: http.StatusOK,
		Header: c.headerOf(hmd, 2), Trailer: c.headerOf(tmd, 3)}
	r.Header.Set("Content-Type", contentType)
	r.Trailer.Set(tStatus, strconv.Itoa(int(st.Code())))
	var b []byte
	if st.Code() == codes.OK {
		m, ok := resp.(proto.Message)
		if !ok || m == nil {
			return nil, guard.NotStoredStatus // not a protobuf message
		}
		if int64(proto.Size(m)) > c.maxMsg {
			return completed(l, fp), guard.NotStoredTooLarge
		}
		if b, err = proto.Marshal(m); err != nil {
			return nil, guard.NotStoredStatus
		}
		r.Header.Set(hMessageType, string(m.ProtoReflect().Descriptor().FullName()))
		r.Body = binary.BigEndian.AppendUint32([]byte{0}, uint32(len(b)))
		r.Body = append(r.Body, b...)
		return r.Encode(), ""
	}
	sp, b, err := sent(st)
	if err != nil {
		return nil, guard.NotStoredStatus
	}
	details := base64.RawStdEncoding.EncodeToString(b)
	if len(details) > wire.RecordMaxValue {
		return completed(l, fp), guard.NotStoredTooLarge
	}
	r.Trailer.Set(tDetails, details)
	if msg := percentEncode(sp.GetMessage()); msg != "" && len(msg) <= wire.RecordMaxValue {
		r.Trailer.Set(tMessage, msg)
	}
	return r.Encode(), ""
}

// sent returns the status st as grpc-go's client receives it, and its
// encoding. grpc-go sends the message as UTF-8 with each byte that is not
// valid UTF-8 as U+FFFD, and the details in a google.rpc.Status only when
// the status marshals, which one with such a message does not: that
// status arrives as its code and message alone.
func sent(st *status.Status) (*spb.Status, []byte, error) {
	sp := st.Proto()
	if b, err := proto.Marshal(sp); err == nil {
		return sp, b, nil
	}
	sp = &spb.Status{Code: sp.GetCode(), Message: validUTF8(sp.GetMessage())}
	b, err := proto.Marshal(sp)
	return sp, b, err
}

// validUTF8 is s with each byte that is not valid UTF-8 replaced by
// U+FFFD, as grpc-go encodes a status message.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s) // utf8.RuneError, 1 for a byte that is not valid
		b.WriteRune(r)
		s = s[size:]
	}
	return b.String()
}

// completed is the record of a call whose response was too large.
func completed(l lock.Lease, fp [wire.FingerprintSize]byte) []byte {
	return (&wire.Record{Fence: l.Fence, Fingerprint: fp, Completed: true, Status: http.StatusOK}).Encode()
}

// headerOf returns the replayed keys of md as record headers, leaving
// room for n of the record's own; binary values in base64, as on the
// wire. What breaks the record's limits is left out.
func (c *config) headerOf(md metadata.MD, n int) http.Header {
	h := make(http.Header, len(md)+n)
	for k, vs := range md {
		if !c.replayed(k) {
			continue
		}
		vs = slices.Clone(vs)
		if strings.HasSuffix(k, "-bin") {
			for i, v := range vs {
				vs[i] = base64.RawStdEncoding.EncodeToString([]byte(v))
			}
		}
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h = core.KeepHeaders(h, func(string) bool { return true })
	for len(h) > wire.RecordMaxHeaders-n {
		delete(h, slices.Max(slices.Collect(maps.Keys(h))))
	}
	if h == nil {
		h = make(http.Header, n)
	}
	return h
}

// replayed reports whether the metadata key k is stored and replayed.
func (c *config) replayed(k string) bool {
	k = strings.ToLower(k)
	if strings.HasPrefix(k, "grpc-") || strings.HasPrefix(k, ":") || reserved[k] {
		return false
	}
	return c.headers == nil || c.headers[k]
}

// answer is a call's outcome as a record gives it back.
type answer struct {
	resp            any
	err             error
	header, trailer metadata.MD
}

// decode returns the answer the record r holds. Its error matches
// guard.ErrBadRecord.
func (c *config) decode(r *wire.Record) (*answer, error) {
	if r.Header.Get("Content-Type") != contentType {
		return nil, badRecord(errors.New("not a gRPC response"))
	}
	a := &answer{header: c.metadataOf(r.Header), trailer: c.metadataOf(r.Trailer)}
	if v := r.Trailer.Get(tDetails); v != "" {
		b, err := base64.RawStdEncoding.DecodeString(v)
		sp := &spb.Status{}
		if err == nil {
			err = proto.Unmarshal(b, sp)
		}
		if err != nil || sp.Code == 0 {
			return nil, badRecord(fmt.Errorf("status: %v", err))
		}
		a.err = status.ErrorProto(sp)
		return a, nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(r.Header.Get(hMessageType)))
	if err != nil {
		return nil, badRecord(fmt.Errorf("message type %q: %w", r.Header.Get(hMessageType), err))
	}
	body := r.Body
	if len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return nil, badRecord(errors.New("the message frame is malformed"))
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(body[5:], m); err != nil {
		return nil, badRecord(err)
	}
	a.resp = m
	return a, nil
}

// metadataOf returns the replayed headers of h as metadata.
func (c *config) metadataOf(h http.Header) metadata.MD {
	md := metadata.MD{}
	for name, vs := range h {
		k := strings.ToLower(name)
		if !c.replayed(k) {
			continue
		}
		for _, v := range vs {
			if strings.HasSuffix(k, "-bin") {
				b, err := base64.RawStdEncoding.DecodeString(v)
				if err != nil {
					continue
				}
				v = string(b)
			}
			md[k] = append(md[k], v)
		}
	}
	return md
}

func badRecord(err error) error { return fmt.Errorf("%w: %w", guard.ErrBadRecord, err) }

// percentEncode is the grpc-message encoding of s: bytes outside
// printable ASCII, and '%', as %XX.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= ' ' && c <= '~' && c != '%' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
