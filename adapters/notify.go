package adapters

import "context"

// Notifier is optional: adapters that can post a notice that notifies one
// person, a live mention (Slack `<@U…>`, Matrix m.mentions.user_ids), for
// what someone must act on while nobody may be watching the thread: a
// scheduled run's request waiting for its creator. The adapter adds the
// mention of user itself, from the user's id; text is the bot's own
// Markdown and is made safe as any notice's, so that no mention written in
// it becomes live. Adapters without it get a plain notice naming the
// person (nobody is notified).
type Notifier interface {
	Notify(ctx context.Context, t ThreadRef, user User, text string) (MessageRef, error)
}
