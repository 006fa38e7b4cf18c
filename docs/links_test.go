// Package docs (tests only) holds the repository's documents to one rule:
// they stand on their own. A clone has every file they point to.
package docs

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, from this package's directory.
const root = ".."

var (
	// mdLink is an inline Markdown link or image: its target.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// outside names a place beside the repository: the shared/ folder
	// the project's notes live in (shared/…), however it is reached
	// (../shared/…, an absolute path to it).
	outside = regexp.MustCompile("(?:^|[\\s`'\"(\\[/])(?:\\.\\./)*shared/[A-Za-z]")
)

// TestLinksStayInTheRepository: every relative link of every Markdown file
// leads to a file or directory of the repository, and no Markdown file or
// Go comment names a file beside the repository (shared/…). Links to
// public sites (http, https, mailto) are left alone.
func TestLinksStayInTheRepository(t *testing.T) {
	var mds, gos int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".md":
			mds++
			checkMarkdown(t, path)
		case ".go":
			gos++
			checkGoComments(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if mds < 5 || gos < 100 {
		t.Fatalf("walked %d Markdown and %d Go files from %s: is this still docs/ of the repository?", mds, gos, root)
	}
}

func checkMarkdown(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel := relPath(path)
	for i, line := range strings.Split(string(b), "\n") {
		if outside.MatchString(line) {
			t.Errorf("%s:%d names a file beside the repository (shared/…): bring what it needs into the repository: %s", rel, i+1, strings.TrimSpace(line))
		}
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			if msg := linkProblem(path, m[1]); msg != "" {
				t.Errorf("%s:%d links %s: %s", rel, i+1, m[1], msg)
			}
		}
	}
}

// linkProblem says what is wrong with target, a link in the file at path.
func linkProblem(path, target string) string {
	if i := strings.Index(target, "://"); i > 0 || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	if anchor, ok := strings.CutPrefix(target, "#"); ok {
		if !slices.Contains(anchors(path), anchor) {
			return "no heading of that anchor in this file"
		}
		return ""
	}
	file, _, _ := strings.Cut(target, "#")
	if strings.HasPrefix(file, "/") {
		return "an absolute path: a clone has it elsewhere, or not at all"
	}
	to := filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
	if r, err := filepath.Rel(root, to); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "outside the repository"
	}
	if _, err := os.Stat(to); err != nil {
		return "no such file in the repository"
	}
	if _, anchor, ok := strings.Cut(target, "#"); ok && strings.HasSuffix(file, ".md") && !slices.Contains(anchors(to), anchor) {
		return "no heading of that anchor there"
	}
	return ""
}

// anchors are the anchors of the Markdown file's headings, as GitHub makes
// them: lower case, punctuation dropped, spaces as hyphens, a repeated one
// numbered.
func anchors(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		a := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return unicode.ToLower(r)
			}
			return -1
		}, strings.TrimSpace(strings.TrimLeft(line, "#")))
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

func checkGoComments(t *testing.T, path string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("%s: %v", relPath(path), err)
		return
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			for i, line := range strings.Split(c.Text, "\n") {
				if outside.MatchString(line) {
					t.Errorf("%s:%d: a comment names a file beside the repository (shared/…): bring what it needs into the repository: %s",
						relPath(path), fset.Position(c.Pos()).Line+i, strings.TrimSpace(line))
				}
			}
		}
	}
}

func relPath(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}
