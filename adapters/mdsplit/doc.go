// Package mdsplit cuts a long Markdown (or Slack mrkdwn) text into parts
// that each fit a chat platform's size limit, without losing or repeating a
// character: code fences stay balanced (a code block cut in two is closed at
// the end of one part and reopened at the start of the next), and no cut
// falls inside a rune, an entity such as "&amp;", a <…> sequence or a CRLF.
//
// It is the one splitter of both chat adapters: adapters/slack uses it for
// section text and markdown blocks (on slackmd's ToMrkdwn and Neutralize
// output), adapters/matrix for message bodies. It knows nothing about either
// platform, so neither adapter imports the other's packages.
//
// Files: split.go (Split).
package mdsplit
