package approvals

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file reads Bash command lines for Bash rules, in two ways.
//
// Allow rules use a whitelist grammar (parseAllow): simple commands of plain
// words, quotes, $NAME and a few harmless redirections, joined by list and
// pipeline operators. Anything outside it is an error and the allow rule
// does not match, so a human is asked: nothing is guessed. The grammar is
// checked against real Bash by TestBashAllowDifferential and FuzzBashAllow.
//
// Deny rules use a lenient scanner (scanBash) that splits on operators and
// looks inside substitutions, so that they match as widely as they can.

// ---- Allow rules: the whitelist grammar ----

// shWord is one word of a simple command.
type shWord struct {
	// text is the word after quote removal, as the program gets it when the
	// word is literal; otherwise it still holds $NAME and glob bytes.
	text string
	// literal: no expansion can change the word. It holds no $NAME and no
	// unquoted glob (* ? [ ]), brace ({ }) or tilde (~) byte.
	literal bool
}

// shCommand is one simple command of the allow grammar.
type shCommand struct {
	words  []shWord
	redirs int // harmless redirections: to /dev/null, or fd dups
}

// parseAllow reads cmd under the allow grammar and returns its simple
// commands, or an error naming the first construct outside the grammar.
//
// Accepted: simple commands joined by ; & && || | |& and newlines; words made
// of unquoted bytes from [A-Za-z0-9_./,:@%+=^~*?[]{}] (# not first), a
// backslash before printable ASCII, '…', "…" holding no $ but $NAME and
// ${NAME} and no backquote, and unquoted $NAME or ${NAME}; the redirections
// N>&M (N, M in 0-2) and [N]> [N]>> [N]< &> &>> to exactly /dev/null.
//
// Everything else is refused: $'…', $"…", ${…} with operators, special
// parameters, $(…), $((…)), $[…], backquotes, <(…), >(…), line
// continuations, comments, heredocs and here-strings, ( ) and other
// redirections, !, non-ASCII bytes outside single quotes, and control
// bytes but tab and newline anywhere.
func parseAllow(cmd string) ([]shCommand, error) {
	// Bash marks quoted bytes internally with \x01 and \x7f, and C strings
	// end at NUL: control bytes are refused even inside quotes.
	if i := strings.IndexFunc(cmd, func(r rune) bool { return r < ' ' && r != '\t' && r != '\n' || r == 0x7f }); i >= 0 {
		return nil, fmt.Errorf("byte %d: control byte %q", i, cmd[i])
	}
	p := allowParser{s: cmd}
	if err := p.list(); err != nil {
		return nil, fmt.Errorf("byte %d: %w", p.i, err)
	}
	return p.cmds, nil
}

type allowParser struct {
	s       string
	i       int
	cmds    []shCommand
	cur     shCommand
	started bool // cur has a word or a redirection
}

func (p *allowParser) peek(off int) byte {
	if p.i+off < len(p.s) {
		return p.s[p.i+off]
	}
	return 0
}

// end closes the current simple command.
func (p *allowParser) end() {
	p.cmds = append(p.cmds, p.cur)
	p.cur, p.started = shCommand{}, false
}

// list reads the whole input.
func (p *allowParser) list() error {
	// needCmd: the last operator (&& || | |&) takes a command on its right.
	needCmd := false
	for p.i < len(p.s) {
		c, next := p.s[p.i], p.peek(1)
		var err error
		switch {
		case c == ' ' || c == '\t':
			p.i++
		case c == '\n':
			// Ends a command. Blank lines, and newlines after && || |, are
			// nothing to Bash.
			p.i++
			if p.started {
				p.end()
			}
		case c == ';' || c == '&' && next != '&' && next != '>':
			err = p.op(1)
		case c == '&' && next == '&', c == '|' && (next == '|' || next == '&'):
			err = p.op(2)
			needCmd = true
		case c == '|':
			err = p.op(1)
			needCmd = true
		case c == '<' || c == '>' || c == '&' || c >= '0' && c <= '2' && (next == '<' || next == '>'):
			err = p.redirect()
			needCmd = false
		default:
			err = p.word()
			needCmd = false
		}
		if err != nil {
			return err
		}
	}
	if needCmd {
		return errors.New("operator without a command after it")
	}
	if p.started {
		p.end()
	}
	return nil
}

// op ends the current command at an n-byte operator. An empty command
// before an operator is a syntax error (";;", "& &", a leading "|").
func (p *allowParser) op(n int) error {
	if !p.started {
		return fmt.Errorf("%q without a command before it", p.s[p.i:p.i+n])
	}
	p.end()
	p.i += n
	return nil
}

// redirect reads a redirection that can neither run anything nor write a
// file: N>&M with N and M in 0-2, or [N]>, [N]>>, [N]<, &>, &>> to exactly
// /dev/null. Other files are refused: > writes them, and < opens
// /dev/tcp/… as a network connection.
func (p *allowParser) redirect() error {
	hasFD := isDigit(p.s[p.i])
	if hasFD {
		p.i++
	}
	op := ""
	for _, o := range []string{"&>>", "&>", ">>", ">&", ">", "<"} {
		if strings.HasPrefix(p.s[p.i:], o) {
			op = o
			break
		}
	}
	if op == "" || hasFD && op[0] == '&' {
		return errors.New("redirection")
	}
	p.i += len(op)
	if op == ">&" {
		if c := p.peek(0); c < '0' || c > '2' {
			return errors.New("redirection with >& to other than fd 0-2")
		}
		p.i++
	} else {
		for p.peek(0) == ' ' || p.peek(0) == '\t' {
			p.i++
		}
		if !strings.HasPrefix(p.s[p.i:], "/dev/null") {
			return errors.New("redirection to other than /dev/null")
		}
		p.i += len("/dev/null")
	}
	if p.i < len(p.s) && !endsWord(p.s[p.i]) {
		return errors.New("redirection target goes on")
	}
	p.cur.redirs++
	p.started = true
	return nil
}

// endsWord: bytes that end an unquoted word.
func endsWord(c byte) bool { return strings.IndexByte(" \t\n;&|<>", c) >= 0 }

// word reads one word.
func (p *allowParser) word() error {
	var b strings.Builder
	w := shWord{literal: true}
	start := p.i
	for p.i < len(p.s) && !endsWord(p.s[p.i]) {
		c := p.s[p.i]
		var err error
		switch {
		case c == '\'':
			err = p.single(&b)
		case c == '"':
			err = p.double(&b, &w)
		case c == '\\':
			err = p.escape(&b)
		case c == '$':
			err = p.param(&b, &w)
		case c == '#' && p.i == start:
			err = errors.New("comment")
		case unquotedSafe(c):
			b.WriteByte(c)
			p.i++
			if strings.IndexByte("*?[]{}~", c) >= 0 {
				w.literal = false
			}
		default:
			err = fmt.Errorf("%q outside quotes", c)
		}
		if err != nil {
			return err
		}
	}
	// {NAME}>file opens a file descriptor into a variable, and 2>x would
	// read as one: a redirection must be set apart from a word by a blank.
	if rest := p.s[p.i:]; strings.HasPrefix(rest, "<") || strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "&>") {
		return errors.New("redirection right after a word")
	}
	w.text = b.String()
	p.cur.words = append(p.cur.words, w)
	p.started = true
	return nil
}

// unquotedSafe: bytes that mean nothing to Bash inside a word, or expand
// only to file names or paths (globs, braces, tilde), never to code.
func unquotedSafe(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("_-./,:@%+=^~*?[]{}#", c) >= 0
}

// single reads '…': every byte inside is literal.
func (p *allowParser) single(b *strings.Builder) error {
	j := strings.IndexByte(p.s[p.i+1:], '\'')
	if j < 0 {
		return errors.New("unterminated single quote")
	}
	b.WriteString(p.s[p.i+1 : p.i+1+j])
	p.i += j + 2
	return nil
}

// double reads "…". Only $NAME and ${NAME} expand; a backslash escapes
// $ ` " and \ and is kept before anything else.
func (p *allowParser) double(b *strings.Builder, w *shWord) error {
	p.i++
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return nil
		case '\\':
			switch n := p.peek(1); n {
			case '$', '`', '"', '\\':
				b.WriteByte(n)
				p.i += 2
			case '\n':
				return errors.New("line continuation")
			default:
				b.WriteByte('\\')
				p.i++
			}
		case '$':
			if err := p.param(b, w); err != nil {
				return err
			}
		case '`':
			return errors.New("command substitution")
		default:
			// In BIG5, GBK or Shift JIS a non-ASCII byte and the \ or `
			// after it are one character, which would move the quote's end.
			if c >= 0x80 {
				return errors.New("non-ASCII byte inside double quotes")
			}
			b.WriteByte(c)
			p.i++
		}
	}
	return errors.New("unterminated double quote")
}

// escape reads a backslash outside quotes: before a printable ASCII byte,
// blank or tab it makes that byte literal. Before a newline it would join
// lines, which is refused.
func (p *allowParser) escape(b *strings.Builder) error {
	n := p.peek(1)
	if n == '\n' {
		return errors.New("line continuation")
	}
	if n != '\t' && (n < ' ' || n > '~') {
		return errors.New("backslash before a control or non-ASCII byte, or at the end")
	}
	b.WriteByte(n)
	p.i += 2
	return nil
}

// param reads $NAME or ${NAME}. A plain variable's value can become words,
// never code. Anything else after $ (special parameters such as $$, ANSI-C
// and locale quotes, ${…} operators, substitutions) is refused.
func (p *allowParser) param(b *strings.Builder, w *shWord) error {
	j := p.i + 1
	braced := p.peek(1) == '{'
	if braced {
		j++
	}
	n := nameLen(p.s[j:])
	if n == 0 {
		return errors.New("$ not followed by a variable name")
	}
	j += n
	if braced {
		if j >= len(p.s) || p.s[j] != '}' {
			return errors.New("${…} with more than a name")
		}
		j++
	}
	b.WriteString(p.s[p.i:j])
	p.i = j
	w.literal = false
	return nil
}

// nameLen returns the length of the shell variable name s begins with.
func nameLen(s string) int {
	n := 0
	for n < len(s) && (s[n] == '_' || isAlpha(s[n]) || n > 0 && isDigit(s[n])) {
		n++
	}
	return n
}

// shellWords are Bash's builtins and reserved words, but echo, true, false
// and pwd. They evaluate code (eval, source, trap), change the shell (cd,
// alias, set), evaluate array subscripts as arithmetic, which runs command
// substitutions (printf -v, read, test -v, unset), or open compound
// commands. A rule naming one as its command allows nothing: ask a human.
var shellWords = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true, "builtin": true,
	"caller": true, "cd": true, "command": true, "compgen": true, "complete": true, "compopt": true,
	"continue": true, "declare": true, "dirs": true, "disown": true, "enable": true, "eval": true, "exec": true,
	"exit": true, "export": true, "fc": true, "fg": true, "getopts": true, "hash": true, "help": true,
	"history": true, "jobs": true, "kill": true, "let": true, "local": true, "logout": true, "mapfile": true,
	"popd": true, "printf": true, "pushd": true, "read": true, "readarray": true, "readonly": true,
	"return": true, "set": true, "shift": true, "shopt": true, "source": true, "suspend": true, "test": true,
	"times": true, "trap": true, "type": true, "typeset": true, "ulimit": true, "umask": true, "unalias": true,
	"unset": true, "wait": true,
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true, "for": true,
	"select": true, "while": true, "until": true, "do": true, "done": true, "in": true, "function": true,
	"time": true, "{": true, "}": true, "!": true, "[[": true, "]]": true, "coproc": true,
}

// commandName reports whether an allow rule may name w as its command: a
// plain name or path (letters, digits, _ . / + @ -) that is not one of
// shellWords. No =, so it is never an assignment; no %, so never a job.
func commandName(w string) bool {
	if w == "" || shellWords[w] {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !isAlpha(c) && !isDigit(c) && strings.IndexByte("_./+@-", c) < 0 {
			return false
		}
	}
	return true
}

// ruleWords reads the words of an allow pattern (without ":*"): one simple
// command of literal words, no redirections, its first word a commandName.
func ruleWords(pattern string) ([]string, bool) {
	cmds, err := parseAllow(pattern)
	if err != nil || len(cmds) != 1 || cmds[0].redirs > 0 {
		return nil, false
	}
	words := make([]string, 0, len(cmds[0].words))
	for _, w := range cmds[0].words {
		if !w.literal {
			return nil, false
		}
		words = append(words, w.text)
	}
	if len(words) == 0 || !commandName(words[0]) {
		return nil, false
	}
	return words, true
}

// startsWith reports whether words begin with the rule's words, each
// literal and equal after quote removal.
func startsWith(words []shWord, rule []string) bool {
	if len(words) < len(rule) {
		return false
	}
	for i, r := range rule {
		if !words[i].literal || words[i].text != r {
			return false
		}
	}
	return true
}

// allowBash reports whether an allow pattern matches: cmd is inside the
// grammar and every simple command's words start with the pattern's words
// ("prefix:*"), or equal them (any other pattern). Words are compared after
// quote removal, because that is what the program gets: "git 'status'"
// runs the same as "git status".
func allowBash(pattern, cmd string) bool {
	prefix, isPrefix := strings.CutSuffix(pattern, ":*")
	rule, ok := ruleWords(prefix)
	if !ok {
		return false
	}
	cmds, err := parseAllow(cmd)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if !startsWith(c.words, rule) || !isPrefix && len(c.words) != len(rule) {
			return false
		}
	}
	return true
}

// matchBash applies a Bash pattern to a command. See Rule.Matches.
func matchBash(pattern, cmd string, deny bool) bool {
	pattern, cmd = trimCommand(pattern), trimCommand(cmd)
	if cmd == "" || pattern == "" {
		return false
	}
	// An exact pattern is a string a human approved (or forbade) as a whole,
	// typically by "Allow for thread" on a compound command: equal is a
	// match, whatever the string holds.
	if !strings.HasSuffix(pattern, ":*") && cmd == pattern {
		return true
	}
	if deny {
		return denyBash(pattern, cmd)
	}
	return allowBash(pattern, cmd)
}

// ---- Deriving a rule from an approved command ----

// broadCommands run other commands or arbitrary code given as arguments, so a
// "cmd:*" rule derived from one approval would allow anything. deriveBash
// keeps the exact command for them. Names starting with "python" count too.
var broadCommands = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "csh": true, "tcsh": true,
	"env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true, "xargs": true,
	"parallel": true, "nohup": true, "nice": true, "ionice": true, "timeout": true, "watch": true,
	"strace": true, "ltrace": true, "gdb": true, "setsid": true, "stdbuf": true, "taskset": true,
	"flock": true, "chroot": true, "unshare": true, "nsenter": true, "script": true, "expect": true,
	"ssh": true, "busybox": true, "find": true, "awk": true, "gawk": true, "mawk": true, "nawk": true,
	"sed": true, "make": true, "gmake": true, "cmake": true, "tar": true, "rsync": true, "zip": true,
	"vi": true, "vim": true, "nvim": true, "emacs": true, "ed": true, "ex": true,
	"npx": true, "pnpx": true, "bunx": true, "uvx": true, "pipx": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "ts-node": true, "tsx": true,
	"pypy": true, "pypy3": true, "perl": true, "ruby": true, "php": true, "lua": true, "tclsh": true,
	"Rscript": true, "julia": true, "java": true, "osascript": true, "pwsh": true, "powershell": true,
	"docker": true, "podman": true,
}

// subcommandTools do what their first argument says, so a rule derived from
// one approval names it too: "git status:*", not "git:*". The listed
// subcommands run commands or code given as arguments or configuration
// (git fetch --upload-pack=…, npm exec, go run …): the exact command is
// kept for them.
var subcommandTools = map[string]map[string]bool{
	"git": set("config", "submodule", "filter-branch", "bisect", "rebase", "difftool", "mergetool",
		"daemon", "instaweb", "send-email", "archive", "fetch", "pull", "push", "clone", "ls-remote", "grep"),
	"npm":   set("exec", "x", "explore", "run", "run-script", "install", "i", "add", "ci", "rebuild", "config", "set"),
	"pnpm":  set("exec", "x", "dlx", "run", "install", "i", "add", "rebuild", "config", "set"),
	"yarn":  set("exec", "dlx", "run", "install", "add", "rebuild", "config", "set"),
	"go":    set("run", "generate", "tool", "env", "get", "install"),
	"cargo": set("run", "install", "script"),
	"kubectl": set("exec", "run", "debug", "attach", "cp", "apply", "create", "delete", "replace", "patch",
		"edit", "proxy", "port-forward", "plugin"),
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// deriveBash returns the pattern an approval of cmd stores: "word:*" for a
// single simple command inside the allow grammar whose first word is a
// commandName that does not run other commands (broadCommands), "tool sub:*"
// for subcommandTools; else the exact trimmed command, or "" when that ends
// in ":*" and so would read as a prefix rule. It always matches cmd.
func deriveBash(cmd string) string {
	cmd = trimCommand(cmd)
	if cmd == "" {
		return ""
	}
	exact := cmd
	if strings.HasSuffix(cmd, ":*") {
		exact = "" // it would read as a prefix rule: nothing expresses it exactly
	}
	cmds, err := parseAllow(cmd)
	if err != nil || len(cmds) != 1 || len(cmds[0].words) == 0 {
		return exact
	}
	words := cmds[0].words
	first := words[0].text
	// The base name counts too: /usr/bin/env, ./bash.
	base := first[strings.LastIndexByte(first, '/')+1:]
	if !words[0].literal || !commandName(first) || broadCommands[base] || strings.HasPrefix(base, "python") {
		return exact
	}
	subs, ok := subcommandTools[base]
	if !ok {
		return first + ":*"
	}
	if len(words) < 2 || !words[1].literal || !subcommandName(words[1].text) || subs[words[1].text] {
		return exact
	}
	return first + " " + words[1].text + ":*"
}

// subcommandName: a plain subcommand such as "status" or "ls-files", not an
// option.
func subcommandName(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !isAlpha(c) && !isDigit(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// ---- Deny rules: the lenient scanner ----

// denyBash reports whether a deny pattern matches any simple command of
// cmd, at top level or inside a substitution: as written, without leading
// assignments, or as words after quote removal with redirections dropped.
// cmd is read the way Bash reads it and also the way this scanner did
// before $$ was understood ($$'…' taken as ANSI-C), so deny rules match no
// less than they did. A command the scanner cannot read matches.
func denyBash(pattern, cmd string) bool {
	for _, legacy := range []bool{false, true} {
		sc := scanBash(cmd, legacy)
		if sc.err != nil {
			return true
		}
		for _, part := range slices.Concat(sc.parts, sc.inner) {
			if bashPartMatches(part, pattern) || bashPartMatches(stripAssignments(part), pattern) || looseMatches(part, pattern) {
				return true
			}
		}
	}
	return false
}

// maxBashNesting bounds recursion into $(…), `…`, <(…) and >(…).
const maxBashNesting = 32

var (
	errUnterminated = errors.New("unterminated quote or substitution")
	errTooDeep      = errors.New("substitutions nested too deeply")
)

// bashScan is the result of splitting a command line.
type bashScan struct {
	// parts are the top-level simple commands, trimmed of blanks, without
	// comments, in order. Empty commands (";;", a trailing "&") are dropped.
	parts []string
	// inner are the simple commands found inside command and process
	// substitutions, best effort.
	inner []string
	// err reports an unterminated quote or substitution, or too much nesting.
	err error
}

// scanBash splits cmd into simple commands, the way Bash would at the level
// of quotes, escapes, list and pipeline operators, comments and
// substitutions; it is not a full parser. With legacy set, $$' starts an
// ANSI-C quote as it did in the first version. It never panics; an input it
// cannot read sets err.
func scanBash(cmd string, legacy bool) bashScan {
	sc := bashScanner{s: cmd, legacy: legacy}
	parts, err := sc.list(0, 0)
	sc.out.parts = parts
	sc.out.err = err
	return sc.out
}

type bashScanner struct {
	s      string
	i      int
	legacy bool
	out    bashScan
}

func (sc *bashScanner) peek(off int) byte {
	if sc.i+off < len(sc.s) {
		return sc.s[sc.i+off]
	}
	return 0
}

// list scans simple commands up to end: 0 is the end of the input, ')' closes
// $(…), <(…) and >(…), '`' closes a backtick substitution. On return sc.i is
// just past the terminator.
func (sc *bashScanner) list(end byte, depth int) ([]string, error) {
	if depth > maxBashNesting {
		return nil, errTooDeep
	}
	var (
		parts []string
		cur   strings.Builder
		// wordStart: the next byte would begin a new shell word, which is
		// where '#' begins a comment.
		wordStart = true
		// redir: the previous byte was an unquoted '<' or '>', so '&' and '|'
		// belong to a redirection (2>&1, >|), not to a list or pipeline.
		redir  = false
		parens = 0
	)
	flush := func() {
		if t := strings.Trim(cur.String(), " \t"); t != "" {
			parts = append(parts, t)
		}
		cur.Reset()
		wordStart, redir = true, false
	}
	// word copies s[start:sc.i] into the current command as part of a word.
	word := func(start int) {
		cur.WriteString(sc.s[start:sc.i])
		wordStart, redir = false, false
	}
	for sc.i < len(sc.s) {
		c, next := sc.s[sc.i], sc.peek(1)
		start := sc.i
		switch {
		case end == '`' && c == '`':
			sc.i++
			flush()
			return parts, nil
		case end == ')' && c == ')' && parens == 0:
			sc.i++
			flush()
			return parts, nil

		case c == '\\':
			if next == '\n' { // line continuation: Bash removes both bytes
				sc.i += 2
				continue
			}
			sc.i = min(sc.i+2, len(sc.s))
			word(start)
		case c == '\'':
			j := strings.IndexByte(sc.s[sc.i+1:], '\'')
			if j < 0 {
				return parts, errUnterminated
			}
			sc.i += j + 2
			word(start)
		case c == '$' && next == '$' && !sc.legacy: // $$, so a ' after it is a plain quote
			sc.i += 2
			word(start)
		case c == '$' && next == '\'': // $'…': backslash escapes inside
			sc.i += 2
			if err := sc.ansiC(); err != nil {
				return parts, err
			}
			word(start)
		case c == '"':
			sc.i++
			if err := sc.double(depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '$' && next == '(':
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '`':
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return parts, err
			}
			word(start)
		case (c == '<' || c == '>') && next == '(':
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return parts, err
			}
			word(start)
		case c == '$' && next == '{':
			sc.i += 2
			word(start)

		case c == '#' && wordStart:
			for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
				sc.i++
			}
		case c == '\n' || c == ';':
			sc.i++
			flush()
		case c == '&':
			switch {
			case next == '&':
				sc.i += 2
				flush()
			case redir: // >& <&
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			case next == '>': // &> &>>
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			default: // background: the next command starts here
				sc.i++
				flush()
			}
		case c == '|':
			switch {
			case redir: // >|
				sc.i++
				cur.WriteByte(c)
				wordStart, redir = true, false
			case next == '|':
				sc.i += 2
				flush()
			default:
				sc.i++
				flush()
			}
		case c == '<' && next == '<':
			if sc.peek(2) == '<' { // here-string
				sc.i += 3
			} else {
				sc.i += 2
			}
			cur.WriteString(sc.s[start:sc.i])
			wordStart, redir = true, true
		case c == '<' || c == '>':
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, true
		case c == '(' || c == ')':
			if c == '(' {
				parens++
			} else if parens > 0 {
				parens--
			}
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, false
		case c == ' ' || c == '\t':
			sc.i++
			cur.WriteByte(c)
			wordStart, redir = true, false
		default:
			sc.i++
			word(start)
		}
	}
	if end != 0 {
		return parts, errUnterminated
	}
	flush()
	return parts, nil
}

// nested scans a substitution body; its commands are kept for deny rules.
func (sc *bashScanner) nested(end byte, depth int) error {
	parts, err := sc.list(end, depth+1)
	sc.out.inner = append(sc.out.inner, parts...)
	return err
}

// double scans the rest of a double-quoted string; sc.i is just past the
// opening quote and ends just past the closing one.
func (sc *bashScanner) double(depth int) error {
	for sc.i < len(sc.s) {
		c, next := sc.s[sc.i], sc.peek(1)
		switch {
		case c == '"':
			sc.i++
			return nil
		case c == '\\':
			sc.i = min(sc.i+2, len(sc.s))
		case c == '$' && next == '(':
			sc.i += 2
			if err := sc.nested(')', depth); err != nil {
				return err
			}
		case c == '`':
			sc.i++
			if err := sc.nested('`', depth); err != nil {
				return err
			}
		default:
			sc.i++
		}
	}
	return errUnterminated
}

// ansiC scans the rest of a $'…' string; sc.i is just past the opening quote.
func (sc *bashScanner) ansiC() error {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case '\\':
			sc.i = min(sc.i+2, len(sc.s))
		case '\'':
			sc.i++
			return nil
		default:
			sc.i++
		}
	}
	return errUnterminated
}

// stripAssignments drops leading NAME=value words ("FOO=1 BAR='a b' cmd" ->
// "cmd"). Only deny rules use it: for them, seeing through assignments is the
// strict reading. Quotes in values are skipped, not interpreted.
func stripAssignments(cmd string) string {
	for {
		n := nameLen(cmd)
		if n == 0 || n >= len(cmd) || cmd[n] != '=' {
			return cmd
		}
		end := wordEnd(cmd, n+1)
		if end < 0 {
			return cmd
		}
		cmd = strings.TrimLeft(cmd[end:], " \t")
	}
}

// wordEnd returns the index of the first unquoted blank at or after i, or
// len(s); -1 if a quote is not closed.
func wordEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t':
			return i
		case '\\':
			i += 2
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return -1
			}
			i += j + 2
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return -1
			}
			i++
		default:
			i++
		}
	}
	return len(s)
}

// bashPartMatches reports whether one simple command, as written, matches a
// Bash pattern: "prefix:*" matches the prefix alone or followed by a blank;
// anything else must be equal.
func bashPartMatches(part, pattern string) bool {
	prefix, ok := strings.CutSuffix(pattern, ":*")
	if !ok {
		return part == pattern
	}
	if prefix == "" {
		return false
	}
	if part == prefix {
		return true
	}
	return strings.HasPrefix(part, prefix) && (part[len(prefix)] == ' ' || part[len(prefix)] == '\t')
}

// looseMatches is bashPartMatches on words after quote removal, with
// leading assignments and redirections dropped: "'rm' -rf /" and
// ">/dev/null rm x" match "rm:*".
func looseMatches(part, pattern string) bool {
	prefix, isPrefix := strings.CutSuffix(pattern, ":*")
	rule, words := looseWords(prefix), looseWords(part)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(rule) == 0 || len(words) < len(rule) || !isPrefix && len(words) != len(rule) {
		return false
	}
	return slices.Equal(words[:len(rule)], rule)
}

// isAssignment: w looks like NAME=value.
func isAssignment(w string) bool {
	n := nameLen(w)
	return n > 0 && n < len(w) && w[n] == '='
}

// looseWords splits a simple command into words after quote removal and
// drops its redirections; expansions stay as written. It never fails: an
// unterminated quote runs to the end.
func looseWords(s string) []string {
	var (
		words  []string
		b      strings.Builder
		inWord bool
		digits bool // the word so far is unquoted digits: a redirection's fd
	)
	flush := func() {
		if inWord {
			words = append(words, b.String())
		}
		b.Reset()
		inWord, digits = false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord, digits = true, false
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			inWord, digits = true, false
		case c == '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			inWord, digits = true, false
		case c == '<' || c == '>' || c == '&' && i+1 < len(s) && s[i+1] == '>':
			if digits {
				inWord = false // the fd number is not a word
			}
			flush()
			i = skipRedirect(s, i) - 1
		default:
			digits = isDigit(c) && (digits || !inWord)
			b.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// skipRedirect returns the index just past the redirection at s[i]: its
// operator and its target word (for a dup, the fd number).
func skipRedirect(s string, i int) int {
	for i < len(s) && strings.IndexByte("<>&|", s[i]) >= 0 {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if e := wordEnd(s, i); e >= 0 {
		return e
	}
	return len(s)
}

// trimCommand trims what Bash ignores around a command: blanks and
// newlines. Other white space (\r, \f, Unicode spaces) is part of a word to
// Bash, so it stays and keeps the command from matching.
func trimCommand(s string) string { return strings.Trim(s, " \t\n") }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
