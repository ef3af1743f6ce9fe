package readme

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// workspaceModules returns the directories, relative to root and in slash
// form, of the modules that root's go.work uses ("." for root itself), or
// an empty set when root has no go.work. The repository's integrations
// are modules of their own that the workspace joins, and their files are
// documentation sources like the root module's; a module the workspace
// leaves out (bench/) is not.
func workspaceModules(root string) (map[string]bool, error) {
	src, err := os.ReadFile(filepath.Join(root, "go.work"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseUse(src), nil
}

// parseUse returns the directories of a go.work file's use directives,
// both the one-line form (use ./dir) and the block form (use ( ... )).
func parseUse(src []byte) map[string]bool {
	dirs := map[string]bool{}
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case inBlock && fields[0] == ")":
			inBlock = false
		case inBlock:
			dirs[path.Clean(strings.Trim(fields[0], `"`))] = true
		case fields[0] == "use" && len(fields) >= 2 && fields[1] == "(":
			inBlock = true
		case fields[0] == "use" && len(fields) >= 2:
			dirs[path.Clean(strings.Trim(fields[1], `"`))] = true
		}
	}
	return dirs
}

// relSlash returns p relative to root in slash form ("." for root), or p
// itself if it is not under root.
func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}
