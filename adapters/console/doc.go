// Package console is the terminal adapter, the embedded default (cmd runs
// it when no platform is configured): each line
// typed is a message in the current thread ("main" until `/thread <name>`
// switches), and everything the bot posts is printed as lines prefixed
// with the thread's name. It needs no terminal: stdin may be a pipe, so
// conversations can be scripted.
//
// What it promises the person at the terminal:
//   - Input lines of any length up to Options.MaxLine are taken whole; a
//     longer one is refused, visibly, and the lines after it are read as
//     usual (input.go).
//   - Nothing printed can drive the terminal: control, format and bidi
//     characters and invalid UTF-8 show as escapes, whatever their source
//     (escape.go).
//   - Claude's text shows as it is written, not when it is complete
//     (render.go).
//
// # Files
//
// console.go: Options, Adapter, Run (lines in); commands.go: the lines
// the console takes itself (`/thread <name>`), one table that parses them
// and lists them for help (adapters.Commander);
// input.go: the bounded line reader; render.go: posts and edits, text as
// it streams; tools.go: tool lines; escape.go: every control or format
// character as an escape; prompts.go: approvals and questions, decided by
// typed replies; files.go: files posted as their lines, and a bounded
// per-thread history for ReadThread; notify.go: a notification; term.go:
// whether the terminal echoes input; conn.go: its link (up while the
// operator's input is read).
package console
