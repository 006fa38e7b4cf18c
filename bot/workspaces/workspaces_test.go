package workspaces

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// fakeManager is a Workspaces that records the calls made and answers as
// set: snapshots in turn, a stat, errors.
type fakeManager struct {
	calls     []string
	dir       string // where worktrees are "made" (a real directory: Prepare looks)
	snaps     []string
	stat      workspace.Stat
	commitErr error
	pushErr   error
	// continueErr is Continue's error.
	continueErr error
	unchanged   bool
	pushed      bool // Unpushed answers 0 (else 1)
	kept        bool
	onPush      func() // called as Push starts
	cuts        []workspace.PushCut
	check       workspace.CutCheck
}

func (m *fakeManager) CutPushes() ([]workspace.PushCut, error) { return m.cuts, nil }

func (m *fakeManager) CheckCut(_ context.Context, c workspace.PushCut) workspace.CutCheck {
	m.calls = append(m.calls, "check "+c.Worktree.Branch)
	return m.check
}

func (m *fakeManager) ForgetCut(c workspace.PushCut) error {
	m.calls = append(m.calls, "forget "+c.Worktree.Branch)
	return nil
}

func (m *fakeManager) Check(_ context.Context, repo string) (string, error) {
	m.calls = append(m.calls, "check "+repo)
	return "main", nil
}

func (m *fakeManager) Create(_ context.Context, repo, name string) (workspace.Worktree, error) {
	m.calls = append(m.calls, "create "+name)
	return workspace.Worktree{Repo: repo, Path: m.dir, Branch: "claudeops/" + name, Base: "0123456789abcdef"}, nil
}

func (m *fakeManager) Continue(_ context.Context, repo, branch string) (workspace.Worktree, error) {
	m.calls = append(m.calls, "continue "+branch)
	if m.continueErr != nil {
		return workspace.Worktree{}, m.continueErr
	}
	return workspace.Worktree{Repo: repo, Path: m.dir, Branch: branch, Base: "abcdef0123456789"}, nil
}

func (m *fakeManager) Snapshot(context.Context, workspace.Worktree) (string, error) {
	m.calls = append(m.calls, "snapshot")
	if len(m.snaps) == 0 {
		return "same", nil
	}
	s := m.snaps[0]
	m.snaps = m.snaps[1:]
	return s, nil
}

func (m *fakeManager) Changes(_ context.Context, _ workspace.Worktree, from, to string) (workspace.Stat, error) {
	m.calls = append(m.calls, "changes "+from+".."+to)
	return m.stat, nil
}

func (m *fakeManager) Diff(context.Context, workspace.Worktree) ([]byte, workspace.Stat, error) {
	m.calls = append(m.calls, "diff")
	return []byte("patch"), m.stat, nil
}

func (m *fakeManager) Commit(_ context.Context, _ workspace.Worktree, msg string, by workspace.Person) (string, bool, error) {
	m.calls = append(m.calls, "commit "+msg+" by "+by.Name)
	return "fedcba9876543210", !m.unchanged, m.commitErr
}

func (m *fakeManager) Push(context.Context, workspace.Worktree, string) error {
	m.calls = append(m.calls, "push")
	if m.onPush != nil {
		m.onPush()
	}
	return m.pushErr
}

func (m *fakeManager) Unpushed(context.Context, workspace.Worktree) (int, error) {
	m.calls = append(m.calls, "unpushed")
	if m.pushed {
		return 0, nil
	}
	return 1, nil
}

func (m *fakeManager) Remove(context.Context, workspace.Worktree) (bool, error) {
	m.calls = append(m.calls, "remove")
	return m.kept, nil
}

func (m *fakeManager) DiskUsage(context.Context) (int64, error) { return 3 << 20, nil }

func (m *fakeManager) Author() workspace.Person {
	return workspace.Person{Name: "Bot", Email: "bot@example.invalid"}
}

func (m *fakeManager) SessionDirs(wt workspace.Worktree) ([]workspace.SessionDir, error) {
	m.calls = append(m.calls, "session dirs "+wt.Branch)
	return []workspace.SessionDir{{Path: "/w/repos/r", Access: workspace.Readable},
		{Path: "/w/repos/r/refs", Access: workspace.Writable}, {Path: "/w/repos/r/hooks", Access: workspace.Hidden}}, nil
}

// setup is a thread of a channel bound to repo by configuration.
func setup(t *testing.T, m *fakeManager) (*threadtest.Thread, *part) {
	ft := threadtest.New("main", "alice")
	m.dir = t.TempDir()
	e := New(Config{Manager: m, Repos: []string{"console/console=/srv/api.git"}, TTL: time.Hour})
	e.Init(ft)
	return ft, e.Attach(ft).(*part)
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name     string
		run      *thread.Run
		session  string // the thread's conversation before
		worktree string // the thread's worktree before ("gone": a path not there)
		calls    []string
		said     string
	}{
		{name: "a thread's first session", calls: []string{"create thread-main-", "snapshot"},
			said: "Working on branch `claudeops/thread-main-"},
		{name: "a scheduled run's", run: &thread.Run{Schedule: store.Schedule{ID: 7}, Slot: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)},
			calls: []string{"create schedule-7-20261123-0200", "snapshot"}, said: "Working on branch `claudeops/schedule-7-20261123-0200` of `/srv/api.git` (from 0123456789)."},
		{name: "a trigger's run, a branch of its thread's", run: &thread.Run{Trigger: "alert"},
			calls: []string{"create trigger-alert-main-", "snapshot"}, said: "Working on branch `claudeops/trigger-alert-main-"},
		{name: "a worktree gone takes a fresh conversation", session: "s1", worktree: "gone",
			calls: []string{"create thread-main-", "snapshot"}, said: "This thread's earlier worktree is gone, so Claude starts a fresh conversation here (the earlier branch `b` was kept"},
		{name: "a worktree there is kept", session: "s1", worktree: "there", calls: []string{"snapshot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{}
			ft, p := setup(t, m)
			ft.Doing, ft.Rec.SessionID = tt.run, tt.session
			switch tt.worktree {
			case "gone":
				ft.Rec.Worktree, ft.Rec.Branch = "/nowhere/at/all", "b"
			case "there":
				ft.Rec.Worktree, ft.Rec.Branch = m.dir, "b"
			}
			if err := p.Prepare(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(m.calls) != len(tt.calls) {
				t.Fatalf("calls %q, want %q", m.calls, tt.calls)
			}
			for i, c := range tt.calls {
				if !strings.HasPrefix(m.calls[i], c) {
					t.Errorf("call %d %q, want %q…", i, m.calls[i], c)
				}
			}
			said := strings.Join(ft.Said, "\n")
			if tt.said == "" && said != "" || !strings.Contains(said, tt.said) {
				t.Errorf("said %q, want %q", said, tt.said)
			}
			if ft.Rec.Worktree != m.dir {
				t.Errorf("the thread's worktree %q, want %q", ft.Rec.Worktree, m.dir)
			}
			if tt.worktree == "gone" && ft.Rec.SessionID != "" {
				t.Errorf("the conversation %q survived a new worktree", ft.Rec.SessionID)
			}
		})
	}
}

func TestAfterTurn(t *testing.T) {
	changed := workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "notes.txt", Added: 1}}}
	run := &thread.Run{Schedule: store.Schedule{ID: 3, Prompt: "nightly chore", CreatedBy: "bob", Push: true}}
	tests := []struct {
		name           string
		run            *thread.Run
		turnErr        error
		pushErr        error
		unchanged      bool
		said           []string
		branch, commit string
		err            string
	}{
		{name: "a person's turn that changed a file",
			said: []string{"📝 1 file changed, +1 −0\n• `notes.txt` +1 −0\n`diff` shows the whole change of branch `b`."}},
		{name: "a run pushes", run: run, branch: "b", commit: "fedcba9876543210",
			said: []string{"📝 1 file changed", "Pushed branch `b` (commit fedcba9876)."}},
		{name: "a failed run is not pushed", run: run, turnErr: errors.New("error_during_execution: boom"), branch: "b",
			said: []string{"📝 1 file changed", "Not pushed: the run did not succeed."}, err: "error_during_execution: boom"},
		{name: "a run that changed nothing", run: run, unchanged: true, branch: "b",
			said: []string{"📝 1 file changed", "This run changed nothing: no commit, nothing pushed."}},
		{name: "a push that fails fails the run", run: run, pushErr: errors.New("rejected"), branch: "b", commit: "fedcba9876543210",
			said: []string{"📝 1 file changed", "Committed fedcba9876 on `b`, but the push failed: rejected"}, err: "push b: rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{snaps: []string{"before", "after"}, stat: changed, pushErr: tt.pushErr, unchanged: tt.unchanged}
			ft, p := setup(t, m)
			ft.Rec.Worktree, ft.Rec.Branch = m.dir, "b"
			ft.Doing = tt.run
			ctx := context.Background()
			if err := p.Prepare(ctx); err != nil { // the snapshot before the turn
				t.Fatal(err)
			}
			e := &thread.TurnEnd{Result: &claudeproc.Result{}, Err: tt.turnErr}
			p.AfterTurn(ctx, e)
			if len(ft.Said) != len(tt.said) {
				t.Fatalf("said %q, want %q", ft.Said, tt.said)
			}
			for i, s := range tt.said {
				if !strings.HasPrefix(ft.Said[i], s) {
					t.Errorf("said %q, want %q…", ft.Said[i], s)
				}
			}
			if e.Branch != tt.branch || e.Commit != tt.commit || fmt.Sprint(e.Err) != fmt.Sprint(errOrNil(tt.err)) {
				t.Errorf("turn end: branch %q commit %q err %v; want %q %q %q", e.Branch, e.Commit, e.Err, tt.branch, tt.commit, tt.err)
			}
		})
	}
}

func errOrNil(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// TestReclaim: the sweep hands the threads idle past the TTL to their
// workers; a thread still idle loses its worktree and its CLI home, a busy
// one or one doing a run keeps them.
func TestReclaim(t *testing.T) {
	tests := []struct {
		name    string
		idleFor time.Duration
		touched bool // a message came after the sweep looked
		busy    bool
		run     bool
		removed bool
	}{
		{name: "idle past the TTL", idleFor: 2 * time.Hour, removed: true},
		{name: "not idle long enough", idleFor: 30 * time.Minute},
		{name: "a message came since the sweep", idleFor: 2 * time.Hour, touched: true},
		{name: "busy", idleFor: 2 * time.Hour, busy: true},
		{name: "doing a run", idleFor: 2 * time.Hour, run: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				m := &fakeManager{kept: true}
				ft, p := setup(t, m)
				ft.Rec.Worktree, ft.Rec.Branch, ft.Rec.LastActivity = m.dir, "b", time.Now()
				ft.Records.Idle = []store.Thread{ft.Rec}
				ft.Current.Turn = map[bool]int{true: 1}[tt.busy]
				if tt.run {
					ft.Doing = &thread.Run{}
				}
				time.Sleep(tt.idleFor)
				p.ext.Sweep(ctx)
				if tt.touched {
					ft.Rec.LastActivity = time.Now()
				}
				for _, msg := range ft.TakeSent() {
					p.Receive(ctx, msg)
				}
				removed := slices.Contains(m.calls, "remove")
				if removed != tt.removed || (ft.Homes == 1) != tt.removed || (ft.Rec.Worktree == "") != tt.removed {
					t.Errorf("removed %v (calls %q, homes %d, worktree %q), want %v", removed, m.calls, ft.Homes, ft.Rec.Worktree, tt.removed)
				}
				if tt.removed && !slices.Equal(ft.Said, []string{"This thread was idle for 1h: its worktree was removed, and the branch `b` was kept: it has commits the remote does not have (uncommitted work was committed to it first)."}) {
					t.Errorf("said %q", ft.Said)
				}
			})
		})
	}
}

func TestBranchCommands(t *testing.T) {
	tests := []struct {
		name, user, cmd string
		turn            int
		calls           []string
		said            string
		// settled: the command's message was settled before git pushed
		// (a restart then tells the push from its record, not as "not run").
		settled bool
	}{
		{name: "the starter commits", user: "alice", cmd: "commit", calls: []string{"commit fix by Alice"}, said: "Committed fedcba9876 on `b`."},
		{name: "someone else may not", user: "mallory", cmd: "commit", said: "@mallory refused: commit this thread's branch"},
		{name: "not while Claude works", user: "alice", cmd: "push", turn: 1, said: "Claude is working in this branch: push once the turn has ended"},
		{name: "the starter pushes", user: "alice", cmd: "push", calls: []string{"unpushed", "push"}, said: "Pushed `b` to the remote (1 commit;", settled: true},
		{name: "anyone reads the diff", user: "mallory", cmd: "diff", calls: []string{"diff"}, said: "Branch `b` since 0123456789: 1 file changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{stat: workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "a", Added: 1}}}}
			ft, p := setup(t, m)
			ft.Rec.Worktree, ft.Rec.Branch, ft.Rec.BaseCommit = m.dir, "b", "0123456789abcdef"
			ft.Current.Turn = tt.turn
			ev := adapters.Event{User: adapters.User{ID: tt.user, Name: "Alice"}, Message: &adapters.Incoming{ID: "m1", Text: tt.cmd}}
			settledAtPush := false
			m.onPush = func() { settledAtPush = slices.Equal(ft.Settled, []string{ev.ID()}) }
			for _, c := range p.ext.Commands() {
				if c.Name == tt.cmd {
					c.Run(context.Background(), p, ev, []string{"fix"})
				}
			}
			if !slices.Equal(m.calls, tt.calls) {
				t.Errorf("calls %q, want %q", m.calls, tt.calls)
			}
			if said := strings.Join(ft.Said, "\n"); !strings.Contains(said, tt.said) {
				t.Errorf("said %q, want %q", said, tt.said)
			}
			if settledAtPush != tt.settled || (len(ft.Settled) > 0) != tt.settled {
				t.Errorf("settled before the push %v (settled %q), want %v", settledAtPush, ft.Settled, tt.settled)
			}
		})
	}
}
