package approvals

import (
	"path/filepath"
	"strings"
	"unicode"
)

// CLIDenyRules translates the deny rules among rules that apply to the
// channel and thread into Claude Code's permission syntax, for the CLI to
// enforce behind this package (a second line, never the first). It is
// CLIDenyRulesIn without a working directory: relative path patterns are
// passed relative, and the CLI reads them at any depth below its working
// directory ("*.env" also denies "sub/x.env"); those that climb ("../x")
// are left out.
func CLIDenyRules(rules []Rule, channelKey, threadKey string) []string {
	return CLIDenyRulesIn(rules, channelKey, threadKey, "")
}

// CLIDenyRulesIn translates the deny rules among rules that apply to the
// channel and thread (global ones, the channel's, the thread's) into
// Claude Code's permission syntax for a session in cwd (absolute), for the
// CLI to enforce behind this package. What Claude Code 2.1.330 honours,
// measured with the real CLI:
//
//   - a tool alone ("Bash", "Write", "WebSearch", "mcp__x__y") as it is;
//     "mcp__github__*" as "mcp__github", the CLI's form for a whole server;
//   - Bash patterns as they are: the CLI reads "prefix:*" and exact
//     commands as this package does, and a "*" inside an exact pattern as a
//     wildcard (broader, which a deny rule may be);
//   - WebFetch "domain:h" as "domain:h" and "domain:*.h": the CLI's domain
//     matches the host alone;
//   - Read and Edit path patterns made absolute against cwd and cleaned,
//     with the "//" prefix the CLI wants for absolute paths ("/abs/**" as
//     "//abs/**"; a single "/" would be read relative to the settings). The
//     CLI reads them more broadly than Matches does: a directory denies
//     what is inside it, a Read rule also denies Edit and an Edit rule
//     also denies Write. So one naming the root, cwd or a directory above
//     it is left out: it would deny the whole session.
//
// Left out, as the CLI cannot express them: Write, MultiEdit,
// NotebookEdit, Glob and Grep patterns (2.1.330 ignores Write(path) and
// has no MultiEdit, Glob or Grep tool), patterns of other tools (compared
// as JSON here), tool prefixes other than an MCP server's, and patterns
// with control characters.
func CLIDenyRulesIn(rules []Rule, channelKey, threadKey, cwd string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Effect != EffectDeny || !r.appliesTo(channelKey, threadKey) {
			continue
		}
		for _, s := range cliRules(r, cwd) {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// cliRules returns r in the CLI's syntax: none, one or (WebFetch) two.
func cliRules(r Rule, cwd string) []string {
	tool := r.Tool
	if strings.IndexFunc(tool+r.Pattern, unicode.IsControl) >= 0 {
		return nil
	}
	if prefix, wild := strings.CutSuffix(tool, "*"); wild {
		server, ok := strings.CutSuffix(prefix, "__")
		if !strings.HasPrefix(prefix, "mcp__") || !ok || r.Pattern != "" || strings.Count(server, "__") != 1 {
			return nil
		}
		return []string{server}
	}
	if r.Pattern == "" {
		return []string{tool}
	}
	switch tool {
	case ToolBash:
		return []string{tool + "(" + r.Pattern + ")"}
	case ToolWebFetch:
		host, ok := strings.CutPrefix(r.Pattern, "domain:")
		if !ok || host == "" {
			return nil
		}
		return []string{tool + "(domain:" + host + ")", tool + "(domain:*." + host + ")"}
	case "Read", "Edit":
		p, ok := cliPath(r.Pattern, cwd)
		if !ok {
			return nil
		}
		return []string{tool + "(" + p + ")"}
	}
	return nil
}

// cliPath is a path pattern as the CLI reads it: absolute ones with "//",
// relative ones made absolute against cwd when it is known, otherwise
// relative (and none that climbs out of cwd). Patterns naming the root,
// cwd or a directory above it are left out.
func cliPath(pattern, cwd string) (string, bool) {
	p := filepath.ToSlash(pattern)
	if filepath.IsAbs(p) || filepath.IsAbs(cwd) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		// The CLI reads a directory as all that is in it: the root, cwd or
		// a directory above it would deny the whole session.
		if p == "/" || (filepath.IsAbs(cwd) && (p == filepath.Clean(cwd) || strings.HasPrefix(filepath.Clean(cwd), p+"/"))) {
			return "", false
		}
		return "/" + p, true
	}
	p = filepath.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}
