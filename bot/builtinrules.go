package bot

import (
	"fmt"

	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/mcptools"
)

// builtinRules are the permission rules the bot brings with it, not
// stored (ID 0): its own tools for Claude (bot/mcptools) only post a file
// of the session's workspace into its own thread, read that thread, and
// propose a fact a person then accepts or not, so they run without a
// prompt. They are allow rules like any other: a deny
// rule of any scope ("rules add deny mcp__claudeops__send_file") wins.
var builtinRules = []approvals.Rule{
	{Scope: approvals.ScopeGlobal, Effect: approvals.EffectAllow, Tool: mcptools.SendFileTool},
	{Scope: approvals.ScopeGlobal, Effect: approvals.EffectAllow, Tool: mcptools.ReadThreadTool},
	// remember stores nothing: a person accepts the fact it proposes.
	{Scope: approvals.ScopeGlobal, Effect: approvals.EffectAllow, Tool: mcptools.RememberTool},
}

// ruleLine is how the rules command lists r: by its id, or as built in.
func ruleLine(r approvals.Rule) string {
	if r.ID == 0 {
		return fmt.Sprintf("built in: %s %s (%s; a deny rule overrides it)", r.Effect, r.Spec(), r.Scope)
	}
	return fmt.Sprintf("%d. %s %s (%s)", r.ID, r.Effect, r.Spec(), r.Scope)
}
