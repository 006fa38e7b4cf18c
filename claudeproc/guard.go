package claudeproc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Guard holds the launch settings that leave to the host (can_use_tool)
// every tool decision the permission mode does not settle by its meaning.
// With a Guard, Args always adds:
//
//   - --permission-mode (default "default"): some CLI versions otherwise
//     start in an automatic mode that runs tools unasked; only "default"
//     and "plan" are accepted (the CLI's acceptEdits runs shell writes
//     unasked, and auto, dontAsk and bypassPermissions decide alone);
//   - --restricted: the CLI reads no settings file (the user's, which a
//     command could rewrite, nor the repository's), so no hook, permission
//     rule, environment, helper command, MCP server, plugin or memory
//     planted in the session's home or working directory takes effect; it
//     opens no cross-session messaging socket, and confines the file tools
//     to the working directory;
//   - --setting-sources "": the same for settings, should a CLI read them
//     despite --restricted;
//   - --add-dir with the working directory itself, and
//     CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1 in the settings' env:
//     the repository's instructions (CLAUDE.md, .claude/CLAUDE.md, the
//     files they import with @path, .claude/rules/*.md) reach the model
//     as on a developer's laptop, the same text in the same place (the
//     first user message's system-reminder), while its settings stay
//     unread. --restricted alone, with or without --setting-sources
//     project, loads none of them. The CLI itself skips an instruction
//     file or import that is a symlink out of the directory, or a path
//     outside it, and loads no nested CLAUDE.md of a subdirectory later
//     (repo_realcli_test.go holds each; docs/SECURITY.md, "What a
//     repository contributes", has the table); and, read by Start
//     rather than the CLI, the repository's subagents (--agents,
//     repoagents.go);
//   - --tools: only the tools Tools offers; every other one (scheduling,
//     messaging other sessions, worktrees of the CLI's own, …) is off;
//     Skill only with the skills Start built of the repository and the
//     operator's plugins (reposkills.go, operatorplugins.go);
//   - --strict-mcp-config: no MCP server but the host's own starts;
//   - --settings: the CLI's automatic mode off (disableAutoMode: a launch
//     in auto falls back to default and set_permission_mode auto is
//     refused) and not used for plan mode (useAutoModeDuringPlan: plan
//     would otherwise let its classifier refuse Bash calls instead of
//     asking; either key alone stops that), bypassPermissions disabled
//     (disableBypassPermissionsMode: a launch in it falls back to default),
//     DenyRules as permissions.deny, so that the CLI refuses them
//     itself, behind the host's own rules, and disableSkillShellExecution
//     (a skill's !`command` line stays text) and disableBundledSkills (the
//     CLI's own skills are unknown to the Skill tool). All measured on
//     2.1.330.
type Guard struct {
	// DenyRules are rules in the CLI's syntax ("Bash(rm:*)", "Edit(//abs/**)").
	DenyRules []string
	// AskRules, as permissions.ask, make the CLI ask the host about calls
	// it would otherwise run unasked: "Bash" sends every Bash call to
	// can_use_tool, read-only ones (ls, git status, cat) included.
	AskRules []string
}

// repoInstructionsEnv makes the CLI read the instruction files of its
// --add-dir directories.
const repoInstructionsEnv = "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD"

// guardModes are the permission modes a guarded process may run in.
var guardModes = map[string]bool{"default": true, "plan": true}

// Settings is the settings object the Guard passes with --settings and
// apply_flag_settings.
func (g Guard) Settings() map[string]any {
	deny := g.DenyRules
	if deny == nil {
		deny = []string{}
	}
	perms := map[string]any{
		"disableBypassPermissionsMode": "disable",
		"deny":                         deny,
	}
	if len(g.AskRules) > 0 {
		perms["ask"] = g.AskRules
	}
	return map[string]any{
		// The instructions of the --add-dir directory, which is the
		// working directory: see Guard.
		"env":                   map[string]string{repoInstructionsEnv: "1"},
		"disableAutoMode":       "disable",
		"useAutoModeDuringPlan": false,
		"permissions":           perms,
		// A skill's !`command` lines stay text, and the CLI's own skills
		// are unknown to the Skill tool (measured: "Unknown skill").
		"disableSkillShellExecution": true,
		"disableBundledSkills":       true,
	}
}

// args are the guard's flags for a session in mode whose working
// directory is dir ("": the current one, whose instructions then stay
// unread).
func (g Guard) args(mode, dir string, skills bool) []string {
	if mode == "" {
		mode = "default"
	}
	tools := OfferedTools()
	if skills {
		// Only with the skills Start built (reposkills.go), whose calls
		// the process decides itself.
		tools = append(tools, "Skill")
	}
	b, _ := json.Marshal(g.Settings()) // strings and bools only: cannot fail
	args := []string{
		"--permission-mode", mode, "--restricted", "--setting-sources", "",
		"--tools", strings.Join(tools, ","), "--strict-mcp-config", "--settings", string(b),
	}
	if dir != "" {
		args = append(args, "--add-dir", dir)
	}
	return args
}

func (o *Options) checkGuard() error {
	if o.PermissionMode == "" {
		return nil
	}
	return checkGuardMode(o.Guard, o.PermissionMode)
}

func checkGuardMode(g *Guard, mode string) error {
	if g == nil || guardModes[mode] {
		return nil
	}
	return fmt.Errorf("permission mode %q would let Claude Code decide tool calls itself: a guarded session runs in default or plan", mode)
}

// ApplyFlagSettings hands the live session g's settings
// (apply_flag_settings); they take effect from the next tool call. Each
// call replaces what the previous one applied: a deny rule left out is
// withdrawn. Rules given at launch (Options.Guard) stay for the life of the
// process whatever is applied later: withdrawing one of those takes a
// restart. (Measured on 2.1.330.)
func (p *Process) ApplyFlagSettings(ctx context.Context, g Guard) error {
	if _, err := p.request(ctx, "apply_flag_settings", map[string]any{"settings": g.Settings()}); err != nil {
		return fmt.Errorf("apply settings: %w", err)
	}
	return nil
}
