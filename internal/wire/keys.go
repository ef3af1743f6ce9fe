package wire

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// MakeStorageKey builds a backend storage key from a namespace prefix and a
// normalised user key, as syncguard does: trailing ':' are stripped from
// prefix and the result is "prefix:key" when its byte length plus reserve
// fits in limit. Otherwise the key part is replaced by the base64url
// (unpadded) encoding of the first 16 bytes of SHA-256("prefix:key"), which
// keeps the mapping one-to-one in practice. reserve is the room kept for
// suffixes derived from the result. It returns [lock.CodeInvalidArgument] when
// even the hashed form does not fit.
func MakeStorageKey(prefix, key string, limit, reserve int) (string, error) {
	if limit < 0 || reserve < 0 {
		return "", lockdriver.InvalidArgument("validate", "storage key limit and reserve must not be negative")
	}
	prefix = strings.TrimRight(prefix, ":")
	full := prefix + ":" + key
	if len(full) <= limit-reserve {
		return full, nil
	}
	sum := sha256.Sum256([]byte(full))
	hashed := prefix + ":" + base64.RawURLEncoding.EncodeToString(sum[:16])
	if len(hashed) > limit-reserve {
		return "", lockdriver.InvalidArgument("validate", "storage key exceeds the backend limit even after hashing; shorten the prefix")
	}
	return hashed, nil
}
