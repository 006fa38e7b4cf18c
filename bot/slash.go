package bot

import (
	"slices"
	"strings"

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
// CLI would make of it (slashes.repo, claudeproc.RepoCommand), anyone who may
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
