package bot

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/store"
)

// A request's tool line, like its prompt, must show its final state after
// a restart that expired the request: the worker records where the line
// is when it shows the prompt (the platform's ref, not a mailroom's
// provisional one, which means nothing to the next run), and Recover
// edits it with the prompt.

// recordShown stores where the prompt of approval id is, and the tool
// line of its call toolUseID, in one write: a kill between two writes
// would leave the line unknown. The prompt's Ask waited its turn in the
// thread's lane, behind the line's post, so the line's platform ref is
// known by then.
func (w *worker) recordShown(ctx context.Context, id string, prompt adapters.MessageRef, toolUseID string) {
	line, depth, ok := w.view.toolLineRef(toolUseID)
	if r, isQueued := w.ad.(resolver); ok && isQueued {
		if line, ok = r.Resolve(line); !ok {
			w.log.Warn("tool line not posted: a restart could not show its end", "approval", id)
		}
	}
	toolRef := ""
	if ok {
		toolRef = line.String()
	}
	if err := w.store.SetApprovalShown(ctx, id, prompt.String(), toolRef, depth); err != nil {
		w.log.Error("store where the approval is shown", "approval", id, "err", err)
	}
}

// expiredToolLine is how the tool line of a request a restart expired
// ends: not run, or not answered, and why.
func expiredToolLine(a store.Approval) adapters.Message {
	why := "not run: the approval expired when the bot restarted"
	if a.Kind == "question" {
		why = "not answered: the question expired when the bot restarted"
	}
	return adapters.Message{Kind: adapters.KindTool, Tool: &adapters.Tool{
		Name: a.Tool, Input: keyInput(a.Tool, []byte(a.Input)), State: adapters.ToolDenied, Preview: why, Depth: a.ToolDepth,
	}}
}

// endToolLine shows the final state of the tool line of the approval a a
// restart expired, if its place was recorded.
func (b *Bot) endToolLine(ctx context.Context, a store.Approval) {
	ref, ok := adapters.ParseMessageRef(a.ToolRef)
	if !ok {
		return
	}
	ad := b.adapter(ref.Thread.Platform)
	if ad == nil {
		return
	}
	if err := ad.Edit(ctx, ref, expiredToolLine(a)); err != nil {
		b.log.Warn("show the end of an expired request's tool line", "approval", a.ID, "err", err)
	}
}
