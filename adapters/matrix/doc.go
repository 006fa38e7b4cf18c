// Package matrix is the Matrix adapter: a mention of the bot in a room
// starts a session bound to a thread (m.thread) rooted at that message;
// every message in that thread continues it. Replies are m.notice events
// with Markdown rendered to sanitized HTML and m.mentions always empty; Claude's text streams by editing one
// message (m.replace); approvals are reactions (✅ 🧵 ♾️ ❌) the bot
// pre-adds, questions are polls (MSC3381) plus keycap reactions, and typed
// replies work everywhere.
//
// The sync position is persisted only once every event of a sync response
// has been handed to the bot (see cursor), so a crash replays a batch
// rather than losing it; the bot's dedupe by event id makes the replay
// harmless. History from before the bot's first sync or before it joined a
// room is never acted on.
//
// Encrypted rooms need the goolm build tag (pure-Go Olm); the crypto state
// then lives in a SQLite file beside the bot's database. Built without the
// tag, the bot says in an encrypted room that it cannot read it.
//
// # Files
//
//   - matrix.go: Config (its env tags, read by cmd), Adapter, New, the
//     login, Run; conn.go: its link's state; state.go: what it keeps
//     between runs (State: the login, the sync position), which cmd keeps
//     in the store.
//   - sync.go: the sync's events to the bot (an m.room.message with the
//     bot in its m.mentions, or naming it where an older client sent no
//     m.mentions, starts an m.thread session); cursor.go: the sync position, saved only once
//     a whole batch is delivered.
//   - crypto_goolm.go, crypto_nogoolm.go: encrypted rooms with -tags goolm
//     (the crypto store beside the database), and without it the room told
//     it cannot be read; trust.go: what did not arrive encrypted from a
//     session its sender verified is marked (Event.Unverified).
//   - mailroom.go: the adapter's calls queue in adapters/outbox's
//     mailroom (embedded), which makes them in each thread's order with
//     direct's, the calls that wait on the homeserver.
//   - post.go: m.notice posts and m.replace edits through the outbox
//     editor, a run of tool lines in one status event (revive.go: a tool
//     line's ref names its event and line, so that the next run can end
//     it, reading the event's latest edit back; a text's final edit held
//     briefly, outbox.Editor.Hold); footer.go: the turn's footer as the
//     last paragraph of that held edit (one event fewer); render.go: Markdown to HTML; sanitize.go: formatted_body
//     through an allowlist sanitizer; typing.go: the typing notice as
//     status; notify.go: a notification.
//   - prompts.go and promptview.go: approvals as reactions the bot
//     pre-adds, questions as polls (MSC3381) with keycap reactions.
//   - files.go: attachments and long tool text uploaded; sendfile.go: files
//     posted within the homeserver's m.upload.size; readthread.go: a thread
//     read back (its relations, decrypted, each message at its latest
//     edit).
//   - observe.go: each request told to the APIObserver.
package matrix
