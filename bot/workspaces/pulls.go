package workspaces

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/forge"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// `pr [--draft] [title]`: a pull request from the thread's branch to the
// repository's default branch, on the forge the operator configured for
// it. It opens nothing from commits the remote lacks: the thread's `push`
// owns pushing (its record, its recovery after a restart), so `pr` says
// "push first" rather than pushing behind the starter's back.

// maxTitle bounds a title taken from the thread's first request.
const maxTitle = 72

func prCommand() thread.Command {
	return thread.Command{Name: "pr", Who: thread.Starter, Usage: []string{"pr [--draft] [title]"},
		Help: "open, or update, a pull request from this thread's pushed branch to the default branch", Line: true,
		Claims: claimsPR, Run: thread.Bind((*part).cmdPR)}
}

// claimsPR: a message that talks about a pull request ("PR #12 broke the
// build", "pr 12 is ready?") is a prompt for Claude; `pr`, `pr --draft …`
// and `pr <title>` are the command.
func claimsPR(args []string) bool {
	rest := strings.TrimSpace(args[0])
	first, _, _ := strings.Cut(rest, " ")
	if strings.HasSuffix(rest, "?") || strings.HasPrefix(first, "#") {
		return false
	}
	_, err := strconv.Atoi(first)
	return err != nil
}

// cmdPR opens or updates the thread's pull request.
func (p *part) cmdPR(ctx context.Context, ev adapters.Event, args []string) {
	wt, ok := p.branchCommand(ctx, ev, "pr")
	if !ok {
		return
	}
	draft, title := prArgs(args[0])
	f, repo, ok := p.forgeOf(wt.Repo)
	if !ok {
		p.t.Reply(ctx, "This channel's repository has no forge configured: the bot's operator names it in CLAUDEOPS_FORGES.")
		return
	}
	gctx, cancel := context.WithTimeout(ctx, gitLongTimeout)
	defer cancel()
	st, ok := p.prReady(gctx, wt)
	if !ok {
		return
	}
	first := p.firstRequest(ctx)
	if title == "" {
		title = text.Shorten(text.OneLine(first), maxTitle)
	}
	if strings.TrimSpace(title) == "" {
		title = "claudeops: " + wt.Branch
	}
	base, err := p.ext.cfg.Manager.Check(gctx, wt.Repo)
	if err != nil {
		p.gitRefused(ctx, "check", err, false)
		p.t.Reply(ctx, "Could not find the default branch: "+err.Error())
		return
	}
	pr, err := f.OpenOrUpdatePR(gctx, repo, wt.Branch, base, title, p.prBody(gctx, first, st), draft)
	if err != nil {
		p.t.Log().Warn("pull request", "repo", repo.String(), "branch", wt.Branch, "err", err)
		p.t.Audit(ctx, ev.User.ID, "pr", wt.Branch, err.Error(), false)
		p.t.Reply(ctx, "Could not open the pull request: "+err.Error())
		return
	}
	p.t.Audit(ctx, ev.User.ID, "pr", wt.Branch, pr.URL, true)
	p.savePull(ctx, store.PullRequest{Repo: wt.Repo, ForgeRepo: repo.String(), Head: wt.Branch, Base: base,
		ThreadKey: string(p.t.Ref().Key()), OpenedBy: ev.User.ID}, pr)
	p.t.Reply(ctx, fmt.Sprintf("Pull request #%d from %s into %s: %s", pr.Number, text.CodeSpan(wt.Branch), text.CodeSpan(base), pr.URL)+draftNote(draft, pr))
}

// draftNote says when the pull request is not what was asked of it: a
// forge whose API sets a draft only on opening (GitHub's) leaves an
// update's as it was.
func draftNote(asked bool, pr forge.PR) string {
	switch {
	case pr.Draft && !asked:
		return " It is still a draft: this forge's API cannot mark it ready; mark it ready on its page."
	case !pr.Draft && asked:
		return " It is not a draft: this forge's API makes one only when the pull request opens."
	}
	return ""
}

// savePull records pr, which the bot opened or updated, with what rec
// says of where it came from; a failure is logged (the pull request is
// there all the same: only a review's way back to the thread is lost).
func (p *part) savePull(ctx context.Context, rec store.PullRequest, pr forge.PR) {
	if p.ext.cfg.Pulls == nil {
		return
	}
	now := p.t.Now()
	rec.URL, rec.Number, rec.State = pr.URL, pr.Number, pr.State
	if pr.Head != "" {
		rec.Head = pr.Head
	}
	if pr.Base != "" {
		rec.Base = pr.Base
	}
	rec.OpenedAt, rec.UpdatedAt = now, now
	if err := p.ext.cfg.Pulls.SavePullRequest(ctx, rec); err != nil {
		p.t.Log().Error("record the pull request", "url", pr.URL, "err", err)
	}
}

// forgeOf is repo's forge, when one is configured.
func (p *part) forgeOf(repo string) (forge.Forge, forge.Repo, bool) {
	if p.ext.cfg.Forges == nil {
		return nil, forge.Repo{}, false
	}
	return p.ext.cfg.Forges.ForgeOf(repo)
}

// prArgs parses "[--draft] [title]".
func prArgs(line string) (draft bool, title string) {
	line = strings.TrimSpace(line)
	if rest, ok := strings.CutPrefix(line, "--draft"); ok && (rest == "" || rest[0] == ' ') {
		return true, strings.TrimSpace(rest)
	}
	return false, line
}

// prReady checks that the branch is pushed and has a change, and gives
// the change's stat.
func (p *part) prReady(ctx context.Context, wt workspace.Worktree) (workspace.Stat, bool) {
	m := p.ext.cfg.Manager
	n, err := m.Unpushed(ctx, wt)
	if err == nil && n > 0 {
		p.t.Reply(ctx, fmt.Sprintf("Push first: %s has %d %s the remote lacks (`push`, then `pr`).", text.CodeSpan(wt.Branch), n, text.Plural(n, "commit", "commits")))
		return workspace.Stat{}, false
	}
	var st workspace.Stat
	if err == nil {
		_, st, err = m.Diff(ctx, wt)
		if errors.Is(err, workspace.ErrDiffTooLarge) {
			err = nil
		}
	}
	if err != nil {
		p.gitRefused(ctx, "pr", err, false)
		p.t.Reply(ctx, "Could not open the pull request: "+err.Error())
		return workspace.Stat{}, false
	}
	if len(st.Files) == 0 {
		p.t.Reply(ctx, "Nothing to open a pull request for: "+text.CodeSpan(wt.Branch)+" has no change. `commit` and `push` first.")
		return workspace.Stat{}, false
	}
	return st, true
}

// firstRequest is what the thread was first asked ("" when unknown).
func (p *part) firstRequest(ctx context.Context) string {
	turns, err := p.t.Store().ThreadTurns(ctx, string(p.t.Ref().Key()))
	if err != nil || len(turns) == 0 {
		return ""
	}
	return turns[0].Prompt
}

// prBody is the pull request's description: what was asked (fenced: it
// is a chat user's text, not the bot's, and in a code block the forge
// makes no mention, issue link or markup of it), the change, the cost so far, and
// where the thread is.
func (p *part) prBody(ctx context.Context, first string, st workspace.Stat) string {
	var b strings.Builder
	b.WriteString("Opened by claudeops from the chat thread " + p.threadLink() + ".\n\n")
	if first != "" {
		b.WriteString("What was asked (the thread's first message, as written there):\n\n")
		b.WriteString(fenced(text.Shorten(first, 4000)) + "\n")
	}
	b.WriteString("Changes:\n\n```\n" + statText(st, 50) + "\n```\n")
	if u, err := p.t.Store().ThreadUsage(ctx, string(p.t.Ref().Key())); err == nil {
		fmt.Fprintf(&b, "\nCost so far: $%.2f over %d %s.\n", u.CostUSD, u.Turns, text.Plural(u.Turns, "turn", "turns"))
	}
	return b.String()
}

// fenced is s in a code block whose fence is longer than any run of
// backticks in s, so that s cannot close it.
func fenced(s string) string {
	fence := text.Fence(s, 3)
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// threadLink names the thread in a pull request's description: its page
// on the platform where there is one, else its key.
func (p *part) threadLink() string {
	if l := p.t.Link(); l != "" {
		return "<" + l + ">"
	}
	return text.CodeSpan(p.t.Ref().String())
}
