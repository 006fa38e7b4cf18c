package forge_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/internal/fakegithub"
)

func newGitHub(t *testing.T, s *fakegithub.Server, token string, log *bytes.Buffer) *forge.GitHub {
	t.Helper()
	cfg := forge.GitHubConfig{URL: s.URL, Token: forge.NewToken(token)}
	if log != nil {
		cfg.Log = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	g, err := forge.NewGitHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGitHubPullRequests, against the fake GitHub (every request checked
// against GitHub's REST description): a branch's pull request opens;
// opening again from the same branch updates that one (no second); PRFor
// finds it and nothing for another branch; a comment lands on its
// conversation; a draft opens as one, and opening again without --draft
// leaves it one (GitHub's REST API cannot mark it ready), saying so; Self
// is the token's login, asked once. The
// token went in each request's Authorization header and appears in no
// log line.
func TestGitHubPullRequests(t *testing.T) {
	s := fakegithub.Start(t)
	s.CreateRepo("acme", "api", "")
	frepo := forge.Repo{Owner: "acme", Name: "api"}
	var logged bytes.Buffer
	g := newGitHub(t, s, s.Token, &logged)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/nightly-1", "main", "Update dependencies", "what was asked", false)
	if err != nil {
		t.Fatal(err)
	}
	if first.Number != 1 || first.State != "open" || first.Draft || first.URL != s.Web+"/acme/api/pull/1" ||
		first.Head != "claudeops/nightly-1" || first.Base != "main" {
		t.Fatalf("opened %+v", first)
	}
	again, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/nightly-1", "main", "Update dependencies (2)", "the next night", false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Number != first.Number {
		t.Fatalf("opening again made #%d; want #%d updated", again.Number, first.Number)
	}
	prs := s.PullRequests("acme", "api")
	if len(prs) != 1 || prs[0].Title != "Update dependencies (2)" || prs[0].Body != "the next night" ||
		prs[0].Head != "claudeops/nightly-1" || prs[0].Base != "main" || prs[0].State != "open" || prs[0].User != s.Login {
		t.Fatalf("GitHub's pull requests: %+v", prs)
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
	if cs := s.PullRequests("acme", "api")[0].Comments; len(cs) != 1 || cs[0].Body != "the run's summary" {
		t.Fatalf("comments: %+v", cs)
	}

	draft, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/draft", "main", "Try a thing", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if !draft.Draft || draft.Number != 2 || !s.PullRequests("acme", "api")[1].Draft {
		t.Fatalf("draft: %+v; GitHub's: %+v", draft, s.PullRequests("acme", "api"))
	}
	still, err := g.OpenOrUpdatePR(ctx, frepo, "claudeops/draft", "main", "Try a thing", "ready now", false)
	if err != nil {
		t.Fatal(err)
	}
	if still.Number != draft.Number || !still.Draft || s.PullRequests("acme", "api")[1].Body != "ready now" {
		t.Fatalf("updated draft: %+v; want #%d updated and still a draft", still, draft.Number)
	}

	for range 2 {
		if self, err := g.Self(ctx); err != nil || self != s.Login {
			t.Fatalf("Self: %q, %v; want %q", self, err, s.Login)
		}
	}
	if n := countOp(s, "users/get-authenticated"); n != 1 {
		t.Errorf("GET /user asked %d times; want once", n)
	}

	for _, r := range s.Requests() {
		if r.Authorization != "Bearer "+s.Token || r.Status >= 400 {
			t.Errorf("%s %s: Authorization %q, answered %d", r.Method, r.Path, r.Authorization, r.Status)
		}
	}
	if strings.Contains(logged.String(), s.Token) {
		t.Errorf("the token is in the log:\n%s", logged.String())
	}
	if !strings.Contains(logged.String(), "pull request opened") {
		t.Errorf("nothing logged of the opening:\n%s", logged.String())
	}
}

func countOp(s *fakegithub.Server, op string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Op == op {
			n++
		}
	}
	return n
}

// TestGitHubOpenRace: a pull request from the branch opened by someone
// else after the look for one (GitHub answers 422 "A pull request already
// exists") is updated, not doubled.
func TestGitHubOpenRace(t *testing.T) {
	s := fakegithub.Start(t)
	s.CreateRepo("acme", "api", "")
	var once sync.Once
	raced := false
	s.BeforeOperation(func(op string) {
		if op == "pulls/create" {
			once.Do(func() { s.Open("acme", "api", "claudeops/raced", "main", "opened by someone else"); raced = true })
		}
	})
	g := newGitHub(t, s, s.Token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, err := g.OpenOrUpdatePR(ctx, forge.Repo{Owner: "acme", Name: "api"}, "claudeops/raced", "main", "Ours", "body", false)
	if err != nil {
		t.Fatal(err)
	}
	prs := s.PullRequests("acme", "api")
	if !raced || len(prs) != 1 || prs[0].Number != pr.Number || prs[0].Title != "Ours" {
		t.Fatalf("raced: %v; returned %+v; GitHub's: %+v", raced, pr, prs)
	}
	var ops []string
	for _, r := range s.Requests() {
		ops = append(ops, fmt.Sprintf("%s %d", r.Op, r.Status))
	}
	if want := "pulls/list 200, pulls/create 422, pulls/list 200, pulls/update 200"; strings.Join(ops, ", ") != want {
		t.Errorf("requests %v; want %s", ops, want)
	}
}

// TestGitHubErrors: what failed is said, with the repository, and a token
// the server refuses shows in no error.
func TestGitHubErrors(t *testing.T) {
	s := fakegithub.Start(t)
	s.CreateRepo("acme", "api", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const bad = "ghp_0123456789abcdef0123456789abcdef0123"
	tests := []struct {
		name, token, repo, head, base string
		want                          string
	}{
		{"no such repository", s.Token, "none", "x", "main", "listing the open pull requests of acme/none: GET " + s.URL + "/repos/acme/none/pulls"},
		{"refused token", bad, "api", "x", "main", "401 Bad credentials"},
		{"GitHub's 422", s.Token, "api", "other:x", "main", "opening a pull request from other:x into main on acme/api: POST " + s.URL + "/repos/acme/api/pulls: 422 Validation Failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGitHub(t, s, tt.token, nil)
			_, err := g.OpenOrUpdatePR(ctx, forge.Repo{Owner: "acme", Name: tt.repo}, tt.head, tt.base, "t", "", false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Fatalf("the token is in the error: %v", err)
			}
		})
	}
}

// TestGitHubTokenStaysWithTheAPI (hostile): the API answers with a
// redirect to another host; the request that reaches that host carries no
// token (go-github's own WithAuthToken would send it there).
func TestGitHubTokenStaysWithTheAPI(t *testing.T) {
	const secret = "ghp_stays-with-the-api"
	var mu sync.Mutex
	var elsewhereAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("[]"))
	}))
	defer elsewhere.Close()
	var apiAuth string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiAuth = r.Header.Get("Authorization")
		http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	g, err := forge.NewGitHub(forge.GitHubConfig{URL: api.URL + "/api/v3", Token: forge.NewToken(secret)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.PRFor(context.Background(), forge.Repo{Owner: "acme", Name: "api"}, "b"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if apiAuth != "Bearer "+secret || len(elsewhereAuth) != 1 || elsewhereAuth[0] != "" {
		t.Fatalf("the API saw %q; the other host %q (want the redirect followed without the token)", apiAuth, elsewhereAuth)
	}
}

func TestNewGitHubRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, url, token, want string
	}{
		{"no URL", "", "t", "base URL"},
		{"not http", "ftp://ghe.example.com/api/v3", "t", "base URL"},
		{"credentials in the URL", "https://me:pw@ghe.example.com/api/v3", "t", "without credentials"},
		{"no token", "https://api.github.com", "", "no token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := forge.NewGitHub(forge.GitHubConfig{URL: tt.url, Token: forge.NewToken(tt.token)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want one saying %q", err, tt.want)
			}
		})
	}
}
