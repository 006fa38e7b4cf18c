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

// recordToolLine stores where the tool line of the call toolUseID is, for
// approval id. Called once the prompt was shown: the prompt's Ask waited
// its turn in the thread's lane, behind the line's post, so the line's
// platform ref is known by then.
func (w *worker) recordToolLine(ctx context.Context, id, toolUseID string) {
	ref, depth, ok := w.view.toolLineRef(toolUseID)
	if !ok {
		return
	}
	if r, isQueued := w.ad.(resolver); isQueued {
		if ref, ok = r.Resolve(ref); !ok {
			w.log.Warn("tool line not posted: a restart could not show its end", "approval", id)
			return
		}
	}
	if err := w.store.SetApprovalToolLine(ctx, id, ref.String(), depth); err != nil {
		w.log.Error("store approval tool line", "approval", id, "err", err)
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
