package bot

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/forge"
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
	gh := fakegithub.Start(t)
	bare := bareRemote(t)
	gh.CreateRepo("acme", "api", bare)
	g, err := forge.NewGitHub(forge.GitHubConfig{URL: gh.URL, Token: forge.NewToken(gh.Token)})
	if err != nil {
		t.Fatal(err)
	}
	wsDir := t.TempDir()
	m, err := workspace.New(workspace.Options{Dir: wsDir})
	if err != nil {
		t.Fatal(err)
	}
	logs := testkit.NewOutput()
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
		c.Workspace.Forges = oneForge{f: g, repo: forge.Repo{Owner: "acme", Name: "api"}}
		c.Config.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})

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
