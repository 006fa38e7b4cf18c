// Package triggers lets events start work: the operator's triggers (a
// YAML file, CLAUDEOPS_TRIGGERS_FILE), each an endpoint POST
// /triggers/<name> on the bot's HTTP listener that, for an event that
// passes its checks, starts an unattended run in a new thread of its
// channel (through a Runner that cmd connects: the scheduled extension's
// run machinery, so a trigger run is held like a scheduled run).
//
// A request is checked in this order, each answered at once, counted
// (in memory, stored by Flush: a flood writes nothing per request) and
// costing no model call: the body's size (413 over 1 MiB),
// the signature or token (401: Gitea's X-Gitea-Signature, GitHub's
// X-Hub-Signature-256, a generic trigger's bearer token; all compared in
// constant time), the delivery id (X-Gitea-Delivery, X-GitHub-Delivery,
// X-Delivery-Id: one seen before is answered 200 "duplicate"), the
// trigger's filters (200 "ignored"), the event's repository (a forge
// trigger lists the repositories it is for: another is 200 "ignored",
// "repository not bound"), the trigger's rate (at most N accepted an
// hour, counted in the store: 429). An accepted event is answered 202 and
// runs in the background; its end (thread, cost, result) is recorded.
//
// The event's data reaches Claude as data: the prompt's first line names
// the trigger (the bot writes it, as it does a person's "[from …]" line),
// and every string of the event a template shows comes out as one
// «quoted» line, never a line of its own, so it can neither forge the
// speaker line nor close the quotation (prompt.go). The sender of an
// event is nobody in the chat: it decides no approval (the run's starter
// is "trigger:<name>"; the channel's unattended policy applies).
//
// A review trigger (review: true, review.go) starts nothing: a comment or
// review on a pull request the bot opened is posted, through Reviews
// (connected by cmd to the store, the forge's Self and bot/reviews),
// into the thread that opened it (after the same checks and the rate),
// without a model call; any other pull request's, and the bot's own
// comments, are "ignored".
//
// # Files
//
// config.go: the file, read with every problem and its line. verify.go:
// the signatures and the token. filter.go: which events a trigger takes.
// prompt.go: the template and the marking of outside data. handler.go:
// the endpoint and its checks in order (the rate counted by the store,
// StartTriggerRun, in the statement that records the run). review.go: the
// review triggers' events, routed to their threads.
package triggers
