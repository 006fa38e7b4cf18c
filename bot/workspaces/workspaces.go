package workspaces

import (
	"context"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// Config binds channels to repositories. cmd/claudeops parses the
// environment into the fields with env tags and builds the rest.
type Config struct {
	// Manager keeps the clones and worktrees; nil: no channel can be bound.
	Manager Workspaces `env:"-"`
	// Channels stores a channel's binding made with `repo` (its repo
	// setting, binding.go); *store.Store is it.
	Channels SettingSaver `env:"-"`
	// Repos binds channels by configuration, each "<channel key>=<path or
	// URL>" (spaces around either side ignored; a later one for a channel
	// wins): cmd gives them to the settings as the configuration's values
	// at their channels, which the settings file and chat override
	// (binding.go).
	Repos []string `env:"CLAUDEOPS_REPOS"`
	// Forges finds the forge of a bound repository, for `pr`; nil: none
	// has one.
	Forges Forges `env:"-"`
	// Pulls records the pull requests the bot opens or updates (a review
	// on one finds its thread by it) and finds a schedule's open one;
	// *store.Store is it. nil: nothing is recorded.
	Pulls Pulls `env:"-"`
	// TTL: a thread idle this long loses its worktree (default 7 days).
	TTL time.Duration `env:"CLAUDEOPS_WORKTREE_TTL" envDefault:"168h"`
	// Sweep is how often idle worktrees are looked for (default: an hour,
	// or TTL/4 when that is shorter).
	Sweep time.Duration `env:"-"`
}

// Workspaces is what the extension needs of the repository workspaces;
// *workspace.Manager is it. Every method runs git on the host, on content
// the model wrote: the implementation must not let that content run
// anything (see package workspace).
type Workspaces interface {
	// Check clones or fetches repo and returns its default branch.
	Check(ctx context.Context, repo string) (string, error)
	// Create makes a worktree on a new branch claudeops/<name>, from the
	// repository's default branch after a fetch.
	Create(ctx context.Context, repo, name string) (workspace.Worktree, error)
	// Continue makes a worktree on the bot's branch the remote has, at
	// the remote's tip (Base), so that its push is a fast-forward; it
	// refuses a branch still checked out (workspace.ErrBusy).
	Continue(ctx context.Context, repo, branch string) (workspace.Worktree, error)
	// Snapshot names the worktree's content as it is now.
	Snapshot(ctx context.Context, wt workspace.Worktree) (string, error)
	// Changes is the stat between two snapshots (or Base and a snapshot).
	Changes(ctx context.Context, wt workspace.Worktree, from, to string) (workspace.Stat, error)
	// Diff is the whole change since Base, committed or not.
	Diff(ctx context.Context, wt workspace.Worktree) ([]byte, workspace.Stat, error)
	// Commit commits everything; changed is false when there was nothing.
	Commit(ctx context.Context, wt workspace.Worktree, message string, by workspace.Person) (commit string, changed bool, err error)
	// Push pushes the branch to the remote's branch of the same name;
	// owner (the thread's key) is kept with the push while it runs, to be
	// told should the bot die meanwhile (CutPushes).
	Push(ctx context.Context, wt workspace.Worktree, owner string) error
	// Unpushed counts the branch's commits the remote does not have.
	Unpushed(ctx context.Context, wt workspace.Worktree) (int, error)
	// Remove removes the worktree (committing what is uncommitted first)
	// and the branch unless it has unpushed commits (kept).
	Remove(ctx context.Context, wt workspace.Worktree) (kept bool, err error)
	// DiskUsage is the bytes the workspaces use.
	DiskUsage(ctx context.Context) (int64, error)
	// SessionDirs is what of the worktree's clone its session must see
	// for its own git to work, and how (the runner shows them).
	SessionDirs(wt workspace.Worktree) ([]workspace.SessionDir, error)
	// Author is the identity the bot commits with.
	Author() workspace.Person
}

// Forges finds the forge a repository is on. ForgeOf returns the forge
// and the repository's owner and name there for repo (a clone URL or path
// as bound); ok is false when no forge is configured for it. The forge
// holds its own token: nothing of it reaches the extension.
type Forges interface {
	ForgeOf(repo string) (f forge.Forge, r forge.Repo, ok bool)
}

// Pulls keeps the pull requests the bot opened; *store.Store is it.
type Pulls interface {
	SavePullRequest(ctx context.Context, p store.PullRequest) error
	// OpenPullRequestOfSchedule is the schedule's pull request open as
	// last seen (ok false: none).
	OpenPullRequestOfSchedule(ctx context.Context, scheduleID int64) (p store.PullRequest, ok bool, err error)
	// PullRequestsOfThread are the thread's pull requests, newest first.
	PullRequestsOfThread(ctx context.Context, threadKey string) ([]store.PullRequest, error)
	// SetPullRequestState records the state the forge last showed.
	SetPullRequestState(ctx context.Context, url, state string, at time.Time) error
}

// noRepo is the repo setting `repo none` gives: the channel is unbound
// even where a wider scope or the configuration binds it.
const noRepo = "none"

// gitTimeout bounds the quick git calls made on a worker's path
// (snapshots, stats); clones, fetches and pushes get gitLongTimeout.
const (
	gitTimeout     = time.Minute
	gitLongTimeout = 10 * time.Minute
)

// Extension is the workspaces extension: one per bot.
type Extension struct {
	cfg   Config
	repos map[string]string // cfg.Repos: channel key → repository
	host  thread.Host
}

var (
	_ thread.Commander = (*Extension)(nil)
	_ thread.Sweeper   = (*Extension)(nil)
)

// New makes the extension; zero durations take the defaults.
func New(cfg Config) *Extension {
	if cfg.TTL <= 0 {
		cfg.TTL = 7 * 24 * time.Hour
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = min(time.Hour, cfg.TTL/4)
	}
	repos := make(map[string]string, len(cfg.Repos))
	for _, b := range cfg.Repos {
		if key, repo, ok := strings.Cut(b, "="); ok {
			repos[strings.TrimSpace(key)] = strings.TrimSpace(repo)
		}
	}
	return &Extension{cfg: cfg, repos: repos}
}

func (e *Extension) Name() string       { return "workspaces" }
func (e *Extension) Init(h thread.Host) { e.host = h }

// Attach makes the extension's part in thread t.
func (e *Extension) Attach(t thread.Thread) any { return &part{ext: e, t: t} }

// reclaim asks a thread's part to remove its worktree, idle past the TTL.
type reclaim struct{}

func (e *Extension) SweepEvery() time.Duration { return e.cfg.Sweep }

// Sweep hands each thread whose worktree has been idle past the TTL to its
// worker, which removes it unless the thread is busy.
func (e *Extension) Sweep(ctx context.Context) {
	if e.cfg.Manager == nil {
		return
	}
	idle, err := e.host.Store().IdleWorktrees(ctx, e.host.Now().Add(-e.cfg.TTL))
	if err != nil {
		e.host.Log().Error("look for idle worktrees", "err", err)
		return
	}
	for _, t := range idle {
		e.host.PostTo(adapters.ThreadKey(t.Key), reclaim{})
	}
}
