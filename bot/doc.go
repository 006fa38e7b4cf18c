// Package bot is the core of claudeops: it routes chat events to one worker
// per thread, keeps one Claude Code session per thread (start, resume, reap
// idle ones, cap live processes, queue follow-ups), turns a turn's events
// into platform-neutral messages, and runs the chat commands (stop, mode,
// model, new, status, schedule ...).
//
// It depends on adapters (the port), claudeproc, approvals and store, and on
// no concrete chat platform.
package bot
