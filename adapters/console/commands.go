package console

import (
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// ownCommand is a line the console takes itself, before the bot: its
// word, followed by a space or the end.
type ownCommand struct {
	adapters.Command
	word string
	// testHook: only with Options.TestHooks, and not listed.
	testHook bool
	// run takes the rest of the line; it returns who says what to the
	// bot, or false when the line was all.
	run func(a *Adapter, rest string) (adapters.User, string, bool)
}

// ownCommands are what handleLine parses and Commands lists.
var ownCommands = []ownCommand{
	{Command: adapters.Command{Usage: "/thread [<name>]", Help: "at the console: show the current thread, or switch to the thread of that name (a new one starts)"},
		word: "/thread", run: func(a *Adapter, rest string) (adapters.User, string, bool) {
			a.switchThread(rest)
			return adapters.User{}, "", false
		}},
	{Command: adapters.Command{Usage: "/as <user-id> <text>", Help: "tests only: type as another user"},
		word: "/as", testHook: true, run: func(a *Adapter, rest string) (adapters.User, string, bool) {
			id, msg, _ := strings.Cut(rest, " ")
			msg = strings.TrimSpace(msg)
			return adapters.User{ID: id, Name: id}, msg, msg != ""
		}},
}

// Commands implements adapters.Commander: `/thread` (the test hooks are
// not listed).
func (a *Adapter) Commands() []adapters.Command {
	var out []adapters.Command
	for _, c := range ownCommands {
		if !c.testHook {
			out = append(out, c.Command)
		}
	}
	return out
}

// ownCommand runs text if it is one of ownCommands; it returns who says
// what to the bot, or false when nothing is left to say.
func (a *Adapter) ownCommand(text string) (adapters.User, string, bool) {
	for _, c := range ownCommands {
		rest, ok := strings.CutPrefix(text, c.word)
		if !ok || rest != "" && rest[0] != ' ' || c.testHook && !a.testHooks {
			continue
		}
		return c.run(a, strings.TrimSpace(rest))
	}
	return a.user, text, true
}

// switchThread is `/thread [name]`: show the current thread, or switch.
func (a *Adapter) switchThread(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case name == "":
		a.printf(a.current, "* current thread: %s", a.current)
	case strings.ContainsAny(name, " /"):
		a.printf(a.current, "* a thread name is one word without '/'")
	case !visibleName(name):
		a.printf(a.current, "* a thread name is made of visible characters only")
	default:
		a.current = name
		a.printf(name, "* switched to thread %s", name)
	}
	_ = a.flush()
}
