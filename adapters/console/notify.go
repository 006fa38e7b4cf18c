package console

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// Notify implements adapters.Notifier: a terminal has nobody to ping, so
// the notice names the person first ("@bob: …"), as a mention would.
func (a *Adapter) Notify(ctx context.Context, t adapters.ThreadRef, user adapters.User, text string) (adapters.MessageRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ref := adapters.MessageRef{Thread: t, ID: a.nextID()}
	a.render(ref, adapters.Message{Kind: adapters.KindNotice, Text: "@" + user.ID + ": " + text})
	return ref, a.flush()
}
