// Package bashoracle is the tests' oracle for Bash allow rules: real Bash,
// not our reading of it, says what a command runs.
//
// Contract of Oracle.Run:
//
//   - What it runs: the command string under /bin/bash (else bash on PATH)
//     the way Claude Code 2.1.330's Bash tool runs it: bash -c with
//     expand_aliases on and extglob off, the command eval'd inside single
//     quotes, stdin from /dev/null. The oracle adds only set -T and a DEBUG
//     trap before the eval.
//   - As whom: uid and gid 65534 (nobody), no supplementary groups, when the
//     test runs as root; otherwise as the test's own user (and New logs so).
//   - Where: a fresh work directory, owned by that user, seeded with files
//     for globs to find and redirections to clobber (see Seed), as HOME; an
//     empty TMPDIR beside it; PATH holding only stub programs that log
//     their argv and do nothing else; Limit to finish, after which its whole
//     process group is killed.
//   - What it reports (Report): every simple command Bash was about to run
//     ($BASH_COMMAND from the DEBUG trap, which set -T carries into
//     functions, subshells and substitutions), the argv of every stub call,
//     every entry of the work directory created, changed or removed (type,
//     mode and content), whether it timed out, and its stderr.
//     Report.Violations judges a run against an allow rule.
//   - What it cannot see: what the real programs would do with their
//     arguments (the stubs stand in for them: "git -c core.pager=x log" is
//     git with those words, nothing more); files outside the work directory
//     (TMPDIR, or anywhere else the user may write when the test is not
//     root); what a command reads; commands in a bash started afresh (it
//     has no trap, but its own start is a traced command); the user's shell
//     snapshot, which Claude Code sources before the eval and this does not.
//
// The same parts (Stubs, Trap, Seed, Snapshot, ReadCalls, Report) serve a
// harness that traces the Bash the real CLI runs (internal/permcompare);
// Case and LoadCorpus read the corpus both judge (approvals/testdata).
//
// Files: oracle.go (Oracle, Run), parts.go (the stubs, the trap, the
// seeded directory, the calls read back), judge.go (Report, Violations),
// corpus.go (Case, LoadCorpus).
package bashoracle
