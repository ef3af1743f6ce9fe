package readme_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// heavy are the module path prefixes that the root module must not
// require: every user's module graph includes the root's requirements, so
// a web or job framework, gRPC, OpenTelemetry or a test rig required there
// would reach services that only lock. The integrations that need them
// are modules of their own.
var heavy = []string{
	"github.com/gin-gonic/", "github.com/labstack/", "google.golang.org/grpc", "github.com/grpc-ecosystem/",
	"connectrpc.com/", "github.com/go-chi/", "github.com/hibiken/asynq", "github.com/go-co-op/gocron",
	"go.opentelemetry.io/", "github.com/redis/go-redis/extra/", "github.com/prometheus/",
	"github.com/Shopify/toxiproxy", "github.com/anishathalye/porcupine", "github.com/rs/zerolog",
}

// integrations are the directories that must hold a module of their own,
// each importing a framework.
var integrations = []string{
	"middleware/echo", "middleware/echo/v5", "middleware/gin", "middleware/grpc",
	"jobs/asynq", "jobs/gocron", "otel",
}

// requires returns the module paths that a go.mod file requires.
func requires(t *testing.T, gomod string) []string {
	t.Helper()
	src, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock := false
	for _, line := range strings.Split(string(src), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			out = append(out, f[0])
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) >= 3:
			out = append(out, f[1])
		}
	}
	return out
}

// TestRootModuleRequirements: the root go.mod requires go-redis and the
// light modules the library and its tests use, none of the heavy ones.
func TestRootModuleRequirements(t *testing.T) {
	reqs := requires(t, filepath.Join(moduleRoot(t), "go.mod"))
	if len(reqs) == 0 {
		t.Fatal("go.mod: no requirements read; is the parsing broken?")
	}
	for _, r := range reqs {
		for _, h := range heavy {
			if strings.HasPrefix(r, h) {
				t.Errorf("go.mod requires %s: move what imports it into a module of its own (docs/releasing.md)", r)
			}
		}
	}
}

// TestIntegrationModules: each integration that imports a framework has
// its go.mod, which replaces the root with this checkout (so go mod tidy
// works in it alone), and go.work uses it.
func TestIntegrationModules(t *testing.T) {
	root := moduleRoot(t)
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range integrations {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		up := strings.Repeat("../", strings.Count(dir, "/")+1)
		if want := "github.com/syncguard-go/syncguard => " + strings.TrimSuffix(up, "/"); !strings.Contains(string(src), want) {
			t.Errorf("%s/go.mod lacks %q", dir, want)
		}
		if !strings.Contains(string(work), "\t./"+dir+"\n") {
			t.Errorf("go.work does not use ./%s", dir)
		}
	}
}
