// Package fakeslack is a fake Slack workspace for tests: the Web API, Socket
// Mode and signed HTTP delivery (Events API, interactivity, slash commands),
// built from Slack's real payload shapes and limits (its API reference, and
// the payloads recorded in testdata/fixtures) and from what slack-go v0.35.0
// actually sends.
//
// Point slack-go at it with
//
//	api := slack.New(srv.Opts.BotToken, slack.OptionAPIURL(srv.URL+"/api/"),
//		slack.OptionAppLevelToken(srv.Opts.AppToken))
//	sm := socketmode.New(api)
//
// and drive it as the people in the workspace would: Post, Reply, DM,
// EditMessage, DeleteMessage, React, Click, Select, Check, Slash (and other
// apps: BotPost). An app that is away misses what Slack gives up on
// (GiveUp, Options.GiveUpAfter; SetOffline keeps its socket out) and reads
// it back with conversations.history and conversations.replies (history.go);
// Redeliver is Slack's late retry of an event. Inspect what
// they see with Thread, Messages, Ephemerals, Status and what the app did with
// Calls, Envelopes and Violations (payloads Slack would reject, calls made
// inside a Retry-After window, late or missing acks, posts with link
// previews on, ...). Message.LiveMentions is what a message shows that
// Slack would turn into a mention or a notification (a stream's pieces
// concatenated); Options.ForbidMentions makes any of it a Violation the
// moment a bot write leaves it. ReplayHTTP sends a captured signed
// delivery again, byte for byte.
//
// Everything a test needs is on *Server; the server shuts down at the test's
// cleanup. Methods are safe for concurrent use.
//
// # Wire behaviour
//
// Web API: /api/<method>, form, multipart or JSON bodies; the token from
// "Authorization: Bearer" or a "token" form field (slack-go sends the bot
// token as a form field for most methods, and the header only for GETs,
// JSON posts and uploads). Answers are HTTP 200 {"ok":…} except 429s and
// scripted Faults. Bot methods need BotToken, apps.connections.open needs
// AppToken (the other one: not_allowed_token_type). Message text and blocks
// are validated with Slack's documented limits (the Max* constants); blocks are
// stored with a block_id on every block (dropped on markdown blocks), an
// action_id on every interactive element, emoji/verbatim defaults on text
// objects.
//
// Socket Mode: apps.connections.open hands out a single-use ws:// URL on this
// server; a connection gets hello, then envelopes round-robin over the open
// connections (queued while there are none), WebSocket pings every
// PingInterval. Acks are tracked per envelope_id (Envelopes).
//
// # Modelling choices where Slack's behaviour is not pinned down
//
//   - chat.update/postEphemeral answer msg_too_long past MaxUpdateText (4,000,
//     the chat.update reference); markdown_text past 12,000 is msg_too_long.
//   - msg_blocks_too_long past MaxBlocksTotalText characters of block text.
//   - Validation messages other than the length/count ones ("duplicate
//     block_id: x", "unsupported block type: alert", ...) follow Slack's
//     "[ERROR] … [json-pointer:…]" form but their wording is ours.
//   - Without Options.Streaming the stream methods answer feature_not_enabled.
//   - chat.update without blocks keeps the old blocks, as Slack does.
//   - A bot's chat.postMessage without unfurl_links=false and
//     unfurl_media=false is a Violation (link previews of whatever URL the
//     text holds); the other posting methods do not take these arguments.
//   - Bot echoes: a started stream echoes as a message, a stopped one as
//     message_changed; the bot's own reactions produce no events.
//   - HTTP-mode event retries are immediate (Slack waits 1 and 5 minutes).
//
// # Files
//
// fakeslack.go: Server, Options, Start; webapi.go: the Web API's
// dispatch and Violations; params.go: a call's arguments; blocks.go and
// blockutil.go: Block Kit validated with Slack's limits; chat.go,
// messages.go: posting and editing; streams.go: the streaming methods;
// mentions.go: what Slack would turn into a mention or a notification;
// files.go: files; history.go: conversations.replies and history, paged
// as Slack pages them; others.go: the other methods; ratelimit.go: the
// rate-limit tiers; hold.go: a gate on a method; socket.go: Socket Mode;
// httpmode.go: signed HTTP delivery; events.go: events as Slack sends
// them; interact.go: interactivity; responseurl.go: response_url;
// outage.go: an app that is away (events given up, redelivered); actions.go:
// the people's actions; types.go: what a test inspects; store.go: ids and
// timestamps.
package fakeslack
