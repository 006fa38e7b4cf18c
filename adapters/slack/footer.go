package slack

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// footerInHeld shows the footer m in the message of the thread's held
// final text (outbox.Editor.Hold): the final text, the footer under it,
// no Stop control, in one chat.update instead of a chat.update and a
// chat.postMessage. It reports whether it did; on a failure the final
// text is sent alone and the footer goes as a message of its own.
func (a *Adapter) footerInHeld(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, bool) {
	_, e, ok, err := a.edit.TakeHeld(ctx, threadKey(t.Channel, t.Thread))
	if err != nil {
		a.log.Warn("slack: take the final text for the footer", "err", err)
	}
	if !ok {
		return adapters.MessageRef{}, false
	}
	p := a.lookup(e.ref)
	if p == nil || p.stream {
		a.sendHeld(ctx, e)
		return adapters.MessageRef{}, false
	}
	parts := a.compose(e.m, p.input)
	footer := a.compose(m, uploadNone)[0]
	last := &parts[len(parts)-1]
	last.blocks = append(last.blocks[:len(last.blocks):len(last.blocks)], footer.blocks...)
	if err := a.show(ctx, p, parts); err != nil {
		a.log.Warn("slack: show the footer under the answer", "err", err)
		a.sendHeld(ctx, e)
		return adapters.MessageRef{}, false
	}
	return adapters.MessageRef{Thread: t, ID: p.ts[0]}, true
}

// sendHeld sends a held final text taken out of the editor, alone.
func (a *Adapter) sendHeld(ctx context.Context, e pendingEdit) {
	if err := a.editNow(ctx, e.ref, e.m); err != nil {
		a.log.Warn("slack: send a final text", "err", err)
	}
}
