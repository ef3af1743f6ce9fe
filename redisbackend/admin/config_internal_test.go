package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestConfigParse: the recorded form reads back, and what a later version
// might add is ignored; a broken record is skipped.
func TestConfigParse(t *testing.T) {
	for _, c := range []redisbackend.Config{{Layout: redisbackend.LayoutSingle, FenceStripes: 0}, {Layout: redisbackend.LayoutCluster, FenceStripes: 1024}, {Layout: redisbackend.LayoutSingle, FenceStripes: redisbackend.MaxFenceStripes}} {
		got, ok := parseConfig(c.String())
		if !ok || got != c {
			t.Errorf("parseConfig(%q) = %v, %v", c.String(), got, ok)
		}
	}
	if got, ok := parseConfig("fenceStripes=8 layout=cluster coalescing=on"); !ok || got != (redisbackend.Config{Layout: redisbackend.LayoutCluster, FenceStripes: 8}) {
		t.Errorf("parseConfig with an unknown word = %v, %v", got, ok)
	}
	for _, bad := range []string{"", "layout=single", "fenceStripes=1", "layout=ring fenceStripes=0", "layout=single fenceStripes=-1",
		"layout=single fenceStripes=99999999", "layout=auto fenceStripes=0"} {
		if got, ok := parseConfig(bad); ok {
			t.Errorf("parseConfig(%q) = %v, want not a configuration", bad, got)
		}
	}
}

// TestConfigConflict grades two configurations on one prefix by what the
// difference costs.
func TestConfigConflict(t *testing.T) {
	single := func(n int) redisbackend.Config {
		return redisbackend.Config{Layout: redisbackend.LayoutSingle, FenceStripes: n}
	}
	cluster := func(n int) redisbackend.Config {
		return redisbackend.Config{Layout: redisbackend.LayoutCluster, FenceStripes: n}
	}
	for _, tc := range []struct {
		a, b redisbackend.Config
		want Severity
	}{
		{single(0), cluster(0), SeveritySevere},         // other key names
		{cluster(64), cluster(128), SeveritySevere},     // other hash tags
		{cluster(0), cluster(64), SeveritySevere},       // other hash tags
		{single(0), single(1024), SeveritySevere},       // per-key fences after striped ones go back
		{single(64), single(1024), SeverityWarning},     // both by the clock
		{single(1024), single(64), SeverityWarning},     // symmetric
		{cluster(64), single(64), SeveritySevere},       // other key names
		{single(1024), single(0), SeveritySevere},       // symmetric
		{cluster(1024), cluster(1024), SeverityWarning}, // (equal configurations are not compared)
	} {
		if got, _ := configConflict(tc.a, tc.b); got != tc.want && tc.a != tc.b {
			t.Errorf("configConflict(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	now := time.Now()
	f := configFinding("p:config:backend", single(0), nil, now)
	if f.Severity != SeverityInfo || !strings.Contains(f.Message, "no configuration recorded") {
		t.Errorf("no record: %v", f)
	}
	recs := []ConfigRecord{{single(64), now.Add(-time.Minute)}, {single(1024), now.Add(-time.Hour)}, {single(0), now.Add(-2 * time.Hour)}}
	f = configFinding("p:config:backend", single(64), recs, now)
	if f.Severity != SeveritySevere || !strings.Contains(f.Message, "layout=single fenceStripes=1024 (last recorded 1h0m0s ago") ||
		!strings.Contains(f.Message, "layout=single fenceStripes=0 (last recorded 2h0m0s ago") ||
		!strings.Contains(f.Advice, `HDEL "p:config:backend" "layout=single fenceStripes=1024"`) {
		t.Errorf("three records: %v", f)
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		v            string
		major, minor int
		ok           bool
	}{{"7.0.15", 7, 0, true}, {"6.2", 6, 2, true}, {"6.0.16", 6, 0, true}, {"7", 0, 0, false}, {"x.1", 0, 0, false}} {
		major, minor, ok := parseVersion(tc.v)
		if major != tc.major || minor != tc.minor || ok != tc.ok {
			t.Errorf("parseVersion(%q) = %d, %d, %v; want %d, %d, %v", tc.v, major, minor, ok, tc.major, tc.minor, tc.ok)
		}
	}
}
