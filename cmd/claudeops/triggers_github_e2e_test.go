package main

import (
	"context"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakegithub"
	"github.com/claudeops/claudeops/triggers"
)

// TestReviewLoopOnGitHub: the built bot, its bound repository on the fake
// GitHub (every request checked against GitHub's REST description) by
// CLAUDEOPS_FORGES, and a review trigger. A thread's `pr` opens the pull
// request there; a review of it, delivered signed as GitHub delivers one
// (the payload made and checked against GitHub's webhook description),
// reaches the thread as its author's; a comment by the bot's own account
// (the token's login, GET /user) does not. The token is in no log line.
func TestReviewLoopOnGitHub(t *testing.T) {
	gh := fakegithub.Start(t)
	hooks := fakegithub.DescribeWebhooks(t)
	root := t.TempDir()
	bare := filepath.Join(root, "acme", "api.git")
	bareGit(t, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	seed := filepath.Join(t.TempDir(), "seed")
	bareGit(t, "clone", "--quiet", bare, seed)
	bareGit(t, "-C", seed, "commit", "--quiet", "--allow-empty", "-m", "initial")
	bareGit(t, "-C", seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	gh.CreateRepo("acme", "api", bare)

	api := fakeanthropic.Start(t, func(context.Context, *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.TextReply("noted")
	})
	env, _ := consoleEnv(t, api)
	dir := t.TempDir()
	const secret = "github-hook-secret-0123456789"
	secretFile, tokenFile, file := filepath.Join(dir, "secret"), filepath.Join(dir, "token"), filepath.Join(dir, "triggers.yaml")
	for p, content := range map[string]string{secretFile: secret, tokenFile: gh.Token + "\n", file: `triggers:
  - name: gh-reviews
    kind: github
    review: true
    secret_file: ` + secretFile + `
    repos: [acme/api]
    per_hour: 5
`} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(t.TempDir(), "workspaces")
	env = append(env, "CLAUDEOPS_WORKSPACES="+ws, "CLAUDEOPS_REPOS=console/console="+bare,
		"CLAUDEOPS_FORGES="+root+"/=github:"+gh.URL+";token_file="+tokenFile,
		"CLAUDEOPS_HTTP_ADDR=127.0.0.1:0", "CLAUDEOPS_TRIGGERS_FILE="+file, "CLAUDEOPS_LOG_LEVEL=debug")
	b := startBotProc(t, env)
	addr := httpAddr(t, func() string { return strings.Join(b.logLines(), "\n") })

	b.say("hello")
	branch := b.expect("^\\[main\\] . Working on branch `(claudeops/thread-main-[0-9a-f]+)`")[1]
	b.expect(`^\[main\] — ✓`)
	trees, _ := filepath.Glob(filepath.Join(ws, "trees", "*", strings.TrimPrefix(branch, "claudeops/")))
	if len(trees) != 1 {
		t.Fatalf("the thread's worktree: %v", trees)
	}
	if err := os.WriteFile(filepath.Join(trees[0], "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.say("commit")
	b.expect(`^\[main\] . Committed `)
	b.say("push")
	b.expect(`^\[main\] . Pushed `)
	b.say("pr Add a note")
	page := b.expect(`^\[main\] . Pull request #1 from .* into ` + "`main`" + `: (\S+)$`)[1]
	if prs := gh.PullRequests("acme", "api"); len(prs) != 1 || prs[0].Head != branch || prs[0].Title != "Add a note" || page != gh.Web+"/acme/api/pull/1" {
		t.Fatalf("GitHub's pull requests: %+v; the thread's link %s", prs, page)
	}

	deliver := func(event, action, delivery string, fields map[string]any) int {
		t.Helper()
		body := hooks.Payload(t, event, action, fields)
		req, err := http.NewRequest("POST", "http://"+addr+"/triggers/gh-reviews", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(triggers.Sign([]byte(secret), body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	repo := map[string]any{"full_name": "acme/api", "name": "api"}
	if code := deliver("issue_comment", "created", "d-own", map[string]any{"repository": repo,
		"issue":   map[string]any{"number": 1, "html_url": page, "pull_request": map[string]any{"html_url": page}},
		"comment": map[string]any{"body": "Opened by the bot itself", "user": map[string]any{"login": gh.Login}}}); code != 200 {
		t.Errorf("the bot's own comment: %d, want 200", code)
	}
	if code := deliver("pull_request_review", "submitted", "d-review", map[string]any{"repository": repo,
		"pull_request": map[string]any{"number": 1, "html_url": page},
		"review":       map[string]any{"state": "changes_requested", "body": "Please add a test.", "user": map[string]any{"login": "hubot"}}}); code != 202 {
		t.Fatalf("the review: %d, want 202", code)
	}
	b.expect(`^\[main\] . 💬 Review \(changes requested\) by ` + "`hubot`" + ` on PR #1 `)
	b.expect(regexp.QuoteMeta("Please add a test."))
	b.mu.Lock()
	shown := append([]string(nil), b.lines...)
	b.mu.Unlock()
	for _, l := range shown {
		if strings.Contains(l, "Opened by the bot itself") {
			t.Errorf("the bot's own comment reached the thread: %s", l)
		}
	}
	if !slicesContainsOp(gh, "users/get-authenticated") {
		t.Error("the bot never asked GitHub who its token is for")
	}
	if log := strings.Join(b.logLines(), "\n"); strings.Contains(log, gh.Token) {
		t.Error("the log holds the forge's token")
	}
}

func slicesContainsOp(gh *fakegithub.Server, op string) bool {
	for _, r := range gh.Requests() {
		if r.Op == op {
			return true
		}
	}
	return false
}
