// Package adapters is the port between the bot and a chat platform: the
// neutral event and message types and the small Adapter interface that
// adapters/slack, adapters/matrix and adapters/console implement. Platform
// code lives in those subpackages; policy (who may do what) lives in bot.
//
// # Files
//
//   - event.go: Event, an envelope (thread, user, and the Incoming message
//     or the Click it carries); typed ChoiceID; File (described by the
//     adapter, opened by the bot); Event.Unverified for an event the
//     platform cannot vouch came from its sender's own device.
//   - thread.go: ThreadRef, ThreadKey and MessageRef: their format and
//     parse here only.
//   - adapters.go: the Adapter interface, whose methods state their
//     contracts, and the optional Immediate, Statuser, Opener, Teller,
//     Commander.
//   - message.go, prompt.go: messages (text, tool lines) and prompts
//     (approvals, questions, their choices).
//   - files.go: files posted (FilePoster) and a thread read back
//     (ThreadReader); notify.go: Notifier; link.go: Linker (a thread's
//     permalink, for a pull request's description).
//   - conn.go: ConnReporter, the adapter's link as its own connection loop
//     reports it, kept by a ConnTracker.
//   - observe.go: APIObserver, told of each platform request.
//   - deliver.go: ErrLoggedOnce, a failed deliver whose cause the bot has
//     logged once for many events (the storage failing), which adapters
//     log at debug (DeliverLevel).
//   - text.go: Visible, for untrusted text.
package adapters
