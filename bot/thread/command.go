package thread

import (
	"context"

	"github.com/claudeops/claudeops/adapters"
)

// Command is one row of the command table: one word of the chat surface.
// A message whose first word is a command word is a command: when the rest
// does not fit, its usage goes back and nothing reaches Claude. The table
// both dispatches commands and makes `help`; it is the bot's, one for all
// threads, made once from the kernel's rows and its extensions'
// (Commander).
type Command struct {
	Name string
	Who  Access
	// Usage are the command's forms; help shows them all (to those who
	// may not use an Admins command's changing forms, its bare name).
	Usage []string
	Help  string
	// Min and Max say how many words may follow (Max -1: any); Valid,
	// when set, says whether they fit.
	Min, Max int
	Valid    func(args []string) bool
	// Claims, when set, says whether a message with these arguments is
	// the command at all: one it does not claim goes to Claude as a
	// prompt. For a word people also begin sentences with ("set up CI",
	// "forget the old API"): only its own forms are taken.
	Claims func(args []string) bool
	// Reread, when set, makes the arguments again from the whole text.
	Reread func(text string, args []string) []string
	// Line: the command takes the rest of the line as it is, as its one
	// argument: it is its word followed by a space or the end, and parses
	// the rest itself.
	Line bool
	// Run runs the command on the thread's worker; part is what the
	// row's extension attached to that thread (Bind makes a Run of a
	// part's method).
	Run func(ctx context.Context, part any, ev adapters.Event, args []string)
	// After places the row, and the rows that follow it in the same
	// Commands, after the row of that name (at the end when none is).
	After string
}

// Bind makes a Command's Run of a method of the part type P:
// Run: Bind((*part).cmdRepo).
func Bind[P any](m func(P, context.Context, adapters.Event, []string)) func(context.Context, any, adapters.Event, []string) {
	return func(ctx context.Context, part any, ev adapters.Event, args []string) {
		m(part.(P), ctx, ev, args)
	}
}

// Commander is an Extension (not a part) with rows for the command table.
// Its Run methods are given the extension's part in the thread the command
// is for: an extension with commands attaches a part to every thread.
type Commander interface {
	Commands() []Command
}

// Access says who may run a command's forms.
type Access int

const (
	// Anyone: every allowed user.
	Anyone Access = iota
	// Starter: the forms that change the thread (any with arguments, or
	// every form of a command that takes none) are for the thread's
	// starter and admins; the kernel checks before the command runs.
	Starter
	// Admins: the forms that change the channel are for admins; the
	// command checks, and tells others so.
	Admins
	// Creator: changes to a schedule are for its creator and admins; the
	// command checks.
	Creator
	// Author: removing what someone added (a channel's fact) is for its
	// author and admins, unless the channel's settings say otherwise;
	// the command checks.
	Author
	// BotAdmins: the forms that change the channel are for the bot's
	// admins only, not the channel's (they widen what sessions reach:
	// a directory, a repository); the command checks.
	BotAdmins
)
