package giteatest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServer: a repository made through the harness has its initial commit
// on main, the test's git pushes a branch to it, a pull request opened
// through the API shows in the oracle, with a comment, and Gitea itself
// delivers a webhook to a receiver on loopback.
func TestServer(t *testing.T) {
	t.Parallel()
	s := Start(t)
	repo := s.CreateRepo(t, "api")
	if repo.DefaultBranch != "main" || repo.Owner != s.Admin {
		t.Fatalf("repository %+v: want %s's, default branch main", repo, s.Admin)
	}

	hooks := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- r.Header.Get("X-Gitea-Event") + " " + string(b)
	}))
	defer recv.Close()
	s.API(t, "POST", "/repos/"+repo.FullName()+"/hooks", map[string]any{
		"type": "gitea", "active": true, "events": []string{"pull_request"},
		"config": map[string]string{"url": recv.URL, "content_type": "json"},
	}, nil)

	dir := t.TempDir()
	Git(t, dir, "clone", "-q", s.CloneURL(repo), "w")
	w := filepath.Join(dir, "w")
	if log := Git(t, w, "log", "--format=%s", "main"); strings.TrimSpace(log) == "" {
		t.Fatal("no initial commit on main")
	}
	if err := os.WriteFile(filepath.Join(w, "x.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, w, "checkout", "-q", "-b", "feature")
	Git(t, w, "add", "x.txt")
	Git(t, w, "commit", "-q", "-m", "add x")
	Git(t, w, "push", "-q", "origin", "feature")

	var pr PullRequest
	s.API(t, "POST", "/repos/"+repo.FullName()+"/pulls",
		map[string]string{"head": "feature", "base": "main", "title": "Add x"}, &pr)
	s.API(t, "POST", "/repos/"+repo.FullName()+"/issues/"+itoa(pr.Number)+"/comments",
		map[string]string{"body": "looks good"}, nil)

	prs := s.PullRequests(t, repo)
	if len(prs) != 1 || prs[0].Title != "Add x" || prs[0].Head.Ref != "feature" || prs[0].Base.Ref != "main" || prs[0].State != "open" {
		t.Fatalf("pull requests: %+v", prs)
	}
	if cs := s.Comments(t, repo, pr.Number); len(cs) != 1 || cs[0].Body != "looks good" || cs[0].User.Login != s.Admin {
		t.Fatalf("comments: %+v", cs)
	}
	select {
	case h := <-hooks:
		var body struct {
			Action      string `json:"action"`
			PullRequest struct {
				Number int64 `json:"number"`
			} `json:"pull_request"`
		}
		event, payload, _ := strings.Cut(h, " ")
		if err := json.Unmarshal([]byte(payload), &body); err != nil || event != "pull_request" ||
			body.Action != "opened" || body.PullRequest.Number != pr.Number {
			t.Fatalf("webhook: %s (%v)", h, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no webhook delivered in 30 s; Gitea's log:\n%s", s.Log())
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// BenchmarkStart: what a test pays for its own Gitea — the process up and
// answering (a new database migrated), the admin and its token made. The
// servers stay up until the benchmark ends: run it a few times at most
// (-benchtime 3x).
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		Start(b)
	}
}
