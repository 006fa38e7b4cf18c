package approvals

import (
	"path/filepath"
	"strings"
)

// CLIDenyRules translates the deny rules among rules that apply to the
// channel and thread into the CLI's permission syntax, for the CLI to
// enforce behind this package (a second line, never the first): tool
// names as they are ("mcp__github__*" as "mcp__github"), Bash and WebFetch
// patterns as they are, path globs relative to cwd as they are and
// absolute ones with the "//" prefix the CLI wants for absolute paths.
// Rules the CLI cannot express are left out.
func CLIDenyRules(rules []Rule, channelKey, threadKey string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Effect != EffectDeny || !r.appliesTo(channelKey, threadKey) {
			continue
		}
		s, ok := cliRule(r)
		if ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func cliRule(r Rule) (string, bool) {
	tool := r.Tool
	if prefix, wild := strings.CutSuffix(tool, "*"); wild {
		server, ok := strings.CutSuffix(prefix, "__")
		if !strings.HasPrefix(prefix, "mcp__") || !ok || r.Pattern != "" || strings.Count(server, "__") != 1 {
			return "", false
		}
		return server, true
	}
	if r.Pattern == "" {
		return tool, true
	}
	switch {
	case tool == ToolBash, tool == ToolWebFetch:
		return tool + "(" + r.Pattern + ")", true
	case isPathTool(tool):
		p := r.Pattern
		if filepath.IsAbs(p) {
			p = "/" + p
		}
		return tool + "(" + p + ")", true
	}
	return "", false
}
