package forge_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/internal/giteatest"
)

// pushBranch commits a file on a new branch of a clone of repo and pushes
// it, the credentials on the push's URL only (the clone's remote has
// none, so its .git/config holds no token).
func pushBranch(t *testing.T, s *giteatest.Server, repo giteatest.Repo, w, branch string) {
	t.Helper()
	if _, err := os.Stat(w); err != nil {
		giteatest.Git(t, filepath.Dir(w), "clone", "-q", s.URL+"/"+repo.FullName()+".git", filepath.Base(w))
	}
	giteatest.Git(t, w, "checkout", "-q", "-B", branch, "origin/main")
	if err := os.WriteFile(filepath.Join(w, strings.ReplaceAll(branch, "/", "-")+".txt"), []byte(branch+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	giteatest.Git(t, w, "add", ".")
	giteatest.Git(t, w, "commit", "-q", "-m", "change on "+branch)
	giteatest.Git(t, w, "push", "-q", s.CloneURL(repo), branch)
}

// TestGiteaPullRequests, against a real Gitea: a pushed branch's pull
// request opens; opening again from the same branch updates that one (no
// second); PRFor finds it and nothing for another branch; a comment lands
// on it; Self is the token's user; a draft opens as one and turns ready. The token appears in no
// log line nor in the worktree's .git/config.
func TestGiteaPullRequests(t *testing.T) {
	t.Parallel()
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "api")
	frepo := forge.Repo{Owner: repo.Owner, Name: repo.Name}
	w := filepath.Join(t.TempDir(), "w")
	pushBranch(t, s, repo, w, "claudeops/nightly-1")
	pushBranch(t, s, repo, w, "claudeops/draft")

	var logged bytes.Buffer
	g, err := forge.NewGitea(forge.GiteaConfig{URL: s.URL, Token: forge.NewToken(s.Token),
		Log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/nightly-1", "main", "Update dependencies", "what was asked", false)
	if err != nil {
		t.Fatal(err)
	}
	if first.Number == 0 || first.State != "open" || first.Draft || !strings.HasPrefix(first.URL, s.URL+"/"+repo.FullName()+"/pulls/") {
		t.Fatalf("opened %+v", first)
	}
	again, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/nightly-1", "main", "Update dependencies (2)", "the next night", false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Number != first.Number {
		t.Fatalf("opening again made #%d; want #%d updated", again.Number, first.Number)
	}
	prs := s.PullRequests(t, repo)
	if len(prs) != 1 || prs[0].Title != "Update dependencies (2)" || prs[0].Body != "the next night" ||
		prs[0].Head.Ref != "claudeops/nightly-1" || prs[0].Base.Ref != "main" || prs[0].State != "open" {
		t.Fatalf("Gitea's pull requests: %+v", prs)
	}

	found, ok, err := g.PRFor(ctx, frepo, "claudeops/nightly-1")
	if err != nil || !ok || found.Number != first.Number {
		t.Fatalf("PRFor: %+v, %v, %v; want #%d", found, ok, err, first.Number)
	}
	if _, ok, err := g.PRFor(ctx, frepo, "claudeops/none"); err != nil || ok {
		t.Fatalf("PRFor a branch without one: found %v, %v", ok, err)
	}

	if err := g.Comment(ctx, frepo, first.Number, "the run's summary"); err != nil {
		t.Fatal(err)
	}
	if cs := s.Comments(t, repo, first.Number); len(cs) != 1 || cs[0].Body != "the run's summary" {
		t.Fatalf("comments: %+v", cs)
	}

	if self, err := g.Self(ctx); err != nil || self != s.Admin {
		t.Fatalf("Self: %q, %v; want the token's user %q", self, err, s.Admin)
	}

	draft, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/draft", "main", "Try a thing", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if !draft.Draft || draft.Number == first.Number {
		t.Fatalf("draft: %+v", draft)
	}
	if got := draftOnGitea(t, s, repo, draft.Number); !got {
		t.Fatalf("Gitea does not show #%d as a draft", draft.Number)
	}
	ready, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/draft", "main", "Try a thing", "ready now", false)
	if err != nil {
		t.Fatal(err)
	}
	if ready.Number != draft.Number || ready.Draft {
		t.Fatalf("ready: %+v; want #%d no longer a draft", ready, draft.Number)
	}
	if draftOnGitea(t, s, repo, draft.Number) {
		t.Fatalf("Gitea still shows #%d as a draft", draft.Number)
	}
	if n := len(s.PullRequests(t, repo)); n != 2 {
		t.Fatalf("%d pull requests; want 2", n)
	}

	gitConfig, err := os.ReadFile(filepath.Join(w, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"the log": logged.String(), ".git/config": string(gitConfig)} {
		if strings.Contains(text, s.Token) {
			t.Errorf("the token is in %s:\n%s", what, text)
		}
	}
	if !strings.Contains(logged.String(), "pull request opened") {
		t.Errorf("nothing logged of the opening:\n%s", logged.String())
	}
}

// draftOnGitea is what Gitea's API says of pull request number: a draft?
func draftOnGitea(t *testing.T, s *giteatest.Server, repo giteatest.Repo, number int64) bool {
	t.Helper()
	for _, pr := range s.PullRequests(t, repo) {
		if pr.Number == number {
			return pr.Draft
		}
	}
	t.Fatalf("no pull request #%d on Gitea", number)
	return false
}

// TestGiteaErrors: what failed is said, with the repository, and a token
// the server refuses shows in no error.
func TestGiteaErrors(t *testing.T) {
	t.Parallel()
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "api")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const bad = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name  string
		token string
		repo  forge.Repo
		head  string
		want  string
	}{
		{"no such repository", s.Token, forge.Repo{Owner: repo.Owner, Name: "none"}, "x", "listing the open pull requests of " + repo.Owner + "/none"},
		{"no such branch", s.Token, forge.Repo{Owner: repo.Owner, Name: repo.Name}, "none", "opening a pull request from none into main"},
		{"refused token", bad, forge.Repo{Owner: repo.Owner, Name: repo.Name}, "x", "listing the open pull requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := forge.NewGitea(forge.GiteaConfig{URL: s.URL, Token: forge.NewToken(tt.token)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = g.OpenOrUpdatePR(ctx, tt.repo, tt.head, "main", "t", "", false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the token is in the error: %v", err)
			}
		})
	}
}

// racer is a transport that, before the first request opening a pull
// request goes out, opens one from the same branch itself: someone else
// opening it between OpenOrUpdatePR's look and its open.
type racer struct {
	t    *testing.T
	s    *giteatest.Server
	repo giteatest.Repo
	head string
	done bool
}

func (r *racer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/pulls") && !r.done {
		r.done = true
		r.s.API(r.t, "POST", "/repos/"+r.repo.FullName()+"/pulls",
			map[string]string{"head": r.head, "base": "main", "title": "opened by someone else"}, nil)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestGiteaOpenRace: a pull request from the branch opened by someone else
// after the look for one (Gitea answers 409 to the open) is updated, not
// doubled.
func TestGiteaOpenRace(t *testing.T) {
	t.Parallel()
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "api")
	pushBranch(t, s, repo, filepath.Join(t.TempDir(), "w"), "claudeops/raced")
	rt := &racer{t: t, s: s, repo: repo, head: "claudeops/raced"}
	g, err := forge.NewGitea(forge.GiteaConfig{URL: s.URL, Token: forge.NewToken(s.Token), HTTP: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, err := g.OpenOrUpdatePR(ctx, forge.Repo{Owner: repo.Owner, Name: repo.Name}, "claudeops/raced", "main", "Ours", "body", false)
	if err != nil {
		t.Fatal(err)
	}
	prs := s.PullRequests(t, repo)
	if !rt.done || len(prs) != 1 || prs[0].Number != pr.Number || prs[0].Title != "Ours" {
		t.Fatalf("raced: %v; returned %+v; Gitea's: %+v", rt.done, pr, prs)
	}
}
