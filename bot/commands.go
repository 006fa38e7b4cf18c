package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// command is one word of the chat surface. A message whose first word is
// a command word is a command: when the rest does not fit, the usage goes
// back and nothing reaches Claude (to ask Claude, start the message with
// another word). The table both dispatches commands and makes `help`.
type command struct {
	name string
	who  access
	// usage are the command's forms; help shows them all (people who may
	// not use a forAdmins command's changing forms see its bare name).
	usage []string
	help  string
	// min and max say how many words may follow (max -1: any); valid,
	// when set, says whether they fit.
	min, max int
	valid    func(args []string) bool
	// reread, when set, makes the arguments again from the whole text.
	reread func(text string, args []string) []string
	run    func(w *worker, ctx context.Context, ev adapters.Event, args []string)
	// line, set instead of run, takes the rest of the line as it is: the
	// command is its word followed by a space or the end, and parses the
	// rest itself.
	line func(w *worker, ctx context.Context, ev adapters.Event, rest string)
}

// access says who may run a command's forms.
type access int

const (
	// forAnyone: every allowed user.
	forAnyone access = iota
	// forStarter: the forms that change the thread (any with arguments,
	// or every form of a command that takes none) are for the thread's
	// starter and admins; checked before the command runs.
	forStarter
	// forAdmins: the forms that change the channel are for admins; the
	// command checks, and tells others so.
	forAdmins
	// forCreator: changes to a schedule are for its creator and admins;
	// the command checks.
	forCreator
)

// scheduleForms are the forms of `schedule`.
var scheduleForms = []string{`schedule add "<cron spec>" <prompt>`, "schedule list", "schedule runs|run|pause|resume|rm <id>"}

var commands []command

func init() {
	commands = []command{
		{name: "help", usage: []string{"help"}, help: "list the commands", run: (*worker).cmdHelp},
		{name: "status", usage: []string{"status"}, help: "this thread's session: state, model, mode, queue, cost; live sessions overall", run: (*worker).cmdStatus},
		{name: "stop", who: forStarter, usage: []string{"stop"}, help: "interrupt the running turn and drop queued messages", run: (*worker).cmdStop},
		{name: "new", who: forStarter, usage: []string{"new"}, help: "end this thread's session; the next message starts a fresh one", run: (*worker).cmdNew},
		{name: "mode", who: forStarter, usage: []string{"mode <default|acceptEdits|plan>"}, help: "switch the permission mode", max: 1, run: (*worker).cmdMode},
		{name: "model", who: forStarter, usage: []string{"model <name>"}, help: "switch the model (`model default` resets it)", max: 1, run: (*worker).cmdModel},
		{name: "cost", usage: []string{"cost"}, help: "usage and cost of this thread, and of the channel today", run: (*worker).cmdCost},
		{name: "cwd", who: forAdmins, usage: []string{"cwd [path]"}, help: "show, or (admins) set, the channel's working directory", max: 1, run: (*worker).cmdCwd},
		{name: "repo", who: forAdmins, usage: []string{"repo [<path or clone URL>|none]"}, help: "show, or (admins) bind, the channel's git repository: each thread then works in a worktree on a branch of its own", max: 1, run: (*worker).cmdRepo},
		{name: "diff", usage: []string{"diff"}, help: "the whole change of this thread's branch, as a file", run: (*worker).cmdDiff},
		{name: "commit", who: forStarter, usage: []string{"commit [message]"}, help: "commit this thread's worktree to its branch", line: (*worker).cmdCommit},
		{name: "push", who: forStarter, usage: []string{"push"}, help: "push this thread's branch to the remote", run: (*worker).cmdPush},
		{name: "rules", who: forAdmins, usage: []string{"rules | rules add <allow|deny> <Tool>[(<pattern>)] | rules rm <id>"}, help: "the channel's permission rules (changes: admins)",
			max: -1, valid: validRulesArgs, reread: rulesArgs, run: (*worker).cmdRules},
		{name: "schedule", who: forCreator, usage: scheduleForms, help: "recurring prompts posting into this channel", line: (*worker).cmdSchedule},
	}
}

// findCommand is the command text starts with, and its arguments.
func findCommand(text string) (*command, []string) {
	fields := strings.Fields(text)
	for i := range commands {
		c := &commands[i]
		if c.line != nil {
			if rest, ok := cutWord(text, c.name); ok {
				return c, []string{rest}
			}
			continue
		}
		if len(fields) > 0 && strings.ToLower(fields[0]) == c.name {
			return c, fields[1:]
		}
	}
	return nil, nil
}

// isCommandText: text is one of the bot's commands (runCommand takes it).
func isCommandText(text string) bool {
	c, _ := findCommand(text)
	return c != nil
}

// runCommand runs text as a command if its first word is one; a command
// that does not parse gets its usage back. It reports whether text was a
// command.
func (w *worker) runCommand(ctx context.Context, ev adapters.Event, text string) bool {
	c, args := findCommand(text)
	if c == nil {
		return false
	}
	if c.line != nil {
		c.line(w, ctx, ev, args[0])
		return true
	}
	if len(args) < c.min || (c.max >= 0 && len(args) > c.max) || (c.valid != nil && !c.valid(args)) {
		w.reply(ctx, fmt.Sprintf("Usage: `%s`. (Commands take the whole message; to ask Claude, begin with another word.)", c.usage[0]))
		return true
	}
	if c.who == forStarter && (len(args) > 0 || c.max == 0) && !w.mayChange(ev.User.ID) {
		w.refuseChange(ctx, ev.User, "use `"+c.name+"` in this thread")
		return true
	}
	if c.reread != nil {
		args = c.reread(text, args)
	}
	w.log.Info("command", "name", c.name, "user", ev.User.ID)
	c.run(w, ctx, ev, args)
	return true
}

func (w *worker) cmdHelp(ctx context.Context, ev adapters.Event, _ []string) {
	w.reply(ctx, helpText(w.isAdmin(ev.User.ID)))
}

// helpText lists the commands, for an admin or not.
func helpText(admin bool) string {
	var b strings.Builder
	b.WriteString("Commands (a message that starts with any other word is a prompt for Claude):\n")
	for _, c := range commands {
		usage := strings.Join(c.usage, "` · `")
		if c.who == forAdmins && !admin {
			usage = c.name
		}
		fmt.Fprintf(&b, "• `%s` — %s\n", usage, c.help)
	}
	b.WriteString("When Claude asks for approval, reply `allow`, `allow thread`, `allow folder`, `allow always` (admins) or `deny [reason]`; with several prompts open, name one: `allow 2`, `deny 2 [reason]`, `#2 <answer>`. Answer questions with the option number(s) or your own words. A thread's starter and admins may decide, stop it, and change its mode and model; everyone else may talk in it.")
	return b.String()
}
