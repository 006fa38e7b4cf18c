package workspaces

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// TestScheduledRunPR: a --pr schedule's run opens a pull request from its
// pushed branch, or continues the branch of the schedule's one still open
// and updates it; one the forge shows closed is recorded so and a new one
// opened; a run that changed nothing opens none; a forge error, or a
// branch that cannot be continued, is told and is the run's error. Each
// run that is done hands its worktree over.
func TestScheduledRunPR(t *testing.T) {
	const url1, branch1 = "https://forge.example/acme/api/pulls/1", "claudeops/schedule-3-20261128-0230"
	open1 := func() *store.PullRequest {
		return &store.PullRequest{URL: url1, Repo: "/srv/api.git", Number: 1, Head: branch1, State: "open", ScheduleID: 3}
	}
	tests := []struct {
		name        string
		open        *store.PullRequest // the schedule's open one, as recorded
		forgeOpen   bool               // the forge still shows it open
		forgeErr    error
		continueErr error
		unchanged   bool
		calls       []string // the manager's, from the first create or continue
		said        []string // each a prefix, in order
		pr, err     string
		states      []string
		saved       int
	}{
		{name: "the first run opens one", calls: []string{"create schedule-3-20261129-0230"},
			said: []string{"Working on branch `claudeops/schedule-3-20261129-0230`", "📝", "Pushed branch", "Pull request #1 opened from `claudeops/schedule-3-20261129-0230` into `main`: " + url1},
			pr:   url1, saved: 1},
		{name: "the next run continues the open one", open: open1(), forgeOpen: true, calls: []string{"continue " + branch1},
			said: []string{"Continuing pull request #1 (" + url1 + "): working on its branch `" + branch1 + "`", "📝", "Pushed branch `" + branch1 + "`", "Pull request #1 updated from `" + branch1 + "`"},
			pr:   url1, saved: 1},
		{name: "one closed meanwhile is recorded so, and a new one opened", open: open1(), calls: []string{"create schedule-3-20261129-0230"},
			said:   []string{"Pull request #1 (" + url1 + ") was closed or merged since: this run starts a new branch.", "Working on branch", "📝", "Pushed branch", "Pull request #2 opened from `claudeops/schedule-3-20261129-0230`"},
			states: []string{url1 + " closed"}, pr: "https://forge.example/acme/api/pulls/2", saved: 1},
		{name: "a run that changed nothing opens none", unchanged: true, calls: []string{"create schedule-3-20261129-0230"},
			said: []string{"Working on branch", "📝", "This run changed nothing: no commit, nothing pushed, no pull request."}},
		{name: "a forge error is told and fails the run; the branch stays pushed", forgeErr: errors.New("503 unavailable"),
			calls: []string{"create schedule-3-20261129-0230"},
			said:  []string{"Working on branch", "📝", "Pushed branch", "No pull request: the forge refused: 503 unavailable. The branch `claudeops/schedule-3-20261129-0230` stays pushed."},
			err:   "pull request not opened: the forge refused: 503 unavailable"},
		{name: "a branch in use is not continued, and no second pull request opened", open: open1(), forgeOpen: true,
			continueErr: fmt.Errorf("continue: %w", workspace.ErrBusy), calls: []string{"continue " + branch1, "create schedule-3-20261129-0230"},
			said: []string{"This thread works on a new branch: pull request #1's branch `" + branch1 + "` could not be continued", "Working on branch", "📝", "Pushed branch", "No pull request: pull request #1's branch"},
			err:  "pull request not opened: pull request #1's branch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{snaps: []string{"before", "after"}, unchanged: tt.unchanged, continueErr: tt.continueErr,
				stat: workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "deps.txt", Added: 1}}}}
			m.dir = t.TempDir()
			f := &fakeForge{}
			if tt.open != nil && tt.forgeOpen {
				f.prs = map[string]forge.PR{tt.open.Head: {Number: 1, URL: url1, State: "open", Head: tt.open.Head, Base: "main"}}
			} else if tt.open != nil {
				f.prs = map[string]forge.PR{tt.open.Head: {Number: 1, URL: url1, State: "closed", Head: tt.open.Head, Base: "main"}}
			}
			pulls := &fakePulls{open: tt.open}
			ft := threadtest.New("run-1", "schedule:3")
			ft.Doing = &thread.Run{Schedule: store.Schedule{ID: 3, Spec: "30 2 * * *", Prompt: "update the dependencies", CreatedBy: "bob", Push: true, PR: true},
				Slot: time.Date(2026, 11, 29, 2, 30, 0, 0, time.UTC)}
			e := New(Config{Manager: m, Repos: []string{"console/console=/srv/api.git"}, Forges: fakeForges{f}, Pulls: pulls})
			e.Init(ft)
			p := e.Attach(ft).(*part)
			ctx := context.Background()
			if err := p.Prepare(ctx); err != nil {
				t.Fatal(err)
			}
			f.err = tt.forgeErr
			end := &thread.TurnEnd{Result: &claudeproc.Result{}, Cost: 0.25}
			p.AfterTurn(ctx, end)
			first := slices.IndexFunc(m.calls, func(c string) bool { return strings.HasPrefix(c, "create") || strings.HasPrefix(c, "continue") })
			if got := slices.DeleteFunc(slices.Clone(m.calls[max(first, 0):]), func(c string) bool {
				return !strings.HasPrefix(c, "create") && !strings.HasPrefix(c, "continue")
			}); !slices.Equal(got, tt.calls) {
				t.Errorf("calls %q, want %q", m.calls, tt.calls)
			}
			if len(ft.Said) != len(tt.said) {
				t.Fatalf("said %q\nwant %q", ft.Said, tt.said)
			}
			for i, s := range tt.said {
				if !strings.HasPrefix(ft.Said[i], s) {
					t.Errorf("said %q\nwant %q…", ft.Said[i], s)
				}
			}
			if end.PR != tt.pr || !strings.HasPrefix(fmt.Sprint(end.Err), fmt.Sprint(errOrNil(tt.err))) || (tt.err == "") != (end.Err == nil) {
				t.Errorf("turn end: pr %q err %v; want %q %q", end.PR, end.Err, tt.pr, tt.err)
			}
			if !slices.Equal(pulls.states, tt.states) {
				t.Errorf("states %q, want %q", pulls.states, tt.states)
			}
			if len(pulls.saved) != tt.saved {
				t.Fatalf("saved %+v, want %d", pulls.saved, tt.saved)
			}
			if tt.saved > 0 {
				got := pulls.saved[0]
				if got.ScheduleID != 3 || got.ThreadKey != "console/console/run-1" || got.OpenedBy != "schedule:3" || got.URL != tt.pr || got.Repo != "/srv/api.git" || got.ForgeRepo != "acme/api" {
					t.Errorf("recorded %+v", got)
				}
				if strings.Contains(f.lastBody, "update the dependencies") == false || !strings.Contains(f.lastBody, "slot 2026-11-29 02:30Z") ||
					!strings.Contains(f.lastBody, "`deps.txt` +1") || !strings.Contains(f.lastBody, "$0.25") || !strings.Contains(f.lastBody, "console/console/run-1") {
					t.Errorf("body:\n%s", f.lastBody)
				}
			}
			// Done, the run's thread hands the worktree over: the remote
			// has its branch.
			ft.Doing = nil
			ft.Step(ctx, p)
			if !slices.Contains(m.calls, "remove") || ft.Rec.Worktree != "" || ft.Homes != 1 {
				t.Errorf("not handed over: calls %q, worktree %q, homes %d", m.calls, ft.Rec.Worktree, ft.Homes)
			}
		})
	}
}

// TestReplyContinuesThreadPR: after its run handed the worktree over, a
// reply in the thread of the pull request's newest run continues its
// branch (a review to address); a thread whose pull request is closed, or
// another's, gets a new branch.
func TestReplyContinuesThreadPR(t *testing.T) {
	const url, branch = "https://forge.example/acme/api/pulls/1", "claudeops/schedule-3-20261129-0230"
	tests := []struct {
		name, state, thread string
		call                string
	}{
		{name: "its open pull request", state: "open", thread: "console/console/run-1", call: "continue " + branch},
		{name: "closed", state: "closed", thread: "console/console/run-1", call: "create thread-run1-"},
		{name: "the newest run's thread has it now", state: "open", thread: "console/console/run-2", call: "create thread-run1-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{}
			m.dir = t.TempDir()
			pulls := &fakePulls{saved: []store.PullRequest{{URL: url, Repo: "/srv/api.git", Number: 1, Head: branch, State: tt.state, ThreadKey: tt.thread}}}
			ft := threadtest.New("run-1", "schedule:3")
			ft.Rec.Branch = branch
			e := New(Config{Manager: m, Repos: []string{"console/console=/srv/api.git"}, Forges: fakeForges{&fakeForge{}}, Pulls: pulls})
			e.Init(ft)
			p := e.Attach(ft).(*part)
			if err := p.Prepare(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(m.calls) == 0 || !strings.HasPrefix(m.calls[0], tt.call) {
				t.Errorf("calls %q, want %q…", m.calls, tt.call)
			}
		})
	}
}

// TestFailedPRRunHandsOverOnlyUnchanged: a --pr schedule's run that failed
// gives its worktree up for the next run only when it holds no change
// (committed or not) and nothing the remote lacks; otherwise the work
// stays for people to look at.
func TestFailedPRRunHandsOverOnlyUnchanged(t *testing.T) {
	tests := []struct {
		name   string
		stat   workspace.Stat
		pushed bool
		handed bool
	}{
		{name: "nothing changed", pushed: true, handed: true},
		{name: "a change left", pushed: true, stat: workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "half.txt", Added: 1}}}},
		{name: "commits the remote lacks", pushed: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{stat: tt.stat, pushed: tt.pushed}
			ft, p := setup(t, m)
			ft.Rec.Repo, ft.Rec.Worktree, ft.Rec.Branch, ft.Rec.BaseCommit = "/srv/api.git", m.dir, "claudeops/schedule-3-20261129-0230", "0123456789abcdef"
			ft.Doing = &thread.Run{Schedule: store.Schedule{ID: 3, Prompt: "chore", Push: true, PR: true}}
			ctx := context.Background()
			p.AfterTurn(ctx, &thread.TurnEnd{Result: &claudeproc.Result{}, Err: errors.New("error_during_execution")})
			ft.Doing = nil
			ft.Step(ctx, p)
			if handed := slices.Contains(m.calls, "remove"); handed != tt.handed {
				t.Errorf("handed over %v, want %v (calls %q)", handed, tt.handed, m.calls)
			}
			if said := strings.Join(ft.Said, "\n"); !strings.Contains(said, "Not pushed: the run did not succeed.") ||
				strings.Contains(said, "The run failed having changed nothing") != tt.handed {
				t.Errorf("said %q", said)
			}
		})
	}
}
