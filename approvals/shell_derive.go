package approvals

import "strings"

// Deriving a rule from an approved command.

// deriveBash returns the pattern an approval of cmd stores: for one simple
// command inside the allow grammar, run by its bare name, of a program
// (or subcommand) safeCommands lists, its key's words (and a named entry's
// name) followed by ":*" — "ls:*", "git status:*", "make test:*" — when
// that rule matches cmd (it does not when cmd uses an option the entry's
// policy refuses). Else the exact trimmed command, or "" when that ends in
// ":*" and so would read as a prefix rule. It always matches cmd.
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
	// A path names a program of the working tree or elsewhere, not the one
	// the table describes: ./ls, /tmp/git.
	if !words[0].literal || !commandName(words[0].text) || strings.Contains(words[0].text, "/") {
		return exact
	}
	sc, key, n, ok := safeFor(words)
	if !ok || sc.named && n == key {
		return exact // "make" alone says nothing about other targets
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[i].text
	}
	rule := strings.Join(parts, " ") + ":*"
	if !allowBash(rule, cmd) {
		return exact // an option the entry refuses: the rule would not cover cmd
	}
	return rule
}
