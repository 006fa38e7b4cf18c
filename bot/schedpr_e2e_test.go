package bot

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/giteatest"
	"github.com/claudeops/claudeops/store"
)

// TestScheduledPRRunTwice, with a real Gitea, real git, the real CLI and
// the fake model API: a nightly chore added with --pr, run twice with a
// reviewer's commit pushed to the branch between, leaves ONE open pull
// request in Gitea whose head holds both runs' commits and the reviewer's
// (the first run's an ancestor of the remote's tip, asked of git on a
// fresh clone: no force push), each run's record and thread naming it; a
// reply in the newest run's thread continues the branch, its push updating
// the same pull request; the pull
// request closed through Gitea's API, the next run opens a new one on a
// new branch; a run that changed nothing opens none. The forge's token is
// in no log line nor workspace file.
func TestScheduledPRRunTwice(t *testing.T) {
	h, s, repo, tok, logs, wsDir := giteaHarness(t)
	stop := startScheduler(t, h)
	defer stop()
	h.say("rules add allow Bash(touch:*)")
	h.expect(`\* Rule \d+: allow`)
	h.say(`schedule add "30 2 * * *" --pr run touch nightly.txt`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule list")
	h.expect(`\* ` + id + `\. .* · pushes its branch and opens a pull request$`)

	first := prRun(t, h, id, "", "opened")
	// A reviewer pushes a commit to the pull request's branch: the next
	// run goes on from it (and touches nightly.txt anew).
	clone := filepath.Join(t.TempDir(), "reviewer")
	gitRun(t, "", "clone", "--quiet", "--branch", first.branch, s.CloneURL(repo), clone)
	gitRun(t, clone, "rm", "--quiet", "nightly.txt")
	gitRun(t, clone, "commit", "--quiet", "-m", "review: not this file")
	gitRun(t, clone, "push", "--quiet", "origin", "HEAD:refs/heads/"+first.branch)
	reviewer := strings.TrimSpace(gitRun(t, clone, "rev-parse", "HEAD"))

	second := prRun(t, h, id, `Continuing pull request #\d+ \(`+regexp.QuoteMeta(first.url)+`\): working on its branch `+"`"+regexp.QuoteMeta(first.branch)+"`"+` of .* \(from its tip `+reviewer[:10]+`\)`, "updated")
	if second.branch != first.branch || second.url != first.url {
		t.Fatalf("the second run: %+v; want the first's branch and pull request %+v", second, first)
	}
	open := openPRs(t, s, repo)
	if len(open) != 1 || open[0].URL != first.url || open[0].Head.Ref != first.branch || open[0].Head.SHA != second.commit {
		t.Fatalf("Gitea's open pull requests: %+v; want one from %s at %s", open, first.branch, second.commit)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	gitRun(t, "", "clone", "--quiet", s.CloneURL(repo), fresh)
	if tip := strings.TrimSpace(gitRun(t, fresh, "rev-parse", "origin/"+first.branch)); tip != second.commit {
		t.Errorf("the remote's %s at %s, want the second run's %s", first.branch, tip, second.commit)
	}
	// Neither the first run's commit nor the reviewer's is lost: no force push.
	for _, c := range []string{first.commit, reviewer} {
		gitRun(t, fresh, "merge-base", "--is-ancestor", c, "origin/"+first.branch)
	}
	for _, r := range runsOf(t, h, id) {
		if r.PR != first.url {
			t.Errorf("run at %s records pull request %q, want %s", r.Slot, r.PR, first.url)
		}
	}
	h.say("schedule runs " + id)
	h.expect(regexp.QuoteMeta("· pull request " + first.url))

	// A reply in the newest run's thread (a review to address) continues
	// the branch; commit and push update the same pull request.
	h.say("/thread " + second.run)
	h.say("run touch review.txt")
	h.expect(`^\[` + second.run + `\] \* Continuing pull request #\d+ \(` + regexp.QuoteMeta(first.url) + `\): working on its branch`)
	h.expect(`^\[` + second.run + `\] — ✓`)
	h.say("commit the review")
	h.expect(`^\[` + second.run + `\] \* Committed `)
	h.say("push")
	h.expect(`^\[` + second.run + `\] \* Pushed `)
	h.say("/thread main")
	gitRun(t, fresh, "fetch", "--quiet", "origin")
	tip := strings.TrimSpace(gitRun(t, fresh, "rev-parse", "origin/"+first.branch))
	gitRun(t, fresh, "merge-base", "--is-ancestor", second.commit, tip)
	if open := openPRs(t, s, repo); len(open) != 1 || open[0].URL != first.url || open[0].Head.SHA != tip {
		t.Fatalf("after the reply's push, Gitea's open pull requests: %+v; want one at %s", open, tip)
	}

	// Closed on the forge: the next run opens a new one, on a new branch.
	n, _ := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(first.url), 10, 64)
	s.API(t, "PATCH", "/repos/"+repo.FullName()+"/pulls/"+strconv.FormatInt(n, 10), map[string]string{"state": "closed"}, nil)
	third := prRun(t, h, id, `Pull request #`+strconv.FormatInt(n, 10)+` \(`+regexp.QuoteMeta(first.url)+`\) was closed or merged since: this run starts a new branch\.`, "opened")
	if third.branch == first.branch || third.url == first.url {
		t.Fatalf("after the close: %+v; want a new branch and pull request", third)
	}
	if rec, ok, err := h.st.PullRequestByURL(context.Background(), first.url); err != nil || !ok || rec.State != "closed" {
		t.Errorf("the closed one's record: %+v %v %v", rec, ok, err)
	}
	if open := openPRs(t, s, repo); len(open) != 1 || open[0].URL != third.url || open[0].Head.Ref != third.branch {
		t.Errorf("Gitea's open pull requests: %+v; want the new one only", open)
	}

	// A run that changes nothing opens nothing.
	h.say(`schedule add "0 4 * * *" --pr just say hello`)
	quiet := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + quiet)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + quiet)[1]
	h.expect(`^\[` + run + `\] \* This run changed nothing: no commit, nothing pushed, no pull request\.`)
	waitRun(t, h, quiet, "succeeded")
	if all := s.PullRequests(t, repo); len(all) != 2 {
		t.Errorf("Gitea has %d pull requests, want 2", len(all))
	}
	h.stopBot()
	tokenNowhere(t, tok, logs.String(), wsDir)
}

// prDone is what a --pr schedule's run said it did.
type prDone struct{ run, branch, commit, url string }

// prRun runs schedule id now and waits for what its thread says first
// (before, when set), its pull request, opened or updated (verb), and its
// worktree handed over.
func prRun(t *testing.T, h *harness, id, before, verb string) prDone {
	t.Helper()
	h.say("schedule run " + id)
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	if before != "" {
		h.expect(`^\[` + run + `\] \* ` + before)
	}
	pushed := h.expect(`^\[` + run + `\] \* Pushed branch ` + "`([^`]+)`" + ` \(commit ([0-9a-f]+)\)`)
	pr := h.expect(`^\[` + run + `\] \* Pull request #\d+ ` + verb + ` from ` + "`" + regexp.QuoteMeta(pushed[1]) + "`" + ` into ` + "`main`" + `: (\S+)`)
	h.expect(`^\[` + run + `\] \* The run is done and its branch pushed, for the schedule's next run to continue`)
	waitRun(t, h, id, "succeeded")
	rs := runsOf(t, h, id)
	if rs[0].Branch != pushed[1] || !strings.HasPrefix(rs[0].Commit, pushed[2]) || rs[0].PR != pr[1] {
		t.Fatalf("the run's record %+v; its thread said %s at %s, %s", rs[0], pushed[1], pushed[2], pr[1])
	}
	return prDone{run: run, branch: pushed[1], commit: rs[0].Commit, url: pr[1]}
}

func runsOf(t *testing.T, h *harness, id string) []store.ScheduleRun {
	t.Helper()
	n, _ := strconv.ParseInt(id, 10, 64)
	rs, err := h.st.Runs(context.Background(), n, 10)
	if err != nil || len(rs) == 0 {
		t.Fatalf("runs of %s: %v %v", id, rs, err)
	}
	return rs
}

func openPRs(t *testing.T, s *giteatest.Server, r giteatest.Repo) []giteatest.PullRequest {
	t.Helper()
	var open []giteatest.PullRequest
	for _, pr := range s.PullRequests(t, r) {
		if pr.State == "open" {
			open = append(open, pr)
		}
	}
	return open
}
