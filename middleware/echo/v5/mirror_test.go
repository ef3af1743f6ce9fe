package echolock_test

import (
	"os"
	"strings"
	"testing"
)

// TestConfigMirrorsV4: config.go is the Echo v4 adapter's config.go with
// v5's import path and *echo.Context, so the two adapters take the same
// Config field for field, with the same docs and checks. A change made to
// one of them and not the other fails here.
func TestConfigMirrorsV4(t *testing.T) {
	v4, err := os.ReadFile("../config.go")
	if err != nil {
		t.Fatalf("the Echo v4 adapter's config.go: %v", err)
	}
	v5, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	asV4 := strings.NewReplacer("*echo.Context", "echo.Context", "labstack/echo/v5", "labstack/echo/v4").Replace(string(v5))
	want, got := strings.Split(string(v4), "\n"), strings.Split(asV4, "\n")
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Fatalf("config.go line %d differs from v4's beyond the frameworks' differences:\n v4: %q\n v5: %q", i+1, w, g)
		}
	}
}
