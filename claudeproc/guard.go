package claudeproc

import (
	"context"
	"encoding/json"
	"fmt"
)

// Guard holds the launch settings that leave to the host (can_use_tool)
// every tool decision the permission mode does not settle by its meaning.
// With a Guard, Args always adds:
//
//   - --permission-mode (default "default"): some CLI versions otherwise
//     start in an automatic mode that runs tools unasked; only "default"
//     and "plan" are accepted (the CLI's acceptEdits runs shell writes
//     unasked, and auto, dontAsk and bypassPermissions decide alone);
//   - --setting-sources user: a repository's .claude/settings.json (its
//     hooks, permissions, environment) does not load;
//   - --strict-mcp-config: no MCP server from the repository's .mcp.json
//     starts;
//   - --settings: the CLI's automatic classifier off, in plan mode too (it
//     would otherwise decide Bash calls there itself), bypassPermissions
//     disabled, and DenyRules as permissions.deny, so that the CLI refuses
//     them itself, behind the host's own rules.
type Guard struct {
	// DenyRules are rules in the CLI's syntax ("Bash(rm:*)", "Edit(//abs/**)").
	DenyRules []string
}

// guardModes are the permission modes a guarded process may run in.
var guardModes = map[string]bool{"default": true, "plan": true}

// Settings is the settings object the Guard passes with --settings and
// apply_flag_settings.
func (g Guard) Settings() map[string]any {
	deny := g.DenyRules
	if deny == nil {
		deny = []string{}
	}
	return map[string]any{
		"disableAutoMode":       "disable",
		"useAutoModeDuringPlan": false,
		"permissions": map[string]any{
			"disableBypassPermissionsMode": "disable",
			"deny":                         deny,
		},
	}
}

func (g Guard) args(mode string) []string {
	if mode == "" {
		mode = "default"
	}
	b, _ := json.Marshal(g.Settings()) // strings and bools only: cannot fail
	return []string{"--permission-mode", mode, "--setting-sources", "user", "--strict-mcp-config", "--settings", string(b)}
}

func (o *Options) checkGuard() error {
	if o.Guard == nil || o.PermissionMode == "" || guardModes[o.PermissionMode] {
		return nil
	}
	return fmt.Errorf("permission mode %q would let Claude Code decide tool calls itself: a guarded session runs in default or plan", o.PermissionMode)
}

// ApplyFlagSettings applies g's settings to the live session
// (apply_flag_settings): new deny rules take effect at once. Withdrawn ones
// do not (2.1.330 keeps denying them): a rule removed stays denied by the
// CLI until the process restarts, which errs on the safe side.
func (p *Process) ApplyFlagSettings(ctx context.Context, g Guard) error {
	if _, err := p.request(ctx, "apply_flag_settings", map[string]any{"settings": g.Settings()}); err != nil {
		return fmt.Errorf("apply settings: %w", err)
	}
	return nil
}
