package asynqlock_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestDefaultKeyIn(t *testing.T) {
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	const abcSHA = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	long := strings.Repeat("t", 256)
	// The longest readable type in the queue "default": 256 bytes less
	// "default:", ':' and 64 hex digits.
	const longest = 256 - len("default:") - 1 - 64
	tests := []struct {
		desc, queue, typ, payload, want string
	}{
		{"plain", "default", "email:send", "abc", "default:email:send:" + abcSHA},
		{"other queue", "critical", "email:send", "abc", "critical:email:send:" + abcSHA},
		{"empty payload", "default", "email:send", "", "default:email:send:" + emptySHA},
		{"NFC type", "default", "café", "abc", "default:café:" + abcSHA},
		{"type not in NFC: hashed", "default", "cafe\u0301", "abc", "default:h:" + sha("cafe\u0301") + ":" + abcSHA},
		{"type beginning with h: hashed", "default", "h:x", "abc", "default:h:" + sha("h:x") + ":" + abcSHA},
		{"type with a noncharacter: hashed", "default", "t\uffff", "abc", "default:h:" + sha("t\uffff") + ":" + abcSHA},
		{"longest readable type", "default", long[:longest], "abc", "default:" + long[:longest] + ":" + abcSHA},
		{"type too long: hashed", "default", long[:longest+1], "abc", "default:h:" + sha(long[:longest+1]) + ":" + abcSHA},
		{"type not UTF-8: hashed", "default", "t\xff", "abc", "default:h:" + sha("t\xff") + ":" + abcSHA},
		{"empty type: hashed", "default", "", "abc", "default:h:" + sha("") + ":" + abcSHA},
		{"NFC queue", "café", "t", "abc", "café:t:" + abcSHA},
		{"queue with ':': hashed", "a:b", "t", "abc", "h:" + sha("a:b") + ":t:" + abcSHA},
		{"queue h: hashed", "h", "t", "abc", "h:" + sha("h") + ":t:" + abcSHA},
		{"queue not in NFC: hashed", "cafe\u0301", "t", "abc", "h:" + sha("cafe\u0301") + ":t:" + abcSHA},
		{"longest readable queue", long[:64], "t", "abc", long[:64] + ":t:" + abcSHA},
		{"queue too long: hashed", long[:65], "t", "abc", "h:" + sha(long[:65]) + ":t:" + abcSHA},
		{"empty queue: hashed", "", "t", "abc", "h:" + sha("") + ":t:" + abcSHA},
		{"both hashed", "a:b", "h:x", "abc", "h:" + sha("a:b") + ":h:" + sha("h:x") + ":" + abcSHA},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := asynqlock.DefaultKeyIn(tt.queue, asynq.NewTask(tt.typ, []byte(tt.payload))); got != tt.want {
				t.Errorf("DefaultKeyIn(%+q, %+q, %q) = %q, want %q", tt.queue, tt.typ, tt.payload, got, tt.want)
			}
		})
	}
}

// TestDefaultKey: the queue comes from the task's context; a context
// without one (a handler called outside an asynq server) means asynq's
// default queue. The server tests check keys from a real server's
// context (TestDefaultKeyPerQueue).
func TestDefaultKey(t *testing.T) {
	task := asynq.NewTask("email:send", []byte("abc"))
	got, err := asynqlock.DefaultKey(context.Background(), task)
	if want := asynqlock.DefaultKeyIn("default", task); err != nil || got != want {
		t.Errorf("DefaultKey without a queue = %q, %v; want %q", got, err, want)
	}
	if other := asynqlock.DefaultKeyIn("critical", task); other == got {
		t.Errorf("queues default and critical share key %q", got)
	}
}

// FuzzDefaultKey checks that a default key is valid under the longest
// prefix New accepts, and depends on queue, type and payload.
func FuzzDefaultKey(f *testing.F) {
	f.Add("default", "email:send", []byte("abc"))
	f.Add("", "", []byte{})
	f.Add("q:1", "cafe\u0301", []byte{0xff})
	f.Add(strings.Repeat("\u0344", 40), strings.Repeat("\u0344", 100), []byte("x"))
	f.Add("h", "t\xff", []byte("x"))
	prefix := strings.Repeat("p", asynqlock.MaxPrefixBytes)
	f.Fuzz(func(t *testing.T, queue, typ string, payload []byte) {
		key := asynqlock.DefaultKeyIn(queue, asynq.NewTask(typ, payload))
		if _, err := lockdriver.NormalizeKey(prefix + key); err != nil {
			t.Fatalf("DefaultKeyIn(%+q, %+q) = %q, invalid under a %d-byte prefix: %v", queue, typ, key, len(prefix), err)
		}
		if other := asynqlock.DefaultKeyIn(queue, asynq.NewTask(typ, append(payload, 0))); other == key {
			t.Fatalf("payloads %q and %q share key %q", payload, append(payload, 0), key)
		}
		if other := asynqlock.DefaultKeyIn(queue+"x", asynq.NewTask(typ, payload)); other == key {
			t.Fatalf("queues %+q and %+q share key %q", queue, queue+"x", key)
		}
	})
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
