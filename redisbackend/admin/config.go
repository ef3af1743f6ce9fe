package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/internal/errmap"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// The configuration records that New writes under a prefix (see
// redisbackend.Config), read and judged for operators.

// errNotConfigRecord is the cause of RecordedConfigs' error for a key
// that holds something else.
var errNotConfigRecord = errors.New("not a configuration record")

// CheckConfig is the name of the finding of CheckRecordedConfig (also in
// Check's report when the recorded configurations disagree with the
// Backend's).
const CheckConfig = "config"

// parseConfig parses Config.String's form; unknown words are ignored (a
// later version may record more).
func parseConfig(s string) (redisbackend.Config, bool) {
	var c redisbackend.Config
	var layout, stripes bool
	for _, w := range strings.Fields(s) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			continue
		}
		switch k {
		case "layout":
			switch v {
			case "single":
				c.Layout = redisbackend.LayoutSingle
			case "cluster":
				c.Layout = redisbackend.LayoutCluster
			default:
				return redisbackend.Config{}, false
			}
			layout = true
		case "fenceStripes":
			n, err := strconv.Atoi(v)
			if err != nil || operator.ValidStripes(n) != nil {
				return redisbackend.Config{}, false
			}
			c.FenceStripes, stripes = n, true
		}
	}
	return c, layout && stripes
}

// ConfigRecord is a configuration recorded under a prefix.
type ConfigRecord struct {
	redisbackend.Config
	// RecordedAt is when a Backend last recorded it, by its host's clock,
	// or zero.
	RecordedAt time.Time `json:"recordedAt"`
}

// RecordedConfigs reads the configurations that Backends on prefix
// recorded, newest first. client is any client New accepts. It writes
// nothing. Errors are *lock.Error values, with lock.CodeInternal when the
// key holds something that is not a record.
func RecordedConfigs(ctx context.Context, client redis.UniversalClient, prefix string) ([]ConfigRecord, error) {
	const op = "config"
	key, err := redisbackend.ConfigKey(prefix)
	if err != nil {
		return nil, err
	}
	if err := errmap.CheckCtx(op, ctx); err != nil {
		return nil, err
	}
	var (
		fields map[string]string
		rerr   error
	)
	if berr := transport.Bounded(ctx, func(ctx context.Context) { fields, rerr = client.HGetAll(ctx, key).Result() }); berr != nil {
		return nil, errmap.Map(ctx, op, berr)
	}
	if rerr != nil {
		if redis.HasErrorPrefix(rerr, "WRONGTYPE") {
			return nil, &lock.Error{Code: lock.CodeInternal, Op: op, Err: errNotConfigRecord,
				Msg: key + " holds something that is not a configuration record (a lock of the key \"" + wire.ConfigKeyName + "\" taken by a version that did not reserve it, or by the TypeScript library?)"}
		}
		return nil, errmap.Map(ctx, op, rerr)
	}
	recs := make([]ConfigRecord, 0, len(fields))
	for f, v := range fields {
		c, ok := parseConfig(f)
		if !ok {
			continue // not a configuration this version knows
		}
		r := ConfigRecord{Config: c}
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			r.RecordedAt = time.UnixMilli(ms)
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].RecordedAt.Equal(recs[j].RecordedAt) {
			return recs[i].RecordedAt.After(recs[j].RecordedAt)
		}
		return recs[i].String() < recs[j].String()
	})
	return recs, nil
}

// CheckRecordedConfig compares b's configuration with those recorded under
// its prefix and returns one Finding named CheckConfig. It is severe when
// another instance names lock keys differently, or takes fences that can
// go back against b's. It warns for two stripe counts in the single
// layout. It writes nothing. Errors are as RecordedConfigs'.
// docs/operating.md describes the finding.
func CheckRecordedConfig(ctx context.Context, b *redisbackend.Backend) (Finding, error) {
	recs, err := RecordedConfigs(ctx, b.Operator().Client(), b.Prefix())
	if err != nil {
		var le *lock.Error
		if errors.As(err, &le) && errors.Is(err, errNotConfigRecord) {
			return Finding{Name: CheckConfig, Severity: SeverityWarning, Message: le.Msg,
				Advice: "lock keys beginning with \"config:\" are reserved: move that key, then restart the instances so they record their configuration"}, nil
		}
		return Finding{}, err
	}
	key, _ := redisbackend.ConfigKey(b.Prefix()) // b's prefix is valid
	return configFinding(key, b.Config(), recs, time.Now()), nil
}

// configFinding judges the records recs of key against mine.
func configFinding(key string, mine redisbackend.Config, recs []ConfigRecord, now time.Time) Finding {
	f := Finding{Name: CheckConfig}
	if len(recs) == 0 {
		f.Severity = SeverityInfo
		f.Message = "no configuration recorded under " + key + " (New records it; older versions and the TypeScript library do not)"
		f.Advice = "tools reading the keys (syncguard) then need the application's --layout and --fence-stripes"
		return f
	}
	var others []string
	worst := SeverityOK
	var why string
	for _, r := range recs {
		if r.Config == mine {
			continue
		}
		others = append(others, describeRecord(r, now))
		sev, reason := configConflict(mine, r.Config)
		if sev > worst {
			worst, why = sev, reason
		}
	}
	if len(others) == 0 {
		f.Severity = SeverityOK
		f.Message = fmt.Sprintf("every instance that recorded its configuration under %s uses this one: %s (last %s)",
			key, mine, describeTime(recs[0].RecordedAt, now))
		return f
	}
	f.Severity = worst
	f.Message = fmt.Sprintf("instances on this prefix recorded another configuration than this one (%s) under %s: %s: %s",
		mine, key, strings.Join(others, "; "), why)
	f.Advice = "give every instance on a prefix the same Options.Layout and Options.FenceStripes; once no instance runs a configuration any more, delete its record: redis-cli HDEL " +
		strconv.Quote(key) + " " + strconv.Quote(firstOther(recs, mine).String())
	return f
}

// configConflict grades two configurations on one prefix.
func configConflict(a, b redisbackend.Config) (Severity, string) {
	switch {
	case a.Layout != b.Layout:
		return SeveritySevere, "the layouts name a lock's keys differently, so one key can be held by two instances at once"
	case a.Layout == redisbackend.LayoutCluster && a.FenceStripes != b.FenceStripes:
		return SeveritySevere, "in the cluster layout the stripes pick the lock keys' hash tags, so one key can be held by two instances at once"
	case (a.FenceStripes == 0) != (b.FenceStripes == 0):
		return SeveritySevere, "a key's fences come from its own counter in one and from a striped counter in the other, so they can go back"
	}
	return SeverityWarning, "the keys take their fences from different stripes (still increasing, by the server's clock, unless a stripe runs ahead of it)"
}

func firstOther(recs []ConfigRecord, mine redisbackend.Config) redisbackend.Config {
	for _, r := range recs {
		if r.Config != mine {
			return r.Config
		}
	}
	return mine
}

func describeRecord(r ConfigRecord, now time.Time) string {
	return r.String() + " (last " + describeTime(r.RecordedAt, now) + ")"
}

// describeTime says when a record was last written: "recorded <how long>
// ago, <the time in RFC 3339, UTC>".
func describeTime(t, now time.Time) string {
	if t.IsZero() {
		return "recorded at an unknown time"
	}
	ago := now.Sub(t).Truncate(time.Second)
	if ago < 0 {
		ago = 0
	}
	return "recorded " + ago.String() + " ago, " + t.UTC().Format(time.RFC3339)
}
