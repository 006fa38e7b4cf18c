// Package slackmd turns Claude's Markdown into text Slack can show safely.
//
// Two entry points:
//
//   - ToMrkdwn renders CommonMark/GFM as Slack "mrkdwn" (section blocks,
//     the message `text` field, notifications). It walks goldmark's AST; it
//     never rewrites the source with regular expressions.
//   - Neutralize keeps standard Markdown (for the `markdown` block and the
//     `markdown_text` argument, which Slack renders itself) and only makes
//     Slack's mention and link syntax inert.
//
// Splitting a long text into parts that fit Slack's per-field limits (3,000
// for a section's text, 4,000 for an updated message's text, 12,000 for
// markdown_text / all markdown blocks of one payload) is not done here but
// by adapters/mdsplit, shared with the Matrix adapter: its Split takes the
// output of either function and cuts it without losing a character and
// without breaking code blocks, entities or links.
//
// # Why a zero-width space
//
// Slack has no escape for "@channel", "@here" or "@everyone": when a message
// is posted with link_names (or typed in the client, or when Slack's own
// Markdown renderer decides to resolve names) the bare word notifies the
// whole channel. Model output must never do that, whatever a prompt
// injection made the model write. Inserting U+200B ZERO WIDTH SPACE right
// after the "@" breaks the keyword for Slack's parser while the text still
// reads "@channel" to a human. The same trick ("<" + U+200B + "!here>") is
// used by Neutralize for Slack's angle-bracket syntax ("<!here>", "<@U…>",
// "<#C…>", "<!subteam^…>"), where HTML entities are not an option because
// standard Markdown would show them literally. ToMrkdwn does not need it for
// angle brackets: mrkdwn has real escapes (&amp; &lt; &gt;).
//
// The cost is an invisible character in the copied text; inside code this
// means a copied "@here" contains U+200B. That is accepted on purpose: it is
// rare and the alternative is a channel-wide notification.
//
// # Files
//
// mrkdwn.go: ToMrkdwn over goldmark's AST; inline.go and link.go: its
// inline parts and links; table.go: tables as text; escape.go:
// Neutralize, Settled and mrkdwn's escapes.
package slackmd
