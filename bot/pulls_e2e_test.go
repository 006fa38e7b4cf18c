package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/console"

	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/internal/giteatest"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// oneForge is the operator's forge configuration as cmd gives it: every
// repository is repo on f.
type oneForge struct {
	f    forge.Forge
	repo forge.Repo
}

func (o oneForge) ForgeOf(string) (forge.Forge, forge.Repo, bool) { return o.f, o.repo, true }

// forgeToken makes an API token of the Gitea admin's apart from the one
// in the clone URL: the forge's, which must reach nothing but Gitea's API.
func forgeToken(t *testing.T, s *giteatest.Server) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": "claudeops-forge", "scopes": []string{"all"}})
	req, err := http.NewRequest("POST", s.APIURL()+"/users/"+s.Admin+"/tokens", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(s.Admin, s.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		SHA1 string `json:"sha1"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &out) != nil || out.SHA1 == "" {
		t.Fatalf("making the forge's token: %s %s", resp.Status, b)
	}
	return out.SHA1
}

// TestPullRequestFromThread, with a real Gitea, real git, the real CLI and
// the fake model API: a thread's Claude edits a file, `commit`, `pr`
// before the push is told to push first, `push`, `pr` opens one pull
// request Gitea shows with the thread's branch and first request; `pr`
// again with a title updates the same one; someone else's `pr` is
// refused. The forge's token is in no log line, worktree or clone config.
func TestPullRequestFromThread(t *testing.T) {
	h, s, repo, tok, logs, wsDir := giteaHarness(t)
	h.say("run echo 'change <@U0HOSTILE> @here @claudeops-admin #1 ````' >> README.md")
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`— ✓`)
	th := threadRecord(t, h, "main")
	h.say("commit the change")
	h.expect(`\* Committed `)
	h.say("pr")
	h.expect(`Push first: `)
	h.say("/as bob pr")
	h.expect(`Only .* can pr this thread's branch`)
	h.say("push")
	h.expect(`\* Pushed `)
	h.say("pr")
	url := h.expect(`\* Pull request #(\d+) from .* into ` + "`main`" + `: (\S+)`)
	prs := s.PullRequests(t, repo)
	if len(prs) != 1 || prs[0].State != "open" || prs[0].Head.Ref != th.Branch || prs[0].Base.Ref != "main" || prs[0].URL != url[2] {
		t.Fatalf("Gitea's pull requests: %+v; want one open from %s", prs, th.Branch)
	}
	// The request is fenced past its own backticks: on Gitea its
	// @claudeops-admin mentions nobody and its #1 links nothing.
	for _, want := range []string{"`````text\nrun echo 'change <@U0HOSTILE> @here @claudeops-admin #1 ````' >> README.md\n`````\n", "README.md", "Cost so far: $"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("the body lacks %q:\n%s", want, prs[0].Body)
		}
	}
	if !strings.HasPrefix(prs[0].Title, "run echo 'change") {
		t.Errorf("title %q, want the first request", prs[0].Title)
	}
	h.say("pr --draft Update the README")
	h.expect(`\* Pull request #` + url[1] + ` `)
	prs = s.PullRequests(t, repo)
	if len(prs) != 1 || !strings.Contains(prs[0].Title, "Update the README") {
		t.Fatalf("after a second pr: %+v; want the same one, retitled", prs)
	}
	// The bot's record of it, which a review on it finds the thread by:
	// one, as Gitea shows it.
	recs, err := h.st.PullRequestsOfThread(context.Background(), th.Key)
	want := store.PullRequest{URL: prs[0].URL, Repo: s.CloneURL(repo), ForgeRepo: repo.Owner + "/" + repo.Name,
		Number: prs[0].Number, Head: th.Branch, Base: "main", ThreadKey: th.Key, State: "open", OpenedBy: console.OperatorID}
	if err != nil || len(recs) != 1 {
		t.Fatalf("the thread's recorded pull requests: %+v, %v; want one", recs, err)
	}
	got := recs[0]
	got.OpenedAt, got.UpdatedAt = time.Time{}, time.Time{}
	if got != want || recs[0].OpenedAt.IsZero() {
		t.Errorf("recorded %+v\nwant %+v", recs[0], want)
	}
	h.stopBot()
	tokenNowhere(t, tok, logs.String(), wsDir)
}

// giteaHarness is a bot whose console channel is bound to repo on a real
// Gitea, its forge configured with tok, a token apart from the clone
// URL's; logs is the bot's debug log.
func giteaHarness(t *testing.T) (h *harness, s *giteatest.Server, repo giteatest.Repo, tok string, logs *testkit.Output, wsDir string) {
	t.Helper()
	s = giteatest.Start(t)
	repo = s.CreateRepo(t, "api")
	tok = forgeToken(t, s)
	g, err := forge.NewGitea(forge.GiteaConfig{URL: s.URL, Token: forge.NewToken(tok)})
	if err != nil {
		t.Fatal(err)
	}
	wsDir = t.TempDir()
	m, err := workspace.New(workspace.Options{Dir: wsDir})
	if err != nil {
		t.Fatal(err)
	}
	logs = testkit.NewOutput()
	h = newHarness(t, script(nil), func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + s.CloneURL(repo)}
		c.Workspace.Forges = oneForge{f: g, repo: forge.Repo{Owner: repo.Owner, Name: repo.Name}}
		c.Config.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return h, s, repo, tok, logs, wsDir
}

// TestPullRequestFromScheduledRun: a nightly chore added with --push, run
// now, pushes its branch; its creator's `pr` in the run's thread opens the
// pull request Gitea shows, from the run's branch.
func TestPullRequestFromScheduledRun(t *testing.T) {
	h, s, repo, tok, logs, wsDir := giteaHarness(t)
	stop := startScheduler(t, h)
	defer stop()
	h.say("rules add allow Bash(touch:*)")
	h.expect(`\* Rule \d+: allow`)
	h.say(`schedule add "0 3 * * *" --push run touch nightly.txt`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	branch := h.expect(`^\[` + run + `\] \* Pushed branch ` + "`([^`]+)`")[1]
	waitRun(t, h, id, "succeeded")
	h.say("/thread " + run)
	h.say("pr Nightly: touch nightly.txt")
	h.expect(`^\[` + run + `\] \* Pull request #1 from ` + "`" + branch + "`")
	prs := s.PullRequests(t, repo)
	if len(prs) != 1 || prs[0].Head.Ref != branch || prs[0].Title != "Nightly: touch nightly.txt" || !strings.Contains(prs[0].Body, "nightly.txt") {
		t.Fatalf("Gitea's pull requests: %+v; want one from %s", prs, branch)
	}
	h.stopBot()
	tokenNowhere(t, tok, logs.String(), wsDir)
}

// tokenNowhere fails when the forge's token is in the log or any file of
// the workspaces (worktrees, clones and their .git/config).
func tokenNowhere(t *testing.T, tok, log, wsDir string) {
	t.Helper()
	if strings.Contains(log, tok) {
		t.Errorf("the log holds the forge's token")
	}
	if log == "" {
		t.Errorf("no log was written: the check proves nothing")
	}
	filepath.WalkDir(wsDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(tok)) {
			t.Errorf("%s holds the forge's token", p)
		}
		return nil
	})
}

// TestPullRequestRefusals: on a repository no forge is configured for,
// `pr` says so, with or without a change.
func TestPullRequestRefusals(t *testing.T) {
	h, _, _ := wsHarness(t, nil)
	h.say("run echo one >> notes.txt")
	h.expect(`\* Working on branch `)
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`— ✓`)
	h.say("pr")
	h.expect(`\* This channel's repository has no forge configured`)
	h.say("/thread empty")
	h.say("hello")
	h.expect(`^\[empty\] — ✓`)
	h.say("pr")
	h.expect(`^\[empty\] \* This channel's repository has no forge configured`)
}
