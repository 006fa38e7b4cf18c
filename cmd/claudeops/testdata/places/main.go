// Command places measures how many places of the composition root name a
// runner or a chat platform: for each, the top-level declarations of the
// production Go files in the directory given (cmd/claudeops) that name it,
// leaving out the part's own files (those whose name holds its name) and
// struct tags (the variables' names). A runner counts where a string
// literal is its CLAUDEOPS_RUNNER value; a runner or a platform counts
// where an identifier holds its name. docs/DESIGN.md has the figures.
//
//	go run ./cmd/claudeops/testdata/places cmd/claudeops
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

var (
	runners   = []string{"local", "sandbox", "docker", "kubernetes"}
	platforms = []string{"console", "slack", "matrix"}
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: places DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.go"))
	if err != nil {
		panic(err)
	}
	asString, named := map[string]int{}, map[string]int{}
	lines := 0
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		lines += strings.Count(string(src), "\n")
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			panic(err)
		}
		base := filepath.Base(f)
		for _, d := range file.Decls {
			str, id := names(d)
			for k := range str {
				if !strings.Contains(base, k) {
					asString[k]++
				}
			}
			for k := range id {
				if !strings.Contains(base, k) {
					named[k]++
				}
			}
		}
	}
	fmt.Printf("production lines: %d\n", lines)
	for _, k := range runners {
		fmt.Printf("runner   %-10s as a string in %2d declarations, in an identifier in %2d\n", k, asString[k], named[k])
	}
	for _, k := range platforms {
		fmt.Printf("platform %-10s in an identifier in %2d declarations\n", k, named[k])
	}
}

// names are the runners d names as a string and the parts it names in an
// identifier.
func names(d ast.Decl) (str, id map[string]bool) {
	str, id = map[string]bool{}, map[string]bool{}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			n.Tag = nil
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				for _, k := range runners {
					if s == k {
						str[k] = true
					}
				}
			}
		case *ast.Ident:
			for _, k := range append(runners, platforms...) {
				if strings.Contains(strings.ToLower(n.Name), k) {
					id[k] = true
				}
			}
		}
		return true
	})
	return str, id
}
