package slack

// EditNow applies an edit at once, bypassing the editor's coalescing, so
// that a test decides exactly which versions of a text reach Slack.
var EditNow = (*Adapter).editNow

// SetCaps lowers how many messages and threads the adapter remembers, so
// that a test reaches the bound in a few hundred turns.
func (a *Adapter) SetCaps(msgs, askers int) {
	a.msgMu.Lock()
	defer a.msgMu.Unlock()
	a.msgs.max, a.asker.max = msgs, askers
}

// Sizes are how many entries the adapter's per-message and per-thread maps
// hold: messages, askers, open prompts, pacing times of the editor.
func (a *Adapter) Sizes() (msgs, askers, prompts, editLast int) {
	a.msgMu.Lock()
	msgs, askers, prompts = a.msgs.len(), a.asker.len(), len(a.prompts)
	a.msgMu.Unlock()
	return msgs, askers, prompts, a.edit.lastLen() + a.status.lastLen()
}
