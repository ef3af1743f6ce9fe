package lockdriver

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
)

func TestRandReaderIsCryptoRand(t *testing.T) {
	if randReader != rand.Reader {
		t.Errorf("randReader = %T, want crypto/rand.Reader", randReader)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestNewLockIDPanicsWithoutEntropy(t *testing.T) {
	saved := randReader
	t.Cleanup(func() { randReader = saved })
	randReader = failingReader{}

	defer func() {
		r := recover()
		if r == nil {
			t.Fatal("NewLockID did not panic when the random source failed")
		}
		if s, ok := r.(string); !ok || !strings.Contains(s, "no entropy") {
			t.Errorf("panic value = %#v, want a message with the cause %q", r, "no entropy")
		}
	}()
	id := NewLockID()
	t.Errorf("NewLockID() = %q, want a panic", id)
}
