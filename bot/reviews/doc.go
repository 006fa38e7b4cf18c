// Package reviews is the extension (package thread) that brings the review
// of a pull request the bot opened back to the thread that opened it: a
// comment or review made on the forge arrives (a review trigger, package
// triggers, connected by cmd: Deliver) and is shown in the thread as its
// author's, marked as outside text — the author is nobody in the chat,
// their text is shown and never obeyed — at no model call.
//
// What arrived waits, per thread, for `review`: the thread's starter or
// an admin (the kernel checks: thread.Starter) lets Claude address it,
// and Claude gets the waiting texts as outside data, each author's text
// in «…» on its own line (as a trigger's prompt quotes an event), sent as
// the person's message (thread.Thread.Send): the session resumes when it
// had ended, and a later `push` updates the pull request. A message that
// only begins with "review" ("review the diff") is Claude's.
//
// What waits is kept in memory (the forge keeps the comments; a restart
// forgets them, and the thread still shows them), at most MaxPending a
// thread (the oldest dropped).
//
// Files: reviews.go: the Extension, Deliver and what waits; part.go: the
// thread's side (what arrived shown, `review`).
package reviews
