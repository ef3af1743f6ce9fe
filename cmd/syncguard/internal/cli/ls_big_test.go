package cli

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestLsStreamsBoundedMemory lists 100,000 locks and checks that ls
// streams them: every lock is printed, and the heap stays far below what
// holding the locks would take. Holding them grows the heap by about 37 MB
// (measured by making runLs collect the pages before printing them);
// streaming, by about 3 MB: a SCAN page at a time, plus garbage.
func TestLsStreamsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 keys")
	}
	const n = 100_000
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli()
	start := time.Now()
	for base := 0; base < n; base += 10_000 {
		pipe := rdb.Pipeline()
		for i := base; i < base+10_000; i++ {
			key := fmt.Sprintf("tenant-%02d:order:%06d", i%50, i)
			// The lock JSON as acquire.lua writes it.
			v := fmt.Sprintf(`{"lockId":"AAAAAAAAAAAAAAAA%06d","expiresAtMs":%d,"acquiredAtMs":%d,"key":"%s","fence":"%015d"}`,
				i, ms+10*60_000, ms, key, i+1)
			pipe.Set(ctx, "syncguard:"+key, v, 10*time.Minute)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d locks written in %v", n, time.Since(start))

	out := &lineCounter{}
	var peak uint64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sample the heap while ls runs
		defer wg.Done()
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	start = time.Now()
	var errOut bytes.Buffer
	code := Run(ctx, []string{"ls", "--redis", urlOf(srv)}, Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errOut,
		Getenv: func(string) string { return "" }})
	took := time.Since(start)
	close(stop)
	wg.Wait()
	<-sampled

	if code != 0 {
		t.Fatalf("ls: status %d, stderr %q", code, errOut.String())
	}
	if out.lines != n+2 || !strings.HasPrefix(out.last, fmt.Sprintf("%d locks (scanned %d keys", n, n)) {
		t.Errorf("ls printed %d lines ending %q, want %d (header, a line per lock, totals)", out.lines, out.last, n+2)
	}
	growth := int64(peak) - int64(base)
	t.Logf("ls of %d locks: %v, peak heap %.1f MB above the %.1f MB before", n, took, float64(growth)/(1<<20), float64(base)/(1<<20))
	const limit = 12 << 20
	if growth > limit {
		t.Errorf("the heap grew by %.1f MB while listing, want under %d MB: ls holds more than a page of locks",
			float64(growth)/(1<<20), limit>>20)
	}
}

// lineCounter is an output that counts lines and keeps only the last.
type lineCounter struct {
	lines int
	cur   []byte
	last  string
}

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			c.lines++
			c.last = string(c.cur)
			c.cur = c.cur[:0]
			continue
		}
		c.cur = append(c.cur, b)
	}
	return len(p), nil
}
