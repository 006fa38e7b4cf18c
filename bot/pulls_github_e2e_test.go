package bot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakegithub"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/workspace"
)

// TestPullRequestFromThreadOnGitHub, with real git (a bare repository as
// the remote, whose branches the fake GitHub reads), the real CLI and the
// fake model API, and the fake GitHub (every request checked against
// GitHub's published REST description) as the forge's API: a thread's
// Claude edits a file, `commit`, `push`, `pr --draft` opens one draft pull
// request that the fake shows from the thread's branch at its pushed
// commit, with the thread's first request fenced; `pr` with a title
// updates the same one, which stays a draft (GitHub's REST API cannot mark
// it ready) and the thread says so. The forge's token went in each API
// request's Authorization header and is in no log line nor workspace file.
func TestPullRequestFromThreadOnGitHub(t *testing.T) {
	h, gh, bare, logs, wsDir := githubHarness(t, script(nil))
	h.say("run echo 'change <@U0HOSTILE> @here @claudeops-admin #1' >> notes.txt")
	h.say("allow " + h.expect(`\? approval (\w+): Bash`)[1])
	h.expect(`— ✓`)
	th := threadRecord(t, h, "main")
	h.say("commit the change")
	h.expect(`\* Committed `)
	h.say("push")
	h.expect(`\* Pushed `)
	h.say("pr --draft")
	url := h.expect(`\* Pull request #(\d+) from .* into ` + "`main`" + `: (\S+)$`)
	prs := gh.PullRequests("acme", "api")
	sha := strings.TrimSpace(gitRun(t, bare, "--git-dir", bare, "rev-parse", "refs/heads/"+th.Branch))
	if len(prs) != 1 || prs[0].State != "open" || !prs[0].Draft || prs[0].Head != th.Branch || prs[0].Base != "main" ||
		prs[0].HeadSHA != sha || url[1] != "1" || url[2] != gh.Web+"/acme/api/pull/1" {
		t.Fatalf("GitHub's pull requests: %+v; want one draft from %s at %s (the reply: %q)", prs, th.Branch, sha, url)
	}
	for _, want := range []string{"```text\nrun echo 'change <@U0HOSTILE> @here @claudeops-admin #1' >> notes.txt\n```\n", "notes.txt", "Cost so far: $"} {
		if !strings.Contains(prs[0].Body, want) {
			t.Errorf("the body lacks %q:\n%s", want, prs[0].Body)
		}
	}
	if !strings.HasPrefix(prs[0].Title, "run echo 'change") {
		t.Errorf("title %q, want the first request", prs[0].Title)
	}

	h.say("pr Update the notes")
	h.expect(`\* Pull request #1 from .* It is still a draft: this forge's API cannot mark it ready`)
	prs = gh.PullRequests("acme", "api")
	if len(prs) != 1 || prs[0].Title != "Update the notes" || !prs[0].Draft {
		t.Fatalf("after a second pr: %+v; want the same one, retitled, a draft", prs)
	}
	h.stopBot()
	for _, r := range gh.Requests() {
		if r.Authorization != "Bearer "+gh.Token {
			t.Errorf("%s %s without the token", r.Method, r.Path)
		}
	}
	tokenNowhere(t, gh.Token, logs.String(), wsDir)
}

// githubHarness is a bot whose console channel is bound to a bare git
// repository, the repository acme/api on the fake GitHub, its forge
// GitHub's client with the fake's token; logs is the bot's debug log.
func githubHarness(t *testing.T, sc fakeanthropic.Script) (h *harness, gh *fakegithub.Server, bare string, logs *testkit.Output, wsDir string) {
	t.Helper()
	gh = fakegithub.Start(t)
	bare = bareRemote(t)
	gh.CreateRepo("acme", "api", bare)
	g, err := forge.NewGitHub(forge.GitHubConfig{URL: gh.URL, Token: forge.NewToken(gh.Token)})
	if err != nil {
		t.Fatal(err)
	}
	wsDir = t.TempDir()
	m, err := workspace.New(workspace.Options{Dir: wsDir})
	if err != nil {
		t.Fatal(err)
	}
	logs = testkit.NewOutput()
	h = newHarness(t, sc, func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
		c.Workspace.Forges = oneForge{f: g, repo: forge.Repo{Owner: "acme", Name: "api"}}
		c.Config.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return h, gh, bare, logs, wsDir
}

// TestScheduledPRTwiceOnGitHub: a nightly chore added with --pr, run twice,
// each run changing a file: the first run pushes its branch and opens the
// pull request on the fake GitHub, the second continues that branch and
// updates the same pull request (one pulls/create in all), which shows the
// branch's new tip, holding both nights' files (the bare remote's git as
// oracle). The token is in no log line nor workspace file.
func TestScheduledPRTwiceOnGitHub(t *testing.T) {
	var nights atomic.Int32
	sc := func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) == 0 && strings.Contains(req.LastUserText(), "the nightly chore") {
			cmd := fmt.Sprintf("touch nightly-%d.txt", nights.Add(1))
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": cmd, "description": "the chore"})}}
		}
		return script(nil)(ctx, req)
	}
	h, gh, bare, logs, wsDir := githubHarness(t, sc)
	stop := startScheduler(t, h)
	defer stop()
	h.say("rules add allow Bash(touch:*)")
	h.expect(`\* Rule \d+: allow`)
	h.say(`schedule add "0 3 * * *" --pr the nightly chore`)
	id := h.expect(`\* Schedule (\d+): `)[1]

	h.say("schedule run " + id)
	run1 := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	branch := h.expect(`^\[` + run1 + `\] \* Pull request #1 opened from ` + "`([^`]+)`" + ` into ` + "`main`")[1]
	waitRun(t, h, id, "succeeded")
	// The branch is handed over once the run's thread is quiet, after the
	// run's record is done: the next run continues it only then.
	h.expect(`^\[` + run1 + `\] \* The run is done and its branch pushed`)

	h.say("schedule run " + id)
	run2 := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run2 + `\] \* Pull request #1 updated from ` + "`" + branch + "`")
	waitRun(t, h, id, "succeeded")

	prs := gh.PullRequests("acme", "api")
	tip := strings.TrimSpace(gitRun(t, bare, "--git-dir", bare, "rev-parse", "refs/heads/"+branch))
	if len(prs) != 1 || prs[0].State != "open" || prs[0].Head != branch || prs[0].HeadSHA != tip || prs[0].Draft {
		t.Fatalf("GitHub's pull requests: %+v; want one open from %s at %s", prs, branch, tip)
	}
	files := gitRun(t, bare, "--git-dir", bare, "ls-tree", "--name-only", "refs/heads/"+branch)
	if !strings.Contains(files, "nightly-1.txt") || !strings.Contains(files, "nightly-2.txt") {
		t.Fatalf("the branch holds %q; want both nights' files", files)
	}
	creates := 0
	for _, r := range gh.Requests() {
		if r.Op == "pulls/create" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d pulls/create requests; want 1", creates)
	}
	h.stopBot()
	tokenNowhere(t, gh.Token, logs.String(), wsDir)
}
