package slack

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// A text's final edit that would change nothing but take its Stop control
// off is held back while the text is the thread's latest message: the
// turn still runs, so Stop still means something, and what the thread
// shows next takes the control off in a call it makes anyway. The footer
// rides in the text's own message (the final text, the footer under it,
// no Stop: one chat.update instead of a chat.update and a
// chat.postMessage); anything else posted first, or the status cleared
// at the turn's end, sends the held final edit before it, as it was.

// held is a text message whose final edit is held back.
type held struct {
	p *posted
	m adapters.Message // the final text
}

// holdStop holds back m, the final edit of p, when it would only take the
// Stop control off; it reports whether it did. A text held before in the
// thread is sent first.
func (a *Adapter) holdStop(ctx context.Context, p *posted, m adapters.Message) bool {
	if m.Kind != adapters.KindText || !m.Final || p.stream || p.thread == "" {
		return false
	}
	live := m
	live.Final = false
	parts := a.compose(live, p.input)
	if len(parts) != len(p.shown) {
		return false
	}
	for i, pt := range parts {
		if pt.key() != p.shown[i] {
			return false
		}
	}
	st := a.thread(p.channel, p.thread)
	st.mu.Lock()
	prev := st.held
	st.held = &held{p: p, m: m}
	st.mu.Unlock()
	if prev != nil && prev.p != p {
		a.sendHeld(ctx, prev)
	}
	return true
}

// takeHeld returns the thread's held text and leaves none; p, when set,
// takes it only if it is p's (an edit of that message supersedes it).
func (a *Adapter) takeHeld(channel, thread string, p *posted) *held {
	st, ok := a.threads.Get(threadKey(channel, thread))
	if !ok {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	h := st.held
	if h == nil || p != nil && h.p != p {
		return nil
	}
	st.held = nil
	return h
}

// releaseHeld sends the thread's held final edit, if any: before anything
// else shows in the thread, and at the turn's end.
func (a *Adapter) releaseHeld(ctx context.Context, channel, thread string) {
	if h := a.takeHeld(channel, thread, nil); h != nil {
		a.sendHeld(ctx, h)
	}
}

func (a *Adapter) sendHeld(ctx context.Context, h *held) {
	if err := a.render(ctx, h.p, h.m); err != nil {
		a.log.Warn("slack: take the Stop control off a final text", "err", err)
	}
}

// footerInHeld shows the footer m in the thread's held text, its final
// text above it and no Stop control; it reports whether it did. On a
// failure the held edit is sent alone and the footer goes as a message
// of its own.
func (a *Adapter) footerInHeld(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, bool) {
	h := a.takeHeld(t.Channel, t.Thread, nil)
	if h == nil {
		return adapters.MessageRef{}, false
	}
	parts := a.compose(h.m, h.p.input)
	footer := a.compose(m, uploadNone)[0]
	last := &parts[len(parts)-1]
	last.blocks = append(last.blocks[:len(last.blocks):len(last.blocks)], footer.blocks...)
	if err := a.show(ctx, h.p, parts); err != nil {
		a.log.Warn("slack: show the footer under the answer", "err", err)
		a.sendHeld(ctx, h)
		return adapters.MessageRef{}, false
	}
	return adapters.MessageRef{Thread: t, ID: h.p.ts[0]}, true
}
