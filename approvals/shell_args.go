package approvals

import (
	"slices"
	"strings"
)

// argPolicy is what a prefix rule on a safeCommand accepts after the
// command's own words: every argument, but the options listed as running a
// program or writing a file (deny), or only the options listed (allow).
type argPolicy struct {
	// deny lists options that run a program or write a file. Getopt style:
	// "--name" refuses --name, --name=value and every abbreviation of it
	// (GNU getopt_long and git accept unambiguous prefixes); "-x" refuses
	// the letter x alone, in a bundle (-ax) and with a value glued (-xv).
	// With goFlags, a Go flag name: -name or --name, with or without
	// =value, also as the test binary's -test.name.
	deny []string
	// allow, when not nil, lists the only options accepted; a name ending
	// in "=" takes a value (glued to a short option, after "=" or as the
	// next word).
	allow []string
	// noOperands: every word but an accepted option is refused (make: a
	// further target, or NAME=value, which overrides what recipes run).
	noOperands bool
	// goFlags: options are Go flags (no bundles, no abbreviations, "--"
	// not special).
	goFlags bool
	// through: the words after "--" go to another program that reads them
	// as options (cargo test's harness): they are checked too. Otherwise
	// they are operands.
	through bool
}

// none reports whether the policy accepts every argument.
func (p argPolicy) none() bool { return p.deny == nil && p.allow == nil && !p.noOperands }

// accepts reports whether the policy accepts words, the arguments after
// the rule's own words.
func (p argPolicy) accepts(words []shWord) bool {
	if p.none() {
		return true
	}
	operands := false // after "--"
	for _, w := range words {
		switch t := w.text; {
		case operands:
			if p.noOperands {
				return false
			}
		case !w.literal:
			// A glob, brace or $NAME at the start may expand to an option:
			// a file named "-ofoo" in the repository is one "sort *" away.
			if t == "" || strings.IndexByte("-*?[{$", t[0]) >= 0 || p.noOperands {
				return false
			}
		case t == "--" && !p.goFlags:
			if p.noOperands {
				return false
			}
			operands = !p.through
		case len(t) > 1 && t[0] == '-':
			if !p.option(t) {
				return false
			}
		case p.noOperands:
			return false
		}
	}
	return true
}

// option reports whether the policy accepts the option word t.
func (p argPolicy) option(t string) bool {
	if p.goFlags {
		name := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "-")
		name, _, _ = strings.Cut(name, "=")
		name = strings.TrimPrefix(name, "test.")
		return name != "" && name[0] != '-' && !slices.Contains(p.deny, name)
	}
	if long, ok := strings.CutPrefix(t, "--"); ok {
		return p.longOption(long)
	}
	for i := 1; i < len(t); i++ {
		short := "-" + t[i:i+1]
		if p.allow == nil {
			if slices.Contains(p.deny, short) {
				return false
			}
			continue
		}
		if slices.Contains(p.allow, short+"=") {
			return true // the rest of the word is its value
		}
		if !slices.Contains(p.allow, short) {
			return false
		}
	}
	return true
}

// longOption checks "--name" or "--name=value" (given without "--").
func (p argPolicy) longOption(long string) bool {
	name, _, hasValue := strings.Cut(long, "=")
	if name == "" {
		return false
	}
	if p.allow != nil {
		return slices.Contains(p.allow, "--"+name+"=") || !hasValue && slices.Contains(p.allow, "--"+name)
	}
	for _, d := range p.deny {
		if full, ok := strings.CutPrefix(d, "--"); ok && strings.HasPrefix(full, name) {
			return false // the option itself, or an abbreviation of it
		}
	}
	return true
}

// safeFor returns the safeCommands entry for a simple command's words,
// looked up by its program's base name (and subcommand); key is how many
// words its key takes, n how many the rule it derives takes: the key's
// and, for a named entry, the next word when it is a plain name. ok is
// false for a program not listed.
func safeFor(words []shWord) (sc safeCommand, key, n int, ok bool) {
	if len(words) == 0 || !words[0].literal {
		return safeCommand{}, 0, 0, false
	}
	prog := words[0].text
	base := prog[strings.LastIndexByte(prog, '/')+1:]
	if len(words) > 1 && words[1].literal {
		sc, ok = safeCommands[base+" "+words[1].text]
		key = 2
	}
	if !ok {
		sc, ok = safeCommands[base]
		key = 1
	}
	n = key
	if ok && sc.named && n < len(words) && plainName(words[n]) {
		n++
	}
	return sc, key, n, ok
}

// argsAllowed reports whether a simple command that a prefix rule of
// ruleLen words matched passes its program's argPolicy: the words after
// both the rule's and the entry's own are checked. A program not in
// safeCommands is trusted as the rule's author trusted it.
func argsAllowed(words []shWord, ruleLen int) bool {
	sc, _, n, ok := safeFor(words)
	if !ok {
		return true
	}
	return sc.args.accepts(words[max(ruleLen, n):])
}

// plainName: a literal word that can name a make target or an npm script
// in a rule ("test", "build:prod", "dist/app"): not an option, not an
// assignment, only bytes that mean nothing to Bash.
func plainName(w shWord) bool {
	t := w.text
	if !w.literal || t == "" || t[0] == '-' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isAlpha(c) && !isDigit(c) && strings.IndexByte("._:/@+-", c) < 0 {
			return false
		}
	}
	return true
}
