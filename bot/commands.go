package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
)

// The command table: one row per word of the chat surface
// (thread.Command). A message whose first word is a command word is a
// command: when the rest does not fit, the usage goes back and nothing
// reaches Claude (to ask Claude, start the message with another word). The
// table both dispatches commands and makes `help`. It is the bot's, made
// once by New: the kernel's rows, and each extension's (thread.Commander)
// after the row they name.

// row is a command of the table and whose it is: the kernel's (owner -1)
// or the extension at that index of Config.Extensions, whose part in the
// thread runs it.
type row struct {
	thread.Command
	owner int
}

// kernelCommands are the kernel's rows, in the order `help` shows them.
var kernelCommands = []thread.Command{
	{Name: "help", Usage: []string{"help"}, Help: "list the commands", Run: thread.Bind((*worker).cmdHelp)},
	{Name: "status", Usage: []string{"status"}, Help: "this thread's session: state, model, mode, queue, cost; live sessions overall", Run: thread.Bind((*worker).cmdStatus)},
	{Name: "stop", Who: thread.Starter, Usage: []string{"stop"}, Help: "interrupt the running turn and drop queued messages", Run: thread.Bind((*worker).cmdStop)},
	{Name: "new", Who: thread.Starter, Usage: []string{"new"}, Help: "end this thread's session; the next message starts a fresh one", Run: thread.Bind((*worker).cmdNew)},
	{Name: "mode", Who: thread.Starter, Usage: []string{"mode <default|acceptEdits|plan>"}, Help: "switch the permission mode", Max: 1, Run: thread.Bind((*worker).cmdMode)},
	{Name: "model", Who: thread.Starter, Usage: []string{"model <name>"}, Help: "switch the model (`model default` resets it)", Max: 1, Run: thread.Bind((*worker).cmdModel)},
	{Name: "cost", Usage: []string{"cost"}, Help: "usage and cost of this thread, and of the channel today", Run: thread.Bind((*worker).cmdCost)},
	{Name: "cwd", Who: thread.BotAdmins, Usage: []string{"cwd [path]"}, Help: "show, or (bot admins) set, the channel's working directory", Max: 1, Run: thread.Bind((*worker).cmdCwd)},
	{Name: "rules", Who: thread.Admins, Usage: []string{"rules | rules add <allow|deny> <Tool>[(<pattern>)] | rules rm <id>"}, Help: "the channel's permission rules (changes: admins)",
		Max: -1, Valid: validRulesArgs, Reread: rulesArgs, Run: thread.Bind((*worker).cmdRules)},
}

// commandTable is the bot's table: the kernel's rows and its extensions'.
func commandTable(exts []thread.Extension) []row {
	var rows []row
	for _, c := range kernelCommands {
		rows = append(rows, row{c, -1})
	}
	for i, e := range exts {
		if c, ok := e.(thread.Commander); ok {
			rows = insertRows(rows, c.Commands(), i)
		}
	}
	return rows
}

// insertRows puts the rows of block, owner's, after the row its first row
// names (After), or at the end.
func insertRows(rows []row, block []thread.Command, owner int) []row {
	if len(block) == 0 {
		return rows
	}
	at := len(rows)
	if i := slices.IndexFunc(rows, func(r row) bool { return r.Name == block[0].After }); i >= 0 {
		at = i + 1
	}
	add := make([]row, len(block))
	for i, c := range block {
		add[i] = row{c, owner}
	}
	return slices.Insert(rows, at, add...)
}

// findCommand is the command text starts with, and its arguments.
func findCommand(table []row, text string) (*row, []string) {
	fields := strings.Fields(text)
	for i := range table {
		c := &table[i]
		var args []string
		switch {
		case c.Line:
			rest, ok := cutWord(text, c.Name)
			if !ok {
				continue
			}
			args = []string{rest}
		case len(fields) > 0 && strings.ToLower(fields[0]) == c.Name:
			args = fields[1:]
		default:
			continue
		}
		if c.Claims != nil && !c.Claims(args) {
			continue // a sentence that begins with the word: Claude's
		}
		return c, args
	}
	return nil, nil
}

// cutWord: text starts with word (any case) followed by a space or the end.
func cutWord(text, word string) (string, bool) {
	if len(text) < len(word) || !strings.EqualFold(text[:len(word)], word) {
		return "", false
	}
	rest := text[len(word):]
	if rest != "" && rest[0] != ' ' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// A one-word message that is a slip of the finger away from a command
// word ("stauts") is asked about, "did you mean `status`?", instead of
// going to Claude as a paid prompt (forTheBot); a word far from every
// command ("hello", "thanks", "yes") goes to Claude as before. A backslash
// before a message (escape) sends it to Claude as it is, whatever its
// first word.

// escape, before a message that would be taken as a command, a typed
// decision, a slash command or a near-command, sends the rest to Claude as
// a prompt (as `\ls` runs ls past a shell alias).
const escape = `\`

// escaped is text without its escape when the rest is something the bot
// would take for itself (table's commands, those near one the sender may
// run: nearCommand); ok false otherwise (a backslash that starts other
// text, `\d+ matches digits`, is the prompt's own).
func escaped(table []row, text string, mayChange bool) (string, bool) {
	rest, ok := strings.CutPrefix(text, escape)
	if !ok || rest == "" || unicode.IsSpace(rune(rest[0])) {
		return "", false
	}
	if c, _ := findCommand(table, rest); c != nil {
		return rest, true
	}
	if _, ok := parseTypedReply(rest); ok {
		return rest, true
	}
	if _, _, ok := parseSlash(rest); ok {
		return rest, true
	}
	return rest, len(nearCommand(table, rest, mayChange)) > 0
}

// typoAnswer is what a typo of the commands names gets.
func typoAnswer(names []string, text string) string {
	return fmt.Sprintf("Did you mean `%s`? Nothing was sent to Claude. To send “%s” to Claude as it is, begin with a backslash: `%s%s`.",
		strings.Join(names, "` or `"), text, escape, text)
}

// nearCommand are the names of the commands of table that word is a typo
// of (typoDistance within maxTypos), the closest, in the table's order,
// among those the sender may run in the thread (mayChange: they may
// change it); none when word is more than one word, a command itself, a
// word people send alone (sentWhole), or near none.
func nearCommand(table []row, word string, mayChange bool) []string {
	if strings.ContainsFunc(word, unicode.IsSpace) {
		return nil
	}
	if sentWhole[strings.ToLower(word)] {
		return nil
	}
	w := []rune(strings.ToLower(word))
	var best []string
	bestD := maxTypos(len(w)) // the farthest a typo may be, then the closest found
	for i := range table {
		r := &table[i]
		name := []rune(r.Name)
		// A command whose every form changes the thread (stop, new) is
		// the starter's and admins'; the others have a form for everyone.
		if !sameStart(w, name) || r.Who == thread.Starter && r.Max == 0 && !mayChange {
			continue
		}
		switch d := typoDistance(w, name); {
		case d == 0 || d > bestD:
		case d == bestD && best != nil:
			best = append(best, r.Name)
		default:
			best, bestD = []string{r.Name}, d
		}
	}
	return best
}

// runCommand runs text as a command if its first word is one; a command
// that does not parse gets its usage back. It reports whether text was a
// command.
func (w *worker) runCommand(ctx context.Context, ev adapters.Event, text string) bool {
	c, args := findCommand(w.b.commands, text)
	if c == nil {
		return false
	}
	var part any = w
	if c.owner >= 0 {
		part = w.parts[c.owner]
	}
	if c.Line {
		c.Run(ctx, part, ev, args)
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
	c.Run(ctx, part, ev, args)
	return true
}

// forTheBot takes text when it is the bot's: a command, a typed decision,
// a slash command the bot holds or refuses, a one-word typo of a command
// (answered "did you mean …?");
// it reports whether it was taken, and whether text is a slash command
// for Claude Code.
func (w *worker) forTheBot(ctx context.Context, ev adapters.Event, text string) (slash, taken bool) {
	if w.runCommand(ctx, ev, text) || w.typedReply(ctx, ev, text) {
		return false, true
	}
	// A slash command goes to Claude Code as it is (slash.go); with files
	// it is a prompt like any other.
	name, args, slash := parseSlash(text)
	slash = slash && len(ev.Message.Files) == 0
	if slash {
		step, cmd := w.slash.before(ctx, ev, name, args, w.view.running() || len(w.queued) > 0)
		if step == slashBotCommand {
			w.runCommand(ctx, ev, cmd)
		}
		w.handedOver = step == slashHeld // settled once it runs or is dropped
		return true, step != slashSend
	}
	if len(ev.Message.Files) > 0 {
		return false, false
	}
	// A one-word typo of a command is asked about, not spent (didyoumean.go).
	names := nearCommand(w.b.commands, text, w.mayChange(ev.User.ID))
	if len(names) == 0 {
		return false, false
	}
	w.log.Info("command typo", "word", text, "commands", names, "user", ev.User.ID)
	w.reply(ctx, typoAnswer(names, text))
	return false, true
}

func (w *worker) cmdHelp(ctx context.Context, ev adapters.Event, _ []string) {
	var own []adapters.Command
	if c, ok := w.b.adapter(w.ref.Platform).(adapters.Commander); ok {
		own = c.Commands()
	}
	w.reply(ctx, helpText(w.b.commands, own, w.isAdmin(ev.User.ID)))
}

// helpText lists the commands of table, for an admin or not, then own,
// those the thread's platform takes itself (the console's `/thread`).
func helpText(table []row, own []adapters.Command, admin bool) string {
	var b strings.Builder
	b.WriteString("Commands (a message that starts with any other word is a prompt for Claude):\n")
	for _, c := range table {
		usage := strings.Join(c.Usage, "` · `")
		if (c.Who == thread.Admins || c.Who == thread.BotAdmins) && !admin {
			usage = c.Name
		}
		fmt.Fprintf(&b, "• `%s` — %s\n", usage, c.Help)
	}
	for _, c := range own {
		fmt.Fprintf(&b, "• `%s` — %s\n", c.Usage, c.Help)
	}
	b.WriteString("When Claude asks for approval, reply `allow`, `allow thread`, `allow folder`, `allow always` (admins) or `deny [reason]`; with several prompts open, name one: `allow 2`, `deny 2 [reason]`, `#2 <answer>`. Answer questions with the option number(s) or your own words. A thread's starter and admins may decide, stop it, and change its mode and model; everyone else may talk in it.\n")
	b.WriteString("Claude Code's slash commands go to it as they are (`/context`, `/cost`, a repository's own): `/compact` is for the thread's starter and admins, `/model` and `/clear` are `model` and `new`, and those that would change permissions, settings or directories are refused.\n")
	b.WriteString("A one-word message a slip away from a command gets “did you mean …?” and is not sent; to send a command word, or such a word, to Claude as it is, begin with a backslash: `" + escape + "status`.")
	return b.String()
}
