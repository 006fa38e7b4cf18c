package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/mdtable"
)

// readVar is one variable the bot reads: where, and its envDefault.
type readVar struct {
	field      string // Type.Field, or the constant that names it
	def        string
	hasDefault bool
	kind       reflect.Kind
}

// readVars are the variables loadConfig parses: the env tags of config
// and of every struct nested in it (caarlos0/env's rules: a struct field
// without an env tag is walked, its envPrefix before its fields' names),
// and those read directly from the environment.
func readVars(t *testing.T) map[string]readVar {
	t.Helper()
	out := map[string]readVar{
		secretsFDVar: {field: "secretsFDVar", kind: reflect.String},
	}
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, tagged := f.Tag.Lookup("env")
			if !f.IsExported() || tag == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct && !tagged {
				walk(f.Type, prefix+f.Tag.Get("envPrefix"))
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" {
				continue
			}
			def, hasDefault := f.Tag.Lookup("envDefault")
			v := readVar{field: typ.String() + "." + f.Name, def: def, hasDefault: hasDefault, kind: f.Type.Kind()}
			name = prefix + name
			if old, ok := out[name]; ok && (old.def != v.def || old.hasDefault != v.hasDefault) {
				t.Errorf("%s is read by %s with default %q and by %s with default %q: one variable, one default", name, old.field, old.def, v.field, v.def)
			}
			out[name] = v
		}
	}
	walk(reflect.TypeFor[config](), "")
	return out
}

// docVar is a variable as docs/CONFIGURATION.md documents it.
type docVar struct {
	def   string // the default cell
	alone bool   // the only variable of its row
}

var (
	varName  = regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")
	leadCode = regexp.MustCompile("^`([^`]*)`")
)

// documentedVars reads the tables of docs/CONFIGURATION.md headed
// "| variable | default | meaning |".
func documentedVars(t *testing.T) map[string]docVar {
	t.Helper()
	b, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]docVar{}
	for _, cells := range mdtable.Rows(string(b), "| variable | default | meaning |") {
		if len(cells) < 3 {
			t.Fatalf("docs/CONFIGURATION.md: a row without its three cells: %q", cells)
		}
		names := varName.FindAllStringSubmatch(cells[0], -1)
		for _, m := range names {
			if _, dup := out[m[1]]; dup {
				t.Errorf("docs/CONFIGURATION.md documents %s twice", m[1])
			}
			out[m[1]] = docVar{def: cells[1], alone: len(names) == 1}
		}
	}
	if len(out) < 20 {
		t.Fatalf(`found %d variables in docs/CONFIGURATION.md: are its tables still headed "| variable | default | meaning |"?`, len(out))
	}
	return out
}

// TestConfigurationReference holds docs/CONFIGURATION.md to the code:
// every variable the bot reads is documented, every documented variable
// is read, and a documented default is the envDefault. A variable with an
// envDefault has a row of its own whose default cell starts with it; one
// without may show its zero value (`false`, `0`) or where its default is
// derived from (a cell naming `<…>` or `$…`), or say it in words.
func TestConfigurationReference(t *testing.T) {
	read, doc := readVars(t), documentedVars(t)
	for _, name := range slices.Sorted(maps.Keys(read)) {
		r := read[name]
		d, ok := doc[name]
		if !ok {
			t.Errorf("%s (%s) is read but not documented in docs/CONFIGURATION.md", name, r.field)
			continue
		}
		if msg := defaultProblem(r, d); msg != "" {
			t.Errorf("%s (%s): %s", name, r.field, msg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		if _, ok := read[name]; !ok {
			t.Errorf("docs/CONFIGURATION.md documents %s, which the bot does not read", name)
		}
	}
}

// defaultProblem says what is wrong with how d documents r's default.
func defaultProblem(r readVar, d docVar) string {
	lead := ""
	if m := leadCode.FindStringSubmatch(d.def); m != nil {
		lead = m[1]
	}
	switch {
	case r.hasDefault && !d.alone:
		return fmt.Sprintf("its default %q needs a row of its own", r.def)
	case r.hasDefault && lead != r.def:
		return fmt.Sprintf("documented default %q, want `%s` (its envDefault)", d.def, r.def)
	case r.hasDefault, lead == "", strings.ContainsAny(lead, "<$"):
		return ""
	case lead == zeroText(r.kind):
		return ""
	}
	return fmt.Sprintf("documented default %q, but it has no envDefault (its zero value is %q)", d.def, zeroText(r.kind))
}

// zeroText is how the documentation writes a kind's zero value.
func zeroText(k reflect.Kind) string {
	switch k {
	case reflect.Bool:
		return "false"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "0"
	}
	return ""
}

// TestVariablesNamedInCodeAreDocumented: a CLAUDEOPS_* variable named in a
// string of the production code (read with os.Getenv, named in a problem
// or a message) is in docs/CONFIGURATION.md, whether or not an env tag
// reads it. The tests' helpers (internal/) and their own variables are not
// the operator's.
func TestVariablesNamedInCodeAreDocumented(t *testing.T) {
	doc := documentedVars(t)
	named := regexp.MustCompile(`CLAUDEOPS_[A-Z0-9_]+`)
	files := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "internal" || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for _, name := range named.FindAllString(lit.Value, -1) {
				if _, ok := doc[name]; !ok && !strings.HasSuffix(name, "_") {
					t.Errorf("%s names %s, which docs/CONFIGURATION.md does not document", path, name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d production files from the repository's root: is it still ../..?", files)
	}
}
