package readme

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Marker comments around a region, each alone on its line.
const (
	beginMarker = "// README:"
	endMarker   = "// END README"
)

// A Region is a marked part of a Go file that documentation may quote.
type Region struct {
	Name string
	File string // the file it was read from, as given
	Line int    // 1-based line of its first begin marker
	Text string // the lines between the markers, normalised by Normalize
}

// Regions returns the marked regions of one Go source file, those with the
// same name joined by a blank line in the order they appear. Only comments
// count as markers, not text in string literals.
func Regions(file string, src []byte) ([]Region, error) {
	var (
		out    []Region
		byName = map[string]int{} // index into out
		cur    string             // name of the open region, or ""
		from   int                // 1-based line of its begin marker
	)
	lines := strings.Split(string(src), "\n")
	fset := token.NewFileSet()
	tf := fset.AddFile(file, -1, len(src))
	var s scanner.Scanner
	s.Init(tf, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.COMMENT {
			continue
		}
		p := fset.Position(pos)
		if strings.TrimSpace(lines[p.Line-1][:p.Column-1]) != "" {
			continue // after code on its line
		}
		lit = strings.TrimSpace(lit)
		switch {
		case strings.HasPrefix(lit, beginMarker):
			name := strings.TrimSpace(lit[len(beginMarker):])
			if cur != "" {
				return nil, fmt.Errorf("%s:%d: region %q begins inside region %q (missing %q?)", file, p.Line, name, cur, endMarker)
			}
			if name == "" {
				return nil, fmt.Errorf("%s:%d: region without a name", file, p.Line)
			}
			cur, from = name, p.Line
		case lit == endMarker:
			if cur == "" {
				return nil, fmt.Errorf("%s:%d: %q without a region", file, p.Line, endMarker)
			}
			text := Normalize(strings.Join(lines[from:p.Line-1], "\n"))
			if j, ok := byName[cur]; ok {
				out[j].Text += "\n\n" + text
			} else {
				byName[cur] = len(out)
				out = append(out, Region{Name: cur, File: file, Line: from, Text: text})
			}
			cur = ""
		}
	}
	if cur != "" {
		return nil, fmt.Errorf("%s:%d: region %q has no %q", file, from, cur, endMarker)
	}
	return out, nil
}

// ModuleRegions returns the regions of every Go file of the module rooted
// at root and of the nested modules its go.work uses, skipping testdata,
// hidden directories and the nested modules outside the workspace. File
// names in the regions are relative to root. A name used in two files is
// an error.
func ModuleRegions(root string) ([]Region, error) {
	var out []Region
	seen := map[string]Region{}
	err := walkGo(root, func(rel string, src []byte) error {
		rs, err := Regions(rel, src)
		for _, r := range rs {
			if prev, ok := seen[r.Name]; ok {
				return fmt.Errorf("%s:%d: region %q is also in %s:%d", r.File, r.Line, r.Name, prev.File, prev.Line)
			}
			seen[r.Name] = r
		}
		out = append(out, rs...)
		return err
	})
	return out, err
}

// walkGo calls fn with the path relative to root and the content of every
// .go file of the module rooted at root and of the nested modules that
// root's go.work uses; it skips the other nested modules (bench/).
func walkGo(root string, fn func(rel string, src []byte) error) error {
	used, err := workspaceModules(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && !used[relSlash(root, path)] {
				return filepath.SkipDir // a module outside the workspace (bench/)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), src)
	})
}

// DocFiles returns the paths, relative to root, of the doc.go files of the
// module rooted at root, with their content.
func DocFiles(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := walkGo(root, func(rel string, src []byte) error {
		if filepath.Base(rel) == "doc.go" {
			out[rel] = src
		}
		return nil
	})
	return out, err
}
