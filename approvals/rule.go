package approvals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// Effect is what a matching rule does to a tool call.
type Effect string

// Effects. The zero Effect, "", means no rule decided: ask a human.
const (
	EffectAllow Effect = "allow"
	EffectDeny  Effect = "deny"
)

// Scope is where a rule applies.
type Scope string

// Scopes. A thread rule comes from "Allow for thread", a channel rule from
// "Always allow" or the rules command.
const (
	ScopeGlobal  Scope = "global"
	ScopeChannel Scope = "channel"
	ScopeThread  Scope = "thread"
)

// Tool names with special handling.
const (
	ToolBash            = "Bash"
	ToolWebFetch        = "WebFetch"
	ToolWebSearch       = "WebSearch"
	ToolAskUserQuestion = "AskUserQuestion"
)

// Rule allows or denies calls of a tool, optionally narrowed by a pattern on
// the tool's input. See Matches for what a pattern means per tool.
type Rule struct {
	ID       int64  // the store's id; 0 until stored
	Scope    Scope  // global, channel or thread
	ScopeKey string // the channel key or thread key; "" for global
	Effect   Effect
	Tool     string // exact tool name, or a prefix followed by "*" (mcp__github__*)
	Pattern  string // "" matches any input
}

// ParseRule splits a rule spec such as "Bash", "Bash(git status:*)",
// "Edit(src/**)", "WebFetch(domain:example.com)" or "mcp__github__*" into
// its tool and pattern, and checks both: the tool is letters, digits, '_',
// '-' and '.', with an optional trailing '*'; a pattern is non-empty, its
// parentheses balance (outside quotes, for Bash), and it fits the tool
// (WebFetch takes "domain:<host>", WebSearch none, file patterns are not
// "~"-relative, a Bash prefix is not empty).
func ParseRule(spec string) (tool, pattern string, err error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return "", "", errors.New("empty rule: want Tool or Tool(pattern)")
	}
	tool = s
	open := strings.IndexByte(s, '(')
	if open >= 0 {
		tool = strings.TrimSpace(s[:open])
		if !strings.HasSuffix(s, ")") {
			if strings.LastIndexByte(s, ')') > open {
				return "", "", fmt.Errorf("rule %q: unexpected text after ')'", spec)
			}
			return "", "", fmt.Errorf("rule %q: missing closing ')'", spec)
		}
		pattern = strings.TrimSpace(s[open+1 : len(s)-1])
		if pattern == "" {
			return "", "", fmt.Errorf("rule %q: empty pattern; write %s alone to match any input", spec, tool)
		}
	} else if strings.IndexByte(s, ')') >= 0 {
		return "", "", fmt.Errorf("rule %q: ')' without '('", spec)
	}
	if err := checkToolName(tool); err != nil {
		return "", "", fmt.Errorf("rule %q: %w", spec, err)
	}
	if pattern != "" {
		if err := checkPattern(tool, pattern); err != nil {
			return "", "", fmt.Errorf("rule %q: %w", spec, err)
		}
	}
	return tool, pattern, nil
}

func checkToolName(tool string) error {
	if tool == "" {
		return errors.New("missing tool name")
	}
	for i := 0; i < len(tool); i++ {
		c := tool[i]
		switch {
		case isAlpha(c), isDigit(c), c == '_', c == '-', c == '.':
		case c == '*' && i == len(tool)-1:
		case c == '*':
			return fmt.Errorf("tool %q: '*' is only allowed at the end", tool)
		default:
			return fmt.Errorf("invalid tool name %q: letters, digits, '_', '-', '.' and a trailing '*' only", tool)
		}
	}
	return nil
}

func checkPattern(tool, pattern string) error {
	if err := checkParens(pattern, isCommandTool(tool)); err != nil {
		return err
	}
	switch {
	case isCommandTool(tool):
		if strings.HasSuffix(pattern, ":*") && strings.TrimSpace(strings.TrimSuffix(pattern, ":*")) == "" {
			return errors.New(`empty command prefix before ":*"`)
		}
	case isPathTool(tool):
		if strings.HasPrefix(pattern, "~") {
			return errors.New(`"~" is not expanded: use an absolute path`)
		}
	case tool == ToolWebFetch:
		host, ok := strings.CutPrefix(pattern, "domain:")
		if !ok {
			return errors.New(`WebFetch pattern must be "domain:<host>"`)
		}
		if !validHost(host) {
			return fmt.Errorf("invalid host %q in WebFetch pattern", host)
		}
	case tool == ToolWebSearch:
		return errors.New("WebSearch takes no pattern")
	}
	return nil
}

// checkParens reports unbalanced parentheses; with quotes set, parentheses
// inside '…' and "…" (and escaped ones) do not count.
func checkParens(s string, quotes bool) error {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quotes && quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case quotes && c == '\\':
			i++
		case quotes && (c == '\'' || c == '"'):
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return errors.New("unbalanced parentheses in pattern: ')' without '('")
			}
			depth--
		}
	}
	if depth != 0 {
		return errors.New("unbalanced parentheses in pattern: '(' without ')'")
	}
	return nil
}

func validHost(h string) bool {
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c >= 0x80) {
			return false
		}
	}
	return true
}

// Spec formats the rule the way ParseRule reads it: "Bash(git status:*)", or
// "Bash" when the pattern is empty.
func (r Rule) Spec() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// Validate checks the rule's scope, scope key, effect, tool and pattern.
func (r Rule) Validate() error {
	switch r.Scope {
	case ScopeGlobal:
		if r.ScopeKey != "" {
			return fmt.Errorf("global rule with scope key %q", r.ScopeKey)
		}
	case ScopeChannel, ScopeThread:
		if r.ScopeKey == "" {
			return fmt.Errorf("%s rule without a scope key", r.Scope)
		}
	default:
		return fmt.Errorf("unknown scope %q", r.Scope)
	}
	if r.Effect != EffectAllow && r.Effect != EffectDeny {
		return fmt.Errorf("unknown effect %q", r.Effect)
	}
	tool, pattern, err := ParseRule(r.Spec())
	if err != nil {
		return err
	}
	if tool != r.Tool || pattern != r.Pattern {
		return fmt.Errorf("rule %q: tool or pattern has surrounding blanks", r.Spec())
	}
	return nil
}

// appliesToTool reports whether the rule covers a call of tool: its Tool
// names tool, or it is a deny rule naming Bash and tool runs commands too
// (commandTools): a command denied in Bash is denied through Monitor.
func (r Rule) appliesToTool(tool string) bool {
	if r.matchesTool(tool) {
		return true
	}
	return r.Effect == EffectDeny && tool != ToolBash && isCommandTool(tool) && r.matchesTool(ToolBash)
}

// matchesTool reports whether the rule's Tool names tool: equal, or a
// prefix when Tool ends in '*'.
func (r Rule) matchesTool(tool string) bool {
	if prefix, ok := strings.CutSuffix(r.Tool, "*"); ok {
		return strings.HasPrefix(tool, prefix)
	}
	return r.Tool != "" && r.Tool == tool
}

// Matches reports whether the rule applies to a call of tool with input;
// cwd (absolute) resolves relative paths and patterns. Whatever the rule's
// Tool, the pattern is read according to the called tool:
//
//   - Bash and the other command tools (commandTools: Monitor's
//     input.command): an allow rule matches only when Bash would run
//     nothing but what the rule names. The command is read under a
//     whitelist grammar (see shell.go: plain words, '…', "…" with at most
//     $NAME, operators ; & && || | |&, redirections only to /dev/null or
//     between descriptors 0-2); anything outside it (ANSI-C or locale
//     quoting, ${…} operators, special parameters, substitutions, line
//     continuations, heredocs, comments, assignments, builtins that run
//     code, control or non-ASCII bytes) matches no allow rule. Inside it,
//     every simple command's words after quote removal must start with
//     "prefix:*"'s words, or equal the pattern's. A command equal to a
//     non-prefix pattern as a whole matches: that exact string was
//     approved. Prefix rules trust their program with its arguments, but
//     for the options safeCommands lists as running a program or writing a
//     file ("git diff:*" does not allow "git diff --output=f"); "git:*"
//     still allows "git -c core.pager=… log". A deny rule matches if any
//     simple command does, also inside substitutions, after dropping
//     assignments and redirections, after quote removal; deny rules on
//     Bash are still best effort: "bash -c", eval, sudo or /bin/rm get past
//     "rm:*". A deny rule on Bash also applies to the other command tools.
//   - Read, Write, Edit, MultiEdit, NotebookEdit (input.file_path or
//     input.notebook_path), Glob and Grep (input.path, default cwd; a Glob
//     pattern's leading literal directories count): the pattern is a path
//     glob, see matchPathGlob. Paths are cleaned first, lexically: symlinks
//     are not resolved.
//   - WebFetch (input.url): "domain:example.com" matches that host and its
//     subdomains.
//   - WebSearch: only an empty pattern matches.
//   - Any other tool: the pattern must equal the input as compact JSON (key
//     order included), which is rarely useful.
//
// An input the rule cannot read (bad JSON, a missing field, an unterminated
// quote, a relative path without cwd) fails closed: deny rules match it,
// allow rules do not. Allow rules never match AskUserQuestion, which only a
// human can answer.
func (r Rule) Matches(tool string, input json.RawMessage, cwd string) bool {
	if !r.appliesToTool(tool) {
		return false
	}
	deny := r.Effect == EffectDeny
	if !deny && tool == ToolAskUserQuestion {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	switch {
	case isCommandTool(tool):
		cmd, ok := toolCommand(tool, input)
		if !ok {
			return deny
		}
		return matchBash(r.Pattern, cmd, deny)
	case isPathTool(tool):
		p, ok := toolPath(tool, input, cwd)
		if !ok {
			return deny
		}
		return matchPathGlob(r.Pattern, p, cwd)
	case tool == ToolWebFetch:
		want, ok := strings.CutPrefix(r.Pattern, "domain:")
		if !ok {
			return false
		}
		host, ok := fetchHost(input)
		if !ok {
			return deny
		}
		want = strings.ToLower(want)
		return host == want || strings.HasSuffix(host, "."+want)
	case tool == ToolWebSearch:
		return false
	default:
		var got bytes.Buffer
		if err := json.Compact(&got, input); err != nil {
			return deny
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(r.Pattern)); err != nil {
			return got.String() == r.Pattern
		}
		return got.String() == want.String()
	}
}

// fetchHost returns the lower-case host of input.url.
func fetchHost(input json.RawMessage) (string, bool) {
	fields, ok := decodeObject(input)
	if !ok {
		return "", false
	}
	raw, _ := stringField(fields, "url")
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return host, host != ""
}

// appliesTo reports whether the rule's scope covers the channel and thread.
func (r Rule) appliesTo(channelKey, threadKey string) bool {
	switch r.Scope {
	case ScopeGlobal:
		return true
	case ScopeChannel:
		return r.ScopeKey != "" && r.ScopeKey == channelKey
	case ScopeThread:
		return r.ScopeKey != "" && r.ScopeKey == threadKey
	}
	return false
}

// Evaluate decides a tool call from rules: only rules whose scope applies
// count (global; channel rules of channelKey; thread rules of threadKey), and
// a matching deny at any scope wins over any allow. It returns the effect
// and a copy of the deciding rule (the first match of that effect, in
// order), or "" and nil when no rule matches: ask a human. Rules with an
// unknown scope or effect are ignored. It is EvaluateCall without resolved
// paths or bot files: protected paths still match no allow rule.
func Evaluate(rules []Rule, channelKey, threadKey, tool string, input json.RawMessage, cwd string) (Effect, *Rule) {
	return EvaluateCall(rules, Call{ChannelKey: channelKey, ThreadKey: threadKey, Tool: tool, Input: input, Cwd: cwd})
}

// DerivePattern returns the pattern "Allow for thread" and "Always allow"
// store for a call, one that Matches the same call again:
//
//   - Bash and Monitor (commandTools): deriveBash's pattern: "word:*" or
//     "tool sub:*" for one plain simple command of a program safeCommands
//     lists ("ls -la" -> "ls:*", "git status -s" -> "git status:*",
//     "make test" -> "make test:*"), otherwise the exact trimmed command;
//     "" for a multi-line command, or one ending in ":*" (it would read as
//     a prefix).
//   - File tools: exactly the file (for Glob and Grep, the directory
//     searched), relative to cwd when inside it, else absolute, its glob
//     bytes escaped. A folder is only ever granted on purpose: see
//     GrantRule's ChoiceAllowFolder.
//   - WebFetch: "domain:<host>".
//   - Anything else, or an input that cannot be read: "".
func DerivePattern(tool string, input json.RawMessage, cwd string) string {
	switch {
	case isCommandTool(tool):
		cmd, _ := toolCommand(tool, input)
		p := deriveBash(cmd)
		if strings.IndexFunc(p, unicode.IsControl) >= 0 {
			return "" // a multi-line exact command: allowed once, not kept as a rule
		}
		return p
	case isPathTool(tool):
		return exactPath(tool, input, cwd)
	case tool == ToolWebFetch:
		if host, ok := fetchHost(input); ok {
			return "domain:" + host
		}
	}
	return ""
}
