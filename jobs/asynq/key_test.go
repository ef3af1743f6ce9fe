package asynqlock_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

func TestDefaultKey(t *testing.T) {
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	const abcSHA = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	long := strings.Repeat("t", 192)
	tests := []struct {
		desc, typ, payload, want string
	}{
		{"plain", "email:send", "abc", "email:send:" + abcSHA},
		{"empty payload", "email:send", "", "email:send:" + emptySHA},
		{"NFC type", "cafe\u0301", "abc", "café:" + abcSHA},
		{"longest readable type", long[:191], "abc", long[:191] + ":" + abcSHA},
		{"type too long: hashed", long, "abc", "h:" + sha(long) + ":" + abcSHA},
		{"type not UTF-8: hashed", "t\xff", "abc", "h:" + sha("t\xff") + ":" + abcSHA},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := asynqlock.DefaultKey(asynq.NewTask(tt.typ, []byte(tt.payload)))
			if err != nil || got != tt.want {
				t.Errorf("DefaultKey = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// FuzzDefaultKey checks that a default key is valid under the longest
// prefix New accepts, and depends on both type and payload.
func FuzzDefaultKey(f *testing.F) {
	f.Add("email:send", []byte("abc"))
	f.Add("", []byte{})
	f.Add("cafe\u0301", []byte{0xff})
	f.Add(strings.Repeat("\u0344", 100), []byte("x"))
	f.Add("t\xff", []byte("x"))
	prefix := strings.Repeat("p", asynqlock.MaxPrefixBytes)
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		key, err := asynqlock.DefaultKey(asynq.NewTask(typ, payload))
		if err != nil {
			t.Fatalf("DefaultKey: %v", err)
		}
		if _, err := lock.NormalizeKey(prefix + key); err != nil {
			t.Fatalf("DefaultKey(%q) = %q, invalid under a %d-byte prefix: %v", typ, key, len(prefix), err)
		}
		other, _ := asynqlock.DefaultKey(asynq.NewTask(typ, append(payload, 0)))
		if other == key {
			t.Fatalf("payloads %q and %q share key %q", payload, append(payload, 0), key)
		}
	})
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
