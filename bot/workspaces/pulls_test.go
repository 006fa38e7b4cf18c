package workspaces

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

func TestFenced(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fix it", "```text\nfix it\n```\n"},
		{"a ``` b", "````text\na ``` b\n````\n"},
		{"x\n`````\n", "``````text\nx\n`````\n``````\n"},
	} {
		if got := fenced(tc.in); got != tc.want {
			t.Errorf("fenced(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPRArgs(t *testing.T) {
	for _, tc := range []struct {
		in    string
		draft bool
		title string
	}{
		{"", false, ""},
		{"Fix the parser", false, "Fix the parser"},
		{"--draft", true, ""},
		{"--draft  Fix it", true, "Fix it"},
		{"--drafting notes", false, "--drafting notes"},
	} {
		if d, ti := prArgs(tc.in); d != tc.draft || ti != tc.title {
			t.Errorf("prArgs(%q) = %v, %q; want %v, %q", tc.in, d, ti, tc.draft, tc.title)
		}
	}
}

func TestDraftNote(t *testing.T) {
	for _, tc := range []struct {
		asked, draft bool
		want         string
	}{
		{false, false, ""},
		{true, true, ""},
		{false, true, "still a draft"},
		{true, false, "not a draft"},
	} {
		got := draftNote(tc.asked, forge.PR{Draft: tc.draft})
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("draftNote(asked %v, draft %v) = %q; want %q", tc.asked, tc.draft, got, tc.want)
		}
	}
}

// fakeForge is a forge.Forge with one pull request per head, numbered
// from 1; err, when set, is every call's error.
type fakeForge struct {
	prs      map[string]forge.PR // by head
	calls    []string
	lastBody string
	err      error
}

func (f *fakeForge) OpenOrUpdatePR(_ context.Context, r forge.Repo, head, base, title, body string, draft bool) (forge.PR, error) {
	f.calls = append(f.calls, "open "+r.String()+" "+head+" "+base+" "+title)
	f.lastBody = body
	if f.err != nil {
		return forge.PR{}, f.err
	}
	if f.prs == nil {
		f.prs = map[string]forge.PR{}
	}
	pr, ok := f.prs[head]
	if !ok || pr.State != "open" {
		n := int64(len(f.prs) + 1)
		pr = forge.PR{Number: n, URL: fmt.Sprintf("https://forge.example/acme/api/pulls/%d", n), State: "open", Head: head, Base: base}
	}
	pr.Draft = draft
	f.prs[head] = pr
	return pr, nil
}

func (f *fakeForge) PRFor(_ context.Context, _ forge.Repo, head string) (forge.PR, bool, error) {
	f.calls = append(f.calls, "find "+head)
	pr, ok := f.prs[head]
	return pr, ok && pr.State == "open", f.err
}

func (f *fakeForge) Comment(context.Context, forge.Repo, int64, string) error { return f.err }
func (f *fakeForge) Self(context.Context) (string, error)                     { return "claudeops-bot", f.err }

type fakeForges struct{ f *fakeForge }

func (o fakeForges) ForgeOf(string) (forge.Forge, forge.Repo, bool) {
	return o.f, forge.Repo{Owner: "acme", Name: "api"}, true
}

// fakePulls is the store's record of pull requests: saved in order; open
// is the schedule's open one (OpenPullRequestOfSchedule), states what
// SetPullRequestState recorded.
type fakePulls struct {
	saved  []store.PullRequest
	open   *store.PullRequest
	states []string // "url state"
	err    error
}

func (s *fakePulls) SavePullRequest(_ context.Context, p store.PullRequest) error {
	if s.err == nil {
		s.saved = append(s.saved, p)
	}
	return s.err
}

func (s *fakePulls) OpenPullRequestOfSchedule(context.Context, int64) (store.PullRequest, bool, error) {
	if s.open == nil {
		return store.PullRequest{}, false, s.err
	}
	return *s.open, true, s.err
}

func (s *fakePulls) PullRequestsOfThread(_ context.Context, key string) ([]store.PullRequest, error) {
	var out []store.PullRequest
	for _, p := range slices.Backward(s.saved) {
		if p.ThreadKey == key {
			out = append(out, p)
		}
	}
	return out, s.err
}

func (s *fakePulls) SetPullRequestState(_ context.Context, url, state string, _ time.Time) error {
	s.states = append(s.states, url+" "+state)
	return s.err
}

// TestPRRecorded: a thread's `pr` records the pull request it opened
// (what a review on it finds the thread by), and again when `pr` updates
// it; a record the store refuses still leaves the pull request told.
func TestPRRecorded(t *testing.T) {
	for _, tt := range []struct {
		name    string
		saveErr error
		records int
	}{
		{name: "recorded each time", records: 2},
		{name: "the store refuses", saveErr: errors.New("disk full")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{pushed: true, stat: workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "a", Added: 1}}}}
			f, pulls := &fakeForge{}, &fakePulls{err: tt.saveErr}
			ft := threadtest.New("main", "alice")
			at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
			ft.Clock = func() time.Time { return at }
			m.dir = t.TempDir()
			e := New(Config{Manager: m, Repos: []string{"console/console=/srv/api.git"}, Forges: fakeForges{f}, Pulls: pulls})
			e.Init(ft)
			p := e.Attach(ft).(*part)
			ft.Rec.Repo, ft.Rec.Worktree, ft.Rec.Branch, ft.Rec.BaseCommit = "/srv/api.git", m.dir, "claudeops/thread-main", "0123456789abcdef"
			ev := adapters.Event{User: adapters.User{ID: "alice", Name: "Alice"}, Message: &adapters.Incoming{ID: "m1", Text: "pr"}}
			p.cmdPR(context.Background(), ev, []string{""})
			p.cmdPR(context.Background(), ev, []string{"--draft Retitled"})
			if said := strings.Join(ft.Said, "\n"); strings.Count(said, "Pull request #1 from `claudeops/thread-main` into `main`: https://forge.example/acme/api/pulls/1") != 2 {
				t.Fatalf("said %q", said)
			}
			if len(pulls.saved) != tt.records {
				t.Fatalf("records %+v, want %d", pulls.saved, tt.records)
			}
			for _, got := range pulls.saved {
				want := store.PullRequest{URL: "https://forge.example/acme/api/pulls/1", Repo: "/srv/api.git", ForgeRepo: "acme/api", Number: 1,
					Head: "claudeops/thread-main", Base: "main", ThreadKey: "console/console/main", State: "open", OpenedBy: "alice",
					OpenedAt: at, UpdatedAt: at}
				if got != want {
					t.Errorf("recorded %+v\nwant %+v", got, want)
				}
			}
		})
	}
}

// TestPRBodyLinksThread: the description points back at the thread — its
// page where the platform has one, its key where it has none (the console).
func TestPRBodyLinksThread(t *testing.T) {
	for _, tt := range []struct{ link, want string }{
		{"https://acme.slack.com/archives/C0123/p1712345678000200", "from the chat thread <https://acme.slack.com/archives/C0123/p1712345678000200>."},
		{"", "from the chat thread `console/console/main`."},
	} {
		m := &fakeManager{pushed: true, stat: workspace.Stat{Added: 1, Files: []workspace.FileStat{{Path: "a", Added: 1}}}, dir: t.TempDir()}
		f := &fakeForge{}
		ft := threadtest.New("main", "alice")
		ft.Permalink = tt.link
		e := New(Config{Manager: m, Repos: []string{"console/console=/srv/api.git"}, Forges: fakeForges{f}, Pulls: &fakePulls{}})
		e.Init(ft)
		p := e.Attach(ft).(*part)
		ft.Rec.Repo, ft.Rec.Worktree, ft.Rec.Branch, ft.Rec.BaseCommit = "/srv/api.git", m.dir, "claudeops/thread-main", "0123456789abcdef"
		p.cmdPR(context.Background(), adapters.Event{User: adapters.User{ID: "alice"}, Message: &adapters.Incoming{ID: "m1", Text: "pr"}}, []string{""})
		if !strings.Contains(f.lastBody, tt.want) {
			t.Errorf("link %q: body %q lacks %q", tt.link, f.lastBody, tt.want)
		}
	}
}
