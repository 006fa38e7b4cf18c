package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// The command table: one row per word of the chat surface
// (thread.Command). A message whose first word is a command word is a
// command: when the rest does not fit, the usage goes back and nothing
// reaches Claude (to ask Claude, start the message with another word). The
// table both dispatches commands and makes `help`; the kernel's rows come
// first, and each extension part's rows go after the row they name.

// scheduleForms are the forms of `schedule`.
var scheduleForms = []string{`schedule add "<cron spec>" <prompt>`, "schedule list", "schedule runs|run|pause|resume|rm <id>"}

// commandTable is the thread's table: the kernel's rows and its parts'.
func (w *worker) commandTable() []thread.Command {
	rows := []thread.Command{
		{Name: "help", Usage: []string{"help"}, Help: "list the commands", Run: w.cmdHelp},
		{Name: "status", Usage: []string{"status"}, Help: "this thread's session: state, model, mode, queue, cost; live sessions overall", Run: w.cmdStatus},
		{Name: "stop", Who: thread.Starter, Usage: []string{"stop"}, Help: "interrupt the running turn and drop queued messages", Run: w.cmdStop},
		{Name: "new", Who: thread.Starter, Usage: []string{"new"}, Help: "end this thread's session; the next message starts a fresh one", Run: w.cmdNew},
		{Name: "mode", Who: thread.Starter, Usage: []string{"mode <default|acceptEdits|plan>"}, Help: "switch the permission mode", Max: 1, Run: w.cmdMode},
		{Name: "model", Who: thread.Starter, Usage: []string{"model <name>"}, Help: "switch the model (`model default` resets it)", Max: 1, Run: w.cmdModel},
		{Name: "cost", Usage: []string{"cost"}, Help: "usage and cost of this thread, and of the channel today", Run: w.cmdCost},
		{Name: "cwd", Who: thread.Admins, Usage: []string{"cwd [path]"}, Help: "show, or (admins) set, the channel's working directory", Max: 1, Run: w.cmdCwd},
		{Name: "repo", Who: thread.Admins, Usage: []string{"repo [<path or clone URL>|none]"}, Help: "show, or (admins) bind, the channel's git repository: each thread then works in a worktree on a branch of its own", Max: 1, Run: w.cmdRepo},
		{Name: "diff", Usage: []string{"diff"}, Help: "the whole change of this thread's branch, as a file", Run: w.cmdDiff},
		{Name: "commit", Who: thread.Starter, Usage: []string{"commit [message]"}, Help: "commit this thread's worktree to its branch", Line: w.cmdCommit},
		{Name: "push", Who: thread.Starter, Usage: []string{"push"}, Help: "push this thread's branch to the remote", Run: w.cmdPush},
		{Name: "rules", Who: thread.Admins, Usage: []string{"rules | rules add <allow|deny> <Tool>[(<pattern>)] | rules rm <id>"}, Help: "the channel's permission rules (changes: admins)",
			Max: -1, Valid: validRulesArgs, Reread: rulesArgs, Run: w.cmdRules},
		{Name: "schedule", Who: thread.Creator, Usage: scheduleForms, Help: "recurring prompts posting into this channel", Line: w.cmdSchedule},
	}
	for _, block := range w.parts.commands() {
		rows = insertRows(rows, block)
	}
	return rows
}

// insertRows puts block after the row its first row names (After), or at
// the end.
func insertRows(rows, block []thread.Command) []thread.Command {
	if len(block) == 0 {
		return rows
	}
	at := len(rows)
	if i := slices.IndexFunc(rows, func(c thread.Command) bool { return c.Name == block[0].After }); i >= 0 {
		at = i + 1
	}
	return slices.Insert(rows, at, block...)
}

// findCommand is the command text starts with, and its arguments.
func findCommand(table []thread.Command, text string) (*thread.Command, []string) {
	fields := strings.Fields(text)
	for i := range table {
		c := &table[i]
		if c.Line != nil {
			if rest, ok := cutWord(text, c.Name); ok {
				return c, []string{rest}
			}
			continue
		}
		if len(fields) > 0 && strings.ToLower(fields[0]) == c.Name {
			return c, fields[1:]
		}
	}
	return nil, nil
}

// isCommandText: text is one of the thread's commands (runCommand takes it).
func (w *worker) isCommandText(text string) bool {
	c, _ := findCommand(w.table, text)
	return c != nil
}

// runCommand runs text as a command if its first word is one; a command
// that does not parse gets its usage back. It reports whether text was a
// command.
func (w *worker) runCommand(ctx context.Context, ev adapters.Event, text string) bool {
	c, args := findCommand(w.table, text)
	if c == nil {
		return false
	}
	if c.Line != nil {
		c.Line(ctx, ev, args[0])
		return true
	}
	if len(args) < c.Min || (c.Max >= 0 && len(args) > c.Max) || (c.Valid != nil && !c.Valid(args)) {
		w.reply(ctx, fmt.Sprintf("Usage: `%s`. (Commands take the whole message; to ask Claude, begin with another word.)", c.Usage[0]))
		return true
	}
	if c.Who == thread.Starter && (len(args) > 0 || c.Max == 0) && !w.mayChange(ev.User.ID) {
		w.refuseChange(ctx, ev.User, "use `"+c.Name+"` in this thread")
		return true
	}
	if c.Reread != nil {
		args = c.Reread(text, args)
	}
	w.log.Info("command", "name", c.Name, "user", ev.User.ID)
	c.Run(ctx, ev, args)
	return true
}

func (w *worker) cmdHelp(ctx context.Context, ev adapters.Event, _ []string) {
	w.reply(ctx, helpText(w.table, w.isAdmin(ev.User.ID)))
}

// helpText lists the commands of table, for an admin or not.
func helpText(table []thread.Command, admin bool) string {
	var b strings.Builder
	b.WriteString("Commands (a message that starts with any other word is a prompt for Claude):\n")
	for _, c := range table {
		usage := strings.Join(c.Usage, "` · `")
		if c.Who == thread.Admins && !admin {
			usage = c.Name
		}
		fmt.Fprintf(&b, "• `%s` — %s\n", usage, c.Help)
	}
	b.WriteString("When Claude asks for approval, reply `allow`, `allow thread`, `allow folder`, `allow always` (admins) or `deny [reason]`; with several prompts open, name one: `allow 2`, `deny 2 [reason]`, `#2 <answer>`. Answer questions with the option number(s) or your own words. A thread's starter and admins may decide, stop it, and change its mode and model; everyone else may talk in it.")
	return b.String()
}
