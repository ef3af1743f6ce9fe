package readme_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/testkit/readme"
)

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func moduleRegions(t *testing.T, root string) []readme.Region {
	t.Helper()
	regions, err := readme.ModuleRegions(root)
	if err != nil {
		t.Fatal(err)
	}
	return regions
}

// documents returns the module's Markdown documents (readme.Documents).
func documents(t *testing.T, root string) []string {
	t.Helper()
	files, err := readme.MarkdownFiles(root, readme.Documents)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestREADME fails for every ```go block of README.md, CHANGELOG.md,
// bench/README.md and docs/*.md that is not a copy of a marked region of a
// compiled Go file, and for every block of theirs with no language, which
// could be Go that the check does not see.
func TestREADME(t *testing.T) {
	root := moduleRoot(t)
	var blocks []readme.Snippet
	perFile := map[string]int{}
	for _, name := range documents(t, root) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		bs := readme.MarkdownGo(name, src)
		perFile[name] = len(bs)
		blocks = append(blocks, bs...)
		for _, b := range readme.MarkdownUntagged(name, src) {
			t.Errorf("%s:%d: the code block starting %q has no language: write ```go for Go (then it must be a region, see testkit/readme/doc.go), ```text for output",
				b.File, b.Line, b.FirstLine())
		}
	}
	if perFile["README.md"] == 0 {
		t.Fatal("README.md: no go blocks found; is the extraction broken?")
	}
	for _, err := range readme.Check(blocks, moduleRegions(t, root)) {
		t.Error(err)
	}
}

// TestREADMELinks fails for every relative link of the documents to a file
// that does not exist, or to a heading that does not.
func TestREADMELinks(t *testing.T) {
	root := moduleRoot(t)
	var links []readme.Link
	for _, name := range documents(t, root) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, readme.MarkdownLinks(name, src)...)
	}
	if len(links) == 0 {
		t.Fatal("no relative links found; is the extraction broken?")
	}
	for _, err := range readme.CheckLinks(root, links) {
		t.Error(err)
	}
}

// TestDocGo fails for every code block of a doc.go package comment that is
// not a copy of a marked region of a compiled Go file, unless a NOT GO line
// of its doc.go exempts it, and for every NOT GO line that exempts nothing.
func TestDocGo(t *testing.T) {
	root := moduleRoot(t)
	docs, err := readme.DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)
	var blocks []readme.Snippet
	for _, name := range names {
		bs, err := readme.DocGo(name, docs[name])
		if err != nil {
			t.Error(err)
		}
		blocks = append(blocks, bs...)
	}
	if len(blocks) == 0 {
		t.Fatal("doc.go files: no code blocks found; is the extraction broken?")
	}
	for _, err := range readme.Check(blocks, moduleRegions(t, root)) {
		t.Error(err)
	}
}

func TestDocGoNotGo(t *testing.T) {
	src := "// Package p does things.\n" + // 1
		"//\n" + // 2
		"//\tp.Do()\n" + // 3
		"//\n" + // 4
		"// Run:\n" + // 5
		"//\n" + // 6
		"//\tgo test ./p\n" + // 7
		"package p\n" + // 8
		"\n" + // 9
		"// NOT GO: go test ./p\n" // 10
	got, err := readme.DocGo("p/doc.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []readme.Snippet{{File: "p/doc.go", Line: 3, Text: "p.Do()"}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("DocGo: got %+v, want %+v", got, want)
	}

	// A marker whose block changed exempts nothing: the block is checked
	// and the marker is an error.
	src = strings.Replace(src, "//\tgo test ./p\n", "//\tgo test -v ./p\n", 1)
	got, err = readme.DocGo("p/doc.go", []byte(src))
	if len(got) != 2 || got[1].Text != "go test -v ./p" {
		t.Errorf("DocGo: got %+v, want p.Do() and the changed block", got)
	}
	if want := `p/doc.go:10: "// NOT GO:" exempts no code block: no block of the package comment starts "go test ./p"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("DocGo: got error %v, want one containing %q", err, want)
	}
}

const sampleMarkdown = "# Title\n" + // 1
	"\n" + // 2
	"```go\n" + // 3
	"x := 1\n" + // 4
	"```\n" + // 5
	"\n" + // 6
	"```sh\n" + // 7
	"make test\n" + // 8
	"```\n" + // 9
	"- a list item:\n" + // 10
	"\n" + // 11
	"  ````go title\n" + // 12
	"\n" + // 13
	"  if x > 0 {\n" + // 14
	"  \tx--\n" + // 15
	"  ```\n" + // 16
	"  }\n" + // 17
	"  ````\n" + // 18
	"~~~go\n" + // 19
	"y := 2 \n" + // 20
	"~~~\n" + // 21
	"```golang\n" + // 22
	"z := 3\n" + // 23
	"```\n" // 24

func TestMarkdownGo(t *testing.T) {
	got := readme.MarkdownGo("doc.md", []byte(sampleMarkdown))
	want := []readme.Snippet{
		{File: "doc.md", Line: 4, Text: "x := 1"},
		{File: "doc.md", Line: 14, Text: "if x > 0 {\n\tx--\n```\n}"},
		{File: "doc.md", Line: 20, Text: "y := 2"},
	}
	if len(got) != len(want) {
		t.Fatalf("MarkdownGo: got %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

const sampleGo = `package p

// README: imports
import "fmt"

// END README

func f() {
	// README: body
	if true {
		fmt.Println("x")
	}
	// END README

	// README: imports
	fmt.Println("y")
	// END README
}
`

func TestRegions(t *testing.T) {
	got, err := readme.Regions("p.go", []byte(sampleGo))
	if err != nil {
		t.Fatal(err)
	}
	want := []readme.Region{
		{Name: "imports", File: "p.go", Line: 3, Text: "import \"fmt\"\n\nfmt.Println(\"y\")"},
		{Name: "body", File: "p.go", Line: 9, Text: "if true {\n\tfmt.Println(\"x\")\n}"},
	}
	if len(got) != len(want) {
		t.Fatalf("Regions: got %d regions %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("region %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRegionsErrors(t *testing.T) {
	tests := []struct {
		desc, src, want string
	}{
		{"unclosed", "// README: a\nx\n", `p.go:1: region "a" has no`},
		{"nested", "// README: a\n// README: b\n// END README\n", `p.go:2: region "b" begins inside region "a"`},
		{"stray end", "x\n// END README\n", `p.go:2: "// END README" without a region`},
		{"no name", "// README: \n// END README\n", `p.go:1: region without a name`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			_, err := readme.Regions("p.go", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Regions: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDocComment(t *testing.T) {
	src := "// Package p does things.\n" + // 1
		"//\n" + // 2
		"//\tx, err := p.New()\n" + // 3
		"//\tif err != nil {\n" + // 4
		"//\t\treturn err\n" + // 5
		"//\t}\n" + // 6
		"//\n" + // 7
		"// Then:\n" + // 8
		"//\n" + // 9
		"//\tx.Close()\n" + // 10
		"package p\n"
	got, err := readme.DocComment("p/doc.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []readme.Snippet{
		{File: "p/doc.go", Line: 3, Text: "x, err := p.New()\nif err != nil {\n\treturn err\n}"},
		{File: "p/doc.go", Line: 10, Text: "x.Close()"},
	}
	if len(got) != len(want) {
		t.Fatalf("DocComment: got %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestCheck shows what a broken snippet reports: its file, line and first
// line, and where it departs from the nearest region.
func TestCheck(t *testing.T) {
	regions := []readme.Region{
		{Name: "errs", File: "lock/readme_test.go", Line: 10, Text: "var le *lock.LockedError\nif errors.As(err, &le) {\n\tretry(le.ExpiresAt)\n}"},
		{Name: "other", File: "x_test.go", Line: 3, Text: "fmt.Println(1)"},
		{Name: "boilerplate", File: "y_test.go", Line: 7, Text: "if err != nil {\n\treturn err\n}\nif err != nil {\n\treturn err\n}"},
		{Name: "own", File: "z_test.go", Line: 5, Text: "x, err := f()\nif err != nil {\n\treturn err\n}\nlog.Print(1)"},
	}
	tests := []struct {
		desc, block string
		want        []string // substrings of the one error; none: no error
	}{
		{desc: "copy", block: "var le *lock.LockedError\nif errors.As(err, &le) {\n\tretry(le.ExpiresAt)\n}"},
		{
			desc:  "changed line",
			block: "var le *lock.LockedError\nif errors.As(err, &*lock.LockedError) {\n\tretry(le.ExpiresAt)\n}",
			want: []string{`README.md:42: the go block starting "var le *lock.LockedError"`,
				`nearest: region "errs" at lock/readme_test.go:10`, "line 2 differs", `"if errors.As(err, &*lock.LockedError) {"`},
		},
		{
			desc:  "shorter",
			block: "var le *lock.LockedError",
			want:  []string{`region "errs"`, `goes on at its line 2: "if errors.As(err, &le) {"`},
		},
		{
			desc:  "longer",
			block: "fmt.Println(1)\nfmt.Println(2)",
			want:  []string{`region "other"`, `ends before the block's line 2: "fmt.Println(2)"`},
		},
		{desc: "unrelated", block: "os.Exit(3)", want: []string{`starting "os.Exit(3)"`}},
		{
			desc:  "repeated lines do not count twice",
			block: "x, err := f()\nif err != nil {\n\treturn err\n}\nlog.Print(2)",
			want:  []string{`region "own" at z_test.go:5`, "line 5 differs"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			errs := readme.Check([]readme.Snippet{{File: "README.md", Line: 42, Text: tc.block}}, regions)
			if len(tc.want) == 0 {
				if len(errs) != 0 {
					t.Errorf("Check: got %v, want no error", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("Check: got %d errors %v, want 1", len(errs), errs)
			}
			msg := errors.Join(errs...).Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Check: got %q, want it to contain %q", msg, w)
				}
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ desc, in, want string }{
		{"tabs", "\n\t\tif x {\n\t\t\ty()  \n\n\t\t}\n\n", "if x {\n\ty()\n\n}"},
		{"spaces", "  a\n    b\n", "a\n  b"},
		{"mixed keeps the shared part", "\t a\n\tb\n", " a\nb"},
		{"empty", "\n\n", ""},
	}
	for _, tc := range tests {
		if got := readme.Normalize(tc.in); got != tc.want {
			t.Errorf("%s: Normalize(%q) = %q, want %q", tc.desc, tc.in, got, tc.want)
		}
	}
}

// TestModuleFiles checks the walk over the module: doc.go files of every
// package, none of the nested bench module, and this module's regions.
func TestModuleFiles(t *testing.T) {
	root := moduleRoot(t)
	docs, err := readme.DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := docs["lock/doc.go"]; !ok {
		t.Errorf("DocFiles: got %d files without lock/doc.go", len(docs))
	}
	for name := range docs {
		if strings.HasPrefix(name, "bench/") {
			t.Errorf("DocFiles: got %s, from the nested bench module", name)
		}
	}
	names := map[string]string{}
	for _, r := range moduleRegions(t, root) {
		names[r.Name] = r.File
	}
	if got, want := names["usage"], "redisbackend/readme_test.go"; got != want {
		t.Errorf("ModuleRegions: region usage in %q, want %q", got, want)
	}
}

// writeFiles creates the files of a test tree under a temporary directory
// and returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadmeMarkdownFiles(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"README.md": "", "docs/b.md": "", "docs/a.md": "", "docs/x.txt": "", "bench/RESULTS.md": "",
	})
	got, err := readme.MarkdownFiles(root, []string{"README.md", "docs/*.md", "README.md"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"README.md", "docs/a.md", "docs/b.md"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("MarkdownFiles: got %q, want %q", got, want)
	}
	// A named document that is missing is an error; an empty glob is not.
	_, err = readme.MarkdownFiles(root, []string{"CHANGELOG.md", "guides/*.md"})
	if want := "CHANGELOG.md: no such document"; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "guides") {
		t.Errorf("MarkdownFiles: got error %v, want one about CHANGELOG.md only", err)
	}
}

func TestReadmeMarkdownUntagged(t *testing.T) {
	got := readme.MarkdownUntagged("doc.md", []byte(sampleMarkdown+"```\nfmt.Println(1)\n```\n"))
	want := []readme.Snippet{{File: "doc.md", Line: 26, Text: "fmt.Println(1)"}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("MarkdownUntagged: got %+v, want %+v", got, want)
	}
}

const linkedMarkdown = "# Guide: `lock.Do` / `lock.Hold`\n" + // 1
	"\n" + // 2
	"See [the key layout](#key-layout), [Compatibility](#compatibility-with-the-typescript-syncguard)\n" + // 3
	"and [a missing part](#nowhere). [`lock`](../lock) [docs](https://pkg.go.dev/x) [mail](mailto:a@b)\n" + // 4
	"`[not](a-link.md)` [gone](gone.md) [other](other.md#usage) [stale](other.md#changes)\n" + // 5
	"```sh\n" + // 6
	"# not a heading; [not](a-link.md)\n" + // 7
	"```\n" + // 8
	"## Key layout\n" + // 9
	"## Key layout\n" + // 10
	"## Compatibility with the [TypeScript](https://x) syncguard ##\n" + // 11
	"[up]: ../README.md\n" + // 12
	"[escapes]: ../../etc/passwd\n" // 13

func TestReadmeAnchors(t *testing.T) {
	got := readme.Anchors([]byte(linkedMarkdown))
	for _, want := range []string{"guide-lockdo--lockhold", "key-layout", "key-layout-1", "compatibility-with-the-typescript-syncguard"} {
		if !got[want] {
			t.Errorf("Anchors: got %v, want it to include %q", got, want)
		}
	}
	if got["not-a-heading-not-a-linkmd"] || len(got) != 4 {
		t.Errorf("Anchors: got %v, want the 4 headings outside the code block", got)
	}
}

func TestReadmeLinks(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"README.md":     "",
		"lock/doc.go":   "",
		"docs/guide.md": linkedMarkdown,
		"docs/other.md": "# Usage\n",
	})
	links := readme.MarkdownLinks("docs/guide.md", []byte(linkedMarkdown))
	var targets []string
	for _, l := range links {
		targets = append(targets, fmt.Sprintf("%d:%s", l.Line, l.Target))
	}
	want := "3:#key-layout 3:#compatibility-with-the-typescript-syncguard 4:#nowhere 4:../lock " +
		"5:gone.md 5:other.md#usage 5:other.md#changes 12:../README.md 13:../../etc/passwd"
	if got := strings.Join(targets, " "); got != want {
		t.Errorf("MarkdownLinks:\ngot  %s\nwant %s", got, want)
	}
	var got []string
	for _, err := range readme.CheckLinks(root, links) {
		got = append(got, err.Error())
	}
	wantErrs := []string{
		`docs/guide.md:4: link "#nowhere": docs/guide.md has no heading with the anchor #nowhere`,
		`docs/guide.md:5: link "gone.md": no file docs/gone.md`,
		`docs/guide.md:5: link "other.md#changes": docs/other.md has no heading with the anchor #changes`,
		`docs/guide.md:13: link "../../etc/passwd" leaves the module`,
	}
	if strings.Join(got, "\n") != strings.Join(wantErrs, "\n") {
		t.Errorf("CheckLinks: got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(wantErrs, "\n\t"))
	}
}
