// Package threadtest is a fake of the kernel's face (package thread) for
// testing an extension without a bot: a Thread that records what the part
// said, audited and asked for, a Store of canned records, and Step, which
// plays the worker's loop (the posted messages to Receive, then Watch).
// Use it inside testing/synctest: a part's timers then run on the bubble's
// clock, and Step after time.Sleep and synctest.Wait sees what fired.
//
// Files: threadtest.go (Thread, Step), store.go (Store).
package threadtest
