package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// (5) File names with newlines, quotes, leading dashes, tabs, non-UTF-8
// bytes; commit messages that look like options or shell.
func TestHostileAwkwardNamesAndMessages(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "names")
	names := []string{
		"new\nline.txt", `quo"te's.txt`, "-rf", "--help", "\xff\xfe.txt", "tab\tname",
		" lead space", `back\slash`, "dir with space/-x", "ünï cødé.md", "$(touch x)", "*",
	}
	for _, n := range names {
		writeFile(t, wt.Path, n, "line\n")
	}
	snap, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	stat, err := m.Changes(ctx, wt, wt.Base, snap)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range stat.Files {
		got = append(got, f.Path)
		if f.Added != 1 || f.Removed != 0 || f.Binary {
			t.Errorf("%q: %+v, want 1 line added", f.Path, f)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Errorf("Stat paths = %q\nwant %q", got, want)
	}

	for i, msg := range []string{
		"-m --amend\n\nbody with \"quotes\", 'single', $(touch x) and `ticks`\n",
		"--",
		"-",
		"  leading blanks and a trailing one ",
		"# not a comment\n\n\n",
	} {
		writeFile(t, wt.Path, "a.txt", strings.Repeat("a\n", i+2))
		commit, changed, err := m.Commit(ctx, wt, msg, Person{Name: "-Eve <e@x>\n", Email: "--e@example.org"})
		if err != nil || !changed {
			t.Fatalf("Commit(%q) = %v, %v", msg, changed, err)
		}
		if err := m.Push(ctx, wt, ""); err != nil {
			t.Fatal(err)
		}
		wantMsg := msg
		if !strings.HasSuffix(wantMsg, "\n") {
			wantMsg += "\n"
		}
		raw := rem.git("cat-file", "commit", commit)
		if _, body, _ := strings.Cut(raw, "\n\n"); body != wantMsg {
			t.Errorf("stored message = %q, want %q", body, wantMsg)
		}
		if got := rem.git("log", "-1", "--format=%B", wt.Branch); got != wantMsg+"\n" {
			t.Errorf("git log %%B = %q, want %q", got, wantMsg+"\n")
		}
		if got := rem.git("log", "-1", "--format=%an|%ae|%cn|%ce", commit); got != "-Eve e@x|--e@example.org|Bot|bot@example.org\n" {
			t.Errorf("identities = %q", got)
		}
	}
	tree := strings.Split(strings.TrimSuffix(rem.git("ls-tree", "-r", "-z", "--name-only", wt.Branch), "\x00"), "\x00")
	for _, n := range names {
		if !slices.Contains(tree, n) {
			t.Errorf("%q not in the pushed tree %q", n, tree)
		}
	}
}

// (6) Any name argument becomes a valid ref under claudeops/ (by git's own
// check-ref-format) and a directory directly under the workspaces.
func TestHostileNames(t *testing.T) {
	names := []string{
		"../../x", "-f", "--force", "a..b", "@{", "@", "x.lock", "HEAD", "refs/heads/main", "",
		"   ", "\x00\n\t", "ünïcødé", "1712345678.123456", ".hidden", "x.", "a//b", "a/b/../c",
		strings.Repeat("a", 500), strings.Repeat("é", 300), "-", "--", "~^:?*[\\", "C:\\x", "thread 1a2b3c",
	}
	for _, n := range names {
		c := component(n)
		branch := BranchPrefix + c
		if _, err := gitRun(t, nil, "check-ref-format", "refs/heads/"+branch); err != nil {
			t.Errorf("%q → %q: git check-ref-format refuses it: %v", n, branch, err)
		}
		if strings.HasPrefix(c, "-") || len(c) > maxName || !validComponent().MatchString(c) {
			t.Errorf("%q → %q: not a valid component", n, c)
		}
	}
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	seen := map[string]bool{}
	for _, n := range []string{"../../x", "-f", "", "@{", strings.Repeat("z", 500), "../../x", "../../x"} {
		wt := create(t, m, rem.dir, n)
		if seen[wt.Branch] || seen[wt.Path] {
			t.Errorf("%q: %s reused", n, wt.Branch)
		}
		seen[wt.Branch], seen[wt.Path] = true, true
		if filepath.Dir(filepath.Dir(wt.Path)) != m.treesDir() {
			t.Errorf("%q: path %s not directly under %s", n, wt.Path, m.treesDir())
		}
		if fi, err := os.Lstat(wt.Path); err != nil || !fi.IsDir() {
			t.Errorf("%q: %s not a directory: %v", n, wt.Path, err)
		}
		if _, err := gitRun(t, nil, "check-ref-format", "refs/heads/"+wt.Branch); err != nil {
			t.Errorf("%q: branch %q: %v", n, wt.Branch, err)
		}
	}
}

// (7) Repository arguments that would run code or pass options to git are
// refused before git sees them; git itself refuses ext:: too.
func TestHostileRepoArguments(t *testing.T) {
	tr := newTrap(t)
	ctlTrap := newTrap(t)
	// Positive control: git with the ext transport allowed runs the command.
	_, _ = gitRun(t, nil, "-c", "protocol.ext.allow=always", "ls-remote", "ext::sh -c touch% "+ctlTrap.marker)
	if _, err := os.Stat(ctlTrap.marker); err != nil {
		t.Fatalf("positive control: ext:: did not run: %v", err)
	}
	m, _ := newManager(t)
	ctx := testCtx(t)
	for _, repo := range []string{
		"ext::sh -c touch% " + tr.marker,
		"ext::" + tr.script,
		"-u" + tr.script,
		"--upload-pack=" + tr.script,
		"-oProxyCommand=" + tr.script + ":x",
		"ssh://-oProxyCommand=" + tr.script + "/x",
		"ssh://host/-x",
		"host:-x",
		"fd::3",
		"foo::bar",
		"relative/path",
		"./x",
		"",
		"ftp://example.org/x",
		"/tmp/a\nb",
	} {
		if _, err := m.Create(ctx, repo, "x"); !errors.Is(err, ErrBadRepo) {
			t.Errorf("Create(%q) = %v, want ErrBadRepo", repo, err)
		}
		if _, err := m.Check(ctx, repo); !errors.Is(err, ErrBadRepo) {
			t.Errorf("Check(%q) = %v, want ErrBadRepo", repo, err)
		}
	}
	tr.mustNotSpring(t, "a refused repository")
	if entries, _ := os.ReadDir(m.reposDir()); len(entries) != 0 {
		t.Errorf("refused repositories left clones: %v", entries)
	}

	// Below the check of the repository argument, and beneath the check of
	// the clone's config: a clone whose remote URL is ext:: (as if its
	// config had been written by someone else) still runs nothing.
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	wt := create(t, m, rem.dir, "x")
	clone := cloneOf(m, wt)
	beneathCheck(t, m, clone, []string{"remote.origin.url", "ext::sh -c touch% " + tr.marker},
		[]string{"protocol.ext.allow", "always"})
	if err := m.fetch(ctx, mustRepo(t, m, wt.Repo), clone); err == nil {
		t.Error("fetch over ext:: succeeded")
	}
	tr.mustNotSpring(t, "fetch from an ext:: remote")
}

func TestValidateRepoAccepts(t *testing.T) {
	for _, repo := range []string{
		"/srv/git/api.git", "/srv/git/api", "file:///srv/git/api.git", "https://github.com/o/r.git",
		"https://user:tok@github.com/o/r", "http://git.internal/r.git", "git@github.com:o/r.git",
		"github.com:o/r", "ssh://git@host:2222/o/r.git", "git://host/r.git", "git+ssh://host/r",
	} {
		if err := ValidateRepo(repo); err != nil {
			t.Errorf("ValidateRepo(%q) = %v", repo, err)
		}
	}
}

func mustRepo(t *testing.T, m *Manager, repo string) *repoRef {
	t.Helper()
	r, err := m.repoRef(repo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
