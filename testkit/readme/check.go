package readme

import (
	"fmt"
	"strings"
)

// Check returns an error for every snippet that is not the text of one of
// the regions, naming the snippet's file, line and first line, and the
// nearest region with the first line where the two differ.
func Check(snippets []Snippet, regions []Region) []error {
	texts := make(map[string]bool, len(regions))
	for _, r := range regions {
		texts[r.Text] = true
	}
	var errs []error
	for _, s := range snippets {
		if texts[s.Text] {
			continue
		}
		msg := fmt.Sprintf("%s:%d: the go block starting %q is not a copy of any marked region (see testkit/readme/doc.go)",
			s.File, s.Line, s.FirstLine())
		if r, ok := nearest(s, regions); ok {
			msg += fmt.Sprintf("; nearest: region %q at %s:%d, %s", r.Name, r.File, r.Line, firstDifference(s.Text, r.Text))
		}
		errs = append(errs, fmt.Errorf("%s", msg))
	}
	return errs
}

// nearest returns the region sharing the most lines with s, if any shares
// one. A line of s counts once however often a region repeats it, so that
// a long region full of "}" and "return err" does not beat the snippet's
// own region with one line changed.
func nearest(s Snippet, regions []Region) (Region, bool) {
	lines := map[string]int{}
	for _, l := range strings.Split(s.Text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines[l]++
		}
	}
	var best Region
	most := 0
	for _, r := range regions {
		left := make(map[string]int, len(lines))
		for l, k := range lines {
			left[l] = k
		}
		n := 0
		for _, l := range strings.Split(r.Text, "\n") {
			if l = strings.TrimSpace(l); left[l] > 0 {
				left[l]--
				n++
			}
		}
		if n > most {
			best, most = r, n
		}
	}
	return best, most > 0
}

// firstDifference describes the first line where snippet and region differ.
func firstDifference(snippet, region string) string {
	a, b := strings.Split(snippet, "\n"), strings.Split(region, "\n")
	for i := 0; ; i++ {
		switch {
		case i >= len(a) && i >= len(b):
			return "which is the same"
		case i >= len(a):
			return fmt.Sprintf("which goes on at its line %d: %q", i+1, b[i])
		case i >= len(b):
			return fmt.Sprintf("which ends before the block's line %d: %q", i+1, a[i])
		case a[i] != b[i]:
			return fmt.Sprintf("line %d differs:\n\tblock:  %q\n\tregion: %q", i+1, a[i], b[i])
		}
	}
}
