package readme

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// A Snippet is a code block quoted in documentation.
type Snippet struct {
	File string // the file it was read from, as given
	Line int    // 1-based line of its first line of code in File
	Text string // the code, normalised by Normalize
}

// FirstLine returns the snippet's first line, for messages.
func (s Snippet) FirstLine() string {
	first, _, _ := strings.Cut(s.Text, "\n")
	return first
}

// MarkdownGo returns the fenced code blocks of a Markdown document whose
// info string starts with the word "go" (```go, ~~~go).
func MarkdownGo(file string, src []byte) []Snippet {
	return markdownBlocks(file, src, func(info []string) bool { return len(info) > 0 && info[0] == "go" })
}

// MarkdownUntagged returns the fenced code blocks of a Markdown document
// with no info string, which MarkdownGo cannot tell from Go: a Go block
// says ```go to be checked, and output says ```text.
func MarkdownUntagged(file string, src []byte) []Snippet {
	return markdownBlocks(file, src, func(info []string) bool { return len(info) == 0 })
}

// markdownBlocks returns the fenced code blocks of a Markdown document
// whose info string (split into words) keep accepts.
func markdownBlocks(file string, src []byte, keep func(info []string) bool) []Snippet {
	var out []Snippet
	scanMarkdown(src, nil, func(info []string, start int, body []string) {
		if !keep(info) {
			return
		}
		line := start
		for j := 0; j < len(body) && strings.TrimSpace(body[j]) == ""; j++ {
			line++
		}
		out = append(out, Snippet{File: file, Line: line, Text: Normalize(strings.Join(body, "\n"))})
	})
	return out
}

// scanMarkdown calls prose, if not nil, with the 1-based number and text
// of every line outside fenced code blocks and their fences, and block with
// the words of the info string, the 1-based line after the opening fence
// and the lines of every fenced code block.
func scanMarkdown(src []byte, prose func(line int, text string), block func(info []string, start int, body []string)) {
	var (
		fence string // the opening fence while inside a block, else ""
		info  []string
		start int
		body  []string
	)
	for i, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			trimmed = "" // indented code, not a fence
		}
		if fence == "" {
			if f := fenceOf(trimmed); f != "" {
				fence, info, start, body = f, strings.Fields(trimmed[len(f):]), i+2, nil
			} else if prose != nil {
				prose(i+1, line)
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" && f[0] == fence[0] && len(f) >= len(fence) &&
			strings.TrimSpace(trimmed[len(f):]) == "" {
			block(info, start, body)
			fence = ""
			continue
		}
		body = append(body, line)
	}
}

// fenceOf returns the run of three or more backticks or tildes that line
// starts with, or "".
func fenceOf(line string) string {
	if line == "" || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := len(line) - len(strings.TrimLeft(line, line[:1]))
	if n < 3 {
		return ""
	}
	return line[:n]
}

// DocComment returns the code blocks of the package doc comment of a Go
// source file.
func DocComment(file string, src []byte) ([]Snippet, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil {
		return nil, nil
	}
	var p comment.Parser
	doc := p.Parse(f.Doc.Text())
	var out []Snippet
	from := 0 // index into f.Doc.List where the search for the next block starts
	for _, b := range doc.Content {
		code, ok := b.(*comment.Code)
		if !ok {
			continue
		}
		s := Snippet{File: file, Text: Normalize(code.Text)}
		s.Line, from = lineOf(fset, f.Doc.List, from, s.FirstLine())
		out = append(out, s)
	}
	return out, nil
}

// notGoMarker starts a comment line of a doc.go file that exempts the code
// block of its package comment whose first line is the rest of the line.
const notGoMarker = "// NOT GO:"

// DocGo returns the code blocks of the package comment of a doc.go file
// that are Go, for Check: every block but those exempted by a comment line
// "// NOT GO: <the block's first line>" in the same file, outside the
// package comment (after the package clause, say). A NOT GO line that
// exempts no block is an error, so a marker cannot outlive its block or
// point at nothing.
func DocGo(file string, src []byte) ([]Snippet, error) {
	blocks, err := DocComment(file, src)
	if err != nil {
		return nil, err
	}
	type marker struct {
		line int
		used bool
	}
	markers := map[string]*marker{}
	var order []string
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile(file, -1, len(src)), src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT && strings.HasPrefix(lit, notGoMarker) {
			first := strings.TrimSpace(lit[len(notGoMarker):])
			if _, ok := markers[first]; !ok {
				markers[first] = &marker{line: fset.Position(pos).Line}
				order = append(order, first)
			}
		}
	}
	var out []Snippet
	for _, b := range blocks {
		if m, ok := markers[strings.TrimSpace(b.FirstLine())]; ok {
			m.used = true
			continue
		}
		out = append(out, b)
	}
	var errs []error
	for _, first := range order {
		if m := markers[first]; !m.used {
			errs = append(errs, fmt.Errorf("%s:%d: %q exempts no code block: no block of the package comment starts %q (see testkit/readme/doc.go)",
				file, m.line, notGoMarker, first))
		}
	}
	return out, errors.Join(errs...)
}

// lineOf finds the first comment line at or after list[from] whose text is
// first, and returns its line number and the index after it.
func lineOf(fset *token.FileSet, list []*ast.Comment, from int, first string) (line, next int) {
	for i := from; i < len(list); i++ {
		if strings.TrimSpace(strings.TrimPrefix(list[i].Text, "//")) == strings.TrimSpace(first) {
			return fset.Position(list[i].Pos()).Line, i + 1
		}
	}
	return fset.Position(list[0].Pos()).Line, from
}

// Normalize removes the indentation common to all non-blank lines of s,
// trailing white space on every line, and leading and trailing blank lines.
func Normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	prefix, first := "", true
	for _, l := range lines {
		if l == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = indent, false
			continue
		}
		for !strings.HasPrefix(indent, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}
