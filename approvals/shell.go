package approvals

import "strings"

// The shell*.go files read Bash command lines for Bash rules, in two ways.
//
// Allow rules use a whitelist grammar (parseAllow, shell_parse.go; matched
// in shell_allow.go): simple commands of plain words, quotes, $NAME and a
// few harmless redirections, joined by list and pipeline operators.
// Anything outside it is an error and the allow rule does not match, so a
// human is asked: nothing is guessed. The grammar is checked against real
// Bash by TestBashAllowDifferential and FuzzBashAllow.
//
// Deny rules use a lenient scanner (scanBash, shell_scan.go; matched in
// shell_deny.go) that splits on operators and looks inside substitutions, so
// that they match as widely as they can.
//
// shell_derive.go derives a rule from an approved command.

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

// trimCommand trims what Bash ignores around a command: blanks and
// newlines. Other white space (\r, \f, Unicode spaces) is part of a word to
// Bash, so it stays and keeps the command from matching.
func trimCommand(s string) string { return strings.Trim(s, " \t\n") }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nameLen returns the length of the shell variable name s begins with.
func nameLen(s string) int {
	n := 0
	for n < len(s) && (s[n] == '_' || isAlpha(s[n]) || n > 0 && isDigit(s[n])) {
		n++
	}
	return n
}
