package matrix

import (
	"context"
	"strings"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// footerInHeld shows the footer m under the thread's held final text
// (outbox.Editor.Hold) in one edit of the text's last event, instead of
// an edit and an event of its own: a short answer in several deltas costs
// two events, its post and that edit. It reports whether it did; when the
// two do not fit one event, or the edit fails, the final text is sent
// alone and the footer goes as a message of its own; so too when the
// text leaves a code block open, which would swallow the footer.
func (a *Adapter) footerInHeld(ctx context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, bool) {
	evID, e, ok, err := a.ed.TakeHeld(ctx, string(t.Key()))
	if err != nil {
		a.log.Warn("matrix: take the final text for the footer", "err", err)
	}
	if !ok {
		return adapters.MessageRef{}, false
	}
	joined := e
	if c := content(e.md + "\n\n" + messageMarkdown(m)); e.md != "" && !openFence(e.md) && fits(c) {
		joined.content = editContent(id.EventID(evID), c)
		_, err := a.send(ctx, e.room, joined.content)
		if err == nil {
			return adapters.MessageRef{Thread: t, ID: evID}, true
		}
		a.log.Warn("matrix: show the footer under the answer", "err", err)
	}
	if _, err := a.send(ctx, e.room, e.content); err != nil {
		a.log.Warn("matrix: edit message", "event", evID, "err", err)
	}
	return adapters.MessageRef{}, false
}

// openFence reports whether md ends inside a fenced code block.
func openFence(md string) bool {
	open := ""
	for _, l := range strings.Split(md, "\n") {
		l = strings.TrimLeft(l, " ")
		for _, f := range []string{"```", "~~~"} {
			switch {
			case open == "" && strings.HasPrefix(l, f):
				open = f
			case open == f && strings.TrimRight(l, " ") == f:
				open = ""
			}
		}
	}
	return open != ""
}
