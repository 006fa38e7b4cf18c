package scopes

import (
	"context"

	"github.com/claudeops/claudeops/bot/thread"
)

// A refused settings file is said to the bot's admins where they are: the
// first prompt a bot admin sends after the refusal, in any thread, tells
// them privately why (once per admin and problem), besides `settings`,
// the log and /readyz. The bot cannot open a conversation of its own on
// every platform, so it tells them where they next speak.

var _ thread.PromptGate = (*part)(nil)

// BeforePrompt implements thread.PromptGate: it never refuses.
func (p *part) BeforePrompt(ctx context.Context, pr thread.Prompt) error {
	r := p.t.Scopes()
	problem := r.FileProblem()
	if problem == nil || pr.Auto != "" || !r.IsBotAdmin(pr.User.ID) || !p.ext.firstTold(pr.User.ID, problem.Error()) {
		return nil
	}
	// The problem may name other channels and their values: privately.
	p.t.Tell(ctx, pr.User, "The settings file on disk was refused, and the last good one is in use: "+problem.Error())
	return nil
}

// firstTold records that user is told problem and reports whether they
// had not been told it yet.
func (e *Extension) firstTold(user, problem string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.told == nil {
		e.told = map[string]string{}
	}
	if e.told[user] == problem {
		return false
	}
	e.told[user] = problem
	return true
}
