package readme_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/testkit/readme"
)

// TestWorkspaceModules: the walk over the module covers the nested modules
// that the root's go.work uses (both forms of its use directive) and skips
// a nested module the workspace leaves out.
func TestWorkspaceModules(t *testing.T) {
	body := "\t_ = 0\n\t_ = 0\n\t_ = 0\n\t_ = 0\n"
	long := func(pkg, fn string) string { return "package " + pkg + "\n\nfunc " + fn + "() {\n" + body + "}\n" }
	root := writeFiles(t, map[string]string{
		"go.mod":              "module m\n",
		"go.work":             "go 1.26.0\n\nuse ./jobs/x // one line\n\nuse (\n\t.\n\t./middleware/y\n\t\"./otel\"\n)\n",
		"jobs/x/go.mod":       "module m/jobs/x\n",
		"jobs/x/x.go":         long("x", "inX"),
		"middleware/y/go.mod": "module m/middleware/y\n",
		"middleware/y/y.go":   long("y", "inY") + "\n// README: y\nvar _ = 1\n\n// END README\n",
		"otel/go.mod":         "module m/otel\n",
		"otel/o.go":           long("o", "inOtel"),
		"bench/go.mod":        "module b\n",
		"bench/b.go":          long("b", "inBench"),
	})
	got, err := readme.LongFuncs(root, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"jobs/x/x.go: inX is 6 lines, want at most 5",
		"middleware/y/y.go: inY is 6 lines, want at most 5",
		"otel/o.go: inOtel is 6 lines, want at most 5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("LongFuncs:\ngot  %q\nwant %q", got, want)
	}
	regions, err := readme.ModuleRegions(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(regions) != 1 || regions[0].File != "middleware/y/y.go" {
		t.Errorf("ModuleRegions: got %+v, want region y of middleware/y/y.go", regions)
	}
}
