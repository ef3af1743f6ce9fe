package chaos_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/testkit/chaos"
)

var (
	duration   = flag.Duration("chaos.duration", 10*time.Second, "how long the chaos run injects faults")
	workers    = flag.Int("chaos.workers", 8, "number of workers")
	perClient  = flag.Int("chaos.per-client", 2, "workers sharing one client and Backend")
	keys       = flag.Int("chaos.keys", 3, "number of lock keys")
	limit      = flag.Int("chaos.limit", 2, "slots of the limit key (0: no limit key)")
	readWrite  = flag.Bool("chaos.readwrite", true, "add a key taken as a read-write lock (lock/rwlock)")
	ttl        = flag.Duration("chaos.ttl", 500*time.Millisecond, "lease TTL")
	report     = flag.String("chaos.report", "", "file to write the report to (default: in the test's temp dir)")
	seed       = flag.Uint64("chaos.seed", uint64(time.Now().UnixNano()), "random seed")
	pauseEvery = flag.Int("chaos.pause-every", 25, "pause about one grant in this many past its TTL")
	multi      = flag.Int("chaos.multi", 3, "most keys of a multi-key job, about one job in two (below 2: none)")
)

// The election run's (the seed is the lock run's).
var (
	electionFor = flag.Duration("chaos.election-duration", 8*time.Second, "how long the election runs inject faults, half recorded, half on the bare Backend (0: none)")
	candidates  = flag.Int("chaos.candidates", 3, "candidates of the election run")
	electionTTL = flag.Duration("chaos.election-ttl", time.Second, "term TTL of the election run (lock/election's shortest is 1s)")
)

// TestChaos runs the fault matrix on lock.Do workers, then on election.Lead
// candidates (recorded, then on the bare Backend), and fails on any
// violation. See the package doc. Plain `go test` (and so `make test`)
// runs the locks for 10 s: every fault once but the last of the schedule
// (latency), which does not fit, and the election for 4 s twice; `make
// chaos` runs the locks for 60 s, every fault five or six times, and the
// election for 30 s twice.
// It runs in -short mode too: it is the only test of the lock and the
// election under faults with the client settings users run. Both reports
// go to -chaos.report, one after the other.
func TestChaos(t *testing.T) {
	path := *report
	if path == "" {
		path = filepath.Join(t.TempDir(), "chaos-report.txt")
	}
	var texts []string
	t.Run("locks", func(t *testing.T) { texts = append(texts, testLocks(t, path)) })
	if *electionFor > 0 {
		// Half recorded (the history's checks, Lead on a hooked Backend),
		// half on the Backend users run.
		t.Run("election", func(t *testing.T) { texts = append(texts, testElection(t, true)) })
		t.Run("election-bare", func(t *testing.T) { texts = append(texts, testElection(t, false)) })
	}
	if err := os.WriteFile(path, []byte(strings.Join(texts, "\n\n")), 0o644); err != nil {
		t.Errorf("writing the report: %v", err)
	}
}

// testLocks is the lock.Do run; it returns its report.
func testLocks(t *testing.T, path string) string {
	rep := chaos.Run(t, chaos.Config{
		Duration:   *duration,
		Workers:    *workers,
		PerClient:  *perClient,
		Keys:       *keys,
		Limit:      *limit,
		ReadWrite:  *readWrite,
		TTL:        *ttl,
		Gap:        *ttl / 2,
		PauseEvery: *pauseEvery,
		Seed:       *seed,
		Multi:      *multi,
	})
	text := rep.String()
	t.Log("\n" + text)
	if len(rep.Violations) != 0 {
		t.Errorf("%d violations (seed %d), want 0", len(rep.Violations), *seed)
	}
	if len(rep.LinearizabilityHTML) != 0 {
		// Next to the report: with -chaos.report it outlives the test.
		html := path + ".linearizability.html"
		if err := os.WriteFile(html, rep.LinearizabilityHTML, 0o644); err != nil {
			t.Errorf("writing the linearizability view: %v", err)
		}
		t.Logf("porcupine's view of the history that is not linearizable: %s", html)
	}
	if rep.Linearizability == porcupine.Unknown {
		t.Errorf("linearizability check timed out: the history was not checked")
	}
	if rep.Grants == 0 {
		t.Errorf("no grants: the run did not exercise the lock")
	}
	if *multi >= 2 && rep.Do["multi: ok"] == 0 {
		t.Errorf("no multi-key job succeeded: the run did not exercise lock/multilock")
	}
	if *limit > 0 && rep.LimitGrants == 0 {
		t.Errorf("no slot grants: the run did not exercise the limit key")
	}
	if *readWrite && (rep.ReadGrants == 0 || rep.WriteGrants == 0) {
		t.Errorf("%d reader and %d writer grants: the run did not exercise the read-write key", rep.ReadGrants, rep.WriteGrants)
	}
	if rep.Rejected == 0 {
		// Likely but not certain in a short run: someone must take the
		// key while its holder is paused.
		t.Logf("note: no stale write was attempted in this run")
	}
	return text
}

// testElection is an election.Lead run, recorded or not; it returns its
// report.
func testElection(t *testing.T, record bool) string {
	rep := chaos.RunElection(t, chaos.ElectionConfig{
		Duration:   *electionFor / 2,
		Candidates: *candidates,
		TTL:        *electionTTL,
		Gap:        *electionTTL / 2,
		Seed:       *seed,
		Record:     record,
	})
	text := rep.String()
	t.Log("\n" + text)
	if len(rep.Violations) != 0 {
		t.Errorf("%d violations (seed %d), want 0", len(rep.Violations), *seed)
	}
	if record && rep.Linearizability == porcupine.Unknown {
		t.Errorf("linearizability check timed out: the history was not checked")
	}
	if rep.Terms < 2 {
		t.Errorf("%d terms: the run did not exercise the election", rep.Terms)
	}
	if rep.LateWrites == 0 {
		t.Logf("note: no leader woke from a stall in this run")
	}
	return text
}
