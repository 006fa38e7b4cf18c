package bot

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// hooks are a thread's extension parts (thread.Extension.Attach), one per
// entry of Config.Extensions (nil where an extension attached none); the
// kernel calls their hooks through these, at the points package thread
// orders.
type hooks []any

// attach makes the parts of the thread t.
func attach(exts []thread.Extension, t thread.Thread) hooks {
	if len(exts) == 0 {
		return nil
	}
	h := make(hooks, len(exts))
	for i, e := range exts {
		h[i] = e.Attach(t)
	}
	return h
}

// each calls f with every part that is a T, in order.
func each[T any](h hooks, f func(T)) {
	for _, p := range h {
		if t, ok := p.(T); ok {
			f(t)
		}
	}
}

// beforePrompt is the first refusal of p, if any.
func (h hooks) beforePrompt(ctx context.Context, p thread.Prompt) error {
	for _, x := range h {
		if g, ok := x.(thread.PromptGate); ok {
			if err := g.BeforePrompt(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepare is the first error of the Preparers, if any.
func (h hooks) prepare(ctx context.Context) error {
	for _, x := range h {
		if p, ok := x.(thread.Preparer); ok {
			if err := p.Prepare(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// receive hands a posted message to the parts (thread.Receiver), and a
// proposal of Claude's to its Proposers.
func (h hooks) receive(ctx context.Context, msg any) {
	if p, ok := msg.(thread.Proposal); ok {
		each(h, func(r thread.Proposer) { r.Propose(ctx, p) })
		return
	}
	each(h, func(r thread.Receiver) { r.Receive(ctx, msg) })
}

// proposes: a part takes Claude's proposals (thread.Proposer).
func (h hooks) proposes() bool {
	found := false
	each(h, func(thread.Proposer) { found = true })
	return found
}

// click gives c to the part whose prompt it was on; false: none's.
func (h hooks) click(ctx context.Context, u adapters.User, c adapters.Click) bool {
	for _, x := range h {
		if p, ok := x.(thread.Clicker); ok && p.Click(ctx, u, c) {
			return true
		}
	}
	return false
}

// beforeAsk asks the parts about a; the first denial stands.
func (h hooks) beforeAsk(ctx context.Context, a *thread.Ask) {
	for _, x := range h {
		if p, ok := x.(thread.Asks); ok && a.Deny == "" {
			p.BeforeAsk(ctx, a)
		}
	}
}
