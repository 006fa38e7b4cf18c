package approvals

import (
	"encoding/json"
	"strings"
)

// Call is one tool call to decide, with what the caller knows beyond the
// request itself.
type Call struct {
	ChannelKey string
	ThreadKey  string
	Tool       string
	Input      json.RawMessage
	// Cwd is the session's working directory, absolute.
	Cwd string
	// Resolved is the path a file tool touches with symlinks resolved (the
	// caller does the I/O), "" when unknown or not a file tool. An allow
	// rule must match both the path as written and this one, so that a
	// link inside a granted folder does not carry a grant elsewhere.
	Resolved string
	// Own are the bot's own files and directories (database, its WAL and
	// SHM, crypto store, keys): no allow rule ever lets a tool touch them.
	Own []string
	// CLIDirs are the CLI's configuration directories where they are not
	// a ".claude" directory (CLAUDE_CONFIG_DIR): no allow rule lets a file
	// tool write there, nor a command name them.
	CLIDirs []string
	// Home is the session's home directory, "" when unknown: "~" and
	// $HOME in a command expand to it.
	Home string
	// Resolve returns an absolute path with its symlinks resolved (the
	// caller does the I/O; for a path that does not exist yet, its longest
	// existing prefix), or "" when it cannot. Used on the words of a
	// command, so that a link in the working tree does not carry a rule
	// into a protected place. nil: words are read as written.
	Resolve func(abs string) string
}

// writeTools change the file they name.
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// protectedDirs and protectedFiles configure Claude Code, git, the shell
// or the tools it runs, or the bot: a write there changes what runs next
// (hooks, MCP servers, settings, aliases, instructions), so only a person
// may allow it, one call at a time.
var (
	protectedDirs  = []string{".claude", ".git"}
	protectedFiles = append([]string{"CLAUDE.md", "CLAUDE.local.md", ".claude.json"}, startupFiles...)
)

// Protected reports whether no rule or grant may allow c:
//
//   - a write (Write, Edit, MultiEdit, NotebookEdit) to a path with a
//     ".claude" or ".git" segment, below ".config/git", named like one of
//     Claude Code's instruction and settings files or a startup file
//     (startupFiles; compared case-insensitively, as some file systems
//     do), or in c.CLIDirs; any file tool call on the bot's own files.
//     Both the path as written and c.Resolved are checked. An unreadable
//     path on a write tool is protected too.
//   - a command (Bash, Monitor) any of whose words names such a place,
//     the bot's own files or c.CLIDirs, for reading or writing: see
//     commandProtected.
func Protected(c Call) bool {
	if isCommandTool(c.Tool) {
		return commandProtected(c)
	}
	if !isPathTool(c.Tool) {
		return false
	}
	p, ok := toolPath(c.Tool, c.Input, c.Cwd)
	if !ok {
		return writeTools[c.Tool]
	}
	for _, name := range []string{p, c.Resolved} {
		if name == "" {
			continue
		}
		if writeTools[c.Tool] && (protectedName(name) || within(name, c.CLIDirs)) {
			return true
		}
		if within(name, c.Own) {
			return true
		}
	}
	return false
}

// within reports whether name is one of dirs or lies below one.
func within(name string, dirs []string) bool {
	for _, d := range dirs {
		if _, in := inside(name, d); d != "" && in {
			return true
		}
	}
	return false
}

func protectedName(p string) bool {
	segs := splitPath(p)
	for _, s := range segs {
		for _, d := range protectedDirs {
			if strings.EqualFold(s, d) {
				return true
			}
		}
	}
	if len(segs) == 0 {
		return false
	}
	for i := 0; i+1 < len(segs); i++ {
		if strings.EqualFold(segs[i], ".config") && strings.EqualFold(segs[i+1], "git") {
			return true
		}
	}
	base := segs[len(segs)-1]
	for _, f := range protectedFiles {
		if strings.EqualFold(base, f) {
			return true
		}
	}
	return false
}

// EvaluateCall decides c from rules as Evaluate does, and more strictly on
// allow: a Protected call matches no allow rule, and for a file tool with
// c.Resolved set an allow rule must match the resolved path as well. Deny
// rules match the path as written or the resolved one.
func EvaluateCall(rules []Rule, c Call) (Effect, *Rule) {
	resolvedInput := resolvedInput(c)
	var allow *Rule
	protected := Protected(c)
	for i := range rules {
		r := rules[i]
		if (r.Effect != EffectAllow && r.Effect != EffectDeny) || !r.appliesTo(c.ChannelKey, c.ThreadKey) {
			continue
		}
		if r.Effect == EffectDeny {
			if r.Matches(c.Tool, c.Input, c.Cwd) || (resolvedInput != nil && r.Matches(c.Tool, resolvedInput, c.Cwd)) {
				return EffectDeny, &r
			}
			continue
		}
		if protected || allow != nil || !r.Matches(c.Tool, c.Input, c.Cwd) {
			continue
		}
		if resolvedInput != nil && !r.Matches(c.Tool, resolvedInput, c.Cwd) {
			continue
		}
		allow = &r
	}
	if allow != nil {
		return EffectAllow, allow
	}
	return "", nil
}

// resolvedInput is c's input with its path replaced by c.Resolved, or nil
// when there is nothing else to check.
func resolvedInput(c Call) json.RawMessage {
	if c.Resolved == "" || !isPathTool(c.Tool) {
		return nil
	}
	if p, ok := toolPath(c.Tool, c.Input, c.Cwd); ok && p == c.Resolved {
		return nil
	}
	key := "path"
	if fileTools[c.Tool] {
		key = "file_path"
	}
	b, err := json.Marshal(map[string]string{key: c.Resolved})
	if err != nil {
		return nil
	}
	return b
}
