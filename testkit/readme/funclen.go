package readme

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// MaxFuncLines is the longest a function of the module may be, from its
// func line to its closing brace.
const MaxFuncLines = 60

// LongFuncs returns a line for every function longer than max lines in
// the non-test Go files of the module rooted at root, naming its file,
// name and length. It covers and skips what ModuleRegions does: the nested
// modules of root's go.work are included; testdata, hidden directories and
// the nested modules outside the workspace (bench/) are not.
func LongFuncs(root string, max int) ([]string, error) {
	var long []string
	fset := token.NewFileSet()
	err := walkGo(root, func(rel string, src []byte) error {
		if strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > max {
				long = append(long, fmt.Sprintf("%s: %s is %d lines, want at most %d", rel, fd.Name.Name, n, max))
			}
		}
		return nil
	})
	return long, err
}
