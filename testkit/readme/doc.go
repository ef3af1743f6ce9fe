// Package readme keeps the Go code quoted in the documentation compiling.
//
// Every ```go block of the documents (Documents: README.md, CHANGELOG.md,
// bench/README.md and docs/*.md) must be a verbatim copy of a marked region
// of a Go file of this module, which go vet and go test compile; TestREADME
// checks it, and fails for a fenced block with no language, which could be
// Go that the check does not see (output is ```text). A region runs from a comment line "// README: <name>" to the
// next comment line "// END README". The common indentation of the region
// and of the block is removed and trailing spaces and blank lines are
// ignored; otherwise the two must be equal.
//
// Several regions with the same name in one file form one region, joined by
// a blank line: a snippet that starts with an import declaration marks the
// import at file level and the statements inside a function. Names are
// unique within the module.
//
// To add a snippet: write it in a _test.go file of the package it shows
// (readme_test.go by convention), inside an unexported function, or an
// Example function without an "// Output:" comment, whose parameters
// declare whatever the snippet uses but does not define; put the marker
// lines around it; run gofmt; then paste the region into the document. The
// test names the document's line of any block without a matching region,
// with the nearest region and the first line where they differ. A Go block
// of bench/README.md quotes a region of this module too (bench is a module
// of its own, whose files are not searched for regions).
//
// TestREADMELinks checks the relative links of the documents: each must
// lead to a file or directory of the module, and a #anchor into a Markdown
// file to one of its headings (as GitHub names them), so a section moved to
// another file cannot leave a link behind.
//
// The code blocks of the package comment of every doc.go file (the
// indented blocks of a Go doc comment) are held to the same rule by
// TestDocGo: each must be a copy of a marked region, typically in the
// package's readme_test.go or example_test.go. A snippet that is a whole
// test function (func TestMain, func TestConformance) cannot be copied into
// a _test.go file, where go test would run it: its region is the package's
// own test of that name, or goes in a non-test file (package
// testkit/readme/notrun), compiled and never run.
//
// Every code block of a package comment is checked, whether or not it
// parses as Go, except a block that is not Go at all (a shell command, a
// table, output): its doc.go exempts it with a comment line
// "// NOT GO: <the block's first line>" outside the package comment, after
// the package clause. A NOT GO line that matches the first line of no block
// fails the test, and a block whose first line changes is checked again, so
// no Go snippet is skipped without a marker that names it.
//
// TestFunctionsAreShort holds every function of the module's non-test Go
// files to MaxFuncLines lines (LongFuncs), over the same files.
package readme
