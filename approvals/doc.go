// Package approvals is the permission engine: rules (allow or deny by tool
// and input pattern, scoped global, channel or thread), pending can_use_tool
// requests keyed by request_id, who may decide them, expiry, "always allow",
// and AskUserQuestion answers. It holds state and makes decisions; it does no
// I/O and knows nothing of Slack or Matrix.
//
// Invariants:
//
//   - Pure logic: no I/O, no goroutines, no clock of its own. Time comes
//     from the func() time.Time given to NewRegistry. It imports no other
//     package of this repository.
//   - Rules: Evaluate lets a matching deny at any scope win over any allow,
//     and returns "" (ask a human) when nothing matches. Allow rules are
//     read strictly and deny rules broadly: a Bash allow rule must match
//     every simple command of a compound command and never matches one with
//     command substitution; an input a rule cannot read matches deny rules
//     and no allow rule. See Rule.Matches.
//   - Protected places: no allow rule matches a call Protected reports (a
//     write to the CLI's, git's or the shell's configuration, any call on
//     the bot's own files, a command naming any of them); a person decides
//     each. I/O the check needs (symlinks) comes from the Call's resolver.
//   - Grants: a derived Bash or Monitor rule widens only to a program
//     safeCommands lists, and never over the options its policy refuses;
//     a tool no pattern describes gets no grant, not its bare name.
//   - Decisions: a request is decided at most once. Registry.Decide checks
//     the id, then who decides (the thread's starter or an admin), then the
//     state, then the expiry; the first valid decision wins and every later
//     one, a repeated click included, gets an error naming why. A decided,
//     expired or cancelled request never changes again.
//   - The registry is safe for concurrent use and hands out copies only.
//
// # Files
//
//   - rule.go: rules (allow or deny by tool and pattern; scope global,
//     channel or thread) and Evaluate.
//   - shell*.go: the Bash reader (shell.go says how): shell_parse.go is
//     the whitelist grammar allow rules read a command with, matched in
//     shell_allow.go; shell_scan.go the broad scanner deny rules read it
//     with, matched in shell_deny.go; shell_safe.go the programs a derived
//     rule may cover and shell_args.go the options their rules refuse;
//     shell_derive.go the rule an approval derives.
//   - tools.go: the tools that run commands (Bash, Monitor) and those a
//     bare name may grant.
//   - protect.go: the files and places no rule may allow (.claude/, .git/,
//     Claude Code's instruction and settings files, the bot's own files);
//     protect_cmd.go and braces.go: the same in a command's words;
//     paths.go: the file a file tool's call names.
//   - grant.go: the rule a grant makes (GrantRule) and the choices a
//     prompt may offer (GrantChoices).
//   - cliperm.go: deny rules in the CLI's own syntax, for --settings.
//   - registry.go, decide.go: pending requests keyed by request_id and who
//     may decide them (MayDecide: the thread's starter or an admin of its channel;
//     "Always allow" an admin's); choice.go: the typed choices.
//   - question.go: AskUserQuestion's questions and answers.
package approvals
