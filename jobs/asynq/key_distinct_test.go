package asynqlock_test

import (
	"bytes"
	"testing"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestDefaultKeyDistinct: tasks that asynq tells apart never share a
// default key. Each pair shared one in some draft: a readable type that
// looks like a hashed key, two spellings of one NFC string, a ':' moving
// between the parts, and a readable queue "h" that looks like a hashed one.
func TestDefaultKeyDistinct(t *testing.T) {
	pairs := []struct {
		desc     string
		q1, typ1 string
		q2, typ2 string
		p1, p2   string
	}{
		// "t\xff" is hashed to "h:<sha>"; the type "h:<sha>" was kept readable.
		{"readable type looks hashed", "q", "t\xff", "q", "h:" + sha("t\xff"), "abc", "abc"},
		{"canonically equivalent types", "q", "café", "q", "cafe\u0301", "abc", "abc"},
		{"':' in the type", "q", "a:b", "q", "a", "abc", "abc"},
		{"':' in the queue", "a:b", "c", "a", "b:c", "abc", "abc"},
		{"canonically equivalent queues", "café", "t", "cafe\u0301", "t", "abc", "abc"},
		// The queue "h" kept readable would give "h:" + the type.
		{"readable queue looks hashed", "h", sha("a:b") + ":t", "a:b", "t", "abc", "abc"},
		{"same task, other queue", "default", "t", "critical", "t", "abc", "abc"},
	}
	for _, p := range pairs {
		k1 := asynqlock.DefaultKeyIn(p.q1, asynq.NewTask(p.typ1, []byte(p.p1)))
		k2 := asynqlock.DefaultKeyIn(p.q2, asynq.NewTask(p.typ2, []byte(p.p2)))
		if k1 == k2 {
			t.Errorf("%s: (%+q, %+q) and (%+q, %+q) share key %q", p.desc, p.q1, p.typ1, p.q2, p.typ2, k1)
		}
	}
}

// FuzzDefaultKeyDistinct checks that two tasks get one default key only
// when their queues, types and payloads are equal, comparing the keys as
// the Guard uses them (NFC-normalised).
func FuzzDefaultKeyDistinct(f *testing.F) {
	f.Add("q", "t\xff", []byte("abc"), "q", "h:"+sha("t\xff"), []byte("abc"))
	f.Add("q", "café", []byte("x"), "q", "cafe\u0301", []byte("x"))
	f.Add("q", "a:b", []byte("x"), "q", "a", []byte("b:x"))
	f.Add("a:b", "c", []byte("x"), "a", "b:c", []byte("x"))
	f.Add("h", sha("a:b")+":t", []byte("x"), "a:b", "t", []byte("x"))
	f.Add("default", "email:send", []byte{}, "default", "email:send", []byte{})
	f.Add("default", "email:send", []byte{}, "critical", "email:send", []byte{})
	f.Fuzz(func(t *testing.T, q1, typ1 string, p1 []byte, q2, typ2 string, p2 []byte) {
		k1, err1 := lockdriver.NormalizeKey(asynqlock.DefaultKeyIn(q1, asynq.NewTask(typ1, p1)))
		k2, err2 := lockdriver.NormalizeKey(asynqlock.DefaultKeyIn(q2, asynq.NewTask(typ2, p2)))
		if err1 != nil || err2 != nil {
			t.Fatalf("NormalizeKey of a default key: %v, %v", err1, err2)
		}
		if same := q1 == q2 && typ1 == typ2 && bytes.Equal(p1, p2); (k1 == k2) != same {
			t.Fatalf("tasks (%+q, %+q, %q) and (%+q, %+q, %q): keys %q and %q", q1, typ1, p1, q2, typ2, p2, k1, k2)
		}
	})
}
