package readme

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Documents are the Markdown files of the module whose Go blocks and
// relative links the tests check: paths relative to the module root, or
// patterns in the syntax of path.Match. A path without a wildcard must
// exist, so a renamed document cannot drop out of the check unnoticed.
var Documents = []string{"README.md", "CHANGELOG.md", "bench/README.md", "docs/*.md"}

// MarkdownFiles returns the files of the module rooted at root that
// patterns name (see Documents), slash-separated and relative to root,
// sorted, each once.
func MarkdownFiles(root string, patterns []string) ([]string, error) {
	seen := map[string]bool{}
	var errs []error
	for _, p := range patterns {
		matches, err := fs.Glob(os.DirFS(root), p)
		if err != nil {
			errs = append(errs, fmt.Errorf("document pattern %q: %w", p, err))
			continue
		}
		if len(matches) == 0 && !strings.ContainsAny(p, `*?[\`) {
			errs = append(errs, fmt.Errorf("%s: no such document (see readme.Documents)", p))
		}
		for _, m := range matches {
			seen[m] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// A Link is a relative link of a Markdown document.
type Link struct {
	File   string // the document, slash-separated, relative to the module root
	Line   int    // 1-based
	Target string // as written: "docs/http.md", "../lock", "#errors", "cluster.md#key-layout"
}

var (
	// inlineLink matches the destination of an inline link or image,
	// ](dest) or ](dest "title"); the text before it may span lines.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^()\s<>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDef matches a link reference definition, [label]: dest.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s<>]+)>?`)
	// codeSpan matches a code span of single backticks on one line, whose
	// text is never a link.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// scheme starts an absolute URL (https:, mailto:).
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	// atxHeading matches a heading line, "## Text", with an optional
	// closing sequence of #s.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$`)
	// linkText matches an inline link in a heading, whose text is what
	// the anchor is made of.
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// MarkdownLinks returns the relative links of a Markdown document, outside
// code blocks and code spans: every link destination without a scheme
// (https:, mailto:) that is not protocol-relative (//host).
func MarkdownLinks(file string, src []byte) []Link {
	var out []Link
	scanMarkdown(src, func(line int, text string) {
		var targets []string
		if m := refDef.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[1])
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(text, ""), -1) {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if t == "" || scheme.MatchString(t) || strings.HasPrefix(t, "//") {
				continue
			}
			out = append(out, Link{File: file, Line: line, Target: t})
		}
	}, func([]string, int, []string) {})
	return out
}

// Anchors returns the anchors GitHub gives the headings of a Markdown
// document: the heading's text in lower case, without punctuation, spaces
// made hyphens; a repeated anchor gets "-1", "-2", ... in order.
func Anchors(src []byte) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	scanMarkdown(src, func(_ int, text string) {
		m := atxHeading.FindStringSubmatch(text)
		if m == nil {
			return
		}
		a := slug(m[1])
		if n := count[a]; n > 0 {
			count[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			count[a] = 1
		}
		out[a] = true
	}, func([]string, int, []string) {})
	return out
}

// slug is GitHub's anchor for a heading's text: links replaced by their
// text, lower case, every rune that is not a letter, mark, digit, '_', '-'
// or space removed, spaces made hyphens.
func slug(heading string) string {
	heading = linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckLinks returns an error for every link whose file does not exist
// under root, that leaves root, or whose anchor (#part) names no heading of
// the Markdown document it points to. An anchor into another kind of file
// (a line of a Go file, #L10) is not checked.
func CheckLinks(root string, links []Link) []error {
	anchors := map[string]map[string]bool{} // by document, read once
	var errs []error
	for _, l := range links {
		p, frag, _ := strings.Cut(l.Target, "#")
		p, err := url.PathUnescape(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %v", l.File, l.Line, l.Target, err))
			continue
		}
		target := l.File
		if p != "" {
			target = path.Join(path.Dir(l.File), p)
		}
		if target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(target) {
			errs = append(errs, fmt.Errorf("%s:%d: link %q leaves the module", l.File, l.Line, l.Target))
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: no file %s", l.File, l.Line, l.Target, target))
			continue
		}
		if frag == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		as, ok := anchors[target]
		if !ok {
			src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: link %q: %v", l.File, l.Line, l.Target, err))
				continue
			}
			as = Anchors(src)
			anchors[target] = as
		}
		if !as[frag] {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", l.File, l.Line, l.Target, target, frag))
		}
	}
	return errs
}
