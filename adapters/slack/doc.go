// Package slack is the Slack adapter: a mention starts (or continues) a
// thread-bound session, replies in that thread continue it, DMs are threads
// too, and `/claude <command>` runs chat commands. Events arrive over Socket
// Mode (SLACK_APP_TOKEN) and/or the HTTP Events API (SLACK_SIGNING_SECRET,
// served by HTTPHandler); both may run at once.
//
// Rendering follows Slack's documented limits: Markdown goes out as
// markdown blocks (Slack renders it) with mention syntax made inert, long
// text is split without losing a character, and every Web API call goes
// through one per-method budget with Retry-After honoured. Edits are
// coalesced per message: the latest content always lands, intermediate
// ones may be skipped.
//
// # Files
//
//   - slack.go: Config (its env tags, read by cmd), Adapter, New, Run
//     (Socket Mode), the events it takes; conn.go: its link's state.
//   - http.go: the HTTP Events API at /slack/events (events,
//     interactivity, slash commands), signed requests only.
//   - inbound.go: the one filter live events and catch-up go through, to
//     the bot's neutral event. catchup.go and catchup_read.go: on each
//     connect, what was posted while the bot was away, read back
//     (conversations.replies and history), through CatchUpState (kept in
//     the store by cmd); seen.go: what was seen live, for it.
//   - slash.go: `/claude`: the bot is asked for a thread
//     (adapters.Incoming.OpenThread), whose root is posted only once the
//     sender is accepted; a refusal goes through the command's
//     response_url; nothing is posted in a channel without a thread.
//   - mailroom.go: the adapter's calls queue in adapters/outbox's
//     mailroom (embedded), which makes them in each thread's order with
//     direct's, the calls that wait on Slack.
//   - render.go: posts (link previews off on every post; a post counts
//     as a send for the editor's pacing) and what is remembered of them;
//     edits.go: coalesced edits through the outbox editor (a tool line an
//     earlier run posted is taken on by its ts; a text's final state
//     held briefly by the editor, outbox.Editor.Hold); footer.go: the
//     turn's footer rides in the held text's message (one call fewer per
//     turn); stream.go: Claude's text streamed;
//     tools.go: tool lines, a long input or output uploaded; notify.go: a
//     notification.
//   - prompts.go and promptview.go: approvals and questions as Block Kit,
//     their clicks.
//   - limiter.go: one rate budget per Web API method (a token bucket,
//     golang.org/x/time/rate), Retry-After honoured, one call in flight per
//     budget; observe.go: each call told to the APIObserver.
//   - files.go: attachments downloaded only from Slack's file origin;
//     sendfile.go: files posted (files upload v2, a 100 MiB cap);
//     readthread.go: a thread read back (conversations.replies).
//   - text.go: lengths in runes.
package slack
