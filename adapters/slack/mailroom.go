package slack

import (
	"time"

	"github.com/claudeops/claudeops/adapters/outbox"
)

// mailroom is embedded in Adapter under an unexported name: its methods
// (Post, Edit, Ask, UpdatePrompt, SetStatus, PostFile, ...) are the
// adapter's.
type mailroom = outbox.Mailroom

// direct is the adapter's own calls, which wait on Slack (its round trips,
// the limiter, a 429's Retry-After): what the mailroom carries, in each
// thread's order.
type direct Adapter

// closeDrain bounds how long Close keeps making what the bot queued.
const closeDrain = 30 * time.Second
