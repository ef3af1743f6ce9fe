package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

var doctorCommand = &command{
	name:    "doctor",
	args:    "[--json] [--samples N]",
	summary: "what the server does for fences, each with a verdict and what to do; exits 3 if severe",
	detail: "The findings of redisbackend's Check (version, persistence, eviction, replication, cluster),\n" +
		"one on the configurations the application's instances recorded under the prefix (config: they\n" +
		"must agree on the layout and fence stripes), and one on the fence counters under the prefix: how\n" +
		"many (SCAN) and their memory (MEMORY USAGE of a sample). Exit status 3 when a finding is severe,\n" +
		"such as no persistence, allkeys-lru, or instances whose lock keys differ.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.BoolVar(&o.json, "json", false, "print one JSON object: {findings, worst}")
		fs.IntVar(&o.samples, "samples", 100, "fence counters per server whose MEMORY USAGE is read")
	},
	check: func(o *options, args []string) error {
		if o.samples < 0 {
			return usageErrorf("--samples must not be negative")
		}
		return noArgs("doctor", "")(o, args)
	},
	run: runDoctor,
}

// CheckFences is the name of doctor's own finding: the fence counters.
const CheckFences = "fences"

// Thresholds of the fences finding: per-key counters are never deleted,
// so a count this large suggests an unbounded key space.
const (
	fencesInfo    = 100_000
	fencesWarning = 1_000_000
)

func runDoctor(ctx context.Context, s *session, o *options, args []string) error {
	report, err := s.check(ctx)
	if err != nil {
		return err
	}
	// Check reports the configuration record only when instances
	// disagree; doctor always says what it found there.
	hasConfig := false
	for _, f := range report.Findings {
		hasConfig = hasConfig || f.Name == admin.CheckConfig
	}
	if !hasConfig {
		f, err := admin.CheckRecordedConfig(ctx, s.backend)
		if err != nil {
			f = admin.Finding{Name: admin.CheckConfig, Severity: admin.SeverityUnknown,
				Message: "cannot read the configuration record: " + oneLine(message(err))}
		}
		report.Findings = append(report.Findings, f)
	}
	fences, err := s.fenceFinding(ctx, o.samples)
	if err != nil {
		return err
	}
	report.Findings = append(report.Findings, fences)
	worst := report.Worst()
	w := s.env.Stdout
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Findings []admin.Finding `json:"findings"`
			Worst    admin.Severity  `json:"worst"`
		}{report.Findings, worst}); err != nil {
			return err
		}
	} else {
		for _, f := range report.Findings {
			fmt.Fprintln(w, f.String())
		}
		fmt.Fprintln(w, summary(report))
	}
	if worst >= admin.SeveritySevere {
		return &exitError{code: ExitSevere}
	}
	if len(s.recorded) == 0 {
		// Likely the wrong server or prefix: the findings above are not
		// the application's (connect warned on stderr already).
		return &exitError{code: ExitFailure}
	}
	return nil
}

// check runs admin.Check. Its round trips run on the masters together,
// after a read of a cluster's slots that asks one node after another:
// --timeout bounds them as one reply.
func (s *session) check(ctx context.Context) (admin.Report, error) {
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	report, err := admin.Check(cctx, s.backend)
	timedOut := cctx.Err() != nil && ctx.Err() == nil
	var terr *timeoutError
	switch {
	case err != nil && (timedOut || errors.As(err, &terr)):
		return report, stalled(s.where, s.timeout)
	case err != nil:
		return report, failf("check: %s", message(err))
	}
	return report, nil
}

// summary counts the findings by severity, worst first.
func summary(r admin.Report) string {
	counts := map[admin.Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
	}
	var parts []string
	for sev := admin.SeveritySevere; sev >= admin.SeverityOK; sev-- {
		if counts[sev] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[sev], sev))
		}
	}
	verdict := "fences are safe on this server as far as it tells"
	switch r.Worst() {
	case admin.SeveritySevere:
		verdict = "fix the severe findings: fences can go back after a restart or an eviction"
	case admin.SeverityWarning:
		verdict = "read the warnings: a failure can grant a fence twice"
	case admin.SeverityUnknown:
		verdict = "the server does not tell everything: check the unknown settings with your provider"
	}
	return "doctor: " + strings.Join(parts, ", ") + ": " + verdict
}

// fenceCount is what fenceFinding found on the servers.
type fenceCount struct {
	perKey, striped int64
	sampled         int64 // counters whose MEMORY USAGE was read
	sampledBytes    int64
	memErr          error // why MEMORY USAGE gave nothing, if it did not
}

// fenceFinding counts the fence counters under the prefix (SCAN) and
// estimates their memory from the MEMORY USAGE of up to samples of them
// per server.
func (s *session) fenceFinding(ctx context.Context, samples int) (admin.Finding, error) {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return admin.Finding{}, err
	}
	var c fenceCount
	for _, node := range nodes {
		left := samples
		err := scanKeys(ctx, node, s.names.fencePattern(), func(keys []string) error {
			var pick []string
			for _, k := range keys {
				if s.names.isStripe(k) {
					c.striped++
				} else {
					c.perKey++
				}
				if left > 0 {
					pick = append(pick, k)
					left--
				}
			}
			return c.sample(ctx, node, pick)
		})
		if err != nil {
			return admin.Finding{}, err
		}
	}
	return c.finding(s.names.fencePattern()), nil
}

// sample reads the MEMORY USAGE of keys.
func (c *fenceCount) sample(ctx context.Context, node *redis.Client, keys []string) error {
	if len(keys) == 0 || c.memErr != nil {
		return nil
	}
	pipe := node.Pipeline()
	cmds := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.MemoryUsage(ctx, k)
	}
	_, _ = pipe.Exec(ctx)
	for _, cmd := range cmds {
		n, err := cmd.Result()
		switch {
		case err == redis.Nil: // gone since the SCAN
		case err != nil && isReply(err):
			c.memErr = err // not supported, or forbidden
			return nil
		case err != nil:
			return redisError(ctx, node.Options().Addr, err)
		default:
			c.sampled++
			c.sampledBytes += n
		}
	}
	return nil
}

func (c fenceCount) finding(pattern string) admin.Finding {
	total := c.perKey + c.striped
	f := admin.Finding{Name: CheckFences, Severity: admin.SeverityOK}
	if total == 0 {
		f.Message = "no fence counters under " + pattern + " yet"
		return f
	}
	mem := "memory unknown"
	switch {
	case c.sampled > 0:
		avg := float64(c.sampledBytes) / float64(c.sampled)
		mem = fmt.Sprintf("about %s (MEMORY USAGE of %d of them: %.0f bytes each)", byteSize(avg*float64(total)), c.sampled, avg)
	case c.memErr != nil:
		mem = "memory unknown: the server does not answer MEMORY USAGE (" + strings.TrimSpace(c.memErr.Error()) + ")"
	}
	f.Message = fmt.Sprintf("%d fence counters under %s (%d per key, %d striped), %s; they are never deleted",
		total, pattern, c.perKey, c.striped, mem)
	switch {
	case c.perKey >= fencesWarning:
		f.Severity = admin.SeverityWarning
	case c.perKey >= fencesInfo:
		f.Severity = admin.SeverityInfo
	}
	if f.Severity != admin.SeverityOK {
		f.Advice = "if the keys are unbounded (an Idempotency-Key per request, a hash of each job), set Options.FenceStripes (see the README, Striped fence counters); existing counters stay until deleted by hand"
	}
	return f
}

// byteSize formats a byte count: 812 B, 4.2 KB, 72.7 MB.
func byteSize(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}
