package workspace

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests' own git is the oracle: run apart from the manager, with a
// hermetic environment built here (never the process's, which some tests
// poison on purpose).

var realGit = func() string {
	p, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	return p
}()

func oracleEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Oracle", "GIT_AUTHOR_EMAIL=oracle@example.org",
		"GIT_COMMITTER_NAME=Oracle", "GIT_COMMITTER_EMAIL=oracle@example.org",
	}
}

// gitOK runs the oracle git and returns its stdout; a failure ends the test.
func gitOK(t testing.TB, args ...string) string {
	t.Helper()
	out, err := gitRun(t, nil, args...)
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return out
}

func gitRun(t testing.TB, stdin []byte, args ...string) (string, error) {
	t.Helper()
	if realGit == "" {
		t.Skip("no git")
	}
	cmd := exec.Command(realGit, args...)
	cmd.Env = oracleEnv(t.TempDir())
	cmd.Dir = t.TempDir()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(err.Error() + ": " + errb.String())
	}
	return out.String(), nil
}

var osCommand = exec.Command

// plainGit runs the real git with the given environment: the control of
// a hostile test, whose outcome does not matter, only what it ran.
func plainGit(t testing.TB, env []string, args ...string) error {
	t.Helper()
	cmd := exec.Command(realGit, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	return cmd.Run()
}

// remote is a bare repository on disk standing for the remote.
type remote struct {
	t   testing.TB
	dir string
}

// newRemote makes a bare repository whose default branch is def, with one
// commit there holding files.
func newRemote(t testing.TB, def string, files map[string]string) *remote {
	t.Helper()
	r := &remote{t: t, dir: filepath.Join(t.TempDir(), "remote.git")}
	gitOK(t, "init", "--quiet", "--bare", "--initial-branch="+def, r.dir)
	r.commit(def, files, "initial")
	return r
}

// commit writes files (a nil content deletes) on branch in a fresh clone,
// commits and pushes them, and returns the commit id. A missing branch
// starts from the default one.
func (r *remote) commit(branch string, files map[string]string, msg string) string {
	r.t.Helper()
	work := filepath.Join(r.t.TempDir(), "work")
	gitOK(r.t, "clone", "--quiet", r.dir, work)
	if _, err := gitRun(r.t, nil, "-C", work, "checkout", "--quiet", branch); err != nil {
		gitOK(r.t, "-C", work, "checkout", "--quiet", "-b", branch)
	}
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	gitOK(r.t, "-C", work, "add", "-A", "--force")
	gitOK(r.t, "-C", work, "commit", "--quiet", "--allow-empty", "-m", msg)
	gitOK(r.t, "-C", work, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
	return r.rev(branch)
}

// git runs the oracle git on the bare remote.
func (r *remote) git(args ...string) string {
	r.t.Helper()
	return gitOK(r.t, append([]string{"--git-dir=" + r.dir}, args...)...)
}

func (r *remote) rev(rev string) string {
	r.t.Helper()
	return strings.TrimSpace(r.git("rev-parse", "--verify", rev))
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newManager makes a manager over a fresh directory, logging at debug
// level into the returned buffer.
func newManager(t testing.TB, mod ...func(*Options)) (*Manager, *syncBuffer) {
	t.Helper()
	if realGit == "" {
		t.Skip("no git")
	}
	logs := &syncBuffer{}
	o := Options{
		Dir:    filepath.Join(t.TempDir(), "workspaces"),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Author: Person{Name: "Bot", Email: "bot@example.org"},
	}
	for _, f := range mod {
		f(&o)
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m, logs
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func create(t testing.TB, m *Manager, repo, name string) Worktree {
	t.Helper()
	wt, err := m.Create(testCtx(t), repo, name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	return wt
}

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trap is an executable that, when anything runs it, creates a marker
// file: the oracle that no hook, filter or driver ran.
type trap struct {
	script, marker string
}

func newTrap(t testing.TB) trap {
	t.Helper()
	dir := t.TempDir()
	tr := trap{script: filepath.Join(dir, "evil.sh"), marker: filepath.Join(dir, "PWNED")}
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + tr.marker + "'\ncat\n"
	if err := os.WriteFile(tr.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return tr
}

// sprung says whether the trap ran, and what ran it.
func (tr trap) sprung() (bool, string) {
	b, err := os.ReadFile(tr.marker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, ""
	}
	return true, string(b)
}

func (tr trap) reset(t testing.TB) {
	t.Helper()
	if err := os.Remove(tr.marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// mustArm fails the test unless the trap ran: the proof that a setup
// would run code under plain git, so that its absence later means something.
func (tr trap) mustArm(t testing.TB, what string) {
	t.Helper()
	if ok, _ := tr.sprung(); !ok {
		t.Fatalf("positive control: plain git did not run the trap (%s); the hostile test would prove nothing", what)
	}
	tr.reset(t)
}

func (tr trap) mustNotSpring(t testing.TB, what string) {
	t.Helper()
	if ok, log := tr.sprung(); ok {
		t.Fatalf("%s ran attacker-controlled code:\n%s", what, log)
	}
}

// cloneOf is the manager's clone holding wt.
func cloneOf(m *Manager, wt Worktree) string {
	return filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path)))
}

// beneathCheck writes the clone's config with the oracle git as if
// nothing guarded it (its lock taken away for the while) and turns the
// manager's config check off: for tests of the protections beneath it.
func beneathCheck(t testing.TB, m *Manager, clone string, configArgs ...[]string) {
	t.Helper()
	m.checkOff = true
	lock := filepath.Join(clone, lockName)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	for _, args := range configArgs {
		gitOK(t, append([]string{"--git-dir=" + clone, "config"}, args...)...)
	}
	if err := os.Mkdir(lock, 0o500); err != nil {
		t.Fatal(err)
	}
}
