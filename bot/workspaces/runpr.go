package workspaces

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// A schedule added with --pr keeps one pull request open: each run that
// changed something pushes and opens it, or, while the one an earlier run
// opened is still open, continues that pull request's branch (its remote
// tip: the push is a fast-forward, never forced) and updates it. A run's
// thread hands the branch over once the run is done (its worktree goes,
// the remote has all of it), so that the next run can continue it; a
// reply in the thread of the pull request's newest run continues the
// branch again (Prepare).

// continued is the pull request a thread's worktree continues.
type continued struct {
	pull store.PullRequest
}

// handOver asks the thread's part, once its run is over, to give up the
// worktree of a --pr schedule's branch for the schedule's next run; why
// starts what the thread is told. unchanged: only if the worktree holds
// no change since its Base (a failed run's work stays for people).
type handOver struct {
	why       string
	unchanged bool
}

// makeWorktree is the thread's new worktree: the branch of the pull
// request it continues, if any (said says so), else a new branch.
func (p *part) makeWorktree(ctx context.Context, repo string) (wt workspace.Worktree, said string, err error) {
	m := p.ext.cfg.Manager
	p.cont, p.noPR = nil, ""
	if pull, ok := p.pullToContinue(ctx, repo); ok {
		wt, err := m.Continue(ctx, repo, pull.Head)
		if err == nil {
			p.cont = &continued{pull: pull}
			return wt, fmt.Sprintf("Continuing pull request #%d (%s): working on its branch %s of %s (from its tip %s).",
				pull.Number, pull.URL, text.CodeSpan(wt.Branch), text.CodeSpan(workspace.Redact(repo)), text.ShortCommit(wt.Base)), nil
		}
		if errors.Is(err, workspace.ErrTampered) {
			return workspace.Worktree{}, "", err
		}
		p.t.Log().Warn("continue a pull request's branch", "branch", pull.Head, "err", err)
		p.noPR = fmt.Sprintf("pull request #%d's branch %s could not be continued (%v)", pull.Number, text.CodeSpan(pull.Head), err)
		p.t.Reply(ctx, "This thread works on a new branch: "+p.noPR+".")
	}
	wt, err = m.Create(ctx, repo, p.branchName())
	return wt, "", err
}

// pullToContinue is the open pull request whose branch the thread's new
// worktree continues: for a --pr schedule's run, the schedule's (asked of
// the forge: one closed or merged meanwhile is recorded so and not
// continued); otherwise the thread's own, whose worktree was handed over.
func (p *part) pullToContinue(ctx context.Context, repo string) (store.PullRequest, bool) {
	pulls := p.ext.cfg.Pulls
	if pulls == nil {
		return store.PullRequest{}, false
	}
	r, run := p.t.Run()
	if !run {
		return p.threadPull(ctx, repo)
	}
	if !r.Schedule.PR || r.Trigger != "" {
		return store.PullRequest{}, false
	}
	pull, ok, err := pulls.OpenPullRequestOfSchedule(ctx, r.Schedule.ID)
	if err != nil {
		p.t.Log().Error("read the schedule's pull request", "schedule", r.Schedule.ID, "err", err)
		p.noPR = "the schedule's open pull request could not be read (" + err.Error() + ")"
		return store.PullRequest{}, false
	}
	if !ok || pull.Repo != repo {
		return store.PullRequest{}, false
	}
	f, frepo, ok := p.forgeOf(repo)
	if !ok {
		return store.PullRequest{}, false
	}
	pr, open, err := f.PRFor(ctx, frepo, pull.Head)
	switch {
	case err != nil:
		p.t.Log().Warn("find the schedule's pull request", "url", pull.URL, "err", err)
		p.t.Reply(ctx, fmt.Sprintf("Could not ask the forge about pull request #%d (%v): its branch is continued as last seen open.", pull.Number, err))
	case !open || pr.Number != pull.Number:
		if err := pulls.SetPullRequestState(ctx, pull.URL, "closed", p.t.Now()); err != nil {
			p.t.Log().Error("record a pull request closed", "url", pull.URL, "err", err)
		}
		p.t.Reply(ctx, fmt.Sprintf("Pull request #%d (%s) was closed or merged since: this run starts a new branch.", pull.Number, pull.URL))
		return store.PullRequest{}, false
	}
	return pull, true
}

// threadPull is the thread's open pull request from the branch its
// record names, when its worktree was handed over (a review to address).
func (p *part) threadPull(ctx context.Context, repo string) (store.PullRequest, bool) {
	rec := p.t.Record()
	if rec.Branch == "" || rec.Worktree != "" {
		return store.PullRequest{}, false
	}
	pulls, err := p.ext.cfg.Pulls.PullRequestsOfThread(ctx, rec.Key)
	if err != nil {
		p.t.Log().Error("read the thread's pull requests", "err", err)
		return store.PullRequest{}, false
	}
	for _, pull := range pulls {
		if pull.State == "open" && pull.Head == rec.Branch && pull.Repo == repo {
			return pull, true
		}
	}
	return store.PullRequest{}, false
}

// runPR opens or updates the --pr schedule's pull request from the run's
// pushed branch and records it. A forge error is told and is the run's
// error; the pushed branch stays.
func (p *part) runPR(ctx context.Context, r thread.Run, e *thread.TurnEnd, wt workspace.Worktree) {
	fail := func(why string) {
		e.Err = errors.New("pull request not opened: " + why)
		p.t.Reply(ctx, "No pull request: "+why+". The branch "+text.CodeSpan(wt.Branch)+" stays pushed.")
	}
	if p.noPR != "" {
		fail(p.noPR)
		return
	}
	f, frepo, ok := p.forgeOf(wt.Repo)
	if !ok {
		fail("this channel's repository has no forge configured (CLAUDEOPS_FORGES)")
		return
	}
	m := p.ext.cfg.Manager
	base, err := m.Check(ctx, wt.Repo)
	if err != nil {
		p.gitRefused(ctx, "check", err, false)
		fail("the default branch was not found: " + err.Error())
		return
	}
	_, st, err := m.Diff(ctx, wt)
	if err != nil && !errors.Is(err, workspace.ErrDiffTooLarge) {
		p.t.Log().Warn("the run's change", "err", err)
	}
	s := r.Schedule
	title := text.Shorten(text.OneLine(s.Prompt), maxTitle)
	pr, err := f.OpenOrUpdatePR(ctx, frepo, wt.Branch, base, title, p.runBody(r, st, e.Cost), false)
	if err != nil {
		p.t.Log().Warn("pull request of a scheduled run", "repo", frepo.String(), "branch", wt.Branch, "err", err)
		fail("the forge refused: " + err.Error())
		return
	}
	p.savePull(ctx, store.PullRequest{Repo: wt.Repo, ForgeRepo: frepo.String(), Head: wt.Branch, Base: base,
		ThreadKey: string(p.t.Ref().Key()), ScheduleID: s.ID, OpenedBy: fmt.Sprintf("schedule:%d", s.ID)}, pr)
	e.PR = pr.URL
	verb := "opened"
	if p.cont != nil && p.cont.pull.URL == pr.URL {
		verb = "updated"
	}
	p.t.Reply(ctx, fmt.Sprintf("Pull request #%d %s from %s into %s: %s", pr.Number, verb, text.CodeSpan(wt.Branch), text.CodeSpan(base), pr.URL))
}

// runBody is the pull request's description after a run: the schedule,
// the run, its change and cost, and its thread.
func (p *part) runBody(r thread.Run, st workspace.Stat, cost float64) string {
	s := r.Schedule
	var b strings.Builder
	fmt.Fprintf(&b, "Opened by claudeops for schedule #%d (%s), and updated by its runs while it stays open.\n\n", s.ID, text.CodeSpan(s.Spec))
	b.WriteString("The schedule's prompt:\n\n" + fenced(text.Shorten(s.Prompt, 4000)) + "\n")
	fmt.Fprintf(&b, "Latest run: slot %s, in the chat thread %s.\n\n", r.Slot.UTC().Format("2006-01-02 15:04Z"), p.threadLink())
	b.WriteString("Its change:\n\n```\n" + statText(st, 50) + "\n```\n")
	fmt.Fprintf(&b, "\nIts cost: $%.2f.\n", cost)
	return b.String()
}

// handOverBranch gives up the worktree of a --pr schedule's run once the
// run is over and the thread quiet: the remote has the branch, and the
// schedule's next run continues it.
func (p *part) handOverBranch(ctx context.Context, h handOver) {
	wt, ok := p.worktree()
	if !ok {
		return
	}
	if _, run := p.t.Run(); run || !p.t.State().Quiet() {
		return
	}
	if h.unchanged && !p.unchanged(ctx, wt) {
		return
	}
	p.t.Stop("")
	p.release(ctx, h.why)
	p.cont = nil
	if p.t.Record().Worktree == "" {
		p.t.RemoveHome(ctx) // its conversation cannot resume in another worktree
	}
}

// unchanged says whether wt holds nothing since its Base, committed or
// not, and nothing the remote lacks (false when git cannot tell).
func (p *part) unchanged(ctx context.Context, wt workspace.Worktree) bool {
	ctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	m := p.ext.cfg.Manager
	if n, err := m.Unpushed(ctx, wt); err != nil || n > 0 {
		return false
	}
	_, st, err := m.Diff(ctx, wt)
	return err == nil && len(st.Files) == 0
}
