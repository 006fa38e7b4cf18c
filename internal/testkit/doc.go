// Package testkit holds what the tests of several packages share, so that
// each is written once: a clock the test moves (Clock), waiting for a
// condition (WaitFor), output recorded as it comes with waits for a line
// or a match (Output), the check of a thread read back (CheckSaid), golden
// files (Golden) and the real CLI's environment against the fake model
// API (CLIEnv).
//
// Files: clock.go (Clock: standing or running, its timers fired by
// Advance, WaitTimers), wait.go (WaitFor, WaitForf, Until), output.go (Output:
// Lines, Expect, WaitMatch), said.go (CheckSaid), golden.go (Golden, and
// Update, the -update flag), env.go (CLIEnv).
//
// Tests only: no production package imports it. Its waits are bounded by
// what the caller names; Long is the bound for waits on the real CLI,
// which on a loaded machine takes seconds where it takes milliseconds on
// an idle one.
package testkit

import "time"

// Long bounds a wait for something the real CLI, a real homeserver or a
// process of the bot must do: far above what a loaded machine needs.
const Long = 90 * time.Second
