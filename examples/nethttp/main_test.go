package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
)

func TestDemo(t *testing.T) {
	got := demotest.Run(t, 10*time.Second, demo)
	// Striped fence counters: the fences start near the server's clock in
	// milliseconds, so they are matched by pattern.
	fence := `(\d{15})`
	for _, want := range []string{
		`Fences: 1024 striped counters`,
		`tally: 201: 1, 409: 9`,
		`request +\d+: 201 Created, fence ` + fence + `, for alice\n`,
		`retry  1: 201 Created, fence ` + fence + `, for alice, replayed`,
		`retry  3: 201 Created, fence ` + fence + `, for alice, replayed`,
		`alice, another body: +422 Unprocessable Entity`,
		`bob, same key and body: +201 Created, fence ` + fence + `, for bob\n`,
		`bob, retry: +201 Created, fence ` + fence + `, for bob, replayed\n`,
		`Handlers ran 2 time\(s\): for alice under fence ` + fence + `, for bob under fence ` + fence + `\n`,
		`OK: one payment per user`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	// Every retry of alice's replays her run's fence, bob's his.
	ran := regexp.MustCompile(`Handlers ran 2 time\(s\): for alice under fence ` + fence + `, for bob under fence ` + fence).FindStringSubmatch(got)
	if ran == nil {
		t.Fatalf("output lacks the runs; got:\n%s", got)
	}
	if ran[1] == ran[2] {
		t.Errorf("alice's and bob's runs had one fence, %s", ran[1])
	}
	for _, m := range regexp.MustCompile(`retry +\d: 201 Created, fence `+fence+`, for alice`).FindAllStringSubmatch(got, -1) {
		if m[1] != ran[1] {
			t.Errorf("alice's retry replayed fence %s, want her run's %s", m[1], ran[1])
		}
	}
	for _, m := range regexp.MustCompile(`bob, [a-z ]+: +201 Created, fence `+fence).FindAllStringSubmatch(got, -1) {
		if m[1] != ran[2] {
			t.Errorf("bob was answered fence %s, want his run's %s", m[1], ran[2])
		}
	}
	if n := strings.Count(got, "409 Conflict, Retry-After: 1\n"); n != burst-1 {
		t.Errorf("409s with Retry-After: 1 (nothing measured yet: the cap): got %d, want %d; output:\n%s", n, burst-1, got)
	}
	checkLimits(t, got)
}

// checkLimits checks parts 4 and 5 by facts that hold however the
// requests were timed: never more than the limit running at once, every
// export answered 200 or 429 (each 429 with a Retry-After), all the
// waiting ones served.
func checkLimits(t *testing.T, got string) {
	t.Helper()
	peaks := regexp.MustCompile(`peak concurrency in the handler: (\d+) \(limit (\d+)\)`).FindAllStringSubmatch(got, -1)
	tallies := regexp.MustCompile(`(?m)^  tally: 200: (\d+)(?:, 429: (\d+))?$`).FindAllStringSubmatch(got, -1)
	if len(peaks) != 2 || len(tallies) != 2 {
		t.Fatalf("want the peak and the tally of parts 4 and 5, got %q and %q; output:\n%s", peaks, tallies, got)
	}
	for i, p := range peaks {
		peak, _ := strconv.Atoi(p[1])
		if p[2] != strconv.Itoa(exportLimit) || peak < 1 || peak > exportLimit {
			t.Errorf("part %d: peak %s with limit %s, want 1 to %d", 4+i, p[1], p[2], exportLimit)
		}
	}
	served, _ := strconv.Atoi(tallies[0][1])
	refused, _ := strconv.Atoi(tallies[0][2])
	if served < 1 || served+refused != exports {
		t.Errorf("part 4: %d served and %d refused, want at least one served and %d in all", served, refused, exports)
	}
	if n := len(regexp.MustCompile(`429 Too Many Requests, Retry-After: \d+\n`).FindAllString(got, -1)); n != refused {
		t.Errorf("part 4: %d answers 429 with a Retry-After, want all %d refused", n, refused)
	}
	if tallies[1][1] != strconv.Itoa(exports) || tallies[1][2] != "" {
		t.Errorf("part 5: tally %q, want all %d served", tallies[1][0], exports)
	}
}

// The demo must fail loudly when the limit lets more exports in than it
// should.
func TestDemoFailsWhenLimitLeaks(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunLeakyLimits(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), "limit: peak concurrency") {
		t.Errorf("demo on a leaky limit: got error %v, want the peak over the limit; output:\n%s", err, &out)
	}
}

// The demo must fail loudly when the replay serves one user another's
// response.
func TestDemoFailsWhenUsersMixedUp(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunMixedUsers(ctx, &out, other, user, demo)
	if err == nil || !strings.Contains(err.Error(), "bob was served alice's response") {
		t.Errorf("demo on mixed-up users: got error %v, want bob served alice's response; output:\n%s", err, &out)
	}
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunLeaky(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), `burst: tally "201: 10", want "201: 1, 409: 9"`) {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
