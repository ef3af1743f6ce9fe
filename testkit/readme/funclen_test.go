package readme_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/testkit/readme"
)

// TestFunctionsAreShort: no function of the module's non-test code (cmd/
// and middleware/ included) is over readme.MaxFuncLines lines.
func TestFunctionsAreShort(t *testing.T) {
	long, err := readme.LongFuncs(moduleRoot(t), readme.MaxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Error(l)
	}
}

func TestLongFuncs(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n-2) }
	root := writeFiles(t, map[string]string{
		"go.mod":            "module m\n",
		"a.go":              "package a\n\nfunc short() {\n" + body(5) + "}\n\nfunc (a) long() {\n" + body(6) + "}\n\ntype a int\n",
		"cmd/x/main.go":     "package main\n\nfunc main() {\n" + body(6) + "}\n",
		"a_test.go":         "package a\n\nfunc testLong() {\n" + body(9) + "}\n",
		"bench/go.mod":      "module b\n",
		"bench/b.go":        "package b\n\nfunc benchLong() {\n" + body(9) + "}\n",
		".hidden/h.go":      "package h\n\nfunc hiddenLong() {\n" + body(9) + "}\n",
		"testdata/t.go":     "package t\n\nfunc dataLong() {\n" + body(9) + "}\n",
		"middleware/m/m.go": "package m\n\nfunc exactly() {\n" + body(5) + "}\n",
	})
	got, err := readme.LongFuncs(root, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.go: long is 6 lines, want at most 5",
		"cmd/x/main.go: main is 6 lines, want at most 5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("LongFuncs:\ngot  %q\nwant %q", got, want)
	}
}
