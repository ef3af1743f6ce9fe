package guardtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// DoesNotCompile builds the package in dir (a testdata directory of the
// calling test's package) and fails t unless the build fails with every
// one of errs in its output: for what the types forbid, such as one
// adapter's option given to another.
func DoesNotCompile(t *testing.T, dir string, errs ...string) {
	t.Helper()
	args := []string{"build", "-o", os.DevNull}
	if race {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "./"+dir)...).CombinedOutput()
	if err == nil {
		t.Fatalf("%s compiled; want the errors %q", dir, errs)
	}
	for _, want := range errs {
		if !strings.Contains(string(out), want) {
			t.Errorf("go build %s: output lacks %q:\n%s", dir, want, out)
		}
	}
}
