package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/store"
)

// The commands about the channel: cwd and rules.

func (w *worker) cmdCwd(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		w.reply(ctx, "Working directory: "+w.cwd(ctx))
		return
	}
	// The bot admins', not the channel's: a directory on the bot's host
	// widens what sessions reach, as a repository does (settings.Repo).
	if !w.cfg.Scopes.IsBotAdmin(ev.User.ID) {
		w.audit(ctx, ev.User.ID, "refused", "cwd", args[0], false)
		w.tell(ctx, ev.User, "Only admins can change the working directory.")
		return
	}
	dir := args[0]
	if !filepath.IsAbs(dir) {
		base, _ := filepath.Abs(w.cfg.Workdir)
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
	if why := unfitWorkdir(w.cfg.ProtectedPaths, resolved); why != "" {
		w.audit(ctx, ev.User.ID, "refused", "cwd", resolved, false)
		w.reply(ctx, "Refused: "+dir+" "+why+". Choose a directory apart from the bot's state.")
		return
	}
	dir = resolved
	c, _, err := w.store.GetChannel(ctx, w.ref.ChannelKey())
	if err != nil {
		w.reply(ctx, "Could not read the channel's settings: "+err.Error())
		return
	}
	c.Key, c.Cwd, c.UpdatedBy, c.UpdatedAt = w.ref.ChannelKey(), dir, ev.User.ID, w.now()
	if err := w.store.SaveChannel(ctx, c); err != nil {
		w.reply(ctx, "Could not save: "+err.Error())
		return
	}
	w.audit(ctx, ev.User.ID, "cwd", dir, "", true)
	note := ""
	if w.sess.proc != nil {
		note = " Sessions started from now on use it; `new` restarts this one."
	}
	w.reply(ctx, "Working directory of this channel: "+dir+"."+note)
}

// unfitWorkdir says why the directory dir (absolute, symlinks resolved)
// may not be a working directory, or "": it is /, or it holds the bot's
// own state (protected, Config.ProtectedPaths) or lies inside it. A
// session works on its directory's whole tree.
func unfitWorkdir(protected []string, dir string) string {
	if dir == "/" {
		return "is the root of the file system"
	}
	for _, p := range protected {
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
			if appliesTo(r, w.ref) {
				lines = append(lines, ruleLine(r))
			}
		}
		if len(lines) == 0 {
			w.reply(ctx, "No permission rules apply here: Claude asks before every tool that needs approval.")
			return
		}
		w.reply(ctx, "Permission rules (deny wins):\n"+strings.Join(lines, "\n"))
		return
	}
	if !w.isAdmin(ev.User.ID) {
		w.audit(ctx, ev.User.ID, "refused", "rules", strings.Join(args, " "), false)
		w.tell(ctx, ev.User, "Only admins can change permission rules.")
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
		id, err := w.store.AddRule(ctx, store.Rule{Scope: "channel", ScopeKey: w.ref.ChannelKey(), Effect: effect, Tool: tool, Pattern: pattern, CreatedBy: ev.User.ID, CreatedAt: w.now()})
		if err != nil {
			w.reply(ctx, "Could not save the rule: "+err.Error())
			return
		}
		w.audit(ctx, ev.User.ID, "rules add", effect, args[2], true)
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
		r, here := w.ruleHere(ctx, id)
		if !here {
			w.reply(ctx, fmt.Sprintf("There is no rule %d here (`rules` lists them).", id))
			return
		}
		if r.Scope == approvals.ScopeGlobal && !w.cfg.Scopes.IsBotAdmin(ev.User.ID) {
			// A channel's admins keep their own channel's rules; a rule
			// of every channel stays the bot admins'.
			w.audit(ctx, ev.User.ID, "refused", "rules rm", args[1], false)
			w.tell(ctx, ev.User, fmt.Sprintf("Rule %d applies in every channel: only bot admins can remove it.", id))
			return
		}
		ok, err := w.store.DeleteRule(ctx, id)
		switch {
		case err != nil:
			w.reply(ctx, "Could not remove the rule: "+err.Error())
		case !ok:
			w.reply(ctx, fmt.Sprintf("There is no rule %d.", id))
		default:
			w.audit(ctx, ev.User.ID, "rules rm", args[1], "", true)
			w.b.rulesChanged(w.ref.ChannelKey())
			w.reply(ctx, fmt.Sprintf("Rule %d removed. (A session that started while it was in force keeps refusing it until it restarts: `new`, or after it idles.)", id))
		}
	}
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

// rulesArgs: "rules add <effect> <rule…>" keeps the rule whole, the rest
// of the line with its spaces.
func rulesArgs(text string, args []string) []string {
	if len(args) > 0 && args[0] == "add" {
		return rulesAddArgs(text)
	}
	return args
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

// appliesTo: the rule is global, or the thread ref's channel's, or its own.
func appliesTo(r approvals.Rule, ref adapters.ThreadRef) bool {
	return r.Scope == approvals.ScopeGlobal ||
		(r.Scope == approvals.ScopeChannel && r.ScopeKey == ref.ChannelKey()) ||
		(r.Scope == approvals.ScopeThread && r.ScopeKey == string(ref.Key()))
}

// ruleHere is rule id, if it applies in this thread.
func (w *worker) ruleHere(ctx context.Context, id int64) (approvals.Rule, bool) {
	rules, err := w.rules(ctx)
	if err != nil {
		return approvals.Rule{}, false
	}
	for _, r := range rules {
		if r.ID == id {
			return r, appliesTo(r, w.ref)
		}
	}
	return approvals.Rule{}, false
}
