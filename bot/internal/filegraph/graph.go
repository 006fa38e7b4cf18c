package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// graph is one package's files and the arrows between them.
type graph struct {
	path    string
	files   []string           // base names, sorted
	arrows  map[[2]string]bool // from, to
	lines   map[string]int     // per file
	methods map[string]int     // per receiver type
}

// listed is what `go list -json` says of a package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

// load type-checks the package pattern names (its non-test files) and
// draws its file arrows.
func load(pattern string) (*graph, error) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	exports := map[string]string{}
	var target listed
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go list: %w", err)
		}
		exports[p.ImportPath] = p.Export
		target = p // the package itself comes last, after its deps
	}
	fset := token.NewFileSet()
	g := &graph{path: target.ImportPath, arrows: map[[2]string]bool{}, lines: map[string]int{}, methods: map[string]int{}}
	var files []*ast.File
	for _, name := range target.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(target.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		g.files = append(g.files, name)
		g.lines[name] = fset.File(f.Pos()).LineCount()
		g.countMethods(f)
	}
	slices.Sort(g.files)
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check(target.ImportPath, fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", target.ImportPath, err)
	}
	for id, obj := range info.Uses {
		if !declared(pkg, obj) {
			continue
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			g.arrows[[2]string{from, to}] = true
		}
	}
	return g, nil
}

// declared: obj is the package's own and reachable from another file: a
// package-level name, a method or a field (not a local or a parameter).
func declared(pkg *types.Package, obj types.Object) bool {
	if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
		return false
	}
	switch o := obj.(type) {
	case *types.Func:
		return true
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	case *types.TypeName, *types.Const:
		return o.Parent() == pkg.Scope()
	}
	return false
}

// countMethods counts f's methods by their receiver's type name.
func (g *graph) countMethods(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
			continue
		}
		t := fd.Recv.List[0].Type
		if st, ok := t.(*ast.StarExpr); ok {
			t = st.X
		}
		if id, ok := t.(*ast.Ident); ok {
			g.methods[id.Name]++
		}
	}
}

// backUp counts the arrows pointing to a lower layer (up, which it also
// lists, sorted) and those within one layer (sideways); layers are
// distances from root, breadth first, neighbours in name order. A file
// root does not reach (an entry of its own, such as a method cmd calls
// and nothing in the package does) has no layer: its arrows are not
// counted, and one with arrows out is returned in apart with their
// number, so that the figures say so.
func (g *graph) backUp(root string) (up, side int, ups [][2]string, apart map[string]int) {
	next := map[string][]string{}
	for a := range g.arrows {
		next[a[0]] = append(next[a[0]], a[1])
	}
	layer := map[string]int{root: 0}
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		v := queue[0]
		slices.Sort(next[v])
		for _, w := range next[v] {
			if _, seen := layer[w]; !seen {
				layer[w] = layer[v] + 1
				queue = append(queue, w)
			}
		}
	}
	apart = map[string]int{}
	for a := range g.arrows {
		la, okA := layer[a[0]]
		lb, okB := layer[a[1]]
		switch {
		case !okA:
			apart[a[0]]++
		case !okB:
		case lb < la:
			up++
			ups = append(ups, a)
		case lb == la:
			side++
		}
	}
	slices.SortFunc(ups, func(x, y [2]string) int { return strings.Compare(x[0]+" "+x[1], y[0]+" "+y[1]) })
	return up, side, ups, apart
}
