package approvals

import (
	"path/filepath"
	"strings"

	"github.com/claudeops/claudeops/internal/fspath"
)

// ToolExitPlanMode ends plan mode; a person approves each plan.
const ToolExitPlanMode = "ExitPlanMode"

// GrantRule returns the allow rule a grant choice on c stores:
//
//   - ChoiceAllowThread: the same call for the rest of the thread. Bash
//     and Monitor: DerivePattern's pattern; a file tool: exactly that file
//     (or the directory Glob and Grep search), never a folder; WebFetch:
//     the host; a tool of wholeToolGrants (WebSearch): the tool. Any other
//     tool gets no grant: a bare tool name would allow every later call.
//   - ChoiceAllowFolder: file tools only: the folder of the file, and
//     everything below it, for the rest of the thread, when that folder
//     lies strictly inside c.Cwd ("./**" is never granted).
//   - ChoiceAllowAlways: ChoiceAllowThread's pattern as a rule of the
//     channel (only admins may make one; the Registry checks).
//
// ok is false for other choices, for a Protected call, for questions and
// plans (a person answers each), and when no rule can describe the call
// safely (an unreadable input: never widened to the whole tool).
func GrantRule(c Call, choice Choice) (Rule, bool) {
	if Protected(c) || c.Tool == ToolAskUserQuestion || c.Tool == ToolExitPlanMode {
		return Rule{}, false
	}
	r := Rule{Effect: EffectAllow, Tool: c.Tool, Scope: ScopeThread, ScopeKey: c.ThreadKey}
	switch choice {
	case ChoiceAllowThread, ChoiceAllowAlways:
		r.Pattern = DerivePattern(c.Tool, c.Input, c.Cwd)
		if _, whole := wholeToolGrants[c.Tool]; r.Pattern == "" && !whole {
			return Rule{}, false
		}
		if choice == ChoiceAllowAlways {
			r.Scope, r.ScopeKey = ScopeChannel, c.ChannelKey
		}
	case ChoiceAllowFolder:
		r.Pattern = folderPattern(c)
		if r.Pattern == "" {
			return Rule{}, false
		}
	default:
		return Rule{}, false
	}
	if r.ScopeKey == "" {
		return Rule{}, false
	}
	return r, true
}

// GrantChoices are the grant choices that make a rule for c, in the order
// prompts show them (ChoiceAllowAlways included: whether to offer it is
// the caller's policy).
func GrantChoices(c Call) []Choice {
	var out []Choice
	for _, ch := range []Choice{ChoiceAllowThread, ChoiceAllowFolder, ChoiceAllowAlways} {
		if _, ok := GrantRule(c, ch); ok {
			out = append(out, ch)
		}
	}
	return out
}

// exactPath is the pattern naming exactly the path a file tool call
// touches: relative to cwd inside it, else absolute.
func exactPath(tool string, input []byte, cwd string) string {
	p, ok := toolPath(tool, input, cwd)
	if !ok {
		return ""
	}
	if rel, ok := inside(p, cwd); ok && rel != "." {
		return relPattern(rel)
	}
	return escapeGlob(p)
}

// folderPattern is "<dir>/**" for the folder a file tool call works in,
// when that folder is strictly inside c.Cwd.
func folderPattern(c Call) string {
	if !isPathTool(c.Tool) {
		return ""
	}
	p, ok := toolPath(c.Tool, c.Input, c.Cwd)
	if !ok {
		return ""
	}
	dir := p
	if fileTools[c.Tool] {
		dir = filepath.Dir(p)
	}
	rel, ok := inside(dir, c.Cwd)
	if !ok || rel == "." || protectedName(dir) {
		return ""
	}
	return relPattern(rel) + "/**"
}

// inside returns p relative to cwd when p is cwd or below it.
func inside(p, cwd string) (string, bool) {
	if !filepath.IsAbs(cwd) {
		return "", false
	}
	if !fspath.Within(p, cwd) {
		return "", false
	}
	rel, err := filepath.Rel(cwd, p)
	return rel, err == nil
}

// relPattern escapes a relative path for a rule; a leading "~" would read
// as home, which ParseRule refuses.
func relPattern(rel string) string {
	if strings.HasPrefix(rel, "~") {
		rel = "./" + rel
	}
	return escapeGlob(rel)
}

// CallPath is the absolute, cleaned path a file tool call touches (for
// Glob and Grep the directory searched); ok is false for other tools and
// unreadable inputs.
func CallPath(c Call) (string, bool) {
	if !isPathTool(c.Tool) {
		return "", false
	}
	return toolPath(c.Tool, c.Input, c.Cwd)
}

// AcceptEdit reports whether the acceptEdits mode settles c by its
// documented meaning: a file edit (Write, Edit, MultiEdit, NotebookEdit)
// inside the working directory, as written and resolved, and not
// Protected. Everything else is still decided by rules or a person.
func AcceptEdit(c Call) bool {
	if !writeTools[c.Tool] || Protected(c) {
		return false
	}
	p, ok := toolPath(c.Tool, c.Input, c.Cwd)
	if !ok {
		return false
	}
	for _, name := range []string{p, c.Resolved} {
		if name == "" {
			continue
		}
		if rel, ok := inside(name, c.Cwd); !ok || rel == "." {
			return false
		}
	}
	return true
}
