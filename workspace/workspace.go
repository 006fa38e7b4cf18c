package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configures a Manager.
type Options struct {
	// Dir is the workspaces directory (CLAUDEOPS_WORKSPACES), created 0700
	// if missing. Required.
	Dir string
	// Git is the git binary, "git" (looked up in PATH) when empty.
	Git string
	// Logger receives what the manager does; slog.Default() when nil.
	Logger *slog.Logger
	// Author is the committer of every commit, and the author when Commit
	// is given none. Defaults to "claudeops <claudeops@localhost>".
	Author Person
	// Timeout bounds each local git call (2 minutes when zero).
	Timeout time.Duration
	// NetTimeout bounds each git call that talks to the remote or checks
	// out a whole tree: clone, fetch, ls-remote, push, worktree add
	// (15 minutes when zero).
	NetTimeout time.Duration
	// MaxDiff caps the patch Diff returns (32 MiB when zero); a larger one
	// is ErrDiffTooLarge.
	MaxDiff int64
	// Exclude are patterns (.gitignore syntax, from a worktree's root) of
	// untracked files that Snapshot, Diff, Commit and Remove never stage;
	// a file already tracked, or staged in the worktree's own index (a
	// session's "git add"), is committed as usual. They outrank the
	// worktree's .gitignore. Nil means DefaultExclude; empty, none.
	Exclude []string
}

// DefaultExclude leaves out the directory where the bot saves the files
// people attach in a thread: they are the thread's, not the repository's.
var DefaultExclude = []string{"/attachments/"}

// Person is a commit's author or committer.
type Person struct{ Name, Email string }

// Worktree is one working tree of a repository, on a branch of its own.
// It is plain data: callers may keep it (e.g. in the store) and hand it
// back after a restart; every method validates it against Dir first.
type Worktree struct {
	Repo   string // the repository as bound (path or clone URL)
	Path   string // absolute path of the worktree: the session's working directory
	Branch string // e.g. "claudeops/thread-1a2b3c"
	Base   string // commit id the branch started from (the default branch's tip after the fetch)
}

// Stat is the size of a change.
type Stat struct {
	Files          []FileStat
	Added, Removed int
}

// FileStat is one file's part of a Stat. Renames are detected as git
// does by default: Path is the new name and OldPath the old one.
type FileStat struct {
	Path           string
	OldPath        string // set only for a rename
	Added, Removed int    // lines; zero for a binary file
	Binary         bool
}

var (
	// ErrBadRepo is a repository argument refused before git sees it.
	ErrBadRepo = errors.New("workspace: repository refused")
	// ErrBadWorktree is a Worktree that is not one this manager made.
	ErrBadWorktree = errors.New("workspace: not a worktree of this workspaces directory")
	// ErrGone is a worktree or branch that no longer exists.
	ErrGone = errors.New("workspace: worktree removed")
	// ErrDiffTooLarge is a patch over Options.MaxDiff; Diff still returns its Stat.
	ErrDiffTooLarge = errors.New("workspace: diff too large")
)

// Manager keeps the clones and worktrees under one workspaces directory;
// one Manager per directory (its locks are its own). Its methods are safe
// for concurrent use: calls that change a clone's
// refs or worktrees (Create, Check, Commit, Push, Remove) take that
// clone's lock, which waits for ctx; Snapshot, Changes, Diff and
// Unpushed only add objects or read, and run alongside them.
type Manager struct {
	dir        string // absolute, symlinks resolved: git records worktrees by real path
	git        string
	log        *slog.Logger
	author     Person
	timeout    time.Duration
	netTimeout time.Duration
	maxDiff    int64
	exclude    []string // ls-files arguments: Options.Exclude
	env        []string // the git processes' whole environment
	base       []string // the arguments every git call starts with
	// checkOff skips the clones' config check: only tests set it, to show
	// what the check stops and to reach the protections beneath it.
	checkOff bool
	// unsupervised runs git as it ran before its supervision: only tests
	// set it, the control showing what the supervision stops.
	unsupervised bool
	// started is when New made it: a lock file older is no git of its own.
	started time.Time

	mu      sync.Mutex
	locks   map[string]chan struct{} // per clone key, a one-slot semaphore
	secrets map[string]struct{}      // credentials seen in clone URLs, redacted from errors
}

// New checks o and creates the workspaces directory (0700) if missing.
func New(o Options) (*Manager, error) {
	if o.Dir == "" {
		return nil, errors.New("workspace: no workspaces directory")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: resolve %s: %w", o.Dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create %s: %w", abs, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: resolve %s: %w", abs, err)
	}
	gitBin := o.Git
	if gitBin == "" {
		gitBin = "git"
	}
	if gitBin, err = exec.LookPath(gitBin); err != nil {
		return nil, fmt.Errorf("workspace: find git: %w", err)
	}
	m := &Manager{
		dir: real, git: gitBin, log: o.Logger, author: o.Author,
		timeout: o.Timeout, netTimeout: o.NetTimeout, maxDiff: o.MaxDiff,
		locks: map[string]chan struct{}{}, secrets: map[string]struct{}{},
		started: time.Now(),
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("component", "workspace")
	if m.author = cleanPerson(m.author); m.author.Name == "" || m.author.Email == "" {
		m.author = defaultAuthor
	}
	if m.timeout <= 0 {
		m.timeout = 2 * time.Minute
	}
	if m.netTimeout <= 0 {
		m.netTimeout = 15 * time.Minute
	}
	if m.maxDiff <= 0 {
		m.maxDiff = 32 << 20
	}
	exclude := o.Exclude
	if exclude == nil {
		exclude = DefaultExclude
	}
	for _, p := range exclude {
		if p == "" || strings.ContainsAny(p, "\x00\n") {
			return nil, fmt.Errorf("workspace: exclude pattern %q", p)
		}
		m.exclude = append(m.exclude, "--exclude="+p)
	}
	for _, d := range []string{m.reposDir(), m.treesDir(), m.tmpDir(), m.homeDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("workspace: create %s: %w", d, err)
		}
	}
	m.env = gitEnv(os.Environ(), m.homeDir())
	m.base = baseArgs(m.env)
	m.dropDeadTemp()
	return m, nil
}

// Dir is the workspaces directory, absolute and with symlinks resolved.
func (m *Manager) Dir() string { return m.dir }

func (m *Manager) reposDir() string { return filepath.Join(m.dir, "repos") }
func (m *Manager) treesDir() string { return filepath.Join(m.dir, "trees") }
func (m *Manager) tmpDir() string   { return filepath.Join(m.dir, "tmp") }

// homeDir is the git processes' HOME: empty, so that nothing of the
// operator's (~/.gitconfig, ~/.config/git/attributes) is read.
func (m *Manager) homeDir() string { return filepath.Join(m.dir, "home") }

// lock takes the clone key's lock, waiting until ctx is done.
func (m *Manager) lock(ctx context.Context, key string) (unlock func(), err error) {
	m.mu.Lock()
	ch, ok := m.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		m.locks[key] = ch
	}
	m.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("workspace: wait for the clone's lock: %w", context.Cause(ctx))
	}
}
