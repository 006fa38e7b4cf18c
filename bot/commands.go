package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/store"
)

// command is one word of the chat surface. A message whose first word is
// a command word is a command: when the rest does not fit, the usage goes
// back and nothing reaches Claude (to ask Claude, start the message with
// another word).
type command struct {
	name  string
	usage string
	help  string
	admin bool // some forms need an admin
	// owner: changing forms are for the thread's starter and admins.
	owner bool
	// args says how many words may follow: min and max (-1: any).
	min, max int
	run      func(w *worker, ctx context.Context, ev adapters.Event, args []string)
}

var commands []command

func init() {
	commands = []command{
		{name: "help", usage: "help", help: "list the commands", run: (*worker).cmdHelp},
		{name: "status", usage: "status", help: "this thread's session: state, model, mode, queue, cost; live sessions overall", run: (*worker).cmdStatus},
		{name: "stop", usage: "stop", help: "interrupt the running turn and drop queued messages", owner: true, run: (*worker).cmdStop},
		{name: "new", usage: "new", help: "end this thread's session; the next message starts a fresh one", owner: true, run: (*worker).cmdNew},
		{name: "mode", usage: "mode <default|acceptEdits|plan>", help: "switch the permission mode", owner: true, max: 1, run: (*worker).cmdMode},
		{name: "model", usage: "model <name>", help: "switch the model (`model default` resets it)", owner: true, max: 1, run: (*worker).cmdModel},
		{name: "cost", usage: "cost", help: "usage and cost of this thread, and of the channel today", run: (*worker).cmdCost},
		{name: "cwd", usage: "cwd [path]", help: "show, or (admins) set, the channel's working directory", max: 1, admin: true, run: (*worker).cmdCwd},
		{name: "rules", usage: "rules | rules add <allow|deny> <Tool>[(<pattern>)] | rules rm <id>", help: "the channel's permission rules (changes: admins)", max: -1, admin: true, run: (*worker).cmdRules},
	}
}

// runCommand runs text as a command if its first word is one; a command
// that does not parse gets its usage back. It reports whether text was a
// command.
func (w *worker) runCommand(ctx context.Context, ev adapters.Event, text string) bool {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return false
	}
	name := strings.ToLower(fields[0])
	args := fields[1:]
	for _, c := range commands {
		if c.name != name {
			continue
		}
		if len(args) < c.min || (c.max >= 0 && len(args) > c.max) || (c.name == "rules" && !validRulesArgs(args)) {
			w.reply(ctx, fmt.Sprintf("Usage: `%s`. (Commands take the whole message; to ask Claude, begin with another word.)", c.usage))
			return true
		}
		if c.owner && (len(args) > 0 || c.max == 0) && !w.mayChange(ev.User.ID) {
			w.refuseChange(ctx, ev.User, "use `"+c.name+"` in this thread")
			return true
		}
		if c.name == "rules" && len(args) > 0 && args[0] == "add" {
			// The rule is the rest of the line, spaces and all.
			args = rulesAddArgs(text)
		}
		w.log.Info("command", "name", c.name, "user", ev.User.ID)
		c.run(w, ctx, ev, args)
		return true
	}
	return false
}

// validRulesArgs: "rules", "rules add <allow|deny> <rule…>", "rules rm <id>".
func validRulesArgs(args []string) bool {
	switch {
	case len(args) == 0:
		return true
	case args[0] == "add":
		return len(args) >= 3 && (strings.EqualFold(args[1], "allow") || strings.EqualFold(args[1], "deny"))
	case args[0] == "rm":
		return len(args) == 2
	}
	return false
}

// rulesAddArgs splits "rules add <effect> <rule…>" into add, the effect
// and the rest of the line as one argument.
func rulesAddArgs(text string) []string {
	rest := strings.TrimSpace(text)
	var words []string
	for range 3 {
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i < 0 {
			return append(words, rest)
		}
		words = append(words, rest[:i])
		rest = strings.TrimSpace(rest[i:])
	}
	return []string{words[1], strings.ToLower(words[2]), rest}
}

func (w *worker) reply(ctx context.Context, text string) { w.notice(ctx, text, false) }

func (w *worker) cmdHelp(ctx context.Context, ev adapters.Event, _ []string) {
	admin := w.b.isAdmin(ev.User.ID)
	var b strings.Builder
	b.WriteString("Commands (a message that starts with any other word is a prompt for Claude):\n")
	for _, c := range commands {
		usage := c.usage
		if c.admin && !admin {
			switch c.name {
			case "cwd":
				usage = "cwd"
			case "rules":
				usage = "rules"
			}
		}
		fmt.Fprintf(&b, "• `%s` — %s\n", usage, c.help)
	}
	b.WriteString("• `schedule add \"<cron spec>\" <prompt>` · `schedule list` · `schedule runs|run|pause|resume|rm <id>` — recurring prompts posting into this channel\n")
	b.WriteString("When Claude asks for approval, reply `allow`, `allow thread`, `allow folder`, `allow always` (admins) or `deny [reason]`; with several prompts open, name one: `allow 2`, `deny 2 [reason]`, `#2 <answer>`. Answer questions with the option number(s) or your own words. A thread's starter and admins may decide, stop it, and change its mode and model; everyone else may talk in it.")
	w.reply(ctx, b.String())
}

func (w *worker) cmdStatus(ctx context.Context, _ adapters.Event, _ []string) {
	state := "no session yet"
	switch {
	case w.turn != nil:
		state = fmt.Sprintf("running a turn (%s)", adapters.FormatDuration(w.b.now().Sub(w.turn.started)))
	case w.proc != nil:
		state = "idle, session live"
	case w.thread.SessionID != "":
		state = "idle, session stopped (resumes on your next message)"
	}
	model, mode := w.thread.Model, w.thread.Mode
	if model == "" {
		model = "default"
	}
	if mode == "" {
		mode = "default"
	}
	u, err := w.b.store.ThreadUsage(ctx, string(w.key))
	if err != nil {
		w.log.Error("thread usage", "err", err)
	}
	lines := []string{
		"State: " + state,
		"Model: " + model + " · Mode: " + mode,
		fmt.Sprintf("Queued messages: %d · Open approvals: %d", len(w.queued), len(w.b.reg.PendingFor(string(w.key)))),
		fmt.Sprintf("Cost so far: $%.4f over %d %s", u.CostUSD, u.Turns, plural(u.Turns, "turn", "turns")),
		fmt.Sprintf("Live sessions: %d of %d · threads waiting: %d", w.b.slots.live(), w.b.cfg.MaxSessions, w.b.slots.queued()),
	}
	if w.thread.SessionID != "" {
		lines = append(lines, "Session: "+w.thread.SessionID)
	}
	w.reply(ctx, strings.Join(lines, "\n"))
}

func (w *worker) cmdStop(ctx context.Context, ev adapters.Event, _ []string) {
	if w.proc == nil || (w.turn == nil && len(w.queued) == 0) {
		w.reply(ctx, "Nothing is running.")
		return
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := w.proc.Interrupt(ictx, true)
	if err != nil {
		w.log.Warn("interrupt", "err", err)
		w.reply(ctx, "Could not stop the turn: "+err.Error())
		return
	}
	// Pending approvals are cancelled by the CLI (control_cancel_request);
	// close any it did not name.
	for _, p := range w.b.reg.PendingFor(string(w.key)) {
		if q, ok := w.b.reg.Cancel(p.RequestID); ok {
			w.persistDecision(ctx, q.ID, store.Approval{State: string(approvals.StateCancelled), Reason: "stopped by " + ev.User.ID, DecidedAt: w.b.now()})
			if ps := w.prompts[q.ID]; ps != nil {
				w.closePrompt(ctx, ps, adapters.PromptCancelled, "Cancelled: stopped by "+ev.User.ID+".")
			}
			w.b.reg.Forget(q.ID)
		}
	}
	w.b.audit(ctx, w.key, ev.User.ID, "stop", "turn", "", true)
	msg := "Stopping."
	if n := len(res.Cancelled); n > 0 {
		msg = fmt.Sprintf("Stopping; %d queued %s dropped.", n, plural(n, "message", "messages"))
	}
	w.reply(ctx, msg)
}

func (w *worker) cmdNew(ctx context.Context, ev adapters.Event, _ []string) {
	w.stop("a new session was requested")
	w.thread.SessionID = ""
	w.thread.State = "new"
	w.saveThread(ctx)
	w.b.audit(ctx, w.key, ev.User.ID, "new", "session", "", true)
	w.reply(ctx, "Session ended. Your next message starts a fresh conversation.")
}

func (w *worker) cmdMode(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		m := w.thread.Mode
		if m == "" {
			m = "default"
		}
		w.reply(ctx, "Mode: "+m+" (one of "+strings.Join(validModes, ", ")+")")
		return
	}
	mode := args[0]
	if !validMode(mode) {
		w.reply(ctx, "Unknown mode "+mode+"; use one of "+strings.Join(validModes, ", ")+".")
		return
	}
	if w.proc != nil {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := w.proc.SetPermissionMode(cctx, cliMode(mode)); err != nil {
			w.reply(ctx, "Could not switch the mode: "+err.Error())
			return
		}
	}
	w.thread.Mode = mode
	w.saveThread(ctx)
	w.b.audit(ctx, w.key, ev.User.ID, "mode", mode, "", true)
	w.reply(ctx, "Mode: "+mode+".")
}

func (w *worker) cmdModel(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		m := w.thread.Model
		if m == "" {
			m = "default"
		}
		w.reply(ctx, "Model: "+m)
		return
	}
	model := args[0]
	got := model
	if w.proc != nil {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		var err error
		if got, err = w.proc.SetModel(cctx, model); err != nil {
			w.reply(ctx, "Could not switch the model: "+err.Error())
			return
		}
	}
	if model == "default" {
		w.thread.Model = ""
	} else {
		w.thread.Model = model
	}
	w.saveThread(ctx)
	w.b.audit(ctx, w.key, ev.User.ID, "model", model, "", true)
	w.reply(ctx, "Model: "+got+".")
}

func (w *worker) cmdCost(ctx context.Context, _ adapters.Event, _ []string) {
	u, err := w.b.store.ThreadUsage(ctx, string(w.key))
	if err != nil {
		w.reply(ctx, "Could not read usage: "+err.Error())
		return
	}
	now := w.b.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	c, err := w.b.store.ChannelUsageSince(ctx, w.ref.ChannelKey(), day)
	if err != nil {
		w.reply(ctx, "Could not read usage: "+err.Error())
		return
	}
	w.reply(ctx, fmt.Sprintf("This thread: $%.4f · %d %s · %d input / %d output tokens\nThis channel today (UTC): $%.4f · %d %s",
		u.CostUSD, u.Turns, plural(u.Turns, "turn", "turns"), u.InputTokens, u.OutputTokens,
		c.CostUSD, c.Turns, plural(c.Turns, "turn", "turns")))
}

func (w *worker) cmdCwd(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		w.reply(ctx, "Working directory: "+w.cwd(ctx))
		return
	}
	if !w.b.isAdmin(ev.User.ID) {
		w.b.audit(ctx, w.key, ev.User.ID, "refused", "cwd", args[0], false)
		w.b.tell(ctx, w.ref, ev.User, "Only admins can change the working directory.")
		return
	}
	dir := args[0]
	if !filepath.IsAbs(dir) {
		base, _ := filepath.Abs(w.b.cfg.Workdir)
		dir = filepath.Join(base, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		w.reply(ctx, "Not a directory: "+dir)
		return
	}
	// Kept resolved: a link changed later cannot move the channel.
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		w.reply(ctx, "Not a directory: "+dir)
		return
	}
	if why := w.b.unfitWorkdir(resolved); why != "" {
		w.b.audit(ctx, w.key, ev.User.ID, "refused", "cwd", resolved, false)
		w.reply(ctx, "Refused: "+dir+" "+why+". Choose a directory apart from the bot's state.")
		return
	}
	dir = resolved
	if err := w.b.store.SaveChannel(ctx, store.Channel{Key: w.ref.ChannelKey(), Cwd: dir, UpdatedBy: ev.User.ID, UpdatedAt: w.b.now()}); err != nil {
		w.reply(ctx, "Could not save: "+err.Error())
		return
	}
	w.b.audit(ctx, w.key, ev.User.ID, "cwd", dir, "", true)
	note := ""
	if w.proc != nil {
		note = " Sessions started from now on use it; `new` restarts this one."
	}
	w.reply(ctx, "Working directory of this channel: "+dir+"."+note)
}

// unfitWorkdir says why the directory dir (absolute, symlinks resolved)
// may not be a working directory, or "": it is /, or it holds the bot's
// own state (Config.ProtectedPaths) or lies inside it. A session works on
// its directory's whole tree.
func (b *Bot) unfitWorkdir(dir string) string {
	if dir == "/" {
		return "is the root of the file system"
	}
	for _, p := range b.cfg.ProtectedPaths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		for _, own := range []string{abs, resolveExisting(abs)} {
			if fspath.Within(own, dir) {
				return "holds the bot's own state (" + own + ")"
			}
			if fspath.Within(dir, own) {
				return "lies inside the bot's own state (" + own + ")"
			}
		}
	}
	return ""
}

func (w *worker) cmdRules(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		rules, err := w.rules(ctx)
		if err != nil {
			w.reply(ctx, "Could not read rules: "+err.Error())
			return
		}
		var lines []string
		for _, r := range rules {
			if w.appliesHere(r) {
				lines = append(lines, fmt.Sprintf("%d. %s %s (%s)", r.ID, r.Effect, r.Spec(), r.Scope))
			}
		}
		if len(lines) == 0 {
			w.reply(ctx, "No permission rules apply here: Claude asks before every tool that needs approval.")
			return
		}
		w.reply(ctx, "Permission rules (deny wins):\n"+strings.Join(lines, "\n"))
		return
	}
	if !w.b.isAdmin(ev.User.ID) {
		w.b.audit(ctx, w.key, ev.User.ID, "refused", "rules", strings.Join(args, " "), false)
		w.b.tell(ctx, w.ref, ev.User, "Only admins can change permission rules.")
		return
	}
	switch args[0] {
	case "add":
		effect := args[1]
		tool, pattern, err := approvals.ParseRule(args[2])
		if err != nil {
			w.reply(ctx, "Not a rule: "+err.Error())
			return
		}
		id, err := w.b.store.AddRule(ctx, store.Rule{Scope: "channel", ScopeKey: w.ref.ChannelKey(), Effect: effect, Tool: tool, Pattern: pattern, CreatedBy: ev.User.ID, CreatedAt: w.b.now()})
		if err != nil {
			w.reply(ctx, "Could not save the rule: "+err.Error())
			return
		}
		w.b.audit(ctx, w.key, ev.User.ID, "rules add", effect, args[2], true)
		if effect == "deny" {
			w.b.rulesChanged(w.ref.ChannelKey())
		}
		w.reply(ctx, fmt.Sprintf("Rule %d: %s %s in this channel.", id, effect, args[2]))
	case "rm":
		id, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			w.reply(ctx, "Usage: rules rm <id>")
			return
		}
		if !w.ruleAppliesHere(ctx, id) {
			w.reply(ctx, fmt.Sprintf("There is no rule %d here (`rules` lists them).", id))
			return
		}
		ok, err := w.b.store.DeleteRule(ctx, id)
		switch {
		case err != nil:
			w.reply(ctx, "Could not remove the rule: "+err.Error())
		case !ok:
			w.reply(ctx, fmt.Sprintf("There is no rule %d.", id))
		default:
			w.b.audit(ctx, w.key, ev.User.ID, "rules rm", args[1], "", true)
			w.b.rulesChanged(w.ref.ChannelKey())
			w.reply(ctx, fmt.Sprintf("Rule %d removed. (A session that started while it was in force keeps refusing it until it restarts: `new`, or after it idles.)", id))
		}
	}
}

// appliesHere: the rule is global, or this channel's, or this thread's.
func (w *worker) appliesHere(r approvals.Rule) bool {
	return r.Scope == approvals.ScopeGlobal ||
		(r.Scope == approvals.ScopeChannel && r.ScopeKey == w.ref.ChannelKey()) ||
		(r.Scope == approvals.ScopeThread && r.ScopeKey == string(w.key))
}

func (w *worker) ruleAppliesHere(ctx context.Context, id int64) bool {
	rules, err := w.rules(ctx)
	if err != nil {
		return false
	}
	for _, r := range rules {
		if r.ID == id {
			return w.appliesHere(r)
		}
	}
	return false
}
