package slack

import (
	"context"
	"fmt"
	"regexp"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
)

// userID is a Slack user id as a mention may carry it (U… or W…, upper
// case letters and digits): nothing else ever goes between <@ and >.
var userID = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)

// Notify implements adapters.Notifier: the notice is posted in the thread
// with a live mention of user in front (<@U…>), so that Slack notifies
// them. The text itself goes through the notice's rendering, which leaves
// no mention in it live; the one mention is built here from a checked id.
func (a *Adapter) Notify(ctx context.Context, t adapters.ThreadRef, user adapters.User, text string) (adapters.MessageRef, error) {
	if !userID.MatchString(user.ID) {
		return adapters.MessageRef{}, fmt.Errorf("slack notify: %q is not a Slack user id", user.ID)
	}
	a.flushThread(ctx, t)
	ping := "<@" + user.ID + "> "
	parts := a.compose(adapters.Message{Kind: adapters.KindNotice, Text: text}, uploadNone)
	parts[0].text = ping + parts[0].text
	parts[0].blocks[0] = sectionWith(ping, parts[0].blocks[0])
	p := &posted{channel: t.Channel, thread: t.Thread}
	if err := a.show(ctx, p, parts); err != nil {
		return adapters.MessageRef{}, err
	}
	return a.newRef(t, p), nil
}

// sectionWith is the notice's section block b with prefix (mrkdwn) in
// front of its text.
func sectionWith(prefix string, b slack.Block) slack.Block {
	if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil {
		return section(prefix + s.Text.Text)
	}
	return b
}
