package testcli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ImportPath is this package's import path: a call of its Bin is what
// makes a test a real-CLI test.
const ImportPath = "github.com/claudeops/claudeops/internal/testcli"

// RealTests are the tests that run the real CLI: every top-level Test
// function that reaches Bin (or reads CLAUDEOPS_TEST_CLAUDE_BIN itself),
// directly or through helpers, by package directory ("./claudeproc").
// scripts/test runs these against each CLI version it is asked for, so
// that a new real-CLI test joins the version matrix without a list to keep.
type RealTests map[string][]string

// FindRealTests reads the Go files under root (the module's directory) and
// returns its real-CLI tests. The reading is syntactic and errs on the side
// of running a test: a call x.m() counts as a call of every method named m
// in the package, and a mention of a function (passed as a value, say) as
// a call. Helpers in other packages count when they are exported functions
// of this module that reach Bin.
func FindRealTests(root string) (RealTests, error) {
	pkgs, err := parseTree(root)
	if err != nil {
		return nil, err
	}
	// Exported functions that reach Bin, by import path, grown until no
	// package adds one: a helper package may rest on another.
	exported := map[string]map[string]bool{ImportPath: {"Bin": true}}
	for changed := true; changed; {
		changed = false
		for _, p := range pkgs {
			for name := range p.reaching(exported) {
				if !ast.IsExported(name) || strings.Contains(name, ".") || exported[p.path][name] {
					continue
				}
				if exported[p.path] == nil {
					exported[p.path] = map[string]bool{}
				}
				exported[p.path][name] = true
				changed = true
			}
		}
	}
	out := RealTests{}
	for _, p := range pkgs {
		for name := range p.reaching(exported) {
			if p.isTest[name] {
				out[p.dir] = append(out[p.dir], name)
			}
		}
		slices.Sort(out[p.dir])
	}
	return out, nil
}

// Pattern is a -run pattern matching these tests (and only top-level
// names; their subtests all run).
func (r RealTests) Pattern() string {
	var names []string
	for _, ns := range r {
		names = append(names, ns...)
	}
	slices.Sort(names)
	return "^(" + strings.Join(slices.Compact(names), "|") + ")$"
}

// Packages are the directories holding real-CLI tests, sorted.
func (r RealTests) Packages() []string {
	var dirs []string
	for d, ns := range r {
		if len(ns) > 0 {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// pkg is one directory's Go files (package and external tests together:
// go test -run applies to both), reduced to who mentions what.
type pkg struct {
	dir, path string
	funcs     map[string]*funcRefs // "Name" or, for a method, "Recv.Name"
	isTest    map[string]bool      // top-level TestXxx(t *testing.T)
}

// funcRefs is what one function's body (closures included) mentions.
type funcRefs struct {
	idents  map[string]bool            // plain identifiers
	methods map[string]bool            // x.m where x is no import
	qual    map[string]map[string]bool // import path → selected names
	env     bool                       // the CLAUDEOPS_TEST_CLAUDE_BIN literal
}

// reaching returns the names of p's functions that reach an exported
// function in exported (or read the variable themselves).
func (p *pkg) reaching(exported map[string]map[string]bool) map[string]bool {
	reach := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, f := range p.funcs {
			if !reach[name] && f.reaches(exported, reach) {
				reach[name] = true
				changed = true
			}
		}
	}
	return reach
}

func (f *funcRefs) reaches(exported map[string]map[string]bool, reach map[string]bool) bool {
	if f.env {
		return true
	}
	for path, names := range f.qual {
		for n := range names {
			if exported[path][n] {
				return true
			}
		}
	}
	for name := range reach {
		recv, m, isMethod := strings.Cut(name, ".")
		if isMethod && f.methods[m] || !isMethod && f.idents[recv] {
			return true
		}
	}
	return false
}

func parseTree(root string) ([]*pkg, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	byDir := map[string]*pkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("find the real-CLI tests: %w", err)
		}
		p := byDir[rel]
		if p == nil {
			p = &pkg{dir: "./" + filepath.ToSlash(rel), path: modPath + "/" + filepath.ToSlash(rel),
				funcs: map[string]*funcRefs{}, isTest: map[string]bool{}}
			if rel == "." {
				p.dir, p.path = ".", modPath
			}
			byDir[rel] = p
		}
		testFile := strings.HasSuffix(name, "_test.go")
		if p.path == ImportPath && !testFile {
			return nil // Bin is the seed; this file's own mentions of the variable are not tests
		}
		p.add(f, testFile)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*pkg
	for _, p := range byDir {
		out = append(out, p)
	}
	return out, nil
}

func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("find the real-CLI tests: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("find the real-CLI tests: no module line in %s/go.mod", root)
}

// add records one file's functions, and package-level variables holding
// function literals, by name.
func (p *pkg) add(f *ast.File, testFile bool) {
	imports := map[string]string{} // local name → path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvName(d.Recv.List[0].Type) + "." + name
			} else if testFile && isTestFunc(d) {
				p.isTest[name] = true
			}
			p.refs(name).collect(d, imports)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							p.refs(n.Name).collect(vs.Values[i], imports)
						}
					}
				}
			}
		}
	}
}

func (p *pkg) refs(name string) *funcRefs {
	f := p.funcs[name]
	if f == nil {
		f = &funcRefs{idents: map[string]bool{}, methods: map[string]bool{}, qual: map[string]map[string]bool{}}
		p.funcs[name] = f
	}
	return f
}

func (f *funcRefs) collect(n ast.Node, imports map[string]string) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if path, ok := imports[x.Name]; ok {
					if f.qual[path] == nil {
						f.qual[path] = map[string]bool{}
					}
					f.qual[path][n.Sel.Name] = true
					return false
				}
			}
			f.methods[n.Sel.Name] = true
		case *ast.Ident:
			f.idents[n.Name] = true
		case *ast.BasicLit:
			if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && v == "CLAUDEOPS_TEST_CLAUDE_BIN" {
				f.env = true
			}
		}
		return true
	})
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// isTestFunc: TestXxx(t *testing.T), as go test finds them.
func isTestFunc(d *ast.FuncDecl) bool {
	name := d.Name.Name
	if !strings.HasPrefix(name, "Test") || name == "TestMain" || d.Type.Params == nil || len(d.Type.Params.List) != 1 {
		return false
	}
	if rest := name[len("Test"):]; rest != "" {
		if r := rest[0]; r >= 'a' && r <= 'z' {
			return false
		}
	}
	star, ok := d.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}
