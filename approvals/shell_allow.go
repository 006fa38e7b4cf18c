package approvals

import "strings"

// Allow rules: matching the words parseAllow reads.

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
// runs the same as "git status". A prefix rule's further words must pass
// the argPolicy of the program they go to (argsAllowed): "sort:*" does not
// match "sort -o f".
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
		if isPrefix && !argsAllowed(c.words, len(rule)) {
			return false
		}
	}
	return true
}
