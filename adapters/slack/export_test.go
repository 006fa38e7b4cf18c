package slack

import (
	"context"

	"github.com/slack-go/slack/slackevents"
)

// EditNow applies an edit at once, bypassing the editor's coalescing, so
// that a test decides exactly which versions of a text reach Slack.
var EditNow = (*Adapter).editNow

// SetCaps lowers how many messages and threads the adapter remembers, so
// that a test reaches the bound in a few hundred turns.
func (a *Adapter) SetCaps(msgs, askers int) {
	a.msgs.SetCap(msgs)
	a.asker.SetCap(askers)
	a.threads.SetCap(askers)
	a.prompts.SetCap(askers)
}

// Sizes are how many entries the adapter's per-message and per-thread maps
// hold: messages, askers, open prompts, pacing times of the editor.
func (a *Adapter) Sizes() (msgs, askers, prompts, editLast int) {
	return a.msgs.Len(), a.asker.Len(), a.prompts.Len(), a.edit.Tracked() + a.status.Tracked()
}

// Mention hands the adapter user's mention of the bot in the thread rooted
// at ts as Slack's Events API would, without the Socket Mode round trip.
func (a *Adapter) Mention(ctx context.Context, channel, ts, user string) error {
	<-a.ready
	return a.onEventsAPI(ctx, slackevents.EventsAPIEvent{
		Type: slackevents.CallbackEvent,
		InnerEvent: slackevents.EventsAPIInnerEvent{Data: &slackevents.AppMentionEvent{
			User: user, Channel: channel, TimeStamp: ts, Text: "hello",
		}},
	})
}

// Retained is how many entries each of the adapter's maps holds.
func (a *Adapter) Retained() map[string]int {
	return map[string]int{
		"msgs": a.msgs.Len(), "askers": a.asker.Len(), "prompts": a.prompts.Len(), "threads": a.threads.Len(),
		"edits": a.edit.Tracked(), "statuses": a.status.Tracked(), "limiter": a.lim.sizes(),
	}
}

// Idle reports whether no edit or status is pending or in flight.
func (a *Adapter) Idle() bool { return a.edit.Pending() == 0 && a.status.Pending() == 0 }

// Direct is the adapter's own calls, which wait on the platform, without
// the mailroom in front: a test of what one call makes of the platform
// (and of the ref it gets) uses them. The mailroom's order and coalescing
// are tested in adapters/outbox, and with the bot through the harness.
func (a *Adapter) Direct() *direct { return (*direct)(a) }
