package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/store"
)

// What a restart finds saying "waiting" or "running" is made to say what
// became of it: the tool line of a request the restart expired (where it
// is is stored with the request when its prompt is shown), and a tool
// line shown running (stored while it runs, once it has run a moment).
// The refs stored are the platform's, not a mailroom's provisional ones,
// which mean nothing to the next run.

// lineBook keeps the records of where the thread's tool lines are, for
// the next start: a part of the worker, with its deps.
type lineBook struct{ deps }

// resolver is an adapter that queues its calls (mailroom.go) and gives
// the platform's ref of a post Post answered with a provisional one: what
// is stored to edit the message after a restart.
type resolver interface {
	// Resolve is the platform's ref behind ref (ref itself when it is
	// one); ok is false while the post has not been made. It never waits.
	Resolve(ref adapters.MessageRef) (adapters.MessageRef, bool)
}

// shown stores where the prompt of approval id is, and the tool line of
// its call toolUseID in v, in one write: a kill between two writes
// would leave the line unknown. The prompt's Ask waited its turn in the
// thread's lane, behind the line's post, so the line's platform ref is
// known by then.
func (lb lineBook) shown(ctx context.Context, v *view, id string, prompt adapters.MessageRef, toolUseID string) {
	line, depth, ok := v.toolLineRef(toolUseID)
	if r, isQueued := lb.ad.(resolver); ok && isQueued {
		if line, ok = r.Resolve(line); !ok {
			lb.log.Warn("tool line not posted: a restart could not show its end", "approval", id)
		}
	}
	toolRef := ""
	if ok {
		toolRef = line.String()
	}
	if err := lb.store.SetApprovalShown(ctx, id, prompt.String(), toolRef, depth); err != nil {
		lb.log.Error("store where the approval is shown", "approval", id, "err", err)
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

// storeLineAfter: a tool line is recorded as running once it has run this
// long; the many quick calls (a Read, a Grep) cost no write.
const storeLineAfter = time.Second

// sync brings the records of running tool lines in line with the view
// v: those that ended (or wait for a person) are forgotten, those that
// have run storeLineAfter and whose post the platform has are recorded.
func (lb lineBook) sync(ctx context.Context, v *view) {
	for _, ref := range v.unstored {
		if err := lb.store.ForgetToolLine(ctx, ref); err != nil {
			lb.log.Warn("forget a tool line's record", "err", err)
		}
	}
	v.unstored = v.unstored[:0]
	r, queued := lb.ad.(resolver)
	now := lb.now()
	for _, tl := range v.tools {
		if tl.stored != "" || tl.done || tl.ref == nil || tl.tool.State != adapters.ToolRunning || now.Sub(tl.started) < storeLineAfter {
			continue
		}
		ref := *tl.ref
		if queued {
			var ok bool
			if ref, ok = r.Resolve(ref); !ok {
				continue // not posted yet
			}
		}
		l := store.ToolLine{Ref: ref.String(), ThreadKey: string(lb.key), Tool: tl.tool.Name, Input: tl.tool.Input, Depth: tl.tool.Depth}
		if err := lb.store.RecordToolLine(ctx, l); err != nil {
			lb.log.Warn("record a running tool line", "err", err)
			continue
		}
		tl.stored = l.Ref
	}
}

// endRunningLines shows stopped the tool lines a previous run left
// running; a line whose platform does not run now is left for a later
// start.
func (b *Bot) endRunningLines(ctx context.Context) error {
	ls, err := b.store.ToolLines(ctx)
	if err != nil {
		return fmt.Errorf("recover running tool lines: %w", err)
	}
	for _, l := range ls {
		ref, ok := adapters.ParseMessageRef(l.Ref)
		ad := b.adapter(ref.Thread.Platform)
		if ok && ad == nil {
			continue
		}
		if ok {
			m := adapters.Message{Kind: adapters.KindTool, Tool: &adapters.Tool{
				Name: l.Tool, Input: l.Input, State: adapters.ToolFailed, Depth: l.Depth,
				Preview: "stopped: the bot restarted while it ran"}}
			if err := ad.Edit(ctx, ref, m); err != nil {
				b.log.Warn("show a tool line left running as stopped", "thread", l.ThreadKey, "err", err)
			}
		}
		if err := b.store.ForgetToolLine(ctx, l.Ref); err != nil {
			return fmt.Errorf("recover running tool lines: %w", err)
		}
	}
	return nil
}
