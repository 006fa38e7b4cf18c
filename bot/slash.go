package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/claudeproc"
)

// Claude Code's slash commands from chat. A message "/name args" goes to
// the CLI as it is (no sender line before it, or the CLI would not see a
// command) when the CLI itself lists name (or an alias of it) among the
// session's commands: its initialize response, asked once per process.
// Who may send which:
//
//   - the bot's own: /model is the bot's `model`, /clear (/reset, /new) its
//     `new`, with their rules, so that the thread's record follows;
//   - refused outright, before any process starts: what would change the
//     session's permissions, directories, settings, credentials, MCP
//     servers, plugins or hooks, or run a program of the CLI's choosing
//     (slashRefused), whoever asks, a repository's command of that name too;
//   - the thread's starter and admins: what changes the conversation
//     (compact, rename, effort, fast);
//   - anyone who may talk: what only shows (context, cost) or is a prompt
//     (a repository's or a skill's command, the CLI's reviews);
//   - any other command of the CLI's own: refused (a CLI that adds one
//     offers it from chat only once it is classified here).
//
// A custom command of the repository (.claude/commands), which the guarded
// CLI does not load, the bot reads and expands itself into the message the
// CLI would make of it (repoSlash, claudeproc.RepoCommand), anyone who may
// talk may send it; it comes before a CLI command it shares only an alias
// with (a repository's /review, not code-review), after one of the CLI's
// own names.
//
// A name neither lists is said in the thread, not sent: the CLI
// would hand it to the model as a paid prompt. Text whose first word holds
// another slash ("/etc/passwd is odd") is no command, and goes as any text.

// slashRule is who may send a slash command of the CLI's own.
type slashRule int

const (
	slashOpen    slashRule = iota + 1 // anyone who may talk in the thread
	slashStarter                      // the thread's starter or an admin
)

// slashBuiltin classifies the CLI's own commands (canonical names, as
// 2.1.309 and 2.1.330 list them). Not listed: refused.
var slashBuiltin = map[string]slashRule{
	"context": slashOpen, "usage": slashOpen, "recap": slashOpen, "insights": slashOpen,
	"list-agents": slashOpen, "code-review": slashOpen, "simplify": slashOpen,
	"security-review": slashOpen, "verify": slashOpen, "init": slashOpen,
	"claude-api": slashOpen, "dataviz": slashOpen, "deep-research": slashOpen,
	"team-onboarding": slashOpen,
	"compact":         slashStarter, "rename": slashStarter, "effort": slashStarter, "fast": slashStarter,
}

// slashBot are the slash commands that are the bot's own commands.
var slashBot = map[string]string{"model": "model", "clear": "new", "reset": "new", "new": "new"}

// slashRefused are refused from chat whoever sends them, and why.
var slashRefused = func() map[string]string {
	m := map[string]string{}
	for why, names := range map[string][]string{
		"it would change the session's permissions": {"permissions", "allowed-tools", "fewer-permission-prompts", "auto-mode-setup", "sandbox"},
		"it would change the session's directories": {"add-dir", "cwd", "worktree"},
		"it would change the session's settings":    {"config", "settings", "update-config", "hooks", "statusline", "output-style", "output-styles", "memory", "autocompact", "privacy-settings", "model-config", "vim", "theme", "keybindings", "terminal-setup", "ide", "debug", "color", "focus"},
		"it would change the session's MCP servers": {"mcp"},
		"it would change the session's plugins":     {"plugin", "plugins", "marketplace", "reload-plugins", "reload-skills", "plugin-authoring", "run-skill-generator", "agents"},
		"it would change the session's credentials": {"login", "logout", "install-github-app", "install-slack-app", "upgrade", "remote-control", "teleport"},
		"it would run or schedule work by itself":   {"loop", "proactive", "batch", "goal", "run", "workflow-launch-exec", "__remote-workflow", "workflow-authoring", "heapdump", "doctor", "checkup", "export", "resume", "exit", "quit", "bashes", "tasks", "todos", "bug", "feedback"},
	} {
		for _, n := range names {
			m[n] = why
		}
	}
	return m
}()

// parseSlash splits "/name args": name is letters, digits, '-', '_', '.'
// and ':' (a plugin's "plugin:command"). ok is false for any other text.
func parseSlash(text string) (name, args string, ok bool) {
	rest, found := strings.CutPrefix(text, "/")
	if !found {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], strings.TrimSpace(name[i:]+" "+args)
	}
	if name == "" {
		return "", "", false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return "", "", false
		}
	}
	return name, strings.TrimSpace(args), true
}

// slashVerdict is what becomes of a slash command the CLI lists.
type slashVerdict struct {
	// canonical is the CLI's name for it ("usage" for /cost).
	canonical string
	rule      slashRule // 0: refused
	known     bool      // the CLI lists it
	alias     bool      // by an alias, not its name
}

// judgeSlash looks name up among the CLI's commands.
func judgeSlash(cmds []claudeproc.SlashCommand, name string) slashVerdict {
	// A name before an alias: a repository's /review is the command the
	// CLI runs, not code-review's alias.
	i := slices.IndexFunc(cmds, func(c claudeproc.SlashCommand) bool { return strings.EqualFold(c.Name, name) })
	alias := i < 0
	if alias {
		i = slices.IndexFunc(cmds, func(c claudeproc.SlashCommand) bool {
			return slices.ContainsFunc(c.Aliases, func(a string) bool { return strings.EqualFold(a, name) })
		})
	}
	if i < 0 {
		return slashVerdict{}
	}
	c := cmds[i]
	v := slashVerdict{canonical: c.Name, known: true, alias: alias}
	switch {
	case slashRefused[strings.ToLower(c.Name)] != "":
	case !c.Builtin:
		v.rule = slashOpen // a repository's or a skill's prompt
	default:
		v.rule = slashBuiltin[c.Name]
	}
	return v
}

// commandLister is a process that says which slash commands its session
// has (*claudeproc.Process: the initialize request, which changes nothing
// when sent without a system prompt).
type commandLister interface {
	Initialize(ctx context.Context, req claudeproc.InitializeRequest) (*claudeproc.InitializeResponse, error)
}

// commands are the live process's slash commands, asked once per process.
func (s *session) commands(ctx context.Context) ([]claudeproc.SlashCommand, error) {
	if s.cmdsOf == s.proc && s.proc != nil {
		return s.cmds, nil
	}
	cl, ok := s.proc.(commandLister)
	if !ok {
		return nil, fmt.Errorf("this Claude Code process does not list its commands")
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := cl.Initialize(cctx, claudeproc.InitializeRequest{})
	if err != nil {
		return nil, fmt.Errorf("ask Claude Code for its commands: %w", err)
	}
	s.cmds, s.cmdsOf = r.Commands, s.proc
	return s.cmds, nil
}

// slashBefore handles what is decided of a slash command before any
// process starts: the bot's own, and the refused. It reports whether the
// message was handled (else it goes on to Claude Code, promptIn.slash).
func (w *worker) slashBefore(ctx context.Context, ev adapters.Event, name, args string) bool {
	lname := strings.ToLower(name)
	if cmd, ok := slashBot[lname]; ok {
		return w.runCommand(ctx, ev, strings.TrimSpace(cmd+" "+args))
	}
	if why := slashRefused[lname]; why != "" {
		w.refuseSlash(ctx, ev.User, name, why)
		return true
	}
	if strings.Contains(args, "[from ") {
		// It goes without the bot's sender line: none may ride in it.
		w.refuseSlash(ctx, ev.User, name, "its text holds a line like the bot's sender line (`[from …]`)")
		return true
	}
	if w.view.running() || len(w.queued) > 0 {
		// The CLI merges the messages it queues into one turn: a command
		// among them would be text. It waits here for the turn's end.
		if w.heldSlash != nil {
			w.reply(ctx, fmt.Sprintf("`/%s` was not taken: another slash command already waits for this turn to end.", name))
			return true
		}
		// Not settled while it waits: a restart meanwhile tells the thread
		// it was not taken up.
		w.heldSlash, w.handedOver = &ev, true
		w.reply(ctx, fmt.Sprintf("`/%s` runs once Claude has finished this turn (`stop` drops it).", name))
		return true
	}
	return false
}

// releaseSlash sends the slash command that waited for the turn to end,
// once nothing runs or is queued (onResult).
func (w *worker) releaseSlash(ctx context.Context) {
	if w.heldSlash == nil || w.view.running() || len(w.queued) > 0 || !w.sess.live() || w.sess.closing {
		return
	}
	ev := *w.heldSlash
	w.heldSlash, w.handedOver = nil, false
	w.onMessage(ctx, ev)
	if !w.handedOver {
		w.settle(ctx, keyOf(ev)) // refused or not sent: the thread was told
	}
}

// dropSlash drops the slash command that waited (stop, the session's
// end), telling the thread.
func (w *worker) dropSlash(ctx context.Context) {
	if w.heldSlash == nil {
		return
	}
	name, _, _ := parseSlash(strings.TrimSpace(w.heldSlash.Message.Text))
	w.reply(ctx, fmt.Sprintf("`/%s` was dropped: the turn it waited for was stopped or its session ended.", name))
	w.settle(ctx, keyOf(*w.heldSlash))
	w.heldSlash = nil
}

// slashAllowed decides a slash command on the live process's list and
// the repository's commands: an unknown one is said, a refused one
// refused, one for the starter checked. A repository's command comes back
// as the message's content (repoSlash); nil for one the CLI runs.
func (w *worker) slashAllowed(ctx context.Context, p promptIn) ([]claudeproc.ContentBlock, bool) {
	name, args, _ := parseSlash(p.Text)
	cmds, err := w.sess.commands(ctx)
	if err != nil {
		w.log.Warn("slash commands", "err", err)
		w.notice(ctx, fmt.Sprintf("`/%s` was not sent: %v.", name, err), true)
		return nil, false
	}
	v := judgeSlash(cmds, name)
	if !v.known || v.alias {
		if blocks, handled := w.repoSlash(ctx, p.User, name, args); handled {
			return blocks, blocks != nil
		}
	}
	switch {
	case !v.known:
		w.audit(ctx, p.User.ID, "refused", "/"+name, "not a command of this Claude Code session", false)
		w.reply(ctx, fmt.Sprintf("`/%s` is not a command of Claude Code here; nothing was sent. (To send the text to Claude as it is, begin with another word.)", name))
		return nil, false
	case v.rule == 0:
		w.refuseSlash(ctx, p.User, name, "it is not offered from chat")
		return nil, false
	case v.rule == slashStarter && !w.mayChange(p.User.ID):
		w.refuseChange(ctx, p.User, "use `/"+name+"` in this thread")
		return nil, false
	}
	w.audit(ctx, p.User.ID, "slash", "/"+v.canonical, args, true)
	return nil, true
}

// repoSlash expands the repository's custom command name
// (.claude/commands), which a guarded CLI does not load, into the message
// the CLI would make of it (claudeproc.RepoCommand). handled is false
// when the repository has no such command; blocks is nil when it has one
// that could not be read (the thread was told).
func (w *worker) repoSlash(ctx context.Context, u adapters.User, name, args string) (blocks []claudeproc.ContentBlock, handled bool) {
	blocks, err := claudeproc.RepoCommand(w.cwd(ctx), name, args)
	switch {
	case errors.Is(err, claudeproc.ErrNoCommand):
		return nil, false
	case err != nil:
		w.log.Warn("repository command", "name", name, "err", err)
		w.audit(ctx, u.ID, "refused", "/"+name, err.Error(), false)
		w.reply(ctx, fmt.Sprintf("`/%s` of the repository could not be read (%v); nothing was sent.", name, err))
		return nil, true
	}
	w.audit(ctx, u.ID, "slash", "/"+name, args, true)
	return blocks, true
}

// refuseSlash tells that a slash command is refused, and audits it.
func (d deps) refuseSlash(ctx context.Context, u adapters.User, name, why string) {
	d.audit(ctx, u.ID, "refused", "/"+name, why, false)
	d.reply(ctx, fmt.Sprintf("`/%s` is not available from chat: %s. Nothing was sent to Claude.", name, why))
}
