package matrix

import (
	"context"
	"fmt"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// Notify implements adapters.Notifier: a notice in the thread that
// mentions user (m.mentions.user_ids, and a pill in front of the text),
// so that their client notifies them. The text is rendered as any
// notice's; only the one mention built here from the checked id is live.
func (a *Adapter) Notify(ctx context.Context, t adapters.ThreadRef, user adapters.User, text string) (adapters.MessageRef, error) {
	uid := id.UserID(user.ID)
	if _, _, err := uid.ParseAndValidateRelaxed(); err != nil {
		return adapters.MessageRef{}, fmt.Errorf("matrix notify: %q is not a Matrix user id: %w", user.ID, err)
	}
	a.closeStatus(t)
	c := content(text)
	html := c.FormattedBody
	if c.Format != event.FormatHTML {
		html = htmlEscape(c.Body)
	}
	pill := fmt.Sprintf(`<a href="%s">%s</a>`, htmlEscape(uid.URI().MatrixToURL()), htmlEscape(user.ID))
	c.Body = user.ID + ": " + c.Body
	c.Format, c.FormattedBody = event.FormatHTML, pill+": "+html
	c.Mentions = &event.Mentions{UserIDs: []id.UserID{uid}}
	evID, err := a.sendInThread(ctx, t, c)
	if err != nil {
		return adapters.MessageRef{}, fmt.Errorf("matrix notify %s: %w", user.ID, err)
	}
	return adapters.MessageRef{Thread: t, ID: evID.String()}, nil
}
